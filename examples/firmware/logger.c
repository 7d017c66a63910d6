/* The double-buffered logger. The control task owns `fill`, `active` and the buffer it fills;
 * a buffer changes hands through `pending`, which only the control task sets and only the storage
 * task clears, so on a single core no lock is needed (the control task runs in an interrupt). */
#include "logger.h"

#include <string.h>

static void put(logger_t *lg, const uint8_t *src, uint32_t n)
{
    while (n > 0) {
        uint32_t room = LOGGER_BUF_SIZE - lg->fill;
        uint32_t k = n < room ? n : room;
        memcpy(&lg->buf[lg->active][lg->fill], src, k);
        lg->fill = (uint16_t)(lg->fill + k);
        src += k;
        n -= k;
        if (lg->fill == LOGGER_BUF_SIZE) {
            /* Hand the full buffer to the storage task and continue in the other one, which the
             * caller checked is free. */
            lg->pending[lg->active] = 1;
            lg->active ^= 1u;
            lg->fill = 0;
        }
    }
}

/* Free bytes for the control task: the rest of the active buffer, plus the other one if the
 * storage task has written it out. */
static uint32_t room(const logger_t *lg)
{
    uint32_t n = LOGGER_BUF_SIZE - lg->fill;
    if (!lg->pending[lg->active ^ 1u]) {
        n += LOGGER_BUF_SIZE;
    }
    return n;
}

void logger_init(logger_t *lg, logger_sink_fn sink, void *sink_ctx, uint64_t t0_us)
{
    memset(lg, 0, sizeof *lg);
    lg->sink = sink;
    lg->sink_ctx = sink_ctx;
    uint8_t h[USVLOG_FILE_HEADER_SIZE];
    size_t n = usvlog_write_file_header(h, sizeof h, t0_us);
    put(lg, h, (uint32_t)n);
}

bool logger_append(logger_t *lg, size_t len)
{
    if (len == 0 || room(lg) < len) {
        lg->dropped++;
        return false;
    }
    put(lg, lg->stage, (uint32_t)len);
    lg->records++;
    return true;
}

void logger_service(logger_t *lg)
{
    /* At most one buffer is pending at a time: the control task cannot fill a second one before
     * this one is released. Its index is the one not being filled. */
    uint8_t i = lg->active ^ 1u;
    if (lg->pending[i]) {
        if (lg->sink(lg->sink_ctx, lg->buf[i], LOGGER_BUF_SIZE) != 0) {
            lg->sink_errors++;
        }
        lg->pending[i] = 0;
    }
}

void logger_flush(logger_t *lg)
{
    logger_service(lg);
    if (lg->fill > 0 && lg->sink(lg->sink_ctx, lg->buf[lg->active], lg->fill) != 0) {
        lg->sink_errors++;
    }
    lg->fill = 0;
}
