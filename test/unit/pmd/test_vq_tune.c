/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the hint trial (pmd/vq_tune.h) on made-up sweep times: the
 * order of its windows, which sweeps count, its decision against the
 * margin, a disturbed window, and the next trial a period later.
 */
#include <criterion/criterion.h>

#include "pmd/vq_tune.h"

/* Sweeps of n requests, each costing per_req ticks per request with hints on, off_per_req off. */
struct sim {
	struct pmd_vq_tune t;
	uint64_t on_per_req, off_per_req;
	unsigned n;
	unsigned decided, changed;
};

static void sim_init(struct sim *s, unsigned n, uint64_t on_per_req, uint64_t off_per_req)
{
	*s = (struct sim){.n = n, .on_per_req = on_per_req, .off_per_req = off_per_req};
	pmd_vq_tune_init(&s->t, PMD_VQ_TUNE_WINDOW_REQS);
}

/* One small sweep; its ticks as its hint setting costs. */
static void sim_sweep(struct sim *s)
{
	const bool hint = !pmd_vq_tune_alt(&s->t);
	uint64_t ticks = (uint64_t)s->n * (hint ? s->on_per_req : s->off_per_req);

	s->decided += pmd_vq_tune_sweep(&s->t, pmd_vq_tune_measuring(&s->t) ? ticks : 0, s->n);
	s->changed += !pmd_vq_tune_alt(&s->t) != hint;
}

/* Sweep until the trial in progress (or the first one) decided; the sweeps it took. */
static unsigned sim_until_decided(struct sim *s)
{
	const unsigned before = s->decided;
	unsigned sweeps = 0;

	while (s->decided == before) {
		sim_sweep(s);
		cr_assert_lt(++sweeps, 1000000, "no decision");
	}
	return sweeps;
}

Test(vq_tune, a_new_queue_hints_and_its_first_small_sweep_starts_a_trial)
{
	struct pmd_vq_tune t;

	pmd_vq_tune_init(&t, PMD_VQ_TUNE_WINDOW_REQS);
	cr_assert(!pmd_vq_tune_alt(&t));
	cr_assert_not(pmd_vq_tune_measuring(&t));
	cr_assert_not(pmd_vq_tune_sweep(&t, 0, 5));
	cr_assert(!pmd_vq_tune_alt(&t), "window 0 hints, as before");
	cr_assert(pmd_vq_tune_measuring(&t));
	cr_assert_eq(t.window, 0);
}

Test(vq_tune, windows_go_on_off_off_on_twice)
{
	const bool off[PMD_VQ_TUNE_WINDOWS] = {false, true, true, false, false, true, true, false};

	for (unsigned w = 0; w < PMD_VQ_TUNE_WINDOWS; w++)
		cr_assert_eq(pmd_vq_tune_window_alt(w), off[w], "window %u", w);
}

/*
 * A window is its first counted sweep (left out) and then sweeps until
 * PMD_VQ_TUNE_WINDOW_REQS requests counted; sweeps of one request neither
 * count nor move it.
 */
Test(vq_tune, a_window_counts_its_requests_after_a_warm_up_sweep)
{
	struct pmd_vq_tune t;
	unsigned k;

	pmd_vq_tune_init(&t, PMD_VQ_TUNE_WINDOW_REQS);
	pmd_vq_tune_sweep(&t, 0, 4); /* starts the trial */
	for (k = 0; k < 100; k++)
		cr_assert_not(pmd_vq_tune_sweep(&t, 999999, 1));
	cr_assert_eq(t.reqs, 0);
	cr_assert_not(pmd_vq_tune_sweep(&t, 999999, 4), "the warm-up sweep");
	cr_assert_eq(t.reqs, 0, "the warm-up sweep counted");
	for (k = 0; k < PMD_VQ_TUNE_WINDOW_REQS / 4 - 1; k++)
		cr_assert_not(pmd_vq_tune_sweep(&t, 400, 4));
	cr_assert_eq(t.window, 0);
	cr_assert(!pmd_vq_tune_alt(&t), "window 0 hints");
	cr_assert_not(pmd_vq_tune_sweep(&t, 400, 4), "window 0 closing ended the trial");
	cr_assert_eq(t.window, 1);
	cr_assert_eq(t.rate[0], 100 << 8, "100 ticks per request, times 256");
	cr_assert(pmd_vq_tune_alt(&t), "window 1 is off");
}

