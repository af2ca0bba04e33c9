/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h - femud's own messages on stderr, one line each, prefixed "femud: ".
 * Control threads only (start-up, connect hooks, signals, RPC, shutdown); one
 * write per line, so lines of several threads do not mix.
 *
 * When stderr is the systemd journal (JOURNAL_STREAM names it), each line
 * starts with its syslog priority as "<N>" (sd-daemon(3)) instead of the
 * "femud: " prefix, so journalctl -p filters them.  The pmd logs through
 * rte_log (pmd_log.h), whose levels map to the same priorities.
 *
 * Priorities, the same in daemon/ and pmd/:
 *   err      femud cannot do what it was asked or must do (out of memory, a
 *            poller that does not start or stop, an image save that failed)
 *   warning  a frontend's bad input or conduct made femud refuse or stop
 *            something (a queue stopped, a message refused, a connection
 *            refused), or a degraded set-up (placement, memory)
 *   notice   normal but significant: signals, stop, replayed requests, a
 *            stale socket replaced
 *   info     routine: devices, connections, queues started
 *   debug    detail for developers
 */
#ifndef FEMUD_LOG_H
#define FEMUD_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

/* One line at syslog priority pri (LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO...). */
void femud_logp(int pri, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An informational line (LOG_INFO). */
#define femud_log(...) femud_logp(LOG_INFO, __VA_ARGS__)
#define femud_log_err(...) femud_logp(LOG_ERR, __VA_ARGS__)
#define femud_log_warn(...) femud_logp(LOG_WARNING, __VA_ARGS__)
#define femud_log_notice(...) femud_logp(LOG_NOTICE, __VA_ARGS__)

/* Log each line of msgs (modified: split in place) at pri with prefix in front of it. */
void femud_log_lines(int pri, const char *prefix, char *msgs);

/*
 * Write len bytes of other code's log text (DPDK's, one message, lines ending
 * in '\n') to stderr at priority pri: each line gets the "<N>" prefix in place
 * of its "femud: " when stderr is the journal, else it is written as it is.
 */
void femud_log_raw(int pri, const char *buf, size_t len);

/* True when stderr is the journal's stream (JOURNAL_STREAM matches it). */
bool femud_log_to_journal(void);

#endif /* FEMUD_LOG_H */
