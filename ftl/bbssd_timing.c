/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bbssd_timing.c - the BlackBox SSD's timing model: NAND page/block times
 * (flat, or per page type from the cell-type tables), and the busy-until
 * timelines of the LUNs, the channel buses, the host link (one queue per
 * direction) and the controller firmware core.  All times in ns.
 *
 * Every resource follows the same rule: an operation arriving at t starts
 * at max(t, resource_free), occupies the resource for its duration, and
 * the resource is free again at the end.
 */
#include "ftl/bbssd.h"

/* Per cell type: page-type read and program times, block erase (ns). */
struct bbssd_cell_table {
	unsigned ntypes;
	uint64_t rd[BBSSD_MAX_PAGE_TYPES];
	uint64_t wr[BBSSD_MAX_PAGE_TYPES];
	uint64_t er;
};

/* device-model.md, "Cell-type tables" (there in microseconds). */
static const struct bbssd_cell_table bbssd_cells[] = {
    [BBSSD_CELL_SLC] = {1, {40000}, {800000}, 2000000},
    [BBSSD_CELL_MLC] = {2, {48000, 64000}, {850000, 2300000}, 3000000},
    [BBSSD_CELL_TLC] = {3, {56500, 77500, 106000}, {820500, 2225000, 5734000}, 3000000},
    [BBSSD_CELL_QLC] = {4,
			{59300, 85250, 127200, 169600},
			{861500, 2447500, 6880800, 9174400},
			3000000},
};

unsigned bbssd_page_types(const struct bbssd_params *p)
{
	if (p->nand_cell_type == BBSSD_CELL_OFF)
		return 1;
	return bbssd_cells[p->nand_cell_type].ntypes;
}

/*
 * A block's pages are split equally over the page types: page pg (index in
 * its block) has type pg % ntypes (lower, center, upper, ... in turn).
 */
static unsigned page_type(const struct bbssd_params *p, uint64_t pg)
{
	return (unsigned)(pg % bbssd_page_types(p));
}

uint64_t bbssd_read_ns(const struct bbssd_params *p, uint64_t pg)
{
	if (p->nand_cell_type == BBSSD_CELL_OFF)
		return p->pg_rd_lat;
	return bbssd_cells[p->nand_cell_type].rd[page_type(p, pg)];
}

uint64_t bbssd_prog_ns(const struct bbssd_params *p, uint64_t pg)
{
	if (p->nand_cell_type == BBSSD_CELL_OFF)
		return p->pg_wr_lat;
	return bbssd_cells[p->nand_cell_type].wr[page_type(p, pg)];
}

uint64_t bbssd_erase_ns(const struct bbssd_params *p)
{
	if (p->nand_cell_type == BBSSD_CELL_OFF)
		return p->blk_er_lat;
	return bbssd_cells[p->nand_cell_type].er;
}

static uint64_t occupy(uint64_t *free_at, uint64_t t, uint64_t dur)
{
	uint64_t start = *free_at > t ? *free_at : t;

	*free_at = start + dur;
	return *free_at;
}

/* A NAND operation of dur ns on one LUN, arriving at t; returns its end. */
uint64_t bbssd_lun_use(struct bbssd_timeline *tl, uint64_t lun, uint64_t t, uint64_t dur)
{
	return occupy(&tl->lun_free[lun], t, dur);
}

/* One page transfer on channel ch arriving at t (no cost with the bus off). */
uint64_t bbssd_ch_xfer(struct bbssd_timeline *tl, const struct bbssd_params *p, uint64_t ch,
		       uint64_t t)
{
	if (p->pg_xfer_lat == 0)
		return t;
	return occupy(&tl->ch_free[ch], t, p->pg_xfer_lat);
}

/*
 * A command's data on the host link: bytes / bandwidth on the direction's
 * queue (10^6 bytes/s per MB/s, so bytes * 1000 / mbps ns), then the
 * propagation delay, which does not occupy the queue.
 */
uint64_t bbssd_link_xfer(struct bbssd_timeline *tl, const struct bbssd_params *p,
			 enum bbssd_dir dir, uint64_t t, uint64_t bytes)
{
	uint64_t end = t;

	if (p->pcie_bandwidth_mbps > 0)
		end = occupy(&tl->link_free[dir], t, bytes * 1000 / p->pcie_bandwidth_mbps);
	return end + p->pcie_prop_delay_ns;
}

/* One command on the firmware core: done = max(fw_free, t) + fw_cpu_ns. */
uint64_t bbssd_fw_run(struct bbssd_timeline *tl, const struct bbssd_params *p, uint64_t t)
{
	if (p->fw_cpu_ns == 0)
		return t;
	return occupy(&tl->fw_free, t, p->fw_cpu_ns);
}

/* Decode a ppn (line * pgs_per_line + position in write-pointer order). */
struct bbssd_addr bbssd_ppn_addr(const struct bbssd_params *p, uint64_t ppn)
{
	struct bbssd_addr a;
	uint64_t pos = ppn % p->pgs_per_line;

	a.line = ppn / p->pgs_per_line;
	a.ch = pos % p->nchs;
	pos /= p->nchs;
	a.lun = pos % p->luns_per_ch;
	pos /= p->luns_per_ch;
	a.pl = pos % p->pls_per_lun;
	a.pg = pos / p->pls_per_lun;
	a.glun = a.ch * p->luns_per_ch + a.lun;
	return a;
}
