/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ab.c - the in-run A/B summary (pmd/pmd_ab.h): phase triples, the
 * speed ratio's direction, the mode split by baseline rate, phases that do
 * not alternate.
 */
#include <criterion/criterion.h>

#include "pmd/pmd_ab.h"
#include "pmd/pmd_measure.h"

#define HZ 1e9	   /* 1 tick = 1 ns */
#define PHASE 1000 /* requests a phase: 1000 ticks (1 us) a phase is 1e9 requests/s */

Test(ab, a_variant_that_takes_10_percent_fewer_ticks_is_1_11_times_as_fast)
{
	/* off 1000, on 900, off 1000, on 900, ... */
	uint64_t dur[41];
	uint8_t on[41];
	struct pmd_ab_summary s;

	for (unsigned i = 0; i < 41; i++) {
		on[i] = i % 2;
		dur[i] = on[i] ? 900 : 1000;
	}
	/* every phase but the first and the last is a middle */
	cr_assert_eq(pmd_ab_summarize(dur, on, 41, PHASE, HZ, 0, 1e300, &s), 39);
	cr_assert_eq(s.triples, 39);
	cr_assert_eq(s.ahead, 39);
	cr_assert_float_eq(s.median, 1000.0 / 900.0, 1e-9);
	cr_assert_float_eq(s.q1, s.median, 1e-9);
	cr_assert_float_eq(s.q3, s.median, 1e-9);
	/* 1000 requests in 900 ns and in 1000 ns */
	cr_assert_float_eq(s.var_rate, 1e12 / 900.0, 1.0);
	cr_assert_float_eq(s.base_rate, 1e9, 1e-3);
}

Test(ab, a_variant_first_run_reads_the_same_way)
{
	/* on first: middles of both kinds, each read as variant against baseline */
	uint64_t dur[21];
	uint8_t on[21];
	struct pmd_ab_summary s;

	for (unsigned i = 0; i < 21; i++) {
		on[i] = (i + 1) % 2;
		dur[i] = on[i] ? 1250 : 1000; /* the variant is slower */
	}
	cr_assert_eq(pmd_ab_summarize(dur, on, 21, PHASE, HZ, 0, 1e300, &s), 19);
	cr_assert_eq(s.ahead, 0);
	cr_assert_float_eq(s.median, 0.8, 1e-9);
}

Test(ab, a_mode_change_is_judged_against_the_neighbours_and_split_by_rate)
{
	/* fast mode (1000 ticks = 1e9/s baseline), then slow (2000 ticks = 5e8/s) */
	uint64_t dur[] = {1000, 950, 1000, 950, 1000, 2000, 2100, 2000, 2100, 2000, 2100};
	uint8_t on[] = {0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1};
	struct pmd_ab_summary s;

	/* middles 1-3: fast; 4 and 5 have a neighbour of their own kind; 6-9: slow */
	cr_assert_eq(pmd_ab_summarize(dur, on, 11, PHASE, HZ, 0, 1e300, &s), 7);
	cr_assert_eq(pmd_ab_summarize(dur, on, 11, PHASE, HZ, 7e8, 1e300, &s), 3);
	cr_assert_float_eq(s.median, 1000.0 / 950.0, 1e-9);
	cr_assert_eq(s.ahead, 3);
	cr_assert_eq(pmd_ab_summarize(dur, on, 11, PHASE, HZ, 0, 7e8, &s), 4);
	cr_assert_float_eq(s.median, 2000.0 / 2100.0, 1e-9);
	cr_assert_eq(s.ahead, 0);
	/* the speeds are those of the slow triples only */
	cr_assert_float_eq(s.var_rate, 1e12 / 2100.0, 1.0);
	cr_assert_float_eq(s.base_rate, 5e8, 1e-3);
}

Test(ab, the_median_of_an_even_count_is_the_mean_of_the_middle_two)
{
	uint64_t dur[] = {1000, 500, 1000, 800, 1000, 1000, 1000, 2000};
	uint8_t on[] = {0, 1, 0, 1, 0, 1, 0, 1};
	struct pmd_ab_summary s;

	/*
	 * middles 1-6: 1000/500, 1000/650, 1000/800, 1000/900, 1000/1000,
	 * 1000/1500; sorted 0.667 1.0 1.111 1.25 1.538 2.0
	 */
	cr_assert_eq(pmd_ab_summarize(dur, on, 8, PHASE, HZ, 0, 1e300, &s), 6);
	cr_assert_float_eq(s.median, (1000.0 / 900 + 1000.0 / 800) / 2, 1e-9);
	cr_assert_eq(s.ahead, 4);
	cr_assert_float_eq(s.q1, 1.0, 1e-9);
	cr_assert_float_eq(s.q3, 1000.0 / 650, 1e-9);
}

Test(ab, fewer_than_three_phases_or_none_alternating_give_no_triple)
{
	uint64_t dur[] = {1000, 900, 1000, 1000};
	uint8_t same[] = {0, 0, 0, 0};
	uint8_t on[] = {0, 1, 0, 1};
	struct pmd_ab_summary s;

	cr_assert_eq(pmd_ab_summarize(dur, on, 2, PHASE, HZ, 0, 1e300, &s), 0);
	cr_assert_eq(s.triples, 0);
	cr_assert_eq(pmd_ab_summarize(dur, same, 4, PHASE, HZ, 0, 1e300, &s), 0);
	cr_assert_eq(pmd_ab_summarize(dur, on, 4, PHASE, HZ, 0, 1e300, &s), 2);
}

/* PMD_AB(bit) is the phase clock's bit in -Dab_phase builds and the constant 0 in others. */
Test(ab, the_variant_is_read_only_in_ab_builds)
{
#if PMD_AB_PHASE_REQUESTS > 0
	pmd_ab_variant = 0x5;
	cr_assert_eq(PMD_AB(1), 1u);
	cr_assert_eq(PMD_AB(2), 0u);
	cr_assert_eq(PMD_AB(4), 4u);
	pmd_ab_variant = 0;
	cr_assert_eq(PMD_AB(0xff), 0u);
#else
	cr_assert_eq(PMD_AB(1), 0u);
	cr_assert_eq(PMD_AB(0xff), 0u);
#endif
}
