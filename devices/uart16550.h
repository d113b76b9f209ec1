/*
 * uart16550.h -- COM1 (I/O ports 0x3f8-0x3ff), output only, for a Linux
 * guest's earlycon and its ttyS0 console: a kernel that fails before its
 * virtio console is up still says why.
 *
 * The register file answers as a 16450 (no FIFO) that is always ready to
 * send and never has input or an interrupt: THR bytes go straight to out_fd,
 * LSR says "transmitter empty", IIR says "no interrupt".  IER, LCR, MCR, the
 * divisor latch and the scratch register read back what was written, and in
 * loopback mode MSR mirrors MCR: that is what Linux's 8250 driver probes
 * (autoconfig's scratch and loopback tests) before it believes a UART is
 * there.  Its transmit interrupt never comes, so the driver falls back to
 * its backup timer for tty writes; printk's console writes poll LSR.
 */
#ifndef UART16550_H
#define UART16550_H

#include <stdbool.h>
#include <stdint.h>

#define UART_COM1_BASE 0x3f8u
#define UART_PORTS     8u

struct uart16550 {
	uint8_t ier, lcr, mcr, scr, dll, dlm;
	int out_fd;                 /* -1: bytes are counted, not written */
	uint64_t bytes_out;
};

void uart_init(struct uart16550 *u, int out_fd);
/* One byte-wide access to register `offset` (0-7): a write of *data, or a
 * read into *data. */
void uart_access(struct uart16550 *u, unsigned offset, uint8_t *data, bool is_write);

#endif
