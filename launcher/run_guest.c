/*
 * run_guest.c -- step 1 of a run (run_state.h): build the guest.
 *
 * In order: read and check the ELF image (elf_loader.c), create the VM and
 * its RAM, copy the image in and create the vCPU at the PVH entry point,
 * open the net backend's host side (a tap or slirp, which may need root:
 * the privileges are dropped only after this), ask KVM for the guest's TSC
 * rate (the guest times --pace-ns and the tcp workload's timers with it),
 * and write the PVH start info with a command line that names the two
 * virtio-mmio devices and carries every parameter of the workload.
 */
#include "run_state.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "diag.h"
#include "elf_loader.h"
#include "pvh_boot.h"

static const char *default_guest(char *buf, size_t size)
{
	const char *env = getenv("LGUEST_KVM_GUEST");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "lguest-stub.elf";
	exe[n] = 0;
	slash = strrchr(exe, '/');
	*slash = 0;
	/* Build tree: <build>/lguest-kvm and <build>/guest-stub/lguest-stub.elf;
	 * installed: <prefix>/bin and <prefix>/lib/lguest-kvm. */
	snprintf(buf, size, "%s/guest-stub/lguest-stub.elf", exe);
	if (access(buf, R_OK) == 0)
		return buf;
	snprintf(buf, size, "%s/../lib/lguest-kvm/lguest-stub.elf", exe);
	return buf;
}

int build_cmdline(const struct run_options *o, unsigned tsc_khz, char *buf, size_t size)
{
	int n = snprintf(buf, size,
		"console=hvc0 virtio_mmio.device=4K@0x%x:%u virtio_mmio.device=4K@0x%x:%u "
		"lkvm.workload=%s lkvm.policy=%s lkvm.bytes=%llu lkvm.frame=%u lkvm.ring=%u "
		"lkvm.segments=%u lkvm.wait=%s lkvm.indirect=%s lkvm.fault=%s lkvm.status=%u "
		"lkvm.pace_ns=%u lkvm.tsc_khz=%u lkvm.layout=%s lkvm.indirect_cost_ns=%u lkvm.indirect_cold_lines=%u",
		LKVM_MMIO_BASE, LKVM_IRQ_BASE, LKVM_MMIO_BASE + LKVM_MMIO_SIZE, LKVM_IRQ_BASE + 1,
		o->workload, o->policy, (unsigned long long)o->bytes, o->frame, o->ring,
		o->segments, o->wait, o->indirect, o->fault, o->boot_status, o->pace_ns, tsc_khz, o->layout,
		o->indirect_cost_ns, o->indirect_cold_lines);

	if (n > 0 && n < (int)size && !strcmp(o->workload, "tcp"))
		n += snprintf(buf + n, size - (size_t)n, " lkvm.tso=%d lkvm.ip=%u.%u.%u.%u lkvm.peer=%u.%u.%u.%u:%u", o->tso,
			      o->guest_ip >> 24, (o->guest_ip >> 16) & 255, (o->guest_ip >> 8) & 255, o->guest_ip & 255,
			      o->peer_ip >> 24, (o->peer_ip >> 16) & 255, (o->peer_ip >> 8) & 255, o->peer_ip & 255,
			      o->peer_port);
	if (n > 0 && n < (int)size && o->coalesce)
		n += snprintf(buf + n, size - (size_t)n, " lkvm.coalesce=%s", o->coalesce);
	if (n > 0 && n < (int)size && o->trace)
		n += snprintf(buf + n, size - (size_t)n, " lkvm.trace=%u", o->trace_events);
	return n > 0 && n < (int)size ? 0 : diag_fail("guest command line too long");
}

int build_guest(struct run_state *rs)
{
	char path_buf[PATH_MAX + 64], cmdline[1024];
	const char *path = rs->o->guest ? rs->o->guest : default_guest(path_buf, sizeof(path_buf));
	uint8_t *image;
	size_t size;
	uint32_t entry;
	int rc, tsc_khz;

	if (elf_read_file(path, &image, &size) < 0)
		return -1;
	if (vm_create(&rs->vm, rs->o->mem) < 0) {
		free(image);
		return -1;
	}
	rc = elf_load_pvh(path, image, size, &rs->vm.mem, &entry);
	free(image);
	if (rc < 0 || vm_create_vcpu_pvh(&rs->vm, entry, LKVM_START_INFO_GPA) < 0)
		return -1;
	if (net_open_backend(&rs->net) < 0)
		return -1;
	/* A traced run's two sides stamp with one TSC.  Where KVM cannot give
	 * the guest the host's, run_trace.c measures the offset instead. */
	if (rs->o->trace && vm_share_host_tsc(&rs->vm) < 0)
		diag_print();
	/* The guest times --pace-ns and --indirect-cost-ns with its TSC; KVM
	 * knows the TSC rate. */
	tsc_khz = ioctl(rs->vm.vcpu_fd, KVM_GET_TSC_KHZ, 0);
	if (tsc_khz <= 0 && (rs->o->pace_ns || rs->o->indirect_cost_ns || !strcmp(rs->o->workload, "tcp")))
		return diag_fail("KVM_GET_TSC_KHZ: %s -- --pace-ns, --indirect-cost-ns and the tcp workload's timers need "
				 "the guest TSC rate", strerror(errno));
	rs->tsc_khz = tsc_khz > 0 ? (unsigned)tsc_khz : 0;
	if (build_cmdline(rs->o, tsc_khz > 0 ? (unsigned)tsc_khz : 0, cmdline, sizeof(cmdline)) < 0)
		return -1;
	return pvh_write_start_info(&rs->vm.mem, cmdline);
}
