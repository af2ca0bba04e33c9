/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_bbssd_params.c - the BlackBox SSD's options: FEMU's defaults, the
 * capacity derived with op_pcent, and every error path naming its option.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bbssd_testlib.h"

static struct tdev dev;

static void fini(void)
{
	if (dev.m)
		tdev_close(&dev);
	fm_bbssd_ops.release(&dev.cfg);
}

TestSuite(bbssd_params, .fini = fini);

/* configure() must fail, and its message must contain every word given. */
static void expect_error(const char *opts, uint64_t capacity, const char *w1, const char *w2)
{
	char err[256] = "";
	int rc = tdev_configure(&dev, opts, capacity, err, sizeof(err));

	cr_assert_lt(rc, 0, "'%s' accepted", opts);
	cr_assert_null(dev.cfg.priv, "no parameters left behind on error");
	cr_assert_not_null(strstr(err, w1), "'%s': message '%s' lacks '%s'", opts, err, w1);
	if (w2)
		cr_assert_not_null(strstr(err, w2), "'%s': message '%s' lacks '%s'", opts, err, w2);
}

Test(bbssd_params, registered_as_femu_mode_1)
{
	cr_assert_eq(fm_model_find(1), &fm_bbssd_ops);
	cr_assert(fm_bbssd_ops.single_writer);
	cr_assert_str_eq(fm_bbssd_ops.name, "bbssd");
}

