/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bbssd_ftl.c - the BlackBox SSD's flash translation layer: the page map
 * (lpn -> ppn) and reverse map (ppn -> lpn), per-line valid-page counts and
 * erase counts, the free-line queue, the write pointer (channel first, then
 * LUN, then plane, then page; a line is one block index across all of
 * them) and greedy garbage collection.  NAND work (host pages, GC moves and
 * erases) is charged on the timelines of bbssd_timing.c.
 *
 * GC policy.  A victim is the full line with the fewest valid pages.
 *  - Foreground: before every page a write allocates, while free lines <=
 *    fg_thres_lines, the victim in progress (or a new one) is collected to
 *    the end: its valid pages are read and programmed at the write pointer,
 *    its blocks erased, all starting at the write's arrival time, so the
 *    write queues behind that NAND work.
 *  - Background: there is no GC thread; submit() calls
 *    bbssd_ftl_gc_background() before serving each request, and idle()
 *    calls it every few us while no request arrives (the poller calls
 *    idle() on its empty sweeps).  When free
 *    lines <= bg_thres_lines it picks a victim (only one with >= 1/8 of its
 *    pages invalid, as FEMU does) and notes that time (gc_bg_since).  Each
 *    call then moves at most BBSSD_BG_MAX_MOVES valid pages (looking at <=
 *    BBSSD_BG_MAX_SCAN positions), each only if its source and destination
 *    LUNs are idle at now, starting when they went idle (never before
 *    gc_bg_since): the work fills the idle time that just passed, as a
 *    controller's background GC would have.  Once all are moved, the
 *    victim's block is erased on each LUN idle at now (same start rule);
 *    the line is free when every LUN has erased.  GC work that runs past
 *    now delays the requests that need those LUNs (the tail, not the
 *    median); when idle time is short, foreground GC takes over.
 *
 * Why the device never runs out of pages: the capacity leaves at least
 * BBSSD_GC_SPARE_LINES lines of spare (bbssd_params.c), foreground GC starts
 * while >= 1 line is free, and one victim moves fewer than a line's pages,
 * so it needs at most that one line and gives one back.
 */
#include <errno.h>
#include <inttypes.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftl/bbssd.h"

/* Tables live on the backend memory's node when one is given. */
void *bbssd_table_alloc(size_t bytes, int node)
{
	if (node >= 0 && numa_available() >= 0)
		return numa_alloc_onnode(bytes, node);
	return malloc(bytes);
}

void bbssd_table_free(void *ptr, size_t bytes, int node)
{
	if (ptr == NULL)
		return;
	if (node >= 0 && numa_available() >= 0)
		numa_free(ptr, bytes);
	else
		free(ptr);
}

/* Where each table lies inside the state block (bytes from its start). */
struct state_layout {
	size_t map, rmap, vpc, erases, free_q, state, gc_erased, total;
};

static size_t align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

static void state_layout(const struct bbssd_params *p, struct state_layout *l)
{
	l->map = align8(sizeof(struct bbssd_pstate));
	l->rmap = l->map + align8(p->tt_lpns * sizeof(uint32_t));
	l->vpc = l->rmap + align8(p->tt_pgs * sizeof(uint32_t));
	l->erases = l->vpc + align8(p->tt_lines * sizeof(uint32_t));
	l->free_q = l->erases + align8(p->tt_lines * sizeof(uint32_t));
	l->state = l->free_q + align8(p->tt_lines * sizeof(uint32_t));
	l->gc_erased = l->state + align8(p->tt_lines);
	l->total = l->gc_erased + align8(p->nluns);
}

size_t bbssd_state_bytes(const struct bbssd_params *p)
{
	struct state_layout l;

	state_layout(p, &l);
	return l.total;
}

static void ftl_attach(struct bbssd_ftl *f, void *state)
{
	struct state_layout l;
	uint8_t *b = state;

	state_layout(f->p, &l);
	f->ps = state;
	f->ctr = &f->ps->ctr;
	f->map = (uint32_t *)(b + l.map);
	f->rmap = (uint32_t *)(b + l.rmap);
	f->line_vpc = (uint32_t *)(b + l.vpc);
	f->line_erases = (uint32_t *)(b + l.erases);
	f->free_q = (uint32_t *)(b + l.free_q);
	f->line_state = b + l.state;
	f->gc_erased = b + l.gc_erased;
}

