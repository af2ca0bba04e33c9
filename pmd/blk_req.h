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

/* pmd_blk_req_exec() for any request; see there. */
void pmd_blk_req_exec_any(const struct pmd_blk_target *t, const struct pmd_chain *c,
			  enum pmd_chain_result parsed, uint64_t now_ns, struct pmd_blk_done *done);

/*
 * Serve c at once if it is the commonest request of a model with a flat
 * read region (struct fm_model's flat_read, NoSSD): an accepted IN request
 * with its data in one device-writable segment, no readable data, no empty
 * descriptor, a whole number of sectors inside the device.  false: not such
 * a request, nothing done.  What pmd_blk_req_exec_any() does for it, without
 * its calls (request build, model_submit(), fm_data_read()): those measured
 * 2.1% of 4 KiB randread QD128 (in-run A/B).
 */
static inline __attribute__((always_inline)) bool
pmd_blk_req_flat_read(const struct pmd_blk_target *t, const struct pmd_chain *c,
		      enum pmd_chain_result parsed, uint64_t now_ns, struct pmd_blk_done *d)
{
	const void *flat = t->model->flat_read;
	uint64_t len = c->wr_len, offset;

	if (flat == NULL || parsed != PMD_CHAIN_OK ||
	    rte_le_to_cpu_32(c->hdr.type) != VIRTIO_BLK_T_IN || c->nwr != 1 || c->nrd != 0 ||
	    c->rd_len != 0 || c->nempty != 0 || len == 0 || len % PMD_BLK_SECTOR_SIZE != 0 ||
	    !pmd_blk_range_ok(t, rte_le_to_cpu_64(c->hdr.sector), len, &offset))
		return false;
	{
		PMD_COST_COPY_BEGIN(copy_t0);
		fm_data_read_seg(flat, offset, c->iov[0].base, len,
				 c->fm_flags & FM_REQ_PREFETCHED);
		PMD_COST_COPY_END(copy_t0);
	}
	d->status = VIRTIO_BLK_S_OK;
	d->used_len = 1 + (uint32_t)len;
	d->due_ns = now_ns;
	d->rd_bytes = len;
	d->wr_bytes = 0;
	return true;
}

/*
 * Execute a chain that pmd_chain_parse() accepted (PMD_CHAIN_OK) or
 * answer one it rejected (PMD_CHAIN_IOERR).  Does not write the status
 * byte: the caller does at completion time.  Inline: a flat read
 * (pmd_blk_req_flat_read()) is served in the caller.
 */
static inline __attribute__((always_inline)) void
pmd_blk_req_exec(const struct pmd_blk_target *t, const struct pmd_chain *c,
		 enum pmd_chain_result parsed, uint64_t now_ns, struct pmd_blk_done *done)
{
	if (!pmd_blk_req_flat_read(t, c, parsed, now_ns, done))
		pmd_blk_req_exec_any(t, c, parsed, now_ns, done);
}

/*
 * Hand req to t's model (its submit()), or, for a read of a model with a
 * flat read region (struct fm_model's flat_read), copy it out of that region
 * here with fm_data_read(): what submit() would do, without the call through
 * the ops table.  The model's status; *due_ns its completion time (now_ns for
 * a flat read).  req must lie inside the device.
 */
enum fm_status pmd_blk_req_submit(const struct pmd_blk_target *t, const struct fm_req *req,
				  uint64_t now_ns, uint64_t *due_ns);

/*
 * Hand the model a prefetch hint for a read or write request peeked ahead
 * (see pmd_chain_peek()) when the model has a prefetch op and the hinted
 * range lies inside the device; any other hint is ignored.  A read of a
 * model with a flat read region is hinted here (fm_data_prefetch()).
 */
void pmd_blk_req_prefetch(const struct pmd_blk_target *t, const struct pmd_chain_hint *h);

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
