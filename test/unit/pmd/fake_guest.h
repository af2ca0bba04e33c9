/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake_guest.h - a fake guest for pmd unit tests: two adjacent guest memory
 * regions backed by separate host buffers (so a buffer crossing 0x20000 is
 * host-discontiguous), a hole above them, descriptor-table builders and a
 * recording device model.
 */
#ifndef PMD_TEST_FAKE_GUEST_H
#define PMD_TEST_FAKE_GUEST_H

#include <stdint.h>

#include <linux/virtio_ring.h>
#include <rte_vhost.h>

#include "ftl/fm_model.h"
#include "pmd/blk_req.h"
#include "pmd/vq.h"

#define FG_A_GPA 0x10000ULL /* region A: [0x10000, 0x20000) */
#define FG_B_GPA 0x20000ULL /* region B: [0x20000, 0x30000) */
#define FG_REGION_SIZE 0x10000ULL
#define FG_HOLE_GPA 0x40000ULL /* nothing mapped here */

struct fake_guest {
	struct rte_vhost_memory *mem;
	uint8_t *a;
	uint8_t *b;
};

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t fg_now_ns(void);

void fg_init(struct fake_guest *g);
void fg_fini(struct fake_guest *g);
/* Host address of a guest physical address inside a region (test helper). */
void *fg_host(struct fake_guest *g, uint64_t gpa);
void fg_desc(struct vring_desc *d, uint64_t gpa, uint32_t len, uint16_t flags, uint16_t next);

/* Request i's buffers in region A: 16-byte header, 4 KiB of data, status byte. */
#define FG_REQ_HDR(i) (FG_A_GPA + 0x100 + 32 * (i))
#define FG_REQ_DATA(i) (FG_A_GPA + 0x1000 + 0x1000 * (i))
#define FG_REQ_STATUS(i) (FG_A_GPA + 0x800 + (i))

/*
 * Write a 4 KiB read of `sector` as request i: its header, a status byte of
 * 0xff, and the chain of descriptors 3i..3i+2 in desc.  Returns the head.
 */
uint16_t fg_read_chain(struct fake_guest *g, struct vring_desc *desc, unsigned i, uint64_t sector);
/* The same with len bytes of data (at most 4 KiB). */
uint16_t fg_read_chain_len(struct fake_guest *g, struct vring_desc *desc, unsigned i,
			   uint64_t sector, uint32_t len);

/* A prefetch hint the recording model got. */
struct fm_rec_pf {
	enum fm_op op;
	uint64_t offset;
	uint64_t len;
	unsigned before_submit; /* submit() calls made before this hint */
};

/* Recording model: remembers the last requests, returns status/due as set. */
#define FM_REC_MAX 32
struct fake_model {
	struct fm_model base;
	unsigned calls;
	struct fm_req req[FM_REC_MAX];
	uint64_t due_delta; /* submit returns now + due_delta */
	enum fm_status status;
	unsigned npf; /* prefetch hints (fake_model_pf_ops only) */
	struct fm_rec_pf pf[FM_REC_MAX];
	unsigned nidle;	     /* idle() calls (fake_model_idle_ops) */
	uint64_t idle_ns;    /* now_ns of the last one */
	bool idle_busy;	     /* what idle() returns: work of its own left */
	uint64_t offset_sum; /* of every request submitted, recorded or not */
	/* time a prefetch() spends (a hint that costs), and a submit() of a read not
	 * handed over as prefetched (a copy that waits for its misses), ns */
	uint64_t pf_spin_ns;
	uint64_t cold_spin_ns;
	/* time a submit() of a read handed over as prefetched spends when the hints
	 * recorded since npf was last zeroed cover less of it than its length (a
	 * copy that waits for the lines a near hint left to the hardware), ns */
	uint64_t part_spin_ns;
	/* time fg_run_near_trial() spends after each sweep served with the usual
	 * hints (a cost that shows only between sweeps), ns */
	uint64_t usual_gap_ns;
	/* called by submit() after recording (a driver adding requests meanwhile), or NULL */
	void (*on_submit)(struct fake_model *m, void *arg);
	void *on_submit_arg;
};
/* Busy for ns nanoseconds. */
void fake_spin(uint64_t ns);
extern const struct fm_model_ops fake_model_ops;
/* The same model with a recording prefetch op. */
extern const struct fm_model_ops fake_model_pf_ops;
/* With a counting idle op: single writer, and (_mw) not. */
extern const struct fm_model_ops fake_model_idle_ops;
extern const struct fm_model_ops fake_model_idle_mw_ops;

