/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_packed.c - serving one packed virtqueue on a poller (see vq_packed.h).
 *
 * Owns: taking available chains from the descriptor ring (a descriptor at
 * the next position is available when its AVAIL flag equals the avail wrap
 * counter and its USED flag differs), writing used descriptors in place at
 * the device's used position (buffer id, length, then both flags equal to
 * the used wrap counter; the position then skips the chain's ring
 * descriptors, whichever buffer completed), the event suppression areas and
 * inflight tracking of packed rings.  Shares with the split ring (vq.c,
 * vq_impl.h) the request execution (blk_req), the chain consumer
 * (vq_chain.c), the due-time heap, accounting and calls.
 *
 * Ordering (virtio 1.2, 2.8.21): a descriptor's flags are read before its
 * other fields (rte_smp_rmb); the status byte and a used descriptor's id and
 * length are written before its flags (rte_smp_wmb); the used flags before
 * the driver event area is read for a call decision (rte_smp_mb).
 * Guest memory this file writes: the status byte and used descriptors
 * (vqp_complete), the device event area (vqp_device_event); while the
 * frontend logs dirty pages (q->log, live migration) each of those writes
 * and every request's payload is marked in its log (vq_log.h).
 */
#include <string.h>

#include <rte_atomic.h>
#include <rte_common.h>
#include <rte_prefetch.h>

#include "pmd/pmd_log.h"
#include "pmd/pmd_measure.h"
#include "pmd/vq.h"
#include "pmd/vq_impl.h"
#include "pmd/vq_log.h"
#include "pmd/vq_packed.h"

/* Move a ring position by n (<= size) entries, flipping its wrap counter at the end. */
static inline void vqp_step(uint16_t *pos, bool *wrap, uint16_t n, uint16_t size)
{
	uint32_t p = (uint32_t)*pos + n;

	if (p >= size) {
		p -= size;
		*wrap = !*wrap;
	}
	*pos = (uint16_t)p;
}

/*
 * Post the completion of buffer id: status byte, then its used descriptor
 * at the used position (id and length, then the flags that publish it).
 * With inflight tracking the region's used position moves first and the
 * entry is cleared after (rte_vhost's packed order), so that a restarted
 * backend can tell done from not done.
 */
static inline __attribute__((always_inline)) void
vqp_complete(struct pmd_vq *q, uint16_t id, uint8_t *status, uint8_t st, uint32_t used_len)
{
	struct vring_packed_desc *d = &q->desc_packed[q->used_idx];
	uint16_t flags = q->pk.used_wrap ? (uint16_t)(PMD_PACKED_F_AVAIL | PMD_PACKED_F_USED) : 0;

	*(volatile uint8_t *)status = st;
	if (q->inflight)
		rte_vhost_set_last_inflight_io_packed(q->vid, q->qid, q->pk.entry[id]);
	d->id = id;
	d->len = used_len;
	if (PMD_VQP_BATCH && !q->pk.pub_pending && !q->inflight) {
		/* the batch's first: its flags publish the batch (vqp_publish) */
		q->pk.pub_pending = true;
		q->pk.pub_pos = q->used_idx;
		q->pk.pub_flags = flags;
	} else {
		rte_smp_wmb();
		st16(&d->flags, flags);
	}
	if (unlikely(q->log)) {
		pmd_vq_log_hva(q->vid, q->mem, status, 1);
		pmd_vq_log_hva(q->vid, q->mem, d, sizeof(*d));
	}
	vqp_step(&q->used_idx, &q->pk.used_wrap, q->pk.num[id], q->size);
	q->pk.used_descs += q->pk.num[id];
	q->pk.completed++;
	if (q->inflight)
		rte_vhost_clr_inflight_desc_packed(q->vid, q->qid, q->pk.entry[id]);
}

/*
 * Publish the used descriptors written since the last publish: store the
 * first one's flags (the driver reads used descriptors in ring order, so
 * those after it stay unseen until then, virtio 1.2 2.8.21.1).  Every sweep
 * ends with one, before its call decision.
 */
