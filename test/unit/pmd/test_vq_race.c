/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_vq_race.c - the lost call on this machine's own memory order: a
 * driver thread racing a real poller thread over a split ring, re-enabling
 * calls with and without the barrier virtio asks of it (vq_impl.h).  Runs
 * alone (meson is_parallel false, one criterion job): the race needs both
 * threads on CPUs at once.
 */
#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "fake_guest.h"
#include "pmd/vq.h"

#define QSZ 16
/* used_event: the driver's event, after the avail ring (virtio 1.1, 2.6.7) */
#define USED_EVENT (*(volatile uint16_t *)&e.r.avail->ring[QSZ])

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

TestSuite(vq_race, .init = setup, .fini = teardown);

static void make_q(bool event_idx, int callfd)
{
	q = fg_env_vq(&e, QSZ, event_idx, callfd, -1);
	cr_assert_not_null(q);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static volatile bool race_stop;

/* The poller: sweeps with the real clock until told to stop. */
static void *race_poller(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&race_stop, __ATOMIC_ACQUIRE))
		pmd_vq_sweep(q, mono_ns(), &scratch);
	return NULL;
}

struct race_result {
	unsigned waits; /* waits for a call */
	unsigned lost;	/* of those, no call within 2 s while the awaited entry was published */
};

/* Wait for the call: up to 20 ms, then (the entry published) up to 2 s more. */
static bool race_wait(uint16_t last)
{
	struct pollfd p = {.fd = efd, .events = POLLIN};
	uint64_t v;

	if (poll(&p, 1, 20) != 1 &&
	    (__atomic_load_n(&e.r.used->idx, __ATOMIC_ACQUIRE) == last || poll(&p, 1, 2000) != 1))
		return __atomic_load_n(&e.r.used->idx, __ATOMIC_ACQUIRE) == last;
	cr_assert_eq(read(efd, &v, sizeof(v)), (ssize_t)sizeof(v));
	return true;
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
	uint64_t end = mono_ns() + run_ns;

	for (unsigned i = 0; i < 4; i++)
		fg_env_post_read(&e, QSZ, i, i, 512);
	while (done < max_reads && mono_ns() < end && r.lost == 0 &&
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
		if (!race_wait(last))
			r.lost++;
	}
	return r;
}

static struct race_result race_run(bool fence, unsigned min_reads, unsigned max_reads,
				   uint64_t enough_late, uint64_t run_ns)
{
	struct race_result r;
	pthread_t th;

	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	race_stop = false;
	cr_assert_eq(pthread_create(&th, NULL, race_poller, NULL), 0);
	r = race_drive(fence, min_reads, max_reads, enough_late, run_ns);
	__atomic_store_n(&race_stop, true, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
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
