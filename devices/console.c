/*
 * console.c -- virtio-console port 0.
 *
 * Output: a notify on the transmitq (an MMIO exit: the console is not a hot
 * path) pops each chain and writes its readable bytes to stdout, about
 * 64 KiB per round; the vCPU thread finishes a longer notify round by round
 * (console_tx_continue), looking at the stop flag in between.
 * Input: a thread reads stdin into a small pending buffer and hands it to
 * whatever receive buffers the guest has posted; a later notify on the
 * receiveq (new buffers) delivers the rest.  At EOF the thread ends; while
 * stdin is a terminal the run is a background job of, it waits.  Both
 * paths hold the transport lock, so they never walk the receiveq at the
 * same time.
 * Stats: the byte counts and continuation rounds, appended to the stats
 * block by console_report_stats where the launcher's order puts them.
 */
#include "console.h"

#include "clock.h"
#include "diag.h"
#include "stats.h"

#include <errno.h>
#include <linux/virtio_console.h>
#include <linux/virtio_ids.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { CONSOLE_RX = 0, CONSOLE_TX = 1 };

/* The longest transmit chain the console takes (the ring walker refuses
 * longer ones: DEVICE_NEEDS_RESET).  Every readable byte of a chain is
 * written to stdout, so without a cap one notify could ask for ring size x
 * 1024 descriptors x all of RAM.  Real drivers stay far below 64 KiB: the
 * stub writes at most 4 KiB per chain, Linux's virtio_console at most
 * 32 KiB (a port write) or a page (hvc).  Twice the largest of those keeps
 * every real driver working and bounds one notify to ring size x 64 KiB
 * (64 MiB with 1024 slots).  Receive chains need no cap: the host writes
 * only what it holds (at most `pending`, 4 KiB) into them. */
#define CONSOLE_TX_CHAIN_MAX (64u << 10)
/* One round of output stops once it has written this much; the rest waits
 * for console_tx_continue, which the vCPU thread calls only after it has
 * looked at the stop flag.  With the cap above, a round writes at most
 * 128 KiB: a notify covering 1024 such chains can no longer keep the vCPU
 * thread from SIGTERM for the minutes 64 MiB can take to a slow terminal. */
#define CONSOLE_TX_WEIGHT_BYTES (64u << 10)
/* How often input from a terminal that belongs to the foreground job is
 * tried again: a background run wakes this thread 5 times a second, and
 * after `fg` the first keystroke waits at most this long. */
#define CONSOLE_BACKGROUND_RETRY_MS 200

static void write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* stdout closed: the guest's output has nowhere to go */
		p += w;
		n -= w;
	}
}

static void console_transmit(struct console *con)
{
	struct virtio_mmio_dev *dev = &con->mmio;
	struct vq *vq = &dev->vqs[CONSOLE_TX];
	struct vq_chain *chain = &con->tx_chain;
	uint64_t round = 0;
	bool used = false;
	int rc = 0;

	con->tx_more = false;
	while (round < CONSOLE_TX_WEIGHT_BYTES && (rc = vq_pop_avail(vq, chain)) > 0) {
		if (!con->t_first_output)
			con->t_first_output = monotonic_seconds();
		for (unsigned i = 0; i < chain->count; i++)
			if (!chain->buf[i].device_writes) {
				write_all(con->out_fd, chain->buf[i].host, chain->buf[i].len);
				con->bytes_out += chain->buf[i].len;
			}
		round += chain->out_len;
		vq_push_used(vq, chain->head, 0);
		used = true;
	}
	if (rc < 0)
		virtio_mmio_fail(dev, vq->error);
	else if (rc > 0)        /* stopped by the weight, not by an empty ring */
		con->tx_more = vq_has_avail(vq);
	if (rc >= 0 && used && vq_should_interrupt(vq))
		virtio_mmio_signal_used(dev);
}

bool console_tx_continuing(const struct console *con)
{
	return __atomic_load_n(&con->tx_more, __ATOMIC_RELAXED);
}

void console_tx_continue(struct console *con)
{
	pthread_mutex_lock(&con->mmio.lock);
	/* A reset in between leaves the queue not ready: nothing to do. */
	if (con->tx_more && !con->closed) {
		con->tx_continuations++;
		console_transmit(con);
	}
	pthread_mutex_unlock(&con->mmio.lock);
}

