/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_bbssd_timing.c - the BlackBox SSD's timing model against every
 * prediction of device-model.md for the tutorial's device (2 channels x 4
 * LUNs, blks_per_pl=64, op_pcent=25): each expected time is computed here
 * from the parameters and compared with the due time the model returns.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "bbssd_testlib.h"

#define FILL (256 * MIB) /* the tutorial fills the first 256 MiB */
#define NRAND 2000

static struct tdev dev;

static void open_filled(const char *extra)
{
	char opts[256];

	snprintf(opts, sizeof(opts), "%s%s%s", TUTORIAL, extra ? "," : "", extra ? extra : "");
	tdev_open(&dev, opts, 0);
	tdev_fill(&dev, FILL, 128 * KIB);
}

static void fini(void)
{
	if (dev.m)
		tdev_close(&dev);
}

TestSuite(bbssd_timing, .fini = fini);

static uint64_t rand_off(uint64_t *seed, uint64_t bs)
{
	return trand(seed) % (FILL / bs) * bs;
}

/* Every QD1 read of bs bytes at random bs-aligned offsets takes exactly want ns. */
static void expect_qd1_reads(uint64_t bs, uint64_t want)
{
	uint64_t seed = 12345;

	for (int i = 0; i < 200; i++) {
		uint64_t lat = tdev_lat(&dev, FM_OP_READ, rand_off(&seed, bs), bs);

		cr_assert_eq(lat, want, "read %llu B #%d: %llu ns, model predicts %llu ns",
			     (unsigned long long)bs, i, (unsigned long long)lat,
			     (unsigned long long)want);
	}
}

static uint64_t pages(uint64_t bytes)
{
	return bytes / dev.m->p.pg_bytes;
}

/* Pages of a bytes-long fresh sequential range that land on one LUN. */
static uint64_t pages_per_lun(uint64_t bytes)
{
	return pages(bytes) / dev.m->p.nluns;
}

Test(bbssd_timing, tutorial_geometry)
{
	open_filled(NULL);
	const struct bbssd_params *p = &dev.m->p;
	uint64_t nand = 2 * 4 * 64 * 256 * 4096ull;

	cr_assert_eq(p->nand_bytes, nand);
	cr_assert_eq(p->capacity_bytes, nand * 100 / 125 / 4096 * 4096);
	cr_assert_eq(p->nluns, 8);
	cr_assert_eq(p->pg_rd_lat, 40 * US);
	cr_assert_eq(p->pg_wr_lat, 200 * US);
	/* reads have latencies and a mapping: not plain copies a transport may do itself */
	cr_assert_null(dev.model->flat_read, "BlackBox claims a flat read region");
}

Test(bbssd_timing, read_4k_is_pg_rd_lat)
{
	open_filled(NULL);
	expect_qd1_reads(4 * KIB, dev.m->p.pg_rd_lat);
}

Test(bbssd_timing, read_128k_four_pages_per_lun)
{
	open_filled(NULL);
	cr_assert_eq(pages_per_lun(128 * KIB), 4);
	expect_qd1_reads(128 * KIB, pages_per_lun(128 * KIB) * dev.m->p.pg_rd_lat);
	cr_assert_eq(pages_per_lun(128 * KIB) * dev.m->p.pg_rd_lat, 160 * US);
}

Test(bbssd_timing, read_128k_unaligned_still_spread)
{
	open_filled(NULL);
	uint64_t seed = 99;

	for (int i = 0; i < 100; i++) {
		uint64_t off = rand_off(&seed, 4 * KIB) % (FILL - 128 * KIB);

		cr_assert_eq(tdev_lat(&dev, FM_OP_READ, off, 128 * KIB), 160 * US);
	}
}

Test(bbssd_timing, partial_page_costs_a_page)
{
	open_filled(NULL);
	cr_assert_eq(tdev_lat(&dev, FM_OP_READ, 4096 + 512, 512), dev.m->p.pg_rd_lat);
	cr_assert_eq(tdev_lat(&dev, FM_OP_WRITE, 8192 + 1024, 512), dev.m->p.pg_wr_lat);
	/* A 1 KiB read straddling two pages reads both, on two LUNs in parallel. */
	cr_assert_eq(tdev_lat(&dev, FM_OP_READ, 4096 - 512, 1024), dev.m->p.pg_rd_lat);
}

Test(bbssd_timing, write_4k_is_pg_wr_lat)
{
	open_filled(NULL);
	uint64_t seed = 7;

	for (int i = 0; i < 200; i++)
		cr_assert_eq(tdev_lat(&dev, FM_OP_WRITE, rand_off(&seed, 4096), 4096),
			     dev.m->p.pg_wr_lat);
}

