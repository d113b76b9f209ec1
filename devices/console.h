/*
 * console.h -- virtio-console, port 0 only: the guest's transmitq goes to the
 * launcher's stdout, stdin feeds the receiveq.
 */
#ifndef CONSOLE_H
#define CONSOLE_H

#include <stdint.h>

#include "virtio_mmio.h"

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
	struct vq_chain rx_chain, tx_chain;  /* scratch, used under the lock */
};

void console_init(struct console *con, const struct device_host *host, unsigned index, int out_fd);
/* Start the thread that reads stdin into the receiveq. */
int console_start_input(struct console *con, int in_fd);
/* Stop delivering input before guest memory goes away. */
void console_close(struct console *con);

#endif
