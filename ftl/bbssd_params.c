/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bbssd_params.c - the BlackBox SSD's device options (FEMU's key names and
 * defaults), their ranges, the geometry consistency checks and the exposed
 * capacity (derived from the NAND with op_pcent, or devsz_mb checked
 * against it).  Every error names the option and its value.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftl/bbssd.h"
#include "ftl/num_parse.h"

#define MIB ((uint64_t)1024 * 1024)
#define MAX_LAT_NS ((uint64_t)10000000000) /* 10 s: any single NAND / bus / firmware time */

/* One option: name, field, accepted range. */
struct bbssd_opt {
	const char *key;
	size_t off; /* offsetof(struct bbssd_params, field) */
	uint64_t min, max;
	uint64_t def;
};

#define OPT(name, lo, hi, dflt)                                                                    \
	{                                                                                          \
#name, offsetof(struct bbssd_params, name), lo, hi, dflt                           \
	}

static const struct bbssd_opt bbssd_opts[] = {
    OPT(nchs, 1, 1024, 8),
    OPT(luns_per_ch, 1, 1024, 8),
    OPT(pls_per_lun, 1, 64, 1),
    OPT(blks_per_pl, 1, 1u << 20, 256),
    OPT(pgs_per_blk, 1, 1u << 16, 256),
    OPT(secs_per_pg, 1, 1024, 8),
    OPT(op_pcent, 0, 100, 0),
    OPT(gc_thres_pcent, 1, 99, 75),
    OPT(gc_thres_pcent_high, 1, 100, 95),
    OPT(pg_rd_lat, 0, MAX_LAT_NS, 40000),
    OPT(pg_wr_lat, 0, MAX_LAT_NS, 200000),
    OPT(blk_er_lat, 0, MAX_LAT_NS, 2000000),
    OPT(nand_cell_type, 0, 4, 0),
    OPT(pg_xfer_lat, 0, MAX_LAT_NS, 0),
    OPT(pcie_bandwidth_mbps, 0, 1000000, 0),
    OPT(pcie_prop_delay_ns, 0, MAX_LAT_NS, 0),
    OPT(fw_cpu_ns, 0, MAX_LAT_NS, 0),
};

#define NOPTS (sizeof(bbssd_opts) / sizeof(bbssd_opts[0]))

static uint64_t *opt_field(struct bbssd_params *p, const struct bbssd_opt *o)
{
	return (uint64_t *)((char *)p + o->off);
}

void bbssd_params_defaults(struct bbssd_params *p)
{
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < NOPTS; i++)
		*opt_field(p, &bbssd_opts[i]) = bbssd_opts[i].def;
	p->secsz = 512;
}

static const struct bbssd_opt *opt_find(const char *key)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (strcmp(bbssd_opts[i].key, key) == 0)
			return &bbssd_opts[i];
	return NULL;
}

static int parse_one(struct bbssd_params *p, const struct fm_kv *kv, char *err, size_t errlen)
{
	const struct bbssd_opt *o = opt_find(kv->key);
	uint64_t v;

	if (o == NULL) {
		snprintf(err, errlen, "unknown key '%s' for femu_mode=1 (BlackBox SSD)", kv->key);
		return -EINVAL;
	}
	if (num_u64(kv->val, &v) != 0) {
		snprintf(err, errlen, "%s=%s: not a non-negative decimal number", kv->key,
			 kv->val ? kv->val : "");
		return -EINVAL;
	}
	if (v < o->min || v > o->max) {
		snprintf(err, errlen, "%s=%s: out of range [%" PRIu64 ", %" PRIu64 "]", kv->key,
			 kv->val, o->min, o->max);
		return -ERANGE;
	}
	*opt_field(p, o) = v;
	return 0;
}

int bbssd_params_parse(struct bbssd_params *p, const struct fm_kv *kv, unsigned nkv, char *err,
		       size_t errlen)
{
	for (unsigned i = 0; i < nkv; i++) {
		int rc = parse_one(p, &kv[i], err, errlen);

		if (rc != 0)
			return rc;
	}
	if (p->gc_thres_pcent_high < p->gc_thres_pcent) {
		snprintf(err, errlen,
			 "gc_thres_pcent_high=%" PRIu64 ": below gc_thres_pcent=%" PRIu64
			 " (foreground GC must start later than background GC)",
			 p->gc_thres_pcent_high, p->gc_thres_pcent);
		return -EINVAL;
	}
	return 0;
}

/* Keys a running device may change (timings only: no table depends on them). */
static const char *const bbssd_runtime_keys[] = {
    "pg_rd_lat",	  "pg_wr_lat",	 "blk_er_lat",
    "nand_cell_type",	  "pg_xfer_lat", "pcie_bandwidth_mbps",
    "pcie_prop_delay_ns", "fw_cpu_ns",	 NULL,
};

int bbssd_params_set(struct bbssd_params *p, const struct fm_kv *kv, unsigned nkv, char *err,
		     size_t errlen)
{
	struct bbssd_params next = *p;

	for (unsigned i = 0; i < nkv; i++) {
		unsigned k = 0;

		while (bbssd_runtime_keys[k] != NULL &&
		       strcmp(bbssd_runtime_keys[k], kv[i].key) != 0)
			k++;
		if (bbssd_runtime_keys[k] == NULL) {
			snprintf(
			    err, errlen,
			    "%s=%s: %s (runtime keys: pg_rd_lat pg_wr_lat blk_er_lat "
			    "nand_cell_type pg_xfer_lat pcie_bandwidth_mbps pcie_prop_delay_ns "
			    "fw_cpu_ns)",
			    kv[i].key, kv[i].val ? kv[i].val : "",
			    opt_find(kv[i].key) ? "cannot change while the device runs"
						: "unknown key for femu_mode=1 (BlackBox SSD)");
			return -EINVAL;
		}
		int rc = parse_one(&next, &kv[i], err, errlen);

		if (rc != 0)
			return rc;
	}
	*p = next;
	return 0;
}

