/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_vring.c - split and packed virtqueue layout in shared memory, pre-built
 * split request chains, eventfds.
 */
#include "fb_vring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "fb_pring.h"

#define RING_ALIGN 4096u

size_t fb_vq_mem_bytes(unsigned qsize, unsigned nslots, uint32_t slot_bytes)
{
	return vring_size(qsize, RING_ALIGN) + RING_ALIGN + nslots * 16u + 64 + nslots + 64 +
	       (size_t)nslots * slot_bytes + 4096 + (size_t)nslots * FB_IND_BYTES + 2 * 4096;
}

/* Slot s's direct chain as split descriptors h (header), dd (data), dd + 1 (status). */
static void vq_chain_layout(struct fb_vq *vq, struct vring_desc *d, unsigned s, unsigned h,
			    unsigned dd)
{
	d[h].addr = fb_mem_gpa(vq->mem, &vq->hdr[s]);
	d[h].len = sizeof(vq->hdr[s]);
	d[h].flags = VRING_DESC_F_NEXT;
	d[h].next = (uint16_t)dd;
	d[dd].addr = fb_mem_gpa(vq->mem, fb_vq_slot_data(vq, s));
	d[dd].len = vq->slot_bytes;
	d[dd].flags = VRING_DESC_F_NEXT;
	d[dd].next = (uint16_t)(dd + 1);
	d[dd + 1].addr = fb_mem_gpa(vq->mem, &vq->status[s]);
	d[dd + 1].len = 1;
	d[dd + 1].flags = VRING_DESC_F_WRITE;
	d[dd + 1].next = 0;
}

/* Packed: slot s's table of header, data and status (entries in order, ids unused). */
static void pvq_table_layout(struct fb_vq *vq, unsigned s)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)fb_vq_table(vq, s);

	t[0] =
	    (struct vring_packed_desc){fb_mem_gpa(vq->mem, &vq->hdr[s]), sizeof(vq->hdr[s]), 0, 0};
	t[1] = (struct vring_packed_desc){fb_mem_gpa(vq->mem, fb_vq_slot_data(vq, s)),
					  vq->slot_bytes, 0, VRING_DESC_F_WRITE};
	t[2] = (struct vring_packed_desc){fb_mem_gpa(vq->mem, &vq->status[s]), 1, 0,
					  VRING_DESC_F_WRITE};
}

/* Packed: an empty ring (no descriptor available), interrupts suppressed. */
static void pvq_reset(struct fb_vq *vq)
{
	memset(vq->pdesc, 0, sizeof(*vq->pdesc) * vq->size);
	memset(vq->drv_ev, 0, sizeof(*vq->drv_ev));
	memset(vq->dev_ev, 0, sizeof(*vq->dev_ev));
	vq->avail_idx = vq->kicked_idx = vq->last_used = 0;
	vq->pk_head = 0;
	vq->pk_head_flags = 0;
	for (unsigned s = 0; vq->indirect && s < vq->nslots; s++)
		pvq_table_layout(vq, s);
	if (vq->event_idx) {
		vq->pk_event = (uint16_t)(vq->size - 1);
		vq->drv_ev->off_wrap = fb_pvq_off_wrap(vq, vq->pk_event);
		vq->drv_ev->flags = VRING_PACKED_EVENT_FLAG_DESC;
	} else {
		vq->drv_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	}
}

void fb_vq_reset(struct fb_vq *vq)
{
	struct vring_desc *d = vq->vr.desc;

	if (vq->packed) {
		pvq_reset(vq);
		return;
	}

	memset(vq->vr.avail, 0, sizeof(*vq->vr.avail) + sizeof(uint16_t) * (vq->size + 1u));
	memset(vq->vr.used, 0,
	       sizeof(*vq->vr.used) + sizeof(struct vring_used_elem) * vq->size + 2);
	memset(d, 0, sizeof(*d) * vq->size);
	for (unsigned s = 0; s < vq->nslots; s++) {
		if (!vq->indirect) {
			vq_chain_layout(vq, d, s, s, fb_vq_data_desc(vq, s));
			continue;
		}
		d[s] = (struct vring_desc){vq->ind_gpa + (uint64_t)s * FB_IND_BYTES,
					   FB_DESC_PER_REQ * sizeof(*d), VRING_DESC_F_INDIRECT, 0};
		vq_chain_layout(vq, fb_vq_table(vq, s), s, 0, 1);
	}
	if (!vq->event_idx)
		vq->vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	else
		vring_used_event(&vq->vr) = FB_USED_EVENT_AHEAD;
	vq->avail_idx = vq->kicked_idx = vq->last_used = 0;
}

