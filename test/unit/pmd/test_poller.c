/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_poller.c - queues handed to a running worker-lcore poller through its
 * control ring: requests are served while attached, detach returns only once
 * the poller let go (pending completions flushed, nothing served after), and
 * attach/detach while the pollers are stopped are applied directly; an
 * adaptive poller sleeps when idle, a kick wakes it, and attach, detach and
 * stop wake it too; a queue gets one call when its poller takes it; the
 * longest pass shows in pass_gap_ns_max; a poller that does not return
 * bounds a stop and is reported.
 * Needs EAL with two lcores (--no-huge, no PCI, no shared files).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "fake_guest.h"
#include "pmd/pmd.h"
#include "pmd/poller.h"
#include "pmd/vq.h"

#define QSZ 16

static struct fg_env e;

static void eal_up(void)
{
	char *argv[] = {"test_poller", "--no-huge", "--no-pci",	   "--no-shconf", "-m", "32",
			"-l",	       "0-1",	    "--log-level", "2",		  NULL};

	cr_assert_geq(rte_eal_init(10, argv), 0, "EAL init");
	fg_env_init(&e, 1ULL << 20);
}

static struct pmd_vq *new_q(void)
{
	struct pmd_vq *q = fg_env_vq(&e, QSZ, true, -1, -1);

	cr_assert_not_null(q);
	return q;
}

/* A 512 B read of sector i on chain i % 5 (descriptors 3(i % 5)..+2). */
static void post_read(unsigned i)
{
	fg_env_post_read(&e, QSZ, i % 5, i, 512);
}

static bool wait_used(uint16_t want)
{
	for (int i = 0; i < 20000; i++) {
		if (__atomic_load_n(&e.r.used->idx, __ATOMIC_ACQUIRE) == want)
			return true;
		usleep(100);
	}
	return false;
}

Test(poller, worker_serves_attached_queue_and_detach_is_synchronous, .init = eal_up)
{
	unsigned lcore = rte_get_next_lcore(-1, 1, 0);
	struct pmd_vq *q;

	cr_assert_eq(pmd_init(&lcore, 1, false), 0);
	cr_assert_eq(pmd_init(&lcore, 1, false), -EALREADY);
	cr_assert_eq(pmd_pollers_start(), 0);
	q = new_q();
	cr_assert_eq(pmd_poller_attach(0, q), 0);
	post_read(0);
	post_read(1);
	cr_assert(wait_used(2), "poller did not serve the queue");
	cr_assert_eq(e.m.calls, 2);

	/* pending completion flushed by the detach */
	e.m.due_delta = 60ULL * 1000000000ULL;
	post_read(2);
	for (int i = 0; i < 20000 && __atomic_load_n(&e.m.calls, __ATOMIC_ACQUIRE) < 3; i++)
		usleep(100);
	cr_assert_eq(e.m.calls, 3);
	cr_assert_eq(e.r.used->idx, 2, "completed before due time");
	pmd_poller_detach(q);
	cr_assert_eq(e.r.used->idx, 3, "detach did not flush the pending completion");

	/* nothing is served after the detach returned */
	post_read(3);
	usleep(20000);
	cr_assert_eq(e.m.calls, 3);
	cr_assert_eq(e.r.used->idx, 3);

	/* re-attach, serve, stop the pollers, detach directly */
	e.m.due_delta = 0;
	cr_assert_eq(pmd_poller_attach(0, q), 0);
	cr_assert(wait_used(4));
	pmd_pollers_stop();
	post_read(4);
	usleep(20000);
	cr_assert_eq(e.r.used->idx, 4, "stopped poller still serving");
	pmd_poller_detach(q);
	pmd_vq_free(q);
}

/*
 * A queue that starts at indexes a previous backend reached: that backend
 * may have published used entries and died before its call, and the
 * driver's used_event still points before them.  Taking the queue, the
 * poller calls once, with no request and whatever used_event says.
 */
