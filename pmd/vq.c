/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq.c - serving one split virtqueue on a poller (see vq.h).
 *
 * Ordering rules (virtio 1.1, 2.6): the avail index is read before the ring
 * entries it covers (rte_smp_rmb); status bytes and used entries are written
 * before the used index that publishes them (rte_smp_wmb); the used index is
 * stored before used_event / the avail flags are read to decide on a call
 * (rte_smp_mb).  Kicks are suppressed while the poller polls: with
 * EVENT_IDX avail_event is set one behind what was consumed, which never
 * falls inside the window the driver tests, and rewritten only when the
 * queue has moved PMD_VQ_AVAIL_EVENT_SLACK past it (vq.h); without it
 * VRING_USED_F_NO_NOTIFY is set.  An adaptive poller re-arms them before it
 * sleeps (pmd_vq_notify_arm) and suppresses them again when it wakes.
 * rte_vhost never writes these fields itself as long as
 * rte_vhost_enable_guest_notification() is not called (femud never does).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_atomic.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "pmd/pmd_log.h"
#include "pmd/pmd_measure.h"
#include "pmd/poller_watch.h"
#include "pmd/vq.h"
#include "pmd/vq_impl.h"
#include "pmd/vq_log.h"
#include "pmd/vq_packed.h"

/* The watchdog's posts of call fds it freed (poller_watch.h), read after a call write. */
int pmd_watch_rescued[PMD_MAX_POLLERS] __attribute__((aligned(64)));

static volatile uint16_t *avail_event_of(struct pmd_vq *q)
{
	return (volatile uint16_t *)&q->used->ring[q->size];
}

static volatile uint16_t *used_event_of(struct pmd_vq *q)
{
	return (volatile uint16_t *)&q->avail->ring[q->size];
}

void pmd_vq_notify_suppress(struct pmd_vq *q)
{
	if (q->packed) {
		pmd_vqp_notify_suppress(q);
		return;
	}
	if (q->event_idx) {
		q->avail_event = (uint16_t)(q->last_avail - 1);
		st16(avail_event_of(q), q->avail_event);
	} else {
		st16(&q->used->flags, ld16(&q->used->flags) | VRING_USED_F_NO_NOTIFY);
	}
	rte_smp_mb();
	if (unlikely(q->log))
		pmd_vq_log_used_split(q->vid, q->qid, q->size);
}

bool pmd_vq_notify_arm(struct pmd_vq *q)
{
	if (q->packed)
		return pmd_vqp_notify_arm(q);
	if (q->event_idx) {
		q->avail_event = q->last_avail;
		st16(avail_event_of(q), q->avail_event);
	} else {
		st16(&q->used->flags, ld16(&q->used->flags) & (uint16_t)~VRING_USED_F_NO_NOTIFY);
	}
	/* virtio 1.1, 2.6.10.1: the store above before the avail index is read */
	rte_smp_mb();
	if (unlikely(q->log))
		pmd_vq_log_used_split(q->vid, q->qid, q->size);
	return !q->broken && ld16(&q->avail->idx) != q->last_avail;
}

/* Zeroed, cache-aligned memory: rte_malloc on node, or libc. */
static void *vq_zalloc(size_t size, bool rte, int node)
{
	void *p = NULL;

	if (rte)
		return rte_zmalloc_socket("pmd_vq", size, RTE_CACHE_LINE_SIZE, node);
	if (posix_memalign(&p, RTE_CACHE_LINE_SIZE, size) != 0)
		return NULL;
	memset(p, 0, size);
	return p;
}

static void vq_mfree(void *p, bool rte)
{
	if (rte)
		rte_free(p);
	else
		free(p);
}

static struct pmd_vq *vq_alloc(const struct pmd_vq_setup *s, bool rte)
{
	struct pmd_vq *q = vq_zalloc(sizeof(*q), rte, s->node);

