/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_churn.c - connection churn (see fb_churn.h): the frontend side of the
 * moments a queue starts and stops, thousands of times over.
 */
#include "fb_churn.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "fb_dev.h"
#include "fb_mem.h"
#include "fb_pring.h"
#include "fb_time.h"
#include "fb_vring.h"

#define CHURN_BS 4096u	     /* bytes of each request */
#define CHURN_MAX_BLOCKS 256 /* distinct blocks cycled through */

/* One connection with its own memory and queues. */
struct churn_conn {
	struct fb_dev dev;
	struct fb_mem mem;
	struct fb_vq vqs[FB_MAX_QUEUES];
	unsigned nvq;
	bool open;
	bool stopped; /* its queues were stopped already (held open) */
};

struct churn_stats {
	uint64_t conns;
	uint64_t overlapped; /* connections made while the previous one was still open */
	uint64_t requests;   /* completed with status OK and the right data */
	uint64_t setup_failed;
	uint64_t timeouts; /* requests not completed within --timeout: a stopped queue */
	uint64_t bad_status;
	uint64_t mismatches;
};

/* The 8-byte word i of the block queue q writes in write/read pair `pair`. */
static uint64_t churn_word(uint64_t seed, uint64_t pair, unsigned q, size_t i)
{
	uint64_t x = seed ^ (pair << 20) ^ ((uint64_t)q << 12) ^ i;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

static void churn_close(struct churn_conn *k)
{
	if (k == NULL || !k->open)
		return;
	if (k->stopped)
		vu_close(&k->dev.conn);
	else
		fb_dev_stop(&k->dev, k->vqs, k->nvq);
	for (unsigned i = 0; i < k->nvq; i++)
		fb_vq_fini(&k->vqs[i]);
	fb_mem_destroy(&k->mem);
	k->nvq = 0;
	k->open = false;
	k->stopped = false;
}

/* Connect, share fresh memory, start o->queues queues; 0 or -1 (printed why). */
static int churn_open(struct churn_conn *k, const struct fb_opts *o, uint64_t n)
{
	size_t bytes = 4096;
	const char *what = k->dev.err;
	int rc;

	rc = fb_dev_connect_retry(&k->dev, o->sock, o->timeout_ms, o->event_idx);
	k->open = true;
	if (rc == 0 && o->packed)
		rc = fb_dev_use_packed(&k->dev);
	if (rc == 0 && k->dev.queues_offered < o->queues) {
		snprintf(k->dev.err, sizeof(k->dev.err), "the backend offers %u queues",
			 k->dev.queues_offered);
		rc = -EINVAL;
	}
	for (unsigned i = 0; rc == 0 && i < o->queues; i++)
		bytes += fb_vq_mem_bytes(o->qsize, 1, CHURN_BS);
	if (rc == 0 && (rc = fb_mem_create(&k->mem, bytes, o->hugepages)) < 0)
		what = "cannot create the shared memory";
	for (unsigned i = 0; rc == 0 && i < o->queues; i++) {
		bool ei =
		    o->event_idx && (k->dev.conn.features & (1ull << VIRTIO_RING_F_EVENT_IDX));

		rc =
		    fb_vq_init_layout(&k->vqs[i], &k->mem, i, o->qsize, 1, CHURN_BS, ei, o->packed);
		if (rc == 0)
			k->nvq++;
		else
			what = "cannot set up a queue";
	}
	if (rc == 0)
		rc = fb_dev_start(&k->dev, &k->mem, k->vqs, k->nvq);
	if (rc == 0)
		return 0;
	fprintf(stderr, "femu-bench: connection %" PRIu64 ": %s\n", n, what);
	vu_close(&k->dev.conn);
	k->dev.conn.fd = -1;
	churn_close(k);
	return -1;
}

/* Queue one request on every queue of k: a write (even n) or a read of the block n - 1 wrote. */
static void churn_submit(struct churn_conn *k, const struct fb_opts *o, uint64_t n, uint64_t nblk)
{
	uint64_t pair = n / 2;

	for (unsigned q = 0; q < k->nvq; q++) {
		struct fb_vq *vq = &k->vqs[q];
		uint64_t *w = fb_vq_slot_data(vq, 0);
		uint64_t blk = (pair * k->nvq + q) % nblk;

		for (size_t i = 0; i < CHURN_BS / 8; i++)
			w[i] = n % 2 ? 0 : churn_word(o->seed, pair, q, i);
		fb_vq_submit_any(vq, 0, n % 2 ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT,
				 blk * (CHURN_BS / 512), CHURN_BS);
		fb_vq_publish_any(vq);
	}
}

/* Check the completion of queue q's request (data of a read too); counts in st. */
static void churn_check(struct churn_conn *k, const struct fb_opts *o, uint64_t n, unsigned q,
			struct churn_stats *st)
{
	const struct fb_vq *vq = &k->vqs[q];
	const uint64_t *w = fb_vq_slot_data(vq, 0);

	if (vq->status[0] != VIRTIO_BLK_S_OK) {
		st->bad_status++;
		fprintf(stderr, "femu-bench: connection %" PRIu64 " queue %u: status %u\n", n, q,
			vq->status[0]);
		return;
	}
	for (size_t i = 0; n % 2 && i < CHURN_BS / 8; i++)
		if (w[i] != churn_word(o->seed, n / 2, q, i)) {
			st->mismatches++;
			fprintf(stderr,
				"femu-bench: connection %" PRIu64
				" queue %u: read data differs from what connection %" PRIu64
				" wrote (word %zu)\n",
				n, q, n - 1, i);
			return;
		}
	st->requests++;
}

/* Wait for every queue's completion (bounded by --timeout); false if one did not come. */
static bool churn_wait(struct churn_conn *k, const struct fb_opts *o, uint64_t n,
		       struct churn_stats *st)
{
	uint64_t deadline = fb_now_ns() + (uint64_t)o->timeout_ms * 1000000ull;
	bool done[FB_MAX_QUEUES] = {false};
	unsigned left = k->nvq;
	bool ok = true;

	while (left > 0 && fb_now_ns() < deadline) {
		for (unsigned q = 0; q < k->nvq; q++) {
			uint32_t id;

			if (done[q] || fb_vq_poll_any(&k->vqs[q], &id, 1) == 0)
				continue;
			done[q] = true;
			left--;
			churn_check(k, o, n, q, st);
		}
		if (left > 0)
			sched_yield();
	}
	for (unsigned q = 0; q < k->nvq; q++) {
		if (done[q])
			continue;
		st->timeouts++;
		ok = false;
		fprintf(stderr,
			"femu-bench: connection %" PRIu64 " queue %u: request not completed within "
			"%u ms (the backend stopped the queue?)\n",
			n, q, o->timeout_ms);
		fb_vq_dump(&k->vqs[q], stderr);
	}
	return ok;
}

/* Stop k's queues but keep its socket open (the next connection overlaps it). */
static void churn_hold(struct churn_conn *k)
{
	fb_dev_stop_queues(&k->dev, k->vqs, k->nvq);
	k->stopped = true;
}

int fb_churn_run(const struct fb_opts *o)
{
	static struct churn_conn conns[2];
	struct churn_stats st = {0};
	uint64_t nblk = CHURN_MAX_BLOCKS;
	struct churn_conn *held = NULL;
	uint64_t t0 = fb_now_ns();

	for (uint64_t n = 0; n < o->connect_churn; n++) {
		struct churn_conn *k = &conns[n % 2];

		if (held != NULL)
			st.overlapped++;
		if (churn_open(k, o, n) != 0) {
			st.setup_failed++;
			churn_close(held);
			held = NULL;
			continue;
		}
		st.conns++;
		if (k->dev.capacity && k->dev.capacity / CHURN_BS < nblk)
			nblk = k->dev.capacity / CHURN_BS;
		if (nblk == 0) {
			fprintf(stderr, "femu-bench: the device is smaller than %u bytes\n",
				CHURN_BS);
			churn_close(k);
			return 3;
		}
		churn_submit(k, o, n, nblk);
		churn_wait(k, o, n, &st);
		churn_close(held);
		held = NULL;
		if (o->churn_overlap && n % 2 == 1) {
			churn_hold(k);
			held = k;
		} else {
			churn_close(k);
		}
		if (!o->quiet && (n + 1) % 1000 == 0)
			fprintf(stderr, "femu-bench: %" PRIu64 " connections\n", n + 1);
	}
	churn_close(held);
	printf("connect-churn: %" PRIu64 " connections (%" PRIu64 " overlapped), %u queues each, "
	       "%" PRIu64 " requests served; failed: %" PRIu64 " setups, %" PRIu64
	       " not completed, %" PRIu64 " bad status, %" PRIu64 " data mismatches; %.1f s\n",
	       st.conns, st.overlapped, o->queues, st.requests, st.setup_failed, st.timeouts,
	       st.bad_status, st.mismatches, (double)(fb_now_ns() - t0) / 1e9);
	return st.setup_failed || st.timeouts || st.bad_status || st.mismatches ? 1 : 0;
}