Test(poller, a_queue_gets_one_call_when_its_poller_takes_it, .init = eal_up)
{
	unsigned lcore = rte_get_next_lcore(-1, 1, 0);
	int efd = eventfd(0, EFD_NONBLOCK);
	struct pmd_vq *q;
	uint64_t n = 0;

	cr_assert_geq(efd, 0);
	*(uint16_t *)&e.r.avail->ring[QSZ] = 0x8000; /* used_event: no call wanted for long */
	cr_assert_eq(pmd_init(&lcore, 1, false), 0);
	cr_assert_eq(pmd_pollers_start(), 0);
	q = fg_env_vq(&e, QSZ, true, efd, -1);
	cr_assert_not_null(q);
	cr_assert_eq(pmd_poller_attach(0, q), 0);
	cr_assert_eq(read(efd, &n, sizeof(n)), (ssize_t)sizeof(n), "no call at the start");
	cr_assert_eq(n, 1);
	usleep(20000);
	cr_assert_eq(read(efd, &n, sizeof(n)), -1, "one call only, no request was served");
	pmd_poller_detach(q);
	cr_assert_eq(q->st.calls, 1);
	pmd_vq_free(q);

	/* a poll queue (no call fd) gets none and is served as before */
	q = new_q();
	cr_assert_eq(pmd_poller_attach(0, q), 0);
	post_read(0);
	cr_assert(wait_used(1));
	pmd_poller_detach(q);
	cr_assert_eq(q->st.calls, 0);
	pmd_vq_free(q);
	pmd_pollers_stop();
	close(efd);
}

/* Worker lcore: once the main-lcore poller served the request, stop it. */
static int stopper(void *arg)
{
	(void)arg;
	if (!wait_used(1))
		return -1;
	pmd_pollers_stop();
	return 0;
}

Test(poller, main_lcore_poller_runs_until_stopped, .init = eal_up)
{
	unsigned lcore = rte_get_main_lcore();
	unsigned worker = rte_get_next_lcore(-1, 1, 0);
	struct pmd_vq *q;

	cr_assert_eq(pmd_init(&lcore, 1, true), 0);
	q = new_q();
	cr_assert_eq(pmd_poller_attach(0, q), 0); /* not running: applied directly */
	post_read(0);
	cr_assert_eq(pmd_pollers_start(), 0);
	cr_assert_eq(rte_eal_remote_launch(stopper, NULL, worker), 0);
	pmd_poller_run_main(); /* returns once stopper called pmd_pollers_stop() */
	cr_assert_eq(rte_eal_wait_lcore(worker), 0);
	cr_assert_eq(e.r.used->idx, 1);
	pmd_poller_detach(q);
	pmd_vq_free(q);
}

static uint16_t avail_event(void)
{
	return __atomic_load_n((uint16_t *)&e.r.used->ring[QSZ], __ATOMIC_ACQUIRE);
}

static struct pmd_poller_stats sleep_stats(void)
{
	struct pmd_poller_snap snap;

	cr_assert_eq(pmd_pollers_stats(&snap, 1), 1);
	return snap.st;
}

/* Wait until the poller sleeps (and, with q, has re-armed q's notifications). */
static bool wait_asleep(const struct pmd_vq *q)
{
	for (int i = 0; i < 20000; i++) {
		if (sleep_stats().sleeping && (q == NULL || avail_event() == q->last_avail))
			return true;
		usleep(100);
	}
	return false;
}

/*
 * Post request i to a sleeping poller, then kick: true once it was served.
 * The kick is what wakes it unless the recheck PMD_SLEEP_RECHECK_NS into
 * the sleep found the request first (this thread preempted between the two
 * writes); that kick's completion is then stale at the next sleep, and
 * counts as no wake-up.
 */
static bool post_and_kick(struct pmd_vq *q, int kickfd, unsigned i)
{
	uint64_t one = 1, n;

	if (!wait_asleep(q))
		return false;
	post_read(i);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	cr_assert(vring_need_event(avail_event(), (uint16_t)(i + 1), (uint16_t)i), "no kick asked");
	cr_assert_eq(write(kickfd, &one, sizeof(one)), (ssize_t)sizeof(one));
	if (!wait_used((uint16_t)(i + 1)))
		return false;
	(void)!read(kickfd, &n, sizeof(n)); /* as the control path drains kicks */
	return true;
}