	if (q == NULL)
		return NULL;
	q->rte_mem = rte;
	q->heap = vq_zalloc(s->size * sizeof(*q->heap), rte, s->node);
	q->resubmit = vq_zalloc((s->nresubmit + 1u) * sizeof(*q->resubmit), rte, s->node);
	if (s->packed) {
		q->pk.num = vq_zalloc(s->size * sizeof(*q->pk.num), rte, s->node);
		q->pk.entry = vq_zalloc(s->size * sizeof(*q->pk.entry), rte, s->node);
		q->pk.replay = vq_zalloc(s->size * sizeof(*q->pk.replay), rte, s->node);
	}
	if (q->heap == NULL || q->resubmit == NULL ||
	    (s->packed && (q->pk.num == NULL || q->pk.entry == NULL || q->pk.replay == NULL))) {
		pmd_vq_free(q);
		return NULL;
	}
	return q;
}

struct pmd_vq *pmd_vq_create(const struct pmd_vq_setup *s)
{
	struct pmd_vq *q = s->on_node ? vq_alloc(s, true) : NULL;

	/* rte_malloc may have no memory on that node: fall back to libc */
	if (q == NULL)
		q = vq_alloc(s, false);
	if (q == NULL)
		return NULL;
	if (s->nresubmit > 0)
		memcpy(q->resubmit, s->resubmit, s->nresubmit * sizeof(*q->resubmit));
	q->nresubmit = s->nresubmit;
	q->inflight = s->inflight;
	q->log = s->log;
	q->vid = s->vid;
	q->qid = s->qid;
	q->packed = s->packed;
	q->desc = s->desc;
	q->avail = s->avail;
	q->used = s->used;
	q->mem = s->mem;
	q->target = s->target;
	q->size = s->size;
	q->mask = (uint16_t)(s->size - 1);
	q->last_avail = s->last_avail;
	q->used_idx = s->last_used;
	q->signalled_used = s->last_used;
	q->called_used = s->last_used;
	q->callfd = s->callfd;
	q->kickfd = s->kickfd;
	q->event_idx = s->event_idx;
	q->indirect = s->indirect;
	q->avail_event_slack =
	    s->size <= PMD_VQ_AVAIL_EVENT_MAX_SIZE ? PMD_VQ_AVAIL_EVENT_SLACK : 0;
	q->prefetch = s->target->ops->prefetch != NULL;
	q->hinting = q->prefetch;
	pmd_vq_tune_init(&q->tune, PMD_VQ_TUNE_WINDOW_REQS);
	pmd_vq_tune_init(&q->tune_near, PMD_VQ_TUNE_WINDOW_REQS_LARGE);
	q->look = PMD_VQ_LOOKAHEAD;
	q->publish_every = PMD_VQ_BURST + 1;
	q->idle = pmd_blk_req_wants_idle(s->target);
	q->guess_hdr = &q->guess_head; /* nothing served yet: any readable address */
	q->name = "";
	if (s->packed)
		pmd_vqp_setup(q, s);
	pmd_vq_notify_suppress(q);
	return q;
}

void pmd_vq_free(struct pmd_vq *q)
{
	if (q == NULL)
		return;
	vq_mfree(q->heap, q->rte_mem);
	vq_mfree(q->resubmit, q->rte_mem);
	vq_mfree(q->pk.num, q->rte_mem);
	vq_mfree(q->pk.entry, q->rte_mem);
	vq_mfree(q->pk.replay, q->rte_mem);
	vq_mfree(q, q->rte_mem);
}

static void vq_break(struct pmd_vq *q, const char *why)
{
	q->broken = true;
	PMD_CTR_INC(q->st.broken);
	PMD_LOG(WARNING, "%s queue %u (connection %d): %s; queue stopped", q->name, q->qid, q->vid,
		why);
}

/*
 * Write the status byte and a used entry.  The used index is published
 * later for the whole sweep, except with inflight tracking: then each
 * request's used index is published before its inflight entry is cleared,
 * so that a restarted backend can tell done from not done.  With log (a
 * constant in each caller: the sweep is built once with and once without
 * logging) the status byte's page is marked; the used ring is marked once
 * per sweep.
 */
static inline __attribute__((always_inline)) void vq_complete(struct pmd_vq *q, uint16_t head,
							      uint8_t *status, uint8_t st,
							      uint32_t used_len, const bool log)
{
	struct vring_used_elem *e = &q->used->ring[q->used_idx & q->mask];

	*(volatile uint8_t *)status = st;
	if (log)
		pmd_vq_log_hva(q->vid, q->mem, status, 1);
	if (q->inflight)
		rte_vhost_set_last_inflight_io_split(q->vid, q->qid, head);
	e->id = head;
	e->len = used_len;
	q->used_idx++;
	if (q->inflight) {
		rte_smp_wmb();
		st16(&q->used->idx, q->used_idx);
		rte_vhost_clr_inflight_desc_split(q->vid, q->qid, q->used_idx, head);
	}
}