/* An empty device: every table written, which also faults it in before any I/O. */
static void ftl_format(struct bbssd_ftl *f)
{
	const struct bbssd_params *p = f->p;

	memset(f->ps, 0, sizeof(*f->ps));
	memset(f->map, 0xff, p->tt_lpns * sizeof(uint32_t));
	memset(f->rmap, 0xff, p->tt_pgs * sizeof(uint32_t));
	memset(f->line_vpc, 0, p->tt_lines * sizeof(uint32_t));
	memset(f->line_erases, 0, p->tt_lines * sizeof(uint32_t));
	memset(f->line_state, BBSSD_LINE_FREE, p->tt_lines);
	memset(f->gc_erased, 0, p->nluns);
	for (uint64_t i = 0; i < p->tt_lines; i++)
		f->free_q[i] = (uint32_t)i;
	f->ps->free_head = 0;
	f->ps->free_cnt = p->tt_lines;
	f->ps->wp_line = BBSSD_NO_LINE;
	f->ps->gc_victim = BBSSD_NO_LINE;
	__asm__ __volatile__("" ::: "memory");
	f->ps->magic = BBSSD_PSTATE_MAGIC;
}

int bbssd_ftl_init(struct bbssd_ftl *f, const struct bbssd_params *p, struct bbssd_timeline *tl,
		   int node, void *state, bool fresh, char *note, size_t notelen, char *err,
		   size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->p = p;
	f->tl = tl;
	f->node = node;
	if (state == NULL) {
		state = bbssd_table_alloc(bbssd_state_bytes(p), node);
		if (state == NULL) {
			snprintf(err, errlen, "out of memory for the mapping tables");
			return -ENOMEM;
		}
		f->state_owned = true;
		fresh = true;
	}
	ftl_attach(f, state);
	if (fresh) {
		ftl_format(f);
		return 0;
	}
	return bbssd_ftl_adopt(f, note, notelen, err, errlen);
}

void bbssd_ftl_fini(struct bbssd_ftl *f)
{
	if (f->state_owned && f->ps != NULL)
		bbssd_table_free(f->ps, bbssd_state_bytes(f->p), f->node);
	f->ps = NULL;
	f->map = f->rmap = f->line_vpc = f->line_erases = f->free_q = NULL;
	f->gc_erased = f->line_state = NULL;
}

static uint64_t line_of(const struct bbssd_ftl *f, uint64_t ppn)
{
	return ppn / f->p->pgs_per_line;
}

/* ---- free lines and the write pointer ---- */

static uint32_t free_pop(struct bbssd_ftl *f)
{
	uint32_t line = f->free_q[f->ps->free_head];

	f->ps->free_head = (f->ps->free_head + 1) % f->p->tt_lines;
	f->ps->free_cnt--;
	return line;
}

static void free_push(struct bbssd_ftl *f, uint32_t line)
{
	f->free_q[(f->ps->free_head + f->ps->free_cnt) % f->p->tt_lines] = line;
	f->ps->free_cnt++;
	f->line_state[line] = BBSSD_LINE_FREE;
}

/* Next page at the write pointer; opens a free line when needed. */
static int wp_alloc(struct bbssd_ftl *f, uint64_t *ppn)
{
	if (f->ps->wp_line == BBSSD_NO_LINE) {
		if (f->ps->free_cnt == 0)
			return -ENOSPC;
		f->ps->wp_line = free_pop(f);
		f->ps->wp_pos = 0;
		f->line_state[f->ps->wp_line] = BBSSD_LINE_OPEN;
	}
	*ppn = (uint64_t)f->ps->wp_line * f->p->pgs_per_line + f->ps->wp_pos;
	if (++f->ps->wp_pos == f->p->pgs_per_line) {
		f->line_state[f->ps->wp_line] = BBSSD_LINE_FULL;
		f->ps->wp_line = BBSSD_NO_LINE;
	}
	return 0;
}

