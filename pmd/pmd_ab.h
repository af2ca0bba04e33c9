/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_ab.h - in-run A/B for developers: two variants of the poller's code
 * taking turns inside one femud run.
 *
 * On the 2-CPU VMs this project is measured on, two runs a few seconds apart
 * can differ 1.6x (the host moves the vCPUs), so an A/B of separate runs, even
 * adjacent and alternating, resolves only effects of a few percent.  A build
 * with `meson setup ... -Dab_phase=N` (N requests per phase) flips
 * pmd_ab_variant between 0 and the mask in $FEMUD_AB_MASK (default 1) every
 * N requests the poller serves: both variants then share one run, one
 * connection and, nearly always, one speed mode.  At exit femud prints, for
 * every phase between two of the other kind (a phase triple), the variant's
 * speed against the baseline's there (the middle phase against the mean of
 * its neighbours): median, quartiles and in how many triples the variant was
 * ahead, over all triples and split at $FEMUD_AB_CUT requests/s (default
 * 900000) into the VM's fast and slow modes.  Triples overlap (each phase is
 * a middle once): counting only variant middles read a null A/B 0.995-0.996;
 * with both kinds a null A/B (a mask no code reads) reads 0.9997-1.0008
 * over 350-1200 triples of 20000 requests, quartiles about +-2%.
 *
 * Code under test reads PMD_AB(bit): in other builds it is the constant 0
 * and the compiler drops the variant, so no ab code reaches a normal build.
 * One poller (one lcore) only: phases count that poller's requests.
 *
 * Copy phases: with $FEMUD_AB_COPY=bytes (e.g. 4096) the variant's phases
 * serve no queue; the poller reads that many bytes at random offsets of
 * its first queue's device straight through the model (submit(), or for a
 * model with a flat read region fm_data_read() as serving does, with the
 * look-ahead hints a sweep gives: first half PMD_VQ_LOOKAHEAD ahead, the
 * rest PMD_VQ_HINT_REST_AHEAD ahead, FM_REQ_PREFETCHED) into rotating
 * buffers ($FEMUD_AB_COPY_SLOTS of them, default 32 as femu-floor's copy
 * rate), as many reads as a phase has requests.  The report then reads as
 * femud's serving rate against one core's copy rate through the same model
 * in the same speed mode: the issue-14 ratio without the 1.6x mode swings
 * of separate runs.  The initiator's requests wait during a copy phase.
 */
#ifndef PMD_AB_H
#define PMD_AB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Phases kept for the report (at 20000 requests a phase: ~60 s at 2M/s). */
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
 * Summarize phases: dur[i] the TSC ticks of phase i, on[i] whether the
 * variant ran in it; each phase between two of the other kind makes a
 * triple (a variant middle against the mean of its neighbours, or the mean
 * of variant neighbours against a baseline middle).  Only triples whose baseline speed, in requests
 * per second (phase_requests per phase at tsc_hz), lies in [lo, hi) count.  Returns the number of
 * triples.
 */
unsigned pmd_ab_summarize(const uint64_t *dur, const uint8_t *on, unsigned n,
			  uint64_t phase_requests, double tsc_hz, double lo, double hi,
			  struct pmd_ab_summary *s);

#ifdef FEMUD_AB_PHASE

extern unsigned pmd_ab_variant;

#define PMD_AB(bit) (pmd_ab_variant & (bit))

/* The poller served n requests in its last pass (n > 0): close a phase when due. */
void pmd_ab_served(unsigned n);

/* Print the summaries (femud's stop path). */
void pmd_ab_report(FILE *out);

struct pmd_blk_target;

/* Is the coming phase a copy phase ($FEMUD_AB_COPY set and the variant's turn)? */
bool pmd_ab_copy_turn(void);

/* Run one copy phase through t's model and close it (t: the first queue's device). */
void pmd_ab_copy_phase(const struct pmd_blk_target *t);

#else

#define PMD_AB(bit) 0u

static inline void pmd_ab_served(unsigned n)
{
	(void)n;
}

static inline void pmd_ab_report(FILE *out)
{
	(void)out;
}

#endif /* FEMUD_AB_PHASE */

#endif /* PMD_AB_H */
