/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_watch.c - the watchdog of rte_vhost's message thread (see
 * ctl_watch.h): the hooks' marks, one look, and the watchdog's thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmd/ctl_watch.h"
#include "pmd/pmd_log.h"

/*
 * The hook running now, written by rte_vhost's thread only (a seqlock:
 * gen is odd while the fields change; each entry moves it by two).
 */
static struct {
	uint64_t gen;
	bool running;
	uint64_t since_ns;
	pid_t tid;
	int vid;
	uint32_t request;
	const char *hook;
	char path[108];
} cur;

uint64_t pmd_ctl_watch_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void pmd_ctl_watch_enter(const char *hook, const char *path, int vid, uint32_t request)
{
	uint64_t g = __atomic_load_n(&cur.gen, __ATOMIC_RELAXED);

	__atomic_store_n(&cur.gen, g + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	cur.since_ns = pmd_ctl_watch_now();
	cur.tid = pmd_thread_self();
	cur.vid = vid;
	cur.request = request;
	cur.hook = hook;
	snprintf(cur.path, sizeof(cur.path), "%s", path != NULL ? path : "?");
	__atomic_store_n(&cur.running, true, __ATOMIC_RELAXED);
	__atomic_store_n(&cur.gen, g + 2, __ATOMIC_RELEASE);
}

void pmd_ctl_watch_leave(void)
{
	__atomic_store_n(&cur.running, false, __ATOMIC_RELEASE);
}

/* The running hook, as one look read it. */
struct watch_hook {
	uint64_t gen;
	uint64_t since_ns;
	pid_t tid;
	char what[sizeof(((struct pmd_ctl_watch_state *)0)->what)];
};

/* Read the running hook into h; false when none runs (or it changed meanwhile). */
static bool watch_read(struct watch_hook *h)
{
	uint64_t g = __atomic_load_n(&cur.gen, __ATOMIC_ACQUIRE);

	if ((g & 1) || !__atomic_load_n(&cur.running, __ATOMIC_ACQUIRE))
		return false;
	h->since_ns = cur.since_ns;
	h->tid = cur.tid;
	if (cur.request != 0)
		snprintf(h->what, sizeof(h->what),
			 "%s (%s, connection %d, vhost-user request %" PRIu32 ")", cur.hook,
			 cur.path, cur.vid, cur.request);
	else
		snprintf(h->what, sizeof(h->what), "%s (%s, connection %d)", cur.hook, cur.path,
			 cur.vid);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	h->gen = g;
	return __atomic_load_n(&cur.gen, __ATOMIC_RELAXED) == g &&
	       __atomic_load_n(&cur.running, __ATOMIC_ACQUIRE);
}

/* The hook warned about has returned (another may run): say so once. */
static void watch_returned(struct pmd_ctl_watch_state *w, uint64_t now_ns)
{
	PMD_LOG(WARNING, "rte_vhost's message thread returned from %s after %.1f s", w->what,
		(double)(now_ns - w->since_ns) / 1e9);
	w->warned = false;
}

enum pmd_ctl_watch_verdict pmd_ctl_watch_look(struct pmd_ctl_watch_state *w, uint64_t now_ns)
{
	struct pmd_thread_sample s;
	struct watch_hook h;
	bool running = watch_read(&h);
	char th[256];

	if (!running || h.gen != w->seq) {
		bool returned = w->warned;

		if (returned)
			watch_returned(w, now_ns);
		w->seq = running ? h.gen : 0;
		if (running) {
			w->since_ns = h.since_ns;
			memcpy(w->what, h.what, sizeof(w->what));
			w->warn_ns = h.since_ns + PMD_CTL_WATCH_WARN_NS;
			pmd_thread_sample(h.tid, &w->first);
		}
		if (returned)
			return PMD_CTL_WATCH_RETURNED;
		if (!running)
			return PMD_CTL_WATCH_IDLE;
	}
	if (now_ns < w->warn_ns)
		return PMD_CTL_WATCH_RUNNING;
	pmd_thread_sample(h.tid, &s);
	pmd_thread_describe(h.tid, &w->first, &s, th, sizeof(th));
	PMD_LOG(WARNING,
		"rte_vhost's message thread has been in %s for %.1f s: no vhost-user message of "
		"any device is processed meanwhile (%s)",
		w->what, (double)(now_ns - w->since_ns) / 1e9, th);
	w->warned = true;
	w->warn_ns = now_ns + PMD_CTL_WATCH_WARN_EVERY_NS;
	return PMD_CTL_WATCH_WARNED;
}

static void *watch_main(void *arg)
{
	static struct pmd_ctl_watch_state w;
	const struct timespec tick = {.tv_sec = 0, .tv_nsec = (long)PMD_CTL_WATCH_TICK_NS};

	(void)arg;
	for (;;) {
		nanosleep(&tick, NULL);
		pmd_ctl_watch_look(&w, pmd_ctl_watch_now());
	}
	return NULL;
}

static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static int watch_rc;

static void watch_start_once(void)
{
	pthread_t th;

	watch_rc = -pthread_create(&th, NULL, watch_main, NULL);
	if (watch_rc != 0) {
		PMD_LOG(WARNING, "no watchdog for rte_vhost's message thread: %s",
			strerror(-watch_rc));
		return;
	}
	pthread_setname_np(th, "femud-ctlwatch");
	pthread_detach(th);
}

int pmd_ctl_watch_start(void)
{
	pthread_once(&watch_once, watch_start_once);
	return watch_rc;
}
