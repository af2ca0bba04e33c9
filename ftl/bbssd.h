/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bbssd.h - FEMU's BlackBox SSD (femu_mode=1), internal interface shared by
 * the files that implement it and by its unit tests:
 *   bbssd_params.c  options, geometry checks, capacity derivation
 *   bbssd_timing.c  cell-type tables, LUN / channel / host-link / firmware timelines
 *   bbssd_ftl.c     page mapping, reverse map, lines, write pointer, greedy GC,
 *                   the state block (persistent on a mem_path medium)
 *   bbssd_repair.c  start-up check and crash repair of a persistent state
 *   bbssd.c         the fm_model_ops table (fm_bbssd_ops)
 *
 * Units: times in nanoseconds, sizes in bytes, "pages" are NAND pages
 * (secs_per_pg * secsz bytes), "lpn" a logical page number (offset / page
 * bytes), "ppn" a physical page number.
 *
 * Physical layout: ppn = line * pgs_per_line + pos, where pos is the
 * position inside the line in write-pointer order (channel fastest, then
 * LUN, then plane, then page).  A line is the same block index on every
 * plane of every LUN of every channel.
 */
#ifndef FTL_BBSSD_H
#define FTL_BBSSD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftl/fm_model.h"
#include "ftl/fm_model_registry.h"

#define BBSSD_FEMU_MODE 1
#define BBSSD_UNMAPPED UINT32_MAX /* map / rmap entry with no page */
#define BBSSD_NO_LINE UINT32_MAX
#define BBSSD_GC_SPARE_LINES 2 /* lines GC needs beyond the logical capacity */
#define BBSSD_MAX_PAGE_TYPES 4 /* QLC */

/* Cell types (nand_cell_type); OFF uses the flat pg_rd_lat/pg_wr_lat/blk_er_lat. */
enum bbssd_cell {
	BBSSD_CELL_OFF = 0,
	BBSSD_CELL_SLC = 1,
	BBSSD_CELL_MLC = 2,
	BBSSD_CELL_TLC = 3,
	BBSSD_CELL_QLC = 4,
};

/* Parsed options (FEMU's names) and what is derived from them. */
struct bbssd_params {
	/* geometry */
	uint64_t nchs, luns_per_ch, pls_per_lun, blks_per_pl, pgs_per_blk, secs_per_pg;
	uint64_t secsz; /* bytes, the device's logical block size */
	/* FTL policy, percent */
	uint64_t op_pcent, gc_thres_pcent, gc_thres_pcent_high;
	/* NAND, ns */
	uint64_t pg_rd_lat, pg_wr_lat, blk_er_lat;
	uint64_t nand_cell_type; /* enum bbssd_cell */
	/* channel bus, host link, firmware */
	uint64_t pg_xfer_lat;	      /* ns per page on the channel, 0 = bus off */
	uint64_t pcie_bandwidth_mbps; /* 10^6 bytes/s per direction, 0 = link off */
	uint64_t pcie_prop_delay_ns;  /* ns added to every Read/Write */
	uint64_t fw_cpu_ns;	      /* ns per Read/Write on one core, 0 = off */

	/* derived by bbssd_params_derive() */
	uint64_t pg_bytes;	 /* bytes per page */
	uint64_t nluns;		 /* nchs * luns_per_ch */
	uint64_t pgs_per_line;	 /* nluns * pls_per_lun * pgs_per_blk */
	uint64_t tt_lines;	 /* = blks_per_pl */
	uint64_t tt_pgs;	 /* physical pages */
	uint64_t nand_bytes;	 /* tt_pgs * pg_bytes */
	uint64_t capacity_bytes; /* exposed, a whole number of pages */
	uint64_t tt_lpns;	 /* capacity_bytes / pg_bytes */
	uint64_t bg_thres_lines; /* background GC when free lines <= this */
	uint64_t fg_thres_lines; /* foreground GC when free lines <= this (>= 1) */
};

/* bbssd_params.c */
void bbssd_params_defaults(struct bbssd_params *p);
int bbssd_params_parse(struct bbssd_params *p, const struct fm_kv *kv, unsigned nkv, char *err,
		       size_t errlen);
/* Change timing keys of running params: all or nothing, errors name key and value. */
int bbssd_params_set(struct bbssd_params *p, const struct fm_kv *kv, unsigned nkv, char *err,
		     size_t errlen);
