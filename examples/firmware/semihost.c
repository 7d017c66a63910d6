/* ARM semihosting calls (operation numbers from the ARM "Semihosting for AArch32 and AArch64"
 * specification, version 2). On M-profile the trap instruction is `bkpt 0xAB`: r0 holds the
 * operation, r1 points at its argument block, and the result comes back in r0. */
#include "semihost.h"

#define SYS_OPEN 0x01
#define SYS_CLOSE 0x02
#define SYS_WRITE0 0x04
#define SYS_WRITE 0x05
#define SYS_EXIT_EXTENDED 0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026
#define OPEN_MODE_WB 5 /* fopen mode "wb" */

static int sh_call(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static size_t length(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0') {
        n++;
    }
    return n;
}

int sh_open_write(const char *path)
{
    uint32_t args[3] = {(uint32_t)(uintptr_t)path, OPEN_MODE_WB, (uint32_t)length(path)};
    return sh_call(SYS_OPEN, args);
}

int sh_write(int handle, const void *data, size_t len)
{
    uint32_t args[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)data, (uint32_t)len};
    /* SYS_WRITE returns the number of bytes it did not write. */
    return sh_call(SYS_WRITE, args) == 0 ? 0 : -1;
}

int sh_close(int handle)
{
    uint32_t args[1] = {(uint32_t)handle};
    return sh_call(SYS_CLOSE, args);
}

void sh_puts(const char *s)
{
    (void)sh_call(SYS_WRITE0, s);
}

void sh_exit(int code)
{
    /* The extended form carries an exit status; plain SYS_EXIT on AArch32 cannot. */
    uint32_t args[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code};
    (void)sh_call(SYS_EXIT_EXTENDED, args);
    for (;;) {
    }
}
