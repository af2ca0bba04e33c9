/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * race_poller.h - a real poller thread for the lost-call race suites of
 * test_vq.c and test_vq_packed.c: it sweeps one queue with the monotonic
 * clock, as a poller does, while the test's own thread plays the driver.
 */
#ifndef PMD_TEST_RACE_POLLER_H
#define PMD_TEST_RACE_POLLER_H

#include <stdint.h>

#include "pmd/vq.h"

/* CLOCK_MONOTONIC in nanoseconds: the clock the poller sweeps with. */
uint64_t race_now_ns(void);
/* Start sweeping q (scratch: its chain buffer) on a thread of its own; one at a time. */
void race_poller_start(struct pmd_vq *q, struct pmd_chain *scratch);
/* Stop that thread and wait for it: q is the test's again. */
void race_poller_stop(void);

#endif
