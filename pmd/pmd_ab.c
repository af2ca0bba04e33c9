/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_ab.c - in-run A/B (pmd_ab.h): the phase summary, and in builds with
 * -Dab_phase=N the poller's phase clock and the report.
 */
#include "pmd/pmd_ab.h"

#include <stdbool.h>
#include <stdlib.h>

#include "pmd/pmd_clock.h"

static int ab_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

unsigned pmd_ab_summarize(const uint64_t *dur, const uint8_t *on, unsigned n,
			  uint64_t phase_requests, double tsc_hz, double lo, double hi,
			  struct pmd_ab_summary *s)
{
	static double r[PMD_AB_MAX_PHASES];
	unsigned m = 0;

	s->triples = s->ahead = 0;
	s->median = s->q1 = s->q3 = 0.0;
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
		r[m++] = base / var; /* ticks per phase: fewer is faster */
	}
	if (m == 0)
		return 0;
	qsort(r, m, sizeof(r[0]), ab_cmp_double);
	for (unsigned i = 0; i < m; i++)
		s->ahead += r[i] > 1.0;
	s->triples = m;
	s->median = m % 2 ? r[m / 2] : (r[m / 2 - 1] + r[m / 2]) / 2.0;
	s->q1 = r[m / 4];
	s->q3 = r[(3 * m) / 4];
	return m;
}

#ifdef FEMUD_AB_PHASE

#include <rte_branch_prediction.h>
#include <rte_cycles.h>

unsigned pmd_ab_variant;

static struct {
	bool ready;
	unsigned mask;
	double cut; /* requests/s between the slow and the fast mode */
	uint64_t served, next, last;
	unsigned n;
	uint64_t dur[PMD_AB_MAX_PHASES];
	uint8_t on[PMD_AB_MAX_PHASES];
} ab;

static void ab_setup(void)
{
	const char *m = getenv("FEMUD_AB_MASK"), *c = getenv("FEMUD_AB_CUT");

	ab.mask = m != NULL ? (unsigned)strtoul(m, NULL, 0) : 1u;
	ab.cut = c != NULL ? strtod(c, NULL) : 900000.0;
	ab.next = FEMUD_AB_PHASE;
	ab.ready = true;
}

void pmd_ab_served(unsigned n)
{
	uint64_t t;

	if (unlikely(!ab.ready))
		ab_setup();
	ab.served += n;
	if (likely(ab.served < ab.next))
		return;
	t = rte_rdtsc();
	if (ab.last != 0 && ab.n < PMD_AB_MAX_PHASES) {
		ab.dur[ab.n] = t - ab.last;
		ab.on[ab.n++] = pmd_ab_variant != 0;
	}
	ab.last = t;
	ab.next = ab.served + FEMUD_AB_PHASE;
	pmd_ab_variant = pmd_ab_variant != 0 ? 0 : ab.mask;
}

static void ab_line(FILE *out, const char *what, double lo, double hi, double hz)
{
	struct pmd_ab_summary s;

	if (pmd_ab_summarize(ab.dur, ab.on, ab.n, FEMUD_AB_PHASE, hz, lo, hi, &s) == 0) {
		fprintf(out, "ab: %s: no phase triple\n", what);
		return;
	}
	fprintf(out,
		"ab: %s: %u triples, variant/baseline speed median %.4f (q1 %.4f, q3 %.4f), "
		"variant ahead in %u\n",
		what, s.triples, s.median, s.q1, s.q3, s.ahead);
}

void pmd_ab_report(FILE *out)
{
	double hz = pmd_clock.mult != 0
			? (double)PMD_NS_PER_S * 4294967296.0 / (double)pmd_clock.mult
			: 1.0;
	char what[96];

	fprintf(out, "ab: mask %#x, %u requests a phase, %u phases\n", ab.mask,
		(unsigned)FEMUD_AB_PHASE, ab.n);
	ab_line(out, "all", 0.0, 1e300, hz);
	snprintf(what, sizeof(what), "fast mode (baseline >= %.0f/s)", ab.cut);
	ab_line(out, what, ab.cut, 1e300, hz);
	snprintf(what, sizeof(what), "slow mode (baseline < %.0f/s)", ab.cut);
	ab_line(out, what, 0.0, ab.cut, hz);
}

#endif /* FEMUD_AB_PHASE */
