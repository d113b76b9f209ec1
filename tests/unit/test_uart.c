/*
 * test_uart.c -- COM1 (devices/uart16550.c) driven the way Linux's 8250
 * driver probes and uses it: the scratch and IER read-back tests, the
 * loopback test (MCR 0x0a must read back as MSR 0x90), the divisor latch,
 * LSR always ready, IIR never pending, and THR bytes arriving in order on
 * the output descriptor (a pipe here) -- except in loopback.
 */
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "uart16550.h"

static uint8_t rd(struct uart16550 *u, unsigned reg)
{
	uint8_t v = 0;

	uart_access(u, reg, &v, false);
	return v;
}

static void wr(struct uart16550 *u, unsigned reg, uint8_t v)
{
	uart_access(u, reg, &v, true);
}

int main(void)
{
	struct uart16550 u;
	int p[2];
	char got[16] = "";

	if (pipe(p))
		return 1;
	uart_init(&u, p[1]);
	wr(&u, 7, 0xa5);
	CHECK(rd(&u, 7) == 0xa5, "scratch register reads back 0xa5");
	wr(&u, 7, 0x5a);
	CHECK(rd(&u, 7) == 0x5a, "scratch register reads back 0x5a");
	wr(&u, 1, 0x0f);
	CHECK(rd(&u, 1) == 0x0f, "IER reads back 0x0f");
	wr(&u, 1, 0);
	CHECK(rd(&u, 1) == 0, "IER reads back 0");
	CHECK(rd(&u, 2) == 0x01, "IIR: no interrupt pending, no FIFO (a 16450)");
	CHECK((rd(&u, 5) & 0x60) == 0x60, "LSR: transmitter empty, holding register empty");
	wr(&u, 4, 0x10 | 0x0a);
	CHECK((rd(&u, 6) & 0xf0) == 0x90, "loopback: MCR RTS|OUT2 reads as MSR CTS|DCD (0x90)");
	wr(&u, 0, 'x');                       /* looped back: not on the line */
	wr(&u, 4, 0x03);
	CHECK((rd(&u, 6) & 0xb0) == 0xb0, "not in loopback: carrier, DSR, CTS");
	wr(&u, 3, 0x83);                      /* DLAB: the divisor latch */
	wr(&u, 0, 0x01);
	wr(&u, 1, 0x00);
	CHECK(rd(&u, 0) == 0x01 && rd(&u, 1) == 0x00, "divisor latch reads back 115200 baud");
	wr(&u, 3, 0x03);                      /* 8N1 */
	CHECK(rd(&u, 1) == 0, "IER unchanged by the divisor writes");
	wr(&u, 0, 'o');
	wr(&u, 0, 'k');
	close(p[1]);
	CHECK(read(p[0], got, sizeof(got)) == 2 && !memcmp(got, "ok", 2), "THR bytes out in order, loopback's not");
	CHECK(u.bytes_out == 2, "bytes_out counts 2");
	return check_summary();
}
