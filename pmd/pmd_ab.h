/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_ab.h - in-run A/B for developers: two variants of the poller's code
 * taking turns inside one femud run (built only with -Dab_phase=N; the
 * request path reaches it through pmd_measure.h's PMD_AB* macros).
 *
 * Two separate runs on a shared VM differ more than the effects measured,
 * so both variants share one run: the poller flips pmd_ab_variant between 0
 * and the mask in $FEMUD_AB_MASK (default 1) every N requests it serves.  At
 * exit femud prints, for every phase between two of the other kind (a phase
 * triple), the variant's speed against the baseline's there: median,
 * quartiles and in how many triples the variant was ahead, over all triples
 * and split at $FEMUD_AB_CUT requests/s (default 900000) into the VM's fast
 * and slow modes.  Triples overlap: each phase is a middle once, so a null
 * A/B reads 1 without a bias towards either kind.  One poller (one lcore)
 * only: phases count that poller's requests.
 *
 * Copy phases: with $FEMUD_AB_COPY=bytes the variant's phases serve no
 * queue; the poller reads that many bytes at random offsets of its first
 * queue's device through pmd_blk_req_read(), with the second-level hints a
 * sweep of large reads gives by default (not the near ones, vq_tune.h),
 * into $FEMUD_AB_COPY_SLOTS rotating buffers (default 32), as many reads as a
 * phase has requests.  The report then reads as femud's serving rate
 * against one core's copy rate through the same path in the same speed mode.
 * The initiator's requests wait during a copy phase.
 */
#ifndef PMD_AB_H
#define PMD_AB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Phases kept for the report. */
#define PMD_AB_MAX_PHASES 8192

/* One summary of phase triples (pmd_ab_summarize()). */
struct pmd_ab_summary {
	unsigned triples; /* phase triples counted */
	unsigned ahead;	  /* of them, those where the variant was faster */
	double median;	  /* variant speed / neighbours' speed: > 1 the variant is faster */
	double q1, q3;	  /* quartiles of that ratio */
	double var_rate;  /* median speed of the triples' variant side, requests/s */
	double base_rate; /* median speed of their baseline side, requests/s */
};

/*
 * Summarize phases (pmd_ab.c): dur[i] the TSC ticks of phase i, on[i]
 * whether the variant ran in it; each phase between two of the other kind
 * makes a triple (a variant middle against the mean of its neighbours, or
 * the mean of variant neighbours against a baseline middle).  Only triples
 * whose baseline speed, in requests per second (phase_requests per phase at
 * tsc_hz), lies in [lo, hi) count.  Returns the number of triples.
 */
unsigned pmd_ab_summarize(const uint64_t *dur, const uint8_t *on, unsigned n,
			  uint64_t phase_requests, double tsc_hz, double lo, double hi,
			  struct pmd_ab_summary *s);

/* The phase clock (pmd_ab_phase.c): the variant's bits now, 0 in baseline phases. */
extern unsigned pmd_ab_variant;

/* The poller served n requests in its last pass (n > 0): close a phase when due. */
void pmd_ab_served(unsigned n);

/* Print the summaries (femud's stop path). */
void pmd_ab_report(FILE *out);

struct pmd_blk_target;

/* Is the coming phase a copy phase ($FEMUD_AB_COPY set and the variant's turn)? */
bool pmd_ab_copy_turn(void);

/* Run one copy phase through t's read path and close it (t: the first queue's device). */
void pmd_ab_copy_phase(const struct pmd_blk_target *t);

#endif /* PMD_AB_H */
