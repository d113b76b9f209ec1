/*
 * test_virtio_mmio.c -- the virtio-mmio register file (devices/virtio_mmio.c)
 * and the console device (devices/console.c) behind it, without KVM.
 *
 * The register file is the guest's first door into the launcher, so it is
 * driven here exactly as a guest drives it: 4-byte accesses through
 * virtio_mmio_access() at register offsets, rings in a fake guest RAM.  The
 * device under test is the real console (it offers only VERSION_1 and, as
 * every device, RING_PACKED, so any other feature is one the device never
 * offered).  Its interrupt line is a log (irq_line_log.h), so every rise
 * and fall can be counted and put in order: the line is a level, high
 * while InterruptStatus is not 0 (virtio 1.2, 4.2.3.4).
 *
 * The order the transport enforces is the spec's (virtio 1.2, 3.1.1):
 * ACKNOWLEDGE, DRIVER, features, FEATURES_OK (re-read), queues, DRIVER_OK.
 * Every step out of that order must be refused, counted, and answered with
 * DEVICE_NEEDS_RESET plus a configuration-change interrupt -- every time, not
 * only the first -- and only a device reset brings the device back.  The
 * console tests then send a chain as a driver would and read it back from
 * the device's output pipe, and type into its input pipe and find the bytes
 * in a posted receive buffer, and does the same over a packed ring.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "check.h"
#include "console.h"
#include "irq_line_log.h"
#include "vq_layout.h"

#define MEM_SIZE (1u << 20)
#define Q0_GPA   0x1000u        /* queue 0: desc, avail; used on the next page */
#define Q1_GPA   0x4000u        /* queue 1, likewise */
#define BUF_GPA  0x10000u       /* data buffers */
#define NUM      8u

#define S_ACK   VIRTIO_CONFIG_S_ACKNOWLEDGE
#define S_DRV   VIRTIO_CONFIG_S_DRIVER
#define S_FOK   VIRTIO_CONFIG_S_FEATURES_OK
#define S_DOK   VIRTIO_CONFIG_S_DRIVER_OK
#define S_RESET VIRTIO_CONFIG_S_NEEDS_RESET

/* Fake guest RAM, and the host a device sees: no VM, its line a log. */
static struct guest_mem ram;
static struct irq_line_log lines;
static struct device_host host;
static struct console *con;      /* large (chain scratch): heap */
static struct virtio_mmio_dev *dev;
static int out_pipe[2];          /* the console's output: [0] is read here */

/* ---- the driver's side of the bus ---- */

static void wr(uint32_t off, uint32_t value)
{
	virtio_mmio_access(dev, off, (uint8_t *)&value, 4, true);
}

static uint32_t rd(uint32_t off)
{
	uint32_t value = 0;

	virtio_mmio_access(dev, off, (uint8_t *)&value, 4, false);
	return value;
}

/* Interrupts raised since the last call: rises of the line. */
static uint64_t irqs(void)
{
	return irq_line_log_take_rises(&lines, dev->gsi);
}

/* A fresh console on zeroed RAM: status 0, line low, nothing counted. */
static void fresh_device(void)
{
	if (dev)
		pthread_mutex_destroy(&dev->lock);
	memset(ram.host, 0, MEM_SIZE);
	irq_line_log_clear(&lines);
	console_init(con, &host, 0, out_pipe[1]);
	dev = &con->mmio;
}

static void write_features(uint64_t features)
{
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
}

static uint64_t read_device_features(void)
{
	uint64_t f;

	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	f = rd(VIRTIO_MMIO_DEVICE_FEATURES);
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	return f | (uint64_t)rd(VIRTIO_MMIO_DEVICE_FEATURES) << 32;
}

/* What the device offers but the packed ring: the tests below lay their
 * rings out with vring_init, so they ask for the split one
 * (test_console_packed asks for the other). */
static uint64_t split_features(void)
{
	return read_device_features() & ~(1ull << VIRTIO_F_RING_PACKED);
}

/* The ring of queue q in fake RAM, laid out as the guest does (vring_init). */
static struct vring ring_of(unsigned q)
{
	struct vring vr;

	vring_init(&vr, NUM, ram.host + (q ? Q1_GPA : Q0_GPA), 4096);
	return vr;
}

static uint64_t gpa_of(const void *p)
{
	return (uint64_t)((const uint8_t *)p - ram.host);
}

/* Program queue q's size and ring addresses (not QueueReady), over rings
 * zeroed as a driver's fresh allocation is. */
static void program_queue(unsigned q, uint32_t num)
{
	struct vring vr = ring_of(q);

	memset(vr.desc, 0, vring_size(NUM, 4096));

	wr(VIRTIO_MMIO_QUEUE_SEL, q);
	wr(VIRTIO_MMIO_QUEUE_NUM, num);
	wr(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)gpa_of(vr.desc));
	wr(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(gpa_of(vr.desc) >> 32));
	wr(VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)gpa_of(vr.avail));
	wr(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(gpa_of(vr.avail) >> 32));
	wr(VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)gpa_of(vr.used));
	wr(VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(gpa_of(vr.used) >> 32));
}

/* How far driver_init() goes. */
enum stage { TO_DRIVER, TO_FEATURES_OK, TO_QUEUES, TO_DRIVER_OK };

/* The spec's initialization sequence (3.1.1), from a reset up to `stage`. */
static void driver_init(enum stage stage)
{
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, S_ACK);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV);
	if (stage == TO_DRIVER)
		return;
	write_features(split_features());
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	if (stage == TO_FEATURES_OK)
		return;
	for (unsigned q = 0; q < 2; q++) {
		program_queue(q, NUM);
		wr(VIRTIO_MMIO_QUEUE_READY, 1);
	}
	if (stage == TO_QUEUES)
		return;
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
}

/*
 * After a write the device must have refused: the violation count went up by
 * exactly one, DEVICE_NEEDS_RESET is set, InterruptStatus has the
 * configuration-change bit, exactly one interrupt was raised, and the line
 * says why (contains `needle`).  Clears InterruptStatus for the next one.
 */
static void expect_refused(const char *what, uint64_t violations_before, const char *needle)
{
	uint64_t raised = irqs();
	uint32_t isr = rd(VIRTIO_MMIO_INTERRUPT_STATUS);

	CHECK(dev->violations == violations_before + 1, "%s: counted (violations %llu -> %llu)", what,
	      (unsigned long long)violations_before, (unsigned long long)dev->violations);
	CHECK((rd(VIRTIO_MMIO_STATUS) & S_RESET) && (isr & VIRTIO_MMIO_INT_CONFIG) && raised == 1,
	      "%s: DEVICE_NEEDS_RESET and one config interrupt (status 0x%x, isr 0x%x, %llu raised)", what,
	      rd(VIRTIO_MMIO_STATUS), isr, (unsigned long long)raised);
	CHECK(strstr(dev->last_error, needle) && strstr(dev->last_error, "virtio-console: ") == dev->last_error &&
	      strstr(dev->last_error, "-- device needs reset"),
	      "%s: the line names it ('%s'): \"%s\"", what, needle, dev->last_error);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, isr);
}

/* ---- the register file ---- */

