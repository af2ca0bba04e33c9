/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_chain.c - descriptor chain walker and validator (see vq_chain.h), for
 * split and packed chains: both hand every buffer to the same consumer.
 *
 * Owns the rules a chain must follow before any byte of it is used:
 * head and next indexes inside the table, at most one table entry per
 * descriptor walked (loops end), indirect only at the head, only when
 * negotiated, never nested, its table inside one guest memory region and
 * no longer than the queue (virtio 1.1 2.6.5.3.1: no chain is longer than
 * the queue size);
 * every buffer translated with its length; device-readable descriptors
 * before device-writable ones; at least 16 readable bytes of header and one
 * writable byte of status.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_prefetch.h>

#include "pmd/vq_chain.h"

/* Walk state while descriptors are consumed. */
struct chain_walk {
	struct rte_vhost_memory *mem;
	struct pmd_chain *c;
	uint8_t hdr[PMD_BLK_HDR_SIZE];
	uint32_t hdr_got; /* header bytes copied so far */
	uint32_t niov;	  /* segments stored in c->iov */
	bool seen_write;  /* a device-writable descriptor was seen */
	bool bad;	  /* answer IOERR */
	uint8_t *last_w;  /* last writable piece, NULL if none or untranslatable */
	uint32_t last_w_len;
	bool last_w_in_iov; /* last_w is c->iov[niov - 1] */
};

static void walk_fail(struct chain_walk *w, const char *why)
{
	if (!w->bad)
		w->c->why = why;
	w->bad = true;
}

static void walk_store(struct chain_walk *w, uint8_t *p, uint32_t len)
{
	if (w->niov == PMD_CHAIN_MAX_IOV) {
		walk_fail(w, "more data segments than supported");
		return;
	}
	w->c->iov[w->niov].base = p;
	w->c->iov[w->niov].len = len;
	w->niov++;
}

static void walk_readable_piece(struct chain_walk *w, uint8_t *p, uint32_t len)
{
	if (w->hdr_got < PMD_BLK_HDR_SIZE) {
		uint32_t n = PMD_BLK_HDR_SIZE - w->hdr_got;

		if (w->hdr_got == 0)
			w->c->hdr_at = p;

		if (n > len)
			n = len;
		memcpy(w->hdr + w->hdr_got, p, n);
		w->hdr_got += n;
		p += n;
		len -= n;
	}
	if (len == 0)
		return;
	w->c->rd_len += len;
	w->c->nrd++;
	walk_store(w, p, len);
}

static void walk_writable_piece(struct chain_walk *w, uint8_t *p, uint32_t len)
{
	uint32_t before = w->niov;

	w->c->wr_len += len;
	w->c->nwr++;
	walk_store(w, p, len);
	w->last_w = p;
	w->last_w_len = len;
	w->last_w_in_iov = w->niov != before;
}

/* Translate one descriptor's buffer piece by piece and consume it. */
static void walk_buffer(struct chain_walk *w, uint64_t gpa, uint32_t len, bool writable)
{
	if (writable)
		w->seen_write = true;
	else if (w->seen_write) {
		walk_fail(w, "device-readable descriptor after a writable one");
		return;
	}
	if (gpa + len < gpa) {
		walk_fail(w, "buffer address wraps");
		if (writable)
			w->last_w = NULL;
		return;
	}
	while (len > 0) {
		uint64_t l = len;
		uint64_t hva = rte_vhost_va_from_guest_pa(w->mem, gpa, &l);

		if (hva == 0 || l == 0) {
			walk_fail(w, "buffer outside guest memory");
			if (writable)
				w->last_w = NULL;
			return;
		}
		if (writable)
			walk_writable_piece(w, (uint8_t *)(uintptr_t)hva, (uint32_t)l);
		else
			walk_readable_piece(w, (uint8_t *)(uintptr_t)hva, (uint32_t)l);
		gpa += l;
		len -= (uint32_t)l;
	}
}

static enum pmd_chain_result chain_broken(struct pmd_chain *c, const char *why)
{
	c->status = NULL;
	c->why = why;
	return PMD_CHAIN_BROKEN;
}

