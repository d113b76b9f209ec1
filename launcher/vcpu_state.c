/*
 * vcpu_state.c -- where the vCPU stood when a run was stopped from outside.
 *
 * Why: a guest that stops making progress with the in-kernel irqchip leaves
 * no exit behind -- a halted vCPU waits inside KVM, a spinning one never
 * leaves the guest -- so a run that ends at --max-seconds or on a signal
 * would otherwise say only that it ended.  A Linux boot that hung in early
 * boot (docs/linux-guest.md) needs to know: was the vCPU halted or running,
 * at which rip, with interrupts on, and what did its local APIC and the
 * IOAPIC hold (a timer armed or not, an interrupt requested, in service,
 * or waiting for an EOI).
 *
 * The flow: run_vcpu calls vcpu_state_describe() on the vCPU thread right
 * after the stop flag took it out of KVM_RUN; the text goes into the run's
 * state and finish() prints it above the line that says why the run ended.
 * Register offsets are the local APIC's (Intel SDM vol. 3, table 11-1) and
 * the IOAPIC redirection entry's bits (82093AA data sheet, 3.2.4).
 */
#include "vcpu_state.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#define APIC_SVR     0x0f0
#define APIC_ISR     0x100
#define APIC_TMR     0x180
#define APIC_IRR     0x200
#define APIC_LVTT    0x320
#define APIC_TMICT   0x380
#define APIC_TMCCT   0x390
#define APIC_SVR_ENABLE   (1u << 8)
#define LVT_MASKED        (1u << 16)
#define MSR_TSC_DEADLINE  0x6e0

static uint32_t apic_reg(const struct kvm_lapic_state *l, unsigned off)
{
	uint32_t v;

	memcpy(&v, l->regs + off, 4);
	return v;
}

/* The highest vector set in a 256-bit APIC register (ISR, TMR, IRR): eight
 * 32-bit words 16 bytes apart; -1 if none. */
static int apic_highest(const struct kvm_lapic_state *l, unsigned base)
{
	for (int w = 7; w >= 0; w--) {
		uint32_t v = apic_reg(l, base + 16 * (unsigned)w);

		if (v)
			return w * 32 + 31 - __builtin_clz(v);
	}
	return -1;
}

static const char *timer_mode(uint32_t lvtt)
{
	static const char *const modes[] = { "one-shot", "periodic", "tsc-deadline", "reserved" };

	return modes[(lvtt >> 17) & 3];
}

/* Append to buf at *at, never past size. */
#define PUT(...) do { if (*at < size) *at += (size_t)snprintf(buf + *at, size - *at, __VA_ARGS__); } while (0)

static void describe_lapic(int vcpu_fd, char *buf, size_t size, size_t *at)
{
	struct kvm_lapic_state l;
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e;
	} msr = { .hdr.nmsrs = 1, .e.index = MSR_TSC_DEADLINE };
	uint32_t lvtt;

	if (ioctl(vcpu_fd, KVM_GET_LAPIC, &l) < 0) {
		PUT("; local APIC unreadable");
		return;
	}
	lvtt = apic_reg(&l, APIC_LVTT);
	PUT("; local APIC %s, highest IRR %d ISR %d (TMR %d); timer %s%s vector %u initial %u current %u",
	    apic_reg(&l, APIC_SVR) & APIC_SVR_ENABLE ? "on" : "off (software-disabled)",
	    apic_highest(&l, APIC_IRR), apic_highest(&l, APIC_ISR), apic_highest(&l, APIC_TMR),
	    timer_mode(lvtt), lvtt & LVT_MASKED ? " masked" : "", lvtt & 0xff,
	    apic_reg(&l, APIC_TMICT), apic_reg(&l, APIC_TMCCT));
	if (((lvtt >> 17) & 3) == 2 && ioctl(vcpu_fd, KVM_GET_MSRS, &msr) == 1)
		PUT(" deadline 0x%llx", (unsigned long long)msr.e.data);
}

static void describe_ioapic(int vm_fd, const unsigned *gsis, unsigned n_gsis, char *buf, size_t size, size_t *at)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_IOAPIC };

	if (!n_gsis || ioctl(vm_fd, KVM_GET_IRQCHIP, &chip) < 0)
		return;
	for (unsigned i = 0; i < n_gsis; i++) {
		const struct kvm_ioapic_state *s = &chip.chip.ioapic;
		unsigned pin = gsis[i];

		if (pin >= KVM_IOAPIC_NUM_PINS)
			continue;
		PUT("; IOAPIC pin %u vector %u %s%s%s%s, line %s", pin, s->redirtbl[pin].fields.vector,
		    s->redirtbl[pin].fields.trig_mode ? "level" : "edge",
		    s->redirtbl[pin].fields.mask ? " masked" : "",
		    s->redirtbl[pin].fields.remote_irr ? " remote-IRR (awaiting EOI)" : "",
		    s->redirtbl[pin].fields.delivery_status ? " pending" : "",
		    s->irr & (1u << pin) ? "high" : "low");
	}
}

/* A guest-virtual address through the guest's 4-level page tables (Intel
 * SDM vol. 3, 4.5) to a host pointer to `len` bytes within one page; NULL
 * if unmapped or outside RAM.  Long mode only: that is where a kernel that
 * stopped making progress is. */
