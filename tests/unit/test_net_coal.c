/*
 * test_net_coal.c -- virtio 1.3's notification coalescing (5.1.6.5.9),
 * one check or more per normative rule, R1..R8 as devices/net_coal.h
 * numbers them: first the rules alone (net_coal.c, with a clock the test
 * holds), then through the device -- the control queue answering chains in
 * a fake guest RAM, the transmit queue's drain deciding buffer by buffer,
 * the driver's suppression -- with the interrupt line a log, no KVM.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "check.h"
#include "irq_line_log.h"
#include "net.h"
#include "net_coal.h"
#include "virtio_net_coal.h"

#define US 1000ull    /* ns */

static const bool both[2] = { true, true };
static const uint64_t all_features = 1ull << VIRTIO_NET_F_CTRL_VQ | 1ull << VIRTIO_NET_F_NOTF_COAL |
				     1ull << VIRTIO_NET_F_VQ_NOTF_COAL;

/* ---- commands as bytes ---- */

static uint8_t cmd_set(struct net_coal *c, uint8_t cmd, uint32_t packets, uint32_t usecs, uint64_t features,
		       unsigned *changed)
{
	struct virtio_net_ctrl_coal w = { .max_packets = packets, .max_usecs = usecs };
	uint8_t res[8];
	uint32_t rlen;

	return net_coal_command(c, cmd, (const uint8_t *)&w, sizeof(w), features, both, res, &rlen, changed);
}

static uint8_t cmd_vq(struct net_coal *c, uint8_t cmd, uint16_t vqn, uint16_t reserved, uint32_t packets,
		      uint32_t usecs, uint64_t features, const bool enabled[2], struct net_coal_params *got)
{
	struct virtio_net_ctrl_coal_vq w = { .vqn = vqn, .reserved = reserved,
					     .coal = { .max_packets = packets, .max_usecs = usecs } };
	uint8_t res[8] = { 0 };
	uint32_t rlen = 99;
	unsigned changed;
	uint8_t st = net_coal_command(c, cmd, (const uint8_t *)&w, cmd == VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET ? 4 : sizeof(w),
				      features, enabled, res, &rlen, &changed);

	if (got && rlen == 8) {
		struct virtio_net_ctrl_coal r;

		memcpy(&r, res, 8);
		*got = (struct net_coal_params){ .max_packets = r.max_packets, .max_usecs = r.max_usecs };
	}
	return st;
}

static bool params_are(const struct net_coal *c, unsigned q, uint32_t packets, uint32_t usecs)
{
	return c->q[q].p.max_packets == packets && c->q[q].p.max_usecs == usecs;
}

/* ---- the rules alone ---- */

static void test_r1_zero_means_every_packet(void)
{
	struct net_coal c;
	unsigned ch;

	memset(&c, 0, sizeof(c));
	CHECK(net_coal_packet(&c, 1, 0) && net_coal_packet(&c, 1, 1), "R1: 0/0 (after reset): every packet meets the conditions");
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 8, 0, all_features, &ch);
	CHECK(net_coal_packet(&c, 1, 0) && net_coal_packet(&c, 1, 1), "R1: max_usecs 0, max_packets 8: every packet");
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 0, 50, all_features, &ch);
	CHECK(net_coal_packet(&c, 1, 0) && net_coal_deadline(&c, 1) == 0,
	      "R1: max_packets 0, max_usecs 50: every packet, no time limit pending");
}

