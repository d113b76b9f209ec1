/*
 * run_linux.c -- step 1 of a run (run_state.h) for a Linux guest: build it.
 *
 * In order, and every file read and checked before a VM exists: find the
 * kernel (--kernel, or the newest /boot/vmlinuz-* whose modules are
 * installed) and the initrd (--initrd, or linux-guest/make-initramfs.sh's,
 * built once and cached), then create the VM, write the ACPI tables that
 * describe the two virtio-mmio devices (acpi.c), lay out kernel, initrd,
 * boot_params and command line (linux_boot.c), create the vCPU at the
 * 32-bit entry, open the net backend, and withhold the features asked.
 *
 * The command line: COM1 for the kernel's messages, no reboot loop on a
 * panic (the triple fault ends the run as a crash), no IPv6 (libslirp
 * takes IPv4 only), in the emulator VM idle=poll -- its nested SVM lets an
 * interrupt in between sti and hlt, and a tickless Linux then sleeps
 * through its wakeup (docs/testing.md, "Lost wakeups") -- the words /init reads
 * (lkvm.workload, lkvm.bytes, lkvm.ip, lkvm.peer), then --append.
 */
#include "run_state.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acpi.h"
#include "diag.h"
#include "host_kind.h"
#include "linux_boot.h"

/* The newest /boot/vmlinuz-VERSION with /lib/modules/VERSION, by version
 * order (strverscmp), into path. */
static int find_installed_kernel(char *path, size_t path_size)
{
	DIR *d = opendir("/boot");
	struct dirent *e;
	char best[256] = "";

	if (!d)
		return diag_fail("--guest linux: /boot: %s -- install a kernel (apt-get install linux-image-amd64) "
				 "or give --kernel", strerror(errno));
	while ((e = readdir(d))) {
		char mods[PATH_MAX];
		struct stat st;
		const char *v = e->d_name + 8;

		if (strncmp(e->d_name, "vmlinuz-", 8) || strlen(v) >= sizeof(best))
			continue;
		snprintf(mods, sizeof(mods), "/lib/modules/%s", v);
		if (stat(mods, &st) == 0 && S_ISDIR(st.st_mode) && strverscmp(v, best) > 0)
			snprintf(best, sizeof(best), "%s", v);
	}
	closedir(d);
	if (!best[0])
		return diag_fail("--guest linux: no /boot/vmlinuz-* with its /lib/modules -- apt-get install "
				 "linux-image-amd64, or give --kernel and --initrd");
	snprintf(path, path_size, "/boot/vmlinuz-%s", best);
	return 0;
}

/* Run make-initramfs.sh (beside the launcher, in the build tree's
 * linux-guest/ or the installed lib/lguest-kvm/) and take the path it
 * prints. */
static int build_initramfs(const char *kver, char *out, size_t out_size)
{
	char exe[PATH_MAX], script[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int pipefd[2], status;
	size_t got = 0;
	pid_t pid;

	if (n <= 0)
		return diag_fail("--guest linux: cannot find the launcher's own folder");
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(script, sizeof(script), "%s/linux-guest/make-initramfs.sh", exe);
	if (access(script, X_OK))
		snprintf(script, sizeof(script), "%s/../lib/lguest-kvm/make-initramfs.sh", exe);
	if (pipe(pipefd) < 0)
		return diag_fail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return diag_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(pipefd[1], STDOUT_FILENO);
		close(pipefd[0]);
		close(pipefd[1]);
		execl(script, script, kver, (char *)NULL);
		fprintf(stderr, "make-initramfs: cannot run %s: %s\n", script, strerror(errno));
		_exit(1);
	}
	close(pipefd[1]);
	while (got < out_size - 1 && (n = read(pipefd[0], out + got, out_size - 1 - got)) > 0)
		got += (size_t)n;
	close(pipefd[0]);
	out[got] = 0;
	out[strcspn(out, "\n")] = 0;
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) || !out[0])
		return diag_fail("--guest linux: building the initramfs failed (its reason is above) -- or give "
				 "--kernel and --initrd");
	return 0;
}

