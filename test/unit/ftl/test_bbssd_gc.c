/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_bbssd_gc.c - the BlackBox SSD's FTL under overwrite: the mapping
 * stays exact (map <-> reverse map, valid counts per line), the data reads
 * back, GC runs (foreground and background), erases are counted, the
 * device never runs out of lines, write amplification > 1; discard and
 * write-zeroes unmap.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "bbssd_testlib.h"

/* 2 x 2 LUNs, 32 lines of 256 pages: 32 MiB of NAND, fast to overwrite. */
#define SMALL "nchs=2,luns_per_ch=2,blks_per_pl=32,pgs_per_blk=64,op_pcent=25"

static struct tdev dev;
static uint32_t *version; /* per lpn: the last version written, 0 = never */

static void fini(void)
{
	if (dev.m)
		tdev_close(&dev);
	free(version);
	version = NULL;
}

TestSuite(bbssd_gc, .fini = fini);

static void check_consistent(void)
{
	char err[256] = "";

	cr_assert_eq(bbssd_ftl_check(&dev.m->ftl, err, sizeof(err)), 0, "FTL: %s", err);
}

/* Page contents identify the lpn and the version written. */
static void pattern(uint8_t *buf, uint64_t pg, uint64_t lpn, uint32_t ver)
{
	memset(buf, (int)((lpn * 31 + ver) & 0xff), pg);
	memcpy(buf, &lpn, sizeof(lpn));
	memcpy(buf + 8, &ver, sizeof(ver));
}

static void write_lpn(uint64_t lpn, uint64_t now, uint64_t *due)
{
	uint64_t pg = dev.m->p.pg_bytes;
	uint8_t buf[4096];

	cr_assert_leq(pg, sizeof(buf));
	version[lpn]++;
	pattern(buf, pg, lpn, version[lpn]);
	*due = tdev_io(&dev, FM_OP_WRITE, lpn * pg, pg, buf, now);
}

static void verify_all(void)
{
	uint64_t pg = dev.m->p.pg_bytes;
	uint8_t got[4096], want[4096];

	for (uint64_t lpn = 0; lpn < dev.m->p.tt_lpns; lpn++) {
		if (version[lpn] == 0)
			memset(want, 0, pg);
		else
			pattern(want, pg, lpn, version[lpn]);
		tdev_io(&dev, FM_OP_READ, lpn * pg, pg, got, tdev_idle_time(&dev));
		cr_assert_arr_eq(got, want, pg, "lpn %llu version %u reads back wrong",
				 (unsigned long long)lpn, version[lpn]);
	}
}

static void open_dev(const char *opts, uint64_t capacity)
{
	tdev_open(&dev, opts, capacity);
	version = calloc(dev.m->p.tt_lpns, sizeof(*version));
	cr_assert_not_null(version);
}

/*
 * times x capacity random single-page overwrites after a sequential fill.
 * gap_ns: time between a completion and the next write (0 = back to back).
 */
static void overwrite_workload(uint64_t times, uint64_t gap_ns, uint64_t check_every)
{
	uint64_t n = dev.m->p.tt_lpns, seed = 0x1234567, due = dev.clock;

	for (uint64_t lpn = 0; lpn < n; lpn++)
		write_lpn(lpn, dev.clock, &due);
	dev.clock = tdev_idle_time(&dev);
	for (uint64_t i = 0; i < times * n; i++) {
		write_lpn(trand(&seed) % n, dev.clock, &due);
		dev.clock = due + gap_ns;
		if (check_every && i % check_every == 0)
			check_consistent();
	}
}

static void expect_gc_healthy(void)
{
	const struct bbssd_counters *c = dev.m->ctr;
	uint64_t emin, emax;
	double emean;

	check_consistent();
	verify_all();
	cr_log_info("host %llu nand %llu WA %.3f gc %llu (fg %llu bg %llu) moved %llu erases %llu",
		    (unsigned long long)c->host_write_pages,
		    (unsigned long long)c->nand_write_pages,
		    (double)c->nand_write_pages / (double)c->host_write_pages,
		    (unsigned long long)c->gc_runs, (unsigned long long)c->gc_fg_runs,
		    (unsigned long long)c->gc_bg_runs, (unsigned long long)c->gc_moved_pages,
		    (unsigned long long)c->block_erases);
	cr_assert_eq(c->alloc_failures, 0);
	cr_assert_gt(c->gc_runs, 0);
	cr_assert_gt(c->gc_moved_pages, 0);
	cr_assert_eq(c->nand_write_pages, c->host_write_pages + c->gc_moved_pages);
	cr_assert_gt((double)c->nand_write_pages / (double)c->host_write_pages, 1.0);
	cr_assert_geq(dev.m->ftl.ps->free_cnt, 1);
	/* Each collected line erased each of its blocks once. */
	bbssd_ftl_erase_summary(&dev.m->ftl, &emin, &emax, &emean);
	cr_assert_eq(c->block_erases, (uint64_t)(emean * (double)dev.m->p.tt_lines + 0.5) *
					  dev.m->p.nluns * dev.m->p.pls_per_lun);
	cr_assert_geq(c->gc_runs, c->block_erases / (dev.m->p.nluns * dev.m->p.pls_per_lun));
	cr_assert_gt(emax, 0);
}

