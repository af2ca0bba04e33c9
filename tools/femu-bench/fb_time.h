/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_time.h - cheap timestamps for the hot loop: the TSC (ticks), its
 * calibrated frequency, and monotonic nanoseconds.
 */
#ifndef FB_TIME_H
#define FB_TIME_H

#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

static inline uint64_t fb_tsc(void)
{
	return __rdtsc();
}

static inline uint64_t fb_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* TSC ticks per second, measured once (~20 ms) against CLOCK_MONOTONIC. */
double fb_tsc_hz(void);

#endif /* FB_TIME_H */
