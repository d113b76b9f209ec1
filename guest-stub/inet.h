/*
 * inet.h -- Ethernet, ARP, IPv4 and TCP headers for the guest's tcp workload:
 * building the frames it sends and checking the frames it receives.
 *
 * Pure functions over byte buffers, like tcp_sender.c, so the unit tests run
 * them on the host.  Outgoing: inet_build_arp() and inet_build_tcp() (which
 * also writes the payload from the stream pattern and the checksums).
 * Incoming: inet_parse() drops anything that is not for this connection or
 * whose checksums are wrong, and hands back an ARP question or answer, or a
 * parsed TCP segment.  Addresses are kept in host order; the wire is big
 * endian and is only touched through get/put helpers.
 */
#ifndef INET_H
#define INET_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp_sender.h"

#define ETH_HLEN_ 14u
#define IP_HLEN 20u
#define TCP_HLEN 20u
#define TCP_SYN_OPTLEN 8u       /* MSS (4) + NOP + window scale (3) */
#define INET_TCP_HDRS (ETH_HLEN_ + IP_HLEN + TCP_HLEN)
#define ARP_FRAME_LEN 42u

struct inet_endpoints {
	uint8_t mac[6], peer_mac[6];
	uint32_t ip, peer_ip;         /* host order */
	uint16_t port, peer_port;
	uint16_t ip_id;               /* next IPv4 identification */
	uint16_t window;              /* what we advertise (we take no data) */
	uint8_t wscale;
	uint16_t mss;                 /* what we advertise in the SYN */
	bool csum_partial;            /* VIRTIO_NET_F_CSUM: the device completes the TCP checksum */
};

enum inet_kind {
	INET_IGNORED,        /* not for us (other protocol, address, port) */
	INET_MALFORMED,      /* for us, but truncated or a bad checksum */
	INET_ARP_REQUEST,    /* someone asks for our address: answer */
	INET_ARP_REPLY,      /* someone told us a MAC (sender_mac/sender_ip) */
	INET_TCP,            /* a segment of our connection, in `seg` */
};

struct inet_rx {
	uint8_t sender_mac[6];
	uint32_t sender_ip;
	struct tcp_seg seg;
};

/* Internet checksum pieces: a running sum over memory, then fold. */
uint64_t inet_csum_add(uint64_t sum, const void *p, uint32_t len);
uint16_t inet_csum_fold(uint64_t sum);

/* An ARP request for `target_ip`, or a reply to `target_mac`/`target_ip`.
 * Writes ARP_FRAME_LEN bytes. */
uint32_t inet_build_arp(uint8_t *frame, const struct inet_endpoints *e, bool reply,
			const uint8_t *target_mac, uint32_t target_ip);
/* Headers (+ SYN options) and out->len stream bytes from out->off, with the
 * IPv4 and TCP checksums (with csum_partial, the TCP field holds only the
 * pseudo-header sum, for the device to finish).  Returns the frame length. */
uint32_t inet_build_tcp(uint8_t *frame, struct inet_endpoints *e, const struct tcp_out *out);
/* Write `len` stream bytes starting at stream offset `off`. */
void inet_stream_fill(uint8_t *dst, uint64_t off, uint32_t len);

enum inet_kind inet_parse(const struct inet_endpoints *e, const uint8_t *frame, uint32_t len, struct inet_rx *rx);

#endif