Test(bbssd_timing, write_pointer_stripes_channel_then_lun)
{
	tdev_open(&dev, TUTORIAL, 0);
	const struct bbssd_params *p = &dev.m->p;
	uint8_t buf[4096] = {0};
	uint64_t now = dev.clock;

	/* 16 pages at once: 8 LUNs in parallel, then a second round. */
	for (uint64_t i = 0; i < 2 * p->nluns; i++) {
		uint64_t due = tdev_io(&dev, FM_OP_WRITE, i * 4096, 4096, buf, now);
		uint64_t round = i / p->nluns + 1;
		struct bbssd_addr a = bbssd_ppn_addr(p, dev.m->ftl.map[i]);

		cr_assert_eq(due - now, round * p->pg_wr_lat, "page %llu", (unsigned long long)i);
		cr_assert_eq(a.ch, i % p->nchs);
		cr_assert_eq(a.lun, i / p->nchs % p->luns_per_ch);
		cr_assert_eq(a.pg, i / p->nluns);
	}
}

Test(bbssd_timing, qd32_burst_bounded_by_luns)
{
	open_filled(NULL);
	const struct bbssd_params *p = &dev.m->p;
	uint64_t now = tdev_idle_time(&dev), last = now;
	const uint64_t n = 4096;
	uint8_t buf[4096];

	/* n page reads of a fresh sequential range at one instant: n / 8 rounds. */
	for (uint64_t i = 0; i < n; i++) {
		uint64_t due = tdev_io(&dev, FM_OP_READ, i * 4096, 4096, buf, now);

		last = due > last ? due : last;
	}
	cr_assert_eq(last - now, n / p->nluns * p->pg_rd_lat);
	cr_assert_eq(last - now, n * 40 * US / 8);
}

/*
 * Closed-loop QD32 random reads: at most bound IOPS, and at least floor of
 * it.  The bound is reached only when the limiting resource never idles;
 * with 32 requests over 8 LUNs picked at random some LUN is often without
 * work (a closed queueing network: ~88% for deterministic service, which
 * is also what FEMU measures), with 16 per channel or one firmware core
 * much less so.
 */
static void expect_qd32(double bound, double floor)
{
	const unsigned qd = 32, n = 20000;
	double iops = tdev_closed_loop_iops(&dev, qd, FILL, n);

	cr_assert_leq(iops, bound * (1.0 + (double)qd / n), "QD32 %.0f IOPS above the bound %.0f",
		      iops, bound);
	cr_assert_geq(iops, floor * bound, "QD32 %.0f IOPS, bound %.0f", iops, bound);
	cr_log_info("QD32 %.0f IOPS = %.1f%% of the bound %.0f", iops, 100.0 * iops / bound, bound);
}

Test(bbssd_timing, qd32_random_reads_reach_lun_bound)
{
	open_filled(NULL);
	expect_qd32((double)dev.m->p.nluns * 1e9 / (double)dev.m->p.pg_rd_lat, 0.85);
}

Test(bbssd_timing, flat_times_doubled)
{
	open_filled("pg_rd_lat=80000,pg_wr_lat=400000");
	uint64_t seed = 5;

	expect_qd1_reads(4 * KIB, 40 * US + 40 * US);
	for (int i = 0; i < 50; i++)
		cr_assert_eq(tdev_lat(&dev, FM_OP_WRITE, rand_off(&seed, 4096), 4096),
			     200 * US + 200 * US);
	expect_qd32(8 * 1e9 / 80000.0, 0.85); /* halves: 100,000 IOPS */
}

Test(bbssd_timing, tlc_center_median_upper_p99)
{
	open_filled("nand_cell_type=3");
	uint64_t lat[3000], seed = 77, n[3] = {0};
	const uint64_t table[3] = {56500, 77500, 106000}; /* lower, center, upper */

	for (int i = 0; i < 3000; i++) {
		lat[i] = tdev_lat(&dev, FM_OP_READ, rand_off(&seed, 4096), 4096);
		for (int t = 0; t < 3; t++)
			n[t] += lat[i] == table[t];
	}
	cr_assert_eq(n[0] + n[1] + n[2], 3000, "every read is one of the TLC page types");
	for (int t = 0; t < 3; t++)
		cr_assert(n[t] > 800 && n[t] < 1200, "page type %d read %llu times of 3000", t,
			  (unsigned long long)n[t]);
	for (int i = 1; i < 3000; i++)
		for (int j = i; j > 0 && lat[j - 1] > lat[j]; j--) {
			uint64_t x = lat[j];

			lat[j] = lat[j - 1];
			lat[j - 1] = x;
		}
	cr_assert_eq(lat[1500], table[1], "median %llu", (unsigned long long)lat[1500]);
	cr_assert_eq(lat[2970], table[2], "p99 %llu", (unsigned long long)lat[2970]);
}