/* Sizes in pages and lines; refuses tables a uint32_t ppn cannot index. */
static int derive_geometry(struct bbssd_params *p, char *err, size_t errlen)
{
	p->pg_bytes = p->secs_per_pg * p->secsz;
	p->nluns = p->nchs * p->luns_per_ch;
	p->pgs_per_line = p->nluns * p->pls_per_lun * p->pgs_per_blk;
	p->tt_lines = p->blks_per_pl;
	p->tt_pgs = p->pgs_per_line * p->tt_lines;
	if (p->pg_bytes > 1024 * 1024) {
		snprintf(err, errlen,
			 "secs_per_pg=%" PRIu64 ": pages of %" PRIu64 " bytes (secsz %" PRIu64
			 "), at most 1 MiB",
			 p->secs_per_pg, p->pg_bytes, p->secsz);
		return -EINVAL;
	}
	if (p->tt_pgs >= BBSSD_UNMAPPED || p->pgs_per_line > UINT32_MAX / 2) {
		snprintf(err, errlen,
			 "blks_per_pl=%" PRIu64 ": %" PRIu64 " NAND pages in all, more than %u",
			 p->blks_per_pl, p->tt_pgs, BBSSD_UNMAPPED - 1);
		return -EINVAL;
	}
	if (p->tt_lines < BBSSD_GC_SPARE_LINES + 1) {
		snprintf(err, errlen,
			 "blks_per_pl=%" PRIu64 ": GC needs at least %d lines (blocks per plane)",
			 p->blks_per_pl, BBSSD_GC_SPARE_LINES + 1);
		return -EINVAL;
	}
	p->nand_bytes = p->tt_pgs * p->pg_bytes;
	return 0;
}

/* Largest capacity GC can always serve: all but BBSSD_GC_SPARE_LINES lines. */
static uint64_t max_capacity(const struct bbssd_params *p)
{
	return (p->tt_lines - BBSSD_GC_SPARE_LINES) * p->pgs_per_line * p->pg_bytes;
}

static int derive_capacity(struct bbssd_params *p, uint64_t capacity_bytes, bool capacity_set,
			   char *err, size_t errlen)
{
	uint64_t limit = max_capacity(p);

	if (p->op_pcent > 0) {
		/* FEMU: exposed = nand * 100 / (100 + op_pcent), whole pages. */
		uint64_t derived = p->nand_bytes * 100 / (100 + p->op_pcent);
		derived -= derived % p->pg_bytes;
		if (derived > limit) {
			snprintf(err, errlen,
				 "op_pcent=%" PRIu64 ": exposes %" PRIu64
				 " bytes, GC needs %d spare lines (at most %" PRIu64 " bytes)",
				 p->op_pcent, derived, BBSSD_GC_SPARE_LINES, limit);
			return -EINVAL;
		}
		if (capacity_set && capacity_bytes > derived) {
			snprintf(err, errlen,
				 "devsz_mb=%" PRIu64 ": larger than the %" PRIu64
				 " bytes op_pcent=%" PRIu64 " leaves of %" PRIu64 " bytes of NAND",
				 capacity_bytes / MIB, derived, p->op_pcent, p->nand_bytes);
			return -EINVAL;
		}
		if (!capacity_set)
			capacity_bytes = derived;
	} else if (capacity_bytes > limit) {
		snprintf(err, errlen,
			 "devsz_mb=%" PRIu64 "%s: does not fit in the NAND (%" PRIu64
			 " bytes, of which at most %" PRIu64 " can be exposed: GC needs %d spare "
			 "lines); lower devsz_mb, enlarge the geometry or set op_pcent",
			 capacity_bytes / MIB, capacity_set ? "" : " (default)", p->nand_bytes,
			 limit, BBSSD_GC_SPARE_LINES);
		return -EINVAL;
	}
	if (capacity_bytes == 0 || capacity_bytes % p->pg_bytes != 0) {
		snprintf(err, errlen,
			 "devsz_mb=%" PRIu64 ": %" PRIu64
			 " bytes is not a whole, non-zero number of %" PRIu64 "-byte pages",
			 capacity_bytes / MIB, capacity_bytes, p->pg_bytes);
		return -EINVAL;
	}
	p->capacity_bytes = capacity_bytes;
	p->tt_lpns = capacity_bytes / p->pg_bytes;
	return 0;
}

static void derive_thresholds(struct bbssd_params *p)
{
	p->bg_thres_lines = p->tt_lines * (100 - p->gc_thres_pcent) / 100;
	p->fg_thres_lines = p->tt_lines * (100 - p->gc_thres_pcent_high) / 100;
	/* Foreground GC must start while one free line is left for its moves. */
	if (p->fg_thres_lines < 1)
		p->fg_thres_lines = 1;
	if (p->bg_thres_lines < p->fg_thres_lines)
		p->bg_thres_lines = p->fg_thres_lines;
}

int bbssd_params_derive(struct bbssd_params *p, uint64_t capacity_bytes, bool capacity_set,
			uint32_t blk_size, char *err, size_t errlen)
{
	int rc;

	p->secsz = blk_size;
	rc = derive_geometry(p, err, errlen);
	if (rc == 0)
		rc = derive_capacity(p, capacity_bytes, capacity_set, err, errlen);
	if (rc == 0)
		derive_thresholds(p);
	return rc;
}