static int build_cmdline_linux(const struct run_options *o, char *buf, size_t size)
{
	int n = snprintf(buf, size,
		"console=ttyS0 earlycon=uart8250,io,0x%x panic=-1 reboot=t loglevel=4 ipv6.disable=1 "
		"%slkvm.workload=%s lkvm.bytes=%llu lkvm.ip=%u.%u.%u.%u lkvm.peer=%u.%u.%u.%u:%u%s%s",
		UART_COM1_BASE, host_is_emulated() ? "idle=poll lapic=notscdeadline nohz=off highres=off " : "", o->workload, (unsigned long long)o->bytes,
		o->guest_ip >> 24, (o->guest_ip >> 16) & 255, (o->guest_ip >> 8) & 255, o->guest_ip & 255,
		o->peer_ip >> 24, (o->peer_ip >> 16) & 255, (o->peer_ip >> 8) & 255, o->peer_ip & 255,
		o->peer_port, o->append ? " " : "", o->append ? o->append : "");

	return n > 0 && n < (int)size ? 0 : diag_fail("--append: the kernel command line would exceed %zu bytes", size);
}

/* The machine ACPI describes: the two devices as the stub knows them. */
static int write_acpi(struct run_state *rs)
{
	struct acpi_machine m = {
		.lapic_base = 0xfee00000, .ioapic_base = 0xfec00000, .ioapic_id = 0,
		.sleep_port = LINUX_SLEEP_PORT, .n_slots = 2,
		.slots = {
			{ .base = rs->con.mmio.base, .size = LKVM_MMIO_SIZE, .gsi = rs->con.mmio.gsi },
			{ .base = rs->net.mmio.base, .size = LKVM_MMIO_SIZE, .gsi = rs->net.mmio.gsi },
		},
	};
	uint8_t *dst = gmem_ptr(&rs->vm.mem, LINUX_ACPI_GPA, ACPI_TABLES_MAX);

	return dst && acpi_build(&m, LINUX_ACPI_GPA, dst, ACPI_TABLES_MAX) > 0 ? 0 : -1;
}

int build_linux_guest(struct run_state *rs)
{
	const struct run_options *o = rs->o;
	char kpath[PATH_MAX], kver[256], ipath[PATH_MAX], cmdline[LINUX_CMDLINE_MAX];
	const char *kernel = o->kernel, *initrd_path = o->initrd;
	struct linux_kernel k;
	uint8_t *initrd = NULL;
	size_t initrd_size = 0;
	int rc;

	if (!kernel) {
		if (find_installed_kernel(kpath, sizeof(kpath)) < 0)
			return -1;
		kernel = kpath;
	}
	if (linux_read_kernel(kernel, &k) < 0)
		return -1;
	if (!initrd_path && o->guest_linux) {
		if (linux_kernel_version(&k, kver, sizeof(kver)) < 0) {
			linux_free_kernel(&k);
			return diag_fail("--kernel %s: no version string in its setup header -- give --initrd", kernel);
		}
		if (build_initramfs(kver, ipath, sizeof(ipath)) < 0) {
			linux_free_kernel(&k);
			return -1;
		}
		initrd_path = ipath;
	}
	if ((initrd_path && linux_read_initrd(initrd_path, &initrd, &initrd_size) < 0) ||
	    build_cmdline_linux(o, cmdline, sizeof(cmdline)) < 0) {
		linux_free_kernel(&k);
		return -1;
	}
	if (linux_mem_needed(&k, initrd_size) > o->mem) {
		rc = diag_fail("--mem %lluM is too small for %s and its initrd: give --mem %lluM or more",
			       (unsigned long long)(o->mem >> 20), kernel,
			       (unsigned long long)((linux_mem_needed(&k, initrd_size) >> 20) + 32));
		goto out;
	}
	rc = -1;
	if (vm_create(&rs->vm, o->mem) < 0 || write_acpi(rs) < 0 ||
	    linux_load(&rs->vm.mem, &k, initrd, initrd_size, cmdline) < 0 ||
	    vm_create_vcpu_linux(&rs->vm, LINUX_KERNEL_GPA, LINUX_BOOT_PARAMS_GPA) < 0 ||
	    net_open_backend(&rs->net) < 0)
		goto out;
	/* --withhold-features: neither device offers these (the transport
	 * masks what the driver accepts with what was offered). */
	rs->con.mmio.host_features &= ~o->withhold_features;
	rs->net.mmio.host_features &= ~o->withhold_features;
	/* The kick is a signal only: vector LKVM_KICK_VECTOR is the stub's, and
	 * to Linux it would be an interrupt no device of ours describes. */
	rs->vm.kick_msi = false;
	/* COM1 for the kernel's messages, beside the console's output. */
	uart_init(&rs->uart, o->quiet ? -1 : STDOUT_FILENO);
	rs->linux_guest = true;
	rc = 0;
out:
	free(initrd);
	linux_free_kernel(&k);
	return rc;
}