Test(bbssd_gc, random_overwrite_3x_small_device)
{
	open_dev(SMALL, 0);
	overwrite_workload(3, 0, 997);
	expect_gc_healthy();
}

Test(bbssd_gc, random_overwrite_3x_tutorial_device, .timeout = 120)
{
	open_dev(TUTORIAL, 0);
	overwrite_workload(3, 0, 0);
	expect_gc_healthy();
}

Test(bbssd_gc, minimum_spare_never_runs_out)
{
	/* Capacity = all lines but BBSSD_GC_SPARE_LINES: the tightest allowed. */
	const char *geo = "nchs=1,luns_per_ch=2,blks_per_pl=8,pgs_per_blk=16";
	uint64_t cap = (8 - BBSSD_GC_SPARE_LINES) * 2 * 16 * 4096ull;

	open_dev(geo, cap);
	cr_assert_eq(dev.m->p.capacity_bytes, cap);
	overwrite_workload(20, 0, 1);
	expect_gc_healthy();
}

Test(bbssd_gc, foreground_gc_under_saturation_delays_writes)
{
	open_dev(SMALL, 0);
	const struct bbssd_params *p = &dev.m->p;
	uint64_t seed = 42, due, worst = 0, now;

	for (uint64_t lpn = 0; lpn < p->tt_lpns; lpn++)
		write_lpn(lpn, dev.clock, &due);
	/* Writes keep arriving before the LUNs are free: background GC never gets a turn. */
	now = dev.clock;
	for (uint64_t i = 0; i < 2 * p->tt_lpns; i++) {
		write_lpn(trand(&seed) % p->tt_lpns, now, &due);
		worst = due - now > worst ? due - now : worst;
		now += 1000;
	}
	cr_assert_eq(dev.m->ctr->gc_bg_moved_pages, 0);
	cr_assert_gt(dev.m->ctr->gc_fg_runs, 0);
	/* A write queued behind GC's erases waits for them. */
	cr_assert_geq(worst, p->blk_er_lat + p->pg_wr_lat);
	check_consistent();
	verify_all();
}

Test(bbssd_gc, background_gc_uses_idle_time)
{
	open_dev(SMALL, 0);
	/* 1 ms of idle time after every write: GC keeps up in the background. */
	overwrite_workload(3, 1000 * US, 0);
	cr_assert_gt(dev.m->ctr->gc_bg_runs, 0);
	cr_assert_eq(dev.m->ctr->gc_fg_runs, 0);
	cr_assert_eq(dev.m->ctr->gc_bg_moved_pages, dev.m->ctr->gc_moved_pages);
	cr_assert_gt(dev.m->ftl.ps->free_cnt, dev.m->p.fg_thres_lines);
	expect_gc_healthy();
}

Test(bbssd_gc, thresholds_in_lines)
{
	open_dev(TUTORIAL, 0);
	/* 64 lines: background at <= 25% free, foreground at <= 5% free. */
	cr_assert_eq(dev.m->p.bg_thres_lines, 64 * (100 - 75) / 100);
	cr_assert_eq(dev.m->p.fg_thres_lines, 64 * (100 - 95) / 100);
	/* Filling 256 MiB (32 of 64 lines) does not start GC. */
	tdev_fill(&dev, 256 * MIB, 128 * KIB);
	cr_assert_eq(dev.m->ctr->gc_runs, 0);
	cr_assert_eq(dev.m->ftl.ps->free_cnt, 64 - 32);
}