static inline __attribute__((always_inline)) unsigned vq_post_due(struct pmd_vq *q, uint64_t now,
								  const bool log)
{
	unsigned n = 0;

	while (q->nheap > 0 && q->heap[0].due_ns <= now) {
		struct pmd_vq_pending p = pmd_vq_heap_pop(q);
		uint64_t late = now - p.due_ns;

		vq_complete(q, p.head, p.status, p.st, p.used_len, log);
		pmd_vq_count_late(q, late);
		n++;
	}
	return n;
}

/*
 * A driver whose free list is last in, first out (Linux's split ring,
 * femu-bench) builds its next request on the chain it got back last: at low
 * queue depth on the same head and header.  The driver wrote those lines
 * since femud last read them, so fetching them only once the avail entry has
 * named the head puts their transfer from the driver's CPU after the avail
 * entry's; asked for as soon as the avail index moved, both overlap.  A
 * wrong guess costs two prefetches of lines femud read before (a prefetch
 * never faults, so a guess left from an older memory table is harmless).
 * Not the status line: fetching it for writing (prefetchw) measured slower
 * at QD1.
 */
static inline void vq_prefetch_guess(const struct pmd_vq *q)
{
	rte_prefetch0(&q->desc[q->guess_head]);
	rte_prefetch0(q->guess_hdr);
}

static inline void vq_guess_remember(struct pmd_vq *q, uint16_t head, const struct pmd_chain *c)
{
	q->guess_head = head; /* < q->size: the walk checked it */
	if (c->hdr_at != NULL)
		q->guess_hdr = c->hdr_at;
}

/*
 * Serve one request at head, its data hinted to the model already when
 * hinted; false when the queue had to stop.  Always inlined into the take
 * loop, as vq_complete() into it: each call is a measurable share of a
 * small request.
 */
static inline __attribute__((always_inline)) bool vq_serve(struct pmd_vq *q, uint16_t head,
							   bool hinted, uint64_t now,
							   struct pmd_chain *c, const bool log)
{
	const struct pmd_chain_ring ring = {
	    .desc = q->desc, .size = q->size, .indirect_ok = q->indirect};
	PMD_COST_WATCH(w, q->st);
	enum pmd_chain_result r = pmd_chain_parse(q->mem, &ring, head, c);
	struct pmd_blk_done d;

	PMD_COST_LAP(w, q->st, validate);
	if (r == PMD_CHAIN_BROKEN) {
		vq_break(q, c->why);
		return false;
	}
	vq_guess_remember(q, head, c);
	if (hinted)
		c->fm_flags |= FM_REQ_PREFETCHED;
	pmd_blk_req_exec(q->target, c, r, now, &d);
	/* the model moved the data now: a read's data, an ID string */
	if (log && r == PMD_CHAIN_OK && c->nwr > 0)
		pmd_vq_log_iov(q->vid, q->mem, &c->iov[c->nrd], c->nwr);
	PMD_COST_LAP(w, q->st, model);
	pmd_vq_account(q, &d);
	if (d.due_ns <= now) {
		vq_complete(q, head, c->status, d.status, d.used_len, log);
	} else {
		const struct pmd_vq_pending p = {.due_ns = d.due_ns,
						 .status = c->status,
						 .used_len = d.used_len,
						 .head = head,
						 .st = d.status};

		pmd_vq_heap_push(q, &p);
	}
	PMD_COST_LAP(w, q->st, complete);
	return true;
}

/* Replay requests a previous backend took but never completed. */
static unsigned vq_resubmit(struct pmd_vq *q, uint64_t now, struct pmd_chain *c)
{
	unsigned n = 0;

	while (q->resubmit_pos < q->nresubmit && q->nheap < q->size) {
		if (!vq_serve(q, q->resubmit[q->resubmit_pos++], false, now, c, q->log))
			break;
		PMD_CTR_INC(q->st.resubmitted);
		n++;
	}
	return n;
}

