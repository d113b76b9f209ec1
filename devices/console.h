/*
 * console.h -- virtio-console, port 0 only: the guest's transmitq goes to the
 * launcher's stdout, stdin feeds the receiveq.  It reports its own counters
 * into the stats block (console_report_stats).
 */
#ifndef CONSOLE_H
#define CONSOLE_H

#include <stdint.h>

#include "virtio_mmio.h"

struct stats;

struct console {
	struct virtio_mmio_dev mmio;
	int out_fd;
	uint64_t bytes_out, bytes_in;
	double t_first_output;      /* CLOCK_MONOTONIC of the first output byte */
	/* stdin bytes read but not yet delivered (no receive buffer yet) */
	uint8_t pending[4096];
	uint32_t pending_len, pending_off;
	int in_fd;
	bool closed;                /* the run is over: touch no guest memory */
	bool tx_more;               /* a transmit round stopped at its weight */
	uint64_t tx_continuations;  /* rounds run by console_tx_continue */
	struct vq_chain rx_chain, tx_chain;  /* scratch, used under the lock */
};

void console_init(struct console *con, const struct device_host *host, unsigned index, int out_fd);
/* Start the thread that reads stdin into the receiveq. */
int console_start_input(struct console *con, int in_fd);
/* A transmit notify is written out in rounds of about 64 KiB: is a round
 * left, and run it (takes the transport lock).  The vCPU thread calls these
 * between KVM_RUNs, after it has looked at the stop flag. */
bool console_tx_continuing(const struct console *con);
void console_tx_continue(struct console *con);
/* Stop delivering input before guest memory goes away. */
void console_close(struct console *con);
/* console_bytes_out, console_bytes_in, console_tx_continuations, in that
 * order (docs/stats.md). */
void console_report_stats(const struct console *con, struct stats *st);

#endif