Test(bbssd_gc, discard_unmaps_whole_pages)
{
	open_dev(SMALL, 0);
	uint8_t buf[16384];
	uint64_t now = dev.clock;

	memset(buf, 0xab, sizeof(buf));
	tdev_io(&dev, FM_OP_WRITE, 0, sizeof(buf), buf, now);
	uint32_t line = (uint32_t)(dev.m->ftl.map[0] / dev.m->p.pgs_per_line);
	cr_assert_eq(dev.m->ftl.line_vpc[line], 4);
	/* Discard pages 1..2 whole and half of page 3: page 3 stays mapped. */
	now = tdev_idle_time(&dev);
	cr_assert_eq(tdev_io(&dev, FM_OP_DISCARD, 4096, 4096 * 2 + 2048, NULL, now), now);
	cr_assert_neq(dev.m->ftl.map[0], BBSSD_UNMAPPED);
	cr_assert_eq(dev.m->ftl.map[1], BBSSD_UNMAPPED);
	cr_assert_eq(dev.m->ftl.map[2], BBSSD_UNMAPPED);
	cr_assert_neq(dev.m->ftl.map[3], BBSSD_UNMAPPED);
	cr_assert_eq(dev.m->ftl.line_vpc[line], 2);
	cr_assert_eq(dev.m->ctr->unmapped_pages, 2);
	check_consistent();
	/* Discarded bytes read back zero; an unmapped page costs no NAND time. */
	memset(buf, 0x11, sizeof(buf));
	now = tdev_idle_time(&dev);
	cr_assert_eq(tdev_io(&dev, FM_OP_READ, 4096, 4096, buf, now), now);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(buf[i], 0);
	tdev_io(&dev, FM_OP_READ, 3 * 4096, 4096, buf, now);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(buf[i], i < 2048 ? 0 : 0xab, "byte %d of the half-discarded page", i);
}

Test(bbssd_gc, write_zeroes_unmaps_and_programs_edges)
{
	open_dev(SMALL, 0);
	uint8_t buf[16384];
	uint64_t now = dev.clock;

	memset(buf, 0xcd, sizeof(buf));
	tdev_io(&dev, FM_OP_WRITE, 0, sizeof(buf), buf, now);
	uint32_t old3 = dev.m->ftl.map[3];
	/* From the middle of page 0 to the middle of page 3. */
	now = tdev_idle_time(&dev);
	uint64_t due = tdev_io(&dev, FM_OP_WRITE_ZEROES, 2048, 3 * 4096, NULL, now);
	cr_assert_eq(due - now, dev.m->p.pg_wr_lat, "edge pages are programmed in parallel");
	cr_assert_eq(dev.m->ftl.map[1], BBSSD_UNMAPPED);
	cr_assert_eq(dev.m->ftl.map[2], BBSSD_UNMAPPED);
	cr_assert_neq(dev.m->ftl.map[3], old3, "the partial page moved to a new page");
	cr_assert_neq(dev.m->ftl.map[3], BBSSD_UNMAPPED);
	check_consistent();
	tdev_io(&dev, FM_OP_READ, 0, sizeof(buf), buf, tdev_idle_time(&dev));
	for (int i = 0; i < (int)sizeof(buf); i++)
		cr_assert_eq(buf[i], i < 2048 || i >= 2048 + 3 * 4096 ? 0xcd : 0, "byte %d", i);
}

Test(bbssd_gc, mixed_discard_and_overwrite_stay_consistent)
{
	open_dev(SMALL, 0);
	uint64_t n = dev.m->p.tt_lpns, seed = 777, due;

	for (uint64_t i = 0; i < 4 * n; i++) {
		uint64_t lpn = trand(&seed) % n;

		if (i % 5 == 0) {
			tdev_io(&dev, FM_OP_DISCARD, lpn * 4096, 4096, NULL, dev.clock);
			version[lpn] = 0;
			continue;
		}
		write_lpn(lpn, dev.clock, &due);
		dev.clock = due;
	}
	check_consistent();
	verify_all();
	cr_assert_eq(dev.m->ctr->alloc_failures, 0);
}

Test(bbssd_gc, tables_on_a_numa_node)
{
	tdev_open_node(&dev, SMALL, 0, 0);
	uint8_t buf[4096] = {1};

	tdev_io(&dev, FM_OP_WRITE, 0, 4096, buf, dev.clock);
	memset(buf, 0, sizeof(buf));
	tdev_io(&dev, FM_OP_READ, 0, 4096, buf, tdev_idle_time(&dev));
	cr_assert_eq(buf[0], 1);
	check_consistent();
}

