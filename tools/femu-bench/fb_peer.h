/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_peer.h - --selftest-peer: a trivial in-process backend thread that
 * polls the same rings femu-bench drives and completes every request at
 * once (status OK, no data copied).  It shows how many requests per second
 * the initiator itself can drive on one core, with no socket involved.
 */
#ifndef FB_PEER_H
#define FB_PEER_H

#include <pthread.h>
#include <stdint.h>

#include "fb_vring.h"

struct fb_peer {
	pthread_t th;
	struct fb_vq *vqs;
	unsigned nq;
	int cpu; /* -1: not pinned */
	int stop;
	uint64_t completed;
};

/* Start the peer on vqs[0..nq).  Returns 0 or -errno. */
int fb_peer_start(struct fb_peer *p, struct fb_vq *vqs, unsigned nq, int cpu);

/* Stop and join the peer thread. */
void fb_peer_stop(struct fb_peer *p);

#endif /* FB_PEER_H */
