/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_vring.c - split virtqueue layout in shared memory, pre-built request
 * chains, eventfds.
 */
#include "fb_vring.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>

#define RING_ALIGN 4096u

size_t fb_vq_mem_bytes(unsigned qsize, unsigned nslots, uint32_t slot_bytes)
{
	return vring_size(qsize, RING_ALIGN) + RING_ALIGN + nslots * 16u + 64 + nslots + 64 +
	       (size_t)nslots * slot_bytes + 4096;
}

void fb_vq_reset(struct fb_vq *vq)
{
	struct vring_desc *d = vq->vr.desc;

	memset(vq->vr.avail, 0, sizeof(*vq->vr.avail) + sizeof(uint16_t) * (vq->size + 1u));
	memset(vq->vr.used, 0,
	       sizeof(*vq->vr.used) + sizeof(struct vring_used_elem) * vq->size + 2);
	memset(d, 0, sizeof(*d) * vq->size);
	for (unsigned s = 0; s < vq->nslots; s++) {
		unsigned h = s, dd = fb_vq_data_desc(vq, s);
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
	ring = fb_mem_alloc(mem, vring_size(qsize, RING_ALIGN), RING_ALIGN);
	vq->hdr = fb_mem_alloc(mem, nslots * sizeof(*vq->hdr), 64);
	vq->status = fb_mem_alloc(mem, nslots, 64);
	vq->data = fb_mem_alloc(mem, (size_t)nslots * slot_bytes, 4096);
	if (!ring || !vq->hdr || !vq->status || !vq->data)
		return -ENOMEM;
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

void fb_vq_fini(struct fb_vq *vq)
{
	if (vq->kick_fd >= 0)
		close(vq->kick_fd);
	if (vq->call_fd >= 0)
		close(vq->call_fd);
	vq->kick_fd = vq->call_fd = -1;
}

void fb_vq_kick(struct fb_vq *vq)
{
	uint64_t one = 1;

	__atomic_store_n(&vq->vr.avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
	vq->kicked_idx = vq->avail_idx;
	if (write(vq->kick_fd, &one, sizeof(one)) == sizeof(one))
		vq->kicks++;
}

void fb_vq_dump(const struct fb_vq *vq, FILE *out)
{
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