/*
 * Random reads, writes (any 512-byte multiple, split over several iovecs),
 * discards, write-zeroes and flushes against a shadow copy of the device,
 * 3x the capacity written: every read matches the shadow, the FTL stays
 * consistent, GC ran.
 */
Test(bbssd_gc, random_mixed_ops_match_a_shadow_copy)
{
	open_dev(SMALL, 0);
	uint64_t cap = dev.cap, written = 0, seed = 2024, due;
	uint8_t *shadow = calloc(1, cap), *buf = malloc(64 * KIB), *got = malloc(64 * KIB);

	cr_assert(shadow && buf && got);
	while (written < 3 * cap) {
		uint64_t r = trand(&seed), len = (r % 128 + 1) * 512;
		uint64_t off = trand(&seed) % ((cap - len) / 512 + 1) * 512;
		struct fm_iov iov[3] = {{buf, 512}, {buf + 512, 0}, {NULL, 0}};
		struct fm_req req = {.offset = off, .len = len, .iov = iov, .iovcnt = 2};

		iov[1].len = (uint32_t)(len - 512);
		switch (r >> 60) {
		case 0: /* discard */
		case 1: /* write-zeroes */
			req.op = r >> 60 ? FM_OP_WRITE_ZEROES : FM_OP_DISCARD;
			req.iovcnt = 0;
			memset(shadow + off, 0, len);
			break;
		case 2:
			req.op = FM_OP_FLUSH;
			req.len = req.offset = 0;
			req.iovcnt = 0;
			break;
		case 3 ... 7:
			req.op = FM_OP_READ;
			break;
		default:
			req.op = FM_OP_WRITE;
			for (uint64_t i = 0; i < len; i++)
				buf[i] = (uint8_t)(trand(&seed) >> 56);
			memcpy(shadow + off, buf, len);
			written += len;
			break;
		}
		cr_assert_eq(fm_bbssd_ops.submit(dev.model, &req, dev.clock, &due), FM_S_OK);
		cr_assert_geq(due, dev.clock);
		if (req.op == FM_OP_READ)
			cr_assert_arr_eq(buf, shadow + off, len, "read %llu+%llu differs",
					 (unsigned long long)off, (unsigned long long)len);
		dev.clock = due;
	}
	check_consistent();
	cr_assert_gt(dev.m->ctr->gc_runs, 0);
	cr_assert_eq(dev.m->ctr->alloc_failures, 0);
	for (uint64_t off = 0; off < cap; off += 64 * KIB) {
		uint64_t len = cap - off < 64 * KIB ? cap - off : 64 * KIB;

		tdev_io(&dev, FM_OP_READ, off, len, got, tdev_idle_time(&dev));
		cr_assert_arr_eq(got, shadow + off, len, "final read at %llu",
				 (unsigned long long)off);
	}
	free(shadow);
	free(buf);
	free(got);
}

/*
 * Background GC's NAND work delays some later reads (the tail), not the
 * median: the tutorial's device, overwritten until background GC is due,
 * then QD1 reads with a write after every 8th.
 */
Test(bbssd_gc, background_gc_moves_the_tail_not_the_median)
{
	open_dev(TUTORIAL, 0);
	const struct bbssd_params *p = &dev.m->p;
	uint64_t seed = 11, slow = 0, due, moved, n = 4000;
	uint8_t buf[4096];

	overwrite_workload(1, 0, 0);
	moved = dev.m->ctr->gc_bg_moved_pages;
	cr_assert_leq(dev.m->ftl.ps->free_cnt, p->bg_thres_lines, "background GC is due");
	for (uint64_t i = 0; i < n; i++) {
		uint64_t now = dev.clock;

		if (i % 8 == 7) {
			write_lpn(trand(&seed) % p->tt_lpns, now, &due);
			dev.clock = due;
			continue;
		}
		dev.clock =
		    tdev_io(&dev, FM_OP_READ, trand(&seed) % p->tt_lpns * 4096, 4096, buf, now);
		slow += dev.clock - now > p->pg_rd_lat;
	}
	cr_log_info("%llu of %llu reads waited for background GC, which moved %llu pages",
		    (unsigned long long)slow, (unsigned long long)(n - n / 8),
		    (unsigned long long)(dev.m->ctr->gc_bg_moved_pages - moved));
	cr_assert_gt(dev.m->ctr->gc_bg_moved_pages, moved);
	cr_assert_gt(slow, 0, "no read ever waited for GC");
	cr_assert_lt(slow, (n - n / 8) / 2, "the median read waited for GC");
	check_consistent();
}

