/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * poller.c - poller lcores: sweep loop, control rings, start/stop
 * (pmd_init, pmd_pollers_start, pmd_poller_run_main, pmd_pollers_stop).
 *
 * The sweep loop takes no lock and makes no syscall except the call
 * eventfd writes the guest asked for.  Control messages are pointers on a
 * multi-producer / single-consumer rte_ring; in adaptive mode the sender
 * also writes the poller's eventfd, so that a sleeping poller wakes up
 * (poller_sleep.c does the sleeping).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "pmd/pmd.h"
#include "pmd/pmd_log.h"
#include "pmd/pmd_clock.h"
#include "pmd/pmd_measure.h"
#include "pmd/poller.h"
#include "pmd/poller_sleep.h"
#include "pmd/poller_watch.h"
#include "pmd/thread_diag.h"

/* Control messages a poller can have queued (rte_ring size, a power of 2). */
#define CTL_RING_SIZE 1024
/* ctl_wait(): pause-spins before it starts sleeping, and the sleep between checks (us). */
#define CTL_WAIT_SPINS 1000
#define CTL_WAIT_SLEEP_US 10
/* ctl_wait(): read the clock once every CTL_WAIT_CLOCK_MASK + 1 checks (a power of 2 - 1). */
#define CTL_WAIT_CLOCK_MASK 1023
/* ctl_wait(): first warning after this long, then one every CTL_WAIT_WARN_EVERY_NS. */
#define CTL_WAIT_WARN_AFTER_NS PMD_NS_PER_S
#define CTL_WAIT_WARN_EVERY_NS (10 * PMD_NS_PER_S)
/* pmd_pollers_stop_within(): sleep between checks that the pollers' loops have exited (us). */
#define STOP_CHECK_US 100
/* pmd_pollers_stop_within(): queues of a poller that did not stop, listed at most. */
#define STOP_LIST_QUEUES 8

enum ctl_type { CTL_ATTACH, CTL_DETACH, CTL_CALL, CTL_PARK };

struct ctl_msg {
	enum ctl_type type;
	struct pmd_vq *q;
	void (*fn)(void *arg); /* CTL_CALL */
	void *arg;
	bool drop;	   /* CTL_DETACH: without posting the queue's pending completions */
	volatile int done; /* set by whoever applied the message */
};

struct pmd_poller {
	/* poller-owned, hot */
	struct pmd_vq *vqs[PMD_POLLER_MAX_VQ];
	unsigned nvq;
	struct pmd_poller_stats st; /* written by this poller only (pmd_stats.h) */
	struct pmd_chain chain;	    /* scratch for the chain walker */
	bool adaptive;		    /* sleep when idle (poller_sleep.c); read by stats */
	struct pmd_sleep sleep;
	/* shared with control */
	struct rte_ring *ctl __rte_cache_aligned;
	volatile int stop;
	volatile int exited;
	pid_t tid;    /* its thread (set when its loop starts; 0 before), for reports */
	bool running; /* under poller_lock */
	bool is_main;
	unsigned lcore;
	unsigned idx;
} __rte_cache_aligned;

static struct pmd_poller *pollers[PMD_MAX_POLLERS];
static unsigned npollers;
static enum pmd_poll_mode poll_mode = PMD_POLL_BUSY;
static uint64_t poll_idle_ns = PMD_IDLE_NS_DEFAULT;
static pthread_mutex_t poller_lock = PTHREAD_MUTEX_INITIALIZER;
/* pmd_pollers_park(): parked pollers spin until this is set (under poller_lock). */
static int park_go;
/* pmd_pollers_park() .. pmd_pollers_unpark(): pollers are held on purpose (read by the watchdog).
 */
static int parking;
static struct ctl_msg park_msgs[PMD_MAX_POLLERS];

unsigned pmd_poller_count(void)
{
	return npollers;
}

/*
 * Wait for a poller to apply a message.  Spin briefly, then sleep between
 * checks so that a waiting control thread sharing the poller's CPU does not
 * starve it.  The message cannot be abandoned (the poller may still hold
 * the queue), so the wait has no deadline; a poller that does not answer
 * within a second is reported, with whether it still sweeps, every ten.
 */