static inline void vqp_publish(struct pmd_vq *q)
{
	struct vring_packed_desc *d;

	if (!q->pk.pub_pending)
		return;
	q->pk.pub_pending = false;
	d = &q->desc_packed[q->pk.pub_pos];
	rte_smp_wmb();
	st16(&d->flags, q->pk.pub_flags);
	/* after the store: a page marked before it could be copied without it */
	if (unlikely(q->log))
		pmd_vq_log_hva(q->vid, q->mem, d, sizeof(*d));
}

static unsigned vqp_post_due(struct pmd_vq *q, uint64_t now)
{
	unsigned n = 0;

	while (q->nheap > 0 && q->heap[0].due_ns <= now) {
		struct pmd_vq_pending p = pmd_vq_heap_pop(q);

		vqp_complete(q, p.head, p.status, p.st, p.used_len);
		pmd_vq_count_late(q, now - p.due_ns);
		n++;
	}
	return n;
}

/*
 * Execute the chain parsed into c (result r, buffer id, nring ring
 * descriptors) and complete it now or when due; false when the queue had to
 * stop.
 */
static bool vqp_exec(struct pmd_vq *q, enum pmd_chain_result r, uint16_t id, uint16_t nring,
		     uint64_t now, struct pmd_chain *c)
{
	struct pmd_blk_done d;

	if (r == PMD_CHAIN_BROKEN) {
		pmd_vq_break(q, c->why);
		return false;
	}
	q->pk.num[id] = nring;
	pmd_blk_req_exec(q->target, c, r, now, &d);
	/* the model moved the data now: a read's data, an ID string */
	if (unlikely(q->log) && r == PMD_CHAIN_OK && c->nwr > 0)
		pmd_vq_log_iov(q->vid, q->mem, &c->iov[c->nrd], c->nwr);
	pmd_vq_account(q, &d);
	if (d.due_ns <= now) {
		vqp_complete(q, id, c->status, d.status, d.used_len);
	} else {
		const struct pmd_vq_pending p = {.due_ns = d.due_ns,
						 .status = c->status,
						 .used_len = d.used_len,
						 .head = id,
						 .st = d.status};

		pmd_vq_heap_push(q, &p);
	}
	return true;
}

/*
 * Serve the chain at the next avail position (seen available) and step past
 * its *nring ring descriptors; false when the queue stopped.
 */
static bool vqp_serve(struct pmd_vq *q, uint64_t now, bool hinted, struct pmd_chain *c,
		      uint16_t *nring_out)
{
	const struct pmd_chain_pring ring = {.desc = q->desc_packed,
					     .size = q->size,
					     .indirect_ok = q->indirect,
					     .check_wrap = true};
	uint16_t id = 0, nring = 0;
	enum pmd_chain_result r =
	    pmd_chain_parse_packed(q->mem, &ring, q->last_avail, q->pk.avail_wrap, c, &id, &nring);

	if (r != PMD_CHAIN_BROKEN && q->inflight) {
		uint16_t last = (uint16_t)((q->last_avail + nring - 1) & q->mask);

		rte_vhost_set_inflight_desc_packed(q->vid, q->qid, q->last_avail, last,
						   &q->pk.entry[id]);
	}
	if (c->hdr_at != NULL)
		q->guess_hdr = c->hdr_at;
	if (hinted)
		c->fm_flags |= FM_REQ_PREFETCHED;
	if (!vqp_exec(q, r, id, nring, now, c))
		return false;
	vqp_step(&q->last_avail, &q->pk.avail_wrap, nring, q->size);
	*nring_out = nring;
	return true;
}

