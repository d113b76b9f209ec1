/*
 * inet.c -- frame building and checking for the tcp workload (see inet.h).
 *
 * Outgoing TCP frame: Ethernet (14) | IPv4 (20, DF, no options) | TCP (20,
 * +8 of options on a SYN) | payload from the stream pattern.  The checksums
 * are computed here, over the bytes just written: the guest has no offload.
 * Incoming frames are checked in the order a NIC driver and a stack would:
 * Ethernet destination, type, IPv4 header and its checksum, addresses,
 * TCP ports, TCP checksum, options.
 */
#include "inet.h"

#include "lkvm_frame.h"

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define IPPROTO_TCP_ 6

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, (uint16_t)v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* Summing little-endian 32-bit loads and folding gives the checksum in
 * memory order (RFC 1071's byte-order independence): store it as it comes. */
uint64_t inet_csum_add(uint64_t sum, const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint32_t w;

	for (; len >= 4; len -= 4, b += 4) {
		__builtin_memcpy(&w, b, 4);
		sum += w;
	}
	if (len >= 2) {
		sum += (uint32_t)b[0] | (uint32_t)b[1] << 8;
		b += 2;
		len -= 2;
	}
	if (len)
		sum += b[0];
	return sum;
}

uint16_t inet_csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void eth_header(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	__builtin_memcpy(f, dst, 6);
	__builtin_memcpy(f + 6, src, 6);
	put16(f + 12, type);
}

uint32_t inet_build_arp(uint8_t *frame, const struct inet_endpoints *e, bool reply,
			const uint8_t *target_mac, uint32_t target_ip)
{
	static const uint8_t zero[6];
	uint8_t *a = frame + ETH_HLEN_;

	eth_header(frame, reply ? target_mac : broadcast, e->mac, ETHERTYPE_ARP);
	put16(a, 1);                    /* Ethernet */
	put16(a + 2, ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, reply ? 2 : 1);
	__builtin_memcpy(a + 8, e->mac, 6);
	put32(a + 14, e->ip);
	__builtin_memcpy(a + 18, reply ? target_mac : zero, 6);
	put32(a + 24, target_ip);
	return ARP_FRAME_LEN;
}

void inet_stream_fill(uint8_t *dst, uint64_t off, uint32_t len)
{
	uint64_t w;

	/* Unaligned head, byte by byte; then whole words; then the tail. */
	for (; len && (off & 7); len--, off++) {
		w = lkvm_stream_word(off >> 3);
		*dst++ = (uint8_t)(w >> (8 * (off & 7)));
	}
	for (; len >= 8; len -= 8, off += 8, dst += 8) {
		w = lkvm_stream_word(off >> 3);
		__builtin_memcpy(dst, &w, 8);
	}
	if (len) {
		w = lkvm_stream_word(off >> 3);
		__builtin_memcpy(dst, &w, len);
	}
}

uint32_t inet_build_tcp(uint8_t *frame, struct inet_endpoints *e, const struct tcp_out *out)
{
	uint8_t *ip = frame + ETH_HLEN_, *tcp = ip + IP_HLEN, pseudo[12];
	uint32_t optlen = out->syn_options ? TCP_SYN_OPTLEN : 0;
	uint32_t tcplen = TCP_HLEN + optlen + out->len;
	uint64_t sum;
	uint16_t csum;

	eth_header(frame, e->peer_mac, e->mac, ETHERTYPE_IPV4);
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(IP_HLEN + tcplen));
	put16(ip + 4, e->ip_id++);
	put16(ip + 6, 0x4000);          /* don't fragment */
	ip[8] = 64;
	ip[9] = IPPROTO_TCP_;
	put16(ip + 10, 0);
	put32(ip + 12, e->ip);
	put32(ip + 16, e->peer_ip);
	csum = inet_csum_fold(inet_csum_add(0, ip, IP_HLEN));
	__builtin_memcpy(ip + 10, &csum, 2);

	put16(tcp, e->port);
	put16(tcp + 2, e->peer_port);
	put32(tcp + 4, out->seq);
	put32(tcp + 8, (out->flags & TCP_ACK) ? out->ack : 0);
	tcp[12] = (uint8_t)(((TCP_HLEN + optlen) / 4) << 4);
	tcp[13] = out->flags;
	put16(tcp + 14, e->window);
	put16(tcp + 16, 0);
	put16(tcp + 18, 0);
	if (optlen) {
		tcp[20] = 2;            /* MSS */
		tcp[21] = 4;
		put16(tcp + 22, e->mss);
		tcp[24] = 1;            /* NOP */
		tcp[25] = 3;            /* window scale */
		tcp[26] = 3;
		tcp[27] = e->wscale;
	}
	inet_stream_fill(tcp + TCP_HLEN + optlen, out->off, out->len);

	__builtin_memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP_;
	put16(pseudo + 10, (uint16_t)tcplen);
	sum = inet_csum_add(0, pseudo, 12);
	if (e->csum_partial)
		csum = (uint16_t)~inet_csum_fold(sum);   /* the folded sum, not its complement */
	else
		csum = inet_csum_fold(inet_csum_add(sum, tcp, tcplen));
	__builtin_memcpy(tcp + 16, &csum, 2);
	return ETH_HLEN_ + IP_HLEN + tcplen;
}