static void test_identity(void)
{
	fresh_device();
	CHECK(rd(VIRTIO_MMIO_MAGIC_VALUE) == 0x74726976 && rd(VIRTIO_MMIO_VERSION) == 2 &&
	      rd(VIRTIO_MMIO_DEVICE_ID) == VIRTIO_ID_CONSOLE, "magic \"virt\", version 2, device id console");
	CHECK(read_device_features() == (1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_F_RING_PACKED),
	      "the console offers VERSION_1 and RING_PACKED, nothing else");
	wr(VIRTIO_MMIO_DEVICE_FEATURES_SEL, 2);
	CHECK(rd(VIRTIO_MMIO_DEVICE_FEATURES) == 0, "device features word 2 reads 0");
	wr(VIRTIO_MMIO_QUEUE_SEL, 0);
	CHECK(rd(VIRTIO_MMIO_QUEUE_NUM_MAX) == VQ_MAX_SIZE && rd(VIRTIO_MMIO_QUEUE_READY) == 0,
	      "queue 0: QueueNumMax %u, not ready", VQ_MAX_SIZE);
	wr(VIRTIO_MMIO_QUEUE_SEL, 2);
	CHECK(rd(VIRTIO_MMIO_QUEUE_NUM_MAX) == 0, "queue 2 does not exist: QueueNumMax 0");
	CHECK(rd(VIRTIO_MMIO_STATUS) == 0 && dev->violations == 0 && irqs() == 0, "a fresh device: status 0, nothing raised");

	/* bad accesses: not 4 bytes wide or not aligned */
	uint8_t bytes[8] = { 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa };
	virtio_mmio_access(dev, VIRTIO_MMIO_MAGIC_VALUE, bytes, 2, false);
	CHECK(bytes[0] == 0 && bytes[1] == 0, "a 2-byte read of a register reads 0");
	uint32_t one = S_ACK;
	virtio_mmio_access(dev, VIRTIO_MMIO_STATUS + 1, (uint8_t *)&one, 4, true);
	CHECK(rd(VIRTIO_MMIO_STATUS) == 0, "a misaligned status write is dropped");
}

static void test_init_in_order(void)
{
	fresh_device();
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, S_ACK);
	CHECK(rd(VIRTIO_MMIO_STATUS) == S_ACK, "ACKNOWLEDGE sticks");
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV);
	CHECK(rd(VIRTIO_MMIO_STATUS) == (S_ACK | S_DRV), "then DRIVER sticks");
	write_features(split_features());
	CHECK(virtio_mmio_has_feature(dev, VIRTIO_F_VERSION_1) && !virtio_mmio_has_feature(dev, VIRTIO_F_RING_PACKED),
	      "VERSION_1 accepted; RING_PACKED offered but not asked for, so not negotiated");
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	CHECK(rd(VIRTIO_MMIO_STATUS) == (S_ACK | S_DRV | S_FOK), "FEATURES_OK sticks (the driver's re-read sees it)");
	for (unsigned q = 0; q < 2; q++) {
		program_queue(q, NUM);
		wr(VIRTIO_MMIO_QUEUE_READY, 1);
		CHECK(rd(VIRTIO_MMIO_QUEUE_READY) == 1 && dev->vqs[q].ready && dev->vqs[q].num == NUM,
		      "queue %u: ready with %u entries", q, NUM);
	}
	CHECK(!dev->vqs[1].indirect_ok && !dev->vqs[1].event_idx, "no ring features: the console offers none");
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
	CHECK(rd(VIRTIO_MMIO_STATUS) == (S_ACK | S_DRV | S_FOK | S_DOK), "DRIVER_OK sticks: status 0x%x",
	      rd(VIRTIO_MMIO_STATUS));
	/* re-writing what is already set is not a step backwards */
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
	CHECK(dev->violations == 0 && dev->errors == 0 && irqs() == 0 && !dev->needs_reset,
	      "the whole sequence in order: no violation, no interrupt");

	/* the driver may give up at any point: FAILED is always accepted */
	driver_init(TO_DRIVER);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | VIRTIO_CONFIG_S_FAILED);
	CHECK(rd(VIRTIO_MMIO_STATUS) == (S_ACK | S_DRV | VIRTIO_CONFIG_S_FAILED) && dev->violations == 0,
	      "FAILED is accepted without a violation");
}

static void test_status_order(void)
{
	static const struct {
		enum stage from;        /* where the driver stands (-1: just reset) */
		bool from_reset;
		uint32_t write;
		const char *what, *needle;
	} cases[] = {
		{ TO_DRIVER, true, S_DRV, "DRIVER before ACKNOWLEDGE", "out of order" },
		{ TO_DRIVER, true, S_ACK | S_DRV, "ACKNOWLEDGE and DRIVER in one write", "out of order" },
		{ TO_DRIVER, true, S_ACK | S_DRV | S_FOK | S_DOK, "everything at once from reset", "out of order" },
		{ TO_DRIVER, false, S_ACK | S_DRV | S_DOK, "DRIVER_OK without FEATURES_OK", "out of order" },
		{ TO_DRIVER, false, S_ACK | S_DRV | S_FOK | S_DOK, "FEATURES_OK and DRIVER_OK in one write",
		  "out of order" },
		{ TO_DRIVER, false, S_ACK, "clearing DRIVER", "clears" },
		{ TO_DRIVER, false, S_ACK | S_DRV | 0x10, "an unknown status bit (0x10)", "out of order" },
		{ TO_FEATURES_OK, false, S_ACK | S_FOK, "clearing DRIVER after FEATURES_OK", "clears" },
		{ TO_DRIVER_OK, false, S_ACK | S_DRV | S_FOK, "clearing DRIVER_OK", "clears" },
	};

	fresh_device();
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t before_status;
		uint64_t v;

		if (cases[i].from_reset)
			wr(VIRTIO_MMIO_STATUS, 0);
		else
			driver_init(cases[i].from);
		before_status = rd(VIRTIO_MMIO_STATUS);
		irqs();
		v = dev->violations;
		wr(VIRTIO_MMIO_STATUS, cases[i].write);
		CHECK((rd(VIRTIO_MMIO_STATUS) & ~S_RESET) == before_status,
		      "%s: refused, status stays 0x%x (now 0x%x)", cases[i].what, before_status, rd(VIRTIO_MMIO_STATUS));
		expect_refused(cases[i].what, v, cases[i].needle);
	}

	/* every time, not only the first: the same bad write twice, no reset between */
	driver_init(TO_DRIVER);
	irqs();
	for (int k = 0; k < 3; k++) {
		uint64_t v = dev->violations;

		wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_DOK);
		expect_refused(k ? "DRIVER_OK without FEATURES_OK, again while NEEDS_RESET is set"
				 : "DRIVER_OK without FEATURES_OK", v, "out of order");
	}
	CHECK(dev->errors == dev->violations, "each violation is also a device error (%llu)",
	      (unsigned long long)dev->errors);
	CHECK(strstr(dev->error, "DRIVER") != NULL, "the first line is kept for the exit message: \"%s\"", dev->error);

	/* the driver cannot set NEEDS_RESET itself, nor clear it; writing back
	 * what it read (NEEDS_RESET included) is not a violation */
	fresh_device();
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_RESET);
	CHECK(rd(VIRTIO_MMIO_STATUS) == S_ACK && dev->violations == 0, "a driver write cannot set NEEDS_RESET");
}

