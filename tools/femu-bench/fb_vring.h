/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_vring.h - driver side of one split virtqueue in femu-bench's shared
 * memory (layout from linux/virtio_ring.h).  Requests use pre-built chains:
 * slot s owns descriptor s (virtio_blk_outhdr, the chain head) and
 * descriptors nslots + 2s (data) and nslots + 2s + 1 (status byte), so heads
 * are the small numbers 0..nslots-1 (some backends keep a head in 8 bits) and
 * a submit only rewrites the header, the data length and direction, and one
 * avail entry.  With fb_vq_use_indirect() slot s's head is instead one
 * descriptor naming the slot's own indirect table of header, data and
 * status (the layout Linux's driver sends when VIRTIO_RING_F_INDIRECT_DESC
 * is negotiated), written once and then only where a request differs.
 * Completions are polled from the used ring with interrupts suppressed
 * (VRING_AVAIL_F_NO_INTERRUPT, or used_event kept 16k to 32k entries ahead
 * with EVENT_IDX); kicks follow the backend's VRING_USED_F_NO_NOTIFY /
 * avail_event.  The same struct fb_vq holds a packed virtqueue when laid
 * out so (fb_vq_init_layout); its driver side is fb_pring.h.
 */
#ifndef FB_VRING_H
#define FB_VRING_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "pmd/virtio_blk_wire.h"

#include "fb_mem.h"

#define FB_DESC_PER_REQ 3u
#define FB_IND_BYTES 64u      /* one slot's indirect table: 3 entries, a line of its own */
#define FB_STATUS_UNSET 0xffu /* status byte before the backend writes it */

struct fb_vq {
	unsigned index;
	uint16_t size;
	uint16_t mask;
	struct vring vr;
	uint16_t avail_idx;  /* next free avail ring position (private shadow) */
	uint16_t kicked_idx; /* avail idx at the last publish */
	uint16_t last_used;  /* next used ring entry to consume */
	bool event_idx;
	int kick_fd; /* eventfd we write to kick */
	int call_fd; /* eventfd given to the backend, never read */
	uint64_t kicks;
	bool last_kicked; /* the last publish kicked (for stall reports) */
	unsigned nslots;
	uint32_t slot_bytes;
	struct virtio_blk_outhdr *hdr; /* [nslots] */
	uint8_t *status;	       /* [nslots] */
	uint8_t *data;		       /* [nslots * slot_bytes] */
	struct fb_mem *mem;
	/*
	 * Packed layout (fb_pring.h), chosen once per queue at init: avail_idx,
	 * kicked_idx and last_used then count descriptors (free running, the
	 * wrap counter is bit log2(size) inverted), vr is unused.
	 */
	bool packed;
	uint8_t pk_shift;		 /* log2(size) */
	uint16_t pk_head;		 /* ring position of the head not yet made available */
	uint16_t pk_head_flags;		 /* its flags (written by fb_pvq_publish) */
	uint16_t pk_event;		 /* descriptor count named in the driver event area */
	struct vring_packed_desc *pdesc; /* [size] */
	struct vring_packed_desc_event *drv_ev; /* driver event suppression (we write) */
	struct vring_packed_desc_event *dev_ev; /* device event suppression (backend writes) */
	uint8_t *pk_ndesc; /* [nslots]: descriptors of each slot's request in flight */
	uint64_t hdr_gpa, status_gpa, data_gpa; /* guest addresses of hdr[0], status[0], data */
	/* fb_vq_use_indirect(): slot s's table at ind + s * FB_IND_BYTES (either layout's) */
	bool indirect;
	uint8_t *ind;
	uint64_t ind_gpa;
} __attribute__((aligned(64))); /* queues of different threads share no cache line */

/* Bytes fb_vq_init() takes from the region (upper bound, with alignment). */
size_t fb_vq_mem_bytes(unsigned qsize, unsigned nslots, uint32_t slot_bytes);