/*
 * Writes arrive faster than the NAND programs them until background GC is
 * due (free lines below the background threshold, one above the foreground
 * one);
 * then no request comes.  Background GC work only runs from submit() or
 * idle(): here only idle() can move it on.
 */
static uint64_t overwrite_until_bg_due(void)
{
	const struct bbssd_params *p = &dev.m->p;
	uint64_t seed = 99, due, now;

	for (uint64_t lpn = 0; lpn < p->tt_lpns; lpn++)
		write_lpn(lpn, dev.clock, &due);
	now = dev.clock;
	/* down to one line above the foreground threshold: lines get invalid pages */
	while (dev.m->ftl.ps->free_cnt > p->fg_thres_lines + 1) {
		write_lpn(trand(&seed) % p->tt_lpns, now, &due);
		now += 1000;
	}
	cr_assert_leq(dev.m->ftl.ps->free_cnt, p->bg_thres_lines);
	cr_assert_eq(dev.m->ctr->gc_runs, 0);
	return tdev_idle_time(&dev);
}

Test(bbssd_gc, idle_runs_background_gc_while_no_request_arrives)
{
	open_dev(SMALL, 0);
	uint64_t t = overwrite_until_bg_due(), free_before = dev.m->ftl.ps->free_cnt;
	uint64_t host = dev.m->ctr->host_write_pages;

	bool pending = false, was_pending = false;

	/* The poller calls idle() on empty sweeps: here every 500 ns for 100 ms. */
	for (uint64_t end = t + 100 * 1000 * US; t < end; t += 500) {
		pending = fm_bbssd_ops.idle(dev.model, t);
		was_pending |= pending;
		if (pending)
			cr_assert_neq(dev.m->ftl.ps->gc_victim, BBSSD_NO_LINE);
	}
	cr_assert(was_pending, "idle() never reported the background collection");
	/* it ends: once enough lines are free (or no victim is worth it), idle() is free */
	for (uint64_t end = t + 10000 * 1000 * US; pending && t < end; t += 500)
		pending = fm_bbssd_ops.idle(dev.model, t);
	cr_assert_not(pending, "background GC still pending after 10 s idle");
	cr_assert_eq(dev.m->ftl.ps->gc_victim, BBSSD_NO_LINE);
	cr_assert_gt(dev.m->ctr->gc_bg_runs, 0);
	cr_assert_eq(dev.m->ctr->gc_fg_runs, 0);
	cr_assert_gt(dev.m->ftl.ps->free_cnt, free_before);
	cr_assert_eq(dev.m->ctr->host_write_pages, host, "idle() wrote host pages");
	cr_assert_eq(dev.m->ctr->nand_write_pages, host + dev.m->ctr->gc_moved_pages);
	check_consistent();
	verify_all();
}

Test(bbssd_gc, idle_is_rate_limited_and_free_when_nothing_is_due)
{
	open_dev(SMALL, 0);
	uint64_t t = overwrite_until_bg_due(), moved;

	fm_bbssd_ops.idle(dev.model, t);
	moved = dev.m->ctr->gc_bg_moved_pages;
	cr_assert_gt(moved, 0, "LUNs idle at t: the first call moves pages");
	/* Within BBSSD_IDLE_PERIOD_NS of the last step: nothing, even with LUNs idle. */
	fm_bbssd_ops.idle(dev.model, t + BBSSD_IDLE_PERIOD_NS - 1);
	cr_assert_eq(dev.m->ctr->gc_bg_moved_pages, moved);
	fini();

	/* A device with free lines above the background threshold: idle() changes nothing. */
	open_dev(SMALL, 0);
	tdev_fill(&dev, dev.cap / 2, 64 * KIB);
	struct bbssd_counters before = *dev.m->ctr;
	uint64_t free_before = dev.m->ftl.ps->free_cnt;

	for (uint64_t i = 0, now = tdev_idle_time(&dev); i < 10000; i++, now += 500)
		cr_assert_not(fm_bbssd_ops.idle(dev.model, now), "nothing to do, yet idle() busy");
	cr_assert_eq(dev.m->ftl.ps->free_cnt, free_before);
	cr_assert_eq(memcmp(&before, dev.m->ctr, sizeof(before)), 0);
}
