/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * poller_sleep.c - adaptive polling: re-arm, re-check, sleep in io_uring,
 * suppress again (see poller_sleep.h).
 *
 * io_uring user_data: the low two bits say what a completion is (a kick
 * poll, the control poll, a poll removal); a kick poll carries a tag above
 * them, stored in its queue (kick_tag), so that it can be removed when the
 * queue is detached and re-armed when the kernel ends it (a multishot
 * completion without IORING_CQE_F_MORE).  Polls watch readiness and never
 * read the kick eventfds: the control code still drains them to count kicks.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <rte_log.h>

#include "pmd/pmd_clock.h"
#include "pmd/pmd_log.h"
#include "pmd/poller_sleep.h"

#define SLEEP_SQ_ENTRIES 64
#define SLEEP_CQ_ENTRIES 1024

enum ud_type { UD_KICK = 0, UD_CTL = 1, UD_REMOVE = 2 };

#define UD_TYPE(ud) ((unsigned)((ud)&3u))
#define UD_TAG(ud) ((ud) >> 2)

/* Causes seen among the completions of one wake-up. */
#define SEEN_KICK 1u
#define SEEN_CTL 2u

int pmd_sleep_init(struct pmd_sleep *s, uint64_t idle_ns, unsigned max_queues,
		   struct pmd_poller_stats *st)
{
	memset(s, 0, sizeof(*s));
	s->st = st;
	s->idle_ns = idle_ns;
	s->next_tag = 1;
	s->max_cancel = max_queues;
	s->cancel = calloc(max_queues, sizeof(*s->cancel));
	s->ctl_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->cancel == NULL || s->ctl_fd < 0) {
		int rc = s->cancel == NULL ? -ENOMEM : -errno;

		pmd_sleep_fini(s);
		return rc;
	}
	return 0;
}

void pmd_sleep_fini(struct pmd_sleep *s)
{
	if (s->ready)
		io_uring_queue_exit(&s->ring);
	s->ready = false;
	if (s->ctl_fd >= 0)
		close(s->ctl_fd);
	s->ctl_fd = -1;
	free(s->cancel);
	s->cancel = NULL;
}

void pmd_sleep_wake(struct pmd_sleep *s)
{
	static const uint64_t one = 1;

	if (s->ctl_fd >= 0 && write(s->ctl_fd, &one, sizeof(one)) != sizeof(one))
		PMD_LOG(DEBUG, "poller wake-up: eventfd write failed");
}

void pmd_sleep_forget(struct pmd_sleep *s, struct pmd_vq *q)
{
	if (q->kick_tag == 0)
		return;
	if (s->ncancel < s->max_cancel)
		s->cancel[s->ncancel++] = q->kick_tag;
	q->kick_tag = 0;
}

/*
 * Set up the ring on the poller's thread: a single issuer whose task work
 * waits for its next io_uring_enter, so kicks that arrive while it polls
 * cost it nothing.  Older kernels get the plainer set-ups.
 */
static bool sleep_ring_setup(struct pmd_sleep *s)
{
	static const unsigned flags[] = {
	    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
	    IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
	    0,
	};
	int rc = -EINVAL;

	for (unsigned i = 0; i < RTE_DIM(flags); i++) {
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		p.flags = flags[i] | IORING_SETUP_CQSIZE;
		p.cq_entries = SLEEP_CQ_ENTRIES;
		rc = io_uring_queue_init_params(SLEEP_SQ_ENTRIES, &s->ring, &p);
		if (rc == 0)
			break;
	}
	if (rc != 0) {
		PMD_LOG(WARNING,
			"adaptive polling: io_uring unavailable (%s); this poller stays busy",
			strerror(-rc));
		s->failed = true;
		return false;
	}
	/* wake-ups for due completions as exact as the timer allows */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	s->ready = true;
	return true;
}

static struct io_uring_sqe *sleep_sqe(struct pmd_sleep *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);

	if (sqe == NULL) {
		io_uring_submit(&s->ring);
		sqe = io_uring_get_sqe(&s->ring);
	}
	return sqe;
}