int fb_vq_init(struct fb_vq *vq, struct fb_mem *mem, unsigned index, unsigned qsize,
	       unsigned nslots, uint32_t slot_bytes, bool event_idx)
{
	return fb_vq_init_layout(vq, mem, index, qsize, nslots, slot_bytes, event_idx, false);
}

/* Packed rings: descriptor ring, then each event area on a line of its own. */
static void *pvq_alloc_ring(struct fb_vq *vq, struct fb_mem *mem, unsigned qsize)
{
	vq->pdesc = fb_mem_alloc(mem, sizeof(*vq->pdesc) * qsize, RING_ALIGN);
	vq->drv_ev = fb_mem_alloc(mem, 64, 64);
	vq->dev_ev = fb_mem_alloc(mem, 64, 64);
	vq->pk_ndesc = calloc(vq->nslots ? vq->nslots : 1, 1);
	vq->pk_shift = (uint8_t)__builtin_ctz(qsize);
	return vq->pdesc && vq->drv_ev && vq->dev_ev && vq->pk_ndesc ? vq->pdesc : NULL;
}

int fb_vq_init_layout(struct fb_vq *vq, struct fb_mem *mem, unsigned index, unsigned qsize,
		      unsigned nslots, uint32_t slot_bytes, bool event_idx, bool packed)
{
	void *ring;

	memset(vq, 0, sizeof(*vq));
	vq->kick_fd = vq->call_fd = -1;
	if ((qsize & (qsize - 1)) || qsize == 0 || qsize > 32768 ||
	    nslots > qsize / FB_DESC_PER_REQ)
		return -EINVAL;
	vq->index = index;
	vq->size = (uint16_t)qsize;
	vq->mask = (uint16_t)(qsize - 1);
	vq->event_idx = event_idx;
	vq->nslots = nslots;
	vq->slot_bytes = slot_bytes;
	vq->mem = mem;
	vq->packed = packed;
	if (packed)
		ring = pvq_alloc_ring(vq, mem, qsize);
	else
		ring = fb_mem_alloc(mem, vring_size(qsize, RING_ALIGN), RING_ALIGN);
	vq->hdr = fb_mem_alloc(mem, nslots * sizeof(*vq->hdr), 64);
	vq->status = fb_mem_alloc(mem, nslots, 64);
	vq->data = fb_mem_alloc(mem, (size_t)nslots * slot_bytes, 4096);
	if (!ring || !vq->hdr || !vq->status || !vq->data) {
		free(vq->pk_ndesc);
		vq->pk_ndesc = NULL;
		return -ENOMEM;
	}
	vq->hdr_gpa = fb_mem_gpa(mem, vq->hdr);
	vq->status_gpa = fb_mem_gpa(mem, vq->status);
	vq->data_gpa = fb_mem_gpa(mem, vq->data);
	if (!packed)
		vring_init(&vq->vr, qsize, ring, RING_ALIGN);
	vq->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	vq->call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vq->kick_fd < 0 || vq->call_fd < 0) {
		int e = errno;
		fb_vq_fini(vq);
		return -e;
	}
	fb_vq_reset(vq);
	return 0;
}

int fb_vq_use_indirect(struct fb_vq *vq)
{
	/* page-aligned: a backend that marks a page it only read is caught (--dirty-log) */
	uint8_t *ind = fb_mem_alloc(vq->mem, (size_t)vq->nslots * FB_IND_BYTES, 4096);

	if (ind == NULL)
		return -ENOMEM;
	fb_mem_alloc(vq->mem, 0, 4096); /* and nothing after them on their last page */
	vq->ind = ind;
	vq->ind_gpa = fb_mem_gpa(vq->mem, ind);
	vq->indirect = true;
	fb_vq_reset(vq);
	return 0;
}

