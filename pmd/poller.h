/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * poller.h - pollers and the lock-free hand-over of queues to them.
 *
 * Each poller owns a list of queues that only it touches while it runs.
 * Control code (rte_vhost's thread, the daemon's main thread) attaches and
 * detaches queues through a per-poller rte_ring of messages and waits for
 * the poller's acknowledgement (after a detach the queue is flushed and no
 * longer referenced).  While a poller is not running the control code
 * applies the message itself.
 */
#ifndef PMD_POLLER_H
#define PMD_POLLER_H

#include <stdbool.h>
#include <stdio.h>

#include "pmd/vq.h"

/* Queues one poller can hold. */
#define PMD_POLLER_MAX_VQ 4096

/* Number of pollers configured by pmd_init(); 0 before. */
unsigned pmd_poller_count(void);

/* NUMA node of poller idx's lcore (where its queues' state should live). */
int pmd_poller_node(unsigned idx);

/* Hand q to poller idx; returns 0 once the poller has it (-ENOMEM: no message). */
int pmd_poller_attach(unsigned idx, struct pmd_vq *q);

/* Take q back from its poller; returns once the poller has let go of it. */
void pmd_poller_detach(struct pmd_vq *q);

/*
 * The same without posting q's pending completions: its ring now belongs
 * to another connection (the frontend reconnected on the same memory), so
 * nothing more may be written there.  Requests that had not completed stay
 * marked in the inflight region, if any, for the new connection to replay.
 */
void pmd_poller_abandon(struct pmd_vq *q);

/*
 * Run fn(arg) on poller idx (between two sweeps) and return once it has
 * run; while the poller is not running, run it here.  Control code uses it
 * to act on what only the poller may write (its queues' counters, a
 * single-writer model's state).  Not from a poller.
 */
void pmd_poller_call(unsigned idx, void (*fn)(void *arg), void *arg);

#endif /* PMD_POLLER_H */