int bbssd_params_derive(struct bbssd_params *p, uint64_t capacity_bytes, bool capacity_set,
			uint32_t blk_size, char *err, size_t errlen);

/* bbssd_timing.c: NAND times of one page / block, by cell type and page index. */
unsigned bbssd_page_types(const struct bbssd_params *p);
uint64_t bbssd_read_ns(const struct bbssd_params *p, uint64_t pg);
uint64_t bbssd_prog_ns(const struct bbssd_params *p, uint64_t pg);
uint64_t bbssd_erase_ns(const struct bbssd_params *p);

/* Host link directions. */
enum bbssd_dir {
	BBSSD_TO_HOST = 0,   /* Read data */
	BBSSD_FROM_HOST = 1, /* Write data */
};

/* Busy-until times of every modelled resource. */
struct bbssd_timeline {
	uint64_t *lun_free; /* per LUN (ch * luns_per_ch + lun) */
	uint64_t *ch_free;  /* per channel bus */
	uint64_t link_free[2];
	uint64_t fw_free;
};

uint64_t bbssd_lun_use(struct bbssd_timeline *tl, uint64_t lun, uint64_t t, uint64_t dur);
uint64_t bbssd_ch_xfer(struct bbssd_timeline *tl, const struct bbssd_params *p, uint64_t ch,
		       uint64_t t);
uint64_t bbssd_link_xfer(struct bbssd_timeline *tl, const struct bbssd_params *p,
			 enum bbssd_dir dir, uint64_t t, uint64_t bytes);
uint64_t bbssd_fw_run(struct bbssd_timeline *tl, const struct bbssd_params *p, uint64_t t);

/* Where a physical page lives. */
struct bbssd_addr {
	uint64_t line, ch, lun, pl, pg;
	uint64_t glun; /* ch * luns_per_ch + lun: index into lun_free */
};
struct bbssd_addr bbssd_ppn_addr(const struct bbssd_params *p, uint64_t ppn);

/* Counters; nand_* include GC work. */
struct bbssd_counters {
	uint64_t host_read_cmds, host_write_cmds;
	uint64_t host_read_pages, host_write_pages; /* pages touched / programmed for the host */
	uint64_t unwritten_read_pages;		    /* reads that cost no NAND time */
	uint64_t nand_read_pages, nand_write_pages;
	uint64_t gc_moved_pages;		  /* valid pages GC read and programmed elsewhere */
	uint64_t gc_bg_moved_pages;		  /* of those, moved by background steps */
	uint64_t gc_runs, gc_fg_runs, gc_bg_runs; /* lines collected; finished by fg / bg GC */
	uint64_t block_erases;
	uint64_t unmapped_pages; /* by discard / write-zeroes */
	uint64_t alloc_failures; /* no free page for a write: must stay 0 */
};

enum bbssd_line_state {
	BBSSD_LINE_FREE = 0,
	BBSSD_LINE_OPEN,   /* the write pointer's line */
	BBSSD_LINE_FULL,   /* every page written */
	BBSSD_LINE_VICTIM, /* being collected */
};

/*
 * The FTL's state that outlives the process on a persistent medium
 * (mem_path), at the start of one block that holds the tables after it
 * (bbssd_state_bytes()).  Indices only, no pointers: the block may be mapped
 * anywhere.  in_op is 1 while submit() / idle() change the state, so a
 * start that finds it set knows the process died in the middle of a change
 * and repairs the state (bbssd_ftl_init).
 */
struct bbssd_pstate {
	uint64_t magic; /* BBSSD_PSTATE_MAGIC once initialised */
	uint64_t in_op;
	uint64_t free_head, free_cnt; /* ring of free lines, oldest erased first */
	uint64_t wp_pos;	      /* next position inside wp_line */
	uint64_t gc_cursor;	      /* next position of the victim to look at */
	uint64_t gc_erased_cnt;
	uint32_t wp_line;   /* BBSSD_NO_LINE until the next allocation opens one */
	uint32_t gc_victim; /* BBSSD_NO_LINE when no collection is in progress */
	struct bbssd_counters ctr;
};

#define BBSSD_PSTATE_MAGIC 0x3153544d53534242ull /* "BBSSMTS1" */

/* The mapping tables and line bookkeeping (bbssd_ftl.c), inside the state block. */
struct bbssd_ftl {
	const struct bbssd_params *p;
	struct bbssd_timeline *tl;
	struct bbssd_counters *ctr; /* &ps->ctr */
	int node;		    /* NUMA node of the tables, -1 = any */
	struct bbssd_pstate *ps;
	bool state_owned; /* allocated here (no persistent medium) */