static enum inet_kind parse_arp(const struct inet_endpoints *e, const uint8_t *a, uint32_t len, struct inet_rx *rx)
{
	if (len < 28 || get16(a) != 1 || get16(a + 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4)
		return INET_IGNORED;
	__builtin_memcpy(rx->sender_mac, a + 8, 6);
	rx->sender_ip = get32(a + 14);
	if (get16(a + 6) == 1 && get32(a + 24) == e->ip)
		return INET_ARP_REQUEST;
	if (get16(a + 6) == 2 && get32(a + 24) == e->ip)
		return INET_ARP_REPLY;
	return INET_IGNORED;
}

static void parse_tcp_options(const uint8_t *o, uint32_t len, struct tcp_seg *seg)
{
	uint32_t i = 0;

	while (i < len) {
		uint8_t kind = o[i], l;

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len || (l = o[i + 1]) < 2 || i + l > len)
			break;          /* a malformed option ends the list */
		if (kind == 2 && l == 4)
			seg->mss = get16(o + i + 2);
		else if (kind == 3 && l == 3)
			seg->wscale = (int8_t)(o[i + 2] > 14 ? 14 : o[i + 2]);
		i += l;
	}
}

enum inet_kind inet_parse(const struct inet_endpoints *e, const uint8_t *frame, uint32_t len, struct inet_rx *rx)
{
	const uint8_t *ip = frame + ETH_HLEN_, *tcp;
	uint32_t ihl, total, tcplen, doff;
	uint8_t pseudo[12];

	if (len < ETH_HLEN_)
		return INET_MALFORMED;
	if (__builtin_memcmp(frame, e->mac, 6) && __builtin_memcmp(frame, broadcast, 6))
		return INET_IGNORED;
	if (get16(frame + 12) == ETHERTYPE_ARP)
		return parse_arp(e, ip, len - ETH_HLEN_, rx);
	if (get16(frame + 12) != ETHERTYPE_IPV4)
		return INET_IGNORED;
	if (len < ETH_HLEN_ + IP_HLEN)
		return INET_MALFORMED;
	ihl = (ip[0] & 15) * 4u;
	total = get16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < IP_HLEN || total < ihl || ETH_HLEN_ + total > len)
		return INET_MALFORMED;
	if (get32(ip + 16) != e->ip || ip[9] != IPPROTO_TCP_)
		return INET_IGNORED;
	if (get32(ip + 12) != e->peer_ip || (get16(ip + 6) & 0x3fff))
		return INET_IGNORED;    /* another host, or a fragment: not ours */
	if (inet_csum_fold(inet_csum_add(0, ip, ihl)))
		return INET_MALFORMED;
	tcp = ip + ihl;
	tcplen = total - ihl;
	if (tcplen < TCP_HLEN)
		return INET_MALFORMED;
	if (get16(tcp) != e->peer_port || get16(tcp + 2) != e->port)
		return INET_IGNORED;
	doff = (tcp[12] >> 4) * 4u;
	if (doff < TCP_HLEN || doff > tcplen)
		return INET_MALFORMED;
	__builtin_memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP_;
	put16(pseudo + 10, (uint16_t)tcplen);
	if (inet_csum_fold(inet_csum_add(inet_csum_add(0, pseudo, 12), tcp, tcplen)))
		return INET_MALFORMED;
	rx->seg = (struct tcp_seg){
		.seq = get32(tcp + 4), .ack = get32(tcp + 8), .flags = tcp[13] & 0x3f,
		.window = get16(tcp + 14), .len = tcplen - doff, .wscale = -1,
	};
	parse_tcp_options(tcp + TCP_HLEN, doff - TCP_HLEN, &rx->seg);
	return INET_TCP;
}
