/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_poller_watch.c - the pollers' watchdog's look at one poller
 * (pmd/poller_watch.h), with threads of the test standing in for pollers:
 * one blocked writing a full blocking eventfd is freed and its fd posted,
 * one blocked elsewhere is warned about (not when parked) and never
 * touched, one asleep (its gauge, or in io_uring_enter) is left alone,
 * one that sweeps is never sampled.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pmd/poller_watch.h"

struct blocked {
	int fd;
	pid_t tid;
	ssize_t rc;
};

/* Stand-in for a poller blocked in its call write: write 1 into b->fd. */
static void *call_writer(void *arg)
{
	struct blocked *b = arg;
	const uint64_t one = 1;

	__atomic_store_n(&b->tid, gettid(), __ATOMIC_RELEASE);
	b->rc = write(b->fd, &one, sizeof(one));
	return NULL;
}

/* Stand-in for a poller stuck elsewhere: read a pipe nobody writes yet. */
static void *pipe_reader(void *arg)
{
	struct blocked *b = arg;
	char c;

	__atomic_store_n(&b->tid, gettid(), __ATOMIC_RELEASE);
	b->rc = read(b->fd, &c, 1);
	return NULL;
}

static struct io_uring ring;

/* Stand-in for an adaptive poller asleep: wait for a completion that comes late. */
static void *uring_sleeper(void *arg)
{
	struct blocked *b = arg;
	struct io_uring_cqe *cqe;

	__atomic_store_n(&b->tid, gettid(), __ATOMIC_RELEASE);
	b->rc = io_uring_wait_cqe(&ring, &cqe);
	return NULL;
}

/* Start fn(b) and wait until its thread sleeps in syscall nr. */
static pthread_t start_blocked(void *(*fn)(void *), struct blocked *b, long nr)
{
	struct pmd_thread_sample s;
	pthread_t t;
	pid_t tid;

	b->tid = 0;
	cr_assert_eq(pthread_create(&t, NULL, fn, b), 0);
	while ((tid = __atomic_load_n(&b->tid, __ATOMIC_ACQUIRE)) == 0)
		usleep(1000);
	for (int i = 0; i < 5000; i++) {
		pmd_thread_sample(tid, &s);
		if (s.ok && s.state == 'S' && s.syscall == nr)
			return t;
		usleep(1000);
	}
	cr_assert_fail("thread %d never slept in syscall %ld (last %ld)", (int)tid, nr, s.syscall);
	return t;
}

static struct pmd_watch_poller poller_of(unsigned idx, pid_t tid, uint64_t sweeps)
{
	return (struct pmd_watch_poller){
	    .idx = idx, .lcore = idx + 1, .tid = tid, .sweeps = sweeps, .running = true};
}

/* A thread blocked reading a pipe: sampled, it is a stall (not a call write). */
struct reader {
	struct blocked b;
	int pfd[2];
	pthread_t t;
};

static void reader_start(struct reader *r)
{
	cr_assert_eq(pipe(r->pfd), 0);
	r->b.fd = r->pfd[0];
	r->t = start_blocked(pipe_reader, &r->b, SYS_read);
}

/* Let it read its byte: it was blocked in that read until now. */
static void reader_end(struct reader *r)
{
	cr_assert_eq(write(r->pfd[1], "x", 1), 1);
	cr_assert_eq(pthread_join(r->t, NULL), 0);
	cr_assert_eq(r->b.rc, 1);
	close(r->pfd[0]);
	close(r->pfd[1]);
}

Test(poller_watch, a_poller_blocked_writing_a_full_eventfd_is_freed_and_the_fd_posted)
{
	const uint64_t max = 0xfffffffffffffffeull;
	struct pmd_watch_state w = {0};
	struct blocked b = {.fd = eventfd(0, EFD_CLOEXEC)};
	struct pmd_watch_poller p;
	pthread_t t;

	cr_assert_geq(b.fd, 0);
	cr_assert_eq(write(b.fd, &max, sizeof(max)), sizeof(max));
	t = start_blocked(call_writer, &b, SYS_write);
	p = poller_of(3, b.tid, 42);
	cr_assert_eq(pmd_watch_look(&w, &p, 1000), PMD_WATCH_OK);
	/* not yet stalled long enough to be sampled */
	cr_assert_eq(pmd_watch_look(&w, &p, 1000 + PMD_WATCH_STALL_NS - 1), PMD_WATCH_OK);
	cr_assert(!pmd_watch_take_rescue(3, b.fd));
	cr_assert_eq(pmd_watch_look(&w, &p, 1000 + PMD_WATCH_STALL_NS), PMD_WATCH_RESCUED);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(b.rc, (ssize_t)sizeof(uint64_t), "the blocked write returned %zd", b.rc);
	cr_assert(fcntl(b.fd, F_GETFL) & O_NONBLOCK, "the fd is non-blocking again");
	/* posted for poller 3 and that fd only, taken once */
	cr_assert(!pmd_watch_take_rescue(2, b.fd));
	cr_assert(!pmd_watch_take_rescue(3, b.fd + 1));
	cr_assert(pmd_watch_take_rescue(3, b.fd));
	cr_assert(!pmd_watch_take_rescue(3, b.fd));
	close(b.fd);
}

