/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bbssd_repair.c - the BlackBox FTL state found in a persistent medium at
 * start-up: adopted when consistent, repaired when the process died in the
 * middle of a change (or the state is otherwise inconsistent in a way a
 * kill can leave it), refused when no kill explains it.
 *
 * The repair takes the page map (lpn -> ppn) as the truth.  Every change
 * the FTL makes stores the map entry last or leaves the old entry valid
 * (a write allocates its page and invalidates the old one before it maps
 * the new one; a GC move programs the new page first), and the data
 * itself lives at its logical offset, so a map entry is always a page
 * that held the logical page.  From the map it rebuilds the reverse map
 * and the valid counts; from those, the free-line queue, the write pointer
 * and the victim, the line states: a line taken from the free queue but
 * not opened yet goes back to the queue's head, a victim already erased
 * and queued is finished, a write pointer at the end of its line closes
 * it.  Counters may be off by the one interrupted operation.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftl/bbssd.h"

struct repair_tally {
	uint64_t rmap, vpc, states, requeued;
};

/* Reverse map and valid counts from the map; refuses what no kill can leave. */
static int repair_maps(struct bbssd_ftl *f, struct repair_tally *t, char *err, size_t errlen)
{
	const struct bbssd_params *p = f->p;
	uint32_t *old = malloc(p->tt_pgs * sizeof(uint32_t));

	if (old == NULL) {
		snprintf(err, errlen, "out of memory for the repair");
		return -ENOMEM;
	}
	memcpy(old, f->rmap, p->tt_pgs * sizeof(uint32_t));
	memset(f->rmap, 0xff, p->tt_pgs * sizeof(uint32_t));
	for (uint64_t lpn = 0; lpn < p->tt_lpns; lpn++) {
		uint32_t ppn = f->map[lpn];

		if (ppn == BBSSD_UNMAPPED)
			continue;
		if (ppn >= p->tt_pgs || f->rmap[ppn] != BBSSD_UNMAPPED) {
			snprintf(err, errlen,
				 "logical page %" PRIu64 " maps to physical page %u, %s", lpn, ppn,
				 ppn >= p->tt_pgs ? "outside the NAND"
						  : "which another one maps to");
			free(old);
			return -EINVAL;
		}
		f->rmap[ppn] = (uint32_t)lpn;
	}
	for (uint64_t ppn = 0; ppn < p->tt_pgs; ppn++)
		t->rmap += old[ppn] != f->rmap[ppn];
	free(old);
	for (uint64_t l = 0; l < p->tt_lines; l++) {
		uint32_t n = 0;

		for (uint64_t pos = 0; pos < p->pgs_per_line; pos++)
			n += f->rmap[l * p->pgs_per_line + pos] != BBSSD_UNMAPPED;
		t->vpc += f->line_vpc[l] != n;
		f->line_vpc[l] = n;
	}
	return 0;
}

/* Which lines the free queue holds; refuses a queue no kill can leave. */
static int queued_lines(struct bbssd_ftl *f, uint8_t *inq, char *err, size_t errlen)
{
	struct bbssd_pstate *ps = f->ps;
	uint64_t n = f->p->tt_lines;

	if (ps->free_head >= n || ps->free_cnt > n) {
		snprintf(err, errlen,
			 "free-line queue head %" PRIu64 " / count %" PRIu64
			 " out of range (%" PRIu64 " lines)",
			 ps->free_head, ps->free_cnt, n);
		return -EINVAL;
	}
	for (uint64_t i = 0; i < ps->free_cnt; i++) {
		uint32_t l = f->free_q[(ps->free_head + i) % n];

		if (l >= n || inq[l] || f->line_vpc[l] != 0) {
			snprintf(err, errlen, "free-line queue entry %" PRIu64 " (line %u) %s", i,
				 l,
				 l >= n || inq[l] ? "is invalid or repeated" : "holds valid pages");
			return -EINVAL;
		}
		inq[l] = 1;
	}
	return 0;
}

/* The victim: finished when its erase already queued it; its erase flags recounted. */
static int repair_victim(struct bbssd_ftl *f, const uint8_t *inq, char *err, size_t errlen)
{
	struct bbssd_pstate *ps = f->ps;

	if (ps->gc_victim != BBSSD_NO_LINE && ps->gc_victim >= f->p->tt_lines) {
		snprintf(err, errlen, "GC victim line %u out of range", ps->gc_victim);
		return -EINVAL;
	}
	if (ps->gc_victim != BBSSD_NO_LINE && inq[ps->gc_victim])
		ps->gc_victim = BBSSD_NO_LINE;
	if (ps->gc_victim == BBSSD_NO_LINE)
		memset(f->gc_erased, 0, f->p->nluns);
	ps->gc_erased_cnt = 0;
	for (uint64_t i = 0; i < f->p->nluns; i++)
		ps->gc_erased_cnt += f->gc_erased[i] != 0;
	if (ps->gc_cursor > f->p->pgs_per_line)
		ps->gc_cursor = f->p->pgs_per_line;
	return 0;
}

