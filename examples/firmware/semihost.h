/* ARM semihosting: the debugger (here QEMU with -semihosting) services file and exit requests
 * that the firmware raises with `bkpt 0xAB`. Only what the logger demo needs. */
#ifndef SEMIHOST_H
#define SEMIHOST_H

#include <stddef.h>
#include <stdint.h>

/* Opens a host file for binary writing (created or truncated). Returns a handle, or -1. */
int sh_open_write(const char *path);
/* Writes all `len` bytes. Returns 0 on success. */
int sh_write(int handle, const void *data, size_t len);
/* Returns 0 on success. */
int sh_close(int handle);
/* Prints a NUL-terminated string on the host's console. */
void sh_puts(const char *s);
/* Ends the program; the host process (QEMU) exits with `code`. */
void sh_exit(int code) __attribute__((noreturn));

#endif
