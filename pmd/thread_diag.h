/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thread_diag.h - what the kernel says about one of femud's own threads
 * (a poller that does not answer): its scheduler state, the syscall it is
 * blocked in, and from schedstat how long it ran and how long it waited
 * on a run queue.  Two samples tell a thread the kernel did not run
 * (state R, run-queue wait growing) from one blocked in the kernel (state
 * S or D, a syscall) or looping in femud (state R, CPU time growing).
 * Control paths only (it reads /proc); nothing here is on the I/O path.
 */
#ifndef PMD_THREAD_DIAG_H
#define PMD_THREAD_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pmd_thread_sample {
	bool ok;	  /* /proc/self/task/TID/stat was read */
	char state;	  /* R running or runnable, S sleeping, D uninterruptible, T stopped, ... */
	bool has_sched;	  /* schedstat was read (needs CONFIG_SCHED_INFO) */
	uint64_t run_ns;  /* time on a CPU, ns */
	uint64_t wait_ns; /* time runnable but waiting on a run queue, ns */
	long syscall;	  /* syscall number it is blocked in; -1: none (user space); -2: unknown */
	uint64_t arg0;	  /* that syscall's first argument (a write's fd); 0 when syscall < 0 */
	char wchan[48];	  /* kernel function it sleeps in ("0": none); "" unknown */
	uint64_t at_ns;	  /* CLOCK_MONOTONIC when sampled, ns */
};

/* The calling thread's kernel id (gettid). */
pid_t pmd_thread_self(void);

/* Sample thread tid of this process; s->ok false when it does not exist (any more). */
void pmd_thread_sample(pid_t tid, struct pmd_thread_sample *s);

/*
 * One line about tid from two samples (before: earlier, may be NULL or not
 * ok): "thread 1234 state R, user space, in the last 10.0 s ran 2.1 ms and
 * waited 9990.3 ms for a CPU".  Returns buf.
 */
const char *pmd_thread_describe(pid_t tid, const struct pmd_thread_sample *before,
				const struct pmd_thread_sample *now, char *buf, size_t len);

#endif /* PMD_THREAD_DIAG_H */
