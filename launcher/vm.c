/*
 * vm.c -- create the VM: /dev/kvm checks, irqchip, RAM, vCPU in PVH state.
 *
 * The order matters and mirrors what KVM expects: VM, then irqchip (before
 * any vCPU, so the vCPU gets an in-kernel local APIC), then memory, then the
 * vCPU with CPUID (long mode must be advertised before the guest may set
 * EFER.LME), then registers.
 */
#include "vm.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "diag.h"
#include "lguest_kvm_abi.h"

static const struct {
	int cap;
	const char *name;
} required_caps[] = {
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
	{ KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP" },
	{ KVM_CAP_IOEVENTFD, "KVM_CAP_IOEVENTFD" },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID" },
	{ KVM_CAP_SIGNAL_MSI, "KVM_CAP_SIGNAL_MSI" },
};

static int open_kvm(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	switch (errno) {
	case ENOENT:
	case ENXIO:
	case ENODEV:
		return diag_fail("/dev/kvm: %s -- this machine has no KVM; add --vm none (no VM: real seconds), "
				 "load a kvm module, or run inside the emulator VM: tests/vm/lkvm-vm -- lguest-kvm ...",
				 strerror(errno));
	case EACCES:
	case EPERM:
		return diag_fail("/dev/kvm: permission denied -- run as root or join group kvm");
	default:
		return diag_fail("/dev/kvm: %s", strerror(errno));
	}
}

int vm_check_kvm(void)
{
	int fd = open_kvm();

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int vm_create(struct vm *vm, uint64_t mem_size)
{
	struct kvm_userspace_memory_region region;
	int version, rc;

	memset(vm, 0, sizeof(*vm));
	vm->kvm_fd = vm->vm_fd = vm->vcpu_fd = -1;
	vm->kick_msi = true;
	vm->kvm_fd = open_kvm();
	if (vm->kvm_fd < 0)
		return -1;
	version = ioctl(vm->kvm_fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION)
		return diag_fail("/dev/kvm: API version %d, expected %d -- the kernel's KVM is too old or too new",
				 version, KVM_API_VERSION);
	for (size_t i = 0; i < sizeof(required_caps) / sizeof(required_caps[0]); i++)
		if (ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, required_caps[i].cap) <= 0)
			return diag_fail("/dev/kvm: missing capability %s -- this KVM cannot run lguest-kvm",
					 required_caps[i].name);

	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return diag_fail("KVM_CREATE_VM: %s", strerror(errno));
	if (ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0)
		return diag_fail("KVM_CREATE_IRQCHIP: %s", strerror(errno));

	rc = gmem_map(&vm->mem, mem_size);
	if (rc < 0)
		return diag_fail("cannot allocate %llu MiB of guest RAM: %s -- lower --mem",
				 (unsigned long long)(mem_size >> 20), strerror(-rc));
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = mem_size,
		.userspace_addr = (uintptr_t)vm->mem.host,
	};
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		return diag_fail("KVM_SET_USER_MEMORY_REGION (%llu MiB): %s -- lower --mem",
				 (unsigned long long)(mem_size >> 20), strerror(errno));
	return 0;
}

static int set_cpuid(struct vm *vm)
{
	int n = 128;
	struct kvm_cpuid2 *cpuid = calloc(1, sizeof(*cpuid) + n * sizeof(struct kvm_cpuid_entry2));

	if (!cpuid)
		return diag_fail("out of memory for CPUID");
	cpuid->nent = n;
	if (ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, cpuid) < 0) {
		free(cpuid);
		return diag_fail("KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
	}
	/* Say that this is a VM (CPUID.1:ECX bit 31): a Linux guest looks for
	 * KVM's leaves at 0x40000000 -- kvm-clock, the paravirtual features
	 * KVM_GET_SUPPORTED_CPUID lists there -- only when the bit is set. */
	for (unsigned i = 0; i < cpuid->nent; i++)
		if (cpuid->entries[i].function == 1)
			cpuid->entries[i].ecx |= 1u << 31;
	if (ioctl(vm->vcpu_fd, KVM_SET_CPUID2, cpuid) < 0) {
		free(cpuid);
		return diag_fail("setting the vCPU's CPUID: %s", strerror(errno));
	}
	free(cpuid);
	return 0;
}

/* PVH entry state (xen/include/public/arch-x86/hvm/start_info.h, "PVH boot
 * ABI"): CR0.PE, paging off, flat 4 GiB 32-bit code and data segments. */
static void flat_segment(struct kvm_segment *s, uint16_t selector, uint8_t type)
{
	*s = (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = selector, .type = type,
		.present = 1, .dpl = 0, .db = 1, .s = 1, .l = 0, .g = 1,
	};
}

int vm_share_host_tsc(struct vm *vm)
{
	uint64_t offset = 0;
	struct kvm_device_attr attr = {
		.group = KVM_VCPU_TSC_CTRL, .attr = KVM_VCPU_TSC_OFFSET, .addr = (uint64_t)(uintptr_t)&offset,
	};

	if (ioctl(vm->vcpu_fd, KVM_SET_DEVICE_ATTR, &attr) < 0)
		return diag_fail("KVM_VCPU_TSC_OFFSET: %s -- the trace will measure the guest's TSC offset instead",
				 strerror(errno));
	return 0;
}

