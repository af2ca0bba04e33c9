/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_time.c - TSC frequency calibration.
 */
#include "fb_time.h"

#include <unistd.h>

double fb_tsc_hz(void)
{
	static double hz;
	uint64_t t0, c0, t1, c1;

	if (hz > 0)
		return hz;
	t0 = fb_now_ns();
	c0 = fb_tsc();
	do {
		usleep(2000);
		t1 = fb_now_ns();
	} while (t1 - t0 < 20000000ull);
	c1 = fb_tsc();
	hz = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
	return hz;
}