/* Switch to the indirect table described by d; returns NULL (and why) if unusable. */
static inline __attribute__((always_inline)) const struct vring_desc *
indirect_table(struct rte_vhost_memory *mem, const struct vring_desc *d, uint32_t max, uint32_t *n,
	       const char **why)
{
	const uint8_t *tbl;

	if (d->flags & VRING_DESC_F_NEXT) {
		*why = "indirect descriptor with NEXT";
		return NULL;
	}
	if (d->len == 0 || d->len % sizeof(struct vring_desc) != 0 ||
	    d->len / sizeof(struct vring_desc) > max) {
		*why = "bad indirect table length";
		return NULL;
	}
	tbl = pmd_chain_xlate(mem, d->addr, d->len);
	if (tbl == NULL) {
		*why = "indirect table outside one guest memory region";
		return NULL;
	}
	*n = d->len / sizeof(struct vring_desc);
	return (const struct vring_desc *)tbl;
}

/* Locate the status byte and split off the header; decide the result. */
static enum pmd_chain_result walk_finish(struct chain_walk *w)
{
	struct pmd_chain *c = w->c;

	if (w->last_w == NULL)
		return chain_broken(c, w->bad ? c->why : "no device-writable status byte");
	c->status = w->last_w + w->last_w_len - 1;
	c->wr_len--;
	if (w->last_w_in_iov) {
		struct fm_iov *last = &c->iov[w->niov - 1];

		if (--last->len == 0) {
			w->niov--;
			c->nwr--;
		}
	}
	if (w->hdr_got < PMD_BLK_HDR_SIZE)
		walk_fail(w, "request header shorter than 16 bytes");
	memcpy(&c->hdr, w->hdr, sizeof(c->hdr));
	return w->bad ? PMD_CHAIN_IOERR : PMD_CHAIN_OK;
}

/* c before a walk: no bytes, no error. */
static void chain_init(struct pmd_chain *c)
{
	c->rd_len = c->wr_len = 0;
	c->nrd = c->nwr = 0;
	c->ndesc = 0;
	c->nempty = 0;
	c->why = NULL;
	c->fm_flags = 0;
	c->hdr_at = NULL;
	memset(&c->hdr, 0, sizeof(c->hdr));
}

/* Consume one descriptor's buffer (an empty one is only counted). */
static void walk_desc(struct chain_walk *w, uint64_t addr, uint32_t len, bool writable)
{
	if (len > 0)
		walk_buffer(w, addr, len, writable);
	else
		w->c->nempty++;
}

FM_HOT_TEXT enum pmd_chain_result pmd_chain_parse_walk(struct rte_vhost_memory *mem,
						       const struct pmd_chain_ring *ring,
						       uint16_t head, struct pmd_chain *c)
{
	struct chain_walk w = {.mem = mem, .c = c};
	const struct vring_desc *tbl = ring->desc;
	uint32_t tbl_size = ring->size;
	const char *why = NULL;
	struct vring_desc d;
	uint32_t walked = 0;

	chain_init(c);
	if (head >= ring->size)
		return chain_broken(c, "head index outside the queue");
	d = pmd_chain_desc_read(tbl, head);
	if (d.flags & VRING_DESC_F_INDIRECT) {
		if (!ring->indirect_ok)
			return chain_broken(c, "indirect descriptor not negotiated");
		tbl = indirect_table(mem, &d, RTE_MIN(ring->size, PMD_CHAIN_MAX_INDIRECT),
				     &tbl_size, &why);
		if (tbl == NULL)
			return chain_broken(c, why);
		d = pmd_chain_desc_read(tbl, 0);
	}
	for (;;) {
		if (++walked > tbl_size)
			return chain_broken(c, "descriptor chain loops or is too long");
		if (d.flags & VRING_DESC_F_INDIRECT)
			return chain_broken(c, "indirect descriptor inside a chain");
		walk_desc(&w, d.addr, d.len, d.flags & VRING_DESC_F_WRITE);
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		if (d.next >= tbl_size)
			return chain_broken(c, "next index outside the table");
		d = pmd_chain_desc_read(tbl, d.next);
	}
	c->ndesc = (uint16_t)walked;
	return walk_finish(&w);
}

FM_HOT_TEXT bool pmd_chain_parse_indirect3(struct rte_vhost_memory *mem,
					   const struct pmd_chain_ring *ring, uint16_t head,
					   struct pmd_chain *c)
{
	struct pmd_chain_ring table = {.indirect_ok = false};
	const char *why;
	struct vring_desc d;
	uint32_t n = 0;

