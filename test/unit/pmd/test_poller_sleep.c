/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_poller_sleep.c - adaptive polling over a fake guest ring and a real
 * io_uring: a kick wakes a sleeping poller, a request published before the
 * re-arm aborts the sleep, control messages and due completions wake it,
 * queues without a kick fd or with model work keep it busy, a detached
 * queue's kicks no longer wake it, and a driver racing the poller's
 * sleep/wake transitions (EVENT_IDX on and off) never loses a wake-up.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fake_guest.h"
#include "pmd/pmd_clock.h"
#include "pmd/poller_sleep.h"
#include "pmd/vq.h"

#define QSZ 16
#define MS 1000000ull

static struct fg_env e;
static struct pmd_vq *q;
static struct pmd_chain scratch;
static struct pmd_sleep s;
static struct pmd_poller_stats pst; /* the sleep counters */
static int kickfd = -1;
static bool guard_says_stay;
static bool guard_publishes; /* the guard publishes a read, no kick (see its test) */

static void post_read_512(void);

static bool guard_pending(void *arg)
{
	(void)arg;
	if (guard_publishes) {
		guard_publishes = false;
		post_read_512();
	}
	return __atomic_load_n(&guard_says_stay, __ATOMIC_ACQUIRE);
}

static const struct pmd_sleep_guard guard = {.pending = guard_pending};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The TSC rate, measured against CLOCK_MONOTONIC (no EAL here). */
static void clock_calibrate(void)
{
	uint64_t n0 = mono_ns(), t0 = rte_rdtsc(), n1, t1;

	usleep(50000);
	n1 = mono_ns();
	t1 = rte_rdtsc();
	pmd_clock_init((uint64_t)((double)(t1 - t0) * 1e9 / (double)(n1 - n0)));
}

static void make_q(bool event_idx, int kfd)
{
	q = fg_env_vq(&e, QSZ, event_idx, -1, kfd);
	cr_assert_not_null(q);
}

static void setup(void)
{

	clock_calibrate();
	fg_env_init(&e, 1ULL << 20);
	kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	cr_assert_geq(kickfd, 0);
	cr_assert_eq(pmd_sleep_init(&s, 20000, 16, &pst), 0);
	q = NULL;
	guard_says_stay = false;
	guard_publishes = false;
}

static void teardown(void)
{
	pmd_sleep_fini(&s);
	pmd_vq_free(q);
	close(kickfd);
	fg_env_fini(&e);
}

TestSuite(sleep, .init = setup, .fini = teardown);

static void post_read_512(void)
{
	fg_env_post_read(&e, QSZ, 0, 8, 512);
}

static uint16_t avail_event(void)
{
	return __atomic_load_n((uint16_t *)&e.r.used->ring[QSZ], __ATOMIC_ACQUIRE);
}

/*
 * The driver side: publish one 512 B read on chain 0 and kick exactly when
 * the ring asks for it (virtio 1.1, 2.6.13.6).  Returns whether it kicked.
 */
static bool driver_post(bool event_idx)
{
	uint16_t old = fg_env_post_read(&e, QSZ, 0, 8, 512), now = (uint16_t)(old + 1);
	bool kick;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (event_idx)
		kick = vring_need_event(avail_event(), now, old);
	else
		kick =
		    !(__atomic_load_n(&e.r.used->flags, __ATOMIC_ACQUIRE) & VRING_USED_F_NO_NOTIFY);
	if (kick) {
		uint64_t one = 1;

		cr_assert_eq(write(kickfd, &one, sizeof(one)), (ssize_t)sizeof(one));
	}
	return kick;
}

static bool wait_used(uint16_t want, uint64_t bound_ns)
{
	uint64_t end = mono_ns() + bound_ns;

	while (__atomic_load_n(&e.r.used->idx, __ATOMIC_ACQUIRE) != want) {
		if (mono_ns() > end)
			return false;
		sched_yield();
	}
	return true;
}

/* ---- one sleep at a time, on a helper thread ---- */

struct sleeper {
	pthread_t th;
	struct pmd_vq *vqs[1];
	unsigned nvq;
	volatile int done;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *sl = arg;

