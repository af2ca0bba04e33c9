/* SPDX-License-Identifier: GPL-2.0-or-later */
/* race_harness.c - the race suites' poller thread and wait (see race_harness.h). */
#include <criterion/criterion.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "race_harness.h"

static struct {
	struct pmd_vq *q;
	struct pmd_chain *scratch;
	pthread_t th;
	bool stop;
} rp;

static void *race_poller(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&rp.stop, __ATOMIC_ACQUIRE))
		pmd_vq_sweep(rp.q, fg_now_ns(), rp.scratch);
	return NULL;
}

void race_poller_start(struct pmd_vq *q, struct pmd_chain *scratch)
{
	rp.q = q;
	rp.scratch = scratch;
	rp.stop = false;
	cr_assert_eq(pthread_create(&rp.th, NULL, race_poller, NULL), 0);
}

void race_poller_stop(void)
{
	__atomic_store_n(&rp.stop, true, __ATOMIC_RELEASE);
	pthread_join(rp.th, NULL);
}

bool race_wait_call(int efd, bool (*published)(void *arg), void *arg)
{
	struct pollfd p = {.fd = efd, .events = POLLIN};
	uint64_t v;

	if (poll(&p, 1, 20) != 1) {
		/* one look decides: a poller descheduled that long may publish any time now */
		if (!published(arg))
			return true; /* nothing to call for yet: the driver looks again */
		if (poll(&p, 1, 2000) != 1)
			return false;
	}
	cr_assert_eq(read(efd, &v, sizeof(v)), (ssize_t)sizeof(v));
	return true;
}
