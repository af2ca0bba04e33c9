/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * poller_watch.c - the pollers' watchdog (see poller_watch.h): its thread,
 * one look at a poller, and the rescue of a poller blocked on a call fd.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include <rte_lcore.h>

#include "pmd/pmd_clock.h"
#include "pmd/pmd_log.h"
#include "pmd/poller_watch.h"
#include "pmd/vq_guard.h"

static pthread_t watch_thread;
static bool watch_started;
static bool watch_stop_flag; /* under watch_lock */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cond;

/* The poller sweeps (or slept): a new period without stall starts at now. */
static void watch_reset(struct pmd_watch_state *w, const struct pmd_watch_poller *p,
			uint64_t now_ns)
{
	if (w->warned && p->tid == w->tid && p->sweeps != w->sweeps)
		PMD_LOG(WARNING, "poller %u (lcore %u) sweeps again after %.1f s", p->idx, p->lcore,
			(double)(now_ns - w->since_ns) / 1e9);
	w->tid = p->tid;
	w->sweeps = p->sweeps;
	w->since_ns = now_ns;
	w->sampled = false;
	w->warned = false;
	w->warn_ns = 0;
}

/*
 * p is blocked writing eventfd fd: post the fd for the poller, make it
 * non-blocking again and read its counter, so that the write returns.
 */
static void watch_rescue(const struct pmd_watch_poller *p, int fd, uint64_t stalled_ns)
{
	int rc;
	uint64_t drained;

	__atomic_store_n(&pmd_watch_rescued[p->idx], fd + 1, __ATOMIC_RELEASE);
	rc = pmd_guard_notify_nonblock(fd);
	drained = pmd_guard_eventfd_take(fd); /* the blocked write returns */
	PMD_LOG(ERR,
		"poller %u (lcore %u) blocked %.1f s writing call eventfd %d: the frontend made it "
		"blocking again and filled its counter; set non-blocking (%s) and drained (%s); "
		"the poller stops that queue",
		p->idx, p->lcore, (double)stalled_ns / 1e9, fd, rc < 0 ? strerror(-rc) : "ok",
		drained != 0 ? "ok" : "nothing to read");
}

enum pmd_watch_verdict pmd_watch_look(struct pmd_watch_state *w, const struct pmd_watch_poller *p,
				      uint64_t now_ns)
{
	struct pmd_thread_sample s;
	char what[256];

	if (!p->running || p->tid == 0 || p->tid != w->tid || p->sweeps != w->sweeps) {
		watch_reset(w, p, now_ns);
		return PMD_WATCH_OK;
	}
	if (now_ns - w->since_ns < PMD_WATCH_STALL_NS)
		return PMD_WATCH_OK;
	if (p->asleep) {
		watch_reset(w, p, now_ns);
		return PMD_WATCH_ASLEEP;
	}
	pmd_thread_sample(p->tid, &s);
	if (!s.ok)
		return PMD_WATCH_OK;
	if (s.syscall == SYS_io_uring_enter) {
		watch_reset(w, p, now_ns);
		return PMD_WATCH_ASLEEP;
	}
	if (s.syscall == SYS_write && s.state == 'S' && s.arg0 <= INT32_MAX &&
	    pmd_guard_fd_is_eventfd((int)s.arg0)) {
		watch_rescue(p, (int)s.arg0, now_ns - w->since_ns);
		watch_reset(w, p, now_ns);
		return PMD_WATCH_RESCUED;
	}
	if (!w->sampled) {
		w->first = s;
		w->sampled = true;
		w->warn_ns = w->since_ns + PMD_WATCH_WARN_NS;
	}
	if (p->parked || now_ns < w->warn_ns)
		return PMD_WATCH_STALLED;
	pmd_thread_describe(p->tid, &w->first, &s, what, sizeof(what));
	PMD_LOG(WARNING, "poller %u (lcore %u) has finished no sweep for %.1f s: %s", p->idx,
		p->lcore, (double)(now_ns - w->since_ns) / 1e9, what);
	w->warned = true;
	w->warn_ns = now_ns + PMD_WATCH_WARN_EVERY_NS;
	return PMD_WATCH_WARNED;
}

/* Sleep one tick, or less when told to stop; true when told to stop. */
static bool watch_wait_tick(void)
{
	struct timespec ts;
	bool stop;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long)PMD_WATCH_TICK_NS;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&watch_lock);
	while (!watch_stop_flag &&
	       pthread_cond_timedwait(&watch_cond, &watch_lock, &ts) != ETIMEDOUT)
		;
	stop = watch_stop_flag;
	pthread_mutex_unlock(&watch_lock);
	return stop;
}

static void *watch_main(void *arg)
{
	static struct pmd_watch_state st[PMD_MAX_POLLERS];
	struct pmd_watch_poller snap[PMD_MAX_POLLERS];

	(void)arg;
	memset(st, 0, sizeof(st));
	while (!watch_wait_tick()) {
		unsigned n = pmd_pollers_watch_snap(snap, PMD_MAX_POLLERS);
		uint64_t now = pmd_now_ns();

		for (unsigned i = 0; i < n; i++)
			pmd_watch_look(&st[snap[i].idx], &snap[i], now);
	}
	return NULL;
}

int pmd_watch_start(void)
{
	pthread_condattr_t ca;
	int rc;

	if (watch_started)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&watch_cond, &ca);
	pthread_condattr_destroy(&ca);
	watch_stop_flag = false;
	/* a control thread: it runs on the CPUs that no lcore polls */
	rc = rte_ctrl_thread_create(&watch_thread, "femud-watch", NULL, watch_main, NULL);
	if (rc != 0) {
		PMD_LOG(ERR, "cannot start the pollers' watchdog: %s", strerror(rc));
		pthread_cond_destroy(&watch_cond);
		return -rc;
	}
	watch_started = true;
	return 0;
}

void pmd_watch_stop(void)
{
	if (!watch_started)
		return;
	pthread_mutex_lock(&watch_lock);
	watch_stop_flag = true;
	pthread_cond_signal(&watch_cond);
	pthread_mutex_unlock(&watch_lock);
	pthread_join(watch_thread, NULL);
	pthread_cond_destroy(&watch_cond);
	watch_started = false;
}
