/*
 * net_sink.h -- the default net backend: consume each transmitted frame the
 * way a tap write would (one gathering copy out of guest memory) and verify
 * it: sequence numbers in order with nothing lost or repeated, and the
 * payload pattern of include/lkvm_frame.h.  It offers transmit and its
 * totals through net_sink_ops (net_backend.h); it receives nothing, opens
 * nothing and has no thread.
 */
#ifndef NET_SINK_H
#define NET_SINK_H

#include <stdint.h>

#include "lkvm_frame.h"
#include "net_backend.h"
#include "virtqueue.h"

struct net_sink {
	uint64_t next_seq;
	uint64_t frames, payload_bytes;
	uint64_t bad_frames;
	char first_error[200];
	uint8_t frame[12 + LKVM_FRAME_MAX];   /* virtio-net header + frame */
};

/* 0 if the chain carried a good frame, -1 if it failed verification
 * (counted, first reason kept in first_error). */
int net_sink_consume(struct net_sink *sink, const struct vq_chain *chain);

/* Its backend table (net_backend.h) takes a struct net_sink as its state. */

#endif
