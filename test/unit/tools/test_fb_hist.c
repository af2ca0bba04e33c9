/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fb_hist.c - latency histogram: bucket bounds cover every value with
 * at most 1/1024 relative width, percentiles of known distributions (and no
 * bias towards the bucket's upper bound), merge, mean, empty histogram.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "fb_hist.h"

Test(fb_hist, buckets_cover_values_with_bounded_width)
{
	uint64_t vals[] = {0,
			   1,
			   63,
			   64,
			   65,
			   127,
			   128,
			   1000,
			   4095,
			   4096,
			   123456789,
			   (1ull << 40) + 12345,
			   UINT64_MAX / 3,
			   UINT64_MAX};
	for (unsigned i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint64_t v = vals[i];
		unsigned idx = fb_hist_index(v);
		cr_assert_lt(idx, FB_HIST_BUCKETS);
		cr_assert_leq(fb_hist_bucket_low(idx), v, "v=%llu", (unsigned long long)v);
		cr_assert_geq(fb_hist_bucket_high(idx), v, "v=%llu", (unsigned long long)v);
		if (v >= FB_HIST_SUB)
			cr_assert_leq(fb_hist_bucket_high(idx) - fb_hist_bucket_low(idx),
				      v / (FB_HIST_SUB / 2));
	}
}

Test(fb_hist, index_is_monotonic_and_contiguous)
{
	unsigned prev = 0;
	for (uint64_t v = 0; v < 200000; v++) {
		unsigned idx = fb_hist_index(v);
		cr_assert(idx == prev || idx == prev + 1, "v=%llu", (unsigned long long)v);
		if (idx == prev + 1)
			cr_assert_eq(fb_hist_bucket_low(idx), v);
		prev = idx;
	}
}

Test(fb_hist, percentiles_of_uniform)
{
	static struct fb_hist h;
	fb_hist_init(&h);
	for (uint64_t v = 1; v <= 10000; v++)
		fb_hist_add(&h, v);
	cr_assert_eq(h.count, 10000);
	cr_assert_eq(h.min, 1);
	cr_assert_eq(h.max, 10000);
	cr_assert_float_eq(fb_hist_mean(&h), 5000.5, 1e-9);
	uint64_t p50 = fb_hist_percentile(&h, 50);
	uint64_t p99 = fb_hist_percentile(&h, 99);
	uint64_t p999 = fb_hist_percentile(&h, 99.9);
	cr_assert(p50 >= 4996 && p50 <= 5004, "p50=%llu", (unsigned long long)p50);
	cr_assert(p99 >= 9900 && p99 <= 10000, "p99=%llu", (unsigned long long)p99);
	cr_assert(p999 >= 9990 && p999 <= 10000, "p999=%llu", (unsigned long long)p999);
	cr_assert_eq(fb_hist_percentile(&h, 100), 10000);
	cr_assert_eq(fb_hist_percentile(&h, 0.0001), 1);
}

/*
 * A narrow distribution far from zero (a 2.2 ms NAND program in TSC ticks):
 * the median must come out within a small fraction of a bucket of the true
 * one, not at the bucket's upper bound (which is up to one width high).
 */
Test(fb_hist, percentile_not_biased_to_bucket_top)
{
	static struct fb_hist h;
	const uint64_t base = 6600000; /* 2.2 ms at 3 GHz */
	const uint64_t n = 4001;
	uint64_t width, p50, truth = base + 2 * (n / 2);

	fb_hist_init(&h);
	for (uint64_t i = 0; i < n; i++)
		fb_hist_add(&h, base + 2 * i);
	width = fb_hist_bucket_high(fb_hist_index(truth)) -
		fb_hist_bucket_low(fb_hist_index(truth)) + 1;
	cr_assert_leq(width, truth / 1024 + 1);
	p50 = fb_hist_percentile(&h, 50);
	cr_assert_leq(p50 > truth ? p50 - truth : truth - p50, width / 8 + 2,
		      "p50=%llu truth=%llu width=%llu", (unsigned long long)p50,
		      (unsigned long long)truth, (unsigned long long)width);
}

Test(fb_hist, tail_outlier_shows_only_in_high_percentiles)
{
	static struct fb_hist h;
	fb_hist_init(&h);
	for (int i = 0; i < 999; i++)
		fb_hist_add(&h, 100);
	fb_hist_add(&h, 1000000);
	cr_assert_eq(fb_hist_percentile(&h, 50), 100);
	cr_assert_eq(fb_hist_percentile(&h, 99), 100);
	cr_assert_geq(fb_hist_percentile(&h, 99.95), 1000000 - 1000000 / 512);
	cr_assert_eq(h.max, 1000000);
}

Test(fb_hist, merge_equals_adding_all)
{
	static struct fb_hist a, b, all;
	fb_hist_init(&a);
	fb_hist_init(&b);
	fb_hist_init(&all);
	srand(7);
	for (int i = 0; i < 5000; i++) {
		uint64_t v = (uint64_t)rand() % 100000;
		fb_hist_add(i % 3 ? &a : &b, v);
		fb_hist_add(&all, v);
	}
	fb_hist_merge(&a, &b);
	cr_assert_eq(a.count, all.count);
	cr_assert_eq(a.sum, all.sum);
	cr_assert_eq(a.min, all.min);
	cr_assert_eq(a.max, all.max);
	cr_assert_arr_eq(a.bucket, all.bucket, sizeof(a.bucket));
}

Test(fb_hist, empty)
{
	static struct fb_hist h;
	fb_hist_init(&h);
	cr_assert_eq(fb_hist_percentile(&h, 50), 0);
	cr_assert_eq(fb_hist_mean(&h), 0);
}
