/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_undo.h - the sector undo log of a persistent medium: makes every
 * logical block (the device's blk_size) of a write land whole or not at all
 * when the process is killed at any instruction.
 *
 * Before a block is overwritten, its old content goes to the writing
 * thread's slot in the medium and the slot is marked with the block's
 * offset; the new content is copied; the mark is cleared.  After a kill,
 * fm_undo_recover() copies every marked slot back: a block that was being
 * copied reads back as before the write.  Blocks already copied keep their
 * new data, blocks not reached keep their old data: a write in flight at the
 * kill reads back old or new, block by block.
 *
 * Ordering: the mark is stored after the old copy and cleared after the new
 * copy (compiler barriers).  A killed process's stores that were executed
 * are all in the shared mapping; only the order the compiler emits matters.
 * (This covers SIGKILL and crashes of femud, not a host crash or power loss.)
 *
 * Slots: one per writing thread, FM_UNDO_SLOTS in all, taken on a thread's
 * first write (an atomic counter, once per thread).  The log lives in the
 * medium (fm_undo_bytes() bytes); struct fm_undo is the process-local handle.
 *
 * Units: offsets and sizes in bytes.
 */
#ifndef FM_UNDO_H
#define FM_UNDO_H

#include <stddef.h>
#include <stdint.h>

#include "ftl/fm_model.h"

#define FM_UNDO_SLOTS 160    /* >= pollers + control threads that write */
#define FM_UNDO_MAX_BLK 4096 /* largest logical block */

struct fm_undo_slot {
	uint64_t mark; /* offset + 1 of the block being written, 0 = none */
	uint8_t pad[56];
	uint8_t old[FM_UNDO_MAX_BLK];
};

struct fm_undo {
	struct fm_undo_slot *slots; /* FM_UNDO_SLOTS, inside the medium */
	uint32_t blk;		    /* logical block size, bytes */
};

/* Bytes of the log inside a medium. */
size_t fm_undo_bytes(void);

/* Attach to a log area (fm_undo_bytes() long, zero when new). */
void fm_undo_init(struct fm_undo *u, void *area, uint32_t blk);

/*
 * Put back every block that was being written when the process died.
 * Returns the number of blocks restored (0 after a clean stop).
 */
unsigned fm_undo_recover(struct fm_undo *u, void *data, uint64_t capacity);

/* Copy a WRITE request's data to data + req->offset, block by block. */
void fm_undo_write(struct fm_undo *u, void *data, const struct fm_req *req);

/* Zero [offset, offset + len) of data, block by block. */
void fm_undo_zero(struct fm_undo *u, void *data, uint64_t offset, uint64_t len);

#endif /* FM_UNDO_H */
