/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_tune.h - the hint trial of a queue: whether its sweeps of small
 * requests (pmd_vq_look_follow()) hint their data ahead, or leave the
 * copies to take their own misses.
 *
 * Whether hints pay for small reads depends on the processor.  Where a
 * second-level prefetch leaves the first level's miss buffers free, eight
 * hints per 512 B read overlap their misses; where each one holds a
 * first-level buffer until its line arrives, they stall the sweep and plain
 * copies are faster.  So each queue measures for itself: a trial serves
 * PMD_VQ_TUNE_WINDOWS windows of PMD_VQ_TUNE_WINDOW_REQS requests, hints on
 * and off in the order on, off, off, on (twice, so that a change of the
 * machine's pace weighs on both alike), and turns hints off only when the
 * median TSC ticks per request of the windows without them are
 * PMD_VQ_TUNE_MARGIN_PCT percent below those with them.  It repeats every
 * PMD_VQ_TUNE_PERIOD_REQS requests of small sweeps.
 *
 * Only sweeps of PMD_VQ_TUNE_MIN_SWEEP requests or more count (a single
 * request is served unhinted either way), and not the first such sweep of a
 * window (it still has the other setting's hints, or lacks them).  Sweeps
 * of large requests always hint: a 4 KiB read's hints are worth far more
 * than the trial could find.  Large sweeps neither count nor advance it.
 *
 * Units: TSC ticks, requests.  May touch: the tuner state it is given only;
 * no clock (the caller measures).
 */
#ifndef PMD_VQ_TUNE_H
#define PMD_VQ_TUNE_H

#include <stdbool.h>
#include <stdint.h>

#define PMD_VQ_TUNE_WINDOWS 8
#define PMD_VQ_TUNE_WINDOW_REQS 1024u
#define PMD_VQ_TUNE_MIN_SWEEP 2u
#define PMD_VQ_TUNE_MARGIN_PCT 3u
/* 128 trials' worth: at most 1/256 of the requests are served the slower way */
#define PMD_VQ_TUNE_PERIOD_REQS (1u << 20)

struct pmd_vq_tune {
	uint64_t ticks; /* of the window in progress, so far */
	uint32_t reqs;	/* of the window in progress, so far */
	uint32_t until; /* requests of small sweeps before the next trial */
	uint8_t window; /* of the trial in progress; PMD_VQ_TUNE_WINDOWS: none */
	bool warm;	/* the window's first counted sweep is behind it */
	bool off;	/* the last trial turned hints off */
	/* ticks per request of each window of the trial in progress, times 256 */
	uint64_t rate[PMD_VQ_TUNE_WINDOWS];
};

/* A new queue's tuner: its first small sweeps start a trial, hints on until then. */
static inline void pmd_vq_tune_init(struct pmd_vq_tune *t)
{
	*t = (struct pmd_vq_tune){.window = PMD_VQ_TUNE_WINDOWS, .until = 0};
}

/* Is a trial in progress (the caller then reads the clock around small sweeps)? */
static inline bool pmd_vq_tune_measuring(const struct pmd_vq_tune *t)
{
	return t->window < PMD_VQ_TUNE_WINDOWS;
}

/* Window w of a trial tries hints off: windows 1, 2, 5, 6 (on, off, off, on, twice). */
static inline bool pmd_vq_tune_window_off(unsigned w)
{
	return ((w + 1) >> 1) & 1;
}

/* Do the next small sweeps hint their data ahead? */
static inline bool pmd_vq_tune_hint(const struct pmd_vq_tune *t)
{
	if (pmd_vq_tune_measuring(t))
		return !pmd_vq_tune_window_off(t->window);
	return !t->off;
}

/* The median of the four windows with hints off (off) or on (ticks per request, times 256). */
static inline uint64_t pmd_vq_tune_median(const struct pmd_vq_tune *t, bool off)
{
	uint64_t v[PMD_VQ_TUNE_WINDOWS / 2], x;
	unsigned n = 0, i, j;

	for (i = 0; i < PMD_VQ_TUNE_WINDOWS; i++) {
		if (pmd_vq_tune_window_off(i) != off)
			continue;
		x = t->rate[i];
		for (j = n++; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The trial's last window closed: decide, and wait a period for the next one. */
static inline void pmd_vq_tune_decide(struct pmd_vq_tune *t)
{
	uint64_t on = pmd_vq_tune_median(t, false), off = pmd_vq_tune_median(t, true);

	t->off = off * 100 < on * (100 - PMD_VQ_TUNE_MARGIN_PCT);
	t->window = PMD_VQ_TUNE_WINDOWS;
	t->until = PMD_VQ_TUNE_PERIOD_REQS;
}

/*
 * A small sweep served n requests in ticks (read only while
 * pmd_vq_tune_measuring(); 0 otherwise).  True when it ended a trial (its
 * outcome in .off); pmd_vq_tune_hint() says what the next sweeps do.
 */
static inline bool pmd_vq_tune_sweep(struct pmd_vq_tune *t, uint64_t ticks, unsigned n)
{
	if (!pmd_vq_tune_measuring(t)) {
		if (t->until > n) {
			t->until -= n;
			return false;
		}
		*t = (struct pmd_vq_tune){.window = 0, .off = t->off};
		return false;
	}
	if (n < PMD_VQ_TUNE_MIN_SWEEP)
		return false;
	if (!t->warm) {
		t->warm = true;
		return false;
	}
	t->ticks += ticks;
	t->reqs += n;
	if (t->reqs < PMD_VQ_TUNE_WINDOW_REQS)
		return false;
	t->rate[t->window] = (t->ticks << 8) / t->reqs;
	t->ticks = 0;
	t->reqs = 0;
	t->warm = false;
	if (++t->window < PMD_VQ_TUNE_WINDOWS)
		return false;
	pmd_vq_tune_decide(t);
	return true;
}

#endif /* PMD_VQ_TUNE_H */