void fg_target(struct pmd_blk_target *t, struct fake_model *m, uint64_t capacity);

/* The split ring of the tests, in region B: desc +0, avail +0x1000, used +0x2000. */
struct fg_ring {
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
};
void fg_ring(struct fake_guest *g, struct fg_ring *r);

/* A queue of size entries over fg_ring's ring, indirect descriptors allowed. */
struct pmd_vq *fg_vq(struct fake_guest *g, const struct pmd_blk_target *t, uint16_t size,
		     bool event_idx, int callfd, int kickfd);

/*
 * The fixture the queue tests share: a fake guest, a target of capacity
 * bytes over a recording model, and the ring in region B.
 */
struct fg_env {
	struct fake_guest g;
	struct pmd_blk_target t;
	struct fake_model m;
	struct fg_ring r;
};
void fg_env_init(struct fg_env *e, uint64_t capacity);
void fg_env_fini(struct fg_env *e);
/* fg_vq over the fixture's guest, target and ring. */
struct pmd_vq *fg_env_vq(struct fg_env *e, uint16_t size, bool event_idx, int callfd, int kickfd);
/*
 * Write a read of len bytes of `sector` as request i (FG_REQ_* buffers,
 * status 0xff) on descriptors 3i..3i+2 and publish it at the fixture's
 * avail index (release store).  Returns the avail index before it.
 */
uint16_t fg_env_post_read(struct fg_env *e, uint16_t qsize, unsigned i, uint64_t sector,
			  uint32_t len);

/* Requests a window of the hint trial serves in sweeps of five: a warm-up sweep, then its count. */
#define FG_TRIAL_WINDOW_SERVED (5 + 5 * ((PMD_VQ_TUNE_WINDOW_REQS + 4) / 5))
/* The same for the near-hint trial's windows. */
#define FG_NEAR_WINDOW_SERVED (5 + 5 * ((PMD_VQ_TUNE_WINDOW_REQS_LARGE + 4) / 5))

/*
 * Sweeps of five 512 B reads (sweep_five(): post them, sweep, check their
 * completions; returns the sum of their byte offsets) on q, whose model m
 * records hints, until q's hint trial (vq_tune.h) ended, then 200 more:
 * every sweep hints exactly when the queue said it would, the four windows
 * without hints serve exactly their share, every request reaches the model
 * once, and the sweeps after the trial keep its outcome.  Returns whether
 * the trial turned hints off.
 */
bool fg_run_hint_trial(struct pmd_vq *q, struct fake_model *m, uint64_t (*sweep_five)(void));

/*
 * The same for the near-hint trial of large reads: sweeps of five 4 KiB
 * reads (sweep_five()) on q until its near trial ended, then 200 more:
 * every sweep hints as the queue said it would (near: each hint the first
 * PMD_VQ_HINT_NEAR_BYTES of a read, one per request after the first;
 * usual: hints of more than that), the four near windows serve exactly their
 * share, every request reaches the model once, the small-read trial never
 * runs, and the sweeps after the trial keep its outcome.  Returns whether
 * the trial took the near hints.
 */
bool fg_run_near_trial(struct pmd_vq *q, struct fake_model *m, uint64_t (*sweep_five)(void));

#endif
