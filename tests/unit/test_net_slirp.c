/*
 * test_net_slirp.c -- the user-mode network backend (devices/net_slirp.c)
 * against the real libslirp, without KVM.
 *
 * The test plays the guest: it writes Ethernet frames by hand, wraps them in
 * hand-built chains the way the ring walker would hand them over (a 12-byte
 * virtio-net header, the frame split across buffers at odd places), and
 * collects what slirp sends back through the deliver callback.  It checks
 * the three things the launcher relies on: slirp answers ARP for the gateway;
 * a guest TCP SYN to 10.0.2.2:PORT becomes a real connection to the host's
 * 127.0.0.1:PORT and the guest gets its SYN-ACK (which needs the poll thread
 * to notice the new socket); and a malformed chain is refused and counted.
 * Every delivery must happen with the device lock held.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "net_slirp.h"

#define HDR 12u
#define GUEST_PORT 40000u
#define GUEST_ISN 1000u

static const uint8_t guest_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static uint8_t gateway_mac[6];     /* learned from slirp's ARP reply */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct net_slirp slirp_be;
static struct vq_chain chain;      /* large: keep it off the stack */

/* Frames slirp delivered; written by deliver (lock held), read under the lock. */
#define MAX_FRAMES 64
static struct {
	size_t len;
	uint8_t data[1600];
} frames[MAX_FRAMES];
static unsigned nframes;
static unsigned deliveries_unlocked;

static void deliver(void *opaque, const void *frame, size_t len)
{
	(void)opaque;
	/* trylock fails (EBUSY) if the lock is held -- by anyone, as it must be */
	if (pthread_mutex_trylock(&lock) == 0) {
		deliveries_unlocked++;
		pthread_mutex_unlock(&lock);
	}
	if (nframes < MAX_FRAMES) {
		frames[nframes].len = len < sizeof(frames[0].data) ? len : sizeof(frames[0].data);
		memcpy(frames[nframes].data, frame, frames[nframes].len);
		nframes++;
	}
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- frames, byte by byte ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint32_t ip(const char *dotted)
{
	struct in_addr a;

	inet_pton(AF_INET, dotted, &a);
	return ntohl(a.s_addr);
}

/* The Internet checksum: ones' complement of the ones' complement sum. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static size_t eth_header(uint8_t *f, const uint8_t *dst, uint16_t type)
{
	memcpy(f, dst, 6);
	memcpy(f + 6, guest_mac, 6);
	put16(f + 12, type);
	return 14;
}

static size_t arp_request(uint8_t *f)
{
	static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t *a = f + eth_header(f, broadcast, 0x0806);

	put16(a, 1);                       /* Ethernet */
	put16(a + 2, 0x0800);              /* IPv4 */
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, 1);                   /* request */
	memcpy(a + 8, guest_mac, 6);
	put32(a + 14, ip(NET_SLIRP_GUEST));
	memset(a + 18, 0, 6);
	put32(a + 24, ip(NET_SLIRP_HOST));
	return 14 + 28;                    /* unpadded: virtio-net does not pad */
}