Test(poller, adaptive_poller_sleeps_and_wakes_for_kicks_and_control, .init = eal_up)
{
	unsigned lcore = rte_get_next_lcore(-1, 1, 0);
	int kickfd = eventfd(0, EFD_NONBLOCK);
	struct pmd_vq *q;
	unsigned i;

	cr_assert_eq(pmd_set_poll_mode(PMD_POLL_ADAPTIVE, 20000), 0);
	cr_assert_eq(pmd_init(&lcore, 1, false), 0);
	cr_assert_eq(pmd_set_poll_mode(PMD_POLL_BUSY, 0), -EALREADY);
	cr_assert_eq(pmd_pollers_start(), 0);
	cr_assert(wait_asleep(NULL), "an idle poller without queues did not sleep");

	/* attach wakes it; it serves, then sleeps again */
	q = fg_env_vq(&e, QSZ, true, -1, kickfd);
	cr_assert_not_null(q);
	cr_assert_eq(pmd_poller_attach(0, q), 0);
	cr_assert_geq(sleep_stats().wake_ctl, 1);
	cr_assert(wait_asleep(q), "not asleep with the queue attached");
	/* a few rounds: each may lose the race to the recheck, not all of them */
	for (i = 0; i < 8 && sleep_stats().wake_kick == 0; i++)
		cr_assert(post_and_kick(q, kickfd, i), "request %u was not served", i);
	cr_assert_geq(sleep_stats().wake_kick, 1, "no wake-up by a kick in %u rounds", i);

	/* detach and stop return while it sleeps */
	cr_assert(wait_asleep(q));
	pmd_poller_detach(q);
	pmd_pollers_stop();
	cr_assert_geq(sleep_stats().wake_ctl, 2);
	pmd_vq_free(q);
	close(kickfd);
}

static struct pmd_poller_snap poller_snap(void)
{
	struct pmd_poller_snap snap;

	cr_assert_eq(pmd_pollers_stats(&snap, 1), 1);
	return snap;
}

Test(poller, poll_mode_changes_at_runtime_and_a_busy_poller_never_sleeps, .init = eal_up)
{
	unsigned lcore = rte_get_next_lcore(-1, 1, 0);
	int kickfd = eventfd(0, EFD_NONBLOCK);
	uint64_t sleeps;
	struct pmd_vq *q;

	cr_assert_eq(pmd_init(&lcore, 1, false), 0);
	cr_assert_eq(pmd_poller_set_mode(1, PMD_POLL_ADAPTIVE, 1000), -EINVAL);
	cr_assert_eq(pmd_poller_set_mode(0, (enum pmd_poll_mode)7, 1000), -EINVAL);
	cr_assert_not(poller_snap().adaptive);
	cr_assert_eq(pmd_pollers_start(), 0);
	q = fg_env_vq(&e, QSZ, true, -1, kickfd);
	cr_assert_not_null(q);
	cr_assert_eq(pmd_poller_attach(0, q), 0);
	usleep(20000);
	cr_assert_eq(sleep_stats().sleeps, 0, "a busy poller slept");

	/* busy -> adaptive while running: it sleeps, and a kick still wakes it */
	cr_assert_eq(pmd_poller_set_mode(0, PMD_POLL_ADAPTIVE, 20000), 0);
	cr_assert(poller_snap().adaptive);
	cr_assert_eq(poller_snap().idle_ns, 20000);
	cr_assert(wait_asleep(q), "not asleep after the switch to adaptive");
	post_read(0);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	cr_assert(vring_need_event(avail_event(), 1, 0), "no kick asked");
	cr_assert_eq(write(kickfd, &(uint64_t){1}, sizeof(uint64_t)), (ssize_t)sizeof(uint64_t));
	cr_assert(wait_used(1), "the kick did not wake the poller");

	/* adaptive -> busy while asleep: the change wakes it and it stays awake */
	cr_assert(wait_asleep(q));
	cr_assert_eq(pmd_poller_set_mode(0, PMD_POLL_BUSY, 20000), 0);
	cr_assert_not(poller_snap().adaptive);
	sleeps = sleep_stats().sleeps;
	usleep(50000);
	cr_assert_eq(sleep_stats().sleeps, sleeps, "a poller switched to busy still sleeps");
	cr_assert_eq(sleep_stats().sleeping, 0);
	post_read(1);
	cr_assert(wait_used(2), "a busy poller did not serve without a kick");

	pmd_poller_detach(q);
	pmd_pollers_stop();
	pmd_vq_free(q);
	close(kickfd);
}

/* 60 ms, so that a pass of it reads >= 50 ms on a TSC clock a few percent off */
static void stall_60ms(void *arg)
{
	(void)arg;
	usleep(60000);
}

/*
 * pass_gap_ns_max: the longest time between two passes of a poller, i.e.
 * how long its queues waited for service at worst (a control message that
 * ran 60 ms on the poller here; on a loaded machine, time the OS did not run
 * it).
 */
