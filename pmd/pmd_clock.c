/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pmd_clock.c - calibration of the TSC nanosecond clock (see pmd_clock.h). */
#include "pmd/pmd_clock.h"

struct pmd_clock pmd_clock = {.tsc0 = 0, .mult = 1ULL << 32};

void pmd_clock_init(uint64_t tsc_hz)
{
	if (tsc_hz == 0)
		tsc_hz = PMD_NS_PER_S; /* unknown: 1 tick per ns */
	pmd_clock.mult = (uint64_t)(((unsigned __int128)PMD_NS_PER_S << 32) / tsc_hz);
	pmd_clock.tsc0 = rte_rdtsc();
}
