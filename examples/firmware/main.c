/* USVLOG logger demo for an STM32F4 (Cortex-M4F): runs the toy autopilot for SIM_CYCLES control
 * cycles at 1 kHz simulated time and logs every record type through the double-buffered logger to
 * `timeseries.bin` on the host (semihosting). Exit status: 0 when every record reached the file. */
#include "logger.h"
#include "semihost.h"
#include "sim.h"

#define SIM_CYCLES 3000u        /* 3 s at 1 kHz */
#define T0_US 1000000u          /* the monotonic clock when logging starts */

static logger_t logger;
static sim_t sim;

static int host_sink(void *ctx, const uint8_t *data, uint32_t len)
{
    return sh_write(*(const int *)ctx, data, len);
}

/* The 1 kHz control task (an interrupt on a real board): one step, then its records. */
static void control_task(uint32_t k)
{
    uint64_t t = (uint64_t)T0_US + (uint64_t)k * 1000u;
    bool slow = k % SIM_SLOW_DIV == 0u;
    bool guidance = k % SIM_GUIDANCE_DIV == 0u;
    sim_step(&sim, k);
    LOG_REC(&logger, t, rec_sensor_gyro, &sim.gyro);
    if (slow) {
        LOG_REC(&logger, t, rec_sensor_gnss, &sim.gnss);
    }
    LOG_REC(&logger, t, rec_nav_solution, &sim.nav);
    if (slow) {
        LOG_REC(&logger, t, rec_ekf_diag, &sim.ekf);
        LOG_REC(&logger, t, rec_mission_state, &sim.mission);
    }
    if (guidance) {
        LOG_REC(&logger, t, rec_guidance_ref, &sim.guidance);
        LOG_REC(&logger, t, rec_speed_sched_debug, &sim.sched);
        LOG_REC(&logger, t, rec_speed_ctrl_debug, &sim.speed);
    }
    LOG_REC(&logger, t, rec_yaw_ctrl_debug, &sim.yaw);
    LOG_REC(&logger, t, rec_actuator_req, &sim.req);
    LOG_REC(&logger, t, rec_actuator_cmd, &sim.cmd);
    LOG_REC(&logger, t, rec_mixer_feedback, &sim.mixer);
    LOG_REC(&logger, t, rec_esc_output, &sim.esc);
}

int main(void)
{
    static int fd;
    fd = sh_open_write("timeseries.bin");
    if (fd < 0) {
        sh_puts("firmware: cannot open timeseries.bin on the host\n");
        return 2;
    }
    sim_init(&sim);
    logger_init(&logger, host_sink, &fd, T0_US);
    for (uint32_t k = 0; k < SIM_CYCLES; k++) {
        control_task(k);
        /* The storage task gets the processor between control ticks. */
        logger_service(&logger);
    }
    logger_flush(&logger);
    if (sh_close(fd) != 0 || logger.sink_errors != 0) {
        sh_puts("firmware: writing timeseries.bin failed\n");
        return 3;
    }
    if (logger.dropped != 0) {
        sh_puts("firmware: records were dropped\n");
        return 4;
    }
    sh_puts("firmware: timeseries.bin written\n");
    return 0;
}
