/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_thread_diag.c - sampling a thread of this process (pmd/thread_diag.h):
 * a thread blocked in read() shows state S, the read syscall and its fd, a spinning
 * one state R and the CPU time it used between two samples, a thread that
 * is gone is said to be.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pmd/thread_diag.h"

static int pipefd[2];
static pid_t reader_tid;

static void *reader(void *arg)
{
	char c;

	(void)arg;
	__atomic_store_n(&reader_tid, pmd_thread_self(), __ATOMIC_RELEASE);
	return read(pipefd[0], &c, 1) == 1 ? NULL : (void *)1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

Test(thread_diag, a_thread_blocked_in_read_is_sleeping_in_that_syscall)
{
	struct pmd_thread_sample s;
	pthread_t t;
	char line[256];
	pid_t tid;

	cr_assert_eq(pipe(pipefd), 0);
	cr_assert_eq(pthread_create(&t, NULL, reader, NULL), 0);
	while ((tid = __atomic_load_n(&reader_tid, __ATOMIC_ACQUIRE)) == 0)
		usleep(1000);
	/* until it sleeps in the read */
	for (int i = 0; i < 2000; i++) {
		pmd_thread_sample(tid, &s);
		if (s.ok && s.state == 'S' && s.syscall == SYS_read)
			break;
		usleep(1000);
	}
	cr_assert(s.ok);
	cr_assert_eq(s.state, 'S');
	cr_assert_eq(s.syscall, SYS_read, "syscall %ld", s.syscall);
	cr_assert_eq(s.arg0, (uint64_t)pipefd[0], "its fd: %llu", (unsigned long long)s.arg0);
	pmd_thread_describe(tid, NULL, &s, line, sizeof(line));
	cr_assert_not_null(strstr(line, "state S, in syscall 0 (wchan "), "%s", line);
	cr_assert_eq(write(pipefd[1], "x", 1), 1);
	cr_assert_eq(pthread_join(t, NULL), 0);
	/* gone */
	pmd_thread_sample(tid, &s);
	cr_assert_not(s.ok);
	pmd_thread_describe(tid, NULL, &s, line, sizeof(line));
	cr_assert_not_null(strstr(line, "not found"), "%s", line);
}

Test(thread_diag, a_spinning_thread_runs_and_its_cpu_time_shows_between_two_samples)
{
	struct pmd_thread_sample a, b;
	pid_t tid = pmd_thread_self();
	char line[256];
	uint64_t t0;

	cr_assert_eq(tid, (pid_t)syscall(SYS_gettid));
	pmd_thread_sample(tid, &a);
	t0 = now_ns();
	while (now_ns() - t0 < 50000000ull)
		;
	pmd_thread_sample(tid, &b);
	cr_assert(a.ok && b.ok);
	cr_assert_eq(b.state, 'R');
	cr_assert_neq(b.syscall, -2, "syscall unknown"); /* itself: the read of /proc */
	if (!b.has_sched)
		cr_skip_test("no schedstat in this kernel");
	/* on a loaded machine part of the 50 ms may be run-queue wait */
	cr_assert_geq(b.run_ns - a.run_ns + b.wait_ns - a.wait_ns, 40000000ull);
	pmd_thread_describe(tid, &a, &b, line, sizeof(line));
	cr_assert_not_null(strstr(line, "state R, "), "%s", line);
	cr_assert_not_null(strstr(line, ", in the last 0."), "%s", line);
	cr_assert_not_null(strstr(line, "for a CPU"), "%s", line);
}
