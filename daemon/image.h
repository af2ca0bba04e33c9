/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image.h - device images: a saved medium (written data and model state) in
 * one file, loaded at start (--dev ...,image=FILE) and saved on request
 * (SIGUSR2) or at a clean stop (image_save=1), with io_uring.
 *
 * File layout (offsets in bytes, every part 4 KiB aligned):
 *   0            struct image_hdr (4 KiB): magic, version, the device's
 *                identity (a struct medium_hdr: model, secsz, capacity,
 *                layout options), where the parts are, their checksums,
 *                a checksum of the header itself
 *   4096         index: one struct image_ent per chunk of the device
 *                (IMAGE_CHUNK bytes): where its data is in the file, 0 for
 *                a chunk that is all zeros (not stored), its crc32c
 *   state_off    the model's state block (BlackBox: tables, counters)
 *   data_off     the stored chunks, one after the other
 * Only chunks holding a non-zero byte are stored: a 64 GiB device with
 * 1 GiB written gives an image of about 1 GiB.  Every part has a crc32c
 * (ISA-L), so a corrupted image is refused, never loaded.
 *
 * Saving runs on a helper thread: the image is the device as it was when
 * the save began (every poller parked for the time it takes to copy the
 * model's state and publish a copy-on-write snapshot, ftl/fm_snap.h), while
 * the device goes on serving I/O.  It is written to FILE.tmp.PID with
 * O_DIRECT where the file system allows it (IMAGE_QD chunk writes in
 * flight), fsync'ed and renamed over FILE: a failed save (no space, I/O
 * error, femud killed) leaves the old image as it was.
 */
#ifndef FEMUD_IMAGE_H
#define FEMUD_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/medium.h"
#include "daemon/options.h"
#include "ftl/fm_model.h"

#define IMAGE_MAGIC "FEMUDIMG"
#define IMAGE_VERSION 1u
#define IMAGE_CHUNK (1u << 20) /* bytes */
#define IMAGE_QD 16	       /* chunk I/Os in flight */

struct image_hdr {
	char magic[8];
	uint32_t version;
	uint32_t crc; /* crc32c of this header with crc = 0 */
	uint64_t file_bytes;
	uint64_t chunk, nchunks, stored_chunks;
	uint64_t index_off, index_bytes;
	uint64_t state_off, state_bytes;
	uint64_t data_off;
	uint32_t index_crc, state_crc;
	struct medium_hdr dev; /* the device's identity */
};

struct image_ent {
	uint64_t off; /* where the chunk is stored, 0 = all zeros */
	uint32_t crc; /* crc32c of the chunk */
	uint32_t len; /* bytes of the chunk (the last one may be short) */
};

/* What a save or load works on. */
struct image_dev {
	const struct femud_dev_opts *o;
	const struct medium_layout
	    *lay;   /* the device's identity, from before the model was created */
	void *data; /* capacity_bytes */
	void *state;
	size_t state_bytes;
	struct fm_model
	    *model;	  /* save: where the snapshot is published; NULL when no poller runs */
	bool region_zero; /* load: data is all zeros already (chunks not stored are skipped) */
};

/*
 * Load FILE into data (all of it: chunks not stored become zeros) and
 * state.  Refuses an image of another device or a damaged one with -EINVAL
 * (exit status 2) and a message naming what is wrong; FILE is only read.
 */
int image_load(const char *path, const struct image_dev *d, char *err, size_t errlen);

/* Check FILE's header, index and state (nothing is written; d->data / d->state unused). */
int image_probe(const char *path, const struct image_dev *d, char *err, size_t errlen);

/* Save to FILE (see above); logs progress.  Returns 0 or a negative errno with a message. */
int image_save(const char *path, const struct image_dev *d, char *err, size_t errlen);

#endif /* FEMUD_IMAGE_H */