	pmd_sleep_run(&s, sl->vqs, sl->nvq, pmd_now_ns(), &guard);
	__atomic_store_n(&sl->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void sleeper_start(struct sleeper *sl)
{
	sl->vqs[0] = q;
	sl->nvq = q != NULL ? 1 : 0;
	sl->done = 0;
	cr_assert_eq(pthread_create(&sl->th, NULL, sleeper_main, sl), 0);
}

static void sleeper_join(struct sleeper *sl)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	cr_assert_eq(pthread_timedjoin_np(sl->th, NULL, &ts), 0, "the poller did not wake up");
}

/* Wait until the sleeper re-armed the queue, then a while more: it must still sleep. */
static void sleeper_wait_asleep(struct sleeper *sl, bool event_idx)
{
	uint64_t end = mono_ns() + 5000 * MS;

	if (q != NULL)
		while (event_idx ? avail_event() != q->last_avail
				 : (__atomic_load_n(&e.r.used->flags, __ATOMIC_ACQUIRE) &
				    VRING_USED_F_NO_NOTIFY))
			cr_assert_lt(mono_ns(), end, "notifications never re-armed");
	usleep(20000);
	cr_assert_eq(__atomic_load_n(&sl->done, __ATOMIC_ACQUIRE), 0,
		     "woke up with nothing to wake it");
}

static void kick_wakes(bool evidx)
{
	struct sleeper sl;

	make_q(evidx, kickfd);
	sleeper_start(&sl);
	sleeper_wait_asleep(&sl, evidx);
	cr_assert(driver_post(evidx), "the armed ring asks for a kick");
	sleeper_join(&sl);
	cr_assert_eq(pst.sleeps, 1);
	cr_assert_eq(pst.wake_kick, 1);
	cr_assert_eq(pst.wake_timer + pst.wake_ctl, 0);
	cr_assert_gt(pst.asleep_ns, 20 * MS);
	/* back to polling: the next publish sends no kick, the sweep serves both */
	cr_assert_not(driver_post(evidx), "not suppressed after the wake-up");
	pmd_vq_sweep(q, pmd_now_ns(), &scratch);
	cr_assert_eq(e.r.used->idx, 2);
}

Test(sleep, kick_wakes_the_poller_with_event_idx)
{
	kick_wakes(true);
}

Test(sleep, kick_wakes_the_poller_without_event_idx)
{
	kick_wakes(false);
}

Test(sleep, request_published_before_rearm_aborts_the_sleep)
{
	make_q(true, kickfd);
	cr_assert_not(driver_post(true), "polling: no kick");
	pmd_sleep_run(&s, &q, 1, pmd_now_ns(), &guard);
	cr_assert_eq(pst.sleeps_aborted, 1);
	cr_assert_eq(pst.sleeps, 0);
	cr_assert_eq(avail_event(), (uint16_t)(q->last_avail - 1), "left armed");
	cr_assert_eq(pmd_vq_sweep(q, pmd_now_ns(), &scratch), 1);
}

/*
 * The guard runs after the re-arm's look at the avail ring: a request
 * published there, with no kick, is one whose avail index the driver stored
 * before it read the armed avail_event but which reached memory only after
 * that look (a driver whose barrier did not order the two: vq_impl.h).
 */
Test(sleep, request_seen_late_and_not_kicked_is_found_by_the_recheck)
{
	struct sleeper sl;

	make_q(true, kickfd);
	guard_publishes = true;
	sleeper_start(&sl);
	sleeper_join(&sl);
	cr_assert_eq(pst.sleeps, 1);
	cr_assert_eq(pst.wake_recheck, 1);
	cr_assert_eq(pst.wake_kick + pst.wake_timer + pst.wake_ctl, 0);
	cr_assert_lt(pst.asleep_ns, 1000 * MS);
	cr_assert_eq(pmd_vq_sweep(q, pmd_now_ns(), &scratch), 1);
	cr_assert_eq(e.r.used->idx, 1);
}

Test(sleep, pending_control_message_aborts_the_sleep)
{
	make_q(false, kickfd);
	guard_says_stay = true;
	pmd_sleep_run(&s, &q, 1, pmd_now_ns(), &guard);
	cr_assert_eq(pst.sleeps_aborted, 1);
	cr_assert_eq(pst.sleeps, 0);
	cr_assert(e.r.used->flags & VRING_USED_F_NO_NOTIFY, "left armed");
}

Test(sleep, control_wake_up)
{
	struct sleeper sl;

	make_q(true, kickfd);
	sleeper_start(&sl);
	sleeper_wait_asleep(&sl, true);
	pmd_sleep_wake(&s);
	sleeper_join(&sl);
	cr_assert_eq(pst.sleeps, 1);
	cr_assert_eq(pst.wake_ctl, 1);
}

Test(sleep, poller_without_queues_sleeps_until_a_control_message)
{
	struct sleeper sl;

	sleeper_start(&sl);
	sleeper_wait_asleep(&sl, true);
	pmd_sleep_wake(&s);
	sleeper_join(&sl);
	cr_assert_eq(pst.wake_ctl, 1);
}

Test(sleep, pending_completion_wakes_the_poller_before_it_is_due)
{
	uint64_t due, woke;

	make_q(true, kickfd);
	e.m.due_delta = 200 * MS;
	driver_post(true);
	pmd_vq_sweep(q, pmd_now_ns(), &scratch);
	due = pmd_vq_next_due(q);
	cr_assert_neq(due, UINT64_MAX);
	pmd_sleep_run(&s, &q, 1, pmd_now_ns(), &guard);
	woke = pmd_now_ns();
	cr_assert_eq(pst.sleeps, 1);
	cr_assert_eq(pst.wake_timer, 1);
	/* never before due - PMD_SLEEP_EARLY_NS (2 ms for clock calibration error) */
	cr_assert_geq(woke + 2 * MS, due - PMD_SLEEP_EARLY_NS, "woke %.3f ms early",
		      (double)(due - PMD_SLEEP_EARLY_NS - woke) / 1e6);
	cr_assert_lt(woke, due + 1000 * MS);
	cr_assert_eq(e.r.used->idx, 0, "posted before due");
}

Test(sleep, completion_due_soon_keeps_the_poller_busy)
{
	make_q(true, kickfd);
	e.m.due_delta = PMD_SLEEP_EARLY_NS;
	driver_post(true);
	pmd_vq_sweep(q, pmd_now_ns(), &scratch);
	pmd_sleep_run(&s, &q, 1, pmd_now_ns(), &guard);
	cr_assert_eq(pst.sleeps + pst.sleeps_aborted, 0);
	cr_assert_neq(s.idle_since, 0, "the next try waits for another idle stretch");
}

Test(sleep, queue_without_kick_fd_keeps_the_poller_busy)
{
	make_q(true, -1);
	pmd_sleep_run(&s, &q, 1, pmd_now_ns(), &guard);
	cr_assert_eq(pst.sleeps + pst.sleeps_aborted, 0);
	cr_assert_not(s.ready, "no io_uring needed yet");
	cr_assert_eq(avail_event(), (uint16_t)(q->last_avail - 1), "notifications re-armed");
}

Test(sleep, model_with_background_work_keeps_the_poller_busy)
{
	e.t.ops = &fake_model_idle_ops;
	e.m.idle_busy = true;
	make_q(true, kickfd);
	pmd_vq_sweep(q, pmd_now_ns(), &scratch);
	pmd_sleep_run(&s, &q, 1, pmd_now_ns(), &guard);
	cr_assert_eq(pst.sleeps + pst.sleeps_aborted, 0);
}

/* The sleeper thread of the next test: sleep with q, forget it, sleep without. */
static void *forget_main(void *arg)
{
	struct sleeper *sl = arg;

	pmd_sleep_run(&s, sl->vqs, 1, pmd_now_ns(), &guard); /* woken by a kick */
	pmd_vq_sweep(q, pmd_now_ns(), &scratch);
	pmd_sleep_forget(&s, q);
	pmd_sleep_flush(&s);
	__atomic_store_n(&sl->done, 1, __ATOMIC_RELEASE);
	pmd_sleep_run(&s, sl->vqs, 0, pmd_now_ns(), &guard); /* only a control message */
	__atomic_store_n(&sl->done, 2, __ATOMIC_RELEASE);
	return NULL;
}

Test(sleep, detached_queue_kicks_no_longer_wake_the_poller)
{
	struct sleeper sl = {.vqs = {NULL}};
	uint64_t one = 1, end = mono_ns() + 5000 * MS;

	make_q(true, kickfd);
	sl.vqs[0] = q;
	cr_assert_eq(pthread_create(&sl.th, NULL, forget_main, &sl), 0);
	sleeper_wait_asleep(&sl, true);
	cr_assert(driver_post(true));
	while (__atomic_load_n(&sl.done, __ATOMIC_ACQUIRE) == 0)
		cr_assert_lt(mono_ns(), end, "the kick did not wake the poller");
	usleep(20000);
	cr_assert_eq(write(kickfd, &one, sizeof(one)), (ssize_t)sizeof(one));
	usleep(20000);
	cr_assert_eq(__atomic_load_n(&sl.done, __ATOMIC_ACQUIRE), 1,
		     "a detached queue's kick woke the poller");
	pmd_sleep_wake(&s);
	sleeper_join(&sl);
	cr_assert_eq(pst.wake_kick, 1);
	cr_assert_eq(pst.wake_ctl, 1);
}

/* ---- a driver racing the poller: no lost wake-up ---- */

struct racer {
	volatile int stop;
	uint64_t sweeps;
};

/* The poller loop of poller.c in miniature. */
static void *race_poller(void *arg)
{
	struct racer *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t now = pmd_now_ns();

		r->sweeps++;
		if (pmd_vq_sweep(q, now, &scratch) > 0)
			pmd_sleep_busy(&s);
		else if (pmd_sleep_due(&s, now))
			pmd_sleep_run(&s, &q, 1, now, &guard);
	}
	return NULL;
}