/* The write pointer: a line at its end is closed. */
static int repair_wp(struct bbssd_ftl *f, const uint8_t *inq, char *err, size_t errlen)
{
	struct bbssd_pstate *ps = f->ps;

	if (ps->wp_line == BBSSD_NO_LINE)
		return 0;
	if (ps->wp_line >= f->p->tt_lines || inq[ps->wp_line] || ps->wp_line == ps->gc_victim) {
		snprintf(err, errlen, "write pointer line %u is invalid, free or the victim",
			 ps->wp_line);
		return -EINVAL;
	}
	if (ps->wp_pos >= f->p->pgs_per_line) {
		f->line_state[ps->wp_line] = BBSSD_LINE_FULL;
		ps->wp_line = BBSSD_NO_LINE;
	} else {
		f->line_state[ps->wp_line] = BBSSD_LINE_OPEN;
	}
	return 0;
}

/* A free line taken from the queue but never opened goes back (to the head if it left from there).
 */
static void requeue(struct bbssd_ftl *f, uint32_t l)
{
	struct bbssd_pstate *ps = f->ps;
	uint64_t n = f->p->tt_lines, prev = (ps->free_head + n - 1) % n;

	if (f->free_q[prev] == l && ps->free_cnt < n) {
		ps->free_head = prev;
	} else {
		f->free_q[(ps->free_head + ps->free_cnt) % n] = l;
	}
	ps->free_cnt++;
}

static void repair_states(struct bbssd_ftl *f, const uint8_t *inq, struct repair_tally *t)
{
	struct bbssd_pstate *ps = f->ps;

	for (uint64_t l = 0; l < f->p->tt_lines; l++) {
		uint8_t want = BBSSD_LINE_FULL;

		if (l == ps->wp_line)
			continue;
		if (l == ps->gc_victim) {
			want = BBSSD_LINE_VICTIM;
		} else if (inq[l]) {
			want = BBSSD_LINE_FREE;
		} else if (f->line_state[l] == BBSSD_LINE_FREE && f->line_vpc[l] == 0) {
			requeue(f, (uint32_t)l);
			t->requeued++;
			want = BBSSD_LINE_FREE;
		}
		t->states += f->line_state[l] != want;
		f->line_state[l] = want;
	}
}

static int repair(struct bbssd_ftl *f, struct repair_tally *t, char *err, size_t errlen)
{
	uint8_t *inq = calloc(f->p->tt_lines, 1);
	int rc;

	if (inq == NULL) {
		snprintf(err, errlen, "out of memory for the repair");
		return -ENOMEM;
	}
	rc = repair_maps(f, t, err, errlen);
	if (rc == 0)
		rc = queued_lines(f, inq, err, errlen);
	if (rc == 0)
		rc = repair_victim(f, inq, err, errlen);
	if (rc == 0)
		rc = repair_wp(f, inq, err, errlen);
	if (rc == 0)
		repair_states(f, inq, t);
	free(inq);
	return rc;
}

int bbssd_ftl_adopt(struct bbssd_ftl *f, char *note, size_t notelen, char *err, size_t errlen)
{
	struct repair_tally t = {0};
	char why[256] = "", after[256];
	bool in_op = f->ps->in_op != 0;
	int rc;

	if (f->ps->magic != BBSSD_PSTATE_MAGIC) {
		snprintf(err, errlen,
			 "BlackBox state was never initialised or is corrupted (bad "
			 "magic); format=1 makes the medium anew");
		return -EINVAL;
	}
	if (bbssd_ftl_check(f, why, sizeof(why)) == 0) {
		if (in_op)
			snprintf(note, notelen,
				 "BlackBox state left mid-change by a killed "
				 "femud: consistent");
		f->ps->in_op = 0;
		return 0;
	}
	rc = repair(f, &t, err, errlen);
	if (rc == 0 && bbssd_ftl_check(f, after, sizeof(after)) != 0) {
		snprintf(err, errlen, "%s", after);
		rc = -EINVAL;
	}
	if (rc != 0) {
		char e[300];

		snprintf(e, sizeof(e), "%s", err);
		snprintf(err, errlen,
			 "BlackBox state cannot be repaired: %s (found: %s); format=1 "
			 "makes the medium anew",
			 e, why);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	snprintf(note, notelen,
		 "BlackBox state %s (%s): repaired: %" PRIu64 " reverse-map entries, %" PRIu64
		 " valid counts, %" PRIu64 " line states, %" PRIu64 " free line(s) requeued",
		 in_op ? "left mid-change by a killed femud" : "inconsistent", why, t.rmap, t.vpc,
		 t.states, t.requeued);
	f->ps->in_op = 0;
	return 0;
}