static void test_features(void)
{
	uint64_t v;

	/* an unoffered feature: FEATURES_OK does not stick */
	fresh_device();
	driver_init(TO_DRIVER);
	write_features(1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_RING_F_INDIRECT_DESC);
	CHECK(!virtio_mmio_has_feature(dev, VIRTIO_RING_F_INDIRECT_DESC) &&
	      virtio_mmio_has_feature(dev, VIRTIO_F_VERSION_1),
	      "an unoffered feature never takes effect: INDIRECT_DESC masked off, VERSION_1 kept");
	for (int k = 0; k < 2; k++) {
		v = dev->violations;
		irqs();
		wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
		CHECK(!(rd(VIRTIO_MMIO_STATUS) & S_FOK), "unoffered INDIRECT_DESC: FEATURES_OK refused (try %d)", k + 1);
		expect_refused("FEATURES_OK with an unoffered feature", v, "not offer");
	}
	/* the console walked an indirect table this way: queues set up anyway */
	v = dev->violations;
	irqs();
	program_queue(1, NUM);
	CHECK(dev->violations > v, "queue registers before FEATURES_OK are refused (%llu violations)",
	      (unsigned long long)(dev->violations - v));
	CHECK(irqs() == 1, "and raise the line once: it stays high until acknowledged");
	wr(VIRTIO_MMIO_INTERRUPT_ACK, rd(VIRTIO_MMIO_INTERRUPT_STATUS));
	v = dev->violations;
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	CHECK(!dev->vqs[1].ready && !dev->vqs[1].indirect_ok && rd(VIRTIO_MMIO_QUEUE_READY) == 0,
	      "QueueReady before FEATURES_OK: the queue stays not ready");
	expect_refused("QueueReady before FEATURES_OK", v, "FEATURES_OK");

	/* an unoffered bit above bit 63 (feature word 2) */
	driver_init(TO_DRIVER);
	write_features(1ull << VIRTIO_F_VERSION_1);
	wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 2);
	wr(VIRTIO_MMIO_DRIVER_FEATURES, 1);
	v = dev->violations;
	irqs();
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	CHECK(!(rd(VIRTIO_MMIO_STATUS) & S_FOK), "a feature bit in word 2: FEATURES_OK refused");
	expect_refused("FEATURES_OK with a feature bit above 63", v, "not offer");

	/* a driver may correct its features before FEATURES_OK */
	driver_init(TO_DRIVER);
	write_features(1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_RING_F_EVENT_IDX);
	write_features(1ull << VIRTIO_F_VERSION_1);
	v = dev->violations;
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	CHECK((rd(VIRTIO_MMIO_STATUS) & S_FOK) && dev->violations == v,
	      "features rewritten without the unoffered bit: FEATURES_OK accepted");

	/* late feature writes: after FEATURES_OK, after DRIVER_OK; before DRIVER */
	static const struct {
		enum stage at;
		bool from_reset;
		uint32_t word1;         /* written to feature word 1 (VERSION_1 is its bit 0) */
		const char *what, *needle;
	} late[] = {
		{ TO_FEATURES_OK, false, 0, "a driver features write after FEATURES_OK", "FEATURES_OK" },
		{ TO_DRIVER_OK, false, 0, "a driver features write after DRIVER_OK", "FEATURES_OK" },
		{ TO_DRIVER, true, 1, "a driver features write before DRIVER", "DRIVER" },
	};
	for (unsigned i = 0; i < sizeof(late) / sizeof(late[0]); i++) {
		uint64_t before;

		if (late[i].from_reset) {
			wr(VIRTIO_MMIO_STATUS, 0);
			wr(VIRTIO_MMIO_STATUS, S_ACK);
		} else {
			driver_init(late[i].at);
		}
		before = dev->driver_features;
		wr(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
		for (int k = 0; k < 2; k++) {
			v = dev->violations;
			irqs();
			wr(VIRTIO_MMIO_DRIVER_FEATURES, late[i].word1);
			CHECK(dev->driver_features == before, "%s: ignored (features 0x%llx)", late[i].what,
			      (unsigned long long)dev->driver_features);
			expect_refused(late[i].what, v, late[i].needle);
		}
	}
}

static void test_queue_registers(void)
{
	static const struct {
		uint32_t reg;
		const char *name;
	} regs[] = {
		{ VIRTIO_MMIO_QUEUE_NUM, "QueueNum" },
		{ VIRTIO_MMIO_QUEUE_DESC_LOW, "QueueDescLow" },
		{ VIRTIO_MMIO_QUEUE_DESC_HIGH, "QueueDescHigh" },
		{ VIRTIO_MMIO_QUEUE_AVAIL_LOW, "QueueAvailLow" },
		{ VIRTIO_MMIO_QUEUE_AVAIL_HIGH, "QueueAvailHigh" },
		{ VIRTIO_MMIO_QUEUE_USED_LOW, "QueueUsedLow" },
		{ VIRTIO_MMIO_QUEUE_USED_HIGH, "QueueUsedHigh" },
		{ VIRTIO_MMIO_QUEUE_READY, "QueueReady=1" },
	};
	char what[128];
	uint64_t v;

	/* after the queue is ready (before DRIVER_OK) */
	fresh_device();
	driver_init(TO_QUEUES);
	wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		struct vq saved = dev->vqs[1];

		v = dev->violations;
		irqs();
		wr(regs[i].reg, regs[i].reg == VIRTIO_MMIO_QUEUE_READY ? 1 : 0x40);
		snprintf(what, sizeof(what), "%s on a ready queue", regs[i].name);
		CHECK(dev->vqs[1].ready && dev->vqs[1].num == saved.num && dev->vqs[1].desc_gpa == saved.desc_gpa &&
		      dev->vqs[1].avail_gpa == saved.avail_gpa && dev->vqs[1].used_gpa == saved.used_gpa,
		      "%s: the queue is unchanged", what);
		expect_refused(what, v, "ready");
	}
	/* QueueReady=0 is the driver's "stop using the queue" (4.2.2.2): no
	 * violation; test_spec_queue_stop has the rest. */
	v = dev->violations;
	irqs();
	wr(VIRTIO_MMIO_QUEUE_READY, 0);
	CHECK(!dev->vqs[1].ready && rd(VIRTIO_MMIO_QUEUE_READY) == 0 && dev->violations == v && irqs() == 0,
	      "QueueReady=0 on a ready queue: stopped, reads back 0, not a violation (virtio 1.2, 4.2.2.2)");

	/* after DRIVER_OK, on a queue the driver never set up */
	driver_init(TO_FEATURES_OK);
	program_queue(0, NUM);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
	CHECK(dev->vqs[0].ready && !dev->vqs[1].ready && (rd(VIRTIO_MMIO_STATUS) & S_DOK) && !dev->needs_reset,
	      "DRIVER_OK with queue 1 never set up");
	wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		v = dev->violations;
		irqs();
		wr(regs[i].reg, regs[i].reg == VIRTIO_MMIO_QUEUE_READY ? 1 : 0x40);
		snprintf(what, sizeof(what), "%s after DRIVER_OK", regs[i].name);
		CHECK(!dev->vqs[1].ready && dev->vqs[1].num == 0 && dev->vqs[1].desc_gpa == 0 &&
		      dev->vqs[1].avail_gpa == 0 && dev->vqs[1].used_gpa == 0,
		      "%s: the queue is unchanged", what);
		expect_refused(what, v, "DRIVER_OK");
	}

	/* an out-of-range selector is ignored, as before: no queue to harm */
	driver_init(TO_FEATURES_OK);
	wr(VIRTIO_MMIO_QUEUE_SEL, 7);
	v = dev->violations;
	wr(VIRTIO_MMIO_QUEUE_NUM, 8);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	CHECK(rd(VIRTIO_MMIO_QUEUE_READY) == 0 && dev->violations == v, "queue 7 (none): writes ignored");
}