static void spin_ns(uint64_t ns)
{
	uint64_t end = mono_ns() + ns;

	while (mono_ns() < end)
		;
}

/*
 * QD1 requests with gaps around the 20 us idle threshold (0..60 us, and now
 * and then 1 ms): every request completes within a generous bound, and the
 * poller really went to sleep and woke up many times.
 */
static void race(bool event_idx)
{
	const unsigned n = 3000;
	struct racer r = {0};
	pthread_t th;
	uint64_t seed = 12345, worst = 0, kicks = 0;

	make_q(event_idx, kickfd);
	cr_assert_eq(pthread_create(&th, NULL, race_poller, &r), 0);
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		spin_ns((seed >> 33) % 64 == 0 ? MS : (seed >> 40) % 60000);
		t0 = mono_ns();
		kicks += driver_post(event_idx);
		if (!wait_used((uint16_t)(i + 1), 2000 * MS)) {
			__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
			pmd_sleep_wake(&s);
			pthread_join(th, NULL);
			cr_assert_fail(
			    "event_idx %d: request %u not served within 2 s (lost wake-up); "
			    "sleeps %lu kicks %lu",
			    event_idx, i, (unsigned long)pst.sleeps, (unsigned long)kicks);
		}
		if (mono_ns() - t0 > worst)
			worst = mono_ns() - t0;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pmd_sleep_wake(&s);
	pthread_join(th, NULL);
	cr_log_info("event_idx %d: %u requests, %lu sleeps (%lu aborted), %lu kicks, worst %.1f us",
		    event_idx, n, (unsigned long)pst.sleeps, (unsigned long)pst.sleeps_aborted,
		    (unsigned long)kicks, (double)worst / 1e3);
	cr_assert_gt(pst.sleeps, 100, "the poller hardly slept: the test proves nothing");
	cr_assert_geq(kicks, pst.wake_kick, "more kick wake-ups than kicks");
	cr_assert_eq(e.r.used->idx, n);
}

Test(sleep, no_lost_wakeup_with_event_idx, .timeout = 120)
{
	race(true);
}

Test(sleep, no_lost_wakeup_without_event_idx, .timeout = 120)
{
	race(false);
}