/* Off faster by more than the margin: off.  By less, or slower: on. */
Test(vq_tune, hints_go_off_only_when_off_is_faster_by_the_margin)
{
	struct sim s;

	sim_init(&s, 8, 1000, 1000 - PMD_VQ_TUNE_MARGIN_PCT * 10 - 5);
	sim_until_decided(&s);
	cr_assert(s.t.alt, "off %u%% faster stayed on", PMD_VQ_TUNE_MARGIN_PCT + 1);
	cr_assert(pmd_vq_tune_alt(&s.t));

	sim_init(&s, 8, 1000, 1000 - PMD_VQ_TUNE_MARGIN_PCT * 10 + 5);
	sim_until_decided(&s);
	cr_assert_not(s.t.alt, "off less than the margin faster went off");

	sim_init(&s, 8, 1000, 1300);
	sim_until_decided(&s);
	cr_assert_not(s.t.alt);
	cr_assert(!pmd_vq_tune_alt(&s.t));
	cr_assert_eq(s.changed, 4, "on, off, on, off, on: four changes");
}

/* One window slowed down a hundredfold (a preempted poller) does not decide the trial. */
Test(vq_tune, one_disturbed_window_does_not_decide)
{
	struct sim s;
	unsigned w;

	for (w = 0; w < PMD_VQ_TUNE_WINDOWS; w++) {
		const bool was_off = pmd_vq_tune_window_alt(w);

		sim_init(&s, 8, 1000, 800); /* off is faster */
		while (s.t.window != w || !pmd_vq_tune_measuring(&s.t))
			sim_sweep(&s);
		if (was_off)
			s.off_per_req *= 100;
		else
			s.on_per_req *= 100;
		while (s.t.window == w)
			sim_sweep(&s);
		s.off_per_req = 800;
		s.on_per_req = 1000;
		sim_until_decided(&s);
		cr_assert(s.t.alt, "window %u disturbed: hints stayed on", w);
	}
}

/*
 * After a trial the outcome holds for PMD_VQ_TUNE_PERIOD_REQS requests of
 * small sweeps; then the next trial measures again (the machine changed).
 */
Test(vq_tune, the_next_trial_comes_a_period_later)
{
	struct sim s;
	uint64_t served = 0;

	sim_init(&s, 16, 1000, 500);
	sim_until_decided(&s);
	cr_assert(s.t.alt);
	while (!pmd_vq_tune_measuring(&s.t)) {
		cr_assert(pmd_vq_tune_alt(&s.t));
		sim_sweep(&s);
		served += s.n;
	}
	cr_assert_geq(served, PMD_VQ_TUNE_PERIOD_REQS);
	cr_assert_leq(served, PMD_VQ_TUNE_PERIOD_REQS + s.n);
	cr_assert(!pmd_vq_tune_alt(&s.t), "a trial starts with hints on");
	s.off_per_req = 2000;
	sim_until_decided(&s);
	cr_assert_not(s.t.alt, "hints now pay: back on");
	cr_assert_eq(s.decided, 2);
}

/*
 * Sweeps of one request (queue depth 1) never count: a trial that meets
 * PMD_VQ_TUNE_MAX_SKIPPED of them gives up, keeps the last outcome and
 * stops measuring (its caller reads no clock) until a period of requests
 * later; a sweep that counts in between does not restart the count.
 */
Test(vq_tune, a_trial_among_single_request_sweeps_gives_up)
{
	struct sim s;
	unsigned k;

	sim_init(&s, 16, 1000, 500);
	sim_until_decided(&s);
	cr_assert(s.t.alt);
	s.t.until = 0; /* the next sweep starts the next trial */
	s.n = 1;
	sim_sweep(&s);
	cr_assert(pmd_vq_tune_measuring(&s.t));
	for (k = 0; k < PMD_VQ_TUNE_MAX_SKIPPED; k++) {
		cr_assert(pmd_vq_tune_measuring(&s.t), "gave up after %u single sweeps", k);
		cr_assert_not(pmd_vq_tune_alt(&s.t), "window 0 takes the usual way");
		if (k == 10) {
			s.n = 16; /* one counting sweep among them: window 0 warms up */
			sim_sweep(&s);
			s.n = 1;
		}
		sim_sweep(&s);
	}
	cr_assert_not(pmd_vq_tune_measuring(&s.t));
	cr_assert(pmd_vq_tune_alt(&s.t), "the last outcome stands");
	cr_assert_eq(s.t.until, PMD_VQ_TUNE_PERIOD_REQS);
	cr_assert_eq(s.decided, 1, "giving up is no decision");
}
