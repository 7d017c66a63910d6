/* Code-size probe for `make size` (not linked into the firmware): one generated record writer
 * next to the hand-written framing it replaces, each in its own section, so that
 * arm-none-eabi-size -A shows the .text bytes of each at the firmware's -Os. */
#include <string.h>

#include "usvlog/record_types.h"

size_t probe_generated_writer(uint8_t *buf, size_t cap, uint64_t t_us, const usvlog_rec_nav_solution_t *p);
size_t probe_memcpy_writer(uint8_t *buf, size_t cap, uint64_t t_us, const usvlog_rec_nav_solution_t *p);

/* The generated writer: id, length and payload encoded field by field, on any byte order. */
size_t probe_generated_writer(uint8_t *buf, size_t cap, uint64_t t_us, const usvlog_rec_nav_solution_t *p)
{
    return usvlog_write_rec_nav_solution(buf, cap, t_us, p);
}

/* What the firmware did by hand before: copy the packed header and payload structs as memory,
 * right only on a little-endian target. */
size_t probe_memcpy_writer(uint8_t *buf, size_t cap, uint64_t t_us, const usvlog_rec_nav_solution_t *p)
{
    usvlog_record_header_t h;
    if (cap < sizeof h + sizeof *p) {
        return 0;
    }
    h.t_us = t_us;
    h.type = REC_NAV_SOLUTION;
    h.len = (uint16_t)sizeof *p;
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, p, sizeof *p);
    return sizeof h + sizeof *p;
}