/*
 * Lay out a virtqueue of qsize entries and nslots request slots of
 * slot_bytes data each (nslots <= qsize / 3) in mem, create its eventfds.
 * Returns 0 or -errno.
 */
int fb_vq_init(struct fb_vq *vq, struct fb_mem *mem, unsigned index, unsigned qsize,
	       unsigned nslots, uint32_t slot_bytes, bool event_idx);

/*
 * fb_vq_init() with the layout chosen: packed (VIRTIO_F_RING_PACKED
 * negotiated) lays out a packed ring instead (fb_pring.h).
 */
int fb_vq_init_layout(struct fb_vq *vq, struct fb_mem *mem, unsigned index, unsigned qsize,
		      unsigned nslots, uint32_t slot_bytes, bool event_idx, bool packed);

/*
 * The vring base of SET_VRING_BASE / the ring addresses of SET_VRING_ADDR
 * for either layout (packed: the next avail position with the wrap counter
 * in bit 15; desc ring, driver area, device area).
 */
uint32_t fb_vq_base(const struct fb_vq *vq);
void fb_vq_addrs(const struct fb_vq *vq, uint64_t *desc, uint64_t *avail, uint64_t *used);

void fb_vq_fini(struct fb_vq *vq);

/* Reset ring indices and contents (before handing the ring to a backend). */
void fb_vq_reset(struct fb_vq *vq);

/*
 * Send each request as one descriptor naming its slot's indirect table
 * (VIRTIO_RING_F_INDIRECT_DESC must be negotiated): the tables are taken
 * from vq's memory (page-aligned, apart from what the backend writes) and
 * laid out, the ring reset.  Returns 0 or -ENOMEM.
 */
int fb_vq_use_indirect(struct fb_vq *vq);

/* Slot s's indirect table (fb_vq_use_indirect), as split descriptors. */
static inline struct vring_desc *fb_vq_table(const struct fb_vq *vq, unsigned slot)
{
	return (struct vring_desc *)(vq->ind + (size_t)slot * FB_IND_BYTES);
}

static inline void *fb_vq_slot_data(const struct fb_vq *vq, unsigned slot)
{
	return vq->data + (size_t)slot * vq->slot_bytes;
}

/* Queue a request on slot (not yet visible to the backend: see publish). */
/* Descriptor index of the data descriptor of slot (the status one follows it). */
static inline unsigned fb_vq_data_desc(const struct fb_vq *vq, unsigned slot)
{
	return vq->nslots + 2 * slot;
}

/*
 * Store v only when it differs: an unchanged descriptor then stays cached on
 * the backend's CPU instead of moving to ours and back on every request.
 */
static inline void fb_vq_set16(uint16_t *p, uint16_t v)
{
	if (*p != v)
		*p = v;
}

static inline void fb_vq_submit(struct fb_vq *vq, unsigned slot, uint32_t type, uint64_t sector,
				uint32_t len)
{
	unsigned head = slot, data = fb_vq_data_desc(vq, slot);
	struct vring_desc *d = vq->vr.desc;

	vq->hdr[slot].type = type;
	vq->hdr[slot].ioprio = 0;
	vq->hdr[slot].sector = sector;
	vq->status[slot] = FB_STATUS_UNSET;
	if (vq->indirect) {
		/* the head names the table (static); its entries as the direct chain's */
		d = fb_vq_table(vq, slot);
		head = 0;
		data = 1;
	}
	if (len) {
		uint16_t flags = (uint16_t)(VRING_DESC_F_NEXT |
					    (type == VIRTIO_BLK_T_OUT ? 0 : VRING_DESC_F_WRITE));

		fb_vq_set16(&d[head].next, (uint16_t)data);
		if (d[data].len != len)
			d[data].len = len;
		fb_vq_set16(&d[data].flags, flags);
	} else {
		fb_vq_set16(&d[head].next, (uint16_t)(data + 1));
	}
	vq->vr.avail->ring[vq->avail_idx & vq->mask] = (uint16_t)slot;
	vq->avail_idx++;
}

