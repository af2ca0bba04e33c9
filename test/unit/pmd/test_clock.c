/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_clock.c - the pollers' TSC nanosecond clock (pmd/pmd_clock.c): the
 * conversion, and a TSC rate measured against CLOCK_MONOTONIC_RAW.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <time.h>

#include "pmd/pmd_clock.h"

static uint64_t raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * PMD_NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* pmd_now_ns() and the raw clock at one moment; false when preempted between the reads. */
static bool both_clocks(uint64_t *pmd, uint64_t *raw)
{
	uint64_t a = raw_ns(), p = pmd_now_ns(), b = raw_ns();

	*pmd = p;
	*raw = a + (b - a) / 2;
	return b - a < 20000;
}

Test(clock, ticks_convert_at_the_given_rate)
{
	pmd_clock_init(2000000000ull);
	cr_assert_eq(pmd_tsc_to_ns(pmd_clock.tsc0), 0);
	cr_assert_eq(pmd_tsc_to_ns(pmd_clock.tsc0 + 2000000000ull), PMD_NS_PER_S);
	cr_assert_eq(pmd_tsc_to_ns(pmd_clock.tsc0 + 3), 1, "1.5 ns rounds down");
}

Test(clock, measured_rate_keeps_time_with_the_monotonic_clock)
{
	const struct timespec nap = {.tv_sec = 0, .tv_nsec = 80000000};
	uint64_t hz = pmd_clock_measure_hz(), p0 = 0, r0 = 0, p1 = 0, r1 = 0;
	bool ok0 = false, ok1 = false;

	cr_assert_gt(hz, 100000000ull, "a TSC rate was measured (%llu Hz)", (unsigned long long)hz);
	pmd_clock_init(hz);
	for (int i = 0; i < 20 && !ok0; i++)
		ok0 = both_clocks(&p0, &r0);
	nanosleep(&nap, NULL);
	for (int i = 0; i < 20 && !ok1; i++)
		ok1 = both_clocks(&p1, &r1);
	cr_assert(ok0 && ok1, "both clocks read together");
	double ratio = (double)(p1 - p0) / (double)(r1 - r0);
	cr_assert(fabs(ratio - 1.0) < 0.005, "pmd clock / monotonic clock over 80 ms: %.5f", ratio);
}

Test(clock, the_measured_rate_is_used_when_there_is_one)
{
	bool measured = false;
	uint64_t hz = pmd_clock_tsc_hz(12345, &measured);

	cr_assert(measured, "measuring worked on an idle test machine");
	cr_assert_neq(hz, 12345, "not DPDK's figure");
	cr_assert_gt(hz, 100000000ull);
}