/* Caller holds the transport lock. */
static void console_deliver(struct console *con)
{
	struct virtio_mmio_dev *dev = &con->mmio;
	struct vq *vq = &dev->vqs[CONSOLE_RX];
	struct vq_chain *chain = &con->rx_chain;
	bool used = false;
	int rc = 0;

	while (con->pending_off < con->pending_len && (rc = vq_pop_avail(vq, chain)) > 0) {
		uint32_t written = 0;

		for (unsigned i = 0; i < chain->count && con->pending_off < con->pending_len; i++) {
			uint32_t n = con->pending_len - con->pending_off;

			if (!chain->buf[i].device_writes)
				continue;
			if (n > chain->buf[i].len)
				n = chain->buf[i].len;
			memcpy(chain->buf[i].host, con->pending + con->pending_off, n);
			con->pending_off += n;
			written += n;
		}
		con->bytes_in += written;
		vq_push_used(vq, chain->head, written);
		used = true;
	}
	if (rc < 0)
		virtio_mmio_fail(dev, vq->error);
	else if (used && vq_should_interrupt(vq))
		virtio_mmio_signal_used(dev);
}

static void console_queue_notify(struct virtio_mmio_dev *dev, unsigned q)
{
	struct console *con = dev->priv;

	if (q == CONSOLE_TX)
		console_transmit(con);
	else
		console_deliver(con);
}

static void console_config_read(struct virtio_mmio_dev *dev, uint32_t off, void *data, uint32_t len)
{
	struct virtio_console_config cfg = { .cols = 80, .rows = 25, .max_nr_ports = 1 };

	(void)dev;
	virtio_mmio_config_copy(data, len, off, &cfg, sizeof(cfg));
}

static const struct virtio_dev_ops console_ops = {
	.name = "console",
	.device_id = VIRTIO_ID_CONSOLE,
	.num_queues = 2,
	.config_read = console_config_read,
	.queue_notify = console_queue_notify,
};

void console_init(struct console *con, const struct device_host *host, unsigned index, int out_fd)
{
	memset(con, 0, sizeof(*con));
	con->out_fd = out_fd;
	virtio_mmio_init(&con->mmio, &console_ops, con, host, index, 0);
	con->mmio.vqs[CONSOLE_RX].name = "console receive";
	con->mmio.vqs[CONSOLE_TX].name = "console transmit";
	con->mmio.vqs[CONSOLE_TX].max_chain_bytes = CONSOLE_TX_CHAIN_MAX;
}

static void *console_input_thread(void *arg)
{
	struct console *con = arg;
	for (;;) {
		ssize_t n;
		bool drained;

		pthread_mutex_lock(&con->mmio.lock);
		drained = con->pending_off >= con->pending_len;
		pthread_mutex_unlock(&con->mmio.lock);
		if (!drained) {
			/* The guest has not posted buffers for what we have; wait a
			 * little rather than reading more than we can hold. */
			poll(NULL, 0, 5);
			continue;
		}
		n = read(con->in_fd, con->pending, sizeof(con->pending));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EIO) {
			/* stdin is the terminal of a job we are in the
			 * background of (SIGTTIN ignored: launcher/run.c): its
			 * input is the foreground's until we are brought back.
			 * Look again now and then; nothing typed is lost. */
			poll(NULL, 0, CONSOLE_BACKGROUND_RETRY_MS);
			continue;
		}
		if (n <= 0)
			return NULL;   /* EOF: the guest simply gets no more input */
		pthread_mutex_lock(&con->mmio.lock);
		if (con->closed) {
			pthread_mutex_unlock(&con->mmio.lock);
			return NULL;
		}
		con->pending_len = n;
		con->pending_off = 0;
		console_deliver(con);
		pthread_mutex_unlock(&con->mmio.lock);
	}
}

int console_start_input(struct console *con, int in_fd)
{
	pthread_t th;

	con->in_fd = in_fd;
	if (pthread_create(&th, NULL, console_input_thread, con))
		return diag_fail("console: cannot start the input thread");
	pthread_detach(th);
	return 0;
}

void console_close(struct console *con)
{
	pthread_mutex_lock(&con->mmio.lock);
	con->closed = true;
	pthread_mutex_unlock(&con->mmio.lock);
}

void console_report_stats(const struct console *con, struct stats *st)
{
	stats_u64(st, "console_bytes_out", con->bytes_out);
	stats_u64(st, "console_bytes_in", con->bytes_in);
	stats_u64(st, "console_tx_continuations", con->tx_continuations);
}