/* Put an arbitrary descriptor head on the avail ring (hostile cases). */
static inline void fb_vq_push_head(struct fb_vq *vq, uint16_t head)
{
	vq->vr.avail->ring[vq->avail_idx & vq->mask] = head;
	vq->avail_idx++;
}

/* Make queued requests visible and kick when the backend asks for it. */
static inline void fb_vq_publish(struct fb_vq *vq)
{
	uint16_t old = vq->kicked_idx, now = vq->avail_idx;
	bool kick;

	if (old == now)
		return;
	__atomic_store_n(&vq->vr.avail->idx, now, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (vq->event_idx)
		kick = vring_need_event(
		    __atomic_load_n(&vring_avail_event(&vq->vr), __ATOMIC_RELAXED), now, old);
	else
		kick = !(__atomic_load_n(&vq->vr.used->flags, __ATOMIC_RELAXED) &
			 VRING_USED_F_NO_NOTIFY);
	vq->kicked_idx = now;
	vq->last_kicked = kick;
	if (kick) {
		uint64_t one = 1;
		if (write(vq->kick_fd, &one, sizeof(one)) == sizeof(one))
			vq->kicks++;
	}
}

/* One line of ring state (indexes, notification fields, kicks) for a stall report. */
void fb_vq_dump(const struct fb_vq *vq, FILE *out);

/* Always kick (hostile cases, and a first kick for backends that wait for one). */
void fb_vq_kick(struct fb_vq *vq);

/*
 * With EVENT_IDX, keep used_event at least FB_USED_EVENT_MIN_AHEAD ahead of
 * the used entries consumed, so that the backend never calls: rewritten
 * (to FB_USED_EVENT_AHEAD ahead) only when it came closer, about once per
 * 16k completions.  The line then stays cached on the backend's CPU, which
 * reads it after every used index it publishes; rewritten per completion
 * (as before), each of those reads was a transfer from this CPU, and this
 * CPU's next stores waited for the line to come back.  The Linux driver
 * writes used_event once when it turns callbacks off.
 */
#define FB_USED_EVENT_AHEAD 0x8000
#define FB_USED_EVENT_MIN_AHEAD 0x4000
static inline void fb_vq_used_event_keep_far(struct fb_vq *vq)
{
	uint16_t *ue = &vring_used_event(&vq->vr);
	uint16_t ahead = (uint16_t)(__atomic_load_n(ue, __ATOMIC_RELAXED) - vq->last_used);

	/* closer than the minimum, or behind (someone asked for a call) */
	if (ahead < FB_USED_EVENT_MIN_AHEAD || ahead > FB_USED_EVENT_AHEAD)
		__atomic_store_n(ue, (uint16_t)(vq->last_used + FB_USED_EVENT_AHEAD),
				 __ATOMIC_RELAXED);
}
/*
 * Consume up to max used entries; writes their descriptor head ids to ids.
 * Returns the count.  When there are any, the first line of status bytes
 * (slots 0..63) is asked for at once: the backend wrote it, and the caller
 * reads a slot's byte only once the used entry named the slot, so without
 * the hint its transfer from the backend's CPU came after the entry's.
 */
static inline unsigned fb_vq_poll(struct fb_vq *vq, uint32_t *ids, unsigned max)
{
	uint16_t used = __atomic_load_n(&vq->vr.used->idx, __ATOMIC_ACQUIRE);
	unsigned n = 0;

	if (used != vq->last_used)
		__builtin_prefetch(vq->status);
	while (vq->last_used != used && n < max) {
		ids[n++] = vq->vr.used->ring[vq->last_used & vq->mask].id;
		vq->last_used++;
	}
	if (n && vq->event_idx)
		fb_vq_used_event_keep_far(vq);
	return n;
}

/* Slot of a used id, or -1 when the backend returned an id we never queued. */
static inline int fb_vq_id_slot(const struct fb_vq *vq, uint32_t id)
{
	if (id >= vq->nslots)
		return -1;
	return (int)id;
}

#endif /* FB_VRING_H */