/* LUN the next allocation will program (the position alone decides it). */
static uint64_t wp_next_glun(const struct bbssd_ftl *f)
{
	uint64_t pos = f->ps->wp_line == BBSSD_NO_LINE ? 0 : f->ps->wp_pos;

	return bbssd_ppn_addr(f->p, pos).glun;
}

/* ---- mapping ---- */

static void map_set(struct bbssd_ftl *f, uint64_t lpn, uint64_t ppn)
{
	f->map[lpn] = (uint32_t)ppn;
	f->rmap[ppn] = (uint32_t)lpn;
	f->line_vpc[line_of(f, ppn)]++;
}

static void page_invalidate(struct bbssd_ftl *f, uint64_t ppn)
{
	f->rmap[ppn] = BBSSD_UNMAPPED;
	f->line_vpc[line_of(f, ppn)]--;
}

void bbssd_ftl_unmap(struct bbssd_ftl *f, uint64_t lpn)
{
	uint32_t ppn = f->map[lpn];

	if (ppn == BBSSD_UNMAPPED)
		return;
	page_invalidate(f, ppn);
	f->map[lpn] = BBSSD_UNMAPPED;
	f->ctr->unmapped_pages++;
}

/* ---- NAND work on the timelines ---- */

/* Read a page: LUN busy for the read, then the page crosses the channel. */
static uint64_t nand_read(struct bbssd_ftl *f, uint64_t ppn, uint64_t t)
{
	struct bbssd_addr a = bbssd_ppn_addr(f->p, ppn);
	uint64_t end = bbssd_lun_use(f->tl, a.glun, t, bbssd_read_ns(f->p, a.pg));

	f->ctr->nand_read_pages++;
	return bbssd_ch_xfer(f->tl, f->p, a.ch, end);
}

/* Program a page: the data crosses the channel, then the LUN programs it. */
static uint64_t nand_program(struct bbssd_ftl *f, uint64_t ppn, uint64_t t)
{
	struct bbssd_addr a = bbssd_ppn_addr(f->p, ppn);
	uint64_t start = bbssd_ch_xfer(f->tl, f->p, a.ch, t);

	f->ctr->nand_write_pages++;
	return bbssd_lun_use(f->tl, a.glun, start, bbssd_prog_ns(f->p, a.pg));
}

/* Erase the victim's blocks on one LUN (each plane's block in turn). */
static void nand_erase_lun(struct bbssd_ftl *f, uint64_t lun, uint64_t t)
{
	for (uint64_t pl = 0; pl < f->p->pls_per_lun; pl++)
		bbssd_lun_use(f->tl, lun, t, bbssd_erase_ns(f->p));
	f->ctr->block_erases += f->p->pls_per_lun;
	f->gc_erased[lun] = 1;
	f->ps->gc_erased_cnt++;
}

/* ---- garbage collection ---- */

/* Greedy: the full line with the fewest valid pages; NO_LINE when none pays. */
static uint32_t gc_pick(const struct bbssd_ftl *f, bool force)
{
	uint32_t best = BBSSD_NO_LINE;
	uint64_t best_vpc = f->p->pgs_per_line;

	for (uint64_t l = 0; l < f->p->tt_lines; l++)
		if (f->line_state[l] == BBSSD_LINE_FULL && f->line_vpc[l] < best_vpc) {
			best = (uint32_t)l;
			best_vpc = f->line_vpc[l];
		}
	if (best != BBSSD_NO_LINE && !force &&
	    f->p->pgs_per_line - best_vpc < f->p->pgs_per_line / 8)
		return BBSSD_NO_LINE;
	return best;
}

static void gc_start(struct bbssd_ftl *f, uint32_t victim)
{
	f->ps->gc_victim = victim;
	f->ps->gc_cursor = 0;
	f->line_state[victim] = BBSSD_LINE_VICTIM;
}

