/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * poller_sleep.h - adaptive polling: a poller that found no new request on
 * any of its queues for its idle threshold sleeps in io_uring until a guest
 * kicks one of its queues, a control message arrives, or its earliest
 * pending completion is nearly due.
 *
 * Owns the poller's io_uring (created on the poller's own thread the first
 * time it wants to sleep: single issuer, task work deferred to its waits, so
 * nothing interrupts it while it polls), the multishot polls on its queues'
 * kick eventfds (armed lazily before a sleep, removed when a queue is
 * detached, re-armed when the kernel ends one) and the control eventfd; it
 * updates the poller's sleep counters (pmd_stats.h).  Everything except pmd_sleep_init/fini and
 * pmd_sleep_wake runs on the poller's thread (or, for pmd_sleep_forget,
 * on a control thread while the poller does not run).
 *
 * The sleep itself (pmd_sleep_run): re-arm notifications on every queue
 * (pmd_vq_notify_arm: flag or avail_event, full barrier), re-check every
 * avail ring, the control ring and the stop flag, then wait; on wake-up
 * suppress notifications again.  A kick the guest sends after our re-arm is
 * seen by the multishot poll; a request it published before seeing the
 * re-arm is seen by the re-check, and once more PMD_SLEEP_RECHECK_NS into
 * the sleep (a driver whose barrier did not order its avail index store
 * before its read of avail_event may have sent no kick and its index not
 * be visible yet at the first re-check: vq_impl.h).  Queues without a kick
 * fd, with requests left to replay, or whose model has background work keep
 * the poller busy.
 *
 * Units: ns of pmd_clock.
 */
#ifndef PMD_POLLER_SLEEP_H
#define PMD_POLLER_SLEEP_H

#include <stdbool.h>
#include <stdint.h>

#include <liburing.h>

#include "pmd/pmd_stats.h"
#include "pmd/vq.h"

/*
 * A sleep with a completion pending ends this long before it is due (the
 * poller then polls until it is): wake-up takes a few us to tens of us on a
 * loaded host, and a deferred completion must not be posted late.  With
 * less than this left the poller does not sleep.
 */
#define PMD_SLEEP_EARLY_NS 50000ull

/* A sleep looks at the avail rings again this far in (see above; counted wake_recheck). */
#define PMD_SLEEP_RECHECK_NS 10000ull

struct pmd_sleep {
	/* poller-owned */
	struct io_uring ring;
	bool ready;	     /* ring set up */
	bool failed;	     /* io_uring not usable here: the poller stays busy */
	bool ctl_armed;	     /* multishot poll on ctl_fd in place */
	uint64_t idle_ns;    /* threshold: no new request for this long */
	uint64_t idle_since; /* first empty sweep of this idle stretch, 0 = busy */
	uint64_t next_tag;   /* tags of kick polls (user_data >> 2) */
	uint64_t *cancel;    /* kick polls of detached queues to remove */
	unsigned ncancel;
	unsigned max_cancel;
	struct pmd_poller_stats *st; /* the poller's counters (sleeps, wake-ups: pmd_stats.h) */
	/* shared: written by control threads */
	int ctl_fd; /* eventfd */
};

/*
 * Set up (control thread, before the poller runs); the sleep counters go to
 * st, whose writer is the poller.  -errno on failure.
 */
int pmd_sleep_init(struct pmd_sleep *s, uint64_t idle_ns, unsigned max_queues,
		   struct pmd_poller_stats *st);
void pmd_sleep_fini(struct pmd_sleep *s);

/* Wake the poller if it sleeps (any thread; a write to its eventfd). */
void pmd_sleep_wake(struct pmd_sleep *s);

/*
 * q is being detached: its kick poll (if any) is removed on the poller's
 * next pass.  Safe on the poller, or on a control thread while the poller
 * does not run.
 */
void pmd_sleep_forget(struct pmd_sleep *s, struct pmd_vq *q);

/* Submit pending poll removals (poller thread). */
void pmd_sleep_flush(struct pmd_sleep *s);

/* The poller found work: the idle stretch ends. */
static inline void pmd_sleep_busy(struct pmd_sleep *s)
{
	s->idle_since = 0;
}

/* An empty sweep at now: has the poller been idle for its threshold? */
static inline bool pmd_sleep_due(struct pmd_sleep *s, uint64_t now)
{
	if (s->idle_since == 0) {
		s->idle_since = now;
		return false;
	}
	return now - s->idle_since >= s->idle_ns;
}

/*
 * What must keep a poller awake besides its queues: a control message
 * waiting, or a stop request.  Checked after notifications are re-armed.
 */
struct pmd_sleep_guard {
	bool (*pending)(void *arg);
	void *arg;
};

/*
 * Sleep if the queues allow it (see above), at now.  Returns with
 * notifications suppressed on every queue and the idle stretch ended.
 */
void pmd_sleep_run(struct pmd_sleep *s, struct pmd_vq *const *vqs, unsigned nvq, uint64_t now,
		   const struct pmd_sleep_guard *guard);

#endif /* PMD_POLLER_SLEEP_H */
