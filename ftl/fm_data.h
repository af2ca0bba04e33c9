/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_data.h - the data movers every model (nossd.c, bbssd.c) uses to copy
 * between a request's host-virtual segments (struct fm_req's iov) and the
 * device's data region, where byte offset o of the device lives at data + o.
 * No timing, no state.  A transport uses only fm_data_read(),
 * fm_data_read_seg() and fm_data_prefetch(), for the reads of a model with a
 * flat read region (struct fm_model's flat_read).
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
 * one per line), then copies.  A random 4 KiB block out of a 1 GiB region
 * otherwise arrives at the pace the hardware prefetcher ramps up to; all 64
 * misses at once fill in about 25% less time (one copy at a time, 40
 * alternating rounds: ~575 ns against ~800 ns for memcpy alone; rep movsb
 * alone ~770 ns).  A block the look-ahead hinted is already on its way, and
 * the extra hints then cost little: 4 KiB randread QD1 +7.5% (15 of 20
 * pairs), QD32 +7.3% (12 of 12), QD128 +5.2% (9 of 10) head to head.  Not
 * for writes: prefetchw of the destination measured 0.97 at QD1.  Not for a
 * read flagged FM_REQ_PREFETCHED: since the look-ahead hints a read in two
 * halves the hints cover it, and the 64 extra prefetches only cost (4 KiB
 * randread QD32 and QD128: 1.042 and 1.045 without them, in-run A/B).
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
 * up to FM_DATA_PREFETCH_L1_MAX bytes into the first-level cache
 * (prefetcht0), a longer one's first FM_DATA_PREFETCH_MAX bytes into the
 * second level (prefetcht1).  A write (the region is the copy's
 * destination): the first FM_DATA_PREFETCH_WRITE_MAX bytes for writing
 * (prefetchw, first level).  Hints into the first level stall once its
 * line-fill buffers run out (4 KiB randread QD32, 1 GiB device: 1.76M IOPS
 * for all 64 lines, 1.95M for the first 8); hints into the second level do
 * not, and there the whole 4 KiB block beats its first 512 B (two CPUs, 4
 * alternating rounds, medians: QD32 2.00M vs 1.51M, QD128 2.10M vs 1.48M;
 * 2 KiB was in between, prefetcht2 the same as t1).
 */
#ifndef FM_DATA_PREFETCH_L1_MAX
#define FM_DATA_PREFETCH_L1_MAX 512
#endif
#ifndef FM_DATA_PREFETCH_MAX
#define FM_DATA_PREFETCH_MAX 4096
#endif
#ifndef FM_DATA_PREFETCH_WRITE_MAX
#define FM_DATA_PREFETCH_WRITE_MAX 512
#endif
void fm_data_prefetch(const void *data, uint64_t offset, uint64_t len, bool for_write);

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
 * carries FM_REQ_PREFETCHED).  Inline, for a transport's flat reads
 * (pmd/blk_req.h): the call into fm_data_read() and its segment loop
 * measured 1.3% of 4 KiB randread QD128 (in-run A/B).  Not timed for the
 * cost breakdown: a FEMUD_COST_BREAKDOWN build calls fm_data_read() instead.
 */
static inline __attribute__((always_inline)) void
fm_data_read_seg(const void *data, uint64_t offset, void *dst, uint64_t len, bool prefetched)
{
	const uint8_t *src = (const uint8_t *)data + offset;

	fm_data_read_hint(src, len, prefetched);
	memcpy(dst, src, len);
}

#endif /* FM_DATA_H */