/* A ready queue that the guest breaks through its ring, not its registers. */
static void break_tx_ring(void)
{
	struct vring vr = ring_of(1);

	vr.desc[0] = (struct vring_desc){ .addr = BUF_GPA, .len = 4, .flags = VRING_DESC_F_NEXT, .next = NUM + 3 };
	vr.avail->ring[0] = 0;
	__atomic_store_n(&vr.avail->idx, 1, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
}

static void test_broken_queue(void)
{
	uint64_t v, e;

	/* a queue refused at QueueReady (size 3) */
	fresh_device();
	driver_init(TO_FEATURES_OK);
	program_queue(1, 3);
	v = dev->violations;
	irqs();
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	CHECK(!dev->vqs[1].ready && dev->vqs[1].broken && rd(VIRTIO_MMIO_QUEUE_READY) == 0,
	      "a ring of size 3: QueueReady refused");
	expect_refused("QueueReady with a ring of size 3", v, "power of two");
	for (int k = 0; k < 2; k++) {
		v = dev->violations;
		irqs();
		wr(VIRTIO_MMIO_QUEUE_NUM, NUM);
		CHECK(dev->vqs[1].num == 3, "fixing the size of a broken queue: refused (num stays 3)");
		expect_refused("QueueNum on a broken queue", v, "broken");
		v = dev->violations;
		irqs();
		wr(VIRTIO_MMIO_QUEUE_READY, 1);
		CHECK(!dev->vqs[1].ready && dev->vqs[1].broken, "QueueReady again on the broken queue: still refused");
		expect_refused("QueueReady on a broken queue", v, "broken");
	}

	/* a live queue broken by a hostile chain: the ring path, then revival attempts */
	driver_init(TO_DRIVER_OK);
	v = dev->violations;
	e = dev->errors;
	irqs();
	break_tx_ring();
	CHECK(dev->vqs[1].broken && dev->errors == e + 1 && dev->violations == v && irqs() == 1 &&
	      (rd(VIRTIO_MMIO_STATUS) & S_RESET),
	      "a hostile chain: queue broken, one device error (not a register violation), NEEDS_RESET");
	CHECK(strstr(dev->last_error, "next index") != NULL, "its line: \"%s\"", dev->last_error);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, rd(VIRTIO_MMIO_INTERRUPT_STATUS));
	wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	for (int k = 0; k < 2; k++) {
		v = dev->violations;
		wr(VIRTIO_MMIO_QUEUE_READY, 0);
		CHECK(dev->violations == v && irqs() == 0 && dev->vqs[1].broken,
		      "QueueReady=0 on the broken live queue: allowed (4.2.2.2), no violation, still broken");
		v = dev->violations;
		wr(VIRTIO_MMIO_QUEUE_READY, 1);
		expect_refused("QueueReady=1 on the broken live queue", v, "DRIVER_OK");
		CHECK(dev->vqs[1].broken, "the queue is still broken");
	}

	/* a chain published before DRIVER_OK waits for it (2.1.2), then breaks the queue */
	driver_init(TO_QUEUES);
	irqs();
	break_tx_ring();     /* held until DRIVER_OK (2.1.2): not walked yet */
	CHECK(!dev->vqs[1].broken && !dev->needs_reset && irqs() == 0,
	      "a hostile chain and a notify before DRIVER_OK: not walked, nothing broken");
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
	CHECK(dev->vqs[1].broken && dev->needs_reset && irqs() == 1,
	      "DRIVER_OK passes the early notify on: the chain is walked and breaks the queue");
	wr(VIRTIO_MMIO_INTERRUPT_ACK, rd(VIRTIO_MMIO_INTERRUPT_STATUS));
	irqs();
	wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	{
		v = dev->violations;
		wr(VIRTIO_MMIO_QUEUE_READY, 0);
		CHECK(dev->violations == v && dev->vqs[1].broken,
		      "QueueReady=0 on a broken queue after DRIVER_OK: no violation, still broken");
		v = dev->violations;
		wr(VIRTIO_MMIO_QUEUE_READY, 1);
		expect_refused("QueueReady=1 on the queue the replayed notify broke", v, "DRIVER_OK");
		CHECK(dev->vqs[1].broken, "the queue is still broken");
	}
}

static void test_reset(void)
{
	uint64_t v, e;

	fresh_device();
	driver_init(TO_DRIVER);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_DOK);            /* a violation */
	driver_init(TO_FEATURES_OK);
	program_queue(1, 3);
	wr(VIRTIO_MMIO_QUEUE_READY, 1);                             /* a refused ring */
	v = dev->violations;
	e = dev->errors;
	CHECK(v == 2 && e == 2 && dev->needs_reset, "two violations before the reset");

	wr(VIRTIO_MMIO_STATUS, 0);
	CHECK(rd(VIRTIO_MMIO_STATUS) == 0 && rd(VIRTIO_MMIO_INTERRUPT_STATUS) == 0 && !dev->needs_reset &&
	      !dev->vqs[1].broken && !dev->vqs[1].ready && dev->driver_features == 0,
	      "a reset clears status, NEEDS_RESET, interrupt status, queues and features");
	CHECK(dev->violations == v && dev->errors == e && strstr(dev->error, "out of order"),
	      "a reset does not clear the counts or the first line (\"%s\")", dev->error);
	irqs();
	driver_init(TO_DRIVER_OK);
	CHECK(rd(VIRTIO_MMIO_STATUS) == (S_ACK | S_DRV | S_FOK | S_DOK) && dev->vqs[0].ready && dev->vqs[1].ready &&
	      !dev->vqs[1].broken && dev->violations == v && irqs() == 0,
	      "after the reset the full sequence works again, with no new violation");

	/* the broken live queue, too */
	break_tx_ring();
	CHECK(dev->vqs[1].broken, "queue 1 broken by a hostile chain");
	driver_init(TO_DRIVER_OK);
	CHECK(dev->vqs[1].ready && !dev->vqs[1].broken && !dev->needs_reset, "only a reset revived it");
}

/* ---- the interrupt line: a level (virtio 1.2, 4.2.3.4) ---- */

/* An event as a device path makes one: under the transport's lock. */
static void device_event(void)
{
	pthread_mutex_lock(&dev->lock);
	virtio_mmio_signal_used(dev);
	pthread_mutex_unlock(&dev->lock);
}

static void device_error(void)
{
	pthread_mutex_lock(&dev->lock);
	virtio_mmio_fail(dev, "a test's broken ring");
	pthread_mutex_unlock(&dev->lock);
}

/* The line is what InterruptStatus says, and the host heard exactly the
 * calls in `trace` since the last clear, none repeating a level. */
