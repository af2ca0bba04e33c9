/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blk_req.h - virtio-blk request semantics on top of a parsed chain.
 *
 * Owns: the checks that depend on the request type and on the device
 * (sector range with overflow checks, 512-byte multiples, directions of the
 * data, readonly, discard / write-zeroes segment lists, GET_ID) and the
 * translation of a valid request into fm_req calls of the device model.
 * Units: bytes unless a name says sectors (512 B); times in ns.
 */
#ifndef PMD_BLK_REQ_H
#define PMD_BLK_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>

#include "ftl/fm_data.h"
#include "ftl/fm_model.h"
#include "pmd/pmd.h"
#include "pmd/pmd_measure.h"
#include "pmd/vq_chain.h"

/* virtio-blk's sector: the unit of a request's sector field. */
#define PMD_BLK_SECTOR_SHIFT 9
#define PMD_BLK_SECTOR_SIZE (1u << PMD_BLK_SECTOR_SHIFT) /* bytes */

/* Limits advertised in the config space and enforced per request. */
/*
 * Data segments per request: a chain (header + data + status) must fit in
 * the queue, and QEMU's default vhost-user-blk queue size is 128.
 */
#define PMD_BLK_SEG_MAX 126
#define PMD_BLK_SIZE_MAX (1u << 20)	   /* bytes per segment */
#define PMD_BLK_MAX_DWZ_SEG 16		   /* discard / write-zeroes segments */
#define PMD_BLK_MAX_DWZ_SECTORS (1u << 22) /* sectors per segment (2 GiB) */

/* The device as the request layer sees it; read-only on the I/O path. */
struct pmd_blk_target {
	uint64_t capacity; /* bytes, multiple of 512 */
	uint32_t blk_size; /* bytes */
	bool readonly;
	char serial[PMD_SERIAL_LEN]; /* not NUL terminated when 20 bytes long */
	const struct fm_model_ops *ops;
	struct fm_model *model;
};

/* Outcome of one request. */
struct pmd_blk_done {
	uint8_t status;	   /* VIRTIO_BLK_S_* */
	uint32_t used_len; /* bytes written into device-writable buffers, status included */
	uint64_t due_ns;   /* completion time; <= now means now */
	uint64_t rd_bytes; /* data bytes read from the device (IN) */
	uint64_t wr_bytes; /* data bytes written to the device (OUT) */
};

/*
 * Byte offset of the device range [sector, + len bytes) in *offset; false
 * when the range does not lie inside the device (or its offset overflows).
 */
static inline bool pmd_blk_range_ok(const struct pmd_blk_target *t, uint64_t sector, uint64_t len,
				    uint64_t *offset)
{
	if (sector > (UINT64_MAX >> PMD_BLK_SECTOR_SHIFT))
		return false;
	*offset = sector << PMD_BLK_SECTOR_SHIFT;
	return len <= t->capacity && *offset <= t->capacity - len;
}

/* VIRTIO_BLK_S_* of a model's status. */
static inline uint8_t pmd_blk_status_of(enum fm_status s)
{
	return s == FM_S_OK	  ? VIRTIO_BLK_S_OK
	       : s == FM_S_UNSUPP ? VIRTIO_BLK_S_UNSUPP
				  : VIRTIO_BLK_S_IOERR;
}

/*
 * The data of a read (len bytes in the device-writable segments) or a write
 * (len bytes in the readable ones) of c: false when it has a segment of the
 * other direction (stray bytes), an empty descriptor (virtio-blk: no
 * buffer, never a silent OK), a length that is no whole number of sectors
 * or a range outside the device; else its byte offset in *offset.
 */
static inline bool pmd_blk_rw_ok(const struct pmd_blk_target *t, const struct pmd_chain *c,
				 uint64_t len, uint64_t stray, uint64_t *offset)
{
	return c->nempty == 0 && stray == 0 && len % PMD_BLK_SECTOR_SIZE == 0 &&
	       pmd_blk_range_ok(t, rte_le_to_cpu_64(c->hdr.sector), len, offset);
}

/* A read of len bytes is done: d says so (OK, data and status byte written, now). */
static inline void pmd_blk_done_read(struct pmd_blk_done *d, uint64_t len, uint64_t now_ns)
{
	d->status = VIRTIO_BLK_S_OK;
	d->used_len = 1 + (uint32_t)len;
	d->due_ns = now_ns;
	d->rd_bytes = len;
	d->wr_bytes = 0;
}

/* pmd_blk_req_read() of every read but a flat one into one segment (blk_req.c). */
void pmd_blk_req_read_other(const struct pmd_blk_target *t, uint64_t offset, uint64_t len,
			    const struct fm_iov *iov, uint32_t iovcnt, uint32_t flags,
			    uint64_t now_ns, struct pmd_blk_done *d);

