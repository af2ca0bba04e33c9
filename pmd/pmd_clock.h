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

#include <stdint.h>

#include <rte_cycles.h>

/* Nanoseconds per second. */
#define PMD_NS_PER_S 1000000000ULL

struct pmd_clock {
	uint64_t tsc0; /* TSC at init */
	uint64_t mult; /* ns per tick, 32.32 fixed point */
};

extern struct pmd_clock pmd_clock;

/* Calibrate from tsc_hz (rte_get_tsc_hz() after EAL init). */
void pmd_clock_init(uint64_t tsc_hz);

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
