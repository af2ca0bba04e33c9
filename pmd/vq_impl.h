/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_impl.h - what the split (vq.c) and packed (vq_packed.c) ring code of a
 * queue share: guest index loads and stores, the pending-completion heap,
 * request accounting, stopping a queue and sending a call.  Internal to
 * those two files.
 */
#ifndef PMD_VQ_IMPL_H
#define PMD_VQ_IMPL_H

#include <rte_common.h>
#include <rte_cycles.h>

#include "pmd/vq.h"

/*
 * The heap and accounting functions are static, not inline: each file's
 * compiler judges their inlining as it did when they were vq.c's own (the
 * split sweep's code stays what it was).
 */

static inline uint16_t ld16(const volatile uint16_t *p)
{
	return *p;
}

static inline void st16(volatile uint16_t *p, uint16_t v)
{
	*p = v;
}

/* Min-heap of pending completions ordered by due_ns. */
static __rte_unused void pmd_vq_heap_push(struct pmd_vq *q, const struct pmd_vq_pending *p)
{
	uint32_t i = q->nheap++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (q->heap[parent].due_ns <= p->due_ns)
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = *p;
}

static __rte_unused struct pmd_vq_pending pmd_vq_heap_pop(struct pmd_vq *q)
{
	struct pmd_vq_pending top = q->heap[0];
	struct pmd_vq_pending last = q->heap[--q->nheap];
	uint32_t n = q->nheap;
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && q->heap[c + 1].due_ns < q->heap[c].due_ns)
			c++;
		if (last.due_ns <= q->heap[c].due_ns)
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (n > 0)
		q->heap[i] = last;
	return top;
}

static __rte_unused void pmd_vq_account(struct pmd_vq *q, const struct pmd_blk_done *d)
{
	PMD_CTR_INC(q->st.requests);
	PMD_CTR_ADD(q->st.rd_bytes, d->rd_bytes);
	PMD_CTR_ADD(q->st.wr_bytes, d->wr_bytes);
	if (d->status != VIRTIO_BLK_S_OK)
		PMD_CTR_INC(q->st.errors);
}

/* A deferred completion posted late ns after its due time. */
static inline void pmd_vq_count_late(struct pmd_vq *q, uint64_t late)
{
	PMD_CTR_INC(q->st.deferred);
	if (late > PMD_LATE_NS) {
		PMD_CTR_INC(q->st.late);
		PMD_CTR_ADD(q->st.late_ns_sum, late);
		PMD_CTR_RAISE(q->st.late_ns_max, late);
	}
}

/* What the look-ahead hinted of a request (struct pmd_vq_hint_slot). */
enum pmd_vq_hint_state {
	PMD_VQ_HINT_NONE = 0, /* nothing, or not a read */
	PMD_VQ_HINT_FIRST,    /* a read's first part; the rest is kept in the slot */
	PMD_VQ_HINT_WHOLE,    /* a read's whole data range */
	PMD_VQ_HINT_TOUCHED,  /* nothing yet; where its header is, from the touch */
};

/*
 * Note in slot s what a data hint of h will cover: with near, a read's first
 * PMD_VQ_HINT_NEAR_BYTES and nothing more (h trimmed; handed over as
 * PMD_VQ_HINT_WHOLE: its copy leaves the rest to the hardware prefetcher);
 * with split, a read longer than PMD_VQ_HINT_SPLIT_BYTES is cut to its
 * first part (h trimmed, the rest kept in the slot: PMD_VQ_HINT_FIRST);
 * else a read whole (PMD_VQ_HINT_WHOLE) or nothing to hand over
 * (PMD_VQ_HINT_NONE).
 */
static inline void pmd_vq_hint_note(struct pmd_vq_hint_slot *s, struct pmd_chain_hint *h,
				    bool split, bool near)
{
	if (near && h->type == VIRTIO_BLK_T_IN) {
		if (h->data_len > PMD_VQ_HINT_NEAR_BYTES)
			h->data_len = PMD_VQ_HINT_NEAR_BYTES;
		s->state = PMD_VQ_HINT_WHOLE;
	} else if (split && h->type == VIRTIO_BLK_T_IN && h->data_len > PMD_VQ_HINT_SPLIT_BYTES) {
		/* field by field: a struct copy loads h wider than it was stored (no forwarding) */
		s->rest.type = h->type;
		s->rest.sector = h->sector + PMD_VQ_HINT_SPLIT_BYTES / 512;
		s->rest.data_len = h->data_len - PMD_VQ_HINT_SPLIT_BYTES;
		s->state = PMD_VQ_HINT_FIRST;
		h->data_len = PMD_VQ_HINT_SPLIT_BYTES;
	} else {
		s->state = h->type == VIRTIO_BLK_T_IN ? PMD_VQ_HINT_WHOLE : PMD_VQ_HINT_NONE;
	}
}

