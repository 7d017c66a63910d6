/* A double-buffered USVLOG record logger: the 1 kHz control task appends records to one
 * sector-sized buffer while the storage task writes the other one out (to an SD card on a real
 * board, to a host file through semihosting here). Every byte on the wire is made by the
 * generated usvlog/record_types.h (usvlog_write_file_header, usvlog_write_<record>); this file
 * only moves finished bytes, and repeats nothing of the schema. */
#ifndef LOGGER_H
#define LOGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "usvlog/record_types.h"

/* One SD card sector: the storage task only ever writes whole sectors, except the last one. */
#define LOGGER_BUF_SIZE 512u

/* Where full buffers go. Returns 0 on success. */
typedef int (*logger_sink_fn)(void *ctx, const uint8_t *data, uint32_t len);

typedef struct logger {
    uint8_t buf[2][LOGGER_BUF_SIZE];
    /* One encoded record (header and payload) on its way into buf; the generated writers need
     * contiguous space, and a record may span the two buffers. */
    uint8_t stage[USVLOG_MAX_RECORD_SIZE];
    /* Written by the control task only. */
    uint16_t fill;   /* bytes used in buf[active] */
    uint8_t active;  /* the buffer being filled */
    /* Set by the control task, cleared by the storage task: buf[i] is full and waits for it. */
    volatile uint8_t pending[2];
    uint32_t records; /* records accepted */
    uint32_t dropped; /* records refused because both buffers were busy */
    uint32_t sink_errors;
    logger_sink_fn sink;
    void *sink_ctx;
} logger_t;

/* Starts a log: writes the file header (usvlog_write_file_header: magic, FW_MODEL_SCHEMA, the
 * endianness constant, t0_us). */
void logger_init(logger_t *lg, logger_sink_fn sink, void *sink_ctx, uint64_t t0_us);

/* Appends the `len` bytes of lg->stage, one record encoded there by a generated writer (control
 * task). Never blocks: returns false and counts a drop when the record does not fit in the free
 * buffer space, or when `len` is 0 (the writer failed). A record may span the two buffers, so the
 * file is one contiguous record stream and every sector write is full. */
bool logger_append(logger_t *lg, size_t len);

/* The storage task: writes out a full buffer, if there is one. */
void logger_service(logger_t *lg);

/* Writes everything still buffered (at shutdown). */
void logger_flush(logger_t *lg);

/* Logs one record through its generated writer: LOG_REC(lg, t_us, rec_nav_solution, &nav) calls
 * usvlog_write_rec_nav_solution, which writes the id, length and payload for that record type
 * only, so a record id cannot be paired with the wrong struct (the compiler checks the pointer). */
#define LOG_REC(lg, t_us, record, payload_ptr) \
    logger_append((lg), usvlog_write_##record((lg)->stage, sizeof (lg)->stage, (t_us), (payload_ptr)))

#endif
