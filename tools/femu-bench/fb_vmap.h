/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_vmap.h - the verify map (--verify-map FILE): what each 512-byte sector
 * of the device must hold, kept in a file mapped shared, so that it
 * survives femu-bench runs and a backend killed under a run.
 *
 * Per sector: `acked`, the generation of the last write the backend
 * completed, and `pending`, the generation of the last write submitted
 * (set before the request is published).  A read must find acked (all
 * zeros when acked is 0), or pending when a write of it was submitted but
 * never completed (in flight when the backend died).  Any other content is
 * a lost acknowledged write or a torn sector.  A read-only run "settles"
 * what it found (acked = pending = found) so that the next run's
 * expectations are exact again.
 *
 * Each run must use a generation of its own (--verify-gen).
 */
#ifndef FB_VMAP_H
#define FB_VMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fb_verify.h"

struct fb_vmap_ent {
	uint64_t acked;
	uint64_t pending;
};

struct fb_vmap {
	struct fb_vmap_ent *e; /* [nsec] inside the mapping */
	uint64_t nsec;
	void *map;
	size_t map_len;
};

/* Open or create FILE for a device of dev_bytes; refuses a map of another size. */
int fb_vmap_open(struct fb_vmap *m, const char *path, uint64_t dev_bytes, char *err, size_t errlen);
void fb_vmap_close(struct fb_vmap *m);

/* A write of nsec sectors at lba with generation gen is about to be published. */
void fb_vmap_submitted(struct fb_vmap *m, uint64_t lba, uint32_t nsec, uint64_t gen);

/* That write completed with status OK. */
void fb_vmap_acked(struct fb_vmap *m, uint64_t lba, uint32_t nsec, uint64_t gen);

/*
 * Check nsec sectors read at lba against the map.  Returns the index of the
 * first bad sector (with what the check against `acked` said in *res, the
 * generation expected in *want, and what was found) or -1; with settle, good
 * sectors record what they hold.
 */
int fb_vmap_check(struct fb_vmap *m, const void *buf, uint64_t lba, uint32_t nsec, bool settle,
		  enum fb_vres *res, uint64_t *want, uint64_t *found_lba, uint64_t *found_gen);

#endif /* FB_VMAP_H */
