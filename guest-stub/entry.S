/*
 * entry.S -- the guest's whole CPL0 kernel.
 *
 * Why so small: under kvm_pvm every instruction at CPL0 is emulated (~0.6 us
 * each) while CPL3 code runs natively, so this file does only what needs
 * privilege and then drops to CPL3 for good:
 *
 *   PVH entry (32-bit, paging off, %ebx = hvm_start_info)
 *     -> long mode on static identity page tables (4 GiB, 2 MiB pages, U=1)
 *     -> IDT, TSS (with an I/O bitmap: kvm_pvm reads IOPL as 0 at CPL3)
 *     -> iretq to stub_main() at CPL3 with IF=1.
 *
 * From CPL3 the way back into CPL0 is an exception (kvm_pvm turns `int`
 * into #UD), so a service call is `ud2` with %ecx = LKVM_SVC_MAGIC and the
 * request in %eax.  The only service is "halt until an interrupt arrives,
 * unless one arrived since the caller looked" (%rdx = irq_seq seen).
 * Interrupts bump irq_seq (the APIC timer also timer_seq) and EOI the local APIC; faults report their
 * vector on the crash port and stop.
 */
#include "lguest_kvm_abi.h"

#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_UDATA 0x23
#define SEL_UCODE 0x2b
#define SEL_TSS   0x30
#define LAPIC     0xfee00000
#define SVC_MAGIC 0x4c4b564d

/* ---- PVH ELF note: tells the loader the 32-bit entry point ---- */
	.section .note.Xen, "a"
	.p2align 2
	.long 4                 /* namesz: "Xen\0" */
	.long 4                 /* descsz */
	.long 18                /* XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz "Xen"
	.long pvh_entry

	.section .text.boot, "ax"
	.code32
	.globl pvh_entry
pvh_entry:
	mov %ebx, %esi                  /* keep start_info */
	lgdt gdt_desc
	mov %cr4, %eax
	or $0x620, %eax                 /* PAE | OSFXSR | OSXMMEXCPT: SSE at CPL3 */
	mov %eax, %cr4
	mov $pml4, %eax
	mov %eax, %cr3
	mov $0xc0000080, %ecx           /* EFER.LME */
	rdmsr
	or $0x100, %eax
	wrmsr
	mov %cr0, %eax
	and $~0x4, %eax                 /* no x87 emulation (EM) */
	or $0x80000003, %eax            /* PG | MP | PE */
	mov %eax, %cr0
	ljmp $SEL_KCODE, $long_entry

	.code64
long_entry:
	mov $SEL_KDATA, %eax
	mov %eax, %ds
	mov %eax, %es
	mov %eax, %ss
	lea kstack_top(%rip), %rsp

	/* TSS descriptor: its base is only known after linking, so build it here. */
	lea tss(%rip), %rax
	lea gdt_tss(%rip), %rdi
	mov %eax, %ecx
	shl $16, %ecx
	or $0x67 + 8192 + 1, %ecx       /* limit 15:0 = 0x68 + 8192 bytes of bitmap + end byte */
	mov %ecx, (%rdi)
	mov %rax, %rcx
	shr $16, %rcx
	and $0xff, %ecx
	mov %rax, %rdx
	shr $24, %rdx
	and $0xff, %edx
	shl $24, %edx
	or %edx, %ecx
	or $0x8900, %ecx                /* present, type 9 (available 64-bit TSS) */
	mov %ecx, 4(%rdi)
	shr $32, %rax
	mov %eax, 8(%rdi)
	lea kstack_top(%rip), %rax
	mov %rax, tss+4(%rip)           /* RSP0 */
	movw $0x68, tss+0x66(%rip)      /* I/O bitmap offset */
	movb $0xff, tss+0x68+8192(%rip) /* bitmap end marker */
	mov $SEL_TSS, %eax
	ltr %ax

	/* IDT: vectors 0..63 point at 16-byte stubs, 0xff at the spurious one. */
	lea idt(%rip), %rdi
	lea vec_stubs(%rip), %rdx
	mov $64, %ecx
1:	call set_gate
	add $16, %rdi
	add $16, %rdx
	loop 1b
	lea idt+0xff*16(%rip), %rdi
	lea spurious(%rip), %rdx
	call set_gate
	lidt idt_desc(%rip)

	mov $LAPIC, %eax
	movl $0x1ff, 0xf0(%rax)         /* local APIC on, spurious vector 0xff */

	/* Drop to CPL3 for good: stub_main(start_info). */
	mov %rsi, %rdi
	pushq $SEL_UDATA
	lea ustack_top-8(%rip), %rax       /* as if called: rsp+8 16-aligned */
	pushq %rax
	pushq $0x202                    /* IF=1 */
	pushq $SEL_UCODE
	lea stub_main(%rip), %rax
	pushq %rax
	iretq

/* %rdi = gate, %rdx = handler; a present DPL0 interrupt gate on SEL_KCODE */
set_gate:
	mov %edx, %eax
	and $0xffff, %eax
	or $SEL_KCODE << 16, %eax
	mov %eax, (%rdi)
	mov %edx, %eax
	and $0xffff0000, %eax
	or $0x8e00, %eax
	mov %eax, 4(%rdi)
	mov %rdx, %rax
	shr $32, %rax
	mov %rax, 8(%rdi)
	ret

