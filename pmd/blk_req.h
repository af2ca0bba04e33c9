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

#include "ftl/fm_model.h"
#include "pmd/pmd.h"
#include "pmd/vq_chain.h"

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
 * Execute a chain that pmd_chain_parse() accepted (PMD_CHAIN_OK) or
 * answer one it rejected (PMD_CHAIN_IOERR).  Does not write the status
 * byte: the caller does at completion time.
 */
void pmd_blk_req_exec(const struct pmd_blk_target *t, const struct pmd_chain *c,
		      enum pmd_chain_result parsed, uint64_t now_ns, struct pmd_blk_done *done);

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