_Static_assert(PMD_VQ_HINT_SLOTS > PMD_VQ_TOUCH_AHEAD_SMALL + 1 &&
		   PMD_VQ_HINT_SLOTS > PMD_VQ_LOOKAHEAD_NEAR + PMD_VQ_TOUCH_PAST_LOOK + 1 &&
		   PMD_VQP_LOOKAHEAD_SMALL > 0 &&
		   (PMD_VQ_HINT_SLOTS & (PMD_VQ_HINT_SLOTS - 1)) == 0,
	       "a touched request's hint slot must not be one still in use");

static inline struct pmd_vq_hint_slot *vq_hint_slot(struct pmd_vq *q, uint16_t idx)
{
	return &q->hint[idx & (PMD_VQ_HINT_SLOTS - 1)];
}

/* Was the read in avail slot idx hinted whole?  Clears the slot. */
static inline bool vq_hinted_take(struct pmd_vq *q, uint16_t idx)
{
	struct pmd_vq_hint_slot *s = vq_hint_slot(q, idx);
	bool hinted = s->state == PMD_VQ_HINT_WHOLE && s->idx == idx;

	s->state = PMD_VQ_HINT_NONE;
	return hinted;
}

/* Hand one data hint to the model, near or not (cost builds time it apart). */
static void vq_hint(struct pmd_vq *q, const struct pmd_chain_hint *h, bool near)
{
	PMD_COST_WATCH(w, q->st);

	pmd_blk_req_prefetch(q->target, h, near);
	PMD_COST_LAP(w, q->st, hint);
}

/*
 * Peek at the request in avail slot idx and hand its data range to the
 * model; with split, a read longer than PMD_VQ_HINT_SPLIT_BYTES only its
 * first part, the rest kept for vq_prefetch_rest().
 */
static void vq_prefetch(struct pmd_vq *q, uint16_t idx, bool split)
{
	const struct pmd_chain_ring ring = {
	    .desc = q->desc, .size = q->size, .indirect_ok = q->indirect};
	struct pmd_vq_hint_slot *s = vq_hint_slot(q, idx);
	struct pmd_chain_hint h;

	if (s->state == PMD_VQ_HINT_TOUCHED && s->idx == idx)
		pmd_chain_peek_touched(&s->touched, &h);
	else if (!pmd_chain_peek(q->mem, &ring, ld16(&q->avail->ring[idx & q->mask]), &h))
		return;
	s->idx = idx;
	pmd_vq_hint_note(s, &h, split, q->hint_near);
	vq_hint(q, &h, q->hint_near);
}

/* The second part of the split hint of the request in avail slot idx, if it has one. */
static inline void vq_prefetch_rest(struct pmd_vq *q, uint16_t idx)
{
	struct pmd_vq_hint_slot *s = vq_hint_slot(q, idx);

	if (s->state != PMD_VQ_HINT_FIRST || s->idx != idx)
		return;
	s->state = PMD_VQ_HINT_WHOLE;
	vq_hint(q, &s->rest, false);
}

/*
 * The lines the peek of the request in avail slot idx will load; where they
 * are is kept in its hint slot, so that the peek reads the header and the
 * data descriptor without walking the chain again (PMD_VQ_TOUCH_AHEAD).
 */
static inline void vq_touch(struct pmd_vq *q, uint16_t idx)
{
	const struct pmd_chain_ring ring = {
	    .desc = q->desc, .size = q->size, .indirect_ok = q->indirect};
	struct pmd_vq_hint_slot *s = vq_hint_slot(q, idx);

	/* the slot's last user, a round of slots back, was served: what it left is done with */
	pmd_chain_touch(q->mem, &ring, ld16(&q->avail->ring[idx & q->mask]), &s->touched);
	s->idx = idx;
	s->state = s->touched.hdr != NULL ? PMD_VQ_HINT_TOUCHED : PMD_VQ_HINT_NONE;
}

/*
 * Touch requests q->look up to the touch distance (excluded) and prefetch
 * requests 1..q->look-1 of a burst of n (the loop then stays
 * ahead).  Not request 0: it is served at once, a hint could not run
 * ahead of its copy and only costs time (QD1 latency measured worse).
 */