static size_t tcp_syn(uint8_t *f, uint16_t dport)
{
	uint8_t *iph = f + eth_header(f, gateway_mac, 0x0800), *tcp = iph + 20;
	const unsigned tcp_len = 24;       /* header + MSS option */
	uint8_t pseudo[12];

	memset(iph, 0, 20 + tcp_len);
	iph[0] = 0x45;
	put16(iph + 2, (uint16_t)(20 + tcp_len));
	put16(iph + 4, 0x1234);            /* id */
	put16(iph + 6, 0x4000);            /* don't fragment */
	iph[8] = 64;
	iph[9] = 6;                        /* TCP */
	put32(iph + 12, ip(NET_SLIRP_GUEST));
	put32(iph + 16, ip(NET_SLIRP_HOST));
	put16(iph + 10, csum_fold(csum_add(0, iph, 20)));

	put16(tcp, GUEST_PORT);
	put16(tcp + 2, dport);
	put32(tcp + 4, GUEST_ISN);
	tcp[12] = (tcp_len / 4) << 4;
	tcp[13] = 0x02;                    /* SYN */
	put16(tcp + 14, 65535);
	tcp[20] = 2;                       /* MSS 1460 */
	tcp[21] = 4;
	put16(tcp + 22, 1460);
	memcpy(pseudo, iph + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = 6;
	put16(pseudo + 10, (uint16_t)tcp_len);
	put16(tcp + 16, csum_fold(csum_add(csum_add(0, pseudo, 12), tcp, tcp_len)));
	return 14 + 20 + tcp_len;
}

/* ---- chains, as the ring walker would hand them over ---- */

static void chain_reset(void)
{
	memset(&chain, 0, offsetof(struct vq_chain, buf));
}

static void chain_add(uint8_t *p, uint32_t len, bool device_writes)
{
	chain.buf[chain.count++] = (struct vq_buf){ .host = p, .len = len, .device_writes = device_writes };
	if (device_writes)
		chain.in_len += len;
	else
		chain.out_len += len;
}

/* Send header + frame, cut at the given offsets of the whole (0-terminated). */
static int transmit_split(const uint8_t *frame, size_t len, const unsigned *cuts)
{
	static uint8_t whole[HDR + 2048];
	unsigned at = 0;
	int rc;

	memset(whole, 0, HDR);
	memcpy(whole + HDR, frame, len);
	chain_reset();
	for (; *cuts; cuts++) {
		chain_add(whole + at, *cuts - at, false);
		at = *cuts;
	}
	chain_add(whole + at, (uint32_t)(HDR + len - at), false);
	pthread_mutex_lock(&lock);
	rc = net_slirp_transmit(&slirp_be, &chain);
	pthread_mutex_unlock(&lock);
	return rc;
}

/* The first delivered frame `match` accepts, waiting up to ms; its index or -1. */
static int wait_frame(bool (*match)(const uint8_t *f, size_t len), int ms)
{
	for (int waited = 0; waited <= ms; waited += 10) {
		pthread_mutex_lock(&lock);
		for (unsigned i = 0; i < nframes; i++)
			if (match(frames[i].data, frames[i].len)) {
				pthread_mutex_unlock(&lock);
				return (int)i;
			}
		pthread_mutex_unlock(&lock);
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return -1;
}

static bool is_arp_reply_for_gateway(const uint8_t *f, size_t len)
{
	return len >= 42 && get16(f + 12) == 0x0806 && get16(f + 20) == 2 &&
	       get32(f + 28) == ip(NET_SLIRP_HOST) && get32(f + 38) == ip(NET_SLIRP_GUEST) &&
	       !memcmp(f, guest_mac, 6) && !memcmp(f + 32, guest_mac, 6);
}

static bool is_syn_ack_for_guest(const uint8_t *f, size_t len)
{
	const uint8_t *iph = f + 14, *tcp;

	if (len < 14 + 20 + 20 || get16(f + 12) != 0x0800 || iph[9] != 6 || get32(iph + 16) != ip(NET_SLIRP_GUEST))
		return false;
	tcp = iph + (iph[0] & 0xf) * 4;
	return get16(tcp + 2) == GUEST_PORT && (tcp[13] & 0x12) == 0x12 && get32(tcp + 8) == GUEST_ISN + 1;
}

static void test_arp(void)
{
	uint8_t f[64];
	size_t len = arp_request(f);
	int i;

	CHECK(transmit_split(f, len, (unsigned[]){ HDR, 0 }) == 0, "ARP request taken (header and frame in two buffers)");
	i = wait_frame(is_arp_reply_for_gateway, 1000);
	CHECK(i >= 0, "ARP reply: %s is-at ..., sent to the guest's MAC", NET_SLIRP_HOST);
	if (i >= 0)
		memcpy(gateway_mac, frames[i].data + 22, 6);
	CHECK(gateway_mac[0] || gateway_mac[5], "gateway MAC %02x:%02x:%02x:%02x:%02x:%02x", gateway_mac[0],
	      gateway_mac[1], gateway_mac[2], gateway_mac[3], gateway_mac[4], gateway_mac[5]);
}

static void test_tcp_connect(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(addr);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), cfd = -1;
	struct pollfd pfd;
	double t_syn, latency;
	bool syn_ack;
	uint8_t f[128];
	size_t len;

	CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) == 0 && listen(lfd, 4) == 0 &&
		      getsockname(lfd, (struct sockaddr *)&addr, &alen) == 0,
	      "host listener on 127.0.0.1:%u", ntohs(addr.sin_port));
	len = tcp_syn(f, ntohs(addr.sin_port));
	/* header cut after 5 bytes, frame cut inside the IP header */
	/* let the poll thread fall asleep on a poll set without the new socket */
	nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);
	t_syn = seconds();
	CHECK(transmit_split(f, len, (unsigned[]){ 5, HDR + 23, 0 }) == 0, "SYN %s:%u -> %s:%u taken (three buffers)",
	      NET_SLIRP_GUEST, GUEST_PORT, NET_SLIRP_HOST, ntohs(addr.sin_port));
	pfd = (struct pollfd){ .fd = lfd, .events = POLLIN };
	if (poll(&pfd, 1, 2000) == 1)
		cfd = accept(lfd, NULL, NULL);
	CHECK(cfd >= 0, "host accepted the guest's connection within 2 s");
	syn_ack = wait_frame(is_syn_ack_for_guest, 2000) >= 0;
	latency = seconds() - t_syn;
	CHECK(syn_ack, "SYN-ACK for %s:%u (ack %u) delivered", NET_SLIRP_GUEST, GUEST_PORT, GUEST_ISN + 1);
	/* Left alone, the poll thread only looks at new sockets on slirp's 1 s
	 * idle tick; transmit must wake it, so the answer comes at once. */
	CHECK(syn_ack && latency < 0.5, "SYN-ACK %.0f ms after the SYN (under 500: transmit woke the poll thread)",
	      latency * 1000);
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
}