/*
 * The one read of a device, wherever pmd/ reads: len bytes (> 0) at byte
 * offset (inside the device) into iov[0..iovcnt), flags FM_REQ_* (only
 * FM_REQ_PREFETCHED applies), answered in d.  It decides between a copy out
 * of the model's flat read region (struct fm_model's flat_read: NoSSD), at
 * once, and the model's submit().  Inline, and a flat read into one segment
 * copied inline (fm_data_read_seg()): the commonest request then costs the
 * request path no call and builds no request.
 */
static inline __attribute__((always_inline)) void
pmd_blk_req_read(const struct pmd_blk_target *t, uint64_t offset, uint64_t len,
		 const struct fm_iov *iov, uint32_t iovcnt, uint32_t flags, uint64_t now_ns,
		 struct pmd_blk_done *d)
{
	const void *flat = t->model->flat_read;

	if (flat != NULL && iovcnt == 1) {
		PMD_COST_COPY_BEGIN(copy_t0);
		fm_data_read_seg(flat, offset, iov[0].base, len, flags & FM_REQ_PREFETCHED);
		PMD_COST_COPY_END(copy_t0);
		pmd_blk_done_read(d, len, now_ns);
		return;
	}
	pmd_blk_req_read_other(t, offset, len, iov, iovcnt, flags, now_ns, d);
}

/* An accepted IN request (pmd_blk_req_exec()): checked, then pmd_blk_req_read(). */
static inline __attribute__((always_inline)) void
pmd_blk_req_exec_read(const struct pmd_blk_target *t, const struct pmd_chain *c, uint64_t now_ns,
		      struct pmd_blk_done *d)
{
	uint64_t offset;

	if (!pmd_blk_rw_ok(t, c, c->wr_len, c->rd_len, &offset)) {
		d->status = VIRTIO_BLK_S_IOERR;
		d->used_len = 1;
		d->due_ns = now_ns;
		d->rd_bytes = d->wr_bytes = 0;
		return;
	}
	if (c->wr_len == 0) {
		pmd_blk_done_read(d, 0, now_ns);
		return;
	}
	pmd_blk_req_read(t, offset, c->wr_len, &c->iov[c->nrd], c->nwr, c->fm_flags, now_ns, d);
}

/* pmd_blk_req_exec() of every request but an accepted IN (blk_req.c). */
void pmd_blk_req_exec_other(const struct pmd_blk_target *t, const struct pmd_chain *c,
			    enum pmd_chain_result parsed, uint64_t now_ns,
			    struct pmd_blk_done *done);

/*
 * Execute a chain that pmd_chain_parse() accepted (PMD_CHAIN_OK) or
 * answer one it rejected (PMD_CHAIN_IOERR).  Does not write the status
 * byte: the caller does at completion time.  Inline, with the read: the
 * commonest request is served in the caller.
 */
static inline __attribute__((always_inline)) void
pmd_blk_req_exec(const struct pmd_blk_target *t, const struct pmd_chain *c,
		 enum pmd_chain_result parsed, uint64_t now_ns, struct pmd_blk_done *done)
{
	if (parsed == PMD_CHAIN_OK && rte_le_to_cpu_32(c->hdr.type) == VIRTIO_BLK_T_IN)
		pmd_blk_req_exec_read(t, c, now_ns, done);
	else
		pmd_blk_req_exec_other(t, c, parsed, now_ns, done);
}

/*
 * Hand the model a prefetch hint for a read or write request peeked ahead
 * (see pmd_chain_peek()) when the model has a prefetch op and the hinted
 * range lies inside the device; any other hint is ignored.  A read of a
 * model with a flat read region is hinted here: near, its first bytes into
 * the first-level cache (fm_data_prefetch_near(): the request is served
 * next or so), else into the second level (fm_data_prefetch()).  Other
 * models get the range through their prefetch op either way.
 */
void pmd_blk_req_prefetch(const struct pmd_blk_target *t, const struct pmd_chain_hint *h,
			  bool near);

/* Does the target's model want pmd_blk_req_idle() calls (idle op, single writer)? */
static inline bool pmd_blk_req_wants_idle(const struct pmd_blk_target *t)
{
	return t->ops->idle != NULL && t->ops->single_writer;
}

/*
 * A sweep found no new request for this target: let its model work on its
 * own.  True while the model has such work left (do not sleep).
 */
static inline bool pmd_blk_req_idle(const struct pmd_blk_target *t, uint64_t now_ns)
{
	return t->ops->idle(t->model, now_ns);
}

#endif /* PMD_BLK_REQ_H */