static void expect_line(const char *what, const char *trace, uint32_t isr)
{
	CHECK(rd(VIRTIO_MMIO_INTERRUPT_STATUS) == isr && lines.level[dev->gsi] == (isr != 0),
	      "%s: InterruptStatus 0x%x, line %s", what, rd(VIRTIO_MMIO_INTERRUPT_STATUS),
	      lines.level[dev->gsi] ? "high" : "low");
	CHECK(!strcmp(lines.trace, trace) && lines.repeats == 0 && lines.bad_gsi == 0,
	      "%s: the host heard \"%s\" (want \"%s\"), no repeated level", what, lines.trace, trace);
	CHECK(dev->interrupts == lines.rises[dev->gsi], "%s: interrupts %llu = rises %llu", what,
	      (unsigned long long)dev->interrupts, (unsigned long long)lines.rises[dev->gsi]);
}

static void test_interrupt_line(void)
{
	fresh_device();
	driver_init(TO_DRIVER_OK);
	irq_line_log_clear_trace(&lines);
	expect_line("a driven device, no event yet", "", 0);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, 0);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	expect_line("an InterruptACK with nothing set (the stub's ACK before it sleeps)", "", 0);

	device_event();
	expect_line("an event with InterruptStatus 0: the line rises", "+", VIRTIO_MMIO_INT_VRING);
	device_event();
	expect_line("a second event while it is set: no new rise", "+", VIRTIO_MMIO_INT_VRING);
	device_error();
	expect_line("a configuration change on top: still no new rise", "+",
		    VIRTIO_MMIO_INT_VRING | VIRTIO_MMIO_INT_CONFIG);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	expect_line("a partial InterruptACK: one bit left, the line stays high", "+", VIRTIO_MMIO_INT_CONFIG);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	expect_line("acknowledging a bit that is not set changes nothing", "+", VIRTIO_MMIO_INT_CONFIG);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_CONFIG);
	expect_line("the InterruptACK of the last bit: the line falls", "+-", 0);
	device_event();
	expect_line("the next event after the ACK: a fresh rise", "+-+", VIRTIO_MMIO_INT_VRING);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, 0xffffffffu);
	expect_line("an InterruptACK of every bit", "+-+-", 0);

	device_event();
	wr(VIRTIO_MMIO_STATUS, 0);
	expect_line("a reset with the line high: it falls", "+-+-+-", 0);
	wr(VIRTIO_MMIO_STATUS, 0);
	expect_line("a reset with the line low: nothing to tell", "+-+-+-", 0);

	/* The transport's own events hold the line the same way: two refused
	 * writes, unacknowledged, are two violations and one rise. */
	driver_init(TO_DRIVER_OK);
	irq_line_log_clear_trace(&lines);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_DOK);              /* a violation: CONFIG */
	expect_line("a violation on a quiet line: it rises", "+", VIRTIO_MMIO_INT_CONFIG);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_DOK);
	expect_line("another while unacknowledged: counted, but no new rise", "+", VIRTIO_MMIO_INT_CONFIG);
	CHECK(dev->violations == 2, "both violations counted (%llu)", (unsigned long long)dev->violations);
	wr(VIRTIO_MMIO_STATUS, 0);
	expect_line("the reset lowers it", "+-", 0);
}

/* ---- the console through the same register file ---- */

static int drain_pipe(uint8_t *out, size_t max)
{
	ssize_t n = read(out_pipe[0], out, max);

	return n < 0 ? 0 : (int)n;
}

static void test_console_output(void)
{
	static const char part1[] = "lguest-kvm console: ";
	static const uint8_t part2[] = { 0x00, 0xff, '\n', 0x7f, 0x1b, '[', 'm', 0x80, 0x00 };
	uint8_t expect[sizeof(part1) - 1 + sizeof(part2)];
	uint8_t got[256];
	struct vring vr;
	int n;

	fresh_device();
	driver_init(TO_DRIVER_OK);
	drain_pipe(got, sizeof(got));
	vr = ring_of(1);

	/* head 2 -> 5 -> 6: two readable parts, then a writable buffer the
	 * console must not print */
	memcpy(ram.host + BUF_GPA, part1, sizeof(part1) - 1);
	memcpy(ram.host + BUF_GPA + 0x100, part2, sizeof(part2));
	memset(ram.host + BUF_GPA + 0x200, 'X', 16);
	vr.desc[2] = (struct vring_desc){ .addr = BUF_GPA, .len = sizeof(part1) - 1, .flags = VRING_DESC_F_NEXT,
					  .next = 5 };
	vr.desc[5] = (struct vring_desc){ .addr = BUF_GPA + 0x100, .len = sizeof(part2), .flags = VRING_DESC_F_NEXT,
					  .next = 6 };
	vr.desc[6] = (struct vring_desc){ .addr = BUF_GPA + 0x200, .len = 16, .flags = VRING_DESC_F_WRITE };
	vr.avail->ring[0] = 2;
	__atomic_store_n(&vr.avail->idx, 1, __ATOMIC_RELEASE);
	irqs();
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);

	memcpy(expect, part1, sizeof(part1) - 1);
	memcpy(expect + sizeof(part1) - 1, part2, sizeof(part2));
	n = drain_pipe(got, sizeof(got));
	CHECK(n == (int)sizeof(expect) && !memcmp(got, expect, sizeof(expect)),
	      "the chain comes out of the output pipe byte-exact (%d of %zu bytes)", n, sizeof(expect));
	CHECK(con->bytes_out == sizeof(expect), "console_bytes_out %llu", (unsigned long long)con->bytes_out);
	CHECK(vr.used->idx == 1 && vr.used->ring[0].id == 2 && vr.used->ring[0].len == 0,
	      "used ring: head 2, length 0 (the console writes nothing)");
	CHECK(irqs() == 1 && (rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_VRING),
	      "one used-buffer interrupt (VRING bit)");
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);

	/* a second chain after the first, interrupts suppressed by the driver */
	vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	vr.desc[0] = (struct vring_desc){ .addr = BUF_GPA + 0x300, .len = 3 };
	memcpy(ram.host + BUF_GPA + 0x300, "ok\n", 3);
	vr.avail->ring[1] = 0;
	__atomic_store_n(&vr.avail->idx, 2, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	n = drain_pipe(got, sizeof(got));
	CHECK(n == 3 && !memcmp(got, "ok\n", 3) && vr.used->idx == 2 && irqs() == 0,
	      "a second chain: \"ok\\n\", used idx 2, no interrupt (NO_INTERRUPT)");

	/* an indirect chain: the console never offered INDIRECT_DESC, so it is
	 * a broken ring and nothing of it is printed */
	struct vring_desc *table = (struct vring_desc *)(ram.host + BUF_GPA + 0x800);
	table[0] = (struct vring_desc){ .addr = BUF_GPA + 0x300, .len = 3 };
	vr.desc[1] = (struct vring_desc){ .addr = BUF_GPA + 0x800, .len = 16, .flags = VRING_DESC_F_INDIRECT };
	vr.avail->ring[2] = 1;
	__atomic_store_n(&vr.avail->idx, 3, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	n = drain_pipe(got, sizeof(got));
	CHECK(n == 0 && dev->vqs[1].broken && dev->needs_reset && strstr(dev->last_error, "INDIRECT"),
	      "an indirect chain on the console: refused, nothing printed (\"%s\")", dev->last_error);

	/* the driver that forced INDIRECT_DESC through an unoffered feature
	 * gets no indirect walk either: its queue never becomes ready */
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, S_ACK);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV);
	write_features(1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_RING_F_INDIRECT_DESC);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	for (unsigned q = 0; q < 2; q++) {
		program_queue(q, NUM);
		wr(VIRTIO_MMIO_QUEUE_READY, 1);
	}
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
	memset(ram.host + Q1_GPA, 0, 0x2000);
	vr = ring_of(1);
	vr.desc[1] = (struct vring_desc){ .addr = BUF_GPA + 0x800, .len = 16, .flags = VRING_DESC_F_INDIRECT };
	vr.avail->ring[0] = 1;
	__atomic_store_n(&vr.avail->idx, 1, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	n = drain_pipe(got, sizeof(got));
	CHECK(n == 0 && !dev->vqs[1].indirect_ok && !dev->vqs[1].ready,
	      "an unoffered INDIRECT_DESC forced through: no queue, no indirect walk, nothing printed (%d bytes)", n);
}

