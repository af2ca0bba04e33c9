/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fb_workload.c - the femu-bench workload engine end to end against the
 * in-process peer: exact request counts, read/write mix, one sequential pass
 * = size / bs, several worker threads, histogram filled, and --verify
 * failing when completions carry no data, --timeout counting only the time
 * the worker ran (its own stops left out) and firing for a queue never served.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdlib.h>
#include <unistd.h>

#include "fb_mem.h"
#include "fb_opts.h"
#include "fb_peer.h"
#include "fb_time.h"
#include "fb_vring.h"
#include "fb_workload.h"

static struct fb_mem mem;
static struct fb_vq vqs[4];
static struct fb_peer peer;
static struct fb_result res;

/* Run o with the peer serving the first peer_nq queues only. */
static int run_peer(struct fb_opts *o, uint64_t len, unsigned peer_nq);

/* Run o against the peer over len bytes; returns fb_workload_run's result. */
static int run(struct fb_opts *o, uint64_t len)
{
	return run_peer(o, len, o->queues);
}

static int run_peer(struct fb_opts *o, uint64_t len, unsigned peer_nq)
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
	cr_assert_eq(fb_peer_start(&peer, vqs, peer_nq, -1), 0);
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

/* fb_workload_test_pause: the worker stops pause_n times for pause_ms, at every pause_every-th
 * call. */
static unsigned pause_calls, pause_every, pause_n, pause_ms;

static void pause_some(unsigned worker, unsigned queue)
{
	(void)worker;
	(void)queue;
	if (++pause_calls % pause_every == 0 && pause_calls / pause_every <= pause_n)
		usleep(pause_ms * 1000);
}

/* Have the worker stop n times for ms, at every every-th call (counted from 0). */
static void pause_arm(unsigned every, unsigned n, unsigned ms)
{
	pause_calls = 0;
	pause_every = every;
	pause_n = n;
	pause_ms = ms;
	fb_workload_test_pause = pause_some;
}

/*
 * A worker descheduled for longer than --timeout between queueing requests
 * and publishing them (a loaded machine) finds, on its next poll, a backend
 * that has had microseconds for them: no timeout, since femu-bench was not
 * watching meanwhile.  Whether a stop showed as a timeout was a race (did the
 * peer complete between the publish and the next poll?): without the worker
 * clock this test failed 3 of 3 times ("timeout: queue 0 has 16 requests in
 * flight and no completion for 1000 ms").  Bound 1 s, stops 1.2 s: the peer
 * thread itself may wait a few hundred ms for a CPU on a loaded machine.
 */
Test(fb_workload, a_descheduled_worker_is_no_backend_timeout)
{
	struct fb_opts o;
	uint64_t t0 = fb_now_ns();

	base(&o);
	o.ios = 50000;
	o.timeout_ms = 1000;
	pause_arm(200, 3, 1200);
	cr_assert_eq(run(&o, 8 << 20), 0);
	fb_workload_test_pause = NULL;
	cr_assert_geq(pause_calls, 200 * 3);
	cr_assert(!res.timed_out);
	cr_assert_eq(res.ios, 50000);
	cr_assert_geq(fb_now_ns() - t0, 3 * 1200 * 1000000ull);
}

/*
 * The watchdog itself: a queue the backend never serves times out after
 * --timeout of the worker's own running time.  The worker stops for 1 s
 * between queueing its requests and publishing them; that second does not
 * count, so the timeout fires after >= 1 + 0.2 s, not right after the stop
 * (as it did before the worker clock).  No request is ever served, so the
 * peer's own scheduling plays no part.
 */
Test(fb_workload, an_unserved_queue_times_out_after_running_time, .init = cr_redirect_stderr)
{
	struct fb_opts o;
	uint64_t t0, ms;

	base(&o);
	o.queues = 1;
	o.time_s = 30;
	o.timeout_ms = 200;
	pause_arm(1, 1, 1000);
	t0 = fb_now_ns();
	cr_assert_eq(run_peer(&o, 8 << 20, 0), -1);
	fb_workload_test_pause = NULL;
	ms = (fb_now_ns() - t0) / 1000000;
	cr_assert(res.timed_out);
	cr_assert_eq(pause_calls, 1);
	cr_assert(ms >= 1000 + 200 && ms < 10000, "returned after %llu ms", (unsigned long long)ms);
}

/* The same without stops: --timeout after --timeout. */
Test(fb_workload, an_unserved_queue_times_out, .init = cr_redirect_stderr)
{
	struct fb_opts o;
	uint64_t t0 = fb_now_ns(), ms;

	base(&o);
	o.queues = 2;
	o.time_s = 30;
	o.timeout_ms = 200;
	cr_assert_eq(run_peer(&o, 8 << 20, 1), -1);
	ms = (fb_now_ns() - t0) / 1000000;
	cr_assert(res.timed_out);
	cr_assert(ms >= 200 && ms < 5000, "returned after %llu ms", (unsigned long long)ms);
}
