/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * poller_watch.h - the pollers' watchdog: a control thread (off the
 * pollers' lcores) that looks at every running poller PMD_WATCH_TICK_NS
 * apart.  A poller that has finished no sweep for PMD_WATCH_STALL_NS is
 * sampled from /proc (thread_diag.h):
 *  - asleep (adaptive polling: its sleeping gauge, or in io_uring_enter):
 *    nothing is wrong, and nothing is read from /proc;
 *  - blocked in write() on an eventfd: a poller writes no eventfd but its
 *    queues' call fds, which femud made non-blocking when the queue started
 *    (vq_guard.h).  The flag belongs to the open file the frontend shares:
 *    a frontend that clears it again and fills the counter
 *    (0xfffffffffffffffe) blocks that write, and every queue of the poller
 *    with it.  The watchdog sets the flag again and reads the counter, so
 *    the write returns, and posts the fd for the poller, which then stops
 *    the queue (pmd_watch_take_rescue()): the stall lasts one look, once;
 *  - anything else for PMD_WATCH_WARN_NS: a warning saying what the kernel
 *    says of the thread (state, syscall, run-queue wait, CPU time), again
 *    every PMD_WATCH_WARN_EVERY_NS while it lasts, and a line when the
 *    poller sweeps again.
 * The I/O path sees only pmd_watch_take_rescue(): one load per call write.
 */
#ifndef PMD_POLLER_WATCH_H
#define PMD_POLLER_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmd/pmd.h"
#include "pmd/thread_diag.h"

/* Time between two looks at the pollers (ns). */
#define PMD_WATCH_TICK_NS (250ull * 1000 * 1000)
/* A poller with no finished sweep for this long is sampled (ns). */
#define PMD_WATCH_STALL_NS (500ull * 1000 * 1000)
/* ... and warned about after this long, then every PMD_WATCH_WARN_EVERY_NS (ns). */
#define PMD_WATCH_WARN_NS (2ull * 1000 * 1000 * 1000)
#define PMD_WATCH_WARN_EVERY_NS (10ull * 1000 * 1000 * 1000)

/* One poller as the watchdog sees it (filled by pmd_pollers_watch_snap()). */
struct pmd_watch_poller {
	unsigned idx;	 /* poller index, < PMD_MAX_POLLERS */
	unsigned lcore;	 /* for log lines */
	pid_t tid;	 /* its thread; 0 before its loop started */
	uint64_t sweeps; /* its sweep counter */
	bool running;	 /* its loop runs (started, not exited) */
	bool parked;	 /* held between two sweeps on purpose (pmd_pollers_park) */
	bool asleep;	 /* adaptive polling: waiting for a kick (its sleeping gauge) */
};

/* What the watchdog remembers of one poller between looks. */
struct pmd_watch_state {
	pid_t tid;
	uint64_t sweeps;   /* at the last look */
	uint64_t since_ns; /* when sweeps last moved (or the poller last slept) */
	uint64_t warn_ns;  /* next warning due; 0: none given for this stall */
	bool sampled;	   /* first holds the stall's first sample */
	bool warned;	   /* a warning was given for this stall */
	struct pmd_thread_sample first;
};

enum pmd_watch_verdict {
	PMD_WATCH_OK,	   /* it sweeps (or does not run) */
	PMD_WATCH_ASLEEP,  /* adaptive polling: asleep in io_uring_enter */
	PMD_WATCH_STALLED, /* no sweep for PMD_WATCH_STALL_NS, not warned (yet) */
	PMD_WATCH_WARNED,  /* a warning was logged now */
	PMD_WATCH_RESCUED, /* it was blocked writing a call eventfd, now freed */
};

/*
 * Look at p once, at now_ns (pmd_now_ns(), ns); w is zeroed before the
 * first look.  The watchdog thread calls it every tick; tests call it
 * directly with a thread of their own.
 */
enum pmd_watch_verdict pmd_watch_look(struct pmd_watch_state *w, const struct pmd_watch_poller *p,
				      uint64_t now_ns);

/* Rescued call fds, fd + 1 per poller index (0: none); written by the watchdog. */
extern int pmd_watch_rescued[PMD_MAX_POLLERS];

/*
 * After a call write of poller idx on fd: was fd the one the watchdog
 * freed?  Takes the post (true once).  A load on the I/O path.
 */
static inline bool pmd_watch_take_rescue(unsigned idx, int fd)
{
	int want = fd + 1;

	if (__builtin_expect(__atomic_load_n(&pmd_watch_rescued[idx], __ATOMIC_ACQUIRE) != want, 1))
		return false;
	return __atomic_compare_exchange_n(&pmd_watch_rescued[idx], &want, 0, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

/*
 * The running pollers now, at most max (poller.c).  Reads their counters
 * and flags without a lock: the watchdog must see a poller whose control
 * messages are stuck behind it.
 */
unsigned pmd_pollers_watch_snap(struct pmd_watch_poller *out, unsigned max);

/* Start the watchdog thread (once; later calls do nothing).  0 or -errno. */
int pmd_watch_start(void);

/* Stop it and wait for it (nothing when not started). */
void pmd_watch_stop(void);

#endif /* PMD_POLLER_WATCH_H */
