/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pmd_clock.c - calibration of the TSC nanosecond clock (see pmd_clock.h). */
#include "pmd/pmd_clock.h"

#include <time.h>

struct pmd_clock pmd_clock = {.tsc0 = 0, .mult = 1ULL << 32};

void pmd_clock_init(uint64_t tsc_hz)
{
	if (tsc_hz == 0)
		tsc_hz = PMD_NS_PER_S; /* unknown: 1 tick per ns */
	pmd_clock.mult = (uint64_t)(((unsigned __int128)PMD_NS_PER_S << 32) / tsc_hz);
	pmd_clock.tsc0 = rte_rdtsc();
}

#define CLOCK_WINDOW_NS 20000000ull /* one measuring window */
#define CLOCK_BRACKET_NS 20000ull   /* most a window end's two clock reads may be apart */
#define CLOCK_WINDOWS 3
#define CLOCK_TRIES 12

static uint64_t raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * PMD_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* A TSC read and the clock's time at it (the middle of two reads around it); false if apart. */
static bool clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t a = raw_ns(), t = rte_rdtsc(), b = raw_ns();

	*tsc = t;
	*ns = a + (b - a) / 2;
	return b - a <= CLOCK_BRACKET_NS;
}

/* One window's rate in Hz; 0 when an end was not read cleanly. */
static uint64_t clock_window_hz(void)
{
	const struct timespec nap = {.tv_sec = 0, .tv_nsec = (long)CLOCK_WINDOW_NS};
	uint64_t t0, n0, t1, n1;

	if (!clock_pair(&t0, &n0))
		return 0;
	nanosleep(&nap, NULL);
	if (!clock_pair(&t1, &n1) || n1 <= n0 || t1 <= t0)
		return 0;
	return (uint64_t)((unsigned __int128)(t1 - t0) * PMD_NS_PER_S / (n1 - n0));
}

uint64_t pmd_clock_measure_hz(void)
{
	uint64_t hz[CLOCK_WINDOWS], x;
	unsigned n = 0, i, j;

	for (i = 0; i < CLOCK_TRIES && n < CLOCK_WINDOWS; i++) {
		if ((x = clock_window_hz()) != 0)
			hz[n++] = x;
	}
	if (n < CLOCK_WINDOWS)
		return 0;
	for (i = 1; i < n; i++) /* insertion sort of three */
		for (j = i; j > 0 && hz[j - 1] > hz[j]; j--) {
			x = hz[j];
			hz[j] = hz[j - 1];
			hz[j - 1] = x;
		}
	return hz[n / 2];
}

uint64_t pmd_clock_tsc_hz(uint64_t dpdk_hz, bool *measured)
{
	uint64_t hz = pmd_clock_measure_hz();

	if (measured != NULL)
		*measured = hz != 0;
	return hz != 0 ? hz : dpdk_hz;
}