/*
 * The look-ahead (a model with a prefetch op): the split sweep's, on a ring
 * whose chains are found by walking it.  A cursor walks the chains after
 * last_avail as the driver makes them available, up to the touch distance
 * (PMD_VQ_TOUCH_AHEAD, or _SMALL after small requests), touching each (its
 * header's line asked for, where the header and the data descriptor are
 * noted in its hint slot); the chain q->look ahead gets its data hinted to
 * the model (a read's first PMD_VQ_HINT_SPLIT_BYTES, the rest
 * PMD_VQP_HINT_REST_AHEAD ahead), and a read hinted whole is served with
 * FM_REQ_PREFETCHED.  The cursor stays between sweeps; it never walks more
 * than the ring's size past last_avail and restarts there when the chain
 * served is not the one it walked (the driver rewrote an available chain:
 * only hints were wrong).
 */
static inline struct pmd_vq_hint_slot *vqp_slot(struct pmd_vq *q, uint16_t ahead)
{
	return &q->hint[(uint16_t)(q->pk.seq + ahead) & (PMD_VQ_HINT_SLOTS - 1)];
}

static inline void vqp_cursor_reset(struct pmd_vq *q)
{
	q->pk.la_pos = q->last_avail;
	q->pk.la_wrap = q->pk.avail_wrap;
	q->pk.la_ahead = 0;
	q->pk.la_desc = 0;
}

/* Touch the chain at the cursor and step past it; false when it is not available whole. */
static inline bool vqp_touch_next(struct pmd_vq *q)
{
	const struct pmd_chain_pring ring = {
	    .desc = q->desc_packed, .size = q->size, .indirect_ok = q->indirect};
	struct pmd_vq_hint_slot *s = vqp_slot(q, q->pk.la_ahead);
	uint16_t room = (uint16_t)(q->size - q->pk.la_desc);
	uint16_t n = pmd_chain_touch_packed(q->mem, &ring, q->pk.la_pos, q->pk.la_wrap,
					    RTE_MIN(room, PMD_VQP_TOUCH_MAX_DESC), &s->touched);

	if (n == 0)
		return false;
	s->idx = q->pk.la_pos;
	s->state = s->touched.hdr != NULL ? PMD_VQ_HINT_TOUCHED : PMD_VQ_HINT_NONE;
	vqp_step(&q->pk.la_pos, &q->pk.la_wrap, n, q->size);
	q->pk.la_ahead++;
	q->pk.la_desc = (uint16_t)(q->pk.la_desc + n);
	return true;
}

/* Hint the data of the touched chain in slot s; its first part only when split. */
static void vqp_hint(struct pmd_vq *q, struct pmd_vq_hint_slot *s, bool split)
{
	struct pmd_chain_hint h;

	pmd_chain_peek_touched(&s->touched, &h);
	pmd_vq_hint_note(s, &h, split, q->hint_near);
	pmd_blk_req_prefetch(q->target, &h, q->hint_near);
}

/*
 * Before the chain at last_avail is served: the cursor the touch distance
 * ahead, hints for the chains 1..q->look ahead not hinted yet (all
 * but the last whole: at a sweep's start they would come too late in
 * parts), the rest of the one PMD_VQP_HINT_REST_AHEAD ahead.  Not the chain
 * served now: a hint could not run ahead of its copy (as the split ring's).
 */
static inline void vqp_look_ahead(struct pmd_vq *q)
{
	const uint16_t touch = pmd_vq_touch_ahead(q);
	uint16_t k;

	if (q->pk.la_ahead == 0)
		vqp_cursor_reset(q);
	while (q->pk.la_ahead <= touch && vqp_touch_next(q))
		;
	for (k = 1; k <= q->look && k < q->pk.la_ahead; k++) {
		struct pmd_vq_hint_slot *s = vqp_slot(q, k);

		if (s->state == PMD_VQ_HINT_TOUCHED)
			vqp_hint(q, s, k == q->look);
		else if (k == PMD_VQP_HINT_REST_AHEAD && s->state == PMD_VQ_HINT_FIRST) {
			s->state = PMD_VQ_HINT_WHOLE;
			pmd_blk_req_prefetch(q->target, &s->rest, false);
		}
	}
}