Test(poller_watch, a_poller_blocked_elsewhere_is_warned_about_and_left_alone)
{
	struct pmd_watch_state w = {0};
	struct reader r;
	struct pmd_watch_poller p;
	const uint64_t t0 = 5000;

	reader_start(&r);
	p = poller_of(1, r.b.tid, 7);
	cr_assert_eq(pmd_watch_look(&w, &p, t0), PMD_WATCH_OK);
	cr_assert_eq(pmd_watch_look(&w, &p, t0 + PMD_WATCH_STALL_NS), PMD_WATCH_STALLED);
	cr_assert_eq(pmd_watch_look(&w, &p, t0 + PMD_WATCH_WARN_NS - 1), PMD_WATCH_STALLED);
	/* parked on purpose: no warning */
	p.parked = true;
	cr_assert_eq(pmd_watch_look(&w, &p, t0 + PMD_WATCH_WARN_NS), PMD_WATCH_STALLED);
	p.parked = false;
	cr_assert_eq(pmd_watch_look(&w, &p, t0 + PMD_WATCH_WARN_NS), PMD_WATCH_WARNED);
	/* then once every PMD_WATCH_WARN_EVERY_NS */
	cr_assert_eq(pmd_watch_look(&w, &p, t0 + PMD_WATCH_WARN_NS + 1), PMD_WATCH_STALLED);
	cr_assert_eq(pmd_watch_look(&w, &p, t0 + PMD_WATCH_WARN_NS + PMD_WATCH_WARN_EVERY_NS - 1),
		     PMD_WATCH_STALLED);
	cr_assert_eq(pmd_watch_look(&w, &p, t0 + PMD_WATCH_WARN_NS + PMD_WATCH_WARN_EVERY_NS),
		     PMD_WATCH_WARNED);
	/* the reader was not touched: still blocked, nothing posted */
	cr_assert(!pmd_watch_take_rescue(1, r.pfd[0]));
	reader_end(&r);
	/* it sweeps again: a new period, not sampled until it stalls again */
	p.sweeps++;
	cr_assert_eq(pmd_watch_look(&w, &p, t0 + 20 * PMD_WATCH_WARN_EVERY_NS), PMD_WATCH_OK);
}

Test(poller_watch, a_poller_asleep_in_io_uring_is_not_stalled)
{
	struct pmd_watch_state w = {0};
	struct blocked b = {.fd = -1};
	struct pmd_watch_poller p;
	struct io_uring_sqe *sqe;
	pthread_t t;

	cr_assert_eq(io_uring_queue_init(4, &ring, 0), 0);
	t = start_blocked(uring_sleeper, &b, SYS_io_uring_enter);
	p = poller_of(0, b.tid, 1);
	cr_assert_eq(pmd_watch_look(&w, &p, 10), PMD_WATCH_OK);
	cr_assert_eq(pmd_watch_look(&w, &p, 10 + PMD_WATCH_STALL_NS), PMD_WATCH_ASLEEP);
	/* a sleep starts a new period: no warning at the warning's time */
	cr_assert_eq(pmd_watch_look(&w, &p, 10 + PMD_WATCH_WARN_NS), PMD_WATCH_ASLEEP);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_nop(sqe);
	cr_assert_eq(io_uring_submit(&ring), 1);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(b.rc, 0);
	io_uring_queue_exit(&ring);
}

Test(poller_watch, a_poller_that_says_it_sleeps_is_not_sampled)
{
	struct pmd_watch_state w = {0};
	struct reader r;
	struct pmd_watch_poller p;

	reader_start(&r);
	p = poller_of(2, r.b.tid, 9);
	p.asleep = true;
	cr_assert_eq(pmd_watch_look(&w, &p, 1), PMD_WATCH_OK);
	cr_assert_eq(pmd_watch_look(&w, &p, 1 + PMD_WATCH_STALL_NS), PMD_WATCH_ASLEEP);
	cr_assert_eq(pmd_watch_look(&w, &p, 1 + PMD_WATCH_WARN_NS), PMD_WATCH_ASLEEP);
	/* awake without a sweep since: a stall counted from the last sleep */
	p.asleep = false;
	cr_assert_eq(pmd_watch_look(&w, &p, 1 + PMD_WATCH_WARN_NS + PMD_WATCH_STALL_NS),
		     PMD_WATCH_STALLED);
	reader_end(&r);
}

Test(poller_watch, a_sweeping_or_stopped_poller_is_not_stalled)
{
	struct pmd_watch_state w = {0};
	struct reader r;
	struct pmd_watch_poller p;
	uint64_t now = 0;

	reader_start(&r);
	p = poller_of(0, r.b.tid, 1);
	for (int i = 0; i < 10; i++) {
		now += PMD_WATCH_WARN_EVERY_NS;
		p.sweeps++;
		cr_assert_eq(pmd_watch_look(&w, &p, now), PMD_WATCH_OK);
	}
	p.running = false;
	cr_assert_eq(pmd_watch_look(&w, &p, now + PMD_WATCH_WARN_EVERY_NS), PMD_WATCH_OK);
	cr_assert_eq(pmd_watch_look(&w, &p, now + 2 * PMD_WATCH_WARN_EVERY_NS), PMD_WATCH_OK);
	/* running again with the same count: a stall from here on */
	now += 2 * PMD_WATCH_WARN_EVERY_NS; /* the last look, stopped */
	p.running = true;
	cr_assert_eq(pmd_watch_look(&w, &p, now + PMD_WATCH_STALL_NS - 1), PMD_WATCH_OK);
	cr_assert_eq(pmd_watch_look(&w, &p, now + PMD_WATCH_WARN_NS), PMD_WATCH_WARNED);
	reader_end(&r);
}