/* ---- vector stubs: exceptions, device interrupts ---- */
	.p2align 4
vec_stubs:
.set v, 0
.rept 64
	.p2align 4
.if v == 6
	jmp svc_or_ud
.elseif v == LKVM_KICK_VECTOR
	jmp kick_entry
.elseif v == LKVM_TIMER_VECTOR
	jmp timer_entry
.elseif v >= 0x20
	jmp irq_entry
.elseif (v == 8) || (v >= 10 && v <= 14) || (v == 17) || (v == 21) || (v == 29) || (v == 30)
	pushq $v                        /* CPU pushed an error code */
	jmp fault
.else
	pushq $0                        /* uniform frame: fake error code */
	pushq $v
	jmp fault
.endif
.set v, v + 1
.endr

/* ud2 from CPL3: a service call if %ecx carries the magic, else a real #UD. */
svc_or_ud:
	cmp $SVC_MAGIC, %ecx
	jne 1f
	addq $2, (%rsp)                 /* return past the ud2 */
	cmp irq_seq(%rip), %rdx
	jne 2f                          /* an interrupt came already: don't sleep */
	sti                             /* sti's shadow covers hlt: no lost wakeup ... */
halt_insn:
	hlt
2:	iretq
1:	pushq $0
	pushq $6
	jmp fault

/*
 * ... on hardware.  An emulator that lets an interrupt in between sti and
 * hlt (seen: QEMU 7.2's TCG running SVM for a nested KVM, which injected
 * into the shadow) pushes the address of the hlt itself, and returning there
 * would sleep with the wakeup already consumed -- a hung guest whose host had
 * done everything right.  So every interrupt entry looks at where it will
 * return (8(%rsp), under the saved %rax) and steps over that hlt, counting
 * it in irqs_at_hlt.  On hardware the saved address is the one after hlt
 * and this costs a compare.
 */
.macro skip_halt_insn
	lea halt_insn(%rip), %rax
	cmp %rax, 8(%rsp)
	jne 9f
	incq 8(%rsp)                    /* hlt is one byte */
	lock incq irqs_at_hlt(%rip)
9:
.endm

/* The launcher's kick only has to make the vCPU leave KVM_RUN: EOI, no count. */
kick_entry:
	push %rax
	mov $LAPIC, %eax
	movl $0, 0xb0(%rax)
	skip_halt_insn
	pop %rax
	iretq

timer_entry:
	lock incq timer_seq(%rip)
irq_entry:
	push %rax
	lock incq irq_seq(%rip)
	mov $LAPIC, %eax
	movl $0, 0xb0(%rax)             /* EOI */
	skip_halt_insn
	pop %rax
spurious:
	iretq

/* Frame: vector, error code, rip, cs, rflags, rsp, ss.  The launcher reads it. */
fault:
	mov (%rsp), %eax
	mov $LKVM_PORT_CRASH, %dx
	outb %al, %dx
	cli
3:	hlt
	jmp 3b

/* ---- data the CPL0 part owns ---- */
	.section .data.boot, "aw"
	.p2align 4
gdt:
	.quad 0
	.quad 0x00af9b000000ffff        /* 0x08 kernel code 64 */
	.quad 0x00cf93000000ffff        /* 0x10 kernel data */
	.quad 0                         /* 0x18 unused */
	.quad 0x00cff3000000ffff        /* 0x20 user data (0x23) */
	.quad 0x00affb000000ffff        /* 0x28 user code 64 (0x2b) */
gdt_tss:
	.quad 0, 0                      /* 0x30 TSS, filled at boot */
gdt_end:
gdt_desc:
	.word gdt_end - gdt - 1
	.quad gdt
idt_desc:
	.word 256 * 16 - 1
	.quad idt

	.globl irq_seq
	.p2align 6
irq_seq:
	.quad 0
	.globl timer_seq
timer_seq:
	.quad 0
	.globl irqs_at_hlt
irqs_at_hlt:
	.quad 0

/* Identity map of the low 4 GiB with 2 MiB pages, user-accessible so the
 * CPL3 stub reaches RAM, the virtio-mmio windows, the IOAPIC and the LAPIC.
 * The top GiB (devices) is uncached. */
	.p2align 12
pml4:
	.quad pdpt + 7
	.fill 511, 8, 0
pdpt:
	.quad pd + 0x0007
	.quad pd + 0x1007
	.quad pd + 0x2007
	.quad pd + 0x3007
	.fill 508, 8, 0
pd:
.set i, 0
.rept 2048
.if i >= 1536
	.quad (i << 21) | 0x9f
.else
	.quad (i << 21) | 0x87
.endif
.set i, i + 1
.endr

	.section .bss.boot, "aw", @nobits
	.p2align 12
	.globl idt
idt:
	.skip 256 * 16
tss:
	.skip 0x68 + 8192 + 1
	.p2align 4
	.skip 16384
kstack_top:
	.p2align 4
	.skip 65536
ustack_top:
