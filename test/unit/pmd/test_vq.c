/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_vq.c - serving a split virtqueue: inline and deferred completions
 * (heap order, lateness), used ring contents, kick suppression, call
 * decisions with and without EVENT_IDX, poll queues without a call fd,
 * broken queues, flush on stop, prefetch look-ahead (hints only: order,
 * completions and the point where a broken queue stops are unchanged), the
 * model's idle op on empty sweeps, call decisions looked at again.  Suite
 * vq_race: the lost call on this machine's own memory order, a driver
 * thread racing a real poller thread, re-enabling calls with and without
 * the barrier virtio asks of it (vq_impl.h); meson runs it as a test of its
 * own, alone and one criterion job (the race needs both threads on CPUs at
 * once), and leaves it out of pmd_vq.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fake_guest.h"
#include "pmd/vq.h"
#include "pmd/vq_impl.h"
#include "race_harness.h"

#define QSZ 16
#define HDR(i) FG_REQ_HDR(i)
#define DATA(i) FG_REQ_DATA(i)
#define STATUS(i) FG_REQ_STATUS(i)

static struct fg_env e;
static struct pmd_vq *q;
static struct pmd_chain scratch;
static int efd = -1;

static void setup(void)
{

	fg_env_init(&e, 1ULL << 20);
	q = NULL;
	efd = -1;
}

static void teardown(void)
{
	pmd_vq_free(q);
	if (efd >= 0)
		close(efd);
	fg_env_fini(&e);
}

static void make_q(bool event_idx, int callfd)
{
	q = fg_env_vq(&e, QSZ, event_idx, callfd, -1);
	cr_assert_not_null(q);
}

/* Post a 4 KiB read as chain i (descriptors 3i..3i+2). */
static void post_read(unsigned i, uint64_t sector)
{
	fg_env_post_read(&e, QSZ, i, sector, 4096);
}

/* A 4 KiB write of sector as request i: request i's read chain turned around. */
static void post_write(unsigned i, uint64_t sector)
{
	struct virtio_blk_outhdr *h = fg_host(&e.g, FG_REQ_HDR(i));

	post_read(i, sector);
	h->type = VIRTIO_BLK_T_OUT;
	e.r.desc[3 * i + 1].flags = VRING_DESC_F_NEXT;
}

/* avail_event lives after the used ring (virtio 1.1, 2.6.8). */
static uint16_t avail_event(void)
{
	uint16_t v;

	memcpy(&v, &e.r.used->ring[QSZ], sizeof(v));
	return v;
}

static uint8_t status_of(unsigned i)
{
	return *(uint8_t *)fg_host(&e.g, STATUS(i));
}

static uint64_t calls_pending(void)
{
	uint64_t v = 0;

	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

TestSuite(vq, .init = setup, .fini = teardown);

Test(vq, inline_completion_fills_used_ring)
{
	make_q(true, -1);
	post_read(0, 0);
	post_read(1, 8);
	cr_assert_eq(pmd_vq_sweep(q, 100, &scratch), 2);
	cr_assert_eq(e.r.used->idx, 2);
	cr_assert_eq(e.r.used->ring[0].id, 0);
	cr_assert_eq(e.r.used->ring[0].len, 4097);
	cr_assert_eq(e.r.used->ring[1].id, 3);
	cr_assert_eq(status_of(0), VIRTIO_BLK_S_OK);
	cr_assert_eq(status_of(1), VIRTIO_BLK_S_OK);
	cr_assert_eq(e.m.req[1].offset, 4096);
	cr_assert_eq(q->st.requests, 2);
	cr_assert_eq(q->st.rd_bytes, 8192);
	cr_assert_eq(pmd_vq_sweep(q, 200, &scratch), 0);
}

Test(vq, deferred_completion_waits_for_due_time)
{
	make_q(true, -1);
	e.m.due_delta = 5000;
	post_read(0, 0);
	pmd_vq_sweep(q, 100, &scratch);
	cr_assert_eq(e.r.used->idx, 0);
	cr_assert_eq(status_of(0), 0xff, "status written before completion");
	pmd_vq_sweep(q, 5099, &scratch);
	cr_assert_eq(e.r.used->idx, 0);
	pmd_vq_sweep(q, 5100, &scratch);
	cr_assert_eq(e.r.used->idx, 1);
	cr_assert_eq(status_of(0), VIRTIO_BLK_S_OK);
	cr_assert_eq(q->st.deferred, 1);
	cr_assert_eq(q->st.late, 0);
}

Test(vq, position_counts_taken_and_not_completed)
{
	uint16_t a, u;
	uint32_t pending;

	make_q(true, -1);
	pmd_vq_position(q, &a, &u, &pending);
	cr_assert(a == 0 && u == 0 && pending == 0, "idle: %u %u %u", a, u, pending);
	e.m.due_delta = 5000;
	post_read(0, 0);
	post_read(1, 8);
	post_read(2, 16);
	pmd_vq_sweep(q, 100, &scratch);
	pmd_vq_position(q, &a, &u, &pending);
	cr_assert(a == 3 && u == 0 && pending == 3, "three deferred: %u %u %u", a, u, pending);
	pmd_vq_sweep(q, 5100, &scratch);
	pmd_vq_position(q, &a, &u, &pending);
	cr_assert(a == 3 && u == 3 && pending == 0, "all posted: %u %u %u", a, u, pending);
	cr_assert_eq(u, e.r.used->idx);
}

Test(vq, late_completion_counted)
{
	make_q(true, -1);
	e.m.due_delta = 5000;
	post_read(0, 0);
	pmd_vq_sweep(q, 100, &scratch);
	pmd_vq_sweep(q, 5100 + 3000, &scratch);
	cr_assert_eq(e.r.used->idx, 1);
	cr_assert_eq(q->st.late, 1);
	cr_assert_eq(q->st.late_ns_max, 3000);
}

Test(vq, completions_posted_in_due_order)
{
	make_q(true, -1);
	e.m.due_delta = 3000;
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);
	e.m.due_delta = 1000;
	post_read(1, 0);
	post_read(2, 0);
	pmd_vq_sweep(q, 0, &scratch);
	e.m.due_delta = 2000;
	post_read(3, 0);
	pmd_vq_sweep(q, 0, &scratch);
	pmd_vq_sweep(q, 1000, &scratch);
	cr_assert_eq(e.r.used->idx, 2);
	pmd_vq_sweep(q, 2000, &scratch);
	cr_assert_eq(e.r.used->idx, 3);
	cr_assert_eq(e.r.used->ring[2].id, 9);
	pmd_vq_sweep(q, 3000, &scratch);
	cr_assert_eq(e.r.used->idx, 4);
	cr_assert_eq(e.r.used->ring[3].id, 0);
}

Test(vq, event_idx_keeps_avail_event_one_behind)
{
	make_q(true, -1);
	cr_assert_eq(avail_event(), (uint16_t)0xffff);
	post_read(0, 0);
	post_read(1, 0);
	pmd_vq_sweep(q, 0, &scratch);
	/* not rewritten for two requests: the value written still suppresses */
	cr_assert_eq(avail_event(), (uint16_t)0xffff);
	/* the driver's kick test stays false for any next batch */
	cr_assert_not(vring_need_event(avail_event(), 2 + 5, 2));
}

/*
 * Four full turns of the 16-bit avail index, in publishes of 1..5 requests:
 * no publish ever asks for a kick, every request is served, and avail_event
 * is rewritten (to one behind) about once per PMD_VQ_AVAIL_EVENT_SLACK
 * requests, not at every sweep.
 */
Test(vq, event_idx_never_asks_for_a_kick_and_rewrites_avail_event_rarely)
{
	const unsigned total = 4 * 65536;
	unsigned served = 0, rewrites = 0, k = 1;
	uint16_t seen = 0xffff;

	make_q(true, -1);
	while (served < total) {
		uint16_t old = e.r.avail->idx, now;

		for (unsigned j = 0; j < k; j++)
			post_read(j, j);
		now = e.r.avail->idx;
		cr_assert_not(vring_need_event(avail_event(), now, old),
			      "kick asked at avail %u (avail_event %u)", now, avail_event());
		cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), k);
		cr_assert_eq(e.r.used->idx, now);
		served += k;
		if (avail_event() != seen) {
			seen = avail_event();
			rewrites++;
			cr_assert_eq(seen, (uint16_t)(now - 1), "rewritten to one behind");
		}
		k = k % 5 + 1;
	}
	cr_assert_geq(rewrites, total / (PMD_VQ_AVAIL_EVENT_SLACK + 5));
	cr_assert_leq(rewrites, total / PMD_VQ_AVAIL_EVENT_SLACK + 1);
}

Test(vq, event_idx_call_only_when_asked)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	*(uint16_t *)&e.r.avail->ring[QSZ] = 0; /* used_event: call after entry 0 */
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(calls_pending(), 1);
	*(uint16_t *)&e.r.avail->ring[QSZ] = 5; /* not yet */
	post_read(1, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(calls_pending(), 0);
	cr_assert_eq(q->st.calls, 1);
	cr_assert_eq(q->st.calls_saved, 1);
}

/* used_event: the driver's event, after the avail ring (virtio 1.1, 2.6.7) */
#define USED_EVENT (*(volatile uint16_t *)&e.r.avail->ring[QSZ])
#define RECHECK PMD_VQ_CALL_RECHECK_NS

/*
 * The lost wakeup (vq_impl.h): the driver's used_event reached memory only
 * after femud had read it and decided against a call.  The recheck calls
 * once, PMD_VQ_CALL_RECHECK_NS after the start of the sweep that follows
 * the publish and not before, and the poller stays awake for it.
 */
Test(vq, recheck_calls_a_driver_whose_event_came_late)
{
	int kfd = eventfd(0, EFD_NONBLOCK);

	efd = eventfd(0, EFD_NONBLOCK);
	q = fg_env_vq(&e, QSZ, true, efd, kfd);
	cr_assert_not_null(q);
	USED_EVENT = 5; /* what femud reads at the publish: no call before entry 5 */
	post_read(0, 0);
	post_read(1, 0);
	pmd_vq_sweep(q, 1000, &scratch);
	cr_assert_eq(e.r.used->idx, 2);
	cr_assert_eq(calls_pending(), 0);
	cr_assert_eq(q->st.calls_saved, 1);
	USED_EVENT = 1; /* the driver's store, seen late: it waits for entry 1 */
	cr_assert_not(pmd_vq_may_sleep(q), "a recheck to make first");
	pmd_vq_sweep(q, 2000, &scratch);
	cr_assert_eq(calls_pending(), 0, "the next sweep starts the delay");
	cr_assert_not(pmd_vq_may_sleep(q));
	pmd_vq_sweep(q, 2000 + RECHECK - 1, &scratch);
	cr_assert_eq(calls_pending(), 0, "not before the recheck is due");
	pmd_vq_sweep(q, 2000 + RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 1);
	cr_assert_eq(q->st.calls_late, 1);
	cr_assert_eq(q->st.calls, 1);
	cr_assert(pmd_vq_may_sleep(q));
	pmd_vq_sweep(q, 2000 + 5 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 0, "one late call, not one per sweep");
	cr_assert_eq(q->st.calls_late, 1);
	close(kfd);
}

Test(vq, recheck_sends_nothing_the_driver_did_not_ask_for)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	USED_EVENT = 5;
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);
	USED_EVENT = 1; /* an entry not published yet: the driver has all it asked for */
	pmd_vq_sweep(q, RECHECK, &scratch);
	pmd_vq_sweep(q, 2 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 0);
	cr_assert_eq(q->st.calls_late, 0);
	cr_assert_eq(q->recheck_ns, 0, "nothing left to look at");
	/* the next entry crosses used_event 1 at its publish: an ordinary call */
	post_read(1, 0);
	pmd_vq_sweep(q, 3 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 1);
	cr_assert_eq(q->st.calls_late, 0);
}

/*
 * A publish without a call arms the recheck again: its delay starts with the
 * sweep after the last such publish, and it covers the entries of both.
 */
Test(vq, recheck_follows_the_last_publish)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	USED_EVENT = 9;
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);
	pmd_vq_sweep(q, RECHECK / 4, &scratch); /* the delay starts */
	post_read(1, 0);
	pmd_vq_sweep(q, RECHECK / 2, &scratch);
	cr_assert_eq(q->st.calls_saved, 2);
	USED_EVENT = 0; /* the driver waits for the first entry */
	pmd_vq_sweep(q, RECHECK / 2 + 1, &scratch);
	pmd_vq_sweep(q, RECHECK / 4 + RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 0, "armed again by the second publish");
	pmd_vq_sweep(q, RECHECK / 2 + 1 + RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 1, "entry 0, published two decisions ago, is covered");
	cr_assert_eq(q->st.calls_late, 1);
}

/*
 * A sweep that took longer than the delay (its poller preempted between
 * reading the clock and deciding) does not look again at once, when the
 * driver's store may still not be visible: the delay runs from the start of
 * the next sweep, so a recheck reads the event the driver stored before it
 * waited.
 */
Test(vq, recheck_waits_after_a_sweep_longer_than_its_delay)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	USED_EVENT = 5;
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);		/* its clock read at 0, its decision long after */
	pmd_vq_sweep(q, 3 * RECHECK, &scratch); /* the next sweep: the event is still the old one */
	cr_assert_eq(calls_pending(), 0);
	cr_assert_neq(q->recheck_ns, 0, "the recheck is still to come");
	USED_EVENT = 0; /* the driver's store, visible now: it waits for entry 0 */
	pmd_vq_sweep(q, 4 * RECHECK - 1, &scratch);
	cr_assert_eq(calls_pending(), 0);
	pmd_vq_sweep(q, 4 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 1, "the late call for entry 0");
	cr_assert_eq(q->st.calls_late, 1);
}

/* Without EVENT_IDX: interrupts re-enabled (the avail flag cleared) after the decision. */
Test(vq, recheck_without_event_idx_follows_the_avail_flag)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(false, efd);
	e.r.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(calls_pending(), 0);
	e.r.avail->flags = 0;
	pmd_vq_sweep(q, RECHECK, &scratch);
	pmd_vq_sweep(q, 2 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 1);
	cr_assert_eq(q->st.calls_late, 1);
	/* nothing published since: interrupts on, but no call to send */
	pmd_vq_sweep(q, 3 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 0);
}

/* Four reads a sweep, n times, with no call wanted (used_event far ahead). */
static void publish_uncalled(unsigned n)
{
	USED_EVENT = (uint16_t)(e.r.used->idx + 0x4000);
	for (unsigned k = 0; k < n; k++) {
		for (unsigned j = 0; j < 4; j++)
			post_read(j, j);
		pmd_vq_sweep(q, 0, &scratch);
	}
}

/*
 * A driver that stopped reaping holds at most a ring's worth of entries
 * more: an event older than the last QSZ entries gets no late call, one
 * within them does.
 */
Test(vq, recheck_looks_back_one_ring)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	publish_uncalled(3 * QSZ / 4);
	cr_assert_eq(e.r.used->idx, 3 * QSZ);
	USED_EVENT = 2 * QSZ - 1;
	pmd_vq_sweep(q, RECHECK, &scratch);
	pmd_vq_sweep(q, 2 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 0, "an event a ring and more behind");
	cr_assert_eq(q->recheck_ns, 0, "the recheck was made");
	publish_uncalled(3 * QSZ / 4);
	USED_EVENT = (uint16_t)(e.r.used->idx - QSZ);
	pmd_vq_sweep(q, 3 * RECHECK, &scratch);
	pmd_vq_sweep(q, 4 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 1, "an event exactly a ring behind");
	cr_assert_eq(q->st.calls_late, 1);
}

Test(vq, poll_queue_arms_no_recheck)
{
	make_q(true, -1);
	USED_EVENT = 5;
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(q->recheck_ns, 0);
}

/* ---- suite vq_race (see the header) ---- */

TestSuite(vq_race, .init = setup, .fini = teardown);

/* Has the used index moved past *last, the entry the driver reaped up to? */
static bool used_moved(void *last)
{
	return __atomic_load_n(&e.r.used->idx, __ATOMIC_ACQUIRE) != *(uint16_t *)last;
}

/*
 * A driver keeping 4 reads in flight that re-enables calls as a driver does
 * (used_event = what it reaped, then a look at the used index) and, with
 * nothing new, waits for the call; fence false leaves out the barrier
 * between that store and that load, as QEMU 7.2's single-threaded TCG does.
 * Stops at the first lost call, after max_reads, or once the poller sent
 * enough_late late calls (and min_reads completed), or after run_ns.
 */
static struct race_result race_drive(bool fence, unsigned min_reads, unsigned max_reads,
				     uint64_t enough_late, uint64_t run_ns)
{
	struct race_result r = {0, 0};
	uint16_t last = 0;
	unsigned done = 0;
	uint64_t end = fg_now_ns() + run_ns;

	for (unsigned i = 0; i < 4; i++)
		fg_env_post_read(&e, QSZ, i, i, 512);
	while (done < max_reads && fg_now_ns() < end && r.lost == 0 &&
	       (done < min_reads ||
		__atomic_load_n(&q->st.calls_late, __ATOMIC_RELAXED) < enough_late)) {
		uint16_t u = __atomic_load_n(&e.r.used->idx, __ATOMIC_ACQUIRE);

		if (u != last) {
			for (; last != u; last++, done++)
				fg_env_post_read(&e, QSZ, e.r.used->ring[last % QSZ].id / 3, 0,
						 512);
			continue;
		}
		USED_EVENT = last;
		if (fence)
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (*(volatile uint16_t *)&e.r.used->idx != last)
			continue;
		r.waits++;
		if (!race_wait_call(efd, used_moved, &last))
			r.lost++;
	}
	return r;
}

static struct race_result race_run(bool fence, unsigned min_reads, unsigned max_reads,
				   uint64_t enough_late, uint64_t run_ns)
{
	struct race_result r;

	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	race_poller_start(q, &scratch);
	r = race_drive(fence, min_reads, max_reads, enough_late, run_ns);
	race_poller_stop();
	cr_log_info("fence %d: %u waits, %u lost, calls %lu (late %lu), saved %lu", fence, r.waits,
		    r.lost, (unsigned long)q->st.calls, (unsigned long)q->st.calls_late,
		    (unsigned long)q->st.calls_saved);
	return r;
}

/*
 * The lost wakeup on this machine's own memory order: a driver without its
 * barrier, racing a real poller, reads the old used index while femud reads
 * its old used_event (with the recheck off this loses calls within a
 * second here, with the barrier it never does).  Every call must come, and
 * the race must have happened (late calls sent) for the test to say so.
 */
Test(vq_race, driver_without_barrier_gets_every_call, .timeout = 60)
{
	struct race_result r = race_run(false, 20000, UINT32_MAX, 10, 30000000000ull);

	cr_assert_gt(r.waits, 0);
	cr_assert_eq(r.lost, 0, "%u calls never came", r.lost);
	cr_assert_geq(q->st.calls_late, 10, "the race did not happen in 30 s: nothing shown");
}

/* The same driver with its barrier: every call comes from the ordinary decision. */
Test(vq_race, driver_with_barrier_gets_every_call, .timeout = 60)
{
	struct race_result r = race_run(true, 20000, 20000, 0, 30000000000ull);

	cr_assert_gt(r.waits, 0);
	cr_assert_eq(r.lost, 0, "%u calls never came", r.lost);
}

Test(vq, poll_queue_sends_and_saves_no_calls)
{
	make_q(true, -1);
	*(uint16_t *)&e.r.avail->ring[QSZ] = 5; /* the guest wants no call yet: irrelevant */
	post_read(0, 0);
	post_read(1, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(e.r.used->idx, 2);
	cr_assert_eq(q->st.calls, 0);
	cr_assert_eq(q->st.calls_saved, 0, "no call fd: nothing was saved");
	cr_assert_eq(q->st.call_errors, 0);
}

Test(vq, failed_call_write_is_counted)
{
	efd = open("/dev/null", O_RDONLY); /* a write to it fails (EBADF) */
	cr_assert_geq(efd, 0);
	make_q(false, efd);
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(e.r.used->idx, 1, "the completion is posted all the same");
	cr_assert_eq(q->st.calls, 0);
	cr_assert_eq(q->st.call_errors, 1);
	cr_assert_eq(q->st.calls_saved, 0);
}

Test(vq, at_most_one_call_per_sweep)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	*(uint16_t *)&e.r.avail->ring[QSZ] = 0;
	post_read(0, 0);
	post_read(1, 0);
	post_read(2, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(e.r.used->idx, 3);
	cr_assert_eq(calls_pending(), 1);
}

Test(vq, no_event_idx_sets_no_notify_and_honours_no_interrupt)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(false, efd);
	cr_assert(e.r.used->flags & VRING_USED_F_NO_NOTIFY);
	e.r.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(calls_pending(), 0);
	e.r.avail->flags = 0;
	post_read(1, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(calls_pending(), 1);
}

Test(vq, poll_queue_without_callfd_is_served)
{
	make_q(true, -1);
	*(uint16_t *)&e.r.avail->ring[QSZ] = 0;
	post_read(0, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(e.r.used->idx, 1);
	cr_assert_eq(q->st.calls, 0);
}

Test(vq, bad_request_answered_ioerr)
{
	make_q(true, -1);
	post_read(0, 1ULL << 40); /* past the end */
	e.r.desc[1].addr = DATA(0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(e.r.used->idx, 1);
	cr_assert_eq(status_of(0), VIRTIO_BLK_S_IOERR);
	cr_assert_eq(e.r.used->ring[0].len, 1);
	cr_assert_eq(q->st.errors, 1);
	cr_assert_eq(e.m.calls, 0);
}

Test(vq, unanswerable_chain_breaks_queue)
{
	make_q(true, -1);
	post_read(0, 0);
	e.r.desc[2].addr = FG_HOLE_GPA; /* status byte unreachable */
	post_read(1, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert(q->broken);
	cr_assert_eq(q->st.broken, 1);
	cr_assert_eq(e.r.used->idx, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(e.r.used->idx, 0);
	cr_assert_eq(e.m.calls, 0);
}

Test(vq, avail_index_jump_breaks_queue)
{
	make_q(true, -1);
	e.r.avail->idx = QSZ + 1;
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert(q->broken);
	cr_assert_eq(e.m.calls, 0);
}

Test(vq, flush_posts_pending)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	*(uint16_t *)&e.r.avail->ring[QSZ] = 0;
	e.m.due_delta = 1000000;
	post_read(0, 0);
	post_read(1, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(e.r.used->idx, 0);
	pmd_vq_flush(q, 10, &scratch);
	cr_assert_eq(e.r.used->idx, 2);
	cr_assert_eq(q->nheap, 0);
	cr_assert_eq(calls_pending(), 1);
}

Test(vq, resumes_from_given_indexes)
{
	struct pmd_vq_setup s = {.desc = e.r.desc,
				 .avail = e.r.avail,
				 .used = e.r.used,
				 .size = QSZ,
				 .last_avail = 65535,
				 .last_used = 65535,
				 .callfd = -1,
				 .event_idx = true,
				 .mem = e.g.mem,
				 .target = &e.t};

	e.r.avail->idx = 65535;
	e.r.used->idx = 65535;
	q = pmd_vq_create(&s);
	post_read(0, 0); /* e.r.avail->idx wraps to 0 */
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(e.r.used->idx, 0);
	cr_assert_eq(e.r.used->ring[65535 % QSZ].id, 0);
}

Test(vq, sweep_stops_after_byte_budget)
{
	struct virtio_blk_outhdr h = {.type = VIRTIO_BLK_T_IN, .sector = 0};
	const uint32_t len = 60 * 1024; /* every request reads into the same buffer */
	unsigned i, first;

	make_q(true, -1);
	memcpy(fg_host(&e.g, HDR(0)), &h, sizeof(h));
	fg_desc(&e.r.desc[0], HDR(0), 16, VRING_DESC_F_NEXT, 1);
	fg_desc(&e.r.desc[1], FG_A_GPA + 0x1000, len, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	fg_desc(&e.r.desc[2], STATUS(0), 1, VRING_DESC_F_WRITE, 0);
	for (i = 0; i < 12; i++) {
		e.r.avail->ring[e.r.avail->idx % QSZ] = 0;
		e.r.avail->idx++;
	}
	first = pmd_vq_sweep(q, 0, &scratch);
	cr_assert_lt(first, 12, "no byte budget");
	cr_assert_geq((uint64_t)first * len, PMD_VQ_BURST_BYTES);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 12 - first);
	cr_assert_eq(e.r.used->idx, 12);
}

/*
 * The hints a burst of n 4 KiB reads served in one sweep must have given,
 * request k's data at offset off(k): requests 1..PMD_VQ_LOOKAHEAD-1 whole
 * when the sweep starts; every later one in two parts, its first
 * PMD_VQ_HINT_SPLIT_BYTES PMD_VQ_LOOKAHEAD requests before its turn and the
 * rest PMD_VQ_HINT_REST_AHEAD before it.  Checked in the order given.
 */
static void check_read_hints(unsigned n, uint64_t (*off)(unsigned))
{
	unsigned h = 0, i, k;

	for (k = 1; k < n && k < PMD_VQ_LOOKAHEAD; k++, h++) {
		cr_assert_eq(e.m.pf[h].op, FM_OP_READ, "hint %u", h);
		cr_assert_eq(e.m.pf[h].offset, off(k), "hint %u", h);
		cr_assert_eq(e.m.pf[h].len, 4096, "hint %u", h);
		cr_assert_eq(e.m.pf[h].before_submit, 0, "hint %u", h);
	}
	for (i = 0; i < n; i++) {
		if (i + PMD_VQ_LOOKAHEAD < n) {
			cr_assert_eq(e.m.pf[h].offset, off(i + PMD_VQ_LOOKAHEAD), "hint %u", h);
			cr_assert_eq(e.m.pf[h].len, PMD_VQ_HINT_SPLIT_BYTES, "hint %u", h);
			cr_assert_eq(e.m.pf[h].before_submit, i, "hint %u", h);
			h++;
		}
		if (i + PMD_VQ_HINT_REST_AHEAD < n &&
		    i + PMD_VQ_HINT_REST_AHEAD >= PMD_VQ_LOOKAHEAD) {
			cr_assert_eq(e.m.pf[h].offset,
				     off(i + PMD_VQ_HINT_REST_AHEAD) + PMD_VQ_HINT_SPLIT_BYTES,
				     "hint %u", h);
			cr_assert_eq(e.m.pf[h].len, 4096 - PMD_VQ_HINT_SPLIT_BYTES, "hint %u", h);
			cr_assert_eq(e.m.pf[h].before_submit, i, "hint %u", h);
			h++;
		}
	}
	cr_assert_eq(e.m.npf, h, "%u hints, expected %u", e.m.npf, h);
	/* every request but the first was hinted whole before its turn */
	for (k = 0; k < n; k++)
		cr_assert_eq(e.m.req[k].flags & FM_REQ_PREFETCHED, k == 0 ? 0 : FM_REQ_PREFETCHED,
			     "submit %u: flags %#x", k, e.m.req[k].flags);
}

static uint64_t off_k(unsigned k)
{
	return 4096ull * k;
}

static uint64_t off_k5(unsigned k)
{
	return 4096ull * (k % 5);
}

/* Post a 4 KiB read as request i sent through an indirect table (head 3i names it). */
static void post_read_indirect(unsigned i, uint64_t sector)
{
	uint64_t at = FG_B_GPA + 0x8000 + 0x40 * (uint64_t)i;
	struct vring_desc *t = fg_host(&e.g, at);

	post_read(i, sector);
	memcpy(t, &e.r.desc[3 * i], 3 * sizeof(*t));
	t[0].next = 1;
	t[1].next = 2;
	fg_desc(&e.r.desc[3 * i], at, 3 * sizeof(*t), VRING_DESC_F_INDIRECT, 0);
}

/*
 * Five reads posted by post, served by one sweep of a queue whose model has
 * a prefetch op: every request but the first hinted ahead of its turn, the
 * next PMD_VQ_LOOKAHEAD - 1 whole, later ones in two parts
 * (check_read_hints), served and completed in ring order.
 */
static void expect_five_reads_hinted(void (*post)(unsigned i, uint64_t sector))
{
	unsigned k;

	e.t.ops = &fake_model_pf_ops;
	make_q(true, -1);
	for (k = 0; k < 5; k++)
		post(k, 8 * k);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 5);
	cr_assert_eq(e.m.calls, 5);
	for (k = 0; k < 5; k++) {
		cr_assert_eq(e.m.req[k].offset, 4096 * k, "submit order changed");
		cr_assert_eq(e.r.used->ring[k].id, 3 * k, "completion order changed");
		cr_assert_eq(status_of(k), VIRTIO_BLK_S_OK);
	}
	check_read_hints(5, off_k);
	/* requests 1..LOOKAHEAD-1 whole, the later ones in two parts */
	cr_assert_eq(e.m.npf, (PMD_VQ_LOOKAHEAD - 1) + 2 * (5 - PMD_VQ_LOOKAHEAD));
	cr_assert_not(q->broken);
}

Test(vq, prefetch_hints_run_ahead_of_submits)
{
	expect_five_reads_hinted(post_read);
}

/* Requests as Linux sends them with indirect descriptors are looked ahead into as direct ones. */
Test(vq, indirect_chains_hinted_as_direct_ones)
{
	expect_five_reads_hinted(post_read_indirect);
}

/*
 * A burst several times the look-ahead: every request served once, in ring
 * order, each hinted ahead of its turn as check_read_hints() says (five
 * chains fit the table of 16 descriptors: request k uses chain k % 5).
 */
/* n reads of len bytes (request k on chain k % 5), all served by one sweep of a hinted queue. */
static void sweep_burst_of_reads(unsigned n, uint32_t len)
{
	e.t.ops = &fake_model_pf_ops;
	make_q(true, -1);
	for (unsigned k = 0; k < n; k++)
		fg_env_post_read(&e, QSZ, k % 5, 8 * (k % 5), len);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), n);
}

Test(vq, long_burst_served_in_order_hinted_ahead)
{
	const unsigned n = 14;
	unsigned k;

	sweep_burst_of_reads(n, 4096);
	cr_assert_eq(e.r.used->idx, n);
	cr_assert_eq(q->last_avail, n);
	cr_assert_eq(e.m.calls, n);
	for (k = 0; k < n; k++) {
		cr_assert_eq(e.m.req[k].offset, 4096 * (k % 5), "submit %u", k);
		cr_assert_eq(e.r.used->ring[k].id, 3 * (k % 5), "completion %u", k);
	}
	check_read_hints(n, off_k5);
}

/* Reads of PMD_VQ_HINT_SPLIT_BYTES or less are hinted whole, once, PMD_VQ_LOOKAHEAD ahead. */
Test(vq, reads_up_to_the_split_size_hinted_whole_once)
{
	const unsigned n = 7;
	unsigned k;

	sweep_burst_of_reads(n, PMD_VQ_HINT_SPLIT_BYTES);
	cr_assert_eq(e.m.npf, n - 1);
	for (k = 1; k < n; k++) {
		cr_assert_eq(e.m.pf[k - 1].offset, 4096 * (k % 5), "hint %u", k);
		cr_assert_eq(e.m.pf[k - 1].len, PMD_VQ_HINT_SPLIT_BYTES, "hint %u", k);
		cr_assert_eq(e.m.pf[k - 1].before_submit,
			     k < PMD_VQ_LOOKAHEAD ? 0 : k - PMD_VQ_LOOKAHEAD, "hint %u", k);
		cr_assert_eq(e.m.req[k].flags, FM_REQ_PREFETCHED, "submit %u", k);
	}
	cr_assert_eq(e.m.req[0].flags, 0, "the first of the burst was not hinted");
}

/*
 * n more reads of len bytes on the queue of sweep_burst_of_reads(), served by
 * one sweep; the hints it gave before its first submit (the sweep's
 * look-ahead: requests 1..look whole or in part).
 */
static unsigned sweep_more_reads(unsigned n, uint32_t len)
{
	const unsigned base = e.m.calls;
	unsigned k, first = 0;

	e.m.npf = 0;
	for (k = 0; k < n; k++)
		fg_env_post_read(&e, QSZ, k % 5, 8 * (k % 5), len);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), n);
	cr_assert_eq(e.m.calls, base + n);
	for (k = 0; k < e.m.npf; k++)
		first += e.m.pf[k].before_submit == base;
	return first;
}

/*
 * A sweep of small reads (512 B) makes the next sweep give near hints
 * PMD_VQ_LOOKAHEAD_SMALL requests ahead, every one of them whole, each at
 * its distance; a sweep of 4 KiB reads brings the next back to the usual
 * hints, PMD_VQ_LOOKAHEAD ahead.  The first sweep of a queue uses
 * PMD_VQ_LOOKAHEAD.
 */
Test(vq, small_reads_make_the_next_sweep_look_further_ahead)
{
	const unsigned base = 4, n = PMD_VQ_LOOKAHEAD_SMALL + 6, big = PMD_VQ_LOOKAHEAD_SMALL + 2;
	unsigned k;

	_Static_assert(PMD_VQ_HINT_NEAR_BYTES < 4096 && PMD_VQ_HINT_SPLIT_BYTES < 4096,
		       "a 4 KiB read's near hint and its first part must show as such");
	sweep_burst_of_reads(base, 512);
	cr_assert_eq(e.m.npf, PMD_VQ_LOOKAHEAD, "the first sweep's look-ahead");
	cr_assert_eq(sweep_more_reads(n, 512), PMD_VQ_LOOKAHEAD_SMALL);
	cr_assert(q->hint_near, "small reads' hints are near ones");
	cr_assert_eq(e.m.npf, n - 1);
	for (k = 1; k < n; k++) {
		const unsigned at = k < PMD_VQ_LOOKAHEAD_SMALL ? 0 : k - PMD_VQ_LOOKAHEAD_SMALL;

		cr_assert_eq(e.m.pf[k - 1].offset, 4096 * (k % 5), "hint %u", k);
		cr_assert_eq(e.m.pf[k - 1].len, 512, "hint %u", k);
		cr_assert_eq(e.m.pf[k - 1].before_submit, base + at, "hint %u", k);
		cr_assert_eq(e.m.req[base + k].flags, FM_REQ_PREFETCHED, "submit %u", k);
	}
	/* this 4 KiB sweep still follows the small one: near hints, the reads' first lines */
	cr_assert_eq(sweep_more_reads(big, 4096), PMD_VQ_LOOKAHEAD_SMALL);
	cr_assert_eq(e.m.npf, big - 1);
	for (k = 0; k < e.m.npf; k++)
		cr_assert_eq(e.m.pf[k].len, PMD_VQ_HINT_NEAR_BYTES, "hint %u", k);
	/* the next does not: the usual hints, whole at its start, then in parts */
	cr_assert_eq(sweep_more_reads(big, 4096), PMD_VQ_LOOKAHEAD);
	cr_assert_not(q->hint_near);
	cr_assert_eq(e.m.pf[0].len, 4096);
	cr_assert_eq(e.m.pf[PMD_VQ_LOOKAHEAD - 1].len, PMD_VQ_HINT_SPLIT_BYTES);
}

/* Five reads of len bytes posted and swept: used in order; the sum of their offsets. */
static uint64_t sweep_five(uint32_t len)
{
	const uint16_t used = e.r.used->idx;

	for (unsigned k = 0; k < 5; k++)
		fg_env_post_read(&e, QSZ, k, 8 * k, len);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 5);
	cr_assert_eq(e.r.used->idx, (uint16_t)(used + 5));
	for (unsigned k = 0; k < 5; k++)
		cr_assert_eq(e.r.used->ring[(used + k) % QSZ].id, 3 * k);
	return 4096 * (0 + 1 + 2 + 3 + 4);
}

static uint64_t sweep_five_small(void)
{
	return sweep_five(512);
}

/* The hint trial on a split ring (fg_run_hint_trial()); the model's costs as given. */
static bool run_hint_trial(uint64_t pf_spin_ns, uint64_t cold_spin_ns)
{
	e.t.ops = &fake_model_pf_ops;
	e.m.pf_spin_ns = pf_spin_ns;
	e.m.cold_spin_ns = cold_spin_ns;
	make_q(true, -1);
	return fg_run_hint_trial(q, &e.m, sweep_five_small);
}

/* Hints that cost more than they save (the model's prefetch is slow): the trial turns them off. */
Test(vq, hint_trial_turns_hints_off_where_they_cost)
{
	cr_assert(run_hint_trial(100000, 0));
}

/* Copies that wait without hints (unhinted reads are slow): the trial keeps them on. */
Test(vq, hint_trial_keeps_hints_where_they_pay)
{
	cr_assert_not(run_hint_trial(0, 100000));
}

static uint64_t sweep_five_large(void)
{
	return sweep_five(4096);
}

/* The near-hint trial on a split ring (fg_run_near_trial()); the model's costs as given. */
static bool run_near_trial(uint64_t pf_spin_ns, uint64_t part_spin_ns)
{
	e.t.ops = &fake_model_pf_ops;
	e.m.pf_spin_ns = pf_spin_ns;
	e.m.part_spin_ns = part_spin_ns;
	make_q(true, -1);
	return fg_run_near_trial(q, &e.m, sweep_five_large);
}

/* Each hint call costs (the usual hints make two per read): the trial takes the near hints. */
Test(vq, near_trial_takes_near_hints_where_they_cost_less)
{
	cr_assert(run_near_trial(20000, 0));
}

/* Copies wait for what a near hint leaves out: the trial keeps the usual hints. */
Test(vq, near_trial_keeps_usual_hints_where_near_ones_leave_copies_waiting)
{
	cr_assert_not(run_near_trial(0, 20000));
}

/*
 * The usual hints cost time between sweeps (a driver that refills later,
 * say), more than the near hints' copies wait in them: the trial, timing
 * each sweep from the end of the one before, takes the near hints.
 */
Test(vq, near_trial_counts_the_time_between_sweeps)
{
	e.m.usual_gap_ns = 40000;
	cr_assert(run_near_trial(0, 2000));
}

/* Sweeps of 4 KiB reads never run the small-read trial: every one of them hints. */
Test(vq, large_reads_always_hint)
{
	e.t.ops = &fake_model_pf_ops;
	make_q(true, -1);
	for (unsigned s = 0; s < 2 * PMD_VQ_TUNE_WINDOWS * FG_TRIAL_WINDOW_SERVED / 5; s++) {
		e.m.npf = 0;
		for (unsigned k = 0; k < 5; k++)
			fg_env_post_read(&e, QSZ, k, 8 * k, 4096);
		cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 5);
		cr_assert_gt(e.m.npf, 0, "sweep %u gave no hint", s);
	}
	cr_assert_eq(q->st.hint_trials, 0);
	cr_assert_not(pmd_vq_tune_measuring(&q->tune));
}

/*
 * A read is handed over as prefetched only when its whole hint went out: one
 * alone (QD1) is not, nor a write, nor a read whose first part was hinted by
 * a sweep that stopped before the rest (the next sweep serves it first).
 */
Test(vq, only_reads_hinted_whole_are_handed_over_as_prefetched)
{
	unsigned k;

	e.t.ops = &fake_model_pf_ops;
	make_q(true, -1);
	post_read(0, 0);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 1);
	cr_assert_eq(e.m.req[0].flags, 0, "a request alone is not hinted");
	for (k = 1; k < 5; k++)
		post_write(k, 8 * k);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 4);
	for (k = 1; k < 5; k++) {
		cr_assert_eq(e.m.req[k].op, FM_OP_WRITE);
		cr_assert_eq(e.m.req[k].flags, 0, "write %u", k);
	}
}

/* Without a prefetch op nothing is hinted, and no read is handed over as prefetched. */
Test(vq, no_read_is_prefetched_for_a_model_without_prefetch_op)
{
	e.t.ops = &fake_model_ops;
	make_q(true, -1);
	for (unsigned k = 0; k < 5; k++)
		post_read(k, 8 * k);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 5);
	for (unsigned k = 0; k < 5; k++)
		cr_assert_eq(e.m.req[k].flags, 0, "read %u", k);
}

/* The driver, on another CPU, adds three requests while the first is served. */
static void post_three_more(struct fake_model *m, void *arg)
{
	(void)arg;
	if (m->calls != 1)
		return;
	for (unsigned k = 5; k < 8; k++)
		post_read(k % 5, 8 * (k % 5));
}

/*
 * Requests added while a sweep runs join its burst once the look-ahead reaches
 * the end of what the sweep saw at its start: served in the same sweep, in
 * ring order, each hinted ahead as in one long burst.
 */
Test(vq, requests_added_during_a_sweep_join_its_burst_hinted_ahead)
{
	unsigned k;

	e.t.ops = &fake_model_pf_ops;
	e.m.on_submit = post_three_more;
	make_q(true, -1);
	for (k = 0; k < 5; k++)
		post_read(k, 8 * k);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 8, "the three added requests joined");
	cr_assert_eq(e.r.used->idx, 8);
	cr_assert_eq(q->last_avail, 8);
	for (k = 0; k < 8; k++) {
		cr_assert_eq(e.m.req[k].offset, 4096 * (k % 5), "submit %u", k);
		cr_assert_eq(e.r.used->ring[k].id, 3 * (k % 5), "completion %u", k);
	}
	check_read_hints(8, off_k5);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 0);
}

/* The same with 512 B reads: small requests' sweeps are not extended. */
static void post_three_more_small(struct fake_model *m, void *arg)
{
	(void)arg;
	if (m->calls != 1)
		return;
	for (unsigned k = 5; k < 8; k++)
		fg_env_post_read(&e, QSZ, k % 5, 8 * (k % 5), 512);
}

Test(vq, small_requests_added_during_a_sweep_wait_for_the_next)
{
	e.t.ops = &fake_model_pf_ops;
	e.m.on_submit = post_three_more_small;
	make_q(true, -1);
	for (unsigned k = 0; k < 5; k++)
		fg_env_post_read(&e, QSZ, k, 8 * k, 512);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 5);
	cr_assert_eq(e.r.used->idx, 5, "published at the sweep's end, not delayed");
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 3);
	cr_assert_eq(e.r.used->idx, 8);
}

Test(vq, no_prefetch_op_no_hints)
{
	make_q(true, -1);
	post_read(0, 0);
	post_read(1, 8);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 2);
	cr_assert_not(q->prefetch);
	cr_assert_eq(e.m.npf, 0);
}

/* A chain peeked ahead that is broken still stops the queue at its own place. */
Test(vq, broken_chain_ahead_breaks_queue_at_its_place)
{
	unsigned k;

	e.t.ops = &fake_model_pf_ops;
	make_q(true, -1);
	post_read(0, 0);
	post_read(1, 8);
	post_read(2, 16);
	e.r.desc[8].addr = FG_HOLE_GPA; /* chain 2: status byte unreachable */
	post_read(3, 24);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert(q->broken);
	cr_assert_eq(q->st.broken, 1);
	cr_assert_eq(e.m.calls, 2);
	cr_assert_eq(e.r.used->idx, 2);
	cr_assert_eq(e.r.used->ring[0].id, 0);
	cr_assert_eq(e.r.used->ring[1].id, 3);
	cr_assert_eq(q->last_avail, 2);
	cr_assert_eq(status_of(2), 0xff);
	cr_assert_eq(status_of(3), 0xff, "request after the broken one served");
	/* hints (whole or in parts) for requests 1-3 only, in ring order */
	for (k = 0; k < e.m.npf && k < FM_REC_MAX; k++) {
		cr_assert_geq(e.m.pf[k].offset, 4096, "hint %u", k);
		cr_assert_lt(e.m.pf[k].offset, 4 * 4096, "hint %u", k);
		if (k > 0)
			cr_assert_gt(e.m.pf[k].offset, e.m.pf[k - 1].offset, "hint %u", k);
	}
}

Test(vq, bad_head_ahead_is_not_hinted_and_breaks_queue)
{
	e.t.ops = &fake_model_pf_ops;
	make_q(true, -1);
	post_read(0, 0);
	post_read(1, 8);
	e.r.avail->ring[e.r.avail->idx % QSZ] = 200; /* head outside the queue */
	e.r.avail->idx++;
	post_read(3, 24);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert(q->broken);
	cr_assert_eq(e.m.calls, 2);
	cr_assert_eq(e.r.used->idx, 2);
	cr_assert_eq(q->last_avail, 2);
	cr_assert_leq(e.m.npf, 3);
	for (unsigned k = 0; k < e.m.npf; k++)
		cr_assert_neq(e.m.pf[k].offset, 2 * 4096, "hint for the bad head");
}

Test(vq, out_of_range_request_ahead_not_hinted_answered_ioerr)
{
	e.t.ops = &fake_model_pf_ops;
	make_q(true, -1);
	post_read(0, 1ULL << 40); /* past the end */
	post_read(1, 8);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(e.r.used->idx, 2);
	cr_assert_eq(status_of(0), VIRTIO_BLK_S_IOERR);
	cr_assert_eq(status_of(1), VIRTIO_BLK_S_OK);
	cr_assert_eq(e.m.calls, 1);
	cr_assert_eq(e.m.npf, 1);
	cr_assert_eq(e.m.pf[0].offset, 4096);
}

/* A single-writer model with an idle op hears of every sweep that took nothing. */
Test(vq, idle_op_called_on_empty_sweeps_only)
{
	e.t.ops = &fake_model_idle_ops;
	make_q(true, -1);
	cr_assert_eq(pmd_vq_sweep(q, 1000, &scratch), 0);
	cr_assert_eq(e.m.nidle, 1);
	cr_assert_eq(e.m.idle_ns, 1000);
	post_read(0, 0);
	cr_assert_eq(pmd_vq_sweep(q, 2000, &scratch), 1);
	cr_assert_eq(e.m.nidle, 1, "a sweep that took a request is not idle");
	cr_assert_eq(e.m.calls, 1);
	/* a completion still waiting in the heap does not make the queue busy */
	e.m.due_delta = 10000;
	post_read(1, 8);
	cr_assert_eq(pmd_vq_sweep(q, 3000, &scratch), 1);
	cr_assert_eq(pmd_vq_sweep(q, 4000, &scratch), 0);
	cr_assert_eq(e.m.nidle, 2);
	cr_assert_eq(e.m.idle_ns, 4000);
	cr_assert_eq(pmd_vq_sweep(q, 13000, &scratch), 1, "the due completion is posted");
	cr_assert_eq(e.m.nidle, 3);
}

/* idle() runs unlocked on the poller: only for models whose state has one writer. */
Test(vq, idle_op_not_called_for_multi_writer_model)
{
	e.t.ops = &fake_model_idle_mw_ops;
	make_q(true, -1);
	cr_assert_eq(pmd_vq_sweep(q, 1000, &scratch), 0);
	cr_assert_not(q->idle);
	cr_assert_eq(e.m.nidle, 0);
}

/* ---- notification re-arm for adaptive polling ---- */

/* The driver's kick decision after publishing avail index new (old before). */
static bool driver_kicks(bool event_idx, uint16_t old_idx, uint16_t new_idx)
{
	if (event_idx)
		return vring_need_event(avail_event(), new_idx, old_idx);
	return !(e.r.used->flags & VRING_USED_F_NO_NOTIFY);
}

Test(vq, arm_without_event_idx_clears_no_notify_and_suppress_sets_it)
{
	make_q(false, -1);
	e.r.used->flags |= 0x8000; /* other bits are left alone */
	cr_assert_not(driver_kicks(false, 0, 1), "suppressed from the start");
	cr_assert_not(pmd_vq_notify_arm(q), "nothing waiting");
	cr_assert_eq(e.r.used->flags, 0x8000);
	cr_assert(driver_kicks(false, 0, 1));
	pmd_vq_notify_suppress(q);
	cr_assert_eq(e.r.used->flags, 0x8000 | VRING_USED_F_NO_NOTIFY);
}

Test(vq, arm_with_event_idx_publishes_the_next_index_not_one_behind)
{
	make_q(true, -1);
	post_read(0, 0);
	post_read(1, 0);
	post_read(2, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(avail_event(), 0xffff, "polling: still suppressing, not rewritten");
	cr_assert_not(driver_kicks(true, 3, 4));
	cr_assert_not(pmd_vq_notify_arm(q));
	cr_assert_eq(avail_event(), 3, "armed: the next index to serve");
	/* the driver's very next publish, of one or of several requests, kicks */
	cr_assert(driver_kicks(true, 3, 4));
	cr_assert(driver_kicks(true, 3, 7));
	pmd_vq_notify_suppress(q);
	cr_assert_eq(avail_event(), 2, "suppressed: one behind");
	cr_assert_not(driver_kicks(true, 3, 4));
	/* the index wraps */
	q->last_avail = 0xffff;
	cr_assert(pmd_vq_notify_arm(q), "e.r.avail idx 3 != 0xffff: requests waiting");
	cr_assert_eq(avail_event(), 0xffff);
	cr_assert(driver_kicks(true, 0xffff, 0));
}

/* A request published before the driver saw the re-armed flag sent no kick. */
Test(vq, arm_reports_requests_published_meanwhile)
{
	for (int evidx = 0; evidx < 2; evidx++) {
		if (q != NULL)
			pmd_vq_free(q);
		memset(e.r.avail, 0, 0x1000);
		memset(e.r.used, 0, 0x1000);
		make_q(evidx, -1);
		post_read(0, 0); /* published while suppressed: no kick */
		cr_assert(pmd_vq_notify_arm(q), "event_idx %d: waiting request missed", evidx);
		pmd_vq_notify_suppress(q);
		pmd_vq_sweep(q, 0, &scratch);
		cr_assert_eq(e.r.used->idx, 1);
		cr_assert_not(pmd_vq_notify_arm(q), "event_idx %d: all served", evidx);
	}
}

Test(vq, broken_queue_never_reports_waiting_requests)
{
	make_q(true, -1);
	e.r.avail->idx = 100; /* more than the queue size: breaks it */
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert(q->broken);
	cr_assert_not(pmd_vq_notify_arm(q));
}

static void make_q_kick(int kickfd)
{
	q = fg_env_vq(&e, QSZ, true, -1, kickfd);
	cr_assert_not_null(q);
}

Test(vq, may_sleep_needs_a_kick_fd_and_an_idle_model)
{
	make_q_kick(-1);
	cr_assert_not(pmd_vq_may_sleep(q), "no kick fd: a kick could never wake the poller");
	pmd_vq_free(q);
	e.t.ops = &fake_model_idle_ops;
	make_q_kick(7);
	cr_assert(pmd_vq_may_sleep(q));
	e.m.idle_busy = true;
	pmd_vq_sweep(q, 1000, &scratch);
	cr_assert_not(pmd_vq_may_sleep(q), "the model has background work");
	e.m.idle_busy = false;
	pmd_vq_sweep(q, 2000, &scratch);
	cr_assert(pmd_vq_may_sleep(q));
}

Test(vq, next_due_is_the_earliest_pending_completion)
{
	make_q(true, -1);
	cr_assert_eq(pmd_vq_next_due(q), UINT64_MAX);
	e.m.due_delta = 5000;
	post_read(0, 0);
	pmd_vq_sweep(q, 1000, &scratch);
	e.m.due_delta = 1000;
	post_read(1, 0);
	pmd_vq_sweep(q, 2000, &scratch);
	cr_assert_eq(pmd_vq_next_due(q), 3000);
	pmd_vq_sweep(q, 3000, &scratch);
	cr_assert_eq(pmd_vq_next_due(q), 6000);
}

/* The used index the driver could see at each submit (by submit count). */
static uint16_t used_at_submit[16];
static void note_used_idx(struct fake_model *m, void *arg)
{
	(void)arg;
	if (m->calls < 16)
		used_at_submit[m->calls] = e.r.used->idx;
}

/*
 * After a sweep of four 4 KiB reads a sweep stores the used index every two
 * requests (half the last sweep's take, PMD_VQ_PUBLISH_SHARE), long before
 * the byte bound: a driver with few requests in flight refills meanwhile.
 */
Test(vq, few_large_requests_published_within_a_sweep)
{
	e.m.on_submit = note_used_idx;
	make_q(true, -1);
	for (unsigned k = 0; k < 4; k++)
		post_read(k, 8 * k);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 4);
	cr_assert_eq(used_at_submit[4], 0, "the first sweep publishes at its end only");
	cr_assert_eq(e.r.used->idx, 4);
	for (unsigned k = 0; k < 4; k++)
		post_read(k, 8 * k);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 4);
	cr_assert_eq(used_at_submit[6], 4, "published before two requests were served");
	cr_assert_eq(used_at_submit[7], 6, "not published after two requests");
	cr_assert_eq(used_at_submit[8], 6);
	cr_assert_eq(e.r.used->idx, 8);
}

/* Small requests' sweeps on a split ring store the used index at their end only. */
Test(vq, few_small_requests_published_at_the_sweep_end)
{
	e.m.on_submit = note_used_idx;
	make_q(true, -1);
	for (unsigned r = 0; r < 2; r++)
		for (unsigned k = 0; k < 4; k++)
			fg_env_post_read(&e, QSZ, k, 8 * k, 512);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 8);
	for (unsigned k = 0; k < 4; k++)
		fg_env_post_read(&e, QSZ, k, 8 * k, 512);
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), 4);
	for (unsigned c = 9; c <= 12; c++)
		cr_assert_eq(used_at_submit[c], 8, "submit %u saw a used index stored mid-sweep",
			     c);
	cr_assert_eq(e.r.used->idx, 12);
}
