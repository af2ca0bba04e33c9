/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_clock.h - the monotonic nanosecond clock of the pollers, from the TSC.
 *
 * ns = (tsc - tsc0) * mult >> 32, with mult = 10^9 * 2^32 / tsc_hz computed
 * once by pmd_clock_init(): no division on the hot path.  The 128-bit
 * product cannot overflow for centuries of uptime.
 */
#ifndef PMD_CLOCK_H
#define PMD_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>

/* Nanoseconds per second. */
#define PMD_NS_PER_S 1000000000ULL

struct pmd_clock {
	uint64_t tsc0; /* TSC at init */
	uint64_t mult; /* ns per tick, 32.32 fixed point */
};

extern struct pmd_clock pmd_clock;

/* Calibrate from tsc_hz (pmd_clock_tsc_hz()). */
void pmd_clock_init(uint64_t tsc_hz);

/*
 * The TSC's rate in Hz, measured against CLOCK_MONOTONIC_RAW over about
 * 60 ms (the median of three 20-ms windows, each end bracketed by two clock
 * reads a few microseconds apart, so a preemption there is seen and the
 * window taken again); 0 when no window could be taken cleanly.  DPDK's
 * rte_get_tsc_hz() is a nominal figure rounded to 10 MHz on many hosts, an
 * error every modelled latency would carry.
 */
uint64_t pmd_clock_measure_hz(void);

/*
 * The rate pmd_init() uses: the measured one, or dpdk_hz when measuring
 * failed.  *measured (may be NULL) says which.
 */
uint64_t pmd_clock_tsc_hz(uint64_t dpdk_hz, bool *measured);

/* Convert a TSC value to ns since pmd_clock_init(). */
static inline uint64_t pmd_tsc_to_ns(uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)(tsc - pmd_clock.tsc0) * pmd_clock.mult) >> 32);
}

/* Nanoseconds since pmd_clock_init(). */
static inline uint64_t pmd_now_ns(void)
{
	return pmd_tsc_to_ns(rte_rdtsc());
}

#endif /* PMD_CLOCK_H */
