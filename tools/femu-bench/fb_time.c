/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_time.c - TSC frequency calibration.
 */
#include "fb_time.h"

#include <unistd.h>

/* Calibration window (ns) and the widest bracket a (ns, tsc) pair may have. */
#define CAL_WINDOW_NS 20000000ull
#define CAL_PAIR_MAX_NS 20000ull
#define CAL_PAIR_TRIES 1000

/*
 * One (ns, tsc) reading: the TSC read between two clock reads at most
 * CAL_PAIR_MAX_NS apart, the ns their midpoint.  Unbracketed, a thread
 * preempted (or a machine stalled) between the clock read and the TSC read
 * pairs two instants far apart: a 30 ms gap there at the start of the
 * 20 ms window makes the rate ~10x too low, and every TSC interval derived
 * from it (--timeout, --time, --rate) that much too short.  Rare (a few ns
 * window), but nothing in a run would show it.
 */
static void cal_pair(uint64_t *ns, uint64_t *tsc)
{
	for (unsigned i = 0; i < CAL_PAIR_TRIES; i++) {
		uint64_t a = fb_now_ns(), c = fb_tsc(), b = fb_now_ns();

		*ns = a + (b - a) / 2;
		*tsc = c;
		if (b - a <= CAL_PAIR_MAX_NS)
			return;
	}
	/* never a tight pair (a machine that stalls all the time): the last one */
}

double fb_tsc_hz(void)
{
	static double hz;
	uint64_t t0, c0, t1, c1;

	if (hz > 0)
		return hz;
	cal_pair(&t0, &c0);
	do {
		usleep(2000);
		cal_pair(&t1, &c1);
	} while (t1 - t0 < CAL_WINDOW_NS);
	hz = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
	return hz;
}