static void test_r2_whichever_first(void)
{
	struct net_coal c;
	unsigned ch;
	bool met = false;

	memset(&c, 0, sizeof(c));
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 4, 1000, all_features, &ch);
	for (int i = 0; i < 3; i++)
		met |= net_coal_packet(&c, 1, (uint64_t)i * US);
	CHECK(!met && net_coal_packet(&c, 1, 3 * US), "R2: 4 packets / 1000 us: the 4th packet (at 3 us) meets them");
	CHECK(!net_coal_packet(&c, 1, 4 * US) && net_coal_deadline(&c, 1) == 1004 * US,
	      "R2: then counting starts again at the next packet, and so does the time (deadline 4 + 1000 us)");

	memset(&c, 0, sizeof(c));
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 100, 50, all_features, &ch);
	CHECK(!net_coal_packet(&c, 1, 10 * US) && !net_coal_packet(&c, 1, 20 * US), "R2: 100 / 50 us: 2 packets, not met");
	CHECK(net_coal_deadline(&c, 1) == 60 * US, "R2: the time limit runs from the first packet (10 + 50 us)");
	CHECK(!net_coal_check(&c, 1, 59 * US), "R2: at 49 us after the first: not yet");
	CHECK(net_coal_check(&c, 1, 60 * US), "R2: at 50 us: met by time, with 2 of 100 packets");
	CHECK(!net_coal_check(&c, 1, 200 * US) && net_coal_deadline(&c, 1) == 0,
	      "R2: nothing pending afterwards: time alone meets nothing");

	/* the time limit noticed late, by the next packet: it met the packets
	 * before that one, which counts as the first of the next group */
	memset(&c, 0, sizeof(c));
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 100, 50, all_features, &ch);
	CHECK(!net_coal_packet(&c, 1, 10 * US) && !net_coal_packet(&c, 1, 20 * US),
	      "R2 late: 100 / 50 us: 2 packets, not met");
	CHECK(net_coal_packet(&c, 1, 75 * US), "R2 late: a packet at 75 us, after the 60 us limit: met");
	CHECK(c.q[1].pending == 1 && net_coal_deadline(&c, 1) == 125 * US,
	      "R2 late: that packet alone is pending, and its own limit runs from 75 us");
	CHECK(!net_coal_packet(&c, 1, 80 * US) && c.q[1].pending == 2,
	      "R2 late: the next packet within its limit is counted with it");

	/* each queue counts alone */
	memset(&c, 0, sizeof(c));
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 2, 1000, all_features, &ch);
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 2, 1000, all_features, &ch);
	net_coal_packet(&c, 0, 0);
	CHECK(!net_coal_packet(&c, 1, 0) && net_coal_packet(&c, 0, 0) && net_coal_packet(&c, 1, 0),
	      "R2: receive and transmit queues count their packets separately");
}

static void test_r3_change_rechecked(void)
{
	struct net_coal c;
	unsigned ch;
	bool met = false;

	memset(&c, 0, sizeof(c));
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 15, 1000000, all_features, &ch);
	for (int i = 0; i < 10; i++)
		met |= net_coal_packet(&c, 1, 0);
	CHECK(!met && c.q[1].pending == 10, "R3: 10 packets under max_packets 15: pending, no notification");
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 8, 1000000, all_features, &ch);
	CHECK(ch == 2 && net_coal_check(&c, 1, 1), "R3: TX_SET max_packets 8: the change marks the queue, and it is met at once");
	for (int i = 0; i < 3; i++)
		net_coal_packet(&c, 1, 2);
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 20, 1000000, all_features, &ch);
	CHECK(!net_coal_check(&c, 1, 3), "R3: a change that is not met yet (3 of 20): no notification");
}

static void test_r4_last_setter_wins(void)
{
	struct net_coal c;
	struct net_coal_params got = { 0 };
	unsigned ch;

	/* the spec's command sequence, on our one pair (receiveq1 0, transmitq1 1) */
	memset(&c, 0, sizeof(c));
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 11, 110, all_features, &ch);
	CHECK(ch == 1 && params_are(&c, 0, 11, 110) && params_are(&c, 1, 0, 0), "R4: RX_SET sets the receive queue only");
	cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 0, 0, 22, 220, all_features, both, NULL);
	CHECK(cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET, 0, 0, 0, 0, all_features, both, &got) == VIRTIO_NET_OK &&
	      got.max_packets == 22 && got.max_usecs == 220, "R4: VQ_SET 0 after RX_SET: VQ_GET 0 answers VQ_SET's");
	cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 1, 0, 33, 330, all_features, both, NULL);
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 44, 440, all_features, &ch);
	CHECK(cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET, 1, 0, 0, 0, all_features, both, &got) == VIRTIO_NET_OK &&
	      got.max_packets == 44 && got.max_usecs == 440, "R4: TX_SET after VQ_SET 1 overrides it");
}