static void ctl_wait(const struct pmd_poller *p, struct ctl_msg *m)
{
	struct pmd_thread_sample th[2];
	uint64_t t0 = 0, next = 0, sweeps = 0;
	unsigned spins = 0, cur = 0;

	while (!__atomic_load_n(&m->done, __ATOMIC_ACQUIRE)) {
		uint64_t now, s;

		if (++spins <= CTL_WAIT_SPINS) {
			rte_pause();
			continue;
		}
		usleep(CTL_WAIT_SLEEP_US);
		if ((spins & CTL_WAIT_CLOCK_MASK) != 0)
			continue;
		now = pmd_now_ns();
		s = PMD_CTR_READ(p->st.sweeps);
		if (t0 == 0) {
			t0 = now;
			next = now + CTL_WAIT_WARN_AFTER_NS;
			sweeps = s;
			pmd_thread_sample(__atomic_load_n(&p->tid, __ATOMIC_ACQUIRE), &th[cur]);
		} else if (now >= next) {
			pid_t tid = __atomic_load_n(&p->tid, __ATOMIC_ACQUIRE);
			char what[256];

			/* what the kernel says about the poller's thread since the last look */
			pmd_thread_sample(tid, &th[cur ^ 1]);
			pmd_thread_describe(tid, &th[cur], &th[cur ^ 1], what, sizeof(what));
			cur ^= 1;
			PMD_LOG(WARNING,
				"poller %u (lcore %u) has not taken a control message for %" PRIu64
				" s (%s; %s)",
				p->idx, p->lcore, (uint64_t)((now - t0) / PMD_NS_PER_S),
				s != sweeps ? "still sweeping" : "no sweep finished", what);
			next = now + CTL_WAIT_WARN_EVERY_NS;
			sweeps = s;
		}
	}
}

/* CTL_PARK: say so, then wait between two sweeps until pmd_pollers_unpark(). */
static void poller_park(struct ctl_msg *m)
{
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&park_go, __ATOMIC_ACQUIRE))
		rte_pause();
}

static void poller_apply(struct pmd_poller *p, struct ctl_msg *m)
{
	unsigned i;

	if (m->type == CTL_PARK) {
		poller_park(m);
		return;
	}
	if (m->type == CTL_CALL) {
		m->fn(m->arg);
	} else if (m->type == CTL_ATTACH) {
		if (p->nvq < PMD_POLLER_MAX_VQ) {
			p->vqs[p->nvq] = m->q;
			PMD_CTR_SET(p->nvq, p->nvq + 1); /* read by pmd_pollers_stats() */
			/* a watchdog post left for an earlier queue's fd of the same number */
			(void)pmd_watch_take_rescue(p->idx, m->q->callfd);
			pmd_vq_notify_start(m->q);
		} else
			PMD_LOG(ERR, "poller %u: more than %u queues; %s queue %u not served",
				p->idx, PMD_POLLER_MAX_VQ, m->q->name, m->q->qid);
	} else {
		for (i = 0; i < p->nvq; i++) {
			if (p->vqs[i] != m->q)
				continue;
			p->vqs[i] = p->vqs[p->nvq - 1];
			PMD_CTR_SET(p->nvq, p->nvq - 1);
			if (!m->drop)
				pmd_vq_flush(m->q, pmd_now_ns(), &p->chain);
			pmd_sleep_forget(&p->sleep, m->q);
			break;
		}
	}
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
}

static void poller_drain_ctl(struct pmd_poller *p)
{
	void *m;

	while (rte_ring_sc_dequeue(p->ctl, &m) == 0)
		poller_apply(p, m);
}

/* Must an adaptive poller stay awake: a control message waiting, or stop? */
static bool poller_ctl_pending(void *arg)
{
	struct pmd_poller *p = arg;

	return !rte_ring_empty(p->ctl) || __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE);
}

/* An empty sweep of an adaptive poller: sleep once idle for the threshold. */
static void poller_idle(struct pmd_poller *p)
{
	const struct pmd_sleep_guard guard = {.pending = poller_ctl_pending, .arg = p};
	uint64_t now = pmd_now_ns();

	if (pmd_sleep_due(&p->sleep, now))
		pmd_sleep_run(&p->sleep, p->vqs, p->nvq, now, &guard);
}

