/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_data.h - the data movers every model (nossd.c, bbssd.c) uses to copy
 * between a request's host-virtual segments (struct fm_req's iov) and the
 * device's data region, where byte offset o of the device lives at data + o.
 * No timing, no state.  A transport uses only fm_data_read(),
 * fm_data_read_seg(), fm_data_prefetch() and fm_data_prefetch_near(), for
 * the reads of a model with a flat read region (struct fm_model's
 * flat_read).
 */
#ifndef FM_DATA_H
#define FM_DATA_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ftl/fm_model.h"

/*
 * Copy [req->offset, + req->len) of the region to / from the request's iov.
 * A read longer than FM_DATA_READ_PREFETCH_MIN bytes first asks for its
 * first FM_DATA_PREFETCH_MAX bytes into the second-level cache (prefetcht1,
 * one per line), then copies: a random block otherwise arrives at the pace
 * the hardware prefetcher ramps up to, and all its misses at once fill
 * sooner.  Not for writes (prefetchw of the destination measured slower).
 * Not for a read flagged FM_REQ_PREFETCHED: the look-ahead's hints cover it
 * already, and the extra prefetches only cost.
 */
#ifndef FM_DATA_READ_PREFETCH_MIN
#define FM_DATA_READ_PREFETCH_MIN 512
#endif
void fm_data_read(const void *data, const struct fm_req *req);
void fm_data_write(void *data, const struct fm_req *req);
/* Zero [offset, offset + len) of the region (bytes). */
void fm_data_zero(void *data, uint64_t offset, uint64_t len);

/*
 * Prefetch the start of [offset, offset + len) of the data region, without
 * faulting: a hint only.  A read (the device's data is the copy's source):
 * its first FM_DATA_PREFETCH_MAX bytes into the second-level cache
 * (prefetcht1), whatever its length.  A write (the region is the copy's
 * destination): the first FM_DATA_PREFETCH_WRITE_MAX bytes for writing
 * (prefetchw, first level).  Hints into the first level stall once its
 * line-fill buffers run out, a whole 4 KiB block's sooner than a 512 B
 * read's; hints into the second level do not, and there the whole block
 * beats its first part.
 */
#ifndef FM_DATA_PREFETCH_MAX
#define FM_DATA_PREFETCH_MAX 4096
#endif
#ifndef FM_DATA_PREFETCH_WRITE_MAX
#define FM_DATA_PREFETCH_WRITE_MAX 512
#endif
void fm_data_prefetch(const void *data, uint64_t offset, uint64_t len, bool for_write);

/*
 * The near hint of a read that is wanted next: the first
 * FM_DATA_PREFETCH_NEAR_MAX bytes of [offset, offset + len) into the
 * first-level cache (prefetcht0), the rest left to the hardware prefetcher,
 * which streams a block on from its first lines.  Which of this and
 * fm_data_prefetch()'s second-level hint is faster depends on the processor
 * and the moment: the transport measures (pmd/vq_tune.h).
 */
#ifndef FM_DATA_PREFETCH_NEAR_MAX
#define FM_DATA_PREFETCH_NEAR_MAX 512
#endif
void fm_data_prefetch_near(const void *data, uint64_t offset, uint64_t len);

/* Cache line size assumed by the prefetches, bytes. */
#define FM_DATA_LINE 64

/*
 * prefetcht1 of every line of the first FM_DATA_PREFETCH_MAX bytes of
 * [p, p + len): the whole block's misses at once.  Always inlined: GCC 12
 * finds a function that only prefetches free of side effects, and where it
 * does not inline it (a second loop was enough) it deletes the call.
 */
static inline __attribute__((always_inline)) void fm_data_prefetch_l2(const uint8_t *p,
								      uint64_t len)
{
	if (len > FM_DATA_PREFETCH_MAX)
		len = FM_DATA_PREFETCH_MAX;
	for (uint64_t off = 0; off < len; off += FM_DATA_LINE)
		__builtin_prefetch(p + off, 0, 2);
}

/* fm_data_read()'s hint before a copy of len bytes from src (see there). */
static inline __attribute__((always_inline)) void fm_data_read_hint(const uint8_t *src,
								    uint64_t len, bool prefetched)
{
	if (len > FM_DATA_READ_PREFETCH_MIN && !prefetched)
		fm_data_prefetch_l2(src, len);
}

/*
 * fm_data_read() of a read into one segment: len bytes at byte offset of the
 * region into dst, first hinted as there unless prefetched (the request
 * carries FM_REQ_PREFETCHED).  Inline, for a transport's flat reads: the
 * call into fm_data_read() and its segment loop are a measurable share of a
 * small read.
 */
static inline __attribute__((always_inline)) void
fm_data_read_seg(const void *data, uint64_t offset, void *dst, uint64_t len, bool prefetched)
{
	const uint8_t *src = (const uint8_t *)data + offset;

	fm_data_read_hint(src, len, prefetched);
	memcpy(dst, src, len);
}

#endif /* FM_DATA_H */
