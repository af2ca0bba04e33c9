/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * medium.h - a device's persistent medium (--dev ...,mem_path=FILE): the
 * file's layout and header, creating, checking and mapping it.
 *
 * Layout of FILE (every offset from its start, bytes):
 *   [0, capacity)                 the device's data at its logical offsets
 *   [undo_off, +undo_bytes)       the sector undo log (ftl/fm_undo.h)
 *   [state_off, +state_bytes)     the model's state (e.g. BlackBox tables)
 *   [file_bytes - 4096, file_bytes) the header (struct medium_hdr)
 * file_bytes is rounded up to the file system's page size (hugetlbfs).  The
 * header is at the end so that the data starts page-aligned at 0, and it is
 * written last when a medium is made: a file with an all-zero header of the
 * expected size is an interrupted first start and is made again.
 *
 * The header records the format version, the model, the block size, the
 * capacity and the model's layout options ("nchs=2,..."); a FILE that does
 * not match the --dev options is refused with a message naming the first
 * difference, and the file is left as it was (format=1 makes it anew).
 */
#ifndef FEMUD_MEDIUM_H
#define FEMUD_MEDIUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/options.h"
#include "ftl/fm_undo.h"
#include "numa/mbe.h"

#define MEDIUM_MAGIC "FEMUDMED"
#define MEDIUM_VERSION 1u
#define MEDIUM_HDR_BYTES 4096u
#define MEDIUM_LAYOUT_LEN 1024

struct medium_hdr {
	char magic[8];	  /* MEDIUM_MAGIC, stored last */
	uint32_t version; /* MEDIUM_VERSION */
	uint32_t crc;	  /* crc32c of the header with crc = 0 */
	uint64_t file_bytes;
	uint64_t capacity_bytes;
	uint64_t undo_off, undo_bytes;
	uint64_t state_off, state_bytes;
	uint32_t femu_mode;
	uint32_t secsz;
	char model[16];
	char layout[MEDIUM_LAYOUT_LEN]; /* the model's layout options */
};

/* Where everything lies for a device's options (computed, nothing opened). */
struct medium_layout {
	uint64_t capacity_bytes, undo_off, undo_bytes, state_off, state_bytes, hdr_off, file_bytes;
	size_t page_size;
	char layout[MEDIUM_LAYOUT_LEN];
};

struct medium {
	int fd;
	struct medium_layout lay;
	struct medium_hdr *hdr; /* inside the mapping */
	void *data, *state;
	struct fm_undo undo;
	bool fresh;	   /* made now: the model initialises its state */
	unsigned restored; /* blocks the undo log put back */
	bool in_memory;	   /* tmpfs / hugetlbfs */
	const char *fsname;
};

/*
 * Open (creating) o->mem_path, check it against o (refusing a mismatch with
 * -EINVAL and a message naming it, the file untouched), or make it anew when
 * it is new, empty or o->format is set; map it on `node` into *mem and roll
 * the undo log back.  Returns 0 or a negative errno with a message in err.
 */
int medium_open(struct medium *md, const struct femud_dev_opts *o, int node, unsigned mbe_flags,
		struct mbe_region *mem, char *err, size_t errlen);

/* A made medium becomes valid: write its header (after the model set up its state). */
void medium_commit(struct medium *md, const struct femud_dev_opts *o);

/* Close the file (the mapping is freed with mbe_free). */
void medium_close(struct medium *md);

/* Check a header read from a file against a layout; hint ends the message (images use it). */
int medium_hdr_check(const struct medium_hdr *h, const struct femud_dev_opts *o,
		     const struct medium_layout *lay, const char *what, const char *hint, char *err,
		     size_t errlen);

/* The layout a device's options give, for a file system with `page_size` pages. */
void medium_layout_of(const struct femud_dev_opts *o, size_t page_size, struct medium_layout *lay);

/* Fill a header for o (crc set, magic included). */
void medium_hdr_fill(struct medium_hdr *h, const struct femud_dev_opts *o,
		     const struct medium_layout *lay);

#endif /* FEMUD_MEDIUM_H */