Test(poller, a_long_pass_shows_in_pass_gap_ns_max, .init = eal_up)
{
	unsigned lcore = rte_get_next_lcore(-1, 1, 0);

	cr_assert_eq(pmd_init(&lcore, 1, false), 0);
	cr_assert_eq(pmd_pollers_start(), 0);
	pmd_poller_call(0, stall_60ms, NULL);
	/* the call returns once fn ran; the poller records the gap at the end of that pass */
	for (int i = 0; i < 1000 && poller_snap().st.pass_gap_ns_max < 50000000ull; i++)
		usleep(1000);
	cr_assert_geq(poller_snap().st.pass_gap_ns_max, 50000000ull);
	pmd_pollers_stop();
}

static int hold_go, held;

/* On the poller: do not return until hold_go (a poller stuck in a pass). */
static void hold_poller(void *arg)
{
	(void)arg;
	__atomic_store_n(&held, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&hold_go, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static void *call_hold(void *arg)
{
	(void)arg;
	pmd_poller_call(0, hold_poller, NULL);
	return NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wait up to 5 s for needle in the log stream (flushed). */
static bool log_has(FILE *f, char **buf, const char *needle)
{
	for (int i = 0; i < 500; i++) {
		fflush(f);
		if (*buf != NULL && strstr(*buf, needle) != NULL)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * A poller that does not return (here: a control call that blocks on it)
 * keeps pmd_pollers_stop_within() no longer than its bound: it returns the
 * number not stopped and logs the poller, that it finished no sweep, its
 * thread's state and its queues; the control thread waiting for it says
 * the same every 10 s.  Once the poller returns, a second stop stops it.
 */
Test(poller, a_poller_that_does_not_return_bounds_the_stop_and_is_reported, .init = eal_up)
{
	unsigned lcore = rte_get_next_lcore(-1, 1, 0);
	char *log = NULL;
	size_t loglen = 0;
	FILE *mem = open_memstream(&log, &loglen);
	char want[64];
	struct pmd_vq *q;
	pthread_t t;
	uint64_t t0, took;

	cr_assert_not_null(mem);
	rte_log_set_global_level(RTE_LOG_INFO);
	cr_assert_eq(rte_openlog_stream(mem), 0);
	cr_assert_eq(pmd_init(&lcore, 1, false), 0);
	cr_assert_eq(pmd_pollers_start(), 0);
	q = new_q();
	q->name = "/tmp/held.sock";
	cr_assert_eq(pmd_poller_attach(0, q), 0);
	cr_assert_eq(pthread_create(&t, NULL, call_hold, NULL), 0);
	while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
		usleep(1000);

	t0 = mono_ns();
	cr_assert_eq(pmd_pollers_stop_within(200000000ull), 1);
	took = mono_ns() - t0;
	cr_assert_geq(took, 200000000ull);
	cr_assert_lt(took, 3000000000ull, "the stop took %llu ns", (unsigned long long)took);
	snprintf(want, sizeof(want), "poller 0 (lcore %u) did not stop within 0.", lcore);
	cr_assert(log_has(mem, &log, want), "%s", log);
	cr_assert(log_has(mem, &log, ": no sweep finished (sweeps "), "%s", log);
	/* it sleeps in usleep: state S in a syscall */
	cr_assert(log_has(mem, &log, " state S, in syscall "), "%s", log);
	cr_assert(log_has(mem, &log, "its queues: /tmp/held.sock queue 0"), "%s", log);
	/* the caller of the control message is still waiting: its warning after 1 s */
	snprintf(want, sizeof(want), "poller 0 (lcore %u) has not taken a control message", lcore);
	cr_assert(log_has(mem, &log, want), "%s", log);
	/* (its first look may come before the poller took the message: "still sweeping") */
	cr_assert(log_has(mem, &log, " s (no sweep finished; thread ") ||
		      log_has(mem, &log, " s (still sweeping; thread "),
		  "%s", log);

	__atomic_store_n(&hold_go, 1, __ATOMIC_RELEASE);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(pmd_pollers_stop_within(UINT64_MAX), 0, "the poller returned: stopped now");
	post_read(0);
	usleep(20000);
	cr_assert_eq(e.r.used->idx, 0, "a stopped poller still serves");
	pmd_poller_detach(q);
	pmd_vq_free(q);
	rte_openlog_stream(NULL);
	fclose(mem);
	free(log);
}
