/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_watch.h - the watchdog of rte_vhost's message thread.  One thread
 * runs every vhost-user message and every rte_vhost callback of every
 * device, one after the other: a femud hook that does not return (waiting
 * for a poller that never answers, for ctl_lock held elsewhere, in a
 * syscall on a frontend's fd) stops the control path of all devices, and
 * nothing else says so.
 *
 * femud's hooks (pmd_blk.c) mark where they enter and leave
 * (pmd_ctl_watch_enter / pmd_ctl_watch_leave, a seqlock the hooks write
 * and the watchdog reads: no lock shared with the hooks).  A control
 * thread looks every PMD_CTL_WATCH_TICK_NS; a hook running for
 * PMD_CTL_WATCH_WARN_NS is logged with what it is (hook, device,
 * connection, request) and what the kernel says of the thread, again
 * every PMD_CTL_WATCH_WARN_EVERY_NS, and a line says when it returned.
 * Times are CLOCK_MONOTONIC ns.
 */
#ifndef PMD_CTL_WATCH_H
#define PMD_CTL_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "pmd/thread_diag.h"

#define PMD_CTL_WATCH_TICK_NS (250ull * 1000 * 1000)
#define PMD_CTL_WATCH_WARN_NS (2ull * 1000 * 1000 * 1000)
#define PMD_CTL_WATCH_WARN_EVERY_NS (10ull * 1000 * 1000 * 1000)

/* A hook starts: hook names it (a string literal), path its device, request its message (0: none).
 */
void pmd_ctl_watch_enter(const char *hook, const char *path, int vid, uint32_t request);
/* ... and returns. */
void pmd_ctl_watch_leave(void);

/* What the watchdog remembers between two looks. */
struct pmd_ctl_watch_state {
	uint64_t seq;	   /* the hook call last seen (0: none) */
	uint64_t warn_ns;  /* next warning due for it */
	bool warned;	   /* it was warned about */
	uint64_t since_ns; /* when it entered */
	char what[192];	   /* "hook (device, connection N, request R)" */
	struct pmd_thread_sample first;
};

enum pmd_ctl_watch_verdict {
	PMD_CTL_WATCH_IDLE,	/* no hook runs */
	PMD_CTL_WATCH_RUNNING,	/* a hook runs, not (yet) for long */
	PMD_CTL_WATCH_WARNED,	/* a warning was logged now */
	PMD_CTL_WATCH_RETURNED, /* a hook warned about has returned (logged) */
};

/* One look at now_ns (CLOCK_MONOTONIC); w zeroed before the first. */
enum pmd_ctl_watch_verdict pmd_ctl_watch_look(struct pmd_ctl_watch_state *w, uint64_t now_ns);

/* CLOCK_MONOTONIC in ns. */
uint64_t pmd_ctl_watch_now(void);

/* Start the watchdog thread (once; later calls do nothing).  0 or -errno. */
int pmd_ctl_watch_start(void);

#endif /* PMD_CTL_WATCH_H */
