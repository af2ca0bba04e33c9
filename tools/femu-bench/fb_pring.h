/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_pring.h - driver side of one packed virtqueue (virtio 1.2, 2.8) on a
 * struct fb_vq laid out by fb_vq_init_layout(..., packed = true).
 *
 * Slot s's request is a chain written into the descriptor ring at the next
 * avail position: header, data (omitted when the length is 0) and status
 * byte, every descriptor carrying buffer id s.  The head's flags are stored
 * last: the first request of a sweep keeps its head back until
 * fb_pvq_publish(), so the backend sees the sweep's requests at once, as the
 * split driver publishes one avail index per sweep.  Counters are free
 * running 16-bit descriptor counts; a count's ring position is its low
 * log2(size) bits and its wrap counter the next bit inverted (the ring size
 * is a power of two, so 65536 is a whole number of passes).
 *
 * Completions are polled from the ring (used descriptors written in place);
 * a used id advances the consumer by that slot's descriptor count.
 * Interrupts are suppressed in the driver event area: DISABLE, or with
 * EVENT_IDX descriptor-event mode at a position the backend cannot reach
 * before this driver reaps again (rewritten only when it came closer than
 * the descriptors that can be in flight).  Kicks follow the device event
 * area (ENABLE, DISABLE, or DESC with the offset and wrap counter).
 *
 * Touches only the queue's own ring and request memory.
 */
#ifndef FB_PRING_H
#define FB_PRING_H

#include <string.h>

#include "fb_vring.h"

#define FB_PK_AVAIL (1u << VRING_PACKED_DESC_F_AVAIL)
#define FB_PK_USED (1u << VRING_PACKED_DESC_F_USED)
#define FB_PK_WRAP (1u << VRING_PACKED_EVENT_F_WRAP_CTR)

/* Wrap counter (1 on the first pass) of descriptor count c. */
static inline unsigned fb_pvq_wrap(const struct fb_vq *vq, uint16_t c)
{
	return 1u ^ ((c >> vq->pk_shift) & 1u);
}

/* AVAIL/USED bits that make the descriptor at count c available. */
static inline uint16_t fb_pvq_avail_bits(const struct fb_vq *vq, uint16_t c)
{
	return fb_pvq_wrap(vq, c) ? FB_PK_AVAIL : FB_PK_USED;
}

/* AVAIL/USED bits of a used descriptor at count c. */
static inline uint16_t fb_pvq_used_bits(const struct fb_vq *vq, uint16_t c)
{
	return fb_pvq_wrap(vq, c) ? (FB_PK_AVAIL | FB_PK_USED) : 0;
}

/* off_wrap of descriptor count c (event suppression areas). */
static inline uint16_t fb_pvq_off_wrap(const struct fb_vq *vq, uint16_t c)
{
	return (uint16_t)((c & vq->mask) | (fb_pvq_wrap(vq, c) << VRING_PACKED_EVENT_F_WRAP_CTR));
}

/*
 * Write one descriptor at count c (its AVAIL/USED bits added).  A head is
 * not stored but returned: the caller makes it available with its flags.
 */
static inline void fb_pvq_put(struct fb_vq *vq, uint16_t c, uint64_t addr, uint32_t len,
			      uint16_t id, uint16_t flags)
{
	struct vring_packed_desc *d = &vq->pdesc[c & vq->mask];

	d->addr = addr;
	d->len = len;
	d->id = id;
	d->flags = (uint16_t)(flags | fb_pvq_avail_bits(vq, c));
}

/*
 * Make the chain whose head is at count head available: the first one since
 * the last publish waits for fb_pvq_publish(), later ones are stored now
 * (release: after the rest of their chain).
 */
static inline void fb_pvq_make_avail(struct fb_vq *vq, uint16_t head, uint16_t flags)
{
	flags = (uint16_t)(flags | fb_pvq_avail_bits(vq, head));
	if (head == vq->kicked_idx) {
		vq->pk_head = head;
		vq->pk_head_flags = flags;
	} else {
		__atomic_store_n(&vq->pdesc[head & vq->mask].flags, flags, __ATOMIC_RELEASE);
	}
}

