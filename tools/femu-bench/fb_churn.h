/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_churn.h - --connect-churn N: N fresh connections in a row, each with
 * its own memory and --queues queues, one request on each queue, every
 * completion checked, then the queues stopped and the socket closed.  Even
 * connections write a block per queue, odd ones read it back and compare.
 * With --churn-overlap every odd connection stops its queues but keeps its
 * socket open until the next connection has served its requests (two
 * frontends on the socket at once, QEMU's live migration order).
 */
#ifndef FB_CHURN_H
#define FB_CHURN_H

#include "fb_opts.h"

/* Run the churn; prints one summary line.  Exit status: 0, 1 (a request failed), 3 (setup). */
int fb_churn_run(const struct fb_opts *o);

#endif /* FB_CHURN_H */