static inline __attribute__((always_inline)) void vq_prefetch_start(struct pmd_vq *q, uint16_t n)
{
	const uint16_t touch = pmd_vq_touch_ahead(q);
	uint16_t k;

	for (k = q->look; k < n && k < touch; k++)
		vq_touch(q, (uint16_t)(q->last_avail + k));
	for (k = 1; k < n && k < q->look; k++)
		vq_prefetch(q, (uint16_t)(q->last_avail + k), false);
}

/*
 * Store the used index once PMD_VQ_PUBLISH_BYTES moved or q->publish_every
 * requests were taken since the last store (no call: vq_publish_notify()
 * decides that for the whole sweep).  Without it a driver that keeps QD32
 * 4 KiB requests in flight cannot refill until the sweep ends, and both
 * sides wait for each other in turn.
 */
static inline void vq_publish_early(struct pmd_vq *q, uint64_t bytes, unsigned taken,
				    uint64_t *published, unsigned *published_at)
{
	if (q->inflight || !pmd_vq_publish_due(q, bytes, taken, published, published_at))
		return;
	rte_smp_wmb();
	st16(&q->used->idx, q->used_idx);
}

/*
 * Polling with EVENT_IDX: move avail_event up to one behind last_avail once
 * it fell avail_event_slack behind (kicks stay suppressed either way).
 */
static inline void vq_avail_event_follow(struct pmd_vq *q)
{
	uint16_t behind = (uint16_t)(q->last_avail - 1 - q->avail_event);

	if (q->event_idx && behind != 0 && behind >= q->avail_event_slack) {
		q->avail_event = (uint16_t)(q->last_avail - 1);
		st16(avail_event_of(q), q->avail_event);
	}
}

/*
 * The look-ahead reached the end of a burst of n with i served: extend the
 * burst (up to PMD_VQ_BURST) by requests the driver added since the sweep
 * began, so that they are hinted ahead like the rest instead of opening the
 * next sweep cold (there the first request gets no hint and the next three
 * a late one).  A QD32 driver refills about 16 requests at a time (the early
 * used index store), so without it a quarter of its requests began a burst.
 * Only for bursts of requests larger than PMD_VQ_EXTEND_MIN_AVG_BYTES on
 * average: small ones get short hints, and their sweep stores the used
 * index only at its end, which a longer sweep would delay (512 B requests
 * measured slower with every burst extended).
 */
static inline uint16_t vq_burst_extend(struct pmd_vq *q, uint16_t i, uint16_t n)
{
	uint16_t unserved = (uint16_t)(ld16(&q->avail->idx) - q->last_avail);
	uint16_t total;

	if (unserved > q->size)
		return n; /* the next sweep's check stops the queue */
	total = (uint16_t)(i + unserved);
	if (total > PMD_VQ_BURST)
		total = PMD_VQ_BURST;
	if (total <= n)
		return n;
	rte_smp_rmb();
	return total;
}

static inline __attribute__((always_inline)) unsigned vq_take(struct pmd_vq *q, uint64_t now,
							      struct pmd_chain *c, const bool log)
{
	PMD_COST_WATCH(w, q->st);
	uint16_t avail_idx = ld16(&q->avail->idx);
	uint16_t n = (uint16_t)(avail_idx - q->last_avail);
	uint64_t bytes = 0, published = 0;
	const uint16_t look = q->look, touch = pmd_vq_touch_ahead(q);
	const bool hint = q->hinting;
	unsigned published_at = 0;
	uint64_t t0;
	uint16_t i;

