/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_data.c - data movement between a request's host-virtual segments and a
 * device's data region (see fm_data.h).  Shared by every model; no timing,
 * no state.
 */
#include <string.h>

#include "ftl/fm_data.h"

void fm_data_read(const void *data, const struct fm_req *req)
{
	const uint8_t *src = (const uint8_t *)data + req->offset;

	fm_data_read_hint(src, req->len, req->flags & FM_REQ_PREFETCHED);

	for (uint32_t i = 0; i < req->iovcnt; i++) {
		memcpy(req->iov[i].base, src, req->iov[i].len);
		src += req->iov[i].len;
	}
}

void fm_data_write(void *data, const struct fm_req *req)
{
	uint8_t *dst = (uint8_t *)data + req->offset;

	for (uint32_t i = 0; i < req->iovcnt; i++) {
		memcpy(dst, req->iov[i].base, req->iov[i].len);
		dst += req->iov[i].len;
	}
}

void fm_data_zero(void *data, uint64_t offset, uint64_t len)
{
	memset((uint8_t *)data + offset, 0, len);
}

void fm_data_prefetch(const void *data, uint64_t offset, uint64_t len, bool for_write)
{
	const uint8_t *p = (const uint8_t *)data + offset;
	uint64_t off;

	/* the builtin needs constant arguments: two loops */
	if (for_write) {
		len = len < FM_DATA_PREFETCH_WRITE_MAX ? len : FM_DATA_PREFETCH_WRITE_MAX;
		for (off = 0; off < len; off += FM_DATA_LINE)
			__builtin_prefetch(p + off, 1, 3);
	} else {
		fm_data_prefetch_l2(p, len);
	}
}

void fm_data_prefetch_near(const void *data, uint64_t offset, uint64_t len)
{
	const uint8_t *p = (const uint8_t *)data + offset;

	if (len > FM_DATA_PREFETCH_NEAR_MAX)
		len = FM_DATA_PREFETCH_NEAR_MAX;
	for (uint64_t off = 0; off < len; off += FM_DATA_LINE)
		__builtin_prefetch(p + off, 0, 3);
}