/* Was the chain at last_avail (touched by the cursor) hinted whole?  Clears its slot. */
static inline bool vqp_hinted_take(struct pmd_vq *q)
{
	struct pmd_vq_hint_slot *s = vqp_slot(q, 0);
	bool hinted;

	if (q->pk.la_ahead == 0)
		return false;
	hinted = s->state == PMD_VQ_HINT_WHOLE && s->idx == q->last_avail;
	s->state = PMD_VQ_HINT_NONE;
	return hinted;
}

/* The chain at the old last_avail was served (nring descriptors): move the cursor's origin. */
static inline void vqp_look_ahead_served(struct pmd_vq *q, uint16_t nring)
{
	q->pk.seq++;
	if (q->pk.la_ahead == 0)
		return;
	q->pk.la_ahead--;
	q->pk.la_desc = (uint16_t)(q->pk.la_desc - RTE_MIN(nring, q->pk.la_desc));
	if (q->pk.la_ahead > 0 && vqp_slot(q, 0)->idx != q->last_avail)
		q->pk.la_ahead = 0; /* not the chain the cursor walked: start over */
}

static unsigned vqp_take(struct pmd_vq *q, uint64_t now, struct pmd_chain *c)
{
	const bool hint = q->hinting;
	uint64_t bytes = 0, published = 0, t0 = 0;
	unsigned i, published_at = 0;

	for (i = 0; i < PMD_VQ_BURST && q->nheap < q->size && bytes < PMD_VQ_BURST_BYTES; i++) {
		uint16_t flags = ld16(&q->desc_packed[q->last_avail].flags);
		uint16_t nring = 0;
		bool hinted = false;

		if (!pmd_packed_desc_avail(flags, q->pk.avail_wrap))
			break;
		if (i == 0) {
			t0 = pmd_vq_tune_start(q);
			if (PMD_VQ_GUESS)
				rte_prefetch0(q->guess_hdr);
		}
		rte_smp_rmb();
		if (hint) {
			vqp_look_ahead(q);
			hinted = vqp_hinted_take(q);
		}
		if (!vqp_serve(q, now, hinted, c, &nring))
			break;
		if (hint)
			vqp_look_ahead_served(q, nring);
		bytes += c->rd_len + c->wr_len;
		if (pmd_vq_publish_due(q, bytes, i + 1, &published, &published_at))
			vqp_publish(q);
	}
	pmd_vq_look_follow(q, bytes, i, t0);
	return i;
}

/*
 * Copy the chain of inflight entry e (rte_vhost's copy of a request the
 * previous backend took) into q->pk.replay; its descriptor count, or 0 when
 * the entry is not a usable chain (the frontend shares the region).
 */
static uint16_t vqp_replay_copy(struct pmd_vq *q, uint16_t e)
{
	const struct rte_vhost_inflight_info_packed *in = q->pk.inflight;
	uint16_t num, k = e, j;

	if (in == NULL || e >= q->size)
		return 0;
	num = in->desc[e].num;
	if (num == 0 || num > q->size)
		return 0;
	for (j = 0; j < num; j++) {
		const struct rte_vhost_inflight_desc_packed *s = &in->desc[k];
		bool last = j + 1 == num;

		if (k >= q->size || !!(s->flags & VRING_DESC_F_NEXT) == last)
			return 0;
		q->pk.replay[j].addr = s->addr;
		q->pk.replay[j].len = s->len;
		q->pk.replay[j].id = s->id;
		q->pk.replay[j].flags = s->flags;
		k = s->next;
	}
	return num;
}

