/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_snap.c - copy-on-write snapshot of a data region (see fm_snap.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ftl/fm_snap.h"

static void spin(void)
{
	__builtin_ia32_pause();
}

int fm_snap_init(struct fm_snap *s, const void *data, uint64_t capacity, uint64_t chunk)
{
	memset(s, 0, sizeof(*s));
	s->data = data;
	s->capacity = capacity;
	s->chunk = chunk;
	s->nchunks = (capacity + chunk - 1) / chunk;
	s->st = calloc(s->nchunks, 1);
	s->cow = mmap(NULL, s->nchunks * chunk, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->st == NULL || s->cow == MAP_FAILED) {
		if (s->cow == MAP_FAILED)
			s->cow = NULL;
		fm_snap_fini(s);
		return -ENOMEM;
	}
	return 0;
}

void fm_snap_fini(struct fm_snap *s)
{
	free(s->st);
	if (s->cow != NULL)
		munmap(s->cow, s->nchunks * s->chunk);
	s->st = NULL;
	s->cow = NULL;
}

static uint64_t chunk_len(const struct fm_snap *s, uint64_t c)
{
	uint64_t off = c * s->chunk;

	return s->capacity - off < s->chunk ? s->capacity - off : s->chunk;
}

/* One chunk before a write: copy it unless the saver has it or is done with it. */
static void cow_chunk(struct fm_snap *s, uint64_t c)
{
	uint8_t want = FM_SNAP_LIVE;

	for (;;) {
		uint8_t st = __atomic_load_n(&s->st[c], __ATOMIC_ACQUIRE);

		if (st == FM_SNAP_COWED || st == FM_SNAP_SAVED)
			return;
		if (st == FM_SNAP_LIVE &&
		    __atomic_compare_exchange_n(&s->st[c], &want, FM_SNAP_COPYING, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			memcpy(s->cow + c * s->chunk, s->data + c * s->chunk, chunk_len(s, c));
			__atomic_fetch_add(&s->cowed, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&s->st[c], FM_SNAP_COWED, __ATOMIC_RELEASE);
			return;
		}
		want = FM_SNAP_LIVE;
		spin(); /* another writer copies it, or the saver reads it */
	}
}

void fm_snap_before_write(struct fm_snap *s, uint64_t offset, uint64_t len)
{
	if (len == 0)
		return;
	for (uint64_t c = offset / s->chunk; c <= (offset + len - 1) / s->chunk; c++)
		cow_chunk(s, c);
}

const void *fm_snap_claim(struct fm_snap *s, uint64_t c)
{
	uint8_t want = FM_SNAP_LIVE;

	for (;;) {
		uint8_t st = __atomic_load_n(&s->st[c], __ATOMIC_ACQUIRE);

		if (st == FM_SNAP_COWED)
			return s->cow + c * s->chunk;
		if (st == FM_SNAP_LIVE &&
		    __atomic_compare_exchange_n(&s->st[c], &want, FM_SNAP_SAVING, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return s->data + c * s->chunk;
		want = FM_SNAP_LIVE;
		spin(); /* a writer is copying it */
	}
}

void fm_snap_done(struct fm_snap *s, uint64_t c)
{
	uint8_t want = FM_SNAP_SAVING;

	/* SAVING -> SAVED; a COWED chunk stays COWED (its copy is what was saved) */
	__atomic_compare_exchange_n(&s->st[c], &want, FM_SNAP_SAVED, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}