/* Move one valid page of the victim to the write pointer, starting at t. */
static int gc_move(struct bbssd_ftl *f, uint64_t ppn, uint64_t t)
{
	uint64_t lpn = f->rmap[ppn];
	uint64_t dst;

	if (wp_alloc(f, &dst) != 0) {
		f->ctr->alloc_failures++;
		return -ENOSPC;
	}
	nand_program(f, dst, nand_read(f, ppn, t));
	page_invalidate(f, ppn);
	map_set(f, lpn, dst);
	f->ctr->gc_moved_pages++;
	return 0;
}

/*
 * Erase the victim's blocks, each starting at t or when its LUN is free,
 * on every LUN not erased yet and free by idle_at; once all are erased the
 * line is free and the run counted.
 */
static void gc_erase(struct bbssd_ftl *f, uint64_t t, uint64_t idle_at, bool foreground)
{
	for (uint64_t lun = 0; lun < f->p->nluns; lun++)
		if (!f->gc_erased[lun] && f->tl->lun_free[lun] <= idle_at)
			nand_erase_lun(f, lun, t);
	if (f->ps->gc_erased_cnt < f->p->nluns)
		return;
	memset(f->gc_erased, 0, f->p->nluns);
	f->ps->gc_erased_cnt = 0;
	f->line_erases[f->ps->gc_victim]++;
	free_push(f, f->ps->gc_victim);
	f->ps->gc_victim = BBSSD_NO_LINE;
	f->ctr->gc_runs++;
	if (foreground)
		f->ctr->gc_fg_runs++;
	else
		f->ctr->gc_bg_runs++;
}

/* Collect the rest of the victim now (foreground). */
static int gc_collect(struct bbssd_ftl *f, uint64_t t)
{
	uint64_t base = (uint64_t)f->ps->gc_victim * f->p->pgs_per_line;

	for (; f->ps->gc_cursor < f->p->pgs_per_line; f->ps->gc_cursor++) {
		uint64_t ppn = base + f->ps->gc_cursor;

		if (f->rmap[ppn] != BBSSD_UNMAPPED && gc_move(f, ppn, t) != 0)
			return -ENOSPC;
	}
	gc_erase(f, t, UINT64_MAX, true);
	return 0;
}

/* Foreground GC before a page allocation for a host write. */
static void gc_ensure_space(struct bbssd_ftl *f, uint64_t now)
{
	while (f->ps->free_cnt <= f->p->fg_thres_lines) {
		if (f->ps->gc_victim == BBSSD_NO_LINE) {
			uint32_t v = gc_pick(f, true);

			if (v == BBSSD_NO_LINE)
				return; /* every full line is all valid: the open line has room */
			gc_start(f, v);
		}
		if (gc_collect(f, now) != 0)
			return;
	}
}

/* May background GC move the victim's page at ppn: both LUNs idle at now? */
static bool bg_may_move(const struct bbssd_ftl *f, uint64_t ppn, uint64_t now)
{
	uint64_t src = bbssd_ppn_addr(f->p, ppn).glun;

	if (f->ps->wp_line == BBSSD_NO_LINE && f->ps->free_cnt <= f->p->fg_thres_lines)
		return false; /* the last free lines are foreground GC's */
	return f->tl->lun_free[src] <= now && f->tl->lun_free[wp_next_glun(f)] <= now;
}

void bbssd_ftl_gc_background(struct bbssd_ftl *f, uint64_t now)
{
	uint64_t base, moves = 0;

	if (f->ps->free_cnt <= f->p->fg_thres_lines)
		return; /* the next write's foreground GC does it */
	if (f->ps->gc_victim == BBSSD_NO_LINE) {
		uint32_t v;

		if (f->ps->free_cnt > f->p->bg_thres_lines)
			return;
		v = gc_pick(f, false);
		if (v == BBSSD_NO_LINE)
			return;
		gc_start(f, v);
		f->gc_bg_since = now;
	}
	base = (uint64_t)f->ps->gc_victim * f->p->pgs_per_line;
	for (uint64_t scan = 0; scan < BBSSD_BG_MAX_SCAN && f->ps->gc_cursor < f->p->pgs_per_line;
	     scan++, f->ps->gc_cursor++) {
		uint64_t ppn = base + f->ps->gc_cursor;

		if (f->rmap[ppn] == BBSSD_UNMAPPED)
			continue;
		if (moves == BBSSD_BG_MAX_MOVES || !bg_may_move(f, ppn, now))
			return;
		/* Starts when the source LUN went idle, not before GC was due. */
		if (gc_move(f, ppn, f->gc_bg_since) != 0)
			return;
		f->ctr->gc_bg_moved_pages++;
		moves++;
	}
	if (f->ps->gc_cursor == f->p->pgs_per_line)
		gc_erase(f, f->gc_bg_since, now, false);
}

