/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_hostile.h - --hostile: malformed requests and protocol messages sent to
 * a backend, each followed by a liveness check (a fresh connection that
 * writes and reads back one verified 4 KiB block at the end of the device).
 * Prints PASS/FAIL per case and "N passed, N failed".
 */
#ifndef FB_HOSTILE_H
#define FB_HOSTILE_H

#include "fb_opts.h"

/* Run every case against o->sock.  Returns 0 when all passed, 1 otherwise, 3 on setup error. */
int fb_hostile_run(const struct fb_opts *o);

#endif /* FB_HOSTILE_H */
