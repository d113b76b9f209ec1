/*
 * test_net_slirp.c -- the user-mode network backend (devices/net_slirp.c)
 * against the real libslirp, without KVM.
 *
 * The test plays the guest: it writes Ethernet frames by hand, wraps them in
 * hand-built chains the way the ring walker would hand them over (a 12-byte
 * virtio-net header, the frame split across buffers at odd places), and
 * collects what slirp sends back through the deliver callback.  It checks
 * what the launcher relies on: slirp answers ARP for the gateway; a guest
 * TCP SYN to the peer, 10.0.2.2:PORT, becomes a real connection to the
 * host's 127.0.0.1:PORT and the guest gets its SYN-ACK (which needs the poll
 * thread to notice the new socket); a malformed chain is refused and
 * counted.  And what it must not allow: a SYN to any other port or address,
 * or UDP, opens no host socket, and the guest cannot hold more than
 * NET_SLIRP_MAX_CONNECTIONS host connections however many SYNs it sends.
 * Every delivery must happen with the device lock held by the delivering
 * thread itself (checked with an error-checking mutex, so a delivery
 * without the lock is caught even while another thread holds it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
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

static pthread_mutex_t lock;       /* error-checking: it knows its owner */
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
static uint16_t peer_port;         /* the listener test_tcp_connect made --peer */

/* Does the calling thread hold the lock?  An error-checking mutex answers
 * EDEADLK only to its owner; with a deadline in the past, a mutex held by
 * another thread answers ETIMEDOUT at once, and a free one is taken (0).
 * (trylock cannot tell: it says EBUSY whoever holds the lock.) */
static bool lock_held_by_me(void)
{
	const struct timespec past = { 0 };
	int rc = pthread_mutex_timedlock(&lock, &past);

	if (rc == 0)
		pthread_mutex_unlock(&lock);
	return rc == EDEADLK;
}

static void deliver(void *opaque, const void *frame, size_t len)
{
	(void)opaque;
	if (!lock_held_by_me())
		deliveries_unlocked++;
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

static size_t tcp_syn_from(uint8_t *f, uint16_t sport, uint32_t daddr, uint16_t dport)
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
	put32(iph + 16, daddr);
	put16(iph + 10, csum_fold(csum_add(0, iph, 20)));

	put16(tcp, sport);
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

static size_t tcp_syn(uint8_t *f, uint16_t dport)
{
	return tcp_syn_from(f, GUEST_PORT, ip(NET_SLIRP_HOST), dport);
}

/* A UDP datagram from the guest to daddr:dport (checksum 0: none, as IPv4 allows). */
static size_t udp_datagram(uint8_t *f, uint32_t daddr, uint16_t dport)
{
	uint8_t *iph = f + eth_header(f, gateway_mac, 0x0800), *udp = iph + 20;

	memset(iph, 0, 20 + 8 + 4);
	iph[0] = 0x45;
	put16(iph + 2, 20 + 8 + 4);
	iph[8] = 64;
	iph[9] = 17;
	put32(iph + 12, ip(NET_SLIRP_GUEST));
	put32(iph + 16, daddr);
	put16(iph + 10, csum_fold(csum_add(0, iph, 20)));
	put16(udp, GUEST_PORT);
	put16(udp + 2, dport);
	put16(udp + 4, 8 + 4);
	memcpy(udp + 8, "ping", 4);
	return 14 + 20 + 8 + 4;
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
	net_slirp_flush(&slirp_be);   /* the end of a one-frame drain, as net.c calls it */
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
	net_slirp_allow(&slirp_be, ip(NET_SLIRP_HOST), ntohs(addr.sin_port));
	peer_port = ntohs(addr.sin_port);
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
	/* The corks: a drain's flush pushes only past NET_SLIRP_PUSH_BYTES; a
	 * smaller tail is pushed by the poll thread's round. */
	{
		uint64_t before, pushed = 0;

		pthread_mutex_lock(&lock);
		net_slirp_flush(&slirp_be);
		before = slirp_be.pushes;
		pthread_mutex_unlock(&lock);
		CHECK(transmit_split(f, len, (unsigned[]){ 0 }) == 0, "the SYN again (%zu bytes: under the push size)", len);
		for (int waited = 0; waited < 1000 && !pushed; waited += 10) {
			pthread_mutex_lock(&lock);
			pushed = slirp_be.pushes - before;
			pthread_mutex_unlock(&lock);
			nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
		}
		CHECK(pushed >= 1, "the poll thread's round pushed the tail within 1 s (%llu pushes)",
		      (unsigned long long)pushed);
	}
	if (cfd >= 0)
		close(cfd);
	if (lfd >= 0)
		close(lfd);
}

/* A host listener on 127.0.0.1, its port in *port. */
static int listener(uint16_t *port, int type)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(addr);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || getsockname(fd, (struct sockaddr *)&addr, &alen) ||
	    (type == SOCK_STREAM && listen(fd, 128))) {
		printf("FAIL cannot make a host listener: %s\n", strerror(errno));
		exit(1);
	}
	*port = ntohs(addr.sin_port);
	return fd;
}

