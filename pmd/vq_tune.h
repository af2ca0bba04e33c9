/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_tune.h - a queue's hint trials: which of two ways of hinting its
 * sweeps serve faster, the usual one or an alternative, measured on its own
 * requests.  One trial per kind of sweep (pmd_vq_look_follow()):
 *   - small requests: near hints on (usual), or none, the copies taking
 *     their own misses (alternative).  Where the first level's miss buffers
 *     outlast a few requests' eight lines each, the hints overlap their
 *     misses; where they run out, the hints stall the sweep and plain
 *     copies are faster.
 *   - large requests: each read's data into the second-level cache, in two
 *     parts (usual), or only its first lines into the first level
 *     (alternative, the near hint: the hardware prefetcher streams the
 *     rest).  Which is faster changes with the processor and, on a VM, from
 *     one minute to the next.
 * A trial serves PMD_VQ_TUNE_WINDOWS windows of PMD_VQ_TUNE_WINDOW_REQS
 * requests (PMD_VQ_TUNE_WINDOW_REQS_LARGE for large ones), the usual way
 * and the alternative in the order usual, alt, alt, usual (twice, so that a
 * change of the machine's pace weighs on both alike), and takes the
 * alternative only when the median TSC ticks per request of its windows are
 * PMD_VQ_TUNE_MARGIN_PCT percent below the usual way's.  The caller says
 * what a sweep's ticks are (pmd_vq_tune_ticks()): a small requests' sweep
 * its own time, a large requests' sweep the time since the trial's last
 * sweep ended.  It repeats every PMD_VQ_TUNE_PERIOD_REQS requests of its
 * kind of sweep.
 *
 * Only sweeps of PMD_VQ_TUNE_MIN_SWEEP requests or more count (a single
 * request is served unhinted either way), and not the first such sweep of a
 * window (it still has the other way's hints, or lacks them).  A trial that
 * meets PMD_VQ_TUNE_MAX_SKIPPED smaller sweeps gives up, its last outcome
 * standing, and waits a period: at queue depth 1 it would never end, and
 * the caller reads the clock around every sweep of a trial.  Sweeps of the
 * other kind neither count nor advance a trial.
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
/* large requests' windows: their effect is smaller against the VM's noise */
#define PMD_VQ_TUNE_WINDOW_REQS_LARGE 8192u
#define PMD_VQ_TUNE_MIN_SWEEP 2u
/* a trial that met this many sweeps too small to count gives up (QD1: no clock reads) */
#define PMD_VQ_TUNE_MAX_SKIPPED 4096u
#define PMD_VQ_TUNE_MARGIN_PCT 3u
/* 128 trials' worth: at most 1/256 of the requests are served the slower way */
#define PMD_VQ_TUNE_PERIOD_REQS (1u << 20)

struct pmd_vq_tune {
	uint64_t ticks;	      /* of the window in progress, so far */
	uint32_t reqs;	      /* of the window in progress, so far */
	uint32_t until;	      /* requests of its kind of sweep before the next trial */
	uint32_t skipped;     /* sweeps of the trial in progress too small to count */
	uint32_t window_reqs; /* requests a window counts */
	uint8_t window;	      /* of the trial in progress; PMD_VQ_TUNE_WINDOWS: none */
	bool warm;	      /* the window's first counted sweep is behind it */
	bool alt;	      /* the last trial took the alternative */
	/* ticks per request of each window of the trial in progress, times 256 */
	uint64_t rate[PMD_VQ_TUNE_WINDOWS];
};

/*
 * A new queue's tuner, window_reqs requests a window: its first sweeps of its
 * kind start a trial, the usual way until then.
 */
static inline void pmd_vq_tune_init(struct pmd_vq_tune *t, uint32_t window_reqs)
{
	*t = (struct pmd_vq_tune){
	    .window = PMD_VQ_TUNE_WINDOWS, .until = 0, .window_reqs = window_reqs};
}

/* Is a trial in progress (the caller then reads the clock around small sweeps)? */
static inline bool pmd_vq_tune_measuring(const struct pmd_vq_tune *t)
{
	return t->window < PMD_VQ_TUNE_WINDOWS;
}

/* Window w of a trial tries the alternative: windows 1, 2, 5, 6 (usual, alt, alt, usual, twice). */
static inline bool pmd_vq_tune_window_alt(unsigned w)
{
	return ((w + 1) >> 1) & 1;
}

/* Do the next sweeps of the tuner's kind take the alternative? */
static inline bool pmd_vq_tune_alt(const struct pmd_vq_tune *t)
{
	if (pmd_vq_tune_measuring(t))
		return pmd_vq_tune_window_alt(t->window);
	return t->alt;
}

/* The median of the alternative's (alt) or the usual way's windows, ticks/request x 256. */
static inline uint64_t pmd_vq_tune_median(const struct pmd_vq_tune *t, bool alt)
{
	uint64_t v[PMD_VQ_TUNE_WINDOWS / 2], x;
	unsigned n = 0, i, j;

	for (i = 0; i < PMD_VQ_TUNE_WINDOWS; i++) {
		if (pmd_vq_tune_window_alt(i) != alt)
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
	uint64_t usual = pmd_vq_tune_median(t, false), alt = pmd_vq_tune_median(t, true);

	t->alt = alt * 100 < usual * (100 - PMD_VQ_TUNE_MARGIN_PCT);
	t->window = PMD_VQ_TUNE_WINDOWS;
	t->until = PMD_VQ_TUNE_PERIOD_REQS;
}

/*
 * A sweep of the tuner's kind served n requests in ticks (read only while
 * pmd_vq_tune_measuring(); 0 otherwise).  True when it ended a trial (its
 * outcome in .alt); pmd_vq_tune_alt() says what the next sweeps do.
 */
static inline bool pmd_vq_tune_sweep(struct pmd_vq_tune *t, uint64_t ticks, unsigned n)
{
	if (!pmd_vq_tune_measuring(t)) {
		if (t->until > n) {
			t->until -= n;
			return false;
		}
		*t =
		    (struct pmd_vq_tune){.window = 0, .alt = t->alt, .window_reqs = t->window_reqs};
		return false;
	}
	if (n < PMD_VQ_TUNE_MIN_SWEEP) {
		if (++t->skipped >= PMD_VQ_TUNE_MAX_SKIPPED) {
			t->window = PMD_VQ_TUNE_WINDOWS; /* the last outcome stands */
			t->until = PMD_VQ_TUNE_PERIOD_REQS;
		}
		return false;
	}
	if (!t->warm) {
		t->warm = true;
		return false;
	}
	t->ticks += ticks;
	t->reqs += n;
	if (t->reqs < t->window_reqs)
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