FM_HOT_TEXT static int poller_loop(void *arg)
{
	struct pmd_poller *p = arg;
	uint64_t pass_end = pmd_now_ns();

	__atomic_store_n(&p->tid, pmd_thread_self(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		unsigned work = 0;
		uint64_t now;
		unsigned i;

		if (!rte_ring_empty(p->ctl)) {
			poller_drain_ctl(p);
			pmd_sleep_flush(&p->sleep);
		}
		if (p->nvq > 0 && PMD_AB_COPY_PHASE(p->vqs[0]->target))
			continue;
		/* a fresh clock per queue: due completions of later queues stay on time */
		for (i = 0; i < p->nvq; i++)
			work += pmd_vq_sweep(p->vqs[i], pmd_now_ns(), &p->chain);
		PMD_CTR_INC(p->st.sweeps);
		if (work) {
			PMD_CTR_INC(p->st.busy_sweeps);
			PMD_AB_SERVED(work);
			if (p->adaptive)
				pmd_sleep_busy(&p->sleep);
		} else {
			rte_pause();
		}
		now = pmd_now_ns();
		PMD_CTR_RAISE(p->st.pass_gap_ns_max, now - pass_end);
		pass_end = now;
		if (work == 0 && p->adaptive) {
			poller_idle(p);
			pass_end = pmd_now_ns(); /* a sleep is no wait for service */
		}
	}
	__atomic_store_n(&p->exited, 1, __ATOMIC_RELEASE);
	return 0;
}

static void poller_free(struct pmd_poller *p)
{
	if (p == NULL)
		return;
	pmd_sleep_fini(&p->sleep);
	free(p->ctl);
	free(p);
}

static struct pmd_poller *poller_new(unsigned idx, unsigned lcore, bool is_main)
{
	struct pmd_poller *p = NULL;
	ssize_t sz = rte_ring_get_memsize(CTL_RING_SIZE);
	void *ring = NULL;

	if (sz < 0 || posix_memalign((void **)&p, RTE_CACHE_LINE_SIZE, sizeof(*p)) != 0)
		return NULL;
	memset(p, 0, sizeof(*p));
	if (posix_memalign(&ring, RTE_CACHE_LINE_SIZE, (size_t)sz) != 0) {
		free(p);
		return NULL;
	}
	p->ctl = ring;
	if (rte_ring_init(p->ctl, "pmd_ctl", CTL_RING_SIZE, RING_F_SC_DEQ) != 0) {
		poller_free(p);
		return NULL;
	}
	p->idx = idx;
	p->lcore = lcore;
	p->is_main = is_main;
	p->adaptive = poll_mode == PMD_POLL_ADAPTIVE;
	if (pmd_sleep_init(&p->sleep, poll_idle_ns, PMD_POLLER_MAX_VQ, &p->st) != 0) {
		poller_free(p);
		return NULL;
	}
	return p;
}

int pmd_set_poll_mode(enum pmd_poll_mode mode, uint64_t idle_ns)
{
	if (npollers != 0)
		return -EALREADY;
	if (mode != PMD_POLL_BUSY && mode != PMD_POLL_ADAPTIVE)
		return -EINVAL;
	poll_mode = mode;
	poll_idle_ns = idle_ns;
	return 0;
}

/* The pollers' ns clock from the TSC's measured rate (DPDK's nominal one if that fails). */
static void pmd_clock_start(void)
{
	uint64_t dpdk_hz = rte_get_tsc_hz();
	bool measured;
	uint64_t hz = pmd_clock_tsc_hz(dpdk_hz, &measured);

	pmd_clock_init(hz);
	if (!measured)
		PMD_LOG(WARNING,
			"TSC rate could not be measured (preempted); using DPDK's %" PRIu64 " Hz",
			dpdk_hz);
	else if (dpdk_hz != 0 && (hz > dpdk_hz ? hz - dpdk_hz : dpdk_hz - hz) > dpdk_hz / 1000)
		PMD_LOG(INFO,
			"TSC measured at %" PRIu64 " Hz (DPDK says %" PRIu64 " Hz: %.2f%% off)", hz,
			dpdk_hz, 100.0 * ((double)dpdk_hz - (double)hz) / (double)hz);
}

int pmd_init(const unsigned *lcores, unsigned n, bool main_polls)
{
	unsigned i;

	if (npollers != 0)
		return -EALREADY;
	if (n == 0 || n > PMD_MAX_POLLERS)
		return -EINVAL;
	if (main_polls && n != 1)
		return -EINVAL;
	pmd_clock_start();
	for (i = 0; i < n; i++) {
		pollers[i] = poller_new(i, lcores[i], main_polls);
		if (pollers[i] == NULL) {
			while (i-- > 0)
				poller_free(pollers[i]);
			return -ENOMEM;
		}
	}
	npollers = n;
	return 0;
}

int pmd_poller_node(unsigned idx)
{
	return (int)rte_lcore_to_socket_id(pollers[idx % npollers]->lcore);
}

int pmd_poller_attach(unsigned idx, struct pmd_vq *q)
{
	struct pmd_poller *p = pollers[idx % npollers];
	struct ctl_msg *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	m->type = CTL_ATTACH;
	m->q = q;
	q->poller = p->idx;
	pthread_mutex_lock(&poller_lock);
	if (p->running) {
		while (rte_ring_mp_enqueue(p->ctl, m) != 0)
			rte_pause();
		pthread_mutex_unlock(&poller_lock);
		pmd_sleep_wake(&p->sleep);
		/* the poller sets done; wait so that m can be freed */
		ctl_wait(p, m);
	} else {
		poller_apply(p, m);
		pthread_mutex_unlock(&poller_lock);
	}
	free(m);
	return 0;
}

/* Have p apply m (or apply it here while p is not running); returns once applied. */
static void ctl_apply_sync(struct pmd_poller *p, struct ctl_msg *m)
{
	pthread_mutex_lock(&poller_lock);
	if (!p->running) {
		poller_apply(p, m);
		pthread_mutex_unlock(&poller_lock);
		return;
	}
	while (rte_ring_mp_enqueue(p->ctl, m) != 0)
		rte_pause();
	pthread_mutex_unlock(&poller_lock);
	/*
	 * Always: the poll mode can change at runtime, so whether p may be
	 * asleep is the poller's to know (a spurious wake-up costs one loop).
	 */
	pmd_sleep_wake(&p->sleep);
	ctl_wait(p, m);
}

void pmd_poller_detach(struct pmd_vq *q)
{
	struct ctl_msg m = {.type = CTL_DETACH, .q = q};

	ctl_apply_sync(pollers[q->poller], &m);
}

void pmd_poller_abandon(struct pmd_vq *q)
{
	struct ctl_msg m = {.type = CTL_DETACH, .q = q, .drop = true};

	ctl_apply_sync(pollers[q->poller], &m);
}

void pmd_pollers_park(void)
{
	pthread_mutex_lock(&poller_lock);
	__atomic_store_n(&park_go, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&parking, 1, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < npollers; i++) {
		park_msgs[i] = (struct ctl_msg){.type = CTL_PARK};
		if (!pollers[i]->running) {
			park_msgs[i].done = 1;
			continue;
		}
		while (rte_ring_mp_enqueue(pollers[i]->ctl, &park_msgs[i]) != 0)
			rte_pause();
		pmd_sleep_wake(&pollers[i]->sleep); /* asleep (adaptive) or not: it takes it now */
	}
	for (unsigned i = 0; i < npollers; i++)
		ctl_wait(pollers[i], &park_msgs[i]);
}

void pmd_pollers_unpark(void)
{
	__atomic_store_n(&park_go, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&parking, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&poller_lock);
}

int pmd_pollers_start(void)
{
	unsigned i;
	int rc = 0;

	pthread_mutex_lock(&poller_lock);
	for (i = 0; i < npollers; i++) {
		struct pmd_poller *p = pollers[i];

		if (p->running)
			continue;
		p->stop = 0;
		p->exited = 0;
		p->running = true;
		if (p->is_main)
			continue;
		rc = rte_eal_remote_launch(poller_loop, p, p->lcore);
		if (rc != 0) {
			p->running = false;
			PMD_LOG(ERR, "cannot launch poller on lcore %u: %s", p->lcore,
				strerror(-rc));
			break;
		}
	}
	pthread_mutex_unlock(&poller_lock);
	if (rc == 0)
		pmd_watch_start(); /* without it femud serves, unwatched (it said why) */
	return rc;
}

void pmd_poller_run_main(void)
{
	unsigned i;

	for (i = 0; i < npollers; i++) {
		if (pollers[i]->is_main && pollers[i]->running)
			poller_loop(pollers[i]);
	}
}

/* Has p's loop returned (and, for a worker lcore, is the lcore free again)? */
static bool poller_has_exited(const struct pmd_poller *p)
{
	if (!__atomic_load_n(&p->exited, __ATOMIC_ACQUIRE))
		return false;
	return p->is_main || rte_eal_get_lcore_state(p->lcore) != RUNNING;
}

/* Log what is known of a poller that did not stop within the wait (started at before). */
static void poller_report_stuck(const struct pmd_poller *p, const struct pmd_thread_sample *before,
				uint64_t sweeps_before, uint64_t waited_ns)
{
	pid_t tid = __atomic_load_n(&p->tid, __ATOMIC_ACQUIRE);
	unsigned nvq = __atomic_load_n(&p->nvq, __ATOMIC_RELAXED);
	uint64_t sweeps = PMD_CTR_READ(p->st.sweeps);
	struct pmd_thread_sample now;
	char what[256], queues[512] = "";
	size_t n = 0;

	pmd_thread_sample(tid, &now);
	pmd_thread_describe(tid, before, &now, what, sizeof(what));
	/* its list does not change while it does not take control messages */
	for (unsigned i = 0; i < nvq && i < STOP_LIST_QUEUES && n < sizeof(queues); i++)
		n += (size_t)snprintf(queues + n, sizeof(queues) - n, "%s%s queue %u",
				      i ? ", " : "", p->vqs[i]->name, p->vqs[i]->qid);
	if (nvq > STOP_LIST_QUEUES && n < sizeof(queues))
		snprintf(queues + n, sizeof(queues) - n, ", ... (%u in all)", nvq);
	PMD_LOG(ERR,
		"poller %u (lcore %u) did not stop within %.1f s: %s (sweeps %" PRIu64 ", %" PRIu64
		" in the wait); %s; its queues: %s",
		p->idx, p->lcore, (double)waited_ns / 1e9,
		sweeps != sweeps_before ? "still sweeping" : "no sweep finished", sweeps,
		sweeps - sweeps_before, what, nvq ? queues : "none");
}

unsigned pmd_pollers_stop_within(uint64_t timeout_ns)
{
	struct pmd_thread_sample before[PMD_MAX_POLLERS];
	uint64_t sweeps[PMD_MAX_POLLERS];
	bool wait[PMD_MAX_POLLERS] = {false};
	uint64_t t0 = pmd_now_ns();
	unsigned i, left, stuck = 0;

	/* every poller is asked first: they stop side by side, within one bound */
	pthread_mutex_lock(&poller_lock);
	for (i = 0; i < npollers; i++) {
		struct pmd_poller *p = pollers[i];

		if (!p->running)
			continue;
		wait[i] = true;
		sweeps[i] = PMD_CTR_READ(p->st.sweeps);
		pmd_thread_sample(__atomic_load_n(&p->tid, __ATOMIC_ACQUIRE), &before[i]);
		__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
		pmd_sleep_wake(&p->sleep);
	}
	pthread_mutex_unlock(&poller_lock);
	do {
		left = 0;
		for (i = 0; i < npollers; i++) {
			if (wait[i] && !poller_has_exited(pollers[i]))
				left++;
		}
		if (left == 0 || pmd_now_ns() - t0 >= timeout_ns)
			break;
		usleep(STOP_CHECK_US);
	} while (true);
	for (i = 0; i < npollers; i++) {
		struct pmd_poller *p = pollers[i];

		if (!wait[i])
			continue;
		if (!poller_has_exited(p)) {
			/* still running: it keeps its queues, nobody else may touch them */
			poller_report_stuck(p, &before[i], sweeps[i], pmd_now_ns() - t0);
			stuck++;
			continue;
		}
		if (!p->is_main)
			rte_eal_wait_lcore(p->lcore);
		pthread_mutex_lock(&poller_lock);
		p->running = false;
		poller_drain_ctl(p);
		pthread_mutex_unlock(&poller_lock);
	}
	/* only now: a poller blocked on a call fd during the wait was freed by it */
	if (stuck == 0)
		pmd_watch_stop();
	return stuck;
}

void pmd_pollers_stop(void)
{
	pmd_pollers_stop_within(UINT64_MAX);
}

unsigned pmd_pollers_stats(struct pmd_poller_snap *out, unsigned max)
{
	unsigned i;

	for (i = 0; i < npollers && i < max; i++) {
		const struct pmd_poller *p = pollers[i];

		out[i].idx = i;
		out[i].lcore = p->lcore;
		out[i].nvq = __atomic_load_n(&p->nvq, __ATOMIC_RELAXED);
		out[i].adaptive = __atomic_load_n(&p->adaptive, __ATOMIC_RELAXED);
		out[i].idle_ns = __atomic_load_n(&p->sleep.idle_ns, __ATOMIC_RELAXED);
#define POLLER_SNAP_(field, name, kind) out[i].st.field = PMD_CTR_READ(p->st.field);
		PMD_POLLER_COUNTERS(POLLER_SNAP_)
#undef POLLER_SNAP_
	}
	return i;
}

unsigned pmd_pollers_watch_snap(struct pmd_watch_poller *out, unsigned max)
{
	unsigned i;
	bool parked = __atomic_load_n(&parking, __ATOMIC_ACQUIRE);

	for (i = 0; i < npollers && i < max; i++) {
		const struct pmd_poller *p = pollers[i];

		out[i].idx = i;
		out[i].lcore = p->lcore;
		out[i].tid = __atomic_load_n(&p->tid, __ATOMIC_ACQUIRE);
		out[i].sweeps = PMD_CTR_READ(p->st.sweeps);
		out[i].running = __atomic_load_n(&p->running, __ATOMIC_ACQUIRE) &&
				 !__atomic_load_n(&p->exited, __ATOMIC_ACQUIRE);
		out[i].parked = parked;
		out[i].asleep = PMD_CTR_READ(p->st.sleeping) != 0;
	}
	return i;
}

void pmd_poller_call(unsigned idx, void (*fn)(void *arg), void *arg)
{
	struct ctl_msg m = {.type = CTL_CALL, .fn = fn, .arg = arg};

	ctl_apply_sync(pollers[idx % npollers], &m);
}

/* On poller p: zero its own counters and those of every queue it serves. */
static void poller_stats_zero(void *arg)
{
	struct pmd_poller *p = arg;
	unsigned i;

#define POLLER_ZERO_(field, name, kind) PMD_CTR_SET(p->st.field, 0);
	PMD_POLLER_COUNTERS(POLLER_ZERO_)
#undef POLLER_ZERO_
	for (i = 0; i < p->nvq; i++)
		pmd_vq_stats_zero(&p->vqs[i]->st);
}

void pmd_pollers_stats_reset(void)
{
	unsigned i;

	for (i = 0; i < npollers; i++)
		pmd_poller_call(i, poller_stats_zero, pollers[i]);
}

struct poller_mode {
	struct pmd_poller *p;
	bool adaptive;
	uint64_t idle_ns;
};

/* On the poller (CTL_CALL) or while it does not run: a new poll mode. */
static void poller_mode_apply(void *arg)
{
	struct poller_mode *m = arg;

	__atomic_store_n(&m->p->adaptive, m->adaptive, __ATOMIC_RELAXED);
	__atomic_store_n(&m->p->sleep.idle_ns, m->idle_ns, __ATOMIC_RELAXED);
	pmd_sleep_busy(&m->p->sleep); /* a new idle stretch starts */
}

int pmd_poller_set_mode(unsigned idx, enum pmd_poll_mode mode, uint64_t idle_ns)
{
	struct poller_mode pm;
	struct ctl_msg m = {.type = CTL_CALL, .fn = poller_mode_apply, .arg = &pm};

	if (idx >= npollers || (mode != PMD_POLL_BUSY && mode != PMD_POLL_ADAPTIVE))
		return -EINVAL;
	pm = (struct poller_mode){pollers[idx], mode == PMD_POLL_ADAPTIVE, idle_ns};
	ctl_apply_sync(pollers[idx], &m);
	return 0;
}
