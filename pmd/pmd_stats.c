/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_stats.c - combining and zeroing queue counters (see pmd_stats.h for
 * who writes what).
 */
#include "pmd/pmd_stats.h"

#define PMD_STATS_ADD_(field, name, kind)                                                          \
	do {                                                                                       \
		uint64_t v = PMD_CTR_READ(b->field);                                               \
		if ((kind) == PMD_CTR_MAX)                                                         \
			a->field = v > a->field ? v : a->field;                                    \
		else                                                                               \
			a->field += v;                                                             \
	} while (0);

void pmd_vq_stats_add(struct pmd_vq_stats *a, const struct pmd_vq_stats *b)
{
	PMD_VQ_COUNTERS(PMD_STATS_ADD_)
}

#define PMD_STATS_ZERO_(field, name, kind) PMD_CTR_SET(s->field, 0);

void pmd_vq_stats_zero(struct pmd_vq_stats *s)
{
	PMD_VQ_COUNTERS(PMD_STATS_ZERO_)
}
