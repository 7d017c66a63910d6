/* The toy simulation. Every expression is written so that it means the same in single precision
 * on any IEEE 754 machine: no double constants (-Wdouble-promotion), no fused multiply-add
 * (-ffp-contract=off), no library functions. */
#include "sim.h"

#include <string.h>

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

static float absf(float v)
{
    return v < 0.0f ? -v : v;
}

/* Taylor polynomials; the heading stays within +-0.6 rad, where they are close enough for a toy. */
static float sin_poly(float a)
{
    float a2 = a * a;
    return a * (1.0f - a2 / 6.0f * (1.0f - a2 / 20.0f));
}

static float cos_poly(float a)
{
    float a2 = a * a;
    return 1.0f - a2 / 2.0f * (1.0f - a2 / 12.0f);
}

void sim_init(sim_t *s)
{
    memset(s, 0, sizeof *s);
    s->y = 1.0f; /* start one metre off the path */
}

void sim_step(sim_t *s, uint32_t k)
{
    const float gyro_bias = 0.01f;

    /* Sensors and a stand-in for the EKF: the navigation solution is the true state. */
    s->gyro.z_gyro = s->r + gyro_bias;
    s->b_g_est = s->b_g_est + 0.5f * SIM_DT * (s->gyro.z_gyro - s->r - s->b_g_est);
    s->gyro.b_g_est = s->b_g_est;
    s->gyro.valid = 1;
    s->gnss.x = s->x;
    s->gnss.y = s->y;
    s->gnss.cog = s->psi;
    s->gnss.sog = s->v;
    s->gnss.valid = 1;
    s->nav.x = s->x;
    s->nav.y = s->y;
    s->nav.psi = s->psi;
    s->nav.v = s->v;
    s->nav.r = s->gyro.z_gyro - s->b_g_est;
    s->nav.b_g = s->b_g_est;
    float p = 0.5f / (1.0f + (float)k * SIM_DT);
    s->ekf.P_xx = p;
    s->ekf.P_yy = p;
    s->ekf.P_psi = p / 10.0f;
    s->ekf.P_v = p / 4.0f;
    s->ekf.P_r = p / 8.0f;
    s->ekf.P_bg = p / 100.0f;
    s->ekf.status_flags = k >= SIM_SLOW_DIV ? USVLOG_EKF_STATUS_HEALTHY : 0u;

    /* Mission: waypoint wp + 1 at x = wp + 1 on the x axis; switch within 0.25 m. */
    float d_wp = (float)(s->wp + 1u) - s->nav.x;
    if (d_wp < 0.25f) {
        s->wp++;
        d_wp = d_wp + 1.0f;
    }
    const float v_seg = 1.5f;
    s->mission.idx = s->wp;
    s->mission.active = 1;
    s->mission.done = 0;
    s->mission.x0 = (float)s->wp;
    s->mission.y0 = 0.0f;
    s->mission.x1 = (float)(s->wp + 1u);
    s->mission.y1 = 0.0f;
    s->mission.v_seg = v_seg;
    s->mission.d_wp = d_wp;

    if (k % SIM_GUIDANCE_DIV == 0u) {
        /* Guidance: steer back to the path; the speed scheduler caps speed on heading error and
         * near a waypoint, and ramps the desired speed at most 0.02 m/s per step. */
        float e_y = s->nav.y;
        s->psi_d = clampf(-0.8f * e_y, -0.5f, 0.5f);
        float e_psi = s->psi_d - s->nav.psi;
        float v_cap = v_seg - absf(e_psi);
        uint8_t cap_psi = absf(e_psi) > 0.2f;
        uint8_t cap_wp = d_wp < 0.5f;
        if (cap_wp && v_cap > 1.0f) {
            v_cap = 1.0f;
        }
        float dv = clampf(v_cap - s->v_d, -0.02f, 0.02f);
        s->v_d = s->v_d + dv;
        s->guidance.psi_d = s->psi_d;
        s->guidance.v_d = s->v_d;
        s->guidance.e_y = e_y;
        s->guidance.e_psi = e_psi;
        s->sched.v_seg = v_seg;
        s->sched.v_cap = v_cap;
        s->sched.v_d = s->v_d;
        s->sched.e_psi = e_psi;
        s->sched.d_wp = d_wp;
        s->sched.dv = dv;
        s->sched.cap_wp = cap_wp;
        s->sched.cap_psi = cap_psi;

        /* Speed PI with conditional integration (no wind-up while saturated). */
        float e_v = s->v_d - s->nav.v;
        float u_s_raw = 0.8f * e_v + s->i_v;
        float u_s_req = clampf(u_s_raw, 0.0f, 1.0f);
        uint8_t sat = u_s_raw != u_s_req;
        if (!sat) {
            s->i_v = s->i_v + 0.5f * e_v * (SIM_DT * (float)SIM_GUIDANCE_DIV);
        }
        s->speed.v_d = s->v_d;
        s->speed.v_hat = s->nav.v;
        s->speed.e_v = e_v;
        s->speed.u_s_raw = u_s_raw;
        s->speed.u_s_req = u_s_req;
        s->speed.i_v = s->i_v;
        s->speed.sat_u_s = sat;
    }

    /* Yaw: cascaded heading and rate P control, every cycle. */
    float e_psi = s->psi_d - s->nav.psi;
    float r_d = 1.5f * e_psi;
    float e_r = r_d - s->nav.r;
    float u_d_raw = 0.6f * e_r;
    float u_d_req = clampf(u_d_raw, -0.5f, 0.5f);
    s->yaw.psi_d = s->psi_d;
    s->yaw.psi = s->nav.psi;
    s->yaw.e_psi = e_psi;
    s->yaw.r_d = r_d;
    s->yaw.r = s->nav.r;
    s->yaw.e_r = e_r;
    s->yaw.u_d_req = u_d_req;
    s->yaw.sat_u_d = u_d_raw != u_d_req;

    /* Arbitration: a manual request (straight ahead, 20 %) overrides the autopilot at the end. */
    if (k >= SIM_MANUAL_FROM) {
        s->req.u_s_req = 0.2f;
        s->req.u_d_req = 0.0f;
        s->req.src = USVLOG_ACT_SRC_MANUAL;
    } else {
        s->req.u_s_req = s->speed.u_s_req;
        s->req.u_d_req = u_d_req;
        s->req.src = USVLOG_ACT_SRC_AUTOPILOT;
    }
    s->cmd.u_s_cmd = s->req.u_s_req;
    s->cmd.u_d_cmd = s->req.u_d_req;

    /* Differential mixer with per-thruster saturation. */
    float l_raw = s->cmd.u_s_cmd + s->cmd.u_d_cmd;
    float r_raw = s->cmd.u_s_cmd - s->cmd.u_d_cmd;
    float u_l = clampf(l_raw, -1.0f, 1.0f);
    float u_r = clampf(r_raw, -1.0f, 1.0f);
    s->mixer.u_s_ach = (u_l + u_r) / 2.0f;
    s->mixer.u_d_ach = (u_l - u_r) / 2.0f;
    s->mixer.sat_L = u_l != l_raw;
    s->mixer.sat_R = u_r != r_raw;
    s->mixer.sat_any = s->mixer.sat_L | s->mixer.sat_R;
    s->mixer.u_L_ach = u_l;
    s->mixer.u_R_ach = u_r;
    s->esc.u_L = u_l;
    s->esc.u_R = u_r;

    /* The boat: first-order surge and yaw, kinematics in the plane. */
    s->v = s->v + SIM_DT * (1.2f * s->mixer.u_s_ach - 0.8f * s->v);
    s->r = s->r + SIM_DT * (3.0f * s->mixer.u_d_ach - 2.0f * s->r);
    s->psi = s->psi + SIM_DT * s->r;
    s->x = s->x + SIM_DT * s->v * cos_poly(s->psi);
    s->y = s->y + SIM_DT * s->v * sin_poly(s->psi);
}
