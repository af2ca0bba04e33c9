/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_workload.h - the benchmark run: one worker thread per --cpus entry,
 * each pinned and owning its virtqueues (queue q belongs to worker
 * q % nworkers), generating requests, polling completions, checking verify
 * data and recording latency.  Offsets are uniform random and aligned to the
 * request size, or sequential through the worker's share of the range.
 */
#ifndef FB_WORKLOAD_H
#define FB_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "fb_hist.h"
#include "fb_opts.h"
#include "fb_vmap.h"
#include "fb_vring.h"

/* Seconds of per-second completion counts kept (later seconds are not counted there). */
#define FB_PER_S_MAX 3600

struct fb_result {
	uint64_t ios;
	uint64_t reads;
	uint64_t writes;
	uint64_t bytes;
	double elapsed_s; /* first submit (after --ramp) to last completion */
	double cpu_s;	  /* user + system time of the worker threads */
	uint64_t kicks;
	uint64_t io_errors; /* completions with a status other than OK */
	uint64_t verify_errors;
	bool timed_out;
	bool failed;
	struct fb_hist lat; /* TSC ticks */
	double tsc_hz;
	/*
	 * Completions in each whole second since the first submit, --ramp
	 * included; per_s[0..nper_s).  The partial last second is left out.
	 */
	uint32_t per_s[FB_PER_S_MAX];
	unsigned nper_s;
};

struct fb_run {
	const struct fb_opts *o;
	struct fb_vq *vqs;    /* [o->queues] */
	uint64_t start;	      /* first byte of the range */
	uint64_t len;	      /* bytes in the range */
	uint32_t blk_size;    /* device logical block size */
	struct fb_vmap *vmap; /* --verify-map, or NULL */
	uint64_t *progress;   /* --progress: worker k's completions at progress[8 k], or NULL */
};

/*
 * Run the workload described by run->o on run->vqs (already started on a
 * backend).  Fills res; returns 0 when every request succeeded (and
 * verified), -1 otherwise (the reason was printed to stderr).
 */
int fb_workload_run(const struct fb_run *run, struct fb_result *res);

/*
 * Ask a running workload to stop submitting, drain what is in flight and
 * return normally (async-signal-safe: for SIGINT/SIGTERM handlers).
 */
void fb_workload_interrupt(void);

/*
 * Tests only (NULL otherwise): called by a worker on each sweep of a queue
 * that queued new requests, before it publishes them,
 * the place where a worker descheduled on a loaded machine leaves requests
 * the backend cannot see yet.
 */
extern void (*fb_workload_test_pause)(unsigned worker, unsigned queue);

/* Uniform random integer in [0, n) from a xorshift state (n > 0). */
static inline uint64_t fb_rand_below(uint64_t *s, uint64_t n)
{
	uint64_t x = *s;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return (uint64_t)(((unsigned __int128)(x * 0x2545f4914f6cdd1dull) * n) >> 64);
}

#endif /* FB_WORKLOAD_H */
