/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ctl_watch.c - the watchdog of rte_vhost's message thread
 * (pmd/ctl_watch.h), a thread of the test standing in for it: a hook that
 * blocks is warned about after PMD_CTL_WATCH_WARN_NS with what it is, again
 * after PMD_CTL_WATCH_WARN_EVERY_NS, its return is reported once; a hook
 * that returns in time, and no hook, are never warned about.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "pmd/ctl_watch.h"

static int pfd[2];
static volatile int entered;

/* Stand-in for rte_vhost's thread in a hook that blocks until the pipe has a byte. */
static void *stuck_hook(void *arg)
{
	char c;

	(void)arg;
	pmd_ctl_watch_enter("pre_msg hook", "/run/vm1.sock", 3, 5);
	__atomic_store_n(&entered, 1, __ATOMIC_RELEASE);
	cr_assert_eq(read(pfd[0], &c, 1), 1);
	pmd_ctl_watch_leave();
	return NULL;
}

Test(ctl_watch, a_stuck_hook_is_warned_about_and_its_return_reported)
{
	struct pmd_ctl_watch_state w;
	uint64_t t0;
	pthread_t t;

	memset(&w, 0, sizeof(w));
	cr_assert_eq(pmd_ctl_watch_look(&w, pmd_ctl_watch_now()), PMD_CTL_WATCH_IDLE);
	cr_assert_eq(pipe(pfd), 0);
	cr_assert_eq(pthread_create(&t, NULL, stuck_hook, NULL), 0);
	while (!__atomic_load_n(&entered, __ATOMIC_ACQUIRE))
		usleep(1000);
	t0 = pmd_ctl_watch_now();
	cr_assert_eq(pmd_ctl_watch_look(&w, t0), PMD_CTL_WATCH_RUNNING);
	cr_assert_eq(pmd_ctl_watch_look(&w, t0 + PMD_CTL_WATCH_WARN_NS / 2), PMD_CTL_WATCH_RUNNING);
	cr_assert_eq(pmd_ctl_watch_look(&w, t0 + PMD_CTL_WATCH_WARN_NS), PMD_CTL_WATCH_WARNED);
	cr_assert_str_eq(w.what,
			 "pre_msg hook (/run/vm1.sock, connection 3, vhost-user request 5)");
	cr_assert_eq(w.first.ok, true, "the thread was sampled");
	/* once per PMD_CTL_WATCH_WARN_EVERY_NS while it lasts */
	cr_assert_eq(pmd_ctl_watch_look(&w, t0 + 2 * PMD_CTL_WATCH_WARN_NS), PMD_CTL_WATCH_RUNNING);
	cr_assert_eq(
	    pmd_ctl_watch_look(&w, t0 + PMD_CTL_WATCH_WARN_NS + PMD_CTL_WATCH_WARN_EVERY_NS),
	    PMD_CTL_WATCH_WARNED);
	cr_assert_eq(write(pfd[1], "x", 1), 1);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_eq(pmd_ctl_watch_look(&w, pmd_ctl_watch_now()), PMD_CTL_WATCH_RETURNED);
	cr_assert_eq(pmd_ctl_watch_look(&w, pmd_ctl_watch_now()), PMD_CTL_WATCH_IDLE);
	close(pfd[0]);
	close(pfd[1]);
}

Test(ctl_watch, hooks_that_return_in_time_are_never_warned_about)
{
	struct pmd_ctl_watch_state w;
	uint64_t t0 = pmd_ctl_watch_now();

	memset(&w, 0, sizeof(w));
	for (int i = 0; i < 100; i++) {
		pmd_ctl_watch_enter("vring_state_changed", "/run/vm1.sock", i, 0);
		cr_assert_eq(pmd_ctl_watch_look(&w, t0), PMD_CTL_WATCH_RUNNING);
		pmd_ctl_watch_leave();
		cr_assert_eq(pmd_ctl_watch_look(&w, t0 + 100 * PMD_CTL_WATCH_WARN_NS),
			     PMD_CTL_WATCH_IDLE);
	}
	/* a new hook call is timed from its own start, not the previous one's */
	pmd_ctl_watch_enter("post_msg hook", "/run/vm1.sock", 1, 2);
	cr_assert_eq(pmd_ctl_watch_look(&w, pmd_ctl_watch_now()), PMD_CTL_WATCH_RUNNING);
	cr_assert_str_eq(w.what,
			 "post_msg hook (/run/vm1.sock, connection 1, vhost-user request 2)");
	pmd_ctl_watch_leave();
}