	if (!ring->indirect_ok || head >= ring->size)
		return false;
	d = pmd_chain_desc_read(ring->desc, head);
	if (d.flags != VRING_DESC_F_INDIRECT)
		return false;
	table.desc = indirect_table(mem, &d, RTE_MIN(ring->size, PMD_CHAIN_MAX_INDIRECT), &n, &why);
	table.size = n;
	return table.desc != NULL && pmd_chain_parse_fast3(mem, &table, 0, c);
}

/*
 * The packed indirect table named by d (virtio 1.2, 2.8.19) and its entry
 * count in *n, by the walk's rules: negotiated, d without NEXT, a whole
 * number of entries, at least one and no more than the queue (or
 * PMD_CHAIN_MAX_INDIRECT), inside one guest memory region; NULL and why
 * otherwise.
 */
static inline __attribute__((always_inline)) const struct vring_packed_desc *
packed_table(struct rte_vhost_memory *mem, const struct pmd_chain_pring *ring,
	     const struct vring_packed_desc *d, uint32_t *n, const char **why)
{
	uint32_t max = RTE_MIN(ring->size, PMD_CHAIN_MAX_INDIRECT);
	const struct vring_packed_desc *tbl;

	if (!ring->indirect_ok) {
		*why = "indirect descriptor not negotiated";
		return NULL;
	}
	if (d->flags & VRING_DESC_F_NEXT) {
		*why = "indirect descriptor with NEXT";
		return NULL;
	}
	if (d->len == 0 || d->len % sizeof(*d) != 0 || d->len / sizeof(*d) > max) {
		*why = "bad indirect table length";
		return NULL;
	}
	tbl = (const struct vring_packed_desc *)pmd_chain_xlate(mem, d->addr, d->len);
	if (tbl == NULL) {
		*why = "indirect table outside one guest memory region";
		return NULL;
	}
	*n = d->len / sizeof(*d);
	return tbl;
}

FM_HOT_TEXT bool pmd_chain_parse_packed_indirect3(struct rte_vhost_memory *mem,
						  const struct pmd_chain_pring *ring, uint16_t pos,
						  struct pmd_chain *c, uint16_t *id,
						  uint16_t *nring)
{
	const uint16_t ring_bits = PMD_PACKED_F_AVAIL | PMD_PACKED_F_USED;
	const struct vring_packed_desc *tbl;
	struct vring_packed_desc d, h, b, s;
	const char *why;
	uint32_t n = 0;

	if (pos >= ring->size)
		return false;
	d = pmd_chain_pdesc_read(ring->desc, pos);
	if ((d.flags & ~ring_bits) != VRING_DESC_F_INDIRECT || d.id >= ring->size)
		return false;
	tbl = packed_table(mem, ring, &d, &n, &why);
	if (tbl == NULL || n != 3)
		return false;
	/* in a table only WRITE counts (NEXT ignored), INDIRECT refused (the walk's rules) */
	h = pmd_chain_pdesc_read(tbl, 0);
	b = pmd_chain_pdesc_read(tbl, 1);
	s = pmd_chain_pdesc_read(tbl, 2);
	if ((h.flags & (VRING_DESC_F_WRITE | VRING_DESC_F_INDIRECT)) != 0 ||
	    h.len != PMD_BLK_HDR_SIZE || (b.flags & VRING_DESC_F_INDIRECT) || b.len == 0 ||
	    (s.flags & (VRING_DESC_F_WRITE | VRING_DESC_F_INDIRECT)) != VRING_DESC_F_WRITE ||
	    s.len != 1)
		return false;
	if (!pmd_chain_fill3(mem, c, h.addr, b.addr, b.len, b.flags & VRING_DESC_F_WRITE, s.addr))
		return false;
	*id = d.id;
	*nring = 1;
	return true;
}

/*
 * The packed indirect table named by d (virtio 1.2, 2.8.19): its entries
 * in order, WRITE their only flag that counts (NEXT is ignored), INDIRECT
 * refused; NULL when the chain cannot be answered (why set).
 */
static const char *packed_indirect(struct chain_walk *w, const struct pmd_chain_pring *ring,
				   const struct vring_packed_desc *d)
{
	const struct vring_packed_desc *tbl;
	const char *why = NULL;
	uint32_t k, n = 0;

	tbl = packed_table(w->mem, ring, d, &n, &why);
	if (tbl == NULL)
		return why;
	for (k = 0; k < n; k++) {
		struct vring_packed_desc e = pmd_chain_pdesc_read(tbl, k);

		if (e.flags & VRING_DESC_F_INDIRECT)
			return "indirect descriptor inside an indirect table";
		walk_desc(w, e.addr, e.len, e.flags & VRING_DESC_F_WRITE);
	}
	w->c->ndesc = (uint16_t)n;
	return NULL;
}

