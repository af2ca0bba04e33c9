/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * chain_assert.h - one Criterion assertion for the chain tests of either
 * ring layout: a fast path's chain described as the general walk's.
 */
#ifndef PMD_TEST_CHAIN_ASSERT_H
#define PMD_TEST_CHAIN_ASSERT_H

#include <criterion/criterion.h>
#include <string.h>

#include "pmd/vq_chain.h"

/*
 * f and w, parsed with result r by a fast path and by the walk, say the same:
 * the status byte, then (unless broken) the error and header, then (when OK)
 * every buffer.
 */
static inline void assert_chain_same(enum pmd_chain_result r, const struct pmd_chain *f,
				     const struct pmd_chain *w)
{
	cr_assert_eq(f->status, w->status);
	if (r == PMD_CHAIN_BROKEN)
		return;
	cr_assert_eq((f->why == NULL), (w->why == NULL));
	cr_assert_eq(memcmp(&f->hdr, &w->hdr, sizeof(f->hdr)), 0);
	if (r != PMD_CHAIN_OK)
		return;
	cr_assert_eq(f->hdr_at, w->hdr_at);
	cr_assert_eq(f->rd_len, w->rd_len);
	cr_assert_eq(f->wr_len, w->wr_len);
	cr_assert_eq(f->nrd, w->nrd);
	cr_assert_eq(f->nwr, w->nwr);
	cr_assert_eq(f->ndesc, w->ndesc);
	cr_assert_eq(f->nempty, w->nempty);
	for (uint32_t i = 0; i < f->nrd + f->nwr; i++) {
		cr_assert_eq(f->iov[i].base, w->iov[i].base);
		cr_assert_eq(f->iov[i].len, w->iov[i].len);
	}
}

#endif /* PMD_TEST_CHAIN_ASSERT_H */