	uint32_t *map;	/* lpn -> ppn */
	uint32_t *rmap; /* ppn -> lpn */
	uint32_t *line_vpc;
	uint32_t *line_erases;
	uint32_t *free_q;
	uint8_t *line_state;
	uint8_t *gc_erased;   /* per LUN: the victim's blocks there are erased */
	uint64_t gc_bg_since; /* when background GC picked the victim (ns; not persisted) */
};

/* Bytes of the state block (struct bbssd_pstate and the tables) for p. */
size_t bbssd_state_bytes(const struct bbssd_params *p);

/*
 * Set the FTL up over `state` (bbssd_state_bytes() long), or over a block
 * allocated here when state is NULL.  fresh: initialise it (an empty
 * device).  Else adopt it: a state left in the middle of a change (in_op)
 * or found inconsistent is repaired (maps are the truth: reverse map, valid
 * counts, line states, free-line queue, write pointer and victim are
 * rebuilt from them; a one-line account goes to note) and checked again;
 * a state no crash can explain (a mapping outside the NAND, two pages of
 * one line claiming one logical page, a bad magic) is refused with -EINVAL
 * and a message.  Returns 0, -ENOMEM or -EINVAL.
 */
int bbssd_ftl_init(struct bbssd_ftl *f, const struct bbssd_params *p, struct bbssd_timeline *tl,
		   int node, void *state, bool fresh, char *note, size_t notelen, char *err,
		   size_t errlen);
void bbssd_ftl_fini(struct bbssd_ftl *f);
/* bbssd_repair.c: adopt a state found in a medium (check, repair or refuse; see init). */
int bbssd_ftl_adopt(struct bbssd_ftl *f, char *note, size_t notelen, char *err, size_t errlen);
uint64_t bbssd_ftl_read_page(struct bbssd_ftl *f, uint64_t lpn, uint64_t t);
int bbssd_ftl_write_page(struct bbssd_ftl *f, uint64_t lpn, uint64_t now, uint64_t t,
			 uint64_t *end);
void bbssd_ftl_unmap(struct bbssd_ftl *f, uint64_t lpn);
void bbssd_ftl_gc_background(struct bbssd_ftl *f, uint64_t now);
/* Has background GC a victim in progress that idle time would advance? */
bool bbssd_ftl_gc_background_pending(const struct bbssd_ftl *f);
int bbssd_ftl_check(const struct bbssd_ftl *f, char *err, size_t errlen);
void bbssd_ftl_erase_summary(const struct bbssd_ftl *f, uint64_t *min, uint64_t *max, double *mean);

/* Mark the state as being changed (on the writing thread, around submit / idle work). */
static inline void bbssd_ftl_op_begin(struct bbssd_ftl *f)
{
	f->ps->in_op = 1;
	__asm__ __volatile__("" ::: "memory");
}

static inline void bbssd_ftl_op_end(struct bbssd_ftl *f)
{
	__asm__ __volatile__("" ::: "memory");
	f->ps->in_op = 0;
}

void *bbssd_table_alloc(size_t bytes, int node);
void bbssd_table_free(void *ptr, size_t bytes, int node);

/* Background GC budget per submit() call (see bbssd_ftl_gc_background). */
#define BBSSD_BG_MAX_MOVES 32
#define BBSSD_BG_MAX_SCAN 256
/* idle(): background GC steps while no request arrives, at most one per this many ns. */
#define BBSSD_IDLE_PERIOD_NS 2000

/* One device (bbssd.c): the model instance behind its struct fm_model base. */
struct bbssd_dev {
	struct fm_model base;
	struct bbssd_params p;
	void *data; /* capacity_bytes, data kept at its logical offset */
	struct bbssd_timeline tl;
	struct bbssd_counters *ctr; /* in the FTL's state block */
	struct fm_undo *undo;	    /* persistent medium: block-atomic writes; NULL = volatile */
	struct bbssd_ftl ftl;
	uint64_t idle_next_ns; /* idle(): nothing before this time (ns) */
};

static inline struct bbssd_dev *bbssd_dev_of(struct fm_model *m)
{
	return FM_MODEL_CONTAINER(m, struct bbssd_dev, base);
}

#endif /* FTL_BBSSD_H */