static void test_r5_errors_change_nothing(void)
{
	struct net_coal c, before;
	struct net_coal_params got = { 7, 7 };
	static const bool tx_only[2] = { false, true };
	unsigned ch;
	uint8_t res[8];
	uint32_t rlen;

	memset(&c, 0, sizeof(c));
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 5, 50, all_features, &ch);
	before = c;
	CHECK(cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 2, 0, 9, 9, all_features, both, NULL) == VIRTIO_NET_ERR,
	      "R5: VQ_SET of queue 2 (the control queue): VIRTIO_NET_ERR");
	CHECK(cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 300, 0, 9, 9, all_features, both, NULL) == VIRTIO_NET_ERR,
	      "R5: VQ_SET of a queue the device has not: VIRTIO_NET_ERR");
	CHECK(cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 0, 0, 9, 9, all_features, tx_only, NULL) == VIRTIO_NET_ERR,
	      "R5: VQ_SET of a queue that is not enabled: VIRTIO_NET_ERR");
	CHECK(cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET, 0, 0, 0, 0, all_features, tx_only, &got) == VIRTIO_NET_ERR &&
	      got.max_packets == 7, "R5: VQ_GET of a queue that is not enabled: VIRTIO_NET_ERR, no answer");
	CHECK(cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 9, 9, 1ull << VIRTIO_NET_F_VQ_NOTF_COAL, &ch) ==
	      VIRTIO_NET_ERR, "R5: TX_SET without VIRTIO_NET_F_NOTF_COAL negotiated: VIRTIO_NET_ERR");
	CHECK(cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 1, 0, 9, 9, 1ull << VIRTIO_NET_F_NOTF_COAL, both, NULL) ==
	      VIRTIO_NET_ERR, "R5: VQ_SET without VIRTIO_NET_F_VQ_NOTF_COAL negotiated: VIRTIO_NET_ERR");
	CHECK(net_coal_command(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, res, 7, all_features, both, res, &rlen, &ch) ==
	      VIRTIO_NET_ERR && ch == 0, "R5: TX_SET one byte short: VIRTIO_NET_ERR");
	CHECK(net_coal_command(&c, 9, res, 8, all_features, both, res, &rlen, &ch) == VIRTIO_NET_ERR,
	      "R5: an unknown command of the class: VIRTIO_NET_ERR");
	CHECK(!memcmp(c.q, before.q, sizeof(c.q)) && !memcmp(c.class_set, before.class_set, sizeof(c.class_set)),
	      "R5: after 8 refused commands every parameter is as it was");
	CHECK(c.errors == 8 && c.commands == 9, "R5: counted: 9 commands, 8 refused");
	CHECK(cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 1, 0xffff, 9, 90, all_features, both, NULL) == VIRTIO_NET_OK &&
	      params_are(&c, 1, 9, 90), "R5: reserved 0xffff is ignored");
}

static void test_r6_reenabled_queue(void)
{
	struct net_coal c;
	unsigned ch;

	memset(&c, 0, sizeof(c));
	cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 1, 0, 9, 90, all_features, both, NULL);
	net_coal_queue_enabled(&c, 1);
	CHECK(params_are(&c, 1, 0, 0), "R6: a transmit queue enabled again with no TX_SET given: 0");
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 5, 50, all_features, &ch);
	cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 1, 0, 9, 90, all_features, both, NULL);
	net_coal_packet(&c, 1, 0);
	net_coal_queue_enabled(&c, 1);
	CHECK(params_are(&c, 1, 5, 50) && c.q[1].pending == 0, "R6: ... after TX_SET 5/50 and VQ_SET 9/90: TX_SET's 5/50");
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 6, 60, all_features, &ch);
	cmd_vq(&c, VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET, 0, 0, 8, 80, all_features, both, NULL);
	net_coal_queue_enabled(&c, 0);
	CHECK(params_are(&c, 0, 6, 60), "R6: a receive queue enabled again: RX_SET's");
}

static void test_r7_reset(void)
{
	struct net_coal c;
	unsigned ch;

	memset(&c, 0, sizeof(c));
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 5, 50, all_features, &ch);
	cmd_set(&c, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 6, 60, all_features, &ch);
	net_coal_packet(&c, 1, 0);
	net_coal_reset(&c);
	net_coal_queue_enabled(&c, 1);
	CHECK(params_are(&c, 0, 0, 0) && params_are(&c, 1, 0, 0) && !c.q[1].pending,
	      "R7: reset: every parameter 0, even after the queue is enabled again (TX_SET forgotten)");
	CHECK(c.commands == 2, "R7: the command counters outlive a reset");
}

/* ---- through the device ---- */