/* Store table entry e only where it differs (the line then stays on the backend's CPU). */
static inline void fb_pvq_entry_set(struct vring_packed_desc *e, uint64_t addr, uint32_t len,
				    uint16_t flags)
{
	if (e->addr != addr)
		e->addr = addr;
	if (e->len != len)
		e->len = len;
	if (e->flags != flags)
		e->flags = flags;
}

/*
 * fb_pvq_submit() with fb_vq_use_indirect(): slot's table (header, data when
 * len, status) and one ring descriptor naming it.
 */
static inline void fb_pvq_submit_indirect(struct fb_vq *vq, unsigned slot, uint32_t type,
					  uint32_t len)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)fb_vq_table(vq, slot);
	struct vring_packed_desc *d = &vq->pdesc[vq->avail_idx & vq->mask];
	uint64_t st = vq->status_gpa + slot;
	uint32_t n = 2;

	if (len) {
		fb_pvq_entry_set(&t[1], vq->data_gpa + (uint64_t)slot * vq->slot_bytes, len,
				 type == VIRTIO_BLK_T_OUT ? 0 : VRING_DESC_F_WRITE);
		n = 3;
	}
	fb_pvq_entry_set(&t[n - 1], st, 1, VRING_DESC_F_WRITE);
	d->addr = vq->ind_gpa + (uint64_t)slot * FB_IND_BYTES;
	d->len = n * (uint32_t)sizeof(*t);
	d->id = (uint16_t)slot;
	vq->pk_ndesc[slot] = 1;
	fb_pvq_make_avail(vq, vq->avail_idx++, VRING_DESC_F_INDIRECT);
}

/* Queue a request on slot (not yet visible to the backend: see fb_pvq_publish). */
static inline void fb_pvq_submit(struct fb_vq *vq, unsigned slot, uint32_t type, uint64_t sector,
				 uint32_t len)
{
	uint16_t head = vq->avail_idx, c = (uint16_t)(head + 1), id = (uint16_t)slot;

	vq->hdr[slot].type = type;
	vq->hdr[slot].ioprio = 0;
	vq->hdr[slot].sector = sector;
	vq->status[slot] = FB_STATUS_UNSET;
	if (vq->indirect) {
		fb_pvq_submit_indirect(vq, slot, type, len);
		return;
	}
	vq->pdesc[head & vq->mask].addr = vq->hdr_gpa + (uint64_t)slot * sizeof(vq->hdr[0]);
	vq->pdesc[head & vq->mask].len = sizeof(vq->hdr[0]);
	vq->pdesc[head & vq->mask].id = id;
	if (len) {
		fb_pvq_put(vq, c, vq->data_gpa + (uint64_t)slot * vq->slot_bytes, len, id,
			   (uint16_t)(VRING_DESC_F_NEXT |
				      (type == VIRTIO_BLK_T_OUT ? 0 : VRING_DESC_F_WRITE)));
		c++;
	}
	fb_pvq_put(vq, c, vq->status_gpa + slot, 1, id, VRING_DESC_F_WRITE);
	c++;
	vq->pk_ndesc[slot] = (uint8_t)(uint16_t)(c - head);
	vq->avail_idx = c;
	fb_pvq_make_avail(vq, head, VRING_DESC_F_NEXT);
}

/* Kick decision after publishing counts [old, now): the device event area. */
static inline bool fb_pvq_need_kick(const struct fb_vq *vq, uint16_t old, uint16_t now)
{
	struct vring_packed_desc_event ev;
	uint16_t event;
	uint32_t raw = __atomic_load_n((const uint32_t *)vq->dev_ev, __ATOMIC_RELAXED);

	memcpy(&ev, &raw, sizeof(ev));
	if (ev.flags != VRING_PACKED_EVENT_FLAG_DESC)
		return ev.flags != VRING_PACKED_EVENT_FLAG_DISABLE;
	/* the event's count: in now's pass, or the one before when its wrap differs */
	event = (uint16_t)((now & ~vq->mask) | (ev.off_wrap & vq->mask));
	if ((ev.off_wrap >> VRING_PACKED_EVENT_F_WRAP_CTR) != fb_pvq_wrap(vq, now))
		event = (uint16_t)(event - vq->size);
	return vring_need_event(event, now, old);
}