static void test_bad_chains(void)
{
	static uint8_t big[40000];
	uint8_t small[HDR + 14] = { 0 };
	uint64_t errors = slirp_be.errors, taken = slirp_be.frames_from_guest;

	pthread_mutex_lock(&lock);
	chain_reset();
	chain_add(small, 8, false);
	CHECK(net_slirp_transmit(&slirp_be, &chain) == -1, "8-byte chain (shorter than the header) refused");
	chain_reset();
	chain_add(small, HDR, false);
	chain_add(small, 13, false);
	CHECK(net_slirp_transmit(&slirp_be, &chain) == -1, "header + 13 bytes (no whole Ethernet header) refused");
	chain_reset();
	chain_add(small, sizeof(small), true);
	CHECK(net_slirp_transmit(&slirp_be, &chain) == -1, "chain with only a device-writable buffer refused");
	chain_reset();
	chain_add(small, HDR, false);
	chain_add(big, sizeof(big), false);
	chain_add(big, sizeof(big), false);
	CHECK(net_slirp_transmit(&slirp_be, &chain) == -1, "header + 80000-byte frame refused");
	CHECK(slirp_be.errors == errors + 4, "4 errors counted (%llu)", (unsigned long long)slirp_be.errors);
	CHECK(slirp_be.frames_from_guest == taken, "no refused chain reached slirp");
	CHECK(strstr(slirp_be.first_error, "too short") != NULL, "first error kept: %s", slirp_be.first_error);
	pthread_mutex_unlock(&lock);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);   /* as the launcher does: slirp writes to sockets the host may close */
	CHECK(net_slirp_open(&slirp_be, &lock, deliver, NULL) == 0, "net_slirp_open");
	CHECK(net_slirp_start(&slirp_be) == 0, "poll thread started");
	test_arp();
	test_tcp_connect();
	test_bad_chains();
	net_slirp_stop(&slirp_be);
	CHECK(!slirp_be.thread_running, "poll thread joined");
	CHECK(deliveries_unlocked == 0, "every frame was delivered with the lock held (%u were not)", deliveries_unlocked);
	CHECK(slirp_be.frames_from_guest == 2 && slirp_be.frames_to_guest >= 2,
	      "counters: %llu frames from the guest, %llu to it", (unsigned long long)slirp_be.frames_from_guest,
	      (unsigned long long)slirp_be.frames_to_guest);
	net_slirp_close(&slirp_be);
	net_slirp_close(&slirp_be);   /* twice is harmless */
	CHECK(slirp_be.slirp == NULL && slirp_be.wake_fd < 0, "closed");
	return check_summary();
}
