/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bbssd.c - FEMU's BlackBox SSD (femu_mode=1) behind struct fm_model_ops:
 * configure (options, capacity), create/destroy, submit (data copied at
 * once, completion time from the FTL and timing model) and stats.
 *
 * A command's modelled time, all in ns from its arrival now:
 *   Read:  firmware core -> per page: LUN read, channel transfer ->
 *          host link (device to host) + propagation delay
 *   Write: firmware core -> host link (host to device) + propagation ->
 *          per page: foreground GC if due, channel transfer, LUN program
 * The pages of one command proceed in parallel on their LUNs/channels; the
 * command's NAND time is the latest page's end.  Partial pages cost a whole
 * page read or program (FEMU's read-modify-write timing).  Discard and
 * write-zeroes unmap whole pages and cost no time; write-zeroes programs the
 * partial pages at its edges.  Flush costs nothing (the medium is memory).
 *
 * The model keeps mutable state per request: single_writer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftl/bbssd.h"
#include "ftl/fm_snap.h"
#include "ftl/fm_undo.h"
#include "ftl/fm_data.h"

static int bbssd_configure(struct fm_model_config *cfg, char *err, size_t errlen)
{
	struct bbssd_params *p = malloc(sizeof(*p));
	int rc;

	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	bbssd_params_defaults(p);
	rc = bbssd_params_parse(p, cfg->kv, cfg->nkv, err, errlen);
	if (rc == 0)
		rc = bbssd_params_derive(p, cfg->capacity_bytes, cfg->capacity_set, cfg->blk_size,
					 err, errlen);
	if (rc != 0) {
		free(p);
		return rc;
	}
	cfg->capacity_bytes = p->capacity_bytes;
	cfg->priv = p;
	return 0;
}

/* release(): the parameters configure() left in cfg->priv. */
static void bbssd_release(struct fm_model_config *cfg)
{
	free(cfg->priv);
	cfg->priv = NULL;
}

static void bbssd_dev_free(struct bbssd_dev *m)
{
	if (m == NULL)
		return;
	bbssd_ftl_fini(&m->ftl);
	free(m->tl.lun_free);
	free(m->tl.ch_free);
	free(m);
}

static void bbssd_destroy(struct fm_model *model)
{
	bbssd_dev_free(bbssd_dev_of(model));
}

static int bbssd_create(struct fm_model_config *cfg, void *data, struct fm_model **out, char *err,
			size_t errlen)
{
	struct bbssd_dev *m;
	int rc;

	if (cfg->priv == NULL) {
		snprintf(err, errlen, "not configured");
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		bbssd_release(cfg);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	m->base.ops = &fm_bbssd_ops;
	m->p = *(struct bbssd_params *)cfg->priv;
	bbssd_release(cfg);
	if (cfg->capacity_bytes != m->p.capacity_bytes) {
		snprintf(err, errlen,
			 "capacity %" PRIu64 " bytes differs from the configured %" PRIu64,
			 cfg->capacity_bytes, m->p.capacity_bytes);
		free(m);
		return -EINVAL;
	}
	m->data = data;
	m->undo = cfg->undo;
	m->tl.lun_free = calloc(m->p.nluns, sizeof(uint64_t));
	m->tl.ch_free = calloc(m->p.nchs, sizeof(uint64_t));
	if (m->tl.lun_free == NULL || m->tl.ch_free == NULL) {
		bbssd_dev_free(m);
		snprintf(err, errlen, "out of memory for the timelines");
		return -ENOMEM;
	}
	rc = bbssd_ftl_init(&m->ftl, &m->p, &m->tl, cfg->mbe_node, cfg->state, cfg->state_fresh,
			    cfg->note, sizeof(cfg->note), err, errlen);
	if (rc != 0) {
		bbssd_dev_free(m);
		return rc;
	}
	m->ctr = m->ftl.ctr;
	*out = &m->base;
	return 0;
}

/* Bytes of FTL state a persistent medium keeps (the parameters from configure()). */
static size_t bbssd_state_size(const struct fm_model_config *cfg)
{
	return cfg->priv ? bbssd_state_bytes(cfg->priv) : 0;
}

/* The options that fix the state's layout; NAND times and GC thresholds may change. */
static void bbssd_layout(const struct fm_model_config *cfg, char *buf, size_t len)
{
	const struct bbssd_params *p = cfg->priv;

	if (p == NULL) {
		snprintf(buf, len, "%s", "");
		return;
	}
	snprintf(buf, len,
		 "nchs=%" PRIu64 ",luns_per_ch=%" PRIu64 ",pls_per_lun=%" PRIu64
		 ",blks_per_pl=%" PRIu64 ",pgs_per_blk=%" PRIu64 ",secs_per_pg=%" PRIu64
		 ",op_pcent=%" PRIu64,
		 p->nchs, p->luns_per_ch, p->pls_per_lun, p->blks_per_pl, p->pgs_per_blk,
		 p->secs_per_pg, p->op_pcent);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t first_lpn(const struct bbssd_dev *m, const struct fm_req *req)
{
	return req->offset / m->p.pg_bytes;
}

/* One past the last page the request touches. */
static uint64_t end_lpn(const struct bbssd_dev *m, const struct fm_req *req)
{
	return (req->offset + req->len + m->p.pg_bytes - 1) / m->p.pg_bytes;
}

static uint64_t serve_read(struct bbssd_dev *m, const struct fm_req *req, uint64_t now)
{
	uint64_t t = bbssd_fw_run(&m->tl, &m->p, now);
	uint64_t nand_end = t;

	for (uint64_t lpn = first_lpn(m, req); lpn < end_lpn(m, req); lpn++) {
		nand_end = max_u64(nand_end, bbssd_ftl_read_page(&m->ftl, lpn, t));
		m->ctr->host_read_pages++;
	}
	m->ctr->host_read_cmds++;
	return bbssd_link_xfer(&m->tl, &m->p, BBSSD_TO_HOST, nand_end, req->len);
}

static enum fm_status write_pages(struct bbssd_dev *m, uint64_t from, uint64_t to, uint64_t now,
				  uint64_t t, uint64_t *due)
{
	uint64_t end;

	*due = t;
	for (uint64_t lpn = from; lpn < to; lpn++) {
		if (bbssd_ftl_write_page(&m->ftl, lpn, now, t, &end) != 0)
			return FM_S_IOERR;
		*due = max_u64(*due, end);
	}
	return FM_S_OK;
}

static enum fm_status serve_write(struct bbssd_dev *m, const struct fm_req *req, uint64_t now,
				  uint64_t *due)
{
	uint64_t t = bbssd_fw_run(&m->tl, &m->p, now);

	t = bbssd_link_xfer(&m->tl, &m->p, BBSSD_FROM_HOST, t, req->len);
	m->ctr->host_write_cmds++;
	return write_pages(m, first_lpn(m, req), end_lpn(m, req), now, t, due);
}

/* Whole pages inside the range are unmapped; returns the edge pages in [*lo,*hi). */
static void unmap_whole_pages(struct bbssd_dev *m, const struct fm_req *req, uint64_t *lo,
			      uint64_t *hi)
{
	uint64_t pg = m->p.pg_bytes;

	*lo = (req->offset + pg - 1) / pg;
	*hi = (req->offset + req->len) / pg;
	for (uint64_t lpn = *lo; lpn < *hi; lpn++)
		bbssd_ftl_unmap(&m->ftl, lpn);
}

static enum fm_status serve_write_zeroes(struct bbssd_dev *m, const struct fm_req *req,
					 uint64_t now, uint64_t *due)
{
	uint64_t lo, hi, head = first_lpn(m, req), tail = end_lpn(m, req);
	uint64_t end = now;
	enum fm_status st = FM_S_OK;

	unmap_whole_pages(m, req, &lo, &hi);
	*due = now;
	if (lo > hi) /* inside one page: program it */
		return write_pages(m, head, tail, now, now, due);
	if (head < lo)
		st = write_pages(m, head, lo, now, now, &end);
	*due = max_u64(*due, end);
	if (st == FM_S_OK && hi < tail)
		st = write_pages(m, hi, tail, now, now, &end);
	*due = max_u64(*due, end);
	return st;
}

static void zero(struct bbssd_dev *m, uint64_t offset, uint64_t len)
{
	if (__builtin_expect(m->base.snap != NULL, 0))
		fm_snap_before_write(m->base.snap, offset, len);
	if (m->undo != NULL)
		fm_undo_zero(m->undo, m->data, offset, len);
	else
		fm_data_zero(m->data, offset, len);
}

static enum fm_status serve(struct bbssd_dev *m, const struct fm_req *req, uint64_t now_ns,
			    uint64_t *due_ns)
{
	uint64_t lo, hi;

	*due_ns = now_ns;
	if (req->len == 0 && req->op != FM_OP_FLUSH)
		return FM_S_OK;
	switch (req->op) {
	case FM_OP_READ:
		fm_data_read(m->data, req);
		*due_ns = serve_read(m, req, now_ns);
		return FM_S_OK;
	case FM_OP_WRITE:
		if (__builtin_expect(m->base.snap != NULL, 0))
			fm_snap_before_write(m->base.snap, req->offset, req->len);
		if (m->undo != NULL)
			fm_undo_write(m->undo, m->data, req);
		else
			fm_data_write(m->data, req);
		return serve_write(m, req, now_ns, due_ns);
	case FM_OP_FLUSH:
		return FM_S_OK;
	case FM_OP_DISCARD:
		/* Reads of a discarded range return zeros, as with NoSSD. */
		zero(m, req->offset, req->len);
		unmap_whole_pages(m, req, &lo, &hi);
		return FM_S_OK;
	case FM_OP_WRITE_ZEROES:
		zero(m, req->offset, req->len);
		return serve_write_zeroes(m, req, now_ns, due_ns);
	}
	return FM_S_UNSUPP;
}

/*
 * A bounded background GC step first (work placed in the idle time of LUNs
 * idle at now_ns, see bbssd_ftl.c), then the request.
 */
static enum fm_status bbssd_submit(struct fm_model *model, const struct fm_req *req,
				   uint64_t now_ns, uint64_t *due_ns)
{
	struct bbssd_dev *m = bbssd_dev_of(model);
	enum fm_status st;

	bbssd_ftl_op_begin(&m->ftl);
	bbssd_ftl_gc_background(&m->ftl, now_ns);
	st = serve(m, req, now_ns, due_ns);
	bbssd_ftl_op_end(&m->ftl);
	return st;
}

/*
 * No request came: advance background GC as if the controller's GC thread
 * ran now, at most once per BBSSD_IDLE_PERIOD_NS (the transport calls this
 * on every idle sweep of every queue of the device).  True while a
 * background collection is in progress, so that the poller keeps calling.
 */
static bool bbssd_idle(struct fm_model *model, uint64_t now_ns)
{
	struct bbssd_dev *m = bbssd_dev_of(model);

	if (now_ns >= m->idle_next_ns) {
		m->idle_next_ns = now_ns + BBSSD_IDLE_PERIOD_NS;
		bbssd_ftl_op_begin(&m->ftl);
		bbssd_ftl_gc_background(&m->ftl, now_ns);
		bbssd_ftl_op_end(&m->ftl);
	}
	return bbssd_ftl_gc_background_pending(&m->ftl);
}

static double write_amplification(const struct bbssd_counters *c)
{
	if (c->host_write_pages == 0)
		return 0.0;
	return (double)c->nand_write_pages / (double)c->host_write_pages;
}

static void bbssd_stats(struct fm_model *model, const struct fm_stats_sink *sink)
{
	const struct bbssd_dev *m = bbssd_dev_of(model);
	const struct bbssd_counters *c = m->ctr;
	uint64_t emin, emax;
	double emean;
	void *a = sink->arg;

	bbssd_ftl_erase_summary(&m->ftl, &emin, &emax, &emean);
	sink->u64(a, "capacity_bytes", m->p.capacity_bytes);
	sink->u64(a, "nand_bytes", m->p.nand_bytes);
	sink->u64(a, "lines_total", m->p.tt_lines);
	sink->u64(a, "lines_free", m->ftl.ps->free_cnt);
	sink->u64(a, "host_read_cmds", c->host_read_cmds);
	sink->u64(a, "host_write_cmds", c->host_write_cmds);
	sink->u64(a, "host_read_pages", c->host_read_pages);
	sink->u64(a, "host_write_pages", c->host_write_pages);
	sink->u64(a, "unwritten_read_pages", c->unwritten_read_pages);
	sink->u64(a, "nand_read_pages", c->nand_read_pages);
	sink->u64(a, "nand_write_pages", c->nand_write_pages);
	sink->f64(a, "write_amplification", write_amplification(c));
	sink->u64(a, "gc_runs", c->gc_runs);
	sink->u64(a, "gc_fg_runs", c->gc_fg_runs);
	sink->u64(a, "gc_bg_runs", c->gc_bg_runs);
	sink->u64(a, "gc_moved_pages", c->gc_moved_pages);
	sink->u64(a, "gc_bg_moved_pages", c->gc_bg_moved_pages);
	sink->u64(a, "block_erases", c->block_erases);
	sink->u64(a, "line_erases_min", emin);
	sink->u64(a, "line_erases_max", emax);
	sink->f64(a, "line_erases_mean", emean);
	sink->u64(a, "unmapped_pages", c->unmapped_pages);
	sink->u64(a, "alloc_failures", c->alloc_failures);
}

static void bbssd_stats_reset(struct fm_model *model)
{
	struct bbssd_dev *m = bbssd_dev_of(model);

	memset(m->ctr, 0, sizeof(*m->ctr));
}

/* On the submit thread (single_writer): from the next request on. */
static int bbssd_set(struct fm_model *model, const struct fm_kv *kv, unsigned nkv, char *err,
		     size_t errlen)
{
	return bbssd_params_set(&bbssd_dev_of(model)->p, kv, nkv, err, errlen);
}

const struct fm_model_ops fm_bbssd_ops = {
    .name = "bbssd",
    .femu_mode = BBSSD_FEMU_MODE,
    .configure = bbssd_configure,
    .release = bbssd_release,
    .create = bbssd_create,
    .destroy = bbssd_destroy,
    .submit = bbssd_submit,
    .stats = bbssd_stats,
    .stats_reset = bbssd_stats_reset,
    .set = bbssd_set,
    .idle = bbssd_idle,
    .state_size = bbssd_state_size,
    .layout = bbssd_layout,
    .single_writer = true,
};
