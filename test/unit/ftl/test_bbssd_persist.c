/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_bbssd_persist.c - the BlackBox FTL state in a persistent block
 * (bbssd_ftl.c, bbssd_repair.c): a device reopened over its state carries
 * on exactly (maps, counters, GC); states a kill can leave (a change half
 * done: reverse map and valid count behind the map, a free line taken but
 * not opened, a victim erased and queued but not released, a write pointer
 * at the end of its line) are repaired to a state the full check accepts;
 * states no kill explains are refused with a message.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bbssd_testlib.h"

#define GEOM "nchs=2,luns_per_ch=2,blks_per_pl=16,pgs_per_blk=64,op_pcent=25"

static struct tdev dev;
static void *state;
static size_t state_len;
static char err[512];

/* Configure, then create over `state` (allocated on the first call). */
static int open_over_state(bool fresh)
{
	uint8_t *data = dev.data;
	uint64_t clock = dev.clock;

	cr_assert_eq(tdev_configure(&dev, GEOM, 0, err, sizeof(err)), 0, "%s", err);
	dev.cap = dev.cfg.capacity_bytes;
	dev.data = data;
	dev.clock = clock ? clock : 1000;
	if (dev.data == NULL)
		dev.data = calloc(1, dev.cap);
	if (state == NULL) {
		state_len = fm_bbssd_ops.state_size(&dev.cfg);
		cr_assert_gt(state_len, dev.cap / 4096 * 4, "the state holds at least the map");
		state = calloc(1, state_len);
	}
	dev.cfg.state = state;
	dev.cfg.state_fresh = fresh;
	err[0] = '\0';
	int rc = fm_bbssd_ops.create(&dev.cfg, dev.data, &dev.model, err, sizeof(err));
	if (rc == 0)
		dev.m = bbssd_dev_of(dev.model);
	return rc;
}

static void reopen_ok(void)
{
	fm_bbssd_ops.destroy(dev.model);
	cr_assert_eq(open_over_state(false), 0, "reopen: %s", err);
	cr_assert_eq(bbssd_ftl_check(&dev.m->ftl, err, sizeof(err)), 0, "%s", err);
}

/* Random 4 KiB overwrites of the whole device, n times its capacity. */
static void churn(double times, uint64_t seed)
{
	uint8_t buf[4096] = {1};
	uint64_t pages = dev.cap / 4096, t = dev.clock;

	for (uint64_t i = 0; i < (uint64_t)(pages * times); i++) {
		t = tdev_io(&dev, FM_OP_WRITE, (trand(&seed) % pages) * 4096, 4096, buf, t);
	}
	dev.clock = t;
}

static void setup(void)
{
	memset(&dev, 0, sizeof(dev));
	state = NULL;
	cr_assert_eq(open_over_state(true), 0, "%s", err);
	tdev_fill(&dev, dev.cap, 4 * KIB);
	churn(2.0, 7);
	cr_assert_gt(dev.m->ctr->gc_runs, 0, "GC ran before the reopen");
}

static void teardown(void)
{
	if (dev.model)
		fm_bbssd_ops.destroy(dev.model);
	free(dev.data);
	free(state);
}

TestSuite(bbssd_persist, .init = setup, .fini = teardown);

Test(bbssd_persist, reopen_carries_on_exactly)
{
	struct bbssd_counters before = *dev.m->ctr;
	uint32_t *map = malloc(dev.cap / 4096 * 4);
	uint64_t free_before = dev.m->ftl.ps->free_cnt;

	memcpy(map, dev.m->ftl.map, dev.cap / 4096 * 4);
	reopen_ok();
	cr_assert_eq(dev.cfg.note[0], '\0', "a clean state needs no repair: %s", dev.cfg.note);
	cr_assert(memcmp(&before, dev.m->ctr, sizeof(before)) == 0, "counters carried over");
	cr_assert(memcmp(map, dev.m->ftl.map, dev.cap / 4096 * 4) == 0, "map carried over");
	cr_assert_eq(dev.m->ftl.ps->free_cnt, free_before);
	churn(1.0, 9);
	cr_assert_gt(dev.m->ctr->gc_runs, before.gc_runs, "GC goes on after the reopen");
	cr_assert_eq(dev.m->ctr->alloc_failures, 0);
	cr_assert_eq(bbssd_ftl_check(&dev.m->ftl, err, sizeof(err)), 0, "%s", err);
	free(map);
}