Test(bbssd_params, release_frees_what_configure_left)
{
	char err[256] = "";

	cr_assert_eq(tdev_configure(&dev, TUTORIAL, 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(dev.cfg.priv);
	fm_bbssd_ops.release(&dev.cfg); /* AddressSanitizer reports a leak if it did not free */
	cr_assert_null(dev.cfg.priv);
	fm_bbssd_ops.release(&dev.cfg); /* twice is harmless */
	cr_assert_null(dev.cfg.priv);
}

Test(bbssd_params, create_takes_the_parameters_even_when_it_fails)
{
	char err[256] = "";
	struct fm_model *m = NULL;
	uint8_t data[4096];

	cr_assert_eq(tdev_configure(&dev, TUTORIAL, 0, err, sizeof(err)), 0, "%s", err);
	dev.cfg.capacity_bytes += 4096; /* no longer what configure() derived */
	cr_assert_eq(fm_bbssd_ops.create(&dev.cfg, data, &m, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "differs from the configured"), "%s", err);
	cr_assert_null(m);
	cr_assert_null(dev.cfg.priv, "create() freed the parameters");
	cr_assert_eq(fm_bbssd_ops.create(&dev.cfg, data, &m, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "not configured");
}

Test(bbssd_params, femu_defaults)
{
	char err[256] = "";

	cr_assert_eq(tdev_configure(&dev, "", 1024 * MIB, err, sizeof(err)), 0, "%s", err);
	const struct bbssd_params *p = dev.cfg.priv;

	cr_assert_eq(p->nchs, 8);
	cr_assert_eq(p->luns_per_ch, 8);
	cr_assert_eq(p->pls_per_lun, 1);
	cr_assert_eq(p->blks_per_pl, 256);
	cr_assert_eq(p->pgs_per_blk, 256);
	cr_assert_eq(p->secs_per_pg, 8);
	cr_assert_eq(p->pg_bytes, 4096);
	cr_assert_eq(p->pg_rd_lat, 40000);
	cr_assert_eq(p->pg_wr_lat, 200000);
	cr_assert_eq(p->blk_er_lat, 2000000);
	cr_assert_eq(p->gc_thres_pcent, 75);
	cr_assert_eq(p->gc_thres_pcent_high, 95);
	cr_assert_eq(p->op_pcent, 0);
	cr_assert_eq(p->nand_cell_type, 0);
	cr_assert_eq(p->pg_xfer_lat + p->pcie_bandwidth_mbps + p->pcie_prop_delay_ns + p->fw_cpu_ns,
		     0);
	cr_assert_eq(p->nand_bytes, 8ull * 8 * 256 * 256 * 4096);
	cr_assert_eq(dev.cfg.capacity_bytes, 1024 * MIB);
	/* devsz_mb left out and no op_pcent: the daemon's default size is used. */
	fm_bbssd_ops.release(&dev.cfg);
	cr_assert_eq(tdev_configure(&dev, "", 0, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(dev.cfg.capacity_bytes, 1024 * MIB);
}

Test(bbssd_params, capacity_from_op_pcent)
{
	char err[256] = "";

	cr_assert_eq(tdev_configure(&dev, TUTORIAL, 0, err, sizeof(err)), 0, "%s", err);
	uint64_t nand = 2ull * 4 * 1 * 64 * 256 * 8 * 512;
	uint64_t want = nand * 100 / (100 + 25);

	want -= want % 4096; /* whole pages */
	cr_assert_eq(dev.cfg.capacity_bytes, want);
	cr_assert_eq(((struct bbssd_params *)dev.cfg.priv)->tt_lpns, want / 4096);
}

Test(bbssd_params, devsz_with_op_pcent_must_fit)
{
	char err[256] = "";

	cr_assert_eq(tdev_configure(&dev, TUTORIAL, 400 * MIB, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(dev.cfg.capacity_bytes, 400 * MIB);
	fm_bbssd_ops.release(&dev.cfg);
	expect_error(TUTORIAL, 410 * MIB, "devsz_mb=410", "op_pcent");
}

Test(bbssd_params, sector_size_4096_makes_32k_pages)
{
	char err[256] = "";

	memset(&dev, 0, sizeof(dev));
	cr_assert_eq(tdev_configure(&dev, "", 1024 * MIB, err, sizeof(err)), 0);
	fm_bbssd_ops.release(&dev.cfg);
	dev.cfg.blk_size = 4096;
	cr_assert_eq(fm_bbssd_ops.configure(&dev.cfg, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(((struct bbssd_params *)dev.cfg.priv)->pg_bytes, 8 * 4096);
}

Test(bbssd_params, unknown_key)
{
	expect_error("nchs=2,nchz=4", 0, "nchz", NULL);
}

Test(bbssd_params, bad_numbers)
{
	expect_error("nchs=abc", 0, "nchs", "abc");
	expect_error("pg_rd_lat=-5", 0, "pg_rd_lat", "-5");
	expect_error("luns_per_ch=4x", 0, "luns_per_ch", "4x");
	expect_error("fw_cpu_ns=", 0, "fw_cpu_ns", NULL);
	expect_error("pgs_per_blk= 8", 0, "pgs_per_blk", NULL);
	expect_error("pg_wr_lat=99999999999999999999999", 0, "pg_wr_lat", NULL);
}

Test(bbssd_params, out_of_range)
{
	expect_error("nchs=0", 0, "nchs=0", "range");
	expect_error("nand_cell_type=5", 0, "nand_cell_type=5", NULL);
	expect_error("op_pcent=101", 0, "op_pcent=101", NULL);
	expect_error("gc_thres_pcent=0", 0, "gc_thres_pcent=0", NULL);
	expect_error("gc_thres_pcent=100", 0, "gc_thres_pcent=100", NULL);
	expect_error("pg_rd_lat=10000000001", 0, "pg_rd_lat", NULL);
}

Test(bbssd_params, gc_thresholds_ordered)
{
	expect_error("gc_thres_pcent=80,gc_thres_pcent_high=70", 0, "gc_thres_pcent_high=70",
		     "gc_thres_pcent=80");
}

Test(bbssd_params, devsz_larger_than_nand)
{
	/* 512 MiB of NAND cannot expose 1024 MiB, given or default. */
	expect_error("nchs=2,luns_per_ch=4,blks_per_pl=64", 1024 * MIB, "devsz_mb=1024", "NAND");
	expect_error("nchs=2,luns_per_ch=4,blks_per_pl=64", 0, "devsz_mb=1024", "default");
	/* Exactly the NAND leaves nothing for GC. */
	expect_error("nchs=2,luns_per_ch=4,blks_per_pl=64", 512 * MIB, "devsz_mb=512", "GC");
}

Test(bbssd_params, op_pcent_too_small_for_gc)
{
	/* 512 MiB * 100 / 101 > 62 of 64 lines. */
	expect_error("nchs=2,luns_per_ch=4,blks_per_pl=64,op_pcent=1", 0, "op_pcent=1", "GC");
}

Test(bbssd_params, too_few_lines)
{
	expect_error("blks_per_pl=2,op_pcent=50", 0, "blks_per_pl=2", "lines");
}

Test(bbssd_params, page_too_large)
{
	expect_error("secs_per_pg=4096,blks_per_pl=16", 64 * MIB, "secs_per_pg", NULL);
}

Test(bbssd_params, capacity_not_whole_pages)
{
	expect_error("", 1 * MIB + 512, "devsz_mb", "pages");
}

static void sink_u64(void *arg, const char *key, uint64_t v)
{
	fprintf(arg, "%s %llu\n", key, (unsigned long long)v);
}

static void sink_f64(void *arg, const char *key, double v)
{
	fprintf(arg, "%s %.3f\n", key, v);
}

Test(bbssd_params, stats_lists_counters)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	tdev_open(&dev, TUTORIAL, 0);
	tdev_fill(&dev, 8 * MIB, 128 * KIB);
	struct fm_stats_sink sink = {.u64 = sink_u64, .f64 = sink_f64, .arg = out};

	fm_bbssd_ops.stats(dev.model, &sink);
	fclose(out);
	const char *keys[] = {"host_write_pages 2048\n",
			      "nand_write_pages 2048\n",
			      "write_amplification 1.000\n",
			      "gc_runs 0\n",
			      "block_erases 0\n",
			      "line_erases_max 0\n",
			      "lines_total 64\n",
			      "lines_free 63\n",
			      "alloc_failures 0\n"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cr_assert_not_null(strstr(text, keys[i]), "stats lack '%s':\n%s", keys[i], text);
	free(text);
}