bool bbssd_ftl_gc_background_pending(const struct bbssd_ftl *f)
{
	return f->ps->gc_victim != BBSSD_NO_LINE && f->ps->free_cnt > f->p->fg_thres_lines;
}

/* ---- host pages ---- */

/* Read one logical page arriving at t; an unmapped page costs no NAND time. */
uint64_t bbssd_ftl_read_page(struct bbssd_ftl *f, uint64_t lpn, uint64_t t)
{
	uint32_t ppn = f->map[lpn];

	if (ppn == BBSSD_UNMAPPED) {
		f->ctr->unwritten_read_pages++;
		return t;
	}
	return nand_read(f, ppn, t);
}

/*
 * Write one logical page: foreground GC first if needed (its NAND work
 * starts at the arrival time now), then a program at the write pointer
 * whose data is ready at t.  *end is when the program finishes.
 */
int bbssd_ftl_write_page(struct bbssd_ftl *f, uint64_t lpn, uint64_t now, uint64_t t, uint64_t *end)
{
	uint64_t ppn;

	gc_ensure_space(f, now);
	if (wp_alloc(f, &ppn) != 0) {
		f->ctr->alloc_failures++;
		return -ENOSPC;
	}
	if (f->map[lpn] != BBSSD_UNMAPPED)
		page_invalidate(f, f->map[lpn]);
	map_set(f, lpn, ppn);
	f->ctr->host_write_pages++;
	*end = nand_program(f, ppn, t);
	return 0;
}

/* ---- checks and summaries ---- */

static int check_maps(const struct bbssd_ftl *f, uint64_t *mapped, char *err, size_t errlen)
{
	*mapped = 0;
	for (uint64_t lpn = 0; lpn < f->p->tt_lpns; lpn++) {
		uint32_t ppn = f->map[lpn];

		if (ppn == BBSSD_UNMAPPED)
			continue;
		if (ppn >= f->p->tt_pgs || f->rmap[ppn] != lpn) {
			snprintf(err, errlen, "lpn %" PRIu64 " -> ppn %u, whose rmap is %u", lpn,
				 ppn, ppn < f->p->tt_pgs ? f->rmap[ppn] : 0);
			return -1;
		}
		(*mapped)++;
	}
	for (uint64_t ppn = 0; ppn < f->p->tt_pgs; ppn++) {
		uint32_t lpn = f->rmap[ppn];

		if (lpn != BBSSD_UNMAPPED && (lpn >= f->p->tt_lpns || f->map[lpn] != ppn)) {
			snprintf(err, errlen, "ppn %" PRIu64 " -> lpn %u, not mapped back", ppn,
				 lpn);
			return -1;
		}
	}
	return 0;
}

static int check_line(const struct bbssd_ftl *f, uint64_t l, uint64_t *valid, char *err,
		      size_t errlen)
{
	uint64_t n = 0, base = l * f->p->pgs_per_line;

	for (uint64_t pos = 0; pos < f->p->pgs_per_line; pos++) {
		if (f->rmap[base + pos] == BBSSD_UNMAPPED)
			continue;
		n++;
		if (f->line_state[l] == BBSSD_LINE_OPEN && pos >= f->ps->wp_pos) {
			snprintf(err, errlen,
				 "line %" PRIu64 ": page %" PRIu64 " valid past the write pointer",
				 l, pos);
			return -1;
		}
	}
	if (n != f->line_vpc[l] || (f->line_state[l] == BBSSD_LINE_FREE && n != 0)) {
		snprintf(err, errlen,
			 "line %" PRIu64 " (state %u): %" PRIu64 " valid pages, count says %u", l,
			 f->line_state[l], n, f->line_vpc[l]);
		return -1;
	}
	*valid += n;
	return 0;
}

