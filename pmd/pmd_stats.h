/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_stats.h - the pmd's counters: what they are, who writes them and how
 * another thread reads them.
 *
 * Every counter has exactly one writer thread:
 *  - queue counters (struct pmd_vq_stats) and poller counters (struct
 *    pmd_poller_stats) are written only by the poller that owns the queue or
 *    is the poller, with PMD_CTR_ADD / PMD_CTR_MAX (relaxed atomic stores:
 *    the same instructions as a plain increment, no lock prefix);
 *  - kicks, connections and the counters of stopped queues are written only
 *    by control code under the pmd's control lock.
 * Readers on other threads use PMD_CTR_READ (relaxed atomic loads) and so
 * never see a torn value; they never write a poller's counters.  A reset is
 * done by the writer: pmd_blk_stats_reset() and pmd_pollers_stats_reset()
 * hand a reset to each poller through its control ring.
 *
 * The counter lists are X-macros so that the snapshot, the text printer and
 * the JSON printer (daemon/stats.c) all follow from one line per counter.
 * To add a counter: add an X(...) line to the list, update it on its one
 * writer with PMD_CTR_ADD / PMD_CTR_MAX; every printer shows it.
 *
 * Units: bytes, nanoseconds (of pmd_clock), plain counts.
 */
#ifndef PMD_STATS_H
#define PMD_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "pmd/pmd_measure.h"

/* How a counter of several queues (or of stopped queues) is combined. */
#define PMD_CTR_SUM 0
#define PMD_CTR_MAX 1

/* Per-queue counters: X(field, printed name, PMD_CTR_SUM or PMD_CTR_MAX). */
/* Cost breakdown builds add PMD_VQ_COST_COUNTERS (pmd_measure.h); none in others. */
#define PMD_VQ_COUNTERS(X)                                                                         \
	X(requests, "requests", PMD_CTR_SUM)	   /* requests completed */                        \
	X(rd_bytes, "read_bytes", PMD_CTR_SUM)	   /* data bytes read by the guest */              \
	X(wr_bytes, "write_bytes", PMD_CTR_SUM)	   /* data bytes written by the guest */           \
	X(errors, "errors", PMD_CTR_SUM)	   /* requests answered IOERR or UNSUPP */         \
	X(calls, "calls", PMD_CTR_SUM)		   /* interrupts sent (callfd writes) */           \
	X(calls_saved, "calls_saved", PMD_CTR_SUM) /* used updates the guest wanted no call for */ \
	X(call_errors, "call_errors", PMD_CTR_SUM) /* calls whose callfd write failed */           \
	X(calls_late, "calls_late", PMD_CTR_SUM)   /* calls sent by a recheck (vq_impl.h) */       \
	X(deferred, "deferred", PMD_CTR_SUM)	   /* completions posted from the timer heap */    \
	X(late, "late", PMD_CTR_SUM)		   /* of those, > PMD_LATE_NS after due */         \
	X(late_ns_sum, "late_ns_sum", PMD_CTR_SUM) /* ns late, summed over late completions */     \
	X(late_ns_max, "late_ns_max", PMD_CTR_MAX)                                                 \
	X(broken, "broken", PMD_CTR_SUM)	   /* stops for an unanswerable chain */           \
	X(resubmitted, "resubmitted", PMD_CTR_SUM) /* requests replayed from the inflight region   \
						    */                                             \
	X(hint_trials, "hint_trials", PMD_CTR_SUM) /* small-read hint trials (vq_tune.h) */        \
	X(hint_trials_off, "hint_trials_off", PMD_CTR_SUM) /* of those, hints turned off */        \
	X(near_trials, "near_trials", PMD_CTR_SUM) /* large-read near-hint trials (vq_tune.h) */   \
	X(near_trials_near, "near_trials_near", PMD_CTR_SUM) /* of those, near hints taken */      \
	PMD_VQ_COST_COUNTERS(X)