#define MEM_SIZE  (1u << 20)
#define TX_RING   0x1000u
#define CTRL_RING 0x4000u
#define BUF_GPA   0x10000u
#define CMD_GPA   0x20000u
#define NUM       16u

static struct guest_mem ram;
static struct irq_line_log lines;
static struct device_host host;
static struct net *net;
static struct vring txr, ctrlr;
static uint16_t tx_next;

static void enable_queue(unsigned q, struct vring *vr, uint32_t gpa)
{
	struct vq *vq = &net->mmio.vqs[q];

	vring_init(vr, NUM, ram.host + gpa, 4096);
	vq->num = NUM;
	vq->desc_gpa = gpa;
	vq->avail_gpa = (uint64_t)((uint8_t *)vr->avail - ram.host);
	vq->used_gpa = (uint64_t)((uint8_t *)vr->used - ram.host);
	if (vq_enable(vq, &ram) < 0) {
		printf("FAIL setup: vq_enable: %s\n", vq->error);
		exit(1);
	}
	net_coal_queue_enabled(&net->coal, q);   /* as the transport's QueueReady write does */
}

static void setup(uint64_t features)
{
	struct net_config cfg = { .model = NET_MODEL_THREADED, .timeout_us = 500, .mac = { 0x52, 0x54, 0, 1, 2, 3 } };

	memset(ram.host, 0, MEM_SIZE);
	irq_line_log_clear(&lines);
	net_init(net, &host, 1, &cfg);
	net->mmio.driver_features = features;
	enable_queue(NET_TX, &txr, TX_RING);
	enable_queue(NET_CTRL, &ctrlr, CTRL_RING);
	tx_next = 0;
}

/* n frames the sink will refuse (only the interrupts matter here). */
static void send_frames(unsigned n)
{
	for (unsigned i = 0; i < n; i++, tx_next++) {
		uint16_t d = tx_next % NUM;

		txr.desc[d] = (struct vring_desc){ .addr = BUF_GPA + d * 128u, .len = 74 };
		txr.avail->ring[txr.avail->idx % NUM] = d;
		__atomic_store_n(&txr.avail->idx, (uint16_t)(txr.avail->idx + 1), __ATOMIC_RELEASE);
	}
}

/* One control command through the queue; its ack byte. */
static uint8_t ctrl(const uint8_t *out, uint32_t len, uint32_t in_len)
{
	uint16_t slot = ctrlr.avail->idx % NUM;
	uint8_t *ack = ram.host + CMD_GPA + 256;

	memcpy(ram.host + CMD_GPA, out, len);
	memset(ack, 0xee, 16);
	ctrlr.desc[0] = (struct vring_desc){ .addr = CMD_GPA, .len = len, .flags = VRING_DESC_F_NEXT, .next = 1 };
	ctrlr.desc[1] = (struct vring_desc){ .addr = CMD_GPA + 256, .len = in_len, .flags = VRING_DESC_F_WRITE };
	ctrlr.avail->ring[slot] = 0;
	__atomic_store_n(&ctrlr.avail->idx, (uint16_t)(ctrlr.avail->idx + 1), __ATOMIC_RELEASE);
	net_ctrl_on_notify(net);
	return ack[0];
}

static uint8_t ctrl_tx_set(uint32_t packets, uint32_t usecs)
{
	uint8_t b[10] = { VIRTIO_NET_CTRL_NOTF_COAL, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET };
	struct virtio_net_ctrl_coal w = { .max_packets = packets, .max_usecs = usecs };

	memcpy(b + 2, &w, 8);
	return ctrl(b, sizeof(b), 1);
}

static void test_device_per_buffer(void)
{
	setup(all_features);
	send_frames(5);
	net_tx_on_notify(net);
	CHECK(net->st.interrupts == 5, "R1 (device): parameters 0, 5 buffers in one drain: 5 notifications (%llu)",
	      (unsigned long long)net->st.interrupts);
	CHECK(ctrl_tx_set(4, 1000000) == VIRTIO_NET_OK, "the control queue answers TX_SET 4 packets: VIRTIO_NET_OK");
	CHECK(ctrlr.used->idx == 1 && ctrlr.used->ring[0].len == 1, "... and returns the chain with 1 byte written");
	send_frames(9);
	net_tx_on_notify(net);
	CHECK(net->st.interrupts == 5 + 2, "R2 (device): 4 packets, 9 buffers: 2 more notifications, 1 pending");
	CHECK(net_coal_deadline(&net->coal, NET_TX) != 0, "... the pending one has a deadline for the timer");

	setup(0);
	send_frames(5);
	net_tx_on_notify(net);
	CHECK(net->st.interrupts == 1, "without the feature: one notification per drain, as before");
}

