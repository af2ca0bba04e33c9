/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_undo.c - the sector undo log of a persistent medium (see fm_undo.h):
 * block-by-block writes through a per-thread slot, and recovery at start.
 */
#include <string.h>

#include "ftl/fm_undo.h"

#define BARRIER() __asm__ __volatile__("" ::: "memory")

/* Thread -> slot index, taken on the thread's first write (any medium). */
static unsigned fm_undo_next_slot;
static __thread int fm_undo_tid = -1;

static struct fm_undo_slot *my_slot(struct fm_undo *u)
{
	if (__builtin_expect(fm_undo_tid < 0, 0))
		fm_undo_tid = (int)(__atomic_fetch_add(&fm_undo_next_slot, 1, __ATOMIC_RELAXED) %
				    FM_UNDO_SLOTS);
	return &u->slots[fm_undo_tid];
}

size_t fm_undo_bytes(void)
{
	return FM_UNDO_SLOTS * sizeof(struct fm_undo_slot);
}

void fm_undo_init(struct fm_undo *u, void *area, uint32_t blk)
{
	u->slots = area;
	u->blk = blk;
}

unsigned fm_undo_recover(struct fm_undo *u, void *data, uint64_t capacity)
{
	unsigned n = 0;

	for (unsigned i = 0; i < FM_UNDO_SLOTS; i++) {
		struct fm_undo_slot *s = &u->slots[i];
		uint64_t off = s->mark - 1;

		if (s->mark == 0)
			continue;
		if (off + u->blk <= capacity && off % u->blk == 0) {
			memcpy((uint8_t *)data + off, s->old, u->blk);
			n++;
		}
		BARRIER();
		s->mark = 0;
	}
	return n;
}

/* Save the block at off, mark the slot; the caller then writes it and calls unmark. */
static inline void mark(struct fm_undo_slot *s, const uint8_t *blk_addr, uint64_t off, uint32_t bs)
{
	memcpy(s->old, blk_addr, bs);
	BARRIER();
	s->mark = off + 1;
	BARRIER();
}

static inline void unmark(struct fm_undo_slot *s)
{
	BARRIER();
	s->mark = 0;
}

/* Source cursor over a request's segments. */
struct iov_cur {
	const struct fm_iov *iov;
	uint32_t i, at;
};

static void cur_copy(struct iov_cur *c, uint8_t *dst, uint32_t n)
{
	while (n > 0) {
		uint32_t k = c->iov[c->i].len - c->at;

		if (k > n)
			k = n;
		memcpy(dst, (const uint8_t *)c->iov[c->i].base + c->at, k);
		dst += k;
		n -= k;
		c->at += k;
		if (c->at == c->iov[c->i].len) {
			c->i++;
			c->at = 0;
		}
	}
}

/*
 * A request's offset and length are multiples of 512, not always of blk:
 * the pieces at the ends cover part of a block, still saved whole.
 */
static uint32_t piece(uint64_t off, uint64_t end, uint32_t bs)
{
	uint64_t blk_end = off - off % bs + bs;

	return (uint32_t)((blk_end < end ? blk_end : end) - off);
}

void fm_undo_write(struct fm_undo *u, void *data, const struct fm_req *req)
{
	struct fm_undo_slot *s = my_slot(u);
	struct iov_cur c = {req->iov, 0, 0};
	uint64_t off = req->offset, end = req->offset + req->len;
	uint32_t bs = u->blk;

	while (off < end) {
		uint64_t base = off - off % bs;
		uint32_t n = piece(off, end, bs);

		mark(s, (uint8_t *)data + base, base, bs);
		cur_copy(&c, (uint8_t *)data + off, n);
		unmark(s);
		off += n;
	}
}

void fm_undo_zero(struct fm_undo *u, void *data, uint64_t offset, uint64_t len)
{
	struct fm_undo_slot *s = my_slot(u);
	uint64_t off = offset, end = offset + len;
	uint32_t bs = u->blk;

	while (off < end) {
		uint64_t base = off - off % bs;
		uint32_t n = piece(off, end, bs);

		mark(s, (uint8_t *)data + base, base, bs);
		memset((uint8_t *)data + off, 0, n);
		unmark(s);
		off += n;
	}
}
