/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_ab.c - in-run A/B (pmd_ab.h): the summary of phase triples.  Plain
 * arithmetic, no state: the unit test compiles it into itself; femud links
 * it only in -Dab_phase builds, with pmd_ab_phase.c.
 */
#include "pmd/pmd_ab.h"

#include <stdlib.h>

static int ab_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double ab_median_sorted(const double *x, unsigned m)
{
	return m % 2 ? x[m / 2] : (x[m / 2 - 1] + x[m / 2]) / 2.0;
}

unsigned pmd_ab_summarize(const uint64_t *dur, const uint8_t *on, unsigned n,
			  uint64_t phase_requests, double tsc_hz, double lo, double hi,
			  struct pmd_ab_summary *s)
{
	static double r[PMD_AB_MAX_PHASES], rv[PMD_AB_MAX_PHASES], rb[PMD_AB_MAX_PHASES];
	unsigned m = 0;

	s->triples = s->ahead = 0;
	s->median = s->q1 = s->q3 = s->var_rate = s->base_rate = 0.0;
	/* every middle: a variant phase against its neighbours and a baseline phase against its */
	for (unsigned i = 1; i + 1 < n && m < PMD_AB_MAX_PHASES; i++) {
		double mid = (double)dur[i],
		       sides = ((double)dur[i - 1] + (double)dur[i + 1]) / 2.0;
		double base, var, rate;

		if (on[i] == on[i - 1] || on[i] == on[i + 1] || mid <= 0.0 || sides <= 0.0)
			continue;
		var = on[i] ? mid : sides;
		base = on[i] ? sides : mid;
		rate = (double)phase_requests * tsc_hz / base;
		if (rate < lo || rate >= hi)
			continue;
		rv[m] = (double)phase_requests * tsc_hz / var;
		rb[m] = rate;
		r[m++] = base / var; /* ticks per phase: fewer is faster */
	}
	if (m == 0)
		return 0;
	qsort(r, m, sizeof(r[0]), ab_cmp_double);
	qsort(rv, m, sizeof(rv[0]), ab_cmp_double);
	qsort(rb, m, sizeof(rb[0]), ab_cmp_double);
	for (unsigned i = 0; i < m; i++)
		s->ahead += r[i] > 1.0;
	s->triples = m;
	s->median = ab_median_sorted(r, m);
	s->var_rate = ab_median_sorted(rv, m);
	s->base_rate = ab_median_sorted(rb, m);
	s->q1 = r[m / 4];
	s->q3 = r[(3 * m) / 4];
	return m;
}