/* Both entries -- PVH for the stub, the 32-bit boot protocol for a Linux
 * bzImage -- start the vCPU the same way: flat 4 GiB 32-bit code and data,
 * protected mode, paging off, interrupts off.  They differ only in the
 * selectors (PVH: 0x08 and 0x10; the boot protocol: __BOOT_CS 0x10 and
 * __BOOT_DS 0x18), which the GDT written here follows, and in the
 * register that points at the boot data (%ebx for PVH, %esi for Linux). */
static int create_vcpu_flat32(struct vm *vm, const struct kvm_regs *regs, uint16_t cs, uint16_t ds)
{
	struct kvm_sregs sregs;
	uint64_t *gdt = gmem_ptr(&vm->mem, LKVM_BOOT_GDT_GPA, 4 * 8);

	if (!gdt)
		return diag_fail("guest RAM too small for the boot GDT");
	vm->vcpu_fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, 0);
	if (vm->vcpu_fd < 0)
		return diag_fail("KVM_CREATE_VCPU: %s", strerror(errno));
	vm->run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->run_size < (int)sizeof(struct kvm_run))
		return diag_fail("KVM_GET_VCPU_MMAP_SIZE: %s", strerror(errno));
	vm->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, vm->vcpu_fd, 0);
	if (vm->run == MAP_FAILED) {
		vm->run = NULL;
		return diag_fail("mapping the vCPU's kvm_run area: %s", strerror(errno));
	}
	if (set_cpuid(vm) < 0)
		return -1;

	/* The guest loads its own GDT at once; this one only has to be valid
	 * for the selectors we hand it. */
	gdt[0] = 0;
	gdt[cs / 8] = 0x00cf9b000000ffffull; /* code, 32-bit, flat */
	gdt[ds / 8] = 0x00cf93000000ffffull; /* data, flat */

	if (ioctl(vm->vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return diag_fail("KVM_GET_SREGS: %s", strerror(errno));
	flat_segment(&sregs.cs, cs, 0xb);
	flat_segment(&sregs.ds, ds, 0x3);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	sregs.tr = (struct kvm_segment){ .limit = 0x67, .type = 0xb, .present = 1 };
	sregs.gdt.base = LKVM_BOOT_GDT_GPA;
	sregs.gdt.limit = (ds > cs ? ds : cs) + 7;
	sregs.cr0 = 0x11;   /* PE | ET */
	sregs.cr4 = 0;
	sregs.efer = 0;
	if (ioctl(vm->vcpu_fd, KVM_SET_SREGS, &sregs) < 0)
		return diag_fail("KVM_SET_SREGS (32-bit entry state): %s", strerror(errno));
	if (ioctl(vm->vcpu_fd, KVM_SET_REGS, regs) < 0)
		return diag_fail("KVM_SET_REGS: %s", strerror(errno));
	return 0;
}

int vm_create_vcpu_pvh(struct vm *vm, uint32_t entry, uint32_t start_info)
{
	struct kvm_regs regs = { .rip = entry, .rbx = start_info, .rflags = 2 };

	return create_vcpu_flat32(vm, &regs, 0x08, 0x10);
}

int vm_create_vcpu_linux(struct vm *vm, uint32_t entry, uint32_t boot_params)
{
	/* boot.rst, "32-bit boot protocol": %esi = boot_params; %ebp, %edi
	 * and %ebx zero. */
	struct kvm_regs regs = { .rip = entry, .rsi = boot_params, .rflags = 2 };

	return create_vcpu_flat32(vm, &regs, 0x10, 0x18);
}

int vm_add_ioeventfd(struct vm *vm, uint64_t gpa, uint32_t value, int efd)
{
	struct kvm_ioeventfd io = {
		.datamatch = value, .addr = gpa, .len = 4, .fd = efd,
		.flags = KVM_IOEVENTFD_FLAG_DATAMATCH,
	};

	if (ioctl(vm->vm_fd, KVM_IOEVENTFD, &io) < 0)
		return diag_fail("KVM_IOEVENTFD at 0x%llx: %s", (unsigned long long)gpa, strerror(errno));
	return 0;
}

int vm_set_irq_line(struct vm *vm, unsigned gsi, bool level)
{
	struct kvm_irq_level line = { .irq = gsi, .level = level };

	return ioctl(vm->vm_fd, KVM_IRQ_LINE, &line);
}

void vm_kick_vcpu(struct vm *vm, pthread_t vcpu_thread)
{
	struct kvm_msi msi = { .address_lo = 0xfee00000, .data = LKVM_KICK_VECTOR };

	pthread_kill(vcpu_thread, SIGUSR1);
	if (vm->vm_fd >= 0 && vm->kick_msi)   /* --model thread has no VM */
		ioctl(vm->vm_fd, KVM_SIGNAL_MSI, &msi);
}

void vm_destroy(struct vm *vm)
{
	if (vm->run)
		munmap(vm->run, vm->run_size);
	if (vm->vcpu_fd >= 0)
		close(vm->vcpu_fd);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	gmem_unmap(&vm->mem);
}