/* Make queued requests visible and kick when the backend asks for it. */
static inline void fb_pvq_publish(struct fb_vq *vq)
{
	uint16_t old = vq->kicked_idx, now = vq->avail_idx;
	bool kick;

	if (old == now)
		return;
	__atomic_store_n(&vq->pdesc[vq->pk_head & vq->mask].flags, vq->pk_head_flags,
			 __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	kick = fb_pvq_need_kick(vq, old, now);
	vq->kicked_idx = now;
	vq->last_kicked = kick;
	if (kick) {
		uint64_t one = 1;
		if (write(vq->kick_fd, &one, sizeof(one)) == sizeof(one))
			vq->kicks++;
	}
}

/*
 * With EVENT_IDX: keep the driver event at a count the backend cannot pass
 * (its used count is at most 3 * nslots past the consumer: a call is due
 * only when it passes the event), set a ring less one ahead and rewritten
 * only when it came closer than that.
 */
static inline void fb_pvq_event_keep_far(struct fb_vq *vq)
{
	if ((uint16_t)(vq->pk_event - vq->last_used) >= FB_DESC_PER_REQ * vq->nslots)
		return;
	vq->pk_event = (uint16_t)(vq->last_used + vq->size - 1);
	__atomic_store_n(&vq->drv_ev->off_wrap, fb_pvq_off_wrap(vq, vq->pk_event),
			 __ATOMIC_RELAXED);
}

/*
 * Consume up to max used descriptors; writes their buffer ids to ids.  An id
 * that is no slot of ours advances the consumer by one descriptor (the
 * caller fails the run on it).
 */
static inline unsigned fb_pvq_poll(struct fb_vq *vq, uint32_t *ids, unsigned max)
{
	unsigned n = 0;

	while (n < max) {
		const struct vring_packed_desc *d = &vq->pdesc[vq->last_used & vq->mask];
		uint16_t flags = __atomic_load_n(&d->flags, __ATOMIC_ACQUIRE);
		uint16_t id;

		if ((flags & (FB_PK_AVAIL | FB_PK_USED)) != fb_pvq_used_bits(vq, vq->last_used))
			break;
		if (n == 0)
			__builtin_prefetch(vq->status);
		id = d->id;
		ids[n++] = id;
		vq->last_used =
		    (uint16_t)(vq->last_used + (id < vq->nslots ? vq->pk_ndesc[id] : 1));
	}
	if (n && vq->event_idx)
		fb_pvq_event_keep_far(vq);
	return n;
}

/*
 * Either layout, tested per call: for the tools off the hot path (--hostile,
 * --connect-churn); the workload picks its layout once per worker.
 */
static inline void fb_vq_submit_any(struct fb_vq *vq, unsigned slot, uint32_t type, uint64_t sector,
				    uint32_t len)
{
	if (vq->packed)
		fb_pvq_submit(vq, slot, type, sector, len);
	else
		fb_vq_submit(vq, slot, type, sector, len);
}

static inline void fb_vq_publish_any(struct fb_vq *vq)
{
	if (vq->packed)
		fb_pvq_publish(vq);
	else
		fb_vq_publish(vq);
}

static inline unsigned fb_vq_poll_any(struct fb_vq *vq, uint32_t *ids, unsigned max)
{
	return vq->packed ? fb_pvq_poll(vq, ids, max) : fb_vq_poll(vq, ids, max);
}

/* Always kick (hostile cases, and a first kick for backends that wait for one). */
void fb_pvq_kick(struct fb_vq *vq);

/* One line of ring state for a stall report. */
void fb_pvq_dump(const struct fb_vq *vq, FILE *out);

#endif /* FB_PRING_H */