Test(bbssd_timing, tlc_ignores_flat_times_and_programs_by_type)
{
	open_filled("nand_cell_type=3,pg_rd_lat=1,pg_wr_lat=1,blk_er_lat=1");
	const uint64_t prog[3] = {820500, 2225000, 5734000};
	uint64_t seed = 3;

	cr_assert_eq(bbssd_erase_ns(&dev.m->p), 3000 * US);
	for (int i = 0; i < 30; i++) {
		uint64_t lat = tdev_lat(&dev, FM_OP_WRITE, rand_off(&seed, 4096), 4096);

		cr_assert(lat == prog[0] || lat == prog[1] || lat == prog[2], "write %llu ns",
			  (unsigned long long)lat);
	}
}

Test(bbssd_timing, cell_tables)
{
	struct bbssd_params p;

	bbssd_params_defaults(&p);
	p.nand_cell_type = BBSSD_CELL_SLC;
	cr_assert_eq(bbssd_read_ns(&p, 5), 40 * US);
	cr_assert_eq(bbssd_prog_ns(&p, 5), 800 * US);
	cr_assert_eq(bbssd_erase_ns(&p), 2000 * US);
	p.nand_cell_type = BBSSD_CELL_MLC;
	cr_assert_eq(bbssd_read_ns(&p, 0), 48 * US);
	cr_assert_eq(bbssd_read_ns(&p, 1), 64 * US);
	cr_assert_eq(bbssd_prog_ns(&p, 3), 2300 * US);
	p.nand_cell_type = BBSSD_CELL_QLC;
	cr_assert_eq(bbssd_page_types(&p), 4);
	cr_assert_eq(bbssd_read_ns(&p, 3), 169600);
	cr_assert_eq(bbssd_prog_ns(&p, 6), 6880800);
	p.nand_cell_type = BBSSD_CELL_OFF;
	cr_assert_eq(bbssd_read_ns(&p, 2), p.pg_rd_lat);
}

Test(bbssd_timing, channel_bus)
{
	open_filled("pg_xfer_lat=20000");
	const struct bbssd_params *p = &dev.m->p;
	uint64_t per_ch = pages(128 * KIB) / p->nchs;

	expect_qd1_reads(4 * KIB, 40 * US + 20 * US);
	/* 16 transfers per channel, back to back once the first read is done. */
	cr_assert_eq(per_ch * p->pg_xfer_lat, 320 * US);
	expect_qd1_reads(128 * KIB, p->pg_rd_lat + per_ch * p->pg_xfer_lat);
	expect_qd32((double)p->nchs * 1e9 / (double)p->pg_xfer_lat, 0.95); /* 100,000 IOPS */
}

Test(bbssd_timing, host_link)
{
	open_filled("pcie_bandwidth_mbps=1000");
	/* bytes / (1000 * 10^6 B/s): 4096 ns and 131072 ns. */
	expect_qd1_reads(4 * KIB, 40 * US + 4096);
	expect_qd1_reads(128 * KIB, 160 * US + 131072);
}

Test(bbssd_timing, host_link_directions_are_separate)
{
	open_filled("pcie_bandwidth_mbps=1000,pcie_prop_delay_ns=1500");
	uint8_t *buf = malloc(128 * KIB);
	uint64_t now = tdev_idle_time(&dev);

	cr_assert_not_null(buf);
	/* A 4 KiB read: NAND, then 4096 ns on the device-to-host queue, then propagation. */
	uint64_t rdue = tdev_io(&dev, FM_OP_READ, 200 * MIB, 4096, buf, now);
	cr_assert_eq(rdue - now, 40 * US + 4096 + 1500);
	/*
	 * A 128 KiB write at the same instant uses the host-to-device queue,
	 * free at now: 131072 ns + propagation, then 4 programs per LUN.
	 */
	uint64_t wdue = tdev_io(&dev, FM_OP_WRITE, 0, 128 * KIB, buf, now);
	cr_assert_eq(wdue - now, 131072 + 1500 + 4 * 200 * US);

	/* Two reads at once: the second's data queues behind the first's on the link. */
	now = tdev_idle_time(&dev);
	uint64_t r2 = tdev_io(&dev, FM_OP_READ, 100 * MIB, 128 * KIB, buf, now);
	uint64_t r3 = tdev_io(&dev, FM_OP_READ, 150 * MIB, 4096, buf, now);
	cr_assert_eq(r2 - now, 160 * US + 131072 + 1500);
	cr_assert_eq(r3 - r2, 4096);
	free(buf);
}

Test(bbssd_timing, firmware_core)
{
	open_filled("fw_cpu_ns=20000");
	expect_qd1_reads(4 * KIB, 40 * US + 20 * US);
	cr_assert_eq(tdev_lat(&dev, FM_OP_WRITE, 4096, 4096), 200 * US + 20 * US);
	expect_qd32(1e9 / 20000.0, 0.99); /* 50,000 IOPS */
}

