/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake_guest_vq.c - a pmd_vq over the fake guest's ring, for the unit tests
 * that link pmd/vq.c (kept apart from fake_guest.c, which the fuzz targets
 * link without vq.c).
 */
#include <criterion/criterion.h>

#include "fake_guest.h"

struct pmd_vq *fg_vq(struct fake_guest *g, const struct pmd_blk_target *t, uint16_t size,
		     bool event_idx, int callfd, int kickfd)
{
	struct pmd_vq_setup s = {.size = size,
				 .callfd = callfd,
				 .kickfd = kickfd,
				 .event_idx = event_idx,
				 .indirect = true,
				 .mem = g->mem,
				 .target = t};
	struct fg_ring r;

	fg_ring(g, &r);
	s.desc = r.desc;
	s.avail = r.avail;
	s.used = r.used;
	return pmd_vq_create(&s);
}

struct pmd_vq *fg_env_vq(struct fg_env *e, uint16_t size, bool event_idx, int callfd, int kickfd)
{
	return fg_vq(&e->g, &e->t, size, event_idx, callfd, kickfd);
}

bool fg_run_hint_trial(struct pmd_vq *q, struct fake_model *m, uint64_t (*sweep_five)(void))
{
	unsigned sweeps = 0, after = 0, unhinted = 0;
	uint64_t sum = 0;
	bool off;

	m->offset_sum = 0;
	while (after < 200) {
		const bool hint = q->hinting;

		cr_assert_lt(++sweeps, 100000, "the trial never ended");
		m->npf = 0;
		sum += sweep_five();
		cr_assert_eq(m->npf > 0, hint, "sweep %u: %u hints, the queue said %s", sweeps,
			     m->npf, hint ? "on" : "off");
		if (q->st.hint_trials > 0)
			after++;
		else if (!hint)
			unhinted += 5;
	}
	cr_assert_eq(m->offset_sum, sum, "a request submitted twice or never");
	cr_assert_eq(unhinted, PMD_VQ_TUNE_WINDOWS / 2 * FG_TRIAL_WINDOW_SERVED,
		     "%u requests served without hints during the trial", unhinted);
	cr_assert_eq(q->st.hint_trials, 1);
	off = q->st.hint_trials_off == 1;
	cr_assert_eq(q->hinting, !off);
	cr_assert_not(q->broken);
	return off;
}

/*
 * Check one sweep's hints (m->pf) against the near setting the queue gave
 * it: near hints, PMD_VQ_LOOKAHEAD_NEAR ahead, are all given before the
 * first of five reads is served.
 */
static void near_sweep_hints(const struct fake_model *m, bool near, unsigned sweep)
{
	unsigned k, big = 0, first = 0;

	_Static_assert(PMD_VQ_LOOKAHEAD < 4 && PMD_VQ_LOOKAHEAD_NEAR >= 4,
		       "five reads: the near distance must show within four");
	cr_assert_gt(m->npf, 0, "sweep %u gave no hint", sweep);
	for (k = 0; k < m->npf && k < FM_REC_MAX; k++) {
		big += m->pf[k].len > PMD_VQ_HINT_NEAR_BYTES;
		first += m->pf[k].before_submit == 0;
	}
	if (near) {
		cr_assert_eq(m->npf, 4, "sweep %u: %u near hints for 5 reads", sweep, m->npf);
		cr_assert_eq(big, 0, "sweep %u: a near hint of more than %u B", sweep,
			     PMD_VQ_HINT_NEAR_BYTES);
		cr_assert_eq(first, 4, "sweep %u: %u near hints before the first read", sweep,
			     first);
	} else {
		cr_assert_eq(big, m->npf, "sweep %u: a usual hint of %u B or less", sweep,
			     PMD_VQ_HINT_NEAR_BYTES);
	}
}

bool fg_run_near_trial(struct pmd_vq *q, struct fake_model *m, uint64_t (*sweep_five)(void))
{
	unsigned sweeps = 0, after = 0, near_served = 0;
	uint64_t sum = 0;
	bool near;

	m->offset_sum = 0;
	while (after < 200) {
		near = q->hint_near;
		cr_assert_lt(++sweeps, 100000, "the trial never ended");
		m->npf = 0;
		m->calls = 0;
		sum += sweep_five();
		if (!near)
			fake_spin(m->usual_gap_ns);
		near_sweep_hints(m, near, sweeps);
		if (q->st.near_trials > 0)
			after++;
		else if (near)
			near_served += 5;
	}
	cr_assert_eq(m->offset_sum, sum, "a request submitted twice or never");
	cr_assert_eq(near_served, PMD_VQ_TUNE_WINDOWS / 2 * FG_NEAR_WINDOW_SERVED,
		     "%u requests served with near hints during the trial", near_served);
	cr_assert_eq(q->st.near_trials, 1);
	cr_assert_eq(q->st.hint_trials, 0, "large reads ran the small-read trial");
	near = q->st.near_trials_near == 1;
	cr_assert_eq(q->hint_near, near);
	cr_assert(q->hinting);
	cr_assert_not(q->broken);
	return near;
}
