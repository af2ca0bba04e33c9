/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h - femud's own messages on stderr, one line each, prefixed "femud: ".
 * Control threads only (start-up, connect hooks, signals, RPC, shutdown); one
 * write per line, so lines of several threads do not mix.
 */
#ifndef FEMUD_LOG_H
#define FEMUD_LOG_H

void femud_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Log each line of msgs (modified: split in place) with prefix in front of it. */
void femud_log_lines(const char *prefix, char *msgs);

#endif /* FEMUD_LOG_H */