	if (n == 0)
		return 0;
	if (n > q->size) {
		vq_break(q, "avail index moved by more than the queue size");
		return 0;
	}
	if (n > PMD_VQ_BURST)
		n = PMD_VQ_BURST;
	t0 = pmd_vq_tune_start(q);
	if (PMD_VQ_GUESS)
		vq_prefetch_guess(q);
	rte_smp_rmb();
	if (hint)
		vq_prefetch_start(q, n);
	PMD_COST_LAP(w, q->st, ring);
	for (i = 0; i < n && q->nheap < q->size && bytes < PMD_VQ_BURST_BYTES; i++) {
		uint16_t head;

		PMD_COST_RESTART(w, q->st);
		head = ld16(&q->avail->ring[q->last_avail & q->mask]);
		if (hint && i + look == n && n < PMD_VQ_BURST &&
		    bytes > (uint64_t)i * PMD_VQ_EXTEND_MIN_AVG_BYTES)
			n = vq_burst_extend(q, i, n);
		if (hint && i + touch < n)
			vq_touch(q, (uint16_t)(q->last_avail + touch));
		if (hint && i + look < n)
			vq_prefetch(q, (uint16_t)(q->last_avail + look), true);
		if (hint && i + PMD_VQ_HINT_REST_AHEAD < n)
			vq_prefetch_rest(q, (uint16_t)(q->last_avail + PMD_VQ_HINT_REST_AHEAD));

		if (q->inflight && head < q->size)
			rte_vhost_set_inflight_desc_split(q->vid, q->qid, head);
		PMD_COST_LAP(w, q->st, ring);
		if (!vq_serve(q, head, hint && vq_hinted_take(q, q->last_avail), now, c, log))
			break;
		q->last_avail++;
		bytes += c->rd_len + c->wr_len;
		vq_publish_early(q, bytes, i + 1u, &published, &published_at);
	}
	vq_avail_event_follow(q);
	pmd_vq_look_follow(q, bytes, i, t0);
	return i;
}

void pmd_vq_break(struct pmd_vq *q, const char *why)
{
	vq_break(q, why);
}

/* Write the call eventfd; a failed write is counted (the control path reports it). */
static void vq_call(struct pmd_vq *q)
{
	static const uint64_t one = 1;

	if (likely(write(q->callfd, &one, sizeof(one)) == sizeof(one)))
		PMD_CTR_INC(q->st.calls);
	else
		PMD_CTR_INC(q->st.call_errors);
	if (unlikely(pmd_watch_take_rescue(q->poller, q->callfd)))
		vq_break(q, "its call eventfd blocked the poller's write (the frontend made it "
			    "blocking and filled its counter)");
}

void pmd_vq_call(struct pmd_vq *q)
{
	vq_call(q);
}

void pmd_vq_base(const struct pmd_vq *q, uint16_t *last_avail, uint16_t *last_used)
{
	*last_avail = q->last_avail;
	*last_used = q->used_idx;
	if (q->packed) {
		*last_avail |= (uint16_t)(q->pk.avail_wrap << 15);
		*last_used |= (uint16_t)(q->pk.used_wrap << 15);
	}
}

void pmd_vq_position(const struct pmd_vq *q, uint16_t *avail_next, uint16_t *used_next,
		     uint32_t *pending)
{
	uint16_t replays = (uint16_t)(__atomic_load_n(&q->nresubmit, __ATOMIC_RELAXED) -
				      __atomic_load_n(&q->resubmit_pos, __ATOMIC_RELAXED));

	/* used first: avail_next - used_next then never reads below zero */
	*used_next = __atomic_load_n(&q->used_idx, __ATOMIC_ACQUIRE);
	*avail_next = __atomic_load_n(&q->last_avail, __ATOMIC_ACQUIRE);
	*pending = __atomic_load_n(&q->nheap, __ATOMIC_RELAXED) + replays;
}

void pmd_vq_notify_start(struct pmd_vq *q)
{
	if (q->callfd >= 0)
		vq_call(q);
	pmd_vq_calls_covered(q);
}

/* Does the driver want a call for the used entries from old on (vq_impl.h)? */
static inline bool vq_need_call(struct pmd_vq *q, uint16_t old)
{
	if (q->event_idx)
		return vring_need_event(ld16(used_event_of(q)), q->used_idx, old);
	return !(ld16(&q->avail->flags) & VRING_AVAIL_F_NO_INTERRUPT);
}

/* A publish sent no call: look again later, over at most the last size entries. */
static inline void vq_recheck_arm(struct pmd_vq *q)
{
	if ((uint16_t)(q->used_idx - q->called_used) > q->size)
		q->called_used = (uint16_t)(q->used_idx - q->size);
	pmd_vq_recheck_arm(q);
}