enum pmd_chain_result pmd_chain_parse_packed_walk(struct rte_vhost_memory *mem,
						  const struct pmd_chain_pring *ring, uint16_t pos,
						  bool wrap, struct pmd_chain *c, uint16_t *id,
						  uint16_t *nring)
{
	struct chain_walk w = {.mem = mem, .c = c};
	struct vring_packed_desc d;
	uint32_t walked = 0;
	const char *why;

	chain_init(c);
	if (pos >= ring->size)
		return chain_broken(c, "ring position outside the queue");
	for (;;) {
		if (++walked > ring->size)
			return chain_broken(c, "descriptor chain longer than the queue");
		d = pmd_chain_pdesc_read(ring->desc, pos);
		if (walked > 1 && ring->check_wrap && !pmd_packed_desc_avail(d.flags, wrap))
			return chain_broken(c, "chain descriptor not available (wrap counter "
					       "mismatch)");
		if (d.flags & VRING_DESC_F_INDIRECT) {
			if (walked > 1)
				return chain_broken(c, "indirect descriptor inside a chain");
			why = packed_indirect(&w, ring, &d);
			if (why != NULL)
				return chain_broken(c, why);
			break;
		}
		walk_desc(&w, d.addr, d.len, d.flags & VRING_DESC_F_WRITE);
		c->ndesc = (uint16_t)walked;
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		pos = pmd_packed_next(pos, &wrap, ring->size);
	}
	if (d.id >= ring->size)
		return chain_broken(c, "buffer id outside the queue");
	*id = d.id;
	*nring = (uint16_t)walked;
	return walk_finish(&w);
}

/*
 * The host address of a chain's header for a hint: its first descriptor
 * (addr, len, flags) readable, holding all 16 bytes in one guest memory
 * region; NULL otherwise.
 */
static inline __attribute__((always_inline)) const volatile struct virtio_blk_outhdr *
chain_hint_hdr(struct rte_vhost_memory *mem, uint64_t addr, uint32_t len, uint16_t flags)
{
	if (len < PMD_BLK_HDR_SIZE || (flags & VRING_DESC_F_WRITE))
		return NULL;
	return (const struct virtio_blk_outhdr *)pmd_chain_xlate(mem, addr, PMD_BLK_HDR_SIZE);
}

/*
 * Where the header and the descriptor after it are, for the chain whose
 * first descriptor d lies in tbl (tbl_size entries); false when the header
 * cannot be read (t->next is set either way).  The one set of rules
 * pmd_chain_peek() and pmd_chain_touch() share.  Always inlined: its call
 * and the header lookup's are a measurable share of the touch.
 */
static inline __attribute__((always_inline)) bool
chain_locate(struct rte_vhost_memory *mem, const struct vring_desc *tbl, uint32_t tbl_size,
	     const struct vring_desc *d, struct pmd_chain_touched *t)
{
	t->next = (d->flags & VRING_DESC_F_NEXT) && d->next < tbl_size ? &tbl[d->next] : NULL;
	t->hdr = chain_hint_hdr(mem, d->addr, d->len, d->flags);
	return t->hdr != NULL;
}

bool pmd_chain_peek(struct rte_vhost_memory *mem, const struct pmd_chain_ring *ring, uint16_t head,
		    struct pmd_chain_hint *h)
{
	const struct vring_desc *tbl = ring->desc;
	uint32_t tbl_size = ring->size;
	struct pmd_chain_touched t;
	const char *why = NULL;
	struct vring_desc d;

	if (head >= ring->size)
		return false;
	d = pmd_chain_desc_read(tbl, head);
	if (d.flags & VRING_DESC_F_INDIRECT) {
		if (!ring->indirect_ok)
			return false;
		tbl = indirect_table(mem, &d, RTE_MIN(ring->size, PMD_CHAIN_MAX_INDIRECT),
				     &tbl_size, &why);
		if (tbl == NULL)
			return false;
		d = pmd_chain_desc_read(tbl, 0);
	}
	if (!chain_locate(mem, tbl, tbl_size, &d, &t))
		return false;
	pmd_chain_peek_touched(&t, h);
	return true;
}

