/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_blk.h - what every fuzz target that executes virtio-blk requests
 * checks: a request handed to the model lies inside the device and its data
 * segments add up to its length, every segment is touched (so AddressSanitizer
 * sees a segment that leaves guest memory), and the reply never claims more
 * written bytes than the chain offered.
 */
#ifndef FUZZ_BLK_H
#define FUZZ_BLK_H

#include "fuzz_util.h"
#include "pmd/blk_req.h"
#include "pmd/vq_chain.h"
#include "test/unit/pmd/fake_guest.h"

/* Touch every byte of the segments the way a model would (read or write). */
static inline void fz_touch_iov(const struct fm_iov *iov, uint32_t n, bool write)
{
	volatile uint8_t sink = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *p = iov[i].base;

		FZ_CHECK(p != NULL, "segment %u has no address", i);
		if (write)
			memset(p, 0xa5, iov[i].len);
		else
			for (uint32_t k = 0; k < iov[i].len; k++)
				sink ^= p[k];
	}
	(void)sink;
}

/* Check the model calls one pmd_blk_req_exec() made (m->calls from calls0 on). */
static inline void fz_check_model_reqs(const struct pmd_blk_target *t, const struct fake_model *m,
				       unsigned calls0)
{
	for (unsigned i = calls0; i < m->calls && i < FM_REC_MAX; i++) {
		const struct fm_req *r = &m->req[i];
		uint64_t sum = 0;

		FZ_CHECK(r->len <= t->capacity && r->offset <= t->capacity - r->len,
			 "request %u: offset %llu len %llu outside capacity %llu", i,
			 (unsigned long long)r->offset, (unsigned long long)r->len,
			 (unsigned long long)t->capacity);
		FZ_CHECK(r->offset % 512 == 0 && r->len % 512 == 0, "request %u not sector aligned",
			 i);
		FZ_CHECK(r->op != FM_OP_WRITE || !t->readonly, "write to a readonly device");
		FZ_CHECK(r->op != FM_OP_DISCARD || !t->readonly, "discard on a readonly device");
		FZ_CHECK(r->op != FM_OP_WRITE_ZEROES || !t->readonly,
			 "write-zeroes on a readonly device");
		if (r->op != FM_OP_READ && r->op != FM_OP_WRITE)
			continue;
		for (uint32_t k = 0; k < r->iovcnt; k++)
			sum += r->iov[k].len;
		FZ_CHECK(sum == r->len, "request %u: segments hold %llu bytes, len %llu", i,
			 (unsigned long long)sum, (unsigned long long)r->len);
		/* the model moves the data: a READ writes guest memory, a WRITE reads it */
		fz_touch_iov(r->iov, r->iovcnt, r->op == FM_OP_READ);
	}
}

/* Check one reply against the chain it answers. */
static inline void fz_check_done(const struct pmd_chain *c, enum pmd_chain_result res,
				 const struct pmd_blk_done *d)
{
	FZ_CHECK(d->used_len >= 1, "used_len %u leaves out the status byte", d->used_len);
	FZ_CHECK(d->used_len <= c->wr_len + 1, "used_len %u beyond %llu writable bytes",
		 d->used_len, (unsigned long long)c->wr_len + 1);
	if (res != PMD_CHAIN_OK)
		FZ_CHECK(d->status == VIRTIO_BLK_S_IOERR, "a rejected chain got status %u",
			 d->status);
	FZ_CHECK(d->status == VIRTIO_BLK_S_OK || d->status == VIRTIO_BLK_S_IOERR ||
		     d->status == VIRTIO_BLK_S_UNSUPP,
		 "status %u", d->status);
}

#endif /* FUZZ_BLK_H */