/* Replay the requests a previous backend took but never completed. */
static unsigned vqp_resubmit(struct pmd_vq *q, uint64_t now, struct pmd_chain *c)
{
	const struct pmd_chain_pring ring = {
	    .desc = q->pk.replay, .size = q->size, .indirect_ok = q->indirect, .check_wrap = false};
	unsigned n = 0;

	while (q->resubmit_pos < q->nresubmit && q->nheap < q->size) {
		uint16_t e = q->resubmit[q->resubmit_pos++];
		uint16_t num = vqp_replay_copy(q, e), id = 0, nring = 0;
		enum pmd_chain_result r;

		if (num == 0) {
			pmd_vq_break(q, "an inflight entry to replay is not a descriptor chain");
			break;
		}
		r = pmd_chain_parse_packed(q->mem, &ring, 0, false, c, &id, &nring);
		if (r != PMD_CHAIN_BROKEN)
			q->pk.entry[id] = e;
		if (!vqp_exec(q, r, id, num, now, c))
			break;
		PMD_CTR_INC(q->st.resubmitted);
		n++;
	}
	return n;
}

/* Write femud's event suppression area: flags, and off_wrap first in descriptor mode. */
static void vqp_device_event(struct pmd_vq *q, uint16_t flags)
{
	if (flags == VRING_PACKED_EVENT_FLAG_DESC) {
		st16(&q->device_event->off_wrap,
		     (uint16_t)(q->last_avail | q->pk.avail_wrap << VRING_PACKED_EVENT_F_WRAP_CTR));
		rte_smp_wmb();
	}
	st16(&q->device_event->flags, flags);
	if (unlikely(q->log))
		pmd_vq_log_hva(q->vid, q->mem, q->device_event, sizeof(*q->device_event));
}

void pmd_vqp_notify_suppress(struct pmd_vq *q)
{
	vqp_device_event(q, VRING_PACKED_EVENT_FLAG_DISABLE);
	rte_smp_mb();
}

bool pmd_vqp_notify_arm(struct pmd_vq *q)
{
	uint16_t flags;

	vqp_device_event(q, q->event_idx ? VRING_PACKED_EVENT_FLAG_DESC
					 : VRING_PACKED_EVENT_FLAG_ENABLE);
	/* virtio 1.2, 2.8.21.3: the store above before the next descriptor is read */
	rte_smp_mb();
	flags = ld16(&q->desc_packed[q->last_avail].flags);
	return !q->broken && pmd_packed_desc_avail(flags, q->pk.avail_wrap);
}

/*
 * Does the driver want a call for the d ring descriptors the used position
 * moved past since the last decision?  Its event suppression area: ENABLE
 * yes, DISABLE no, DESC when the position it names (off_wrap) was passed
 * within them (virtio 1.2, 2.8.10).  Positions and wrap counters alone
 * cannot tell how far the used position moved: one sweep can move it whole
 * laps of a small ring.  A driver has at most a ring of used descriptors
 * to reap, so the one it waits for is at most size behind.
 */
static bool vqp_need_call(struct pmd_vq *q, uint32_t d)
{
	uint16_t flags = ld16(&q->driver_event->flags);
	uint16_t off_wrap, off;
	int32_t back;

	if (flags != VRING_PACKED_EVENT_FLAG_DESC)
		return flags != VRING_PACKED_EVENT_FLAG_DISABLE;
	off_wrap = ld16(&q->driver_event->off_wrap);
	off = off_wrap & (uint16_t) ~(1u << VRING_PACKED_EVENT_F_WRAP_CTR);
	if (off >= q->size)
		return true; /* no position of this ring: a spurious call is harmless */
	/* how far the used position is past (off, wrap), modulo two laps */
	back = (int32_t)q->used_idx - off;
	if (!!(off_wrap >> VRING_PACKED_EVENT_F_WRAP_CTR) != q->pk.used_wrap)
		back += q->size;
	if (back <= 0)
		back += 2 * q->size;
	return (uint32_t)back <= RTE_MIN(d, (uint32_t)q->size);
}

/* The recheck (vq_impl.h): a call for what was published since the last one, if wanted. */
static __attribute__((noinline, cold)) void vqp_recheck(struct pmd_vq *q)
{
	uint32_t d = q->pk.used_descs - q->pk.called_descs;

	pmd_vq_recheck_end(q, d != 0 && vqp_need_call(q, d));
}

