/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_hist.c - log-linear latency histogram: bucket bounds, merge, percentiles.
 */
#include "fb_hist.h"

#include <math.h>
#include <string.h>

void fb_hist_init(struct fb_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

uint64_t fb_hist_bucket_low(unsigned idx)
{
	unsigned group, msb;
	uint64_t top;

	if (idx < FB_HIST_SUB)
		return idx;
	group = idx >> FB_HIST_SUB_BITS; /* >= 1 */
	msb = group + FB_HIST_SUB_BITS - 1;
	top = (idx & (FB_HIST_SUB - 1)) + FB_HIST_SUB;
	return top << (msb - FB_HIST_SUB_BITS);
}

uint64_t fb_hist_bucket_high(unsigned idx)
{
	if (idx + 1 >= FB_HIST_BUCKETS)
		return UINT64_MAX;
	return fb_hist_bucket_low(idx + 1) - 1;
}

void fb_hist_merge(struct fb_hist *dst, const struct fb_hist *src)
{
	for (unsigned i = 0; i < FB_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
	if (src->min < dst->min)
		dst->min = src->min;
}

/* The k-th (1-based) of n samples in bucket idx, placed at the centre of its share. */
static uint64_t bucket_interpolate(unsigned idx, uint64_t k, uint64_t n)
{
	uint64_t low = fb_hist_bucket_low(idx), high = fb_hist_bucket_high(idx);
	double width = (double)(high - low) + 1.0;
	double v = (double)low + width * ((double)k - 0.5) / (double)n;

	if (v >= (double)high)
		return high;
	return (uint64_t)v;
}

uint64_t fb_hist_percentile(const struct fb_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	rank = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (unsigned i = 0; i < FB_HIST_BUCKETS; i++) {
		if (seen + h->bucket[i] >= rank) {
			uint64_t v = bucket_interpolate(i, rank - seen, h->bucket[i]);

			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
		seen += h->bucket[i];
	}
	return h->max;
}

double fb_hist_mean(const struct fb_hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}
