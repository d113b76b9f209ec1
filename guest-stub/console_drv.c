/*
 * console_drv.c -- virtio-console port 0 from the guest side.
 *
 * Output is deliberately simple: copy the text into one buffer, add it, kick
 * (the console host never suppresses notifies), and spin until it comes
 * back.  The console is for the banner and results, never on the hot path.
 * Input keeps a few receive buffers posted and sleeps in hlt until the
 * host's interrupt says one was filled.
 */
#include "console_drv.h"

#include <linux/virtio_console.h>
#include <linux/virtio_ids.h>

#include "io.h"
#include "lib.h"
#include "virtio_drv.h"

#define RX_BUFS 4
#define RX_LEN 256

static struct virtio_dev con_dev;
static struct gvq con_rx, con_tx;
static char *tx_buf;
static char *rx_buf[RX_BUFS];
static int con_ready;

int console_drv_init(uint64_t base, unsigned irq)
{
	if (virtio_drv_probe(&con_dev, base, irq, VIRTIO_ID_CONSOLE, 0) < 0)
		return -1;
	if (gvq_setup(&con_rx, &con_dev, 0, 16) < 0 || gvq_setup(&con_tx, &con_dev, 1, 16) < 0) {
		virtio_drv_fail(&con_dev);
		return -1;
	}
	gvq_disable_interrupts(&con_tx);   /* output is polled */
	tx_buf = alloc_pages(4096);
	for (int i = 0; i < RX_BUFS; i++) {
		struct gvq_seg seg = { .len = RX_LEN, .device_writes = true };

		rx_buf[i] = alloc_pages(RX_LEN);
		seg.addr = rx_buf[i];
		gvq_add(&con_rx, &seg, 1, rx_buf[i], false);
	}
	virtio_drv_ready(&con_dev);
	gvq_kick(&con_rx);
	con_ready = 1;
	return 0;
}

void console_write(const char *s, size_t n)
{
	struct gvq_seg seg = { .addr = tx_buf };

	if (!con_ready)
		return;
	while (n) {
		size_t chunk = n > 4096 ? 4096 : n;

		memcpy(tx_buf, s, chunk);
		seg.len = chunk;
		gvq_add(&con_tx, &seg, 1, tx_buf, false);
		gvq_kick(&con_tx);
		while (!gvq_get_used(&con_tx, 0))
			cpu_relax();
		s += chunk;
		n -= chunk;
	}
}

size_t console_read(char *buf, size_t max)
{
	struct gvq_seg seg = { .len = RX_LEN, .device_writes = true };
	uint32_t len = 0;
	char *got;

	for (;;) {
		uint64_t seen = irq_seq;

		got = gvq_get_used(&con_rx, &len);
		if (got)
			break;
		/* Before sleeping: see net_drv_wait_tx. */
		virtio_drv_ack_interrupt(&con_dev);
		if (gvq_enable_interrupts(&con_rx))
			halt_until_irq(seen);
	}
	if (len > RX_LEN)
		len = RX_LEN;
	if (len > max)
		len = max;
	memcpy(buf, got, len);
	seg.addr = got;
	gvq_add(&con_rx, &seg, 1, got, false);
	gvq_kick(&con_rx);
	return len;
}
