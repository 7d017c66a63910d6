/* Reset and fault handling for a Cortex-M4F: copy .data, zero .bss, enable the FPU, run main()
 * and report its result through semihosting. A fault also ends the run (exit status 70) instead
 * of hanging the emulator. */
#include <stdint.h>

#include "semihost.h"

extern uint32_t _estack, _sidata, _sdata, _edata, _sbss, _ebss;
extern int main(void);

void reset_handler(void);
void fault_handler(void);

#define CPACR (*(volatile uint32_t *)0xE000ED88u)

void reset_handler(void)
{
    /* CP10 and CP11 full access: the FPU must be on before any floating-point instruction. */
    CPACR |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    const uint32_t *src = &_sidata;
    for (uint32_t *dst = &_sdata; dst < &_edata;) {
        *dst++ = *src++;
    }
    for (uint32_t *dst = &_sbss; dst < &_ebss;) {
        *dst++ = 0;
    }
    sh_exit(main());
}

void fault_handler(void)
{
    sh_puts("firmware: fault\n");
    sh_exit(70);
}

/* Initial stack pointer, then the 15 system exceptions. The demo uses no peripheral interrupts. */
__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&_estack,
    reset_handler,
    fault_handler, /* NMI */
    fault_handler, /* HardFault */
    fault_handler, /* MemManage */
    fault_handler, /* BusFault */
    fault_handler, /* UsageFault */
    0, 0, 0, 0,
    fault_handler, /* SVCall */
    fault_handler, /* DebugMon */
    0,
    fault_handler, /* PendSV */
    fault_handler, /* SysTick */
};