/* Queue the removal of the kick polls of detached queues (no submit). */
static void sleep_prep_removals(struct pmd_sleep *s)
{
	while (s->ncancel > 0) {
		struct io_uring_sqe *sqe = sleep_sqe(s);

		if (sqe == NULL)
			return;
		io_uring_prep_poll_remove(sqe, (s->cancel[--s->ncancel] << 2) | UD_KICK);
		io_uring_sqe_set_data64(sqe, UD_REMOVE);
	}
}

void pmd_sleep_flush(struct pmd_sleep *s)
{
	if (!s->ready || s->ncancel == 0)
		return;
	sleep_prep_removals(s);
	io_uring_submit(&s->ring);
}

/* Multishot polls on the control eventfd and on new kick fds (no submit). */
static void sleep_prep_polls(struct pmd_sleep *s, struct pmd_vq *const *vqs, unsigned nvq)
{
	struct io_uring_sqe *sqe;

	if (!s->ctl_armed && (sqe = sleep_sqe(s)) != NULL) {
		io_uring_prep_poll_multishot(sqe, s->ctl_fd, POLLIN);
		io_uring_sqe_set_data64(sqe, UD_CTL);
		s->ctl_armed = true;
	}
	for (unsigned i = 0; i < nvq; i++) {
		struct pmd_vq *q = vqs[i];

		if (q->kickfd < 0 || q->kick_tag != 0 || (sqe = sleep_sqe(s)) == NULL)
			continue;
		q->kick_tag = s->next_tag++;
		io_uring_prep_poll_multishot(sqe, q->kickfd, POLLIN);
		io_uring_sqe_set_data64(sqe, (q->kick_tag << 2) | UD_KICK);
	}
}

/* A kick poll the kernel ended: arm it again before the next sleep. */
static void sleep_kick_ended(struct pmd_vq *const *vqs, unsigned nvq, uint64_t tag)
{
	for (unsigned i = 0; i < nvq; i++) {
		if (vqs[i]->kick_tag == tag) {
			vqs[i]->kick_tag = 0;
			return;
		}
	}
}

