/*
 * uart16550.c -- the output-only COM1 of uart16550.h.
 *
 * One access in, one register out: the vCPU loop hands every IN and OUT on
 * ports 0x3f8-0x3ff here (launcher/run_vcpu.c).  Register numbers and bits
 * are the PC16550D's (National Semiconductor data sheet, table II).
 */
#include "uart16550.h"

#include <errno.h>
#include <unistd.h>

enum {
	REG_DATA = 0,   /* THR (write), RBR (read); DLL with LCR.DLAB */
	REG_IER = 1,    /* DLM with LCR.DLAB */
	REG_IIR = 2,    /* IIR (read), FCR (write) */
	REG_LCR = 3,
	REG_MCR = 4,
	REG_LSR = 5,
	REG_MSR = 6,
	REG_SCR = 7,
};

#define LCR_DLAB      0x80
#define IIR_NO_INT    0x01
#define LSR_THRE      0x20   /* transmit holding register empty */
#define LSR_TEMT      0x40   /* transmitter empty */
#define MCR_LOOP      0x10
#define MSR_CTS       0x10
#define MSR_DSR       0x20
#define MSR_RI        0x40
#define MSR_DCD       0x80

void uart_init(struct uart16550 *u, int out_fd)
{
	*u = (struct uart16550){ .out_fd = out_fd };
}

static void transmit(struct uart16550 *u, uint8_t byte)
{
	u->bytes_out++;
	if (u->out_fd < 0)
		return;
	while (write(u->out_fd, &byte, 1) < 0 && errno == EINTR)
		;
}

/* In loopback the modem outputs come back as inputs: DTR -> DSR, RTS ->
 * CTS, OUT1 -> RI, OUT2 -> DCD.  Otherwise a cable is plugged in and the
 * other end is ready. */
static uint8_t modem_status(const struct uart16550 *u)
{
	if (!(u->mcr & MCR_LOOP))
		return MSR_DCD | MSR_DSR | MSR_CTS;
	return (uint8_t)((u->mcr & 0x01 ? MSR_DSR : 0) | (u->mcr & 0x02 ? MSR_CTS : 0) |
			 (u->mcr & 0x04 ? MSR_RI : 0) | (u->mcr & 0x08 ? MSR_DCD : 0));
}

void uart_access(struct uart16550 *u, unsigned offset, uint8_t *data, bool is_write)
{
	bool dlab = u->lcr & LCR_DLAB;

	if (is_write) {
		switch (offset) {
		case REG_DATA:
			if (dlab)
				u->dll = *data;
			else if (!(u->mcr & MCR_LOOP))   /* loopback keeps the byte off the line */
				transmit(u, *data);
			break;
		case REG_IER: if (dlab) u->dlm = *data; else u->ier = *data & 0x0f; break;
		case REG_LCR: u->lcr = *data; break;
		case REG_MCR: u->mcr = *data & 0x1f; break;
		case REG_SCR: u->scr = *data; break;
		default: break;   /* FCR: there is no FIFO; LSR, MSR: read-only */
		}
		return;
	}
	switch (offset) {
	case REG_DATA: *data = dlab ? u->dll : 0; break;   /* nothing is ever received */
	case REG_IER: *data = dlab ? u->dlm : u->ier; break;
	case REG_IIR: *data = IIR_NO_INT; break;
	case REG_LCR: *data = u->lcr; break;
	case REG_MCR: *data = u->mcr; break;
	case REG_LSR: *data = LSR_THRE | LSR_TEMT; break;
	case REG_MSR: *data = modem_status(u); break;
	case REG_SCR: *data = u->scr; break;
	default: *data = 0xff; break;
	}
}
