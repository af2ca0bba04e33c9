/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blk_req.c - virtio-blk request types served by femud (see blk_req.h):
 * IN, OUT, FLUSH, GET_ID, DISCARD, WRITE_ZEROES; every other type is
 * answered VIRTIO_BLK_S_UNSUPP.
 */
#include <string.h>

#include <rte_byteorder.h>

#include "pmd/blk_req.h"

void pmd_blk_req_read_other(const struct pmd_blk_target *t, uint64_t offset, uint64_t len,
			    const struct fm_iov *iov, uint32_t iovcnt, uint32_t flags,
			    uint64_t now_ns, struct pmd_blk_done *d)
{
	const struct fm_req req = {.op = FM_OP_READ,
				   .flags = flags & FM_REQ_PREFETCHED,
				   .offset = offset,
				   .len = len,
				   .iov = iov,
				   .iovcnt = iovcnt};
	uint64_t due = now_ns;
	enum fm_status s;

	if (t->model->flat_read != NULL) {
		PMD_COST_COPY_BEGIN(copy_t0);
		fm_data_read(t->model->flat_read, &req);
		PMD_COST_COPY_END(copy_t0);
		pmd_blk_done_read(d, len, now_ns);
		return;
	}
	s = t->ops->submit(t->model, &req, now_ns, &due);
	pmd_blk_done_read(d, len, due > now_ns ? due : now_ns);
	if (s != FM_S_OK) {
		d->status = pmd_blk_status_of(s);
		d->used_len = 1;
		d->rd_bytes = 0;
	}
}

/* Hand req (not a read: pmd_blk_req_read()) to t's model; its status and due time into d. */
static void submit(const struct pmd_blk_target *t, const struct fm_req *req, uint64_t now,
		   struct pmd_blk_done *d)
{
	uint64_t due = now;
	enum fm_status s = t->ops->submit(t->model, req, now, &due);

	d->status = pmd_blk_status_of(s);
	if (due > d->due_ns)
		d->due_ns = due;
}

static void exec_write(const struct pmd_blk_target *t, const struct pmd_chain *c, uint64_t now,
		       struct pmd_blk_done *d)
{
	struct fm_req req = {.op = FM_OP_WRITE, .len = c->rd_len, .iov = c->iov, .iovcnt = c->nrd};

	if (t->readonly || !pmd_blk_rw_ok(t, c, req.len, c->wr_len, &req.offset))
		return;
	if (req.len == 0) {
		d->status = VIRTIO_BLK_S_OK;
		return;
	}
	submit(t, &req, now, d);
	if (d->status == VIRTIO_BLK_S_OK)
		d->wr_bytes = req.len;
}

static void exec_flush(const struct pmd_blk_target *t, uint64_t now, struct pmd_blk_done *d)
{
	struct fm_req req = {.op = FM_OP_FLUSH};

	submit(t, &req, now, d);
}

static void exec_get_id(const struct pmd_blk_target *t, const struct pmd_chain *c,
			struct pmd_blk_done *d)
{
	uint8_t id[PMD_SERIAL_LEN];
	uint64_t n = c->wr_len < sizeof(id) ? c->wr_len : sizeof(id);

	if (c->rd_len != 0 || c->wr_len == 0)
		return;
	memcpy(id, t->serial, sizeof(id));
	d->used_len += (uint32_t)pmd_iov_copy_in(&c->iov[c->nrd], c->nwr, id, n);
	d->status = VIRTIO_BLK_S_OK;
}

/* One segment of a discard / write-zeroes request, validated. */
struct dwz_seg {
	uint64_t offset;
	uint64_t len;
	uint32_t flags;
};

/* Read and check every segment; returns a VIRTIO_BLK_S_* status. */
static uint8_t dwz_check(const struct pmd_blk_target *t, const struct pmd_chain *c, bool zeroes,
			 struct dwz_seg *segs, uint32_t *nsegs)
{
	uint32_t n = (uint32_t)(c->rd_len / sizeof(struct virtio_blk_discard_write_zeroes));
	uint32_t allowed = zeroes ? VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP : 0;
	uint32_t i;