/* Per-poller counters: X(field, printed name, PMD_CTR_SUM or PMD_CTR_MAX). */
#define PMD_POLLER_COUNTERS(X)                                                                     \
	X(sweeps, "sweeps", PMD_CTR_SUM)	   /* passes over the poller's queues */           \
	X(busy_sweeps, "busy_sweeps", PMD_CTR_SUM) /* of those, passes that did work */            \
	/* longest time between two passes (ns): the worst wait of its queues for service, its     \
	 * own work plus time the OS did not run it; an adaptive poller's sleeps not counted */    \
	X(pass_gap_ns_max, "pass_gap_ns_max", PMD_CTR_MAX)                                         \
	/* adaptive polling (poller_sleep.c) */                                                    \
	X(sleeps, "sleeps", PMD_CTR_SUM)		 /* waits in io_uring */                   \
	X(sleeps_aborted, "sleeps_aborted", PMD_CTR_SUM) /* a request came in while re-arming */   \
	X(wake_kick, "wake_kick", PMD_CTR_SUM)		 /* woken by a guest kick */               \
	X(wake_timer, "wake_timer", PMD_CTR_SUM)	 /* woken for a pending completion */      \
	X(wake_recheck, "wake_recheck", PMD_CTR_SUM)	 /* a request came without a kick */       \
	X(wake_ctl, "wake_ctl", PMD_CTR_SUM)		 /* woken by attach, detach or stop */     \
	X(asleep_ns, "asleep_ns", PMD_CTR_SUM)		 /* time spent in the waits */             \
	X(sleeping, "sleeping", PMD_CTR_MAX)		 /* 1 while it waits (a gauge) */

#define PMD_STATS_FIELD_(field, name, kind) uint64_t field;

struct pmd_vq_stats {
	PMD_VQ_COUNTERS(PMD_STATS_FIELD_)
};

struct pmd_poller_stats {
	PMD_POLLER_COUNTERS(PMD_STATS_FIELD_)
};

/* Writer side (the counter's one writer thread only). */
#define PMD_CTR_ADD(c, v) __atomic_store_n(&(c), (c) + (v), __ATOMIC_RELAXED)
#define PMD_CTR_INC(c) PMD_CTR_ADD(c, 1)
#define PMD_CTR_RAISE(c, v)                                                                        \
	do {                                                                                       \
		if ((v) > (c))                                                                     \
			__atomic_store_n(&(c), (v), __ATOMIC_RELAXED);                             \
	} while (0)
#define PMD_CTR_SET(c, v) __atomic_store_n(&(c), (v), __ATOMIC_RELAXED)
/* Reader side (any thread). */
#define PMD_CTR_READ(c) __atomic_load_n(&(c), __ATOMIC_RELAXED)

/* a += b, each counter by its kind; b may be written concurrently by its writer. */
void pmd_vq_stats_add(struct pmd_vq_stats *a, const struct pmd_vq_stats *b);

/* Zero every counter of s (on s's writer thread). */
void pmd_vq_stats_zero(struct pmd_vq_stats *s);

#define PMD_STATS_PATH_LEN 108
#define PMD_STATS_MAX_QUEUES 64 /* = PMD_MAX_QUEUES */

/* One queue of a device, as read by pmd_blk_stats(). */
struct pmd_queue_snap {
	struct pmd_vq_stats st; /* stopped queues plus the running one */
	uint64_t kicks;		/* guest notifications received (read by control code) */
	int poller;		/* poller serving it now, -1 when not started */
	/*
	 * Where a started queue stands (poller >= 0 only), read while its
	 * poller runs: a view for finding a stuck request, not a counter.
	 */
	uint16_t avail_next; /* avail ring index femud takes next */
	uint16_t used_next;  /* used ring index femud writes next (= used->idx once published) */
	uint32_t pending;    /* requests taken and not yet completed, replays to come included */
};

/* One device, as read by pmd_blk_stats(). */
struct pmd_dev_snap {
	char path[PMD_STATS_PATH_LEN];
	unsigned queues;      /* offered */
	uint64_t connections; /* accepted so far */
	unsigned live_conns;  /* connected now */
	struct pmd_queue_snap q[PMD_STATS_MAX_QUEUES];
};

/* One poller, as read by pmd_pollers_stats(). */
struct pmd_poller_snap {
	unsigned idx;
	unsigned lcore;
	unsigned nvq;	  /* queues it serves now */
	bool adaptive;	  /* poll mode now: sleeps when idle */
	uint64_t idle_ns; /* idle threshold of an adaptive poller, ns */
	struct pmd_poller_stats st;
};

#endif /* PMD_STATS_H */