static const uint8_t *guest_virt(const struct guest_mem *gm, uint64_t cr3, uint64_t va, size_t len)
{
	uint64_t table = cr3 & 0x000ffffffffff000ull, entry = 0;
	static const uint64_t page_size[] = { 0, 1ull << 30, 1ull << 21, 1ull << 12 };

	if ((va & 4095) + len > 4096)
		return NULL;
	for (int level = 0; level < 4; level++) {
		unsigned shift = 39 - 9 * (unsigned)level;
		const uint8_t *p = gmem_ptr(gm, table + ((va >> shift) & 511) * 8, 8);

		if (!p)
			return NULL;
		memcpy(&entry, p, 8);
		if (!(entry & 1))
			return NULL;
		if (level == 3 || (level > 0 && (entry & 0x80))) {
			uint64_t size = level == 3 ? page_size[3] : page_size[level];
			uint64_t base = entry & 0x000ffffffffff000ull & ~(size - 1);

			return gmem_ptr(gm, base + (va & (size - 1)), len);
		}
		table = entry & 0x000ffffffffff000ull;
	}
	return NULL;
}

/* Up to `max` words from va on, while mapped: those that point into a
 * kernel's text (0xffffffff80000000 up), and after one that is followed by
 * the kernel's code selector, the RFLAGS of that interrupt frame
 * (pt_regs: ip, cs, flags).  Returns the last word read, which at the top
 * of Linux's interrupt stack is the interrupted task's stack pointer. */
static uint64_t scan_stack(const struct guest_mem *gm, uint64_t cr3, uint64_t va, unsigned max, unsigned *found,
			   char *buf, size_t size, size_t *at)
{
	uint64_t w = 0, prev = 0, prev2 = 0;

	for (unsigned n = 0; n < max && *found < 24; n++, va += 8) {
		const uint8_t *p = guest_virt(gm, cr3, va, 8);

		if (!p)
			break;
		prev2 = prev;
		prev = w;
		memcpy(&w, p, 8);
		if (prev == 0x10 && prev2 >= 0xffffffff80000000ull && prev2 < 0xffffffffff000000ull)
			PUT(" (flags 0x%llx)", (unsigned long long)w);
		if (w >= 0xffffffff80000000ull && w < 0xffffffffff000000ull) {
			PUT(" 0x%llx", (unsigned long long)w);
			(*found)++;
		}
	}
	return w;
}

/* A rough backtrace: the stack's words into kernel text; if the stack
 * ends (an unmapped page) in a pointer to another kernel stack -- Linux's
 * interrupt stack keeps the interrupted one's there -- that one's too. */
static void describe_stack(const struct guest_mem *gm, const struct kvm_regs *regs, const struct kvm_sregs *sregs,
			   char *buf, size_t size, size_t *at)
{
	unsigned found = 0;
	uint64_t last;

	if (!gm || !sregs->cs.l || regs->rsp < 0xffff800000000000ull)
		return;
	PUT("; stack words into kernel text:");
	last = scan_stack(gm, sregs->cr3, regs->rsp & ~7ull, 4 * 512, &found, buf, size, at);
	if (last >= 0xffff800000000000ull && last < 0xffffffff80000000ull && (last & 7) == 0) {
		PUT("; the stack below, at 0x%llx:", (unsigned long long)last);
		scan_stack(gm, sregs->cr3, last, 4 * 512, &found, buf, size, at);
	}
}

void vcpu_state_describe(int vm_fd, int vcpu_fd, const struct guest_mem *gm, const unsigned *gsis, unsigned n_gsis,
			 char *buf, size_t size)
{
	static const char *const mp_states[] = {
		"runnable", "uninitialized", "init-received", "halted", "sipi-received", "stopped",
	};
	struct kvm_mp_state mp;
	struct kvm_vcpu_events ev;
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	size_t n = 0, *at = &n;

	buf[0] = 0;
	if (ioctl(vcpu_fd, KVM_GET_REGS, &regs) < 0 || ioctl(vcpu_fd, KVM_GET_SREGS, &sregs) < 0) {
		PUT("the vCPU's registers were unreadable");
		return;
	}
	if (ioctl(vcpu_fd, KVM_GET_MP_STATE, &mp) < 0)
		mp.mp_state = ~0u;
	PUT("the vCPU was %s at rip 0x%llx (cs 0x%x, %s mode), interrupts %s",
	    mp.mp_state < sizeof(mp_states) / sizeof(mp_states[0]) ? mp_states[mp.mp_state] : "in an unknown state",
	    (unsigned long long)regs.rip, sregs.cs.selector,
	    sregs.cs.l ? "64-bit" : sregs.cr0 & 1 ? "protected" : "real",
	    regs.rflags & (1u << 9) ? "on" : "off");
	if (ioctl(vcpu_fd, KVM_GET_VCPU_EVENTS, &ev) == 0) {
		if (ev.interrupt.shadow)
			PUT(", in an interrupt shadow");
		if (ev.interrupt.injected)
			PUT(", vector %u being injected", ev.interrupt.nr);
		if (ev.exception.injected || ev.exception.pending)
			PUT(", exception %u pending", ev.exception.nr);
	}
	describe_lapic(vcpu_fd, buf, size, at);
	describe_ioapic(vm_fd, gsis, n_gsis, buf, size, at);
	describe_stack(gm, &regs, &sregs, buf, size, at);
}