	if (c->wr_len != 0 || n == 0 || n > PMD_BLK_MAX_DWZ_SEG ||
	    c->rd_len % sizeof(struct virtio_blk_discard_write_zeroes) != 0)
		return VIRTIO_BLK_S_IOERR;
	for (i = 0; i < n; i++) {
		struct virtio_blk_discard_write_zeroes s;
		uint32_t num;

		pmd_iov_copy_out(c->iov, c->nrd, (uint64_t)i * sizeof(s), &s, sizeof(s));
		num = rte_le_to_cpu_32(s.num_sectors);
		segs[i].flags = rte_le_to_cpu_32(s.flags);
		if (segs[i].flags & ~allowed)
			return VIRTIO_BLK_S_UNSUPP;
		segs[i].len = (uint64_t)num << PMD_BLK_SECTOR_SHIFT;
		if (num > PMD_BLK_MAX_DWZ_SECTORS ||
		    !pmd_blk_range_ok(t, rte_le_to_cpu_64(s.sector), segs[i].len, &segs[i].offset))
			return VIRTIO_BLK_S_IOERR;
	}
	*nsegs = n;
	return VIRTIO_BLK_S_OK;
}

static void exec_dwz(const struct pmd_blk_target *t, const struct pmd_chain *c, bool zeroes,
		     uint64_t now, struct pmd_blk_done *d)
{
	struct dwz_seg segs[PMD_BLK_MAX_DWZ_SEG];
	uint32_t n = 0;
	uint32_t i;

	if (t->readonly)
		return;
	d->status = dwz_check(t, c, zeroes, segs, &n);
	for (i = 0; i < n && d->status == VIRTIO_BLK_S_OK; i++) {
		struct fm_req req = {
		    .op = zeroes ? FM_OP_WRITE_ZEROES : FM_OP_DISCARD,
		    .flags =
			(segs[i].flags & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP) ? FM_REQ_UNMAP : 0,
		    .offset = segs[i].offset,
		    .len = segs[i].len,
		};

		if (req.len == 0)
			continue;
		submit(t, &req, now, d);
	}
}

FM_HOT_TEXT void pmd_blk_req_exec_other(const struct pmd_blk_target *t, const struct pmd_chain *c,
					enum pmd_chain_result parsed, uint64_t now_ns,
					struct pmd_blk_done *d)
{
	d->status = VIRTIO_BLK_S_IOERR;
	d->used_len = 1;
	d->due_ns = now_ns;
	d->rd_bytes = d->wr_bytes = 0;
	if (parsed != PMD_CHAIN_OK)
		return;
	switch (rte_le_to_cpu_32(c->hdr.type)) {
	case VIRTIO_BLK_T_IN: /* pmd_blk_req_exec() reads inline: only a direct call gets here */
		pmd_blk_req_exec_read(t, c, now_ns, d);
		break;
	case VIRTIO_BLK_T_OUT:
		exec_write(t, c, now_ns, d);
		break;
	case VIRTIO_BLK_T_FLUSH:
		exec_flush(t, now_ns, d);
		break;
	case VIRTIO_BLK_T_GET_ID:
		exec_get_id(t, c, d);
		break;
	case VIRTIO_BLK_T_DISCARD:
		exec_dwz(t, c, false, now_ns, d);
		break;
	case VIRTIO_BLK_T_WRITE_ZEROES:
		exec_dwz(t, c, true, now_ns, d);
		break;
	default:
		d->status = VIRTIO_BLK_S_UNSUPP;
		break;
	}
}

void pmd_blk_req_prefetch(const struct pmd_blk_target *t, const struct pmd_chain_hint *h, bool near)
{
	enum fm_op op;
	uint64_t offset;

	if (h->type == VIRTIO_BLK_T_IN)
		op = FM_OP_READ;
	else if (h->type == VIRTIO_BLK_T_OUT && !t->readonly)
		op = FM_OP_WRITE;
	else
		return;
	if (t->ops->prefetch == NULL || h->data_len == 0 ||
	    !pmd_blk_range_ok(t, h->sector, h->data_len, &offset))
		return;
	if (op != FM_OP_READ || t->model->flat_read == NULL)
		t->ops->prefetch(t->model, op, offset, h->data_len);
	else if (near)
		fm_data_prefetch_near(t->model->flat_read, offset, h->data_len);
	else
		fm_data_prefetch(t->model->flat_read, offset, h->data_len, false);
}
