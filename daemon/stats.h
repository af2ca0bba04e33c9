/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.h - every counter of the daemon collected in one place: per device
 * (the pmd's connection and queue counters, the model's counters), per
 * queue and per poller.  The SIGUSR1 text, the exit log and the RPC stats
 * method all print from the one JSON tree femud_stats_collect() builds.
 *
 * The pmd's counters are read as pmd_stats.h says (relaxed loads of
 * single-writer counters); a single-writer model's counters are read on its
 * poller (pmd_blk_model_call), copied into a plain buffer there and turned
 * into JSON here, so a poller never allocates.
 *
 * Tree (units: bytes, ns, counts):
 *   {"devices": [{"path", "model", "connections", "connected",
 *                 "frontend_pid", "totals": {COUNTERS},
 *                 "queues": [{"id", COUNTERS, "poller"}],
 *                 "model_stats": {KEY: VALUE}}],
 *    "pollers": [{"id", "lcore", "queues", POLLER COUNTERS}]}
 * COUNTERS: pmd_stats.h's queue list, then kicks and late_ns_avg.
 */
#ifndef FEMUD_STATS_H
#define FEMUD_STATS_H

#include <stdio.h>

#include <jansson.h>

#include "daemon/devtab.h"

/*
 * Collect the counters of every device, or only of the device on socket
 * path (NULL: all; pollers are always included).  NULL when path is not a
 * device's (or out of memory).
 */
json_t *femud_stats_collect(struct femud_devtab *t, const char *path);

/*
 * Every poller's poll mode now: [{"id", "lcore", "poll_mode": "busy" |
 * "adaptive", "idle_us"}, ...]; with config, only poll_mode and idle_us
 * (the "pollers" member of a config file).  An empty array before the
 * pollers exist (t not attached).
 */
json_t *femud_stats_poll_modes(struct femud_devtab *t, bool config);

/*
 * Print a tree from femud_stats_collect() as femud's text:
 *   dev PATH / model NAME / KEY VALUE (the model's counters, one a line)
 *   device PATH connections N
 *     qI requests N read_bytes N ... (one line per queue)
 *   poller I lcore L queues N sweeps N busy_sweeps N ...
 */
void femud_stats_print(const json_t *stats, FILE *out);

/* Zero the counters of one device (path) or of all (NULL) and the pollers'; -ENOENT. */
int femud_stats_reset(struct femud_devtab *t, const char *path);

#endif /* FEMUD_STATS_H */
