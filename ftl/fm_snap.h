/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_snap.h - a consistent snapshot of a device's data while it keeps
 * serving writes: copy-on-write of the chunks a write touches before the
 * saver has read them.
 *
 * The daemon creates a snapshot and publishes it in the model's base
 * (struct fm_model.snap) while every poller is parked, at the same instant
 * as it copies the model's state: the snapshot is the device as it was
 * then.  A writer (any poller) calls fm_snap_before_write() for the range
 * it is about to change; the saver calls fm_snap_claim() for each chunk,
 * reads what it returns (the live data, or the copy a writer made) and then
 * fm_snap_done().  Per chunk, one byte of state, changed with atomic
 * compare-and-swap:
 *   LIVE   -> COPYING -> COWED    a writer copies it first (to cow)
 *   LIVE   -> SAVING  -> SAVED    the saver reads it in place; a writer
 *                                 waits until SAVED (one chunk's I/O)
 * COWED and SAVED chunks are never copied again.  The copies live in an
 * address range the size of the device reserved without backing
 * (MAP_NORESERVE): only chunks written during the save take memory.
 *
 * Units: bytes.
 */
#ifndef FM_SNAP_H
#define FM_SNAP_H

#include <stdint.h>

enum fm_snap_state {
	FM_SNAP_LIVE = 0,
	FM_SNAP_COPYING,
	FM_SNAP_COWED,
	FM_SNAP_SAVING,
	FM_SNAP_SAVED,
};

struct fm_snap {
	const uint8_t *data; /* the device's data region */
	uint64_t capacity;
	uint64_t chunk; /* bytes, a power of two */
	uint64_t nchunks;
	uint8_t *st;	/* [nchunks] enum fm_snap_state */
	uint8_t *cow;	/* nchunks * chunk bytes, reserved */
	uint64_t cowed; /* chunks copied by writers (atomic) */
};

/* Set up (nothing published yet).  Returns 0 or -ENOMEM. */
int fm_snap_init(struct fm_snap *s, const void *data, uint64_t capacity, uint64_t chunk);
void fm_snap_fini(struct fm_snap *s);

/* Writer side: [offset, offset + len) is about to change. */
void fm_snap_before_write(struct fm_snap *s, uint64_t offset, uint64_t len);

/* Saver side: chunk c's content as of the snapshot (bytes of chunk c, the last may be short). */
const void *fm_snap_claim(struct fm_snap *s, uint64_t c);
void fm_snap_done(struct fm_snap *s, uint64_t c);

#endif /* FM_SNAP_H */