/* A notify covering many large chains is written out in rounds of about
 * 64 KiB (the weight), so that the vCPU thread can look at the stop flag in
 * between; nothing is lost or reordered, and the last round ends it. */
static void test_console_output_rounds(void)
{
	enum { CHAINS = 8, CHAIN = 16 << 10 };
	static uint8_t got[CHAINS * CHAIN + 1];
	struct vring vr;
	size_t total = 0;
	unsigned rounds = 0;
	int n;

	fresh_device();
	driver_init(TO_DRIVER_OK);
	drain_pipe(got, sizeof(got));
	vr = ring_of(1);
	for (unsigned i = 0; i < CHAINS; i++) {
		memset(ram.host + BUF_GPA + (uint64_t)i * CHAIN, 'a' + i, CHAIN);
		vr.desc[i] = (struct vring_desc){ .addr = BUF_GPA + (uint64_t)i * CHAIN, .len = CHAIN };
		vr.avail->ring[i] = i;
	}
	__atomic_store_n(&vr.avail->idx, CHAINS, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	n = drain_pipe(got, sizeof(got));
	CHECK(n == 4 * CHAIN && vr.used->idx == 4 && console_tx_continuing(con),
	      "one notify writes one 64 KiB round (%d bytes, used idx %u) and leaves the rest for later", n,
	      vr.used->idx);
	total = n > 0 ? (size_t)n : 0;
	while (console_tx_continuing(con) && rounds < 10) {
		console_tx_continue(con);
		rounds++;
		n = drain_pipe(got + total, sizeof(got) - total);
		total += n > 0 ? (size_t)n : 0;
	}
	CHECK(rounds == 1 && !console_tx_continuing(con) && con->tx_continuations == 1,
	      "one more round finishes it (%u rounds, %llu counted)", rounds,
	      (unsigned long long)con->tx_continuations);
	CHECK(total == CHAINS * CHAIN && vr.used->idx == CHAINS, "all %u chains written (%zu bytes), all used",
	      CHAINS, total);
	n = 1;
	for (unsigned i = 0; i < CHAINS * CHAIN && n; i++)
		n = got[i] == 'a' + i / CHAIN;
	CHECK(n, "in order, byte-exact");
	CHECK(rd(VIRTIO_MMIO_STATUS) == (VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
					  VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK),
	      "no device error on the way");
}

/* The console over packed rings: the driver asks for RING_PACKED, the
 * transport sets vq->packed at QueueReady, and console.c, which knows
 * nothing of layouts, prints a chain, returns it as a used descriptor and
 * interrupts as the driver's event structure says; a hostile ID breaks the
 * queue like any ring rule; a reset drops the layout with the features. */
static void test_console_packed(void)
{
	const uint16_t avail = 1u << VRING_PACKED_DESC_F_AVAIL, used = 1u << VRING_PACKED_DESC_F_USED;
	struct vring_packed_desc *ring = (struct vring_packed_desc *)(ram.host + Q1_GPA);
	struct vring_packed_desc_event *drv_ev = (struct vring_packed_desc_event *)(ram.host + Q1_GPA + 0x800);
	uint8_t got[64];
	int n;

	fresh_device();
	wr(VIRTIO_MMIO_STATUS, 0);
	wr(VIRTIO_MMIO_STATUS, S_ACK);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV);
	write_features(1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_F_RING_PACKED);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	CHECK((rd(VIRTIO_MMIO_STATUS) & S_FOK) && virtio_mmio_has_feature(dev, VIRTIO_F_RING_PACKED),
	      "RING_PACKED negotiated: FEATURES_OK sticks");
	for (unsigned q = 0; q < 2; q++) {
		uint32_t base = q ? Q1_GPA : Q0_GPA;

		/* descriptor ring, driver area, device area; size 6: no power of two */
		wr(VIRTIO_MMIO_QUEUE_SEL, q);
		wr(VIRTIO_MMIO_QUEUE_NUM, 6);
		wr(VIRTIO_MMIO_QUEUE_DESC_LOW, base);
		wr(VIRTIO_MMIO_QUEUE_AVAIL_LOW, base + 0x800);
		wr(VIRTIO_MMIO_QUEUE_USED_LOW, base + 0x810);
		wr(VIRTIO_MMIO_QUEUE_READY, 1);
	}
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
	CHECK(dev->vqs[0].packed && dev->vqs[1].packed && dev->vqs[1].ready &&
	      dev->vqs[1].layout == &vq_layout_packed && dev->vqs[1].pk.desc == ring && dev->violations == 0,
	      "both queues ready on the packed layout, size 6 accepted");
	drain_pipe(got, sizeof(got));

	/* slots 0-1, ID 3: "packed " then "ring\n"; the head's flags last */
	memcpy(ram.host + BUF_GPA, "packed ", 7);
	memcpy(ram.host + BUF_GPA + 0x100, "ring\n", 5);
	ring[1] = (struct vring_packed_desc){ .addr = BUF_GPA + 0x100, .len = 5, .id = 3, .flags = avail };
	ring[0] = (struct vring_packed_desc){ .addr = BUF_GPA, .len = 7, .id = 3 };
	__atomic_store_n(&ring[0].flags, (uint16_t)(avail | VRING_DESC_F_NEXT), __ATOMIC_RELEASE);
	irqs();
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	n = drain_pipe(got, sizeof(got));
	CHECK(n == 12 && !memcmp(got, "packed ring\n", 12), "the chain comes out of the pipe (%d bytes)", n);
	CHECK(ring[0].id == 3 && ring[0].flags == (avail | used) && irqs() == 1,
	      "used descriptor at slot 0: ID 3, AVAIL|USED (flags 0x%x), one interrupt", ring[0].flags);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);

	/* the driver turns interrupts off in its event structure */
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	memcpy(ram.host + BUF_GPA + 0x200, "ok\n", 3);
	ring[2] = (struct vring_packed_desc){ .addr = BUF_GPA + 0x200, .len = 3, .id = 0 };
	__atomic_store_n(&ring[2].flags, avail, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	n = drain_pipe(got, sizeof(got));
	CHECK(n == 3 && ring[2].id == 0 && ring[2].flags == (avail | used) && irqs() == 0,
	      "a second chain at slot 2: printed, used at slot 2, no interrupt (DISABLE)");

	/* a buffer ID the ring cannot hold */
	ring[3] = (struct vring_packed_desc){ .addr = BUF_GPA + 0x200, .len = 3, .id = 9 };
	__atomic_store_n(&ring[3].flags, avail, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	n = drain_pipe(got, sizeof(got));
	CHECK(n == 0 && dev->vqs[1].broken && dev->vqs[1].violation == VQV_ID_RANGE && dev->needs_reset &&
	      strstr(dev->last_error, "buffer ID 9"), "ID 9 in a ring of 6: broken, nothing printed (\"%s\")",
	      dev->last_error);

	wr(VIRTIO_MMIO_STATUS, 0);
	CHECK(!dev->vqs[1].packed && !dev->vqs[1].ready && !dev->vqs[1].broken && dev->vqs[1].pk.desc == NULL,
	      "a reset drops the packed layout with the features");
}

/* Input: stdin (here a pipe) into a buffer the driver posted on the
 * receiveq, by the console's own input thread.  Last test: that thread
 * keeps using the device, so nothing may re-initialise it afterwards. */
static void test_console_input(void)
{
	static const char typed[] = "hello\n";
	struct vring vr;
	int in_pipe[2];
	uint16_t used = 0;

	fresh_device();
	driver_init(TO_DRIVER_OK);
	vr = ring_of(0);
	vr.desc[3] = (struct vring_desc){ .addr = BUF_GPA + 0x1000, .len = 64, .flags = VRING_DESC_F_WRITE };
	vr.avail->ring[0] = 3;
	__atomic_store_n(&vr.avail->idx, 1, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 0);
	CHECK(vr.used->idx == 0, "a receive buffer with no input pending stays posted");
	irqs();
	if (pipe2(in_pipe, O_CLOEXEC) < 0 || console_start_input(con, in_pipe[0]) < 0) {
		CHECK(0, "cannot start the console input thread");
		return;
	}
	if (write(in_pipe[1], typed, sizeof(typed) - 1) != (ssize_t)(sizeof(typed) - 1))
		CHECK(0, "cannot write the input pipe");
	for (int ms = 0; ms < 5000 && !used; ms++) {
		used = __atomic_load_n(&vr.used->idx, __ATOMIC_ACQUIRE);
		if (!used)
			usleep(1000);
	}
	/* the thread publishes the used entry, then signals, all under the
	 * lock: taking it once means it is done */
	pthread_mutex_lock(&dev->lock);
	pthread_mutex_unlock(&dev->lock);
	CHECK(used == 1 && vr.used->ring[0].id == 3 && vr.used->ring[0].len == sizeof(typed) - 1 &&
	      !memcmp(ram.host + BUF_GPA + 0x1000, typed, sizeof(typed) - 1),
	      "typed input lands in the posted buffer byte-exact (used idx %u, len %u)", used, vr.used->ring[0].len);
	CHECK(con->bytes_in == sizeof(typed) - 1 && irqs() == 1, "console_bytes_in %llu, one used-buffer interrupt",
	      (unsigned long long)con->bytes_in);
	/* EOF ends the input thread; console_close keeps it off guest memory
	 * in case it is still between reads. */
	console_close(con);
	close(in_pipe[1]);
}

/* ---- what the device may do in each device status (virtio 1.2) ---- */

/* One console output chain "hi\n" at head 0 of queue 1, published (avail idx
 * 1) and notified.  Returns the ring. */
static struct vring publish_hello(void)
{
	struct vring vr = ring_of(1);

	memcpy(ram.host + BUF_GPA, "hi\n", 3);
	vr.desc[0] = (struct vring_desc){ .addr = BUF_GPA, .len = 3 };
	vr.avail->ring[0] = 0;
	__atomic_store_n(&vr.avail->idx, 1, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	return vr;
}

/*
 * 2.1.2: "The device MUST NOT consume buffers or send any used buffer
 * notifications to the driver before DRIVER_OK."  A queue is ready from
 * QueueReady = 1 on, but held until DRIVER_OK: a notify, and a device
 * thread's own look (the ioeventfd path: vq_pop_avail), take nothing and
 * raise nothing.  DRIVER_OK (3.1.1 step 8, "the device is live") passes the
 * notify on, so a queue the driver populated early (step 7) is served; a
 * queue nobody notified is left alone (no notify the guest never sent).
 */
static void test_spec_nothing_before_driver_ok(void)
{
	uint8_t got[64];
	struct vring vr;
	int n;

	fresh_device();
	driver_init(TO_QUEUES);
	drain_pipe(got, sizeof(got));
	irqs();
	vr = publish_hello();
	n = drain_pipe(got, sizeof(got));
	CHECK(vr.used->idx == 0 && n == 0 && con->bytes_out == 0 && irqs() == 0 &&
	      !(rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_VRING),
	      "2.1.2: a notify before DRIVER_OK consumes nothing (used idx %u, %d bytes out) and raises nothing",
	      vr.used->idx, n);
	pthread_mutex_lock(&dev->lock);
	CHECK(dev->vqs[1].held && vq_pop_avail(&dev->vqs[1], &con->rx_chain) == 0 && !vq_has_avail(&dev->vqs[1]),
	      "2.1.2: a device thread's own look at a held queue finds nothing (the ioeventfd path)");
	pthread_mutex_unlock(&dev->lock);
	CHECK(rd(VIRTIO_MMIO_QUEUE_READY) == 1 && dev->violations == 0,
	      "the held queue still reads ready: holding it is the device's business");
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
	n = drain_pipe(got, sizeof(got));
	CHECK(!dev->vqs[1].held && vr.used->idx == 1 && n == 3 && !memcmp(got, "hi\n", 3) && irqs() == 1,
	      "3.1.1: at DRIVER_OK the early chain is served (used idx %u, %d bytes) and signalled", vr.used->idx, n);
	wr(VIRTIO_MMIO_INTERRUPT_ACK, rd(VIRTIO_MMIO_INTERRUPT_STATUS));

	/* published early but never notified: DRIVER_OK invents no notify */
	driver_init(TO_QUEUES);
	vr = ring_of(1);
	memcpy(ram.host + BUF_GPA, "no\n", 3);
	vr.desc[0] = (struct vring_desc){ .addr = BUF_GPA, .len = 3 };
	vr.avail->ring[0] = 0;
	__atomic_store_n(&vr.avail->idx, 1, __ATOMIC_RELEASE);
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
	CHECK(vr.used->idx == 0 && drain_pipe(got, sizeof(got)) == 0,
	      "DRIVER_OK without an early notify: nothing is walked until the driver notifies");
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	CHECK(vr.used->idx == 1 && drain_pipe(got, sizeof(got)) == 3, "its notify after DRIVER_OK is served");
	wr(VIRTIO_MMIO_INTERRUPT_ACK, rd(VIRTIO_MMIO_INTERRUPT_STATUS));
}

/*
 * 4.2.2.2: "To stop using the queue the driver MUST write zero (0x0) to
 * QueueReady and MUST read the value back" -- allowed at any status, Linux's
 * vm_del_vq does it after a reset.  4.2.2.1: "The device MUST NOT access
 * virtual queue contents when QueueReady is zero."
 */
static void test_spec_queue_stop(void)
{
	uint8_t got[64];
	struct vring vr;
	uint64_t v;

	fresh_device();
	driver_init(TO_DRIVER_OK);
	wr(VIRTIO_MMIO_STATUS, 0);
	irqs();
	v = dev->violations;
	for (unsigned q = 0; q < 2; q++) {
		wr(VIRTIO_MMIO_QUEUE_SEL, q);
		wr(VIRTIO_MMIO_QUEUE_READY, 0);
		CHECK(rd(VIRTIO_MMIO_QUEUE_READY) == 0, "4.2.2.2: queue %u: QueueReady=0 after a reset reads back 0", q);
	}
	CHECK(dev->violations == v && !dev->needs_reset && irqs() == 0,
	      "4.2.2.2: Linux's vm_del_vq after a reset is no violation (status 0x%x)", rd(VIRTIO_MMIO_STATUS));

	driver_init(TO_DRIVER_OK);
	drain_pipe(got, sizeof(got));
	irqs();
	v = dev->violations;
	wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	wr(VIRTIO_MMIO_QUEUE_READY, 0);
	CHECK(rd(VIRTIO_MMIO_QUEUE_READY) == 0 && dev->violations == v && !dev->needs_reset,
	      "4.2.2.2: a live queue stopped: reads back 0, no violation");
	CHECK(dev->vqs[1].num == NUM && dev->vqs[1].desc_gpa == gpa_of(ring_of(1).desc),
	      "the stopped queue's registers are kept");
	vr = publish_hello();
	CHECK(vr.used->idx == 0 && drain_pipe(got, sizeof(got)) == 0 && irqs() == 0 && con->bytes_out == 0,
	      "4.2.2.1: a stopped queue's ring is not touched: nothing consumed after a notify");
	v = dev->violations;
	wr(VIRTIO_MMIO_QUEUE_READY, 1);
	expect_refused("QueueReady=1 on a stopped queue after DRIVER_OK", v, "DRIVER_OK");
	CHECK(!dev->vqs[1].ready, "a stopped queue comes back only through a reset");
}

/*
 * Before FEATURES_OK the device refuses what needs settled features: queue
 * registers (3.1.1: queues are set up after FEATURES_OK; their ring layout
 * and event marks follow the features).  From FEATURES_OK on it refuses
 * feature writes (3.1.1 step 5: "the driver MUST NOT accept new feature bits
 * after this step"), and it does not set FEATURES_OK for features it did not
 * offer (2.2.2: it "MUST fail to set the FEATURES_OK device status bit").
 */
static void test_spec_features_ok(void)
{
	static const uint32_t queue_regs[] = {
		VIRTIO_MMIO_QUEUE_NUM, VIRTIO_MMIO_QUEUE_DESC_LOW, VIRTIO_MMIO_QUEUE_AVAIL_LOW,
		VIRTIO_MMIO_QUEUE_USED_LOW, VIRTIO_MMIO_QUEUE_READY,
	};
	uint64_t v, f;

	fresh_device();
	driver_init(TO_DRIVER);
	wr(VIRTIO_MMIO_QUEUE_SEL, 1);
	for (unsigned i = 0; i < sizeof(queue_regs) / sizeof(queue_regs[0]); i++) {
		v = dev->violations;
		irqs();
		wr(queue_regs[i], queue_regs[i] == VIRTIO_MMIO_QUEUE_READY ? 1 : 0x40);
		CHECK(!dev->vqs[1].ready && dev->vqs[1].num == 0 && dev->vqs[1].desc_gpa == 0 &&
		      dev->vqs[1].avail_gpa == 0 && dev->vqs[1].used_gpa == 0,
		      "3.1.1: queue register 0x%x before FEATURES_OK changes nothing", queue_regs[i]);
		expect_refused("a queue register before FEATURES_OK", v, "before FEATURES_OK");
	}

	driver_init(TO_FEATURES_OK);
	f = dev->driver_features;
	v = dev->violations;
	irqs();
	write_features(0);
	CHECK(dev->driver_features == f, "3.1.1: DriverFeatures after FEATURES_OK changes nothing");
	CHECK(dev->violations == v + 2, "3.1.1: both words refused and counted (%llu)",
	      (unsigned long long)(dev->violations - v));
	wr(VIRTIO_MMIO_INTERRUPT_ACK, rd(VIRTIO_MMIO_INTERRUPT_STATUS));

	driver_init(TO_DRIVER);
	write_features(split_features() | 1ull << VIRTIO_RING_F_EVENT_IDX);   /* never offered by the console */
	wr(VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	CHECK(!(rd(VIRTIO_MMIO_STATUS) & S_FOK), "2.2.2: FEATURES_OK not set for a feature the device never offered");
}

/*
 * After DEVICE_NEEDS_RESET: 2.1.2, "If DRIVER_OK is set, after it sets
 * DEVICE_NEEDS_RESET, the device MUST send a device configuration change
 * notification"; the bit stays until the driver resets the device (a status
 * write cannot clear it), the broken queue is never walked again, and the
 * reset (2.1.2: "initialize device status to 0 upon reset"; 4.2.2.1: "clear
 * all bits in InterruptStatus and ready bits in the QueueReady register for
 * all queues") clears all of it.
 */
static void test_spec_needs_reset(void)
{
	uint64_t e;
	uint32_t st;

	fresh_device();
	driver_init(TO_DRIVER_OK);
	irqs();
	e = dev->errors;
	break_tx_ring();
	CHECK((rd(VIRTIO_MMIO_STATUS) & S_RESET) && (rd(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG) &&
	      irqs() == 1, "2.1.2: NEEDS_RESET after DRIVER_OK comes with a configuration change notification");
	st = rd(VIRTIO_MMIO_STATUS);
	wr(VIRTIO_MMIO_STATUS, st & ~S_RESET);
	CHECK(rd(VIRTIO_MMIO_STATUS) & S_RESET, "2.1.2: writing the status back without the bit leaves NEEDS_RESET set");
	wr(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	CHECK(dev->errors == e + 1 && dev->vqs[1].broken,
	      "the broken queue is not walked again: still one error (%llu)", (unsigned long long)(dev->errors - e));
	wr(VIRTIO_MMIO_STATUS, 0);
	CHECK(rd(VIRTIO_MMIO_STATUS) == 0 && rd(VIRTIO_MMIO_INTERRUPT_STATUS) == 0 && !dev->vqs[0].ready &&
	      !dev->vqs[1].ready && !dev->vqs[1].broken && !lines.level[dev->gsi],
	      "2.1.2, 4.2.2.1: the reset: status 0, InterruptStatus 0, every QueueReady 0, the line low");
}

int main(void)
{
	if (gmem_map(&ram, MEM_SIZE) < 0) {
		printf("FAIL cannot map fake guest RAM\n");
		return 1;
	}
	/* Room for a whole multi-round notify (test_console_output_rounds):
	 * the console's writes block, as stdout's would. */
	if (pipe2(out_pipe, O_CLOEXEC) < 0 || fcntl(out_pipe[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(out_pipe[1], F_SETPIPE_SZ, 1 << 20) < 0) {
		printf("FAIL cannot make the output pipe\n");
		return 1;
	}
	con = calloc(1, sizeof(*con));
	if (!con)
		return 1;
	host = irq_line_log_host(&ram, &lines);
	dev = NULL;
	test_identity();
	test_init_in_order();
	test_status_order();
	test_features();
	test_queue_registers();
	test_broken_queue();
	test_reset();
	test_interrupt_line();
	test_console_output();
	test_console_output_rounds();
	test_console_packed();
	test_console_input();
	test_spec_nothing_before_driver_ok();
	test_spec_queue_stop();
	test_spec_features_ok();
	test_spec_needs_reset();
	/* con, its lock and the fake RAM stay: the detached input thread may
	 * still be on its way out, and the process ends here anyway. */
	return check_summary();
}