Test(bbssd_timing, unwritten_reads_cost_no_nand_time)
{
	tdev_open(&dev, TUTORIAL, 0);
	cr_assert_eq(tdev_lat(&dev, FM_OP_READ, 0, 4096), 0);
	cr_assert_eq(tdev_lat(&dev, FM_OP_READ, 64 * MIB, 128 * KIB), 0);
	cr_assert_eq(dev.m->ctr->nand_read_pages, 0);
	cr_assert_eq(dev.m->ctr->unwritten_read_pages, 1 + 32);
	/* Half written: only the written half costs a read. */
	tdev_lat(&dev, FM_OP_WRITE, 0, 4096);
	cr_assert_eq(tdev_lat(&dev, FM_OP_READ, 0, 8192), dev.m->p.pg_rd_lat);
	tdev_close(&dev);

	/* Firmware is still charged. */
	tdev_open(&dev, TUTORIAL ",fw_cpu_ns=20000", 0);
	cr_assert_eq(tdev_lat(&dev, FM_OP_READ, 0, 4096), 20 * US);
}

Test(bbssd_timing, flush_and_discard_complete_at_once)
{
	open_filled(NULL);
	uint64_t now = tdev_idle_time(&dev);

	cr_assert_eq(tdev_io(&dev, FM_OP_FLUSH, 0, 0, NULL, now), now);
	cr_assert_eq(tdev_io(&dev, FM_OP_DISCARD, 0, 1 * MIB, NULL, now), now);
}

Test(bbssd_timing, slc_and_mlc_tables_drive_the_device)
{
	open_filled("nand_cell_type=1");
	expect_qd1_reads(4 * KIB, 40 * US);
	cr_assert_eq(tdev_lat(&dev, FM_OP_WRITE, 0, 4096), 800 * US);
	tdev_close(&dev);

	/* MLC: lower and upper pages alternate within a block. */
	tdev_open(&dev, TUTORIAL ",nand_cell_type=2", 0);
	for (uint64_t i = 0; i < 4 * dev.m->p.nluns; i++) {
		uint64_t pg = i / dev.m->p.nluns;

		cr_assert_eq(tdev_lat(&dev, FM_OP_WRITE, i * 4096, 4096),
			     pg % 2 ? 2300 * US : 850 * US);
		cr_assert_eq(tdev_lat(&dev, FM_OP_READ, i * 4096, 4096),
			     pg % 2 ? 64 * US : 48 * US);
	}
}

Test(bbssd_timing, planes_share_their_lun)
{
	tdev_open(&dev, "nchs=1,luns_per_ch=2,pls_per_lun=2,blks_per_pl=16,op_pcent=25", 0);
	const struct bbssd_params *p = &dev.m->p;
	uint8_t buf[4096] = {0};
	uint64_t now = dev.clock;

	/* Pages go channel, LUN, then plane: pages 2 and 3 are plane 1 of LUNs 0 and 1. */
	for (uint64_t i = 0; i < 4; i++) {
		uint64_t due = tdev_io(&dev, FM_OP_WRITE, i * 4096, 4096, buf, now);
		struct bbssd_addr a = bbssd_ppn_addr(p, dev.m->ftl.map[i]);

		cr_assert_eq(a.lun, i % 2);
		cr_assert_eq(a.pl, i / 2);
		cr_assert_eq(a.pg, 0);
		cr_assert_eq(due - now, (i / 2 + 1) * p->pg_wr_lat, "page %llu",
			     (unsigned long long)i);
	}
}

Test(bbssd_timing, propagation_delay_alone)
{
	open_filled("pcie_prop_delay_ns=2500");
	expect_qd1_reads(4 * KIB, 40 * US + 2500);
	cr_assert_eq(tdev_lat(&dev, FM_OP_WRITE, 0, 4096), 2500 + 200 * US);
}

Test(bbssd_timing, firmware_charges_reads_and_writes_only)
{
	tdev_open(&dev, TUTORIAL ",fw_cpu_ns=20000", 0);
	uint64_t now = tdev_idle_time(&dev);

	cr_assert_eq(tdev_io(&dev, FM_OP_FLUSH, 0, 0, NULL, now), now);
	cr_assert_eq(tdev_io(&dev, FM_OP_DISCARD, 0, 64 * KIB, NULL, now), now);
	/* The core was not taken by them: a read at the same instant pays 20 us once. */
	cr_assert_eq(tdev_io(&dev, FM_OP_READ, 0, 4096, (uint8_t[4096]){0}, now), now + 20 * US);
	/* A second read behind it on the core. */
	cr_assert_eq(tdev_io(&dev, FM_OP_READ, 0, 4096, (uint8_t[4096]){0}, now), now + 40 * US);
}