/* Decide on one call for the used descriptors written in this sweep. */
static void vqp_notify(struct pmd_vq *q)
{
	uint32_t d = q->pk.used_descs - q->pk.signalled_descs;

	q->pk.signalled_descs = q->pk.used_descs;
	if (q->callfd < 0)
		return; /* a poll queue */
	rte_smp_mb();
	if (vqp_need_call(q, d)) {
		pmd_vq_call(q);
		pmd_vq_calls_covered(q);
	} else {
		PMD_CTR_INC(q->st.calls_saved);
		pmd_vq_recheck_arm(q);
	}
}

FM_HOT_TEXT unsigned pmd_vqp_sweep(struct pmd_vq *q, uint64_t now_ns, struct pmd_chain *scratch)
{
	uint32_t completed_before = q->pk.completed;
	unsigned work = 0, taken = 0;

	if (q->nheap > 0 && q->heap[0].due_ns <= now_ns)
		work += vqp_post_due(q, now_ns);
	if (unlikely(q->resubmit_pos < q->nresubmit) && !q->broken)
		work += vqp_resubmit(q, now_ns, scratch);
	if (!q->broken)
		taken = vqp_take(q, now_ns, scratch);
	if (taken == 0 && q->idle)
		q->model_busy = pmd_blk_req_idle(q->target, now_ns);
	work += taken;
	/* a count, not the position: a small ring's sweep can complete whole laps */
	if (q->pk.completed != completed_before) {
		vqp_publish(q);
		vqp_notify(q);
		PMD_COST_COUNT(q->st, sweeps);
	} else if (pmd_vq_recheck_due(q, now_ns)) {
		vqp_recheck(q);
	}
	return work;
}

void pmd_vqp_flush(struct pmd_vq *q, uint64_t now_ns, struct pmd_chain *scratch)
{
	uint32_t completed_before = q->pk.completed;

	do {
		if (q->resubmit_pos < q->nresubmit && !q->broken)
			vqp_resubmit(q, now_ns, scratch);
		while (q->nheap > 0) {
			struct pmd_vq_pending p = pmd_vq_heap_pop(q);

			vqp_complete(q, p.head, p.status, p.st, p.used_len);
			pmd_vq_count_late(q, p.due_ns < now_ns ? now_ns - p.due_ns : 0);
		}
	} while (q->resubmit_pos < q->nresubmit && !q->broken);
	if (q->pk.completed != completed_before) {
		vqp_publish(q);
		vqp_notify(q);
	}
}

void pmd_vqp_setup(struct pmd_vq *q, const struct pmd_vq_setup *s)
{
	uint32_t pending = 0;
	uint16_t i;

	q->last_avail = s->last_avail & 0x7fff;
	q->pk.avail_wrap = s->last_avail >> 15;
	q->used_idx = s->last_used & 0x7fff;
	q->pk.used_wrap = s->last_used >> 15;
	q->pk.used_descs = q->pk.signalled_descs = 0;
	pmd_vq_calls_covered(q);
	q->pk.inflight = s->inflight_packed;
	/*
	 * The previous backend took the replayed chains and no other since its
	 * used position (every descriptor it took is either behind the used
	 * position or in an inflight entry): it stopped taking that many ring
	 * descriptors ahead, and new chains start there.
	 */
	for (i = 0; i < q->nresubmit && q->pk.inflight != NULL; i++) {
		uint16_t e = q->resubmit[i];

		if (e < q->size)
			pending += q->pk.inflight->desc[e].num;
	}
	if (q->last_avail >= q->size || q->used_idx >= q->size || pending > q->size) {
		pmd_vq_break(q, "ring position outside the queue, or more replays than it holds");
		return;
	}
	vqp_step(&q->last_avail, &q->pk.avail_wrap, (uint16_t)pending, q->size);
	vqp_cursor_reset(q);
}