static unsigned sleep_cqe(struct pmd_sleep *s, struct pmd_vq *const *vqs, unsigned nvq,
			  const struct io_uring_cqe *cqe)
{
	uint64_t ud = io_uring_cqe_get_data64(cqe);
	bool ended = !(cqe->flags & IORING_CQE_F_MORE);
	uint64_t n;

	switch (UD_TYPE(ud)) {
	case UD_KICK:
		if (ended && cqe->res != -ECANCELED)
			sleep_kick_ended(vqs, nvq, UD_TAG(ud));
		return cqe->res > 0 ? SEEN_KICK : 0;
	case UD_CTL:
		if (ended)
			s->ctl_armed = false;
		if (read(s->ctl_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
			PMD_LOG(DEBUG, "poller wake-up: eventfd read failed");
		return SEEN_CTL;
	default:
		return 0;
	}
}

/* Consume every completion there is; returns the causes seen. */
static unsigned sleep_reap(struct pmd_sleep *s, struct pmd_vq *const *vqs, unsigned nvq)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0, seen = 0;

	if (IO_URING_READ_ONCE(*s->ring.sq.kflags) & (IORING_SQ_TASKRUN | IORING_SQ_CQ_OVERFLOW))
		io_uring_get_events(&s->ring);
	io_uring_for_each_cqe(&s->ring, head, cqe)
	{
		seen |= sleep_cqe(s, vqs, nvq, cqe);
		n++;
	}
	io_uring_cq_advance(&s->ring, n);
	return seen;
}

/* Can every queue let the poller sleep? */
static bool sleep_allowed(struct pmd_vq *const *vqs, unsigned nvq)
{
	for (unsigned i = 0; i < nvq; i++) {
		if (!pmd_vq_may_sleep(vqs[i]))
			return false;
	}
	return true;
}

/* Re-arm every queue; true when one already has requests waiting. */
static bool sleep_arm_all(struct pmd_vq *const *vqs, unsigned nvq)
{
	bool waiting = false;

	for (unsigned i = 0; i < nvq; i++)
		waiting |= pmd_vq_notify_arm(vqs[i]);
	return waiting;
}

static void sleep_suppress_all(struct pmd_vq *const *vqs, unsigned nvq)
{
	for (unsigned i = 0; i < nvq; i++)
		pmd_vq_notify_suppress(vqs[i]);
}

static uint64_t sleep_next_due(struct pmd_vq *const *vqs, unsigned nvq)
{
	uint64_t due = UINT64_MAX;

	for (unsigned i = 0; i < nvq; i++) {
		uint64_t d = pmd_vq_next_due(vqs[i]);

		if (d < due)
			due = d;
	}
	return due;
}

/* One io_uring wait (submitting what was prepared): its result. */
static int sleep_wait_once(struct pmd_sleep *s, uint64_t timeout_ns)
{
	struct __kernel_timespec ts = {.tv_sec = (long long)(timeout_ns / 1000000000u),
				       .tv_nsec = (long long)(timeout_ns % 1000000000u)};
	struct io_uring_cqe *cqe = NULL;

	return io_uring_submit_and_wait_timeout(&s->ring, &cqe, 1,
						timeout_ns == UINT64_MAX ? NULL : &ts, NULL);
}

/*
 * Wait in io_uring, looking at the avail rings once PMD_SLEEP_RECHECK_NS in
 * (poller_sleep.h), and count the wake-up.
 */
static void sleep_wait(struct pmd_sleep *s, struct pmd_vq *const *vqs, unsigned nvq,
		       uint64_t timeout_ns)
{
	uint64_t t0 = pmd_now_ns();
	bool recheck = timeout_ns > PMD_SLEEP_RECHECK_NS, found = false;
	unsigned seen;
	int rc;

	PMD_CTR_SET(s->st->sleeping, 1);
	rc = sleep_wait_once(s, recheck ? PMD_SLEEP_RECHECK_NS : timeout_ns);
	/* nothing came (the result is what it submitted, or -ETIME) */
	if (recheck && (rc >= 0 || rc == -ETIME) && io_uring_cq_ready(&s->ring) == 0) {
		found = sleep_arm_all(vqs, nvq);
		if (!found)
			rc = sleep_wait_once(s, timeout_ns == UINT64_MAX
						    ? UINT64_MAX
						    : timeout_ns - PMD_SLEEP_RECHECK_NS);
	}
	PMD_CTR_SET(s->st->sleeping, 0);
	if (rc < 0 && rc != -ETIME && rc != -EINTR) {
		PMD_LOG(ERR, "adaptive polling: io_uring wait failed (%s); this poller stays busy",
			strerror(-rc));
		s->failed = true;
	}
	seen = sleep_reap(s, vqs, nvq);
	PMD_CTR_INC(s->st->sleeps);
	if (seen & SEEN_KICK)
		PMD_CTR_INC(s->st->wake_kick);
	else if ((seen & SEEN_CTL) || rc == -EINTR)
		PMD_CTR_INC(s->st->wake_ctl);
	else if (found)
		PMD_CTR_INC(s->st->wake_recheck);
	else
		PMD_CTR_INC(s->st->wake_timer);
	PMD_CTR_ADD(s->st->asleep_ns, pmd_now_ns() - t0);
}

/* ns to sleep at most: until a pending completion is nearly due, or for good. */
static uint64_t sleep_timeout(uint64_t due)
{
	uint64_t now = pmd_now_ns();

	if (due == UINT64_MAX)
		return UINT64_MAX;
	return due - PMD_SLEEP_EARLY_NS > now ? due - PMD_SLEEP_EARLY_NS - now : 1;
}

void pmd_sleep_run(struct pmd_sleep *s, struct pmd_vq *const *vqs, unsigned nvq, uint64_t now,
		   const struct pmd_sleep_guard *guard)
{
	uint64_t due = sleep_next_due(vqs, nvq);

	if (s->failed || !sleep_allowed(vqs, nvq) ||
	    (due != UINT64_MAX && due <= now + 2 * PMD_SLEEP_EARLY_NS)) {
		s->idle_since = now; /* look again after another idle stretch */
		return;
	}
	if (!s->ready && !sleep_ring_setup(s))
		return;
	sleep_reap(s, vqs, nvq); /* stale: requests they announced are re-checked below */
	sleep_prep_removals(s);
	sleep_prep_polls(s, vqs, nvq);
	if (sleep_arm_all(vqs, nvq) || guard->pending(guard->arg))
		PMD_CTR_INC(s->st->sleeps_aborted);
	else
		sleep_wait(s, vqs, nvq, sleep_timeout(due));
	sleep_suppress_all(vqs, nvq);
	s->idle_since = 0;
}