void fb_vq_fini(struct fb_vq *vq)
{
	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	if (vq->call_fd >= 0)
		close(vq->call_fd);
	vq->kick_fd = vq->call_fd = -1;
	free(vq->pk_ndesc);
	vq->pk_ndesc = NULL;
}

uint32_t fb_vq_base(const struct fb_vq *vq)
{
	if (vq->packed)
		return fb_pvq_off_wrap(vq, vq->avail_idx);
	return vq->avail_idx;
}

void fb_vq_addrs(const struct fb_vq *vq, uint64_t *desc, uint64_t *avail, uint64_t *used)
{
	if (vq->packed) {
		*desc = (uint64_t)(uintptr_t)vq->pdesc;
		*avail = (uint64_t)(uintptr_t)vq->drv_ev;
		*used = (uint64_t)(uintptr_t)vq->dev_ev;
		return;
	}
	*desc = (uint64_t)(uintptr_t)vq->vr.desc;
	*avail = (uint64_t)(uintptr_t)vq->vr.avail;
	*used = (uint64_t)(uintptr_t)vq->vr.used;
}

void fb_pvq_kick(struct fb_vq *vq)
{
	uint64_t one = 1;

	if (vq->kicked_idx != vq->avail_idx)
		__atomic_store_n(&vq->pdesc[vq->pk_head & vq->mask].flags, vq->pk_head_flags,
				 __ATOMIC_RELEASE);
	vq->kicked_idx = vq->avail_idx;
	if (write(vq->kick_fd, &one, sizeof(one)) == sizeof(one))
		vq->kicks++;
}

void fb_pvq_dump(const struct fb_vq *vq, FILE *out)
{
	const struct vring_packed_desc *d = &vq->pdesc[vq->last_used & vq->mask];

	fprintf(out,
		"femu-bench: queue %u packed ring: avail count %u (position %u wrap %u), "
		"consumed to %u (position %u wrap %u, flags there 0x%x id %u), device event "
		"flags %u off_wrap 0x%x, driver event flags %u off_wrap 0x%x, kicks %llu, "
		"last publish %s\n",
		vq->index, vq->avail_idx, vq->avail_idx & vq->mask, fb_pvq_wrap(vq, vq->avail_idx),
		vq->last_used, vq->last_used & vq->mask, fb_pvq_wrap(vq, vq->last_used),
		__atomic_load_n(&d->flags, __ATOMIC_ACQUIRE), d->id,
		__atomic_load_n(&vq->dev_ev->flags, __ATOMIC_RELAXED),
		__atomic_load_n(&vq->dev_ev->off_wrap, __ATOMIC_RELAXED),
		__atomic_load_n(&vq->drv_ev->flags, __ATOMIC_RELAXED),
		__atomic_load_n(&vq->drv_ev->off_wrap, __ATOMIC_RELAXED),
		(unsigned long long)vq->kicks, vq->last_kicked ? "kicked" : "did not kick");
}

void fb_vq_kick(struct fb_vq *vq)
{
	uint64_t one = 1;

	if (vq->packed) {
		fb_pvq_kick(vq);
		return;
	}

	__atomic_store_n(&vq->vr.avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
	vq->kicked_idx = vq->avail_idx;
	if (write(vq->kick_fd, &one, sizeof(one)) == sizeof(one))
		vq->kicks++;
}

void fb_vq_dump(const struct fb_vq *vq, FILE *out)
{
	if (vq->packed) {
		fb_pvq_dump(vq, out);
		return;
	}
	fprintf(out,
		"femu-bench: queue %u ring: avail idx %u (last kick check at %u), used idx %u "
		"(consumed to %u), used flags 0x%x, avail_event %u, event_idx %d, kicks %llu, "
		"last publish %s\n",
		vq->index, __atomic_load_n(&vq->vr.avail->idx, __ATOMIC_RELAXED), vq->kicked_idx,
		__atomic_load_n(&vq->vr.used->idx, __ATOMIC_ACQUIRE), vq->last_used,
		__atomic_load_n(&vq->vr.used->flags, __ATOMIC_RELAXED),
		__atomic_load_n(&vring_avail_event(&vq->vr), __ATOMIC_RELAXED), vq->event_idx,
		(unsigned long long)vq->kicks, vq->last_kicked ? "kicked" : "did not kick");
}