/* Killed inside a host write: old page invalidated, new one not mapped yet. */
Test(bbssd_persist, half_done_write_is_repaired)
{
	struct bbssd_ftl *f = &dev.m->ftl;
	uint32_t ppn = f->map[5];

	f->rmap[ppn] = BBSSD_UNMAPPED;
	f->line_vpc[ppn / dev.m->p.pgs_per_line]--;
	f->ps->in_op = 1;
	reopen_ok();
	cr_assert(strstr(dev.cfg.note, "left mid-change by a killed femud") != NULL, "%s",
		  dev.cfg.note);
	cr_assert(strstr(dev.cfg.note, "1 reverse-map entries, 1 valid counts") != NULL, "%s",
		  dev.cfg.note);
	cr_assert_eq(dev.m->ftl.rmap[ppn], 5);
	cr_assert_eq(dev.m->ftl.ps->in_op, 0);
}

/* Killed inside wp_alloc: a line left the free queue but is not the write pointer yet. */
Test(bbssd_persist, line_taken_but_not_opened_goes_back)
{
	struct bbssd_ftl *f = &dev.m->ftl;
	uint64_t head = f->ps->free_head, cnt = f->ps->free_cnt;

	cr_assert_gt(cnt, 0);
	f->ps->free_head = (head + 1) % dev.m->p.tt_lines;
	f->ps->free_cnt = cnt - 1;
	f->ps->in_op = 1;
	reopen_ok();
	cr_assert(strstr(dev.cfg.note, "1 free line(s) requeued") != NULL, "%s", dev.cfg.note);
	cr_assert_eq(dev.m->ftl.ps->free_head, head, "back at the head of the queue");
	cr_assert_eq(dev.m->ftl.ps->free_cnt, cnt);
}

/* Killed between queueing an erased victim and releasing it. */
Test(bbssd_persist, erased_and_queued_victim_is_finished)
{
	struct bbssd_ftl *f = &dev.m->ftl;
	uint32_t l = f->free_q[f->ps->free_head];

	if (f->ps->gc_victim != BBSSD_NO_LINE) /* a background victim in progress: leave it */
		f->line_state[f->ps->gc_victim] = BBSSD_LINE_FULL;
	f->ps->gc_victim = l;
	f->line_state[l] = BBSSD_LINE_VICTIM;
	f->ps->in_op = 1;
	reopen_ok();
	cr_assert_eq(dev.m->ftl.ps->gc_victim, BBSSD_NO_LINE);
	cr_assert_eq(dev.m->ftl.line_state[l], BBSSD_LINE_FREE);
}

/* Killed after the last page of a line was allocated, before the line was closed. */
Test(bbssd_persist, full_write_pointer_line_is_closed)
{
	struct bbssd_ftl *f = &dev.m->ftl;

	if (f->ps->wp_line == BBSSD_NO_LINE)
		cr_skip_test("no open line at this point of the workload");
	uint32_t l = f->ps->wp_line;
	/* pages past the old position are unmapped: only the position moves */
	f->ps->wp_pos = dev.m->p.pgs_per_line;
	f->ps->in_op = 1;
	reopen_ok();
	cr_assert_eq(dev.m->ftl.ps->wp_line, BBSSD_NO_LINE);
	cr_assert_eq(dev.m->ftl.line_state[l], BBSSD_LINE_FULL);
}

Test(bbssd_persist, mapping_outside_the_nand_is_refused)
{
	dev.m->ftl.map[3] = (uint32_t)dev.m->p.tt_pgs + 10;
	fm_bbssd_ops.destroy(dev.model);
	dev.model = NULL;
	cr_assert_eq(open_over_state(false), -EINVAL);
	cr_assert(strstr(err, "cannot be repaired: logical page 3 maps to physical page") &&
		      strstr(err, "outside the NAND") && strstr(err, "format=1"),
		  "%s", err);
	dev.model = NULL;
}

Test(bbssd_persist, two_pages_claiming_one_logical_page_is_refused)
{
	dev.m->ftl.map[4] = dev.m->ftl.map[9];
	fm_bbssd_ops.destroy(dev.model);
	dev.model = NULL;
	cr_assert_eq(open_over_state(false), -EINVAL);
	cr_assert(strstr(err, "which another one maps to") != NULL, "%s", err);
	dev.model = NULL;
}

Test(bbssd_persist, bad_magic_is_refused)
{
	dev.m->ftl.ps->magic = 0;
	fm_bbssd_ops.destroy(dev.model);
	dev.model = NULL;
	cr_assert_eq(open_over_state(false), -EINVAL);
	cr_assert(strstr(err, "never initialised or is corrupted (bad magic)") != NULL, "%s", err);
	dev.model = NULL;
}