static int check_lines(const struct bbssd_ftl *f, uint64_t mapped, char *err, size_t errlen)
{
	uint64_t valid = 0, nfree = 0;

	for (uint64_t l = 0; l < f->p->tt_lines; l++) {
		if (check_line(f, l, &valid, err, errlen) != 0)
			return -1;
		nfree += f->line_state[l] == BBSSD_LINE_FREE;
		if ((f->line_state[l] == BBSSD_LINE_OPEN) != (l == f->ps->wp_line) ||
		    (f->line_state[l] == BBSSD_LINE_VICTIM) != (l == f->ps->gc_victim)) {
			snprintf(err, errlen, "line %" PRIu64 ": state %u disagrees with wp/gc", l,
				 f->line_state[l]);
			return -1;
		}
	}
	for (uint64_t i = 0; i < f->ps->free_cnt; i++)
		if (f->line_state[f->free_q[(f->ps->free_head + i) % f->p->tt_lines]] !=
		    BBSSD_LINE_FREE)
			nfree = UINT64_MAX;
	if (nfree != f->ps->free_cnt || valid != mapped) {
		snprintf(err, errlen,
			 "free lines %" PRIu64 " vs queue %" PRIu64 ", valid %" PRIu64
			 " vs mapped %" PRIu64,
			 nfree, f->ps->free_cnt, valid, mapped);
		return -1;
	}
	return 0;
}

/*
 * Full consistency check (tests, debugging): map and reverse map agree,
 * each line's valid count is its number of mapped pages, line states
 * agree with the free queue, the write pointer and the GC victim.
 */
/* The write pointer and the collection in progress point where they can. */
static int check_cursors(const struct bbssd_ftl *f, char *err, size_t errlen)
{
	const struct bbssd_pstate *ps = f->ps;
	uint64_t erased = 0;

	for (uint64_t i = 0; i < f->p->nluns; i++)
		erased += f->gc_erased[i] != 0;
	if ((ps->wp_line != BBSSD_NO_LINE &&
	     (ps->wp_line >= f->p->tt_lines || ps->wp_pos >= f->p->pgs_per_line)) ||
	    (ps->gc_victim != BBSSD_NO_LINE && ps->gc_victim >= f->p->tt_lines) ||
	    ps->gc_cursor > f->p->pgs_per_line || erased != ps->gc_erased_cnt ||
	    (ps->gc_victim == BBSSD_NO_LINE && erased != 0) || ps->free_head >= f->p->tt_lines ||
	    ps->free_cnt > f->p->tt_lines) {
		snprintf(err, errlen,
			 "write pointer %u+%" PRIu64 ", victim %u cursor %" PRIu64
			 ", erased %" PRIu64 "/%" PRIu64 " or free queue %" PRIu64 "+%" PRIu64
			 " out of range",
			 ps->wp_line, ps->wp_pos, ps->gc_victim, ps->gc_cursor, erased,
			 ps->gc_erased_cnt, ps->free_head, ps->free_cnt);
		return -1;
	}
	return 0;
}

int bbssd_ftl_check(const struct bbssd_ftl *f, char *err, size_t errlen)
{
	uint64_t mapped;

	if (check_cursors(f, err, errlen) != 0)
		return -1;

	if (check_maps(f, &mapped, err, errlen) != 0)
		return -1;
	return check_lines(f, mapped, err, errlen);
}

void bbssd_ftl_erase_summary(const struct bbssd_ftl *f, uint64_t *min, uint64_t *max, double *mean)
{
	uint64_t sum = 0;

	*min = UINT64_MAX;
	*max = 0;
	for (uint64_t l = 0; l < f->p->tt_lines; l++) {
		uint64_t e = f->line_erases[l];

		sum += e;
		*min = e < *min ? e : *min;
		*max = e > *max ? e : *max;
	}
	*mean = (double)sum / (double)f->p->tt_lines;
}
