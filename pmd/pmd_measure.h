/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_measure.h - every measurement hook of the request path, in one place:
 * the cost breakdown (meson -Dcost_breakdown=true) and the in-run A/B
 * (meson -Dab_phase=N, pmd_ab.h).
 *
 * Rule: outside this header no pmd/ or ftl/ file tests a measurement
 * option; code calls the PMD_COST_* and PMD_AB* macros below, which in a
 * normal build compile to nothing (their state, declared through them,
 * included), so no measuring code or data reaches the product.
 * May touch: the caller's queue counters (struct pmd_vq_stats, cost_*
 * fields), the calling thread's copy tick count, pmd_ab.h.
 */
#ifndef PMD_MEASURE_H
#define PMD_MEASURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Cost breakdown: TSC ticks of each phase of a sweep (vq.c) summed over
 * requests in per-queue counters.  A stopwatch (PMD_COST_WATCH) charges the
 * time since it last started to a phase (PMD_COST_LAP), less what nested
 * measurements charged meanwhile (data hints to cost_hint, the transport's
 * data copies to cost_copy); a copy inside a model's submit() is the
 * model's time.  rdtscp waits for the loads before it, so that a phase is
 * not charged with the misses of the one before.
 */
#ifdef FEMUD_COST_BREAKDOWN

#include <x86intrin.h>

#define PMD_COST_ON 1

/* The cost counters of a queue: X(field, printed name, kind), as PMD_VQ_COUNTERS. */
#define PMD_VQ_COST_COUNTERS(X)                                                                    \
	X(cost_ring, "cost_ring_ticks", PMD_CTR_SUM) /* avail, peeks, inflight */                  \
	X(cost_hint, "cost_hint_ticks", PMD_CTR_SUM) /* data prefetch hints of the peeks */        \
	X(cost_validate, "cost_validate_ticks", PMD_CTR_SUM) /* pmd_chain_parse */                 \
	X(cost_model, "cost_model_ticks", PMD_CTR_SUM) /* checks and submit, less the copy */      \
	X(cost_copy, "cost_copy_ticks", PMD_CTR_SUM)   /* the transport's data copies */           \
	X(cost_complete, "cost_complete_ticks", PMD_CTR_SUM) /* status, used entry, heap */        \
	X(cost_publish, "cost_publish_ticks", PMD_CTR_SUM)   /* used index, call decision */       \
	X(cost_sweeps, "cost_sweeps", PMD_CTR_SUM)	     /* sweeps that published */

/* TSC ticks the calling thread spent in the transport's data copies (pmd_cost.c). */
extern __thread uint64_t pmd_cost_copy_ticks;

static inline uint64_t pmd_cost_now(void)
{
	unsigned aux;

	return __rdtscp(&aux);
}

struct pmd_cost_watch {
	uint64_t t;    /* started at */
	uint64_t hint; /* the queue's cost_hint then */
	uint64_t copy; /* pmd_cost_copy_ticks then */
};

static inline void pmd_cost_start(struct pmd_cost_watch *w, const uint64_t *hint)
{
	w->hint = *hint;
	w->copy = pmd_cost_copy_ticks;
	w->t = pmd_cost_now();
}

/* Charge the lap to *phase less nested hints, its copies to *copy; restart. */
static inline void pmd_cost_lap(struct pmd_cost_watch *w, const uint64_t *hint, uint64_t *copy,
				uint64_t *phase)
{
	uint64_t now = pmd_cost_now();
	uint64_t copied = pmd_cost_copy_ticks - w->copy;

	__atomic_store_n(copy, *copy + copied, __ATOMIC_RELAXED);
	__atomic_store_n(phase, *phase + (now - w->t) - (*hint - w->hint) - copied,
			 __ATOMIC_RELAXED);
	w->hint = *hint;
	w->copy = pmd_cost_copy_ticks;
	w->t = now;
}

/* Declare and start stopwatch w on the counters st (a struct pmd_vq_stats). */
#define PMD_COST_WATCH(w, st)                                                                      \
	struct pmd_cost_watch w;                                                                   \
	pmd_cost_start(&(w), &(st).cost_hint)
