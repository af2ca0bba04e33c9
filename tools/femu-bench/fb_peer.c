/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_peer.c - in-process completing backend for --selftest-peer.
 */
#include "fb_peer.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

#include "fb_pring.h"

struct peer_q {
	struct fb_vq *vq;
	uint16_t last_avail;
	uint16_t used_idx;
};

/* Walk a chain to its last descriptor (bounded by the ring size); NULL if broken. */
static struct vring_desc *chain_tail(const struct fb_vq *vq, uint16_t head)
{
	struct vring_desc *d = &vq->vr.desc[head];

	for (unsigned n = 0; n < vq->size; n++) {
		if (!(d->flags & VRING_DESC_F_NEXT))
			return d;
		if (d->next >= vq->size)
			return NULL;
		d = &vq->vr.desc[d->next];
	}
	return NULL;
}

static void serve(struct peer_q *q, uint64_t *completed)
{
	struct fb_vq *vq = q->vq;
	uint16_t avail = __atomic_load_n(&vq->vr.avail->idx, __ATOMIC_ACQUIRE);
	uint16_t n = 0;

	while (q->last_avail != avail) {
		uint16_t head = vq->vr.avail->ring[q->last_avail & vq->mask];
		struct vring_desc *tail = head < vq->size ? chain_tail(vq, head) : NULL;
		struct vring_used_elem *e =
		    &vq->vr.used->ring[(uint16_t)(q->used_idx + n) & vq->mask];

		if (tail && (tail->flags & VRING_DESC_F_WRITE) && tail->len >= 1)
			*(vq->mem->base + (tail->addr - vq->mem->gpa_base)) = VIRTIO_BLK_S_OK;
		e->id = head;
		e->len = 1;
		q->last_avail++;
		n++;
	}
	if (n) {
		q->used_idx = (uint16_t)(q->used_idx + n);
		__atomic_store_n(&vq->vr.used->idx, q->used_idx, __ATOMIC_RELEASE);
		if (vq->event_idx) /* never ask for a kick */
			__atomic_store_n(&vring_avail_event(&vq->vr),
					 (uint16_t)(q->last_avail + 0x8000), __ATOMIC_RELAXED);
		*completed += n;
	}
}

/*
 * Packed ring: take every available chain in ring order (head flags, then
 * the chain up to a descriptor without NEXT, at most the ring size), write
 * the status byte, and write one used descriptor per chain at the used
 * position; the batch's first used flags are stored last, so the driver
 * sees the batch at once (as femud publishes, and as the split peer stores
 * one used index per batch: the self-test then measures the driver, not
 * the peer's cache-line ping-pong).  last_avail and used_idx count
 * descriptors.
 */
static void serve_packed(struct peer_q *q, uint64_t *completed)
{
	struct fb_vq *vq = q->vq;
	uint16_t first = q->used_idx, first_flags = 0;

	for (;;) {
		uint16_t head = q->last_avail, c = head, id, used_flags;
		struct vring_packed_desc *d = &vq->pdesc[head & vq->mask], *tail;
		uint16_t flags = __atomic_load_n(&d->flags, __ATOMIC_ACQUIRE);

		if ((flags & (FB_PK_AVAIL | FB_PK_USED)) != fb_pvq_avail_bits(vq, head))
			break;
		for (unsigned n = 1;
		     (vq->pdesc[c & vq->mask].flags & VRING_DESC_F_NEXT) && n < vq->size; n++)
			c++;
		tail = &vq->pdesc[c & vq->mask];
		c++;
		if ((tail->flags & VRING_DESC_F_WRITE) && tail->len >= 1)
			*(vq->mem->base + (tail->addr - vq->mem->gpa_base)) = VIRTIO_BLK_S_OK;
		id = tail->id;
		d = &vq->pdesc[q->used_idx & vq->mask];
		d->id = id;
		d->len = 1;
		used_flags = fb_pvq_used_bits(vq, q->used_idx);
		if (q->used_idx == first)
			first_flags = used_flags;
		else
			__atomic_store_n(&d->flags, used_flags, __ATOMIC_RELEASE);
		q->used_idx = (uint16_t)(q->used_idx + (uint16_t)(c - head));
		q->last_avail = c;
		(*completed)++;
	}
	if (q->used_idx != first)
		__atomic_store_n(&vq->pdesc[first & vq->mask].flags, first_flags, __ATOMIC_RELEASE);
}

static void *peer_main(void *arg)
{
	struct fb_peer *p = arg;
	struct peer_q qs[64];
	uint64_t completed = 0;

	if (p->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(p->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	memset(qs, 0, sizeof(qs));
	for (unsigned i = 0; i < p->nq; i++) {
		qs[i].vq = &p->vqs[i];
		if (qs[i].vq->packed) {
			/* never ask for a kick */
			qs[i].vq->dev_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
			continue;
		}
		qs[i].vq->vr.used->flags = VRING_USED_F_NO_NOTIFY;
		if (qs[i].vq->event_idx)
			vring_avail_event(&qs[i].vq->vr) = 0x8000;
	}
	while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED))
		for (unsigned i = 0; i < p->nq; i++) {
			if (qs[i].vq->packed)
				serve_packed(&qs[i], &completed);
			else
				serve(&qs[i], &completed);
		}
	p->completed = completed;
	return NULL;
}

int fb_peer_start(struct fb_peer *p, struct fb_vq *vqs, unsigned nq, int cpu)
{
	memset(p, 0, sizeof(*p));
	if (nq > 64)
		return -EINVAL;
	p->vqs = vqs;
	p->nq = nq;
	p->cpu = cpu;
	return -pthread_create(&p->th, NULL, peer_main, p);
}

void fb_peer_stop(struct fb_peer *p)
{
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
	pthread_join(p->th, NULL);
}
