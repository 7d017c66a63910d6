/* A toy USV and its autopilot, run at 1 kHz: straight-line path following along the x axis with
 * a waypoint every metre. Single-precision arithmetic only (+, -, *, /, comparisons), no libm, so
 * that a host can recompute every logged value bit for bit (tests/firmware.rs does). */
#ifndef SIM_H
#define SIM_H

#include <stdint.h>

#include "usvlog/record_types.h"

#define SIM_DT 0.001f          /* control period [s] */
#define SIM_GUIDANCE_DIV 10u   /* guidance and speed control every 10 cycles (100 Hz) */
#define SIM_SLOW_DIV 100u      /* GNSS, EKF diagnostics and mission state every 100 cycles (10 Hz) */
#define SIM_MANUAL_FROM 2500u  /* cycle from which a manual request overrides the autopilot */

typedef struct sim {
    /* The boat. */
    float x, y, psi, v, r;
    /* The autopilot. */
    float b_g_est, v_d, i_v, psi_d;
    uint16_t wp;
    /* The latest record of every type, as logged. */
    usvlog_rec_sensor_gyro_t gyro;
    usvlog_rec_sensor_gnss_t gnss;
    usvlog_rec_nav_solution_t nav;
    usvlog_rec_ekf_diag_t ekf;
    usvlog_rec_mission_state_t mission;
    usvlog_rec_guidance_ref_t guidance;
    usvlog_rec_speed_sched_debug_t sched;
    usvlog_rec_speed_ctrl_debug_t speed;
    usvlog_rec_yaw_ctrl_debug_t yaw;
    usvlog_rec_actuator_req_t req;
    usvlog_rec_actuator_cmd_t cmd;
    usvlog_rec_mixer_feedback_t mixer;
    usvlog_rec_esc_output_t esc;
} sim_t;

void sim_init(sim_t *s);
/* Runs control cycle `k`: sensors, estimation, guidance (k % SIM_GUIDANCE_DIV == 0), control,
 * mixing, then the boat's dynamics over one period. */
void sim_step(sim_t *s, uint32_t k);

#endif