#define PMD_COST_RESTART(w, st) pmd_cost_start(&(w), &(st).cost_hint)
#define PMD_COST_LAP(w, st, phase)                                                                 \
	pmd_cost_lap(&(w), &(st).cost_hint, &(st).cost_copy, &(st).cost_##phase)
/* Count one more of a cost event (cost_sweeps). */
#define PMD_COST_COUNT(st, what)                                                                   \
	__atomic_store_n(&(st).cost_##what, (st).cost_##what + 1, __ATOMIC_RELAXED)
/* Time the transport's own data copy between these two (same block). */
#define PMD_COST_COPY_BEGIN(v) const uint64_t v = pmd_cost_now()
#define PMD_COST_COPY_END(v) (pmd_cost_copy_ticks += pmd_cost_now() - (v))

struct pmd_vq_stats;

/*
 * The breakdown of counters c over requests requests, as ns per request:
 * a text line ("  qN cost_ns_per_request ring .. total .."; tsc_hz converts
 * ticks) or a JSON fragment (", \"cost_ns\": {...}, ..."; ticks_per_ns).
 */
void pmd_vq_cost_print(FILE *out, unsigned qid, const struct pmd_vq_stats *c, uint64_t requests,
		       uint64_t tsc_hz);
void pmd_vq_cost_json(FILE *out, const struct pmd_vq_stats *c, uint64_t requests,
		      double ticks_per_ns);
#define PMD_COST_PRINT(out, qid, c, requests, tsc_hz)                                              \
	pmd_vq_cost_print(out, qid, c, requests, tsc_hz)
#define PMD_COST_JSON(out, c, requests, ticks_per_ns)                                              \
	pmd_vq_cost_json(out, c, requests, ticks_per_ns)

#else /* no cost breakdown: nothing measured, nothing stored */

#define PMD_COST_ON 0
#define PMD_VQ_COST_COUNTERS(X)
#define PMD_COST_WATCH(w, st) ((void)0)
#define PMD_COST_RESTART(w, st) ((void)0)
#define PMD_COST_LAP(w, st, phase) ((void)0)
#define PMD_COST_COUNT(st, what) ((void)0)
#define PMD_COST_COPY_BEGIN(v) ((void)0)
#define PMD_COST_COPY_END(v) ((void)0)
#define PMD_COST_PRINT(out, qid, c, requests, tsc_hz) ((void)0)
#define PMD_COST_JSON(out, c, requests, ticks_per_ns) ((void)0)

#endif /* FEMUD_COST_BREAKDOWN */

/*
 * In-run A/B (pmd_ab.h): code under test reads PMD_AB(bit), the constant 0
 * in other builds, so the compiler drops the variant.  The poller reports
 * the requests it served (PMD_AB_SERVED), gives its turn to a copy phase
 * when one is due (PMD_AB_COPY_PHASE: true when it ran one), and femud
 * prints the summary at exit (PMD_AB_REPORT).
 */
#ifdef FEMUD_AB_PHASE

#include "pmd/pmd_ab.h"

#define PMD_AB_PHASE_REQUESTS FEMUD_AB_PHASE
#define PMD_AB(bit) (pmd_ab_variant & (bit))
#define PMD_AB_SERVED(n) pmd_ab_served(n)
#define PMD_AB_COPY_PHASE(target) (pmd_ab_copy_turn() && (pmd_ab_copy_phase(target), true))
#define PMD_AB_REPORT(out) pmd_ab_report(out)

#else /* no A/B: no phase clock, no variant */

#define PMD_AB_PHASE_REQUESTS 0
#define PMD_AB(bit) 0u
#define PMD_AB_SERVED(n) ((void)0)
#define PMD_AB_COPY_PHASE(target) false
#define PMD_AB_REPORT(out) ((void)0)

#endif /* FEMUD_AB_PHASE */

#endif /* PMD_MEASURE_H */
