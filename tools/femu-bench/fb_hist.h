/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_hist.h - log-linear latency histogram (HDR-style: 1024 linear
 * sub-buckets per power of two, so a bucket is at most 1/1024 ~ 0.1% wide:
 * 0.4 us at 400 us, 2.1 us at 2.2 ms).  Values are unsigned integers in any
 * unit (femu-bench records TSC ticks); the exact count, sum, min and max are
 * kept alongside.
 */
#ifndef FB_HIST_H
#define FB_HIST_H

#include <stdint.h>

#define FB_HIST_SUB_BITS 10
#define FB_HIST_SUB (1u << FB_HIST_SUB_BITS)
#define FB_HIST_BUCKETS ((64 - FB_HIST_SUB_BITS + 1) * FB_HIST_SUB)

struct fb_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t bucket[FB_HIST_BUCKETS];
};

void fb_hist_init(struct fb_hist *h);

/* Bucket index of value v. */
static inline unsigned fb_hist_index(uint64_t v)
{
	unsigned msb;

	if (v < FB_HIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	return ((msb - FB_HIST_SUB_BITS + 1) << FB_HIST_SUB_BITS) +
	       (unsigned)(v >> (msb - FB_HIST_SUB_BITS)) - FB_HIST_SUB;
}

static inline void fb_hist_add(struct fb_hist *h, uint64_t v)
{
	h->bucket[fb_hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
	if (v < h->min)
		h->min = v;
}

/* Smallest value that falls in bucket idx. */
uint64_t fb_hist_bucket_low(unsigned idx);

/* Largest value that falls in bucket idx. */
uint64_t fb_hist_bucket_high(unsigned idx);

/* Add every sample of src to dst. */
void fb_hist_merge(struct fb_hist *dst, const struct fb_hist *src);

/*
 * Value at percentile p (0 < p <= 100): the ceil(p% * count)-th smallest
 * sample, estimated by spreading the samples of its bucket evenly over the
 * bucket's range (error below one bucket width, unbiased for smooth
 * distributions), clamped to [min, max].  0 when empty.
 */
uint64_t fb_hist_percentile(const struct fb_hist *h, double p);

/* Mean of the samples (exact), 0 when empty. */
double fb_hist_mean(const struct fb_hist *h);

#endif /* FB_HIST_H */
