/*
 * net_tap.c -- write guest frames into a TAP device.
 *
 * The chain's readable buffers are gathered into an iovec that points into
 * guest memory (each one already bounds-checked by the ring walker), so the
 * kernel copies the frame once, straight out of guest RAM -- what lguest's
 * launcher did with writev() in 2008.  A write error (interface down, no
 * buffer space) is counted and the frame is dropped, as a NIC would.
 */
#include "net_tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "diag.h"

/* SIOCSIFADDR, SIOCSIFNETMASK, then IFF_UP: the host end of the link. */
static int tap_configure(const char *ifname, uint32_t ip, uint8_t prefix)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;
	const char *step = "socket";

	if (s < 0)
		goto out;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(ip);
	step = "SIOCSIFADDR";
	if (ioctl(s, SIOCSIFADDR, &ifr) < 0)
		goto out;
	sin->sin_addr.s_addr = htonl(prefix ? ~0u << (32 - prefix) : 0);
	step = "SIOCSIFNETMASK";
	if (ioctl(s, SIOCSIFNETMASK, &ifr) < 0)
		goto out;
	step = "SIOCGIFFLAGS";
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		goto out;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	step = "SIOCSIFFLAGS";
	rc = ioctl(s, SIOCSIFFLAGS, &ifr);
out:
	if (rc < 0)
		diag_fail("configuring tap %s: %s: %s -- needs root (CAP_NET_ADMIN)", ifname, step, strerror(errno));
	if (s >= 0)
		close(s);
	return rc;
}

int net_tap_open(struct net_tap *tap, const char *ifname, uint32_t host_ip, uint8_t prefix)
{
	struct ifreq ifr;
	int hdr = sizeof(struct virtio_net_hdr_v1);

	memset(tap, 0, sizeof(*tap));
	tap->fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);   /* reads stop at "empty" */
	if (tap->fd < 0)
		return diag_fail("/dev/net/tun: %s -- --net tap needs the tun module and root (or CAP_NET_ADMIN)",
				 strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(tap->fd, TUNSETIFF, &ifr) < 0)
		return diag_fail("TUNSETIFF %s: %s -- check the name, or run as root", ifname[0] ? ifname : "(new)",
				 strerror(errno));
	/* VERSION_1 headers carry num_buffers: 12 bytes, not the legacy 10.
	 * No offloads: the guest sends complete, checksummed frames. */
	if (ioctl(tap->fd, TUNSETVNETHDRSZ, &hdr) < 0 || ioctl(tap->fd, TUNSETOFFLOAD, 0) < 0)
		return diag_fail("configuring tap %s: %s", ifr.ifr_name, strerror(errno));
	snprintf(tap->ifname, sizeof(tap->ifname), "%s", ifr.ifr_name);
	return host_ip ? tap_configure(tap->ifname, host_ip, prefix) : 0;
}

int net_tap_transmit(struct net_tap *tap, const struct vq_chain *chain)
{
	struct iovec iov[64];
	unsigned n = 0;
	size_t len = 0;
	ssize_t w;

	for (unsigned i = 0; i < chain->count; i++) {
		if (chain->buf[i].device_writes)
			continue;
		if (n == sizeof(iov) / sizeof(iov[0])) {
			errno = E2BIG;
			goto fail;
		}
		iov[n++] = (struct iovec){ .iov_base = chain->buf[i].host, .iov_len = chain->buf[i].len };
		len += chain->buf[i].len;
	}
	do
		w = writev(tap->fd, iov, n);
	while (w < 0 && errno == EINTR);
	if (w == (ssize_t)len && len >= sizeof(struct virtio_net_hdr_v1)) {
		tap->frames++;
		tap->bytes += len - sizeof(struct virtio_net_hdr_v1);
		return 0;
	}
	if (w >= 0)
		errno = EMSGSIZE;
fail:
	if (!tap->errors++)
		snprintf(tap->first_error, sizeof(tap->first_error), "write to tap %s: %s (frame %llu)",
			 tap->ifname, strerror(errno), (unsigned long long)tap->frames);
	return -1;
}

void net_tap_close(struct net_tap *tap)
{
	if (tap->fd >= 0)
		close(tap->fd);
	tap->fd = -1;
}
