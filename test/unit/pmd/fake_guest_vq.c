/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake_guest_vq.c - a pmd_vq over the fake guest's ring, for the unit tests
 * that link pmd/vq.c (kept apart from fake_guest.c, which the fuzz targets
 * link without vq.c).
 */
#include "fake_guest.h"

struct pmd_vq *fg_vq(struct fake_guest *g, const struct pmd_blk_target *t, uint16_t size,
		     bool event_idx, int callfd, int kickfd)
{
	struct pmd_vq_setup s = {.size = size,
				 .callfd = callfd,
				 .kickfd = kickfd,
				 .event_idx = event_idx,
				 .indirect = true,
				 .mem = g->mem,
				 .target = t};
	struct fg_ring r;

	fg_ring(g, &r);
	s.desc = r.desc;
	s.avail = r.avail;
	s.used = r.used;
	return pmd_vq_create(&s);
}

struct pmd_vq *fg_env_vq(struct fg_env *e, uint16_t size, bool event_idx, int callfd, int kickfd)
{
	return fg_vq(&e->g, &e->t, size, event_idx, callfd, kickfd);
}