/* Stop serving q (logged once with why): a broken queue takes no request. */
void pmd_vq_break(struct pmd_vq *q, const char *why);

/* Write q's call eventfd (counted; a blocked fd stops the queue). */
void pmd_vq_call(struct pmd_vq *q);

/*
 * Call decisions are looked at again.  A driver re-enables calls by writing
 * its event (used_event, the avail flags, the driver event area), then,
 * after a full barrier, reads the used index or descriptor; the device
 * stores that, then after its own barrier reads the event.  Without the
 * driver's barrier both may read the other's old value: femud decides
 * against a call and the driver waits for one forever.  QEMU 7.2's
 * single-threaded TCG drops the guest's barriers (later QEMUs keep them),
 * so its guests hang now and then on any vhost-user backend.  So a publish
 * that sent no call arms a recheck PMD_VQ_CALL_RECHECK_NS after the start
 * of the next sweep (each such publish arms it again): by then the driver's
 * event is visible, and a call goes out if it names an entry published
 * since the last call (called_used; counted calls_late).  Not from the
 * deciding sweep's own clock, read before its decision: a sweep that took
 * longer than the delay (its poller preempted) would look again at once, and
 * could read the same old event.  A driver that stopped reaping completions
 * holds at most a ring's worth more, so the window is kept to the last size
 * entries.  Off the request path: one compare a sweep.
 */
#define PMD_VQ_CALL_RECHECK_NS 10000u
/* recheck_ns of a recheck whose delay starts with the next sweep */
#define PMD_VQ_RECHECK_ARMED UINT64_MAX

static inline void pmd_vq_recheck_arm(struct pmd_vq *q)
{
	q->recheck_ns = PMD_VQ_RECHECK_ARMED;
}

/* Is a recheck due at now_ns, a sweep's start?  The first after its arming starts its delay. */
static inline bool pmd_vq_recheck_due(struct pmd_vq *q, uint64_t now_ns)
{
	if (likely(q->recheck_ns == 0))
		return false;
	if (q->recheck_ns == PMD_VQ_RECHECK_ARMED) {
		q->recheck_ns = now_ns + PMD_VQ_CALL_RECHECK_NS;
		return false;
	}
	return now_ns >= q->recheck_ns;
}

/* A call (or a recheck) covered every entry published so far: nothing to look at again. */
static inline void pmd_vq_calls_covered(struct pmd_vq *q)
{
	q->called_used = q->used_idx;
	q->pk.called_descs = q->pk.used_descs;
	q->recheck_ns = 0;
}

/* A recheck ends: the late call when the driver wants one. */
static inline void pmd_vq_recheck_end(struct pmd_vq *q, bool need)
{
	pmd_vq_calls_covered(q);
	if (need) {
		pmd_vq_call(q);
		PMD_CTR_INC(q->st.calls_late);
	}
}

/*
 * The request count after which a sweep publishes, following one that took
 * n requests (PMD_VQ_PUBLISH_SHARE); PMD_VQ_BURST + 1: none (the byte bound only).
 */
static inline uint16_t pmd_vq_publish_every(bool packed, bool small, unsigned n)
{
	if (small && !packed)
		return PMD_VQ_BURST + 1;
	return (uint16_t)RTE_MAX(n / (packed ? PMD_VQP_PUBLISH_SHARE : PMD_VQ_PUBLISH_SHARE), 1u);
}

/*
 * Is a publish due within a sweep that took taken requests moving bytes
 * (PMD_VQ_PUBLISH_BYTES since the last, or q->publish_every requests)?
 * When it is, the last publish's marks move here.
 */
static inline bool pmd_vq_publish_due(const struct pmd_vq *q, uint64_t bytes, unsigned taken,
				      uint64_t *published, unsigned *published_at)
{
	if ((PMD_VQ_PUBLISH_BYTES == 0 || bytes - *published < PMD_VQ_PUBLISH_BYTES) &&
	    taken - *published_at < q->publish_every)
		return false;
	*published = bytes;
	*published_at = taken;
	return true;
}

/* Does the sweep about to start serve small requests (the last one's did)? */
static inline bool pmd_vq_sweep_small(const struct pmd_vq *q)
{
	return q->small;
}

