/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_log.c - dirty logging of femud's writes into guest memory (vq_log.h).
 */
#include <stddef.h>

#include <linux/virtio_ring.h>

#include "pmd/vq_log.h"

void pmd_vq_log_hva(int vid, const struct rte_vhost_memory *mem, const void *hva, uint64_t len)
{
	uint64_t a = (uint64_t)(uintptr_t)hva;

	/* a segment of a chain lies in one region; a longer range is marked region by region */
	while (len > 0) {
		const struct rte_vhost_mem_region *r = NULL;
		uint64_t n;

		for (uint32_t i = 0; i < mem->nregions; i++) {
			const struct rte_vhost_mem_region *x = &mem->regions[i];

			if (a >= x->host_user_addr && a - x->host_user_addr < x->size) {
				r = x;
				break;
			}
		}
		if (r == NULL)
			return;
		n = r->size - (a - r->host_user_addr);
		if (n > len)
			n = len;
		rte_vhost_log_write(vid, r->guest_phys_addr + (a - r->host_user_addr), n);
		a += n;
		len -= n;
	}
}

void pmd_vq_log_iov(int vid, const struct rte_vhost_memory *mem, const struct fm_iov *iov,
		    uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		pmd_vq_log_hva(vid, mem, iov[i].base, iov[i].len);
}

void pmd_vq_log_used_split(int vid, uint16_t qid, uint16_t size)
{
	/* flags, idx, size entries, avail_event (virtio 1.2, 2.7.8) */
	uint64_t len = offsetof(struct vring_used, ring) +
		       (uint64_t)size * sizeof(struct vring_used_elem) + sizeof(uint16_t);

	rte_vhost_log_used_vring(vid, qid, 0, len);
}
