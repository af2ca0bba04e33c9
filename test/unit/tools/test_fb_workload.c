/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fb_workload.c - the femu-bench workload engine end to end against the
 * in-process peer: exact request counts, read/write mix, one sequential pass
 * = size / bs, several worker threads, histogram filled, and --verify
 * failing when completions carry no data.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdlib.h>

#include "fb_mem.h"
#include "fb_opts.h"
#include "fb_peer.h"
#include "fb_vring.h"
#include "fb_workload.h"

static struct fb_mem mem;
static struct fb_vq vqs[4];
static struct fb_peer peer;
static struct fb_result res;

/* Run o against the peer over len bytes; returns fb_workload_run's result. */
static int run(struct fb_opts *o, uint64_t len)
{
	struct fb_run r = {.o = o, .vqs = vqs, .start = 0, .len = len, .blk_size = 512};
	size_t bytes = 0;
	int rc;

	for (unsigned i = 0; i < o->queues; i++)
		bytes += fb_vq_mem_bytes(o->qsize, o->qd, fb_opts_max_bs(o));
	cr_assert_eq(fb_mem_create(&mem, bytes, false), 0);
	for (unsigned i = 0; i < o->queues; i++)
		cr_assert_eq(fb_vq_init(&vqs[i], &mem, i, o->qsize, o->qd, fb_opts_max_bs(o), true),
			     0);
	cr_assert_eq(fb_peer_start(&peer, vqs, o->queues, -1), 0);
	rc = fb_workload_run(&r, &res);
	fb_peer_stop(&peer);
	for (unsigned i = 0; i < o->queues; i++)
		fb_vq_fini(&vqs[i]);
	fb_mem_destroy(&mem);
	return rc;
}

static void base(struct fb_opts *o)
{
	fb_opts_defaults(o);
	o->selftest_peer = true;
	o->qsize = 256;
	o->qd = 16;
}

Test(fb_workload, exact_count_and_mix)
{
	struct fb_opts o;

	base(&o);
	o.rw = FB_RW_RANDRW;
	o.mix = 30;
	o.ios = 50000;
	o.queues = 2;
	cr_assert_eq(run(&o, 64 << 20), 0);
	cr_assert_eq(res.ios, 50000);
	cr_assert_eq(res.reads + res.writes, 50000);
	cr_assert(res.reads > 13000 && res.reads < 17000, "reads %llu",
		  (unsigned long long)res.reads);
	cr_assert_eq(res.bytes, 50000ull * 4096);
	cr_assert_eq(res.lat.count, 50000);
	cr_assert_eq(res.io_errors, 0);
	cr_assert(!res.failed);
	cr_assert_gt(res.elapsed_s, 0);
}

Test(fb_workload, one_sequential_pass_covers_the_range_once)
{
	struct fb_opts o;

	base(&o);
	o.rw = FB_RW_WRITE;
	o.bs[0] = 65536;
	o.queues = 3;
	cr_assert_eq(run(&o, (16 << 20) + 4096), 0); /* a short last request */
	cr_assert_eq(res.ios, 256 + 1);
	cr_assert_eq(res.writes, res.ios);
	cr_assert_eq(res.bytes, (16 << 20) + 4096);
}

Test(fb_workload, threads_split_the_count)
{
	struct fb_opts o;

	base(&o);
	o.ios = 10001;
	o.queues = 4;
	o.ncpus = 2;
	o.cpus[0] = o.cpus[1] = -1;
	cr_assert_eq(run(&o, 8 << 20), 0);
	cr_assert_eq(res.ios, 10001);
}

Test(fb_workload, time_based_stops)
{
	struct fb_opts o;

	base(&o);
	o.time_s = 0.2;
	cr_assert_eq(run(&o, 8 << 20), 0);
	cr_assert_gt(res.ios, 0);
	cr_assert(res.elapsed_s >= 0.19 && res.elapsed_s < 5, "elapsed %f", res.elapsed_s);
}

Test(fb_workload, verify_fails_when_reads_return_no_data, .init = cr_redirect_stderr)
{
	struct fb_opts o;

	base(&o);
	o.verify = true;
	o.ios = 100;
	o.bs[0] = 512;
	o.bs[1] = 8192;
	o.nbs = 2;
	cr_assert_eq(run(&o, 1 << 20), -1); /* the peer completes without copying data */
	cr_assert_gt(res.verify_errors, 0);
	cr_assert(res.failed);
}

Test(fb_workload, verify_writes_succeed_on_the_peer)
{
	struct fb_opts o;

	base(&o);
	o.verify = true;
	o.rw = FB_RW_RANDWRITE;
	o.ios = 2000;
	cr_assert_eq(run(&o, 1 << 20), 0);
	cr_assert_eq(res.writes, 2000);
	cr_assert_eq(res.verify_errors, 0);
}

/*
 * --ramp: the ramp's completions appear only in the per-second counts; the
 * measured figures cover --time alone.
 */
Test(fb_workload, ramp_is_left_out_and_seconds_are_counted)
{
	struct fb_opts o;

	base(&o);
	o.time_s = 1.2;
	o.ramp_s = 1.0;
	cr_assert_eq(run(&o, 64 << 20), 0);
	cr_assert_geq(res.nper_s, 2, "whole seconds %u", res.nper_s);
	cr_assert_leq(res.nper_s, 3);
	for (unsigned i = 0; i < res.nper_s; i++)
		cr_assert_gt(res.per_s[i], 0, "second %u has no completion", i);
	/* second 1 lies wholly inside the measured time; second 0 is the ramp */
	cr_assert_geq(res.ios, res.per_s[1]);
	cr_assert_eq(res.lat.count, res.ios);
	cr_assert_eq(res.reads, res.ios);
	/* elapsed covers the measured 1.2 s, not the ramp */
	cr_assert(res.elapsed_s > 1.1 && res.elapsed_s < 1.7, "elapsed %.3f", res.elapsed_s);
}
