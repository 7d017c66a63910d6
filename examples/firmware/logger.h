/* A double-buffered USVLOG record logger: the 1 kHz control task appends records to one
 * sector-sized buffer while the storage task writes the other one out (to an SD card on a real
 * board, to a host file through semihosting here). Every record layout and id comes from the
 * generated usvlog/record_types.h; nothing here repeats the schema. */
#ifndef LOGGER_H
#define LOGGER_H

#include <stdbool.h>
#include <stdint.h>

#include "usvlog/record_types.h"

/* One SD card sector: the storage task only ever writes whole sectors, except the last one. */
#define LOGGER_BUF_SIZE 512u

/* Where full buffers go. Returns 0 on success. */
typedef int (*logger_sink_fn)(void *ctx, const uint8_t *data, uint32_t len);

typedef struct logger {
    uint8_t buf[2][LOGGER_BUF_SIZE];
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

/* Starts a log: writes the 32-byte file header (magic, FW_MODEL_SCHEMA, endianness, t0_us). */
void logger_init(logger_t *lg, logger_sink_fn sink, void *sink_ctx, uint64_t t0_us);

/* Appends one record (control task). Never blocks: returns false and counts a drop when the
 * record does not fit in the free buffer space. A record may span the two buffers, so the file is
 * one contiguous TLV stream and every sector write is full. */
bool logger_record(logger_t *lg, uint64_t t_us, uint16_t type, const void *payload, uint16_t len);

/* The storage task: writes out a full buffer, if there is one. */
void logger_service(logger_t *lg);

/* Writes everything still buffered (at shutdown). */
void logger_flush(logger_t *lg);

/* Typed wrappers: the payload size is the generated struct's, checked at compile time against
 * the id's documented size by the header's static asserts. */
#define LOG_REC(lg, t_us, id, payload_ptr) \
    logger_record((lg), (t_us), (uint16_t)(id), (payload_ptr), (uint16_t)sizeof(*(payload_ptr)))

#endif