/* Connections (or datagrams) that reach fd within ms; accepted ones are kept open in fds. */
static unsigned arrivals(int fd, int ms, int *fds, unsigned max)
{
	unsigned n = 0;

	for (int waited = 0; waited <= ms; waited += 10) {
		int c;
		char b[16];

		while ((c = accept(fd, NULL, NULL)) >= 0)
			if (n < max)
				fds[n++] = c;
			else
				close(c), n++;
		while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
			n++;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return n;
}

static int transmit(const uint8_t *f, size_t len)
{
	return transmit_split(f, len, (unsigned[]){ 0 });
}

static void test_only_the_peer(void)
{
	uint16_t other_port, udp_port;
	int other = listener(&other_port, SOCK_STREAM), udp = listener(&udp_port, SOCK_DGRAM);
	uint64_t refused = slirp_be.frames_refused, taken = slirp_be.frames_from_guest;
	uint8_t f[128];
	size_t len;

	CHECK(transmit(f, tcp_syn_from(f, 40001, ip(NET_SLIRP_HOST), other_port)) == -1,
	      "SYN to %s:%u (a host port that is not --peer) refused", NET_SLIRP_HOST, other_port);
	CHECK(transmit(f, tcp_syn_from(f, 40002, ip("10.0.2.3"), peer_port)) == -1,
	      "SYN to 10.0.2.3:%u (the peer's port, another address) refused", peer_port);
	CHECK(transmit(f, tcp_syn_from(f, 40003, ip("192.0.2.1"), peer_port)) == -1,
	      "SYN to 192.0.2.1:%u (outside world) refused", peer_port);
	CHECK(transmit(f, udp_datagram(f, ip(NET_SLIRP_HOST), udp_port)) == -1,
	      "UDP to %s:%u refused", NET_SLIRP_HOST, udp_port);
	len = udp_datagram(f, ip(NET_SLIRP_HOST), udp_port);
	f[14 + 6] = 0x20;   /* the same datagram as a first fragment (more fragments follow) */
	put16(f + 14 + 10, 0);
	put16(f + 14 + 10, csum_fold(csum_add(0, f + 14, 20)));
	CHECK(transmit(f, len) == -1, "IP fragments refused");
	CHECK(arrivals(other, 300, NULL, 0) == 0, "no connection reached the other host port");
	CHECK(arrivals(udp, 50, NULL, 0) == 0, "no datagram reached the host's UDP port");
	CHECK(slirp_be.frames_refused == refused + 5 && slirp_be.frames_from_guest == taken,
	      "5 frames refused (%llu), none handed to slirp",
	      (unsigned long long)(slirp_be.frames_refused - refused));
	close(other);
	close(udp);
}

static void test_connection_cap(void)
{
	enum { SYNS = 3 * NET_SLIRP_MAX_CONNECTIONS };
	uint16_t port;
	int lfd = listener(&port, SOCK_STREAM), fds[SYNS];
	unsigned accepted, refused_before = (unsigned)slirp_be.connections_refused;
	uint8_t f[128];

	net_slirp_allow(&slirp_be, ip(NET_SLIRP_HOST), port);
	for (unsigned i = 0; i < SYNS; i++)
		transmit(f, tcp_syn_from(f, (uint16_t)(41000 + i), ip(NET_SLIRP_HOST), port));
	accepted = arrivals(lfd, 1000, fds, SYNS);
	CHECK(accepted > 0 && accepted <= NET_SLIRP_MAX_CONNECTIONS,
	      "%u SYNs from distinct ports to --peer: %u host connections (cap %u)", SYNS, accepted,
	      NET_SLIRP_MAX_CONNECTIONS);
	pthread_mutex_lock(&lock);
	CHECK(slirp_be.host_sockets <= NET_SLIRP_MAX_CONNECTIONS, "slirp holds %u host sockets",
	      slirp_be.host_sockets);
	pthread_mutex_unlock(&lock);
	CHECK(slirp_be.connections_refused - refused_before >= SYNS - NET_SLIRP_MAX_CONNECTIONS,
	      "the SYNs over the cap were refused and counted (%llu)",
	      (unsigned long long)(slirp_be.connections_refused - refused_before));
	for (unsigned i = 0; i < accepted && i < SYNS; i++)
		close(fds[i]);
	close(lfd);
}

/* The lock check itself must be able to fail: a delivery from a thread that
 * does not hold the lock is caught, also while another thread holds it. */
static void *hold_lock_briefly(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void test_lock_check(void)
{
	unsigned before = deliveries_unlocked, saved = nframes;
	pthread_t t;

	deliver(NULL, "", 0);
	CHECK(deliveries_unlocked == before + 1, "the check catches a delivery with the lock free");
	pthread_create(&t, NULL, hold_lock_briefly, NULL);
	nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000 * 1000 }, NULL);
	deliver(NULL, "", 0);
	pthread_join(t, NULL);
	CHECK(deliveries_unlocked == before + 2, "and one while another thread holds the lock");
	pthread_mutex_lock(&lock);
	deliver(NULL, "", 0);
	pthread_mutex_unlock(&lock);
	CHECK(deliveries_unlocked == before + 2, "but not one made holding it");
	deliveries_unlocked = before;
	nframes = saved;
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

/* A run that fails before its backend is opened still closes it: a zeroed
 * struct must not close descriptor 0, whose wake_fd it seems to hold. */
static void test_close_unopened(void)
{
	struct net_slirp never = { 0 };
	int p[2];

	if (pipe(p) < 0 || dup2(p[0], 0) < 0) {
		CHECK(0, "pipe onto descriptor 0: %s", strerror(errno));
		return;
	}
	net_slirp_close(&never);
	CHECK(fcntl(0, F_GETFD) >= 0, "closing a never-opened backend left descriptor 0 open");
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	pthread_mutexattr_t attr;
	uint64_t syns_taken;

	signal(SIGPIPE, SIG_IGN);   /* as the launcher does: slirp writes to sockets the host may close */
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&lock, &attr);
	test_lock_check();
	test_close_unopened();
	CHECK(net_slirp_open(&slirp_be, &lock, deliver, NULL) == 0, "net_slirp_open");
	CHECK(net_slirp_start(&slirp_be) == 0, "poll thread started");
	test_arp();
	test_tcp_connect();
	test_bad_chains();
	test_only_the_peer();
	syns_taken = slirp_be.frames_from_guest;
	test_connection_cap();
	syns_taken = slirp_be.frames_from_guest - syns_taken;
	net_slirp_stop(&slirp_be);
	CHECK(!slirp_be.thread_running, "poll thread joined");
	CHECK(deliveries_unlocked == 0, "every frame was delivered with the lock held (%u were not)", deliveries_unlocked);
	/* ARP, the SYN and its repeat for the push check, and the cap's SYNs */
	CHECK(slirp_be.frames_from_guest == 3 + syns_taken && slirp_be.frames_to_guest >= 2,
	      "counters: %llu frames from the guest, %llu to it", (unsigned long long)slirp_be.frames_from_guest,
	      (unsigned long long)slirp_be.frames_to_guest);
	net_slirp_close(&slirp_be);
	net_slirp_close(&slirp_be);   /* twice is harmless */
	CHECK(slirp_be.slirp == NULL && slirp_be.wake_fd < 0, "closed");
	return check_summary();
}
