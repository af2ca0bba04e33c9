/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * race_harness.h - what the lost-call race suites of test_vq.c and
 * test_vq_packed.c share: a real poller thread that sweeps one queue with
 * the monotonic clock, as a poller does, while the test's own thread plays
 * the driver, and the driver's wait for a call.
 */
#ifndef PMD_TEST_RACE_HARNESS_H
#define PMD_TEST_RACE_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "fake_guest.h" /* fg_now_ns(): the clock the poller sweeps with */
#include "pmd/vq.h"

/* What a driver saw in one run. */
struct race_result {
	unsigned waits; /* waits for a call */
	unsigned lost;	/* of those, no call within 2 s while the awaited entry was published */
};

/* Start sweeping q (scratch: its chain buffer) on a thread of its own; one at a time. */
void race_poller_start(struct pmd_vq *q, struct pmd_chain *scratch);
/* Stop that thread and wait for it: q is the test's again. */
void race_poller_stop(void);

/*
 * Wait for a call on efd (and read it): up to 20 ms, then, once
 * published(arg) says the entry the driver waits for is there, up to 2 s
 * more.  False when it was there and no call came: a lost call.
 */
bool race_wait_call(int efd, bool (*published)(void *arg), void *arg);

#endif