static void test_device_change_and_suppression(void)
{
	uint64_t before;

	setup(all_features);
	ctrl_tx_set(15, 1000000);
	send_frames(10);
	net_tx_on_notify(net);
	before = net->st.interrupts;
	CHECK(before == 0, "R3 (device): 10 buffers under 15 packets: no notification yet");
	ctrl_tx_set(8, 1000000);
	CHECK(net->st.interrupts == 1, "R3 (device): TX_SET 8 with 10 pending: one notification at once");

	/* R8: the driver suppresses its interrupts (NO_INTERRUPT, no event idx) */
	ctrl_tx_set(2, 1000000);
	txr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	send_frames(6);
	net_tx_on_notify(net);
	CHECK(net->st.interrupts == 1, "R8: conditions met 3 times under NO_INTERRUPT: no notification sent");
	txr.avail->flags = 0;
	send_frames(2);
	net_tx_on_notify(net);
	CHECK(net->st.interrupts == 2, "R8: suppression lifted: the next time they are met, one notification");
}

static void test_device_bad_commands(void)
{
	uint8_t unknown_class[4] = { 0x42, 0 }, bad_cmd[10] = { VIRTIO_NET_CTRL_NOTF_COAL, 9 };
	uint8_t vq_get[6] = { VIRTIO_NET_CTRL_NOTF_COAL, VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET, 1, 0, 0, 0 };
	uint8_t *reply = ram.host + CMD_GPA + 256;
	struct virtio_net_ctrl_coal got;

	setup(all_features);
	ctrl_tx_set(4, 40);
	CHECK(ctrl(unknown_class, sizeof(unknown_class), 1) == VIRTIO_NET_ERR, "a class the device has not: VIRTIO_NET_ERR");
	CHECK(ctrl(bad_cmd, sizeof(bad_cmd), 1) == VIRTIO_NET_ERR, "an unknown coalescing command: VIRTIO_NET_ERR");
	CHECK(params_are(&net->coal, NET_TX, 4, 40), "... and neither changed the parameters");
	CHECK(ctrl(vq_get, sizeof(vq_get), 9) == VIRTIO_NET_OK, "VQ_GET of the transmit queue: VIRTIO_NET_OK");
	memcpy(&got, reply + 1, 8);
	CHECK(got.max_packets == 4 && got.max_usecs == 40 && ctrlr.used->ring[(ctrlr.used->idx - 1) % NUM].len == 9,
	      "... answering 4 packets / 40 us after the ack, 9 bytes written");
	CHECK(ctrl(vq_get, sizeof(vq_get), 0) == 0xee && net->ctrl_commands_bad == 2,
	      "a chain with no room for the ack: handed back unanswered, counted");
	CHECK(!net->mmio.needs_reset, "no bad command broke the device");

	setup(1ull << VIRTIO_NET_F_CTRL_VQ);
	CHECK(ctrl_tx_set(4, 40) == VIRTIO_NET_ERR && params_are(&net->coal, NET_TX, 0, 0),
	      "R5 (device): TX_SET when NOTF_COAL was not negotiated: VIRTIO_NET_ERR, nothing set");
}

int main(void)
{
	test_r1_zero_means_every_packet();
	test_r2_whichever_first();
	test_r3_change_rechecked();
	test_r4_last_setter_wins();
	test_r5_errors_change_nothing();
	test_r6_reenabled_queue();
	test_r7_reset();

	if (gmem_map(&ram, MEM_SIZE) < 0) {
		printf("FAIL cannot map fake guest RAM\n");
		return 1;
	}
	net = calloc(1, sizeof(*net));
	if (!net)
		return 1;
	host = irq_line_log_host(&ram, &lines);
	test_device_per_buffer();
	test_device_change_and_suppression();
	test_device_bad_commands();
	pthread_mutex_destroy(&net->mmio.lock);
	free(net);
	gmem_unmap(&ram);
	return check_summary();
}