/* The recheck (vq_impl.h): a call for what was published since the last one, if wanted. */
static __attribute__((noinline, cold)) void vq_recheck(struct pmd_vq *q)
{
	pmd_vq_recheck_end(q, q->used_idx != q->called_used && vq_need_call(q, q->called_used));
}

/* Publish used->idx and send at most one call if the guest asked for it. */
static void vq_publish_notify(struct pmd_vq *q)
{
	uint16_t old = q->signalled_used;
	bool need;

	rte_smp_wmb();
	st16(&q->used->idx, q->used_idx);
	if (q->callfd < 0) {
		/* a poll queue: no call to decide, so no used_event to read */
		q->signalled_used = q->used_idx;
		return;
	}
	rte_smp_mb();
	need = vq_need_call(q, old);
	q->signalled_used = q->used_idx;
	if (need) {
		vq_call(q);
		pmd_vq_calls_covered(q);
	} else {
		PMD_CTR_INC(q->st.calls_saved);
		vq_recheck_arm(q);
	}
}

/*
 * One sweep; built twice (log is a constant in each): without logging it is
 * the request path as if logging did not exist, with it every write into
 * guest memory is marked (vq_log.h).
 */
static inline __attribute__((always_inline)) unsigned
vq_sweep(struct pmd_vq *q, uint64_t now_ns, struct pmd_chain *scratch, const bool log)
{
	uint16_t used_before = q->used_idx;
	unsigned work = 0, taken = 0;

	if (q->nheap > 0 && q->heap[0].due_ns <= now_ns)
		work += vq_post_due(q, now_ns, log);
	if (unlikely(q->resubmit_pos < q->nresubmit) && !q->broken)
		work += vq_resubmit(q, now_ns, scratch);
	if (!q->broken)
		taken = vq_take(q, now_ns, scratch, log);
	if (taken == 0 && q->idle)
		q->model_busy = pmd_blk_req_idle(q->target, now_ns);
	work += taken;
	if (q->used_idx != used_before) {
		PMD_COST_WATCH(w, q->st);

		vq_publish_notify(q);
		PMD_COST_LAP(w, q->st, publish);
		PMD_COST_COUNT(q->st, sweeps);
	} else if (pmd_vq_recheck_due(q, now_ns)) {
		vq_recheck(q);
	}
	/* used entries, the used index, avail_event (moved by a take) */
	if (log && (q->used_idx != used_before || taken > 0))
		pmd_vq_log_used_split(q->vid, q->qid, q->size);
	return work;
}

/* A queue started while its frontend logs dirty pages (migration): rarely taken. */
static __attribute__((noinline)) unsigned vq_sweep_logged(struct pmd_vq *q, uint64_t now_ns,
							  struct pmd_chain *scratch)
{
	return vq_sweep(q, now_ns, scratch, true);
}

FM_HOT_TEXT unsigned pmd_vq_sweep_split(struct pmd_vq *q, uint64_t now_ns,
					struct pmd_chain *scratch)
{
	if (unlikely(q->log))
		return vq_sweep_logged(q, now_ns, scratch);
	return vq_sweep(q, now_ns, scratch, false);
}

void pmd_vq_flush(struct pmd_vq *q, uint64_t now_ns, struct pmd_chain *scratch)
{
	uint16_t used_before = q->used_idx;

	if (q->packed) {
		pmd_vqp_flush(q, now_ns, scratch);
		return;
	}
	do {
		if (q->resubmit_pos < q->nresubmit && !q->broken)
			vq_resubmit(q, now_ns, scratch);
		while (q->nheap > 0) {
			struct pmd_vq_pending p = pmd_vq_heap_pop(q);

			vq_complete(q, p.head, p.status, p.st, p.used_len, q->log);
			PMD_CTR_INC(q->st.deferred);
			if (p.due_ns < now_ns && now_ns - p.due_ns > PMD_LATE_NS)
				PMD_CTR_INC(q->st.late);
		}
	} while (q->resubmit_pos < q->nresubmit && !q->broken);
	if (q->used_idx != used_before)
		vq_publish_notify(q);
	/* a stop for GET_VRING_BASE: the frontend's last log sync comes after the reply */
	if (q->log && q->used_idx != used_before)
		pmd_vq_log_used_split(q->vid, q->qid, q->size);
}