/* The hint trial that measures q's sweep about to start: small requests' or large ones'. */
static inline struct pmd_vq_tune *pmd_vq_tune_of(struct pmd_vq *q)
{
	return pmd_vq_sweep_small(q) ? &q->tune : &q->tune_near;
}

/*
 * A take's start for the hint trials: the TSC when a trial measures this
 * sweep (one that hints), else 0.  No clock read outside trials.
 */
static inline uint64_t pmd_vq_tune_start(struct pmd_vq *q)
{
	if (likely(!pmd_vq_tune_measuring(pmd_vq_tune_of(q))) || !q->prefetch)
		return 0;
	return rte_rdtsc();
}

/* Forget every hint slot and the packed cursor: the look-ahead stopped and starts over. */
static inline void pmd_vq_hint_forget(struct pmd_vq *q)
{
	for (unsigned k = 0; k < PMD_VQ_HINT_SLOTS; k++)
		q->hint[k].state = PMD_VQ_HINT_NONE;
	q->pk.la_ahead = 0;
}

/*
 * The ticks a trial charges to a sweep that began at TSC t0 and ends now
 * (0 outside trials, t0 0).  The near trial charges the time since its last
 * measured sweep ended, the gap before this one included: what the usual
 * hints cost shows partly between sweeps, where the sweep's own time misses
 * it.  A gap from an earlier trial falls on a window's first sweep, which
 * no trial counts.
 */
static inline uint64_t pmd_vq_tune_ticks(struct pmd_vq *q, const struct pmd_vq_tune *t, uint64_t t0)
{
	uint64_t now, from = t0;

	if (t0 == 0)
		return 0;
	now = rte_rdtsc();
	if (t == &q->tune_near) {
		if (q->near_trial_tsc != 0)
			from = q->near_trial_tsc;
		q->near_trial_tsc = now;
	}
	return now - from;
}

/*
 * A sweep that began at TSC t0 (pmd_vq_tune_start()) served n requests:
 * the turn of the trial of its kind (vq_tune.h), whose outcome the next
 * sweeps of that kind follow.
 */
static inline void pmd_vq_tune_follow(struct pmd_vq *q, uint64_t t0, unsigned n)
{
	struct pmd_vq_tune *t = pmd_vq_tune_of(q);

	if (likely(!pmd_vq_tune_sweep(t, pmd_vq_tune_ticks(q, t, t0), n)))
		return;
	if (t == &q->tune_near) {
		PMD_CTR_INC(q->st.near_trials);
		if (t->alt)
			PMD_CTR_INC(q->st.near_trials_near);
		return;
	}
	PMD_CTR_INC(q->st.hint_trials);
	if (t->alt)
		PMD_CTR_INC(q->st.hint_trials_off);
}

/*
 * A sweep that began at TSC t0 (pmd_vq_tune_start()) served n requests
 * that moved bytes: whether the next sweep hints at all (small requests as
 * their trial says), how (small requests' reads near, large ones' near or
 * not as their trial says), its hint distance (after small requests
 * PMD_VQ_LOOKAHEAD_SMALL, on packed rings PMD_VQP_LOOKAHEAD_SMALL;
 * PMD_VQ_LOOKAHEAD_NEAR for large requests' near hints) and its publish
 * interval.
 */
static inline void pmd_vq_look_follow(struct pmd_vq *q, uint64_t bytes, unsigned n, uint64_t t0)
{
	bool small, hint, near;

	if (n == 0)
		return;
	if (q->prefetch)
		pmd_vq_tune_follow(q, t0, n);
	small = bytes < (uint64_t)n * PMD_VQ_SMALL_REQ_BYTES;
	near = small || pmd_vq_tune_alt(&q->tune_near);
	q->small = small;
	q->look = small	 ? (q->packed ? PMD_VQP_LOOKAHEAD_SMALL : PMD_VQ_LOOKAHEAD_SMALL)
		  : near ? PMD_VQ_LOOKAHEAD_NEAR
			 : PMD_VQ_LOOKAHEAD;
	q->publish_every = pmd_vq_publish_every(q->packed, small, n);
	hint = q->prefetch && (!small || !pmd_vq_tune_alt(&q->tune));
	if (hint != q->hinting || near != q->hint_near) {
		pmd_vq_hint_forget(q);
		q->hinting = hint;
		q->hint_near = near;
	}
}

/* The touch distance that goes with q's hint distance. */
static inline uint16_t pmd_vq_touch_ahead(const struct pmd_vq *q)
{
	return (uint16_t)(q->look + PMD_VQ_TOUCH_PAST_LOOK);
}

#endif /* PMD_VQ_IMPL_H */