void pmd_chain_touch(struct rte_vhost_memory *mem, const struct pmd_chain_ring *ring, uint16_t head,
		     struct pmd_chain_touched *t)
{
	const struct vring_desc *tbl = ring->desc;
	uint32_t tbl_size = ring->size;
	struct vring_desc d;

	t->hdr = NULL;
	t->next = NULL;
	if (head >= ring->size)
		return;
	d = pmd_chain_desc_read(tbl, head);
	if (d.flags & VRING_DESC_F_INDIRECT) {
		const char *why;

		/* the chain is the table's: its first entry names the header */
		if (!ring->indirect_ok)
			return;
		tbl = indirect_table(mem, &d, RTE_MIN(ring->size, PMD_CHAIN_MAX_INDIRECT),
				     &tbl_size, &why);
		if (tbl == NULL)
			return;
		d = pmd_chain_desc_read(tbl, 0);
	}
	chain_locate(mem, tbl, tbl_size, &d, t);
	if (t->next != NULL)
		rte_prefetch0(t->next);
	if (t->hdr != NULL)
		rte_prefetch0((const void *)t->hdr);
}

/*
 * The touch of a packed chain that is one indirect descriptor d: its
 * table's first entry names the header (asked for), the second's length is
 * the data's; t->hdr stays NULL when the table is not one the walk takes.
 */
static void touch_packed_table(struct rte_vhost_memory *mem, const struct pmd_chain_pring *ring,
			       const struct vring_packed_desc *d, struct pmd_chain_touched *t)
{
	const struct vring_packed_desc *tbl;
	struct vring_packed_desc e;
	const char *why;
	uint32_t n = 0;

	tbl = packed_table(mem, ring, d, &n, &why);
	if (tbl == NULL)
		return;
	e = pmd_chain_pdesc_read(tbl, 0);
	t->hdr = chain_hint_hdr(mem, e.addr, e.len, e.flags);
	if (t->hdr == NULL)
		return;
	rte_prefetch0((const void *)t->hdr);
	if (n >= 2)
		t->next = (const struct vring_desc *)&tbl[1]; /* len where a split one's is */
}

uint16_t pmd_chain_touch_packed(struct rte_vhost_memory *mem, const struct pmd_chain_pring *ring,
				uint16_t pos, bool wrap, uint16_t max_desc,
				struct pmd_chain_touched *t)
{
	struct vring_packed_desc d;
	uint16_t n = 0;

	t->hdr = NULL;
	t->next = NULL;
	if (pos >= ring->size)
		return 0;
	do {
		if (n == max_desc)
			return 0;
		d = pmd_chain_pdesc_read(ring->desc, pos);
		if (!pmd_packed_desc_avail(d.flags, wrap))
			return 0;
		if (n == 0 && (d.flags & VRING_DESC_F_INDIRECT)) {
			touch_packed_table(mem, ring, &d, t);
		} else if (n == 0) {
			t->hdr = chain_hint_hdr(mem, d.addr, d.len, d.flags);
			if (t->hdr != NULL)
				rte_prefetch0((const void *)t->hdr);
		} else if (n == 1) {
			/* its length lies where a split descriptor's does (vq_chain.h) */
			t->next = (const struct vring_desc *)&ring->desc[pos];
		}
		n++;
		pos = pmd_packed_next(pos, &wrap, ring->size);
	} while (d.flags & VRING_DESC_F_NEXT);
	return n;
}

uint64_t pmd_iov_copy_out(const struct fm_iov *iov, uint32_t n, uint64_t off, void *dst,
			  uint64_t len)
{
	uint8_t *out = dst;
	uint64_t done = 0;
	uint32_t i;

	for (i = 0; i < n && done < len; i++) {
		uint64_t take;

		if (off >= iov[i].len) {
			off -= iov[i].len;
			continue;
		}
		take = iov[i].len - off;
		if (take > len - done)
			take = len - done;
		memcpy(out + done, (const uint8_t *)iov[i].base + off, take);
		done += take;
		off = 0;
	}
	return done;
}

uint64_t pmd_iov_copy_in(const struct fm_iov *iov, uint32_t n, const void *src, uint64_t len)
{
	const uint8_t *in = src;
	uint64_t done = 0;
	uint32_t i;

	for (i = 0; i < n && done < len; i++) {
		uint64_t take = iov[i].len;

		if (take > len - done)
			take = len - done;
		memcpy(iov[i].base, in + done, take);
		done += take;
	}
	return done;
}
