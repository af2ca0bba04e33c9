/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_chain.h - virtqueue descriptor chain walker and validator for
 * virtio-blk requests: split chains (a descriptor table linked by next) and
 * packed chains (consecutive ring descriptors, or one indirect table).
 *
 * Owns: walking one chain (direct or indirect), translating every guest
 * buffer through the guest memory map with its length (a buffer spanning
 * regions becomes several segments), and splitting the device-readable
 * bytes into the 16-byte request header plus data and the device-writable
 * bytes into data plus the 1-byte status.  Nothing here knows about the
 * device model; nothing here writes guest memory.
 *
 * Every descriptor is read exactly once into a local copy before it is
 * checked, so a guest changing its ring concurrently cannot make a checked
 * value differ from a used one.
 */
#ifndef PMD_VQ_CHAIN_H
#define PMD_VQ_CHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>
#include <rte_atomic.h>
#include <rte_byteorder.h>
#include <rte_vhost.h>

#include "ftl/fm_model.h"

/* Data segments one chain may carry (header and status excluded). */
#define PMD_CHAIN_MAX_IOV FM_REQ_MAX_IOV

/* Largest indirect table accepted, in descriptors. */
#define PMD_CHAIN_MAX_INDIRECT 1024

/* Size of the virtio-blk request header, bytes. */
#define PMD_BLK_HDR_SIZE 16

/* Outcome of pmd_chain_parse(). */
enum pmd_chain_result {
	PMD_CHAIN_OK = 0,
	/* The request is malformed but a status byte was found: answer IOERR. */
	PMD_CHAIN_IOERR,
	/* No status byte can be located safely: the queue must stop. */
	PMD_CHAIN_BROKEN,
};

/*
 * A parsed request.  iov[0..nrd) are the device-readable data bytes after
 * the header (rd_len in total); iov[nrd..nrd+nwr) the device-writable data
 * bytes before the status (wr_len in total).  All host virtual addresses.
 */
struct pmd_chain {
	struct virtio_blk_outhdr hdr; /* copied out of guest memory */
	uint8_t *status;	      /* NULL only when BROKEN */
	const uint8_t *hdr_at;	      /* host address of the header's first byte, NULL if none */
	uint64_t rd_len;
	uint64_t wr_len;
	uint32_t nrd;
	uint32_t nwr;
	uint16_t ndesc;	   /* descriptors walked, for statistics */
	uint16_t nempty;   /* descriptors of length 0 (skipped; READ/WRITE answer IOERR) */
	const char *why;   /* reason of the first error, static string */
	uint32_t fm_flags; /* FM_REQ_* the transport adds (FM_REQ_PREFETCHED); parsing sets 0 */
	struct fm_iov iov[PMD_CHAIN_MAX_IOV];
};

/* What the walker needs to know about the ring. */
struct pmd_chain_ring {
	const struct vring_desc *desc; /* host address of the descriptor table */
	uint16_t size;		       /* queue size, entries */
	bool indirect_ok;	       /* VIRTIO_RING_F_INDIRECT_DESC negotiated */
};

/*
 * pmd_chain_parse() without its fast path for the common three-descriptor
 * chain: the general walk, for any chain.  Exposed so that tests can check
 * that both paths describe every chain the fast path takes alike.
 */
enum pmd_chain_result pmd_chain_parse_walk(struct rte_vhost_memory *mem,
					   const struct pmd_chain_ring *ring, uint16_t head,
					   struct pmd_chain *c);

/*
 * Read descriptor i of tbl once; the guest may rewrite it at any time.
 * Copied out by bytes: an indirect table may sit at any guest address
 * (virtio 1.1 sets no alignment for it).  The barrier keeps the compiler
 * from reading the guest's copy again later in place of the result.
 */
static inline __attribute__((always_inline)) struct vring_desc
pmd_chain_desc_read(const struct vring_desc *tbl, uint32_t i)
{
	struct vring_desc d;

	memcpy(&d, (const uint8_t *)tbl + (size_t)i * sizeof(d), sizeof(d));
	rte_compiler_barrier();
	return d;
}

/*
 * Host address of [gpa, gpa + len) when it lies inside one guest memory
 * region, else NULL.
 */
static inline __attribute__((always_inline)) uint8_t *pmd_chain_xlate(struct rte_vhost_memory *mem,
								      uint64_t gpa, uint32_t len)
{
	uint64_t l = len;
	uint64_t hva;

	if (gpa + len < gpa)
		return NULL;
	hva = rte_vhost_va_from_guest_pa(mem, gpa, &l);
	return hva != 0 && l == len ? (uint8_t *)(uintptr_t)hva : NULL;
}

/*
 * The common chain's request from its three buffers (a 16-byte header at
 * hdr_gpa, dlen data bytes at data_gpa, device-writable or not, the status
 * byte at st_gpa): false when one is not inside one guest memory region.
 * The packed fast path's; the split one spells the same steps out, since
 * sharing this helper changed the split sweep's register allocation.
 */
static inline __attribute__((always_inline)) bool
pmd_chain_fill3(struct rte_vhost_memory *mem, struct pmd_chain *c, uint64_t hdr_gpa,
		uint64_t data_gpa, uint32_t dlen, bool writable, uint64_t st_gpa)
{
	uint8_t *hdr = pmd_chain_xlate(mem, hdr_gpa, PMD_BLK_HDR_SIZE);
	uint8_t *data = pmd_chain_xlate(mem, data_gpa, dlen);
	uint8_t *status = pmd_chain_xlate(mem, st_gpa, 1);

	if (hdr == NULL || data == NULL || status == NULL)
		return false;
	memcpy(&c->hdr, hdr, sizeof(c->hdr));
	c->hdr_at = hdr;
	c->status = status;
	c->iov[0].base = data;
	c->iov[0].len = dlen;
	if (writable) {
		c->rd_len = 0;
		c->nrd = 0;
		c->wr_len = dlen;
		c->nwr = 1;
	} else {
		c->rd_len = dlen;
		c->nrd = 1;
		c->wr_len = 0;
		c->nwr = 0;
	}
	c->ndesc = 3;
	c->nempty = 0;
	c->why = NULL;
	c->fm_flags = 0;
	return true;
}

/*
 * The common chain in one pass: three direct descriptors, a readable
 * 16-byte header, one data buffer (readable for a write, writable for a
 * read) and a writable 1-byte status, each inside one guest memory region.
 * Fills c as pmd_chain_parse_walk() would for that chain; returns false for
 * any other chain, which the walk then reads again and judges by every rule
 * (each path reads a descriptor once and checks its own copy).
 */
static inline __attribute__((always_inline)) bool
pmd_chain_parse_fast3(struct rte_vhost_memory *mem, const struct pmd_chain_ring *ring,
		      uint16_t head, struct pmd_chain *c)
{
	struct vring_desc h, d, s;
	uint8_t *hdr, *data, *status;

	if (head >= ring->size || ring->size < 3)
		return false;
	h = pmd_chain_desc_read(ring->desc, head);
	if (h.flags != VRING_DESC_F_NEXT || h.len != PMD_BLK_HDR_SIZE || h.next >= ring->size)
		return false;
	d = pmd_chain_desc_read(ring->desc, h.next);
	if ((d.flags & ~VRING_DESC_F_WRITE) != VRING_DESC_F_NEXT || d.len == 0 ||
	    d.next >= ring->size)
		return false;
	s = pmd_chain_desc_read(ring->desc, d.next);
	if (s.flags != VRING_DESC_F_WRITE || s.len != 1)
		return false;
	hdr = pmd_chain_xlate(mem, h.addr, h.len);
	data = pmd_chain_xlate(mem, d.addr, d.len);
	status = pmd_chain_xlate(mem, s.addr, 1);
	if (hdr == NULL || data == NULL || status == NULL)
		return false;
	memcpy(&c->hdr, hdr, sizeof(c->hdr));
	c->hdr_at = hdr;
	c->status = status;
	c->iov[0].base = data;
	c->iov[0].len = d.len;
	if (d.flags & VRING_DESC_F_WRITE) {
		c->rd_len = 0;
		c->nrd = 0;
		c->wr_len = d.len;
		c->nwr = 1;
	} else {
		c->rd_len = d.len;
		c->nrd = 1;
		c->wr_len = 0;
		c->nwr = 0;
	}
	c->ndesc = 3;
	c->nempty = 0;
	c->why = NULL;
	c->fm_flags = 0;
	return true;
}

/*
 * The common chain as Linux's driver sends it once indirect descriptors are
 * negotiated: the head a lone INDIRECT descriptor (no NEXT) naming a table
 * of three or more entries whose chain from entry 0 is
 * pmd_chain_parse_fast3()'s.  Fills c as pmd_chain_parse_walk() would;
 * false for any other chain (the walk judges it by every rule).
 */
bool pmd_chain_parse_indirect3(struct rte_vhost_memory *mem, const struct pmd_chain_ring *ring,
			       uint16_t head, struct pmd_chain *c);

/*
 * Walk the chain starting at head.  mem is the guest memory map.  On
 * PMD_CHAIN_OK c describes the request; on PMD_CHAIN_IOERR c->status is the
 * byte to answer and c->why says what was wrong; on PMD_CHAIN_BROKEN
 * c->status is NULL and c->why says why.  Inline: the common chain's fast
 * path costs its caller no call (a call measured on the request path).
 */
static inline __attribute__((always_inline)) enum pmd_chain_result
pmd_chain_parse(struct rte_vhost_memory *mem, const struct pmd_chain_ring *ring, uint16_t head,
		struct pmd_chain *c)
{
	if (pmd_chain_parse_fast3(mem, ring, head, c))
		return PMD_CHAIN_OK;
	if (pmd_chain_parse_indirect3(mem, ring, head, c))
		return PMD_CHAIN_OK;
	return pmd_chain_parse_walk(mem, ring, head, c);
}

/*
 * A packed virtqueue's descriptor ring as the packed walker needs it
 * (virtio 1.2, 2.8).  check_wrap: every descriptor after the first must
 * carry the avail/used flags of the wrap counter of its position (a chain
 * the driver made available whole); off for a copy outside the ring (the
 * inflight region's), whose flags are not the ring's.
 */
struct pmd_chain_pring {
	const struct vring_packed_desc *desc; /* host address of the descriptor ring */
	uint16_t size;			      /* queue size, entries */
	bool indirect_ok;		      /* VIRTIO_RING_F_INDIRECT_DESC negotiated */
	bool check_wrap;
};

/* Descriptor flags of a packed ring (virtio 1.2, 2.8.1), as masks. */
#define PMD_PACKED_F_AVAIL (1u << VRING_PACKED_DESC_F_AVAIL)
#define PMD_PACKED_F_USED (1u << VRING_PACKED_DESC_F_USED)

/* Is a descriptor with these flags available to the device under wrap counter wrap? */
static inline bool pmd_packed_desc_avail(uint16_t flags, bool wrap)
{
	return !!(flags & PMD_PACKED_F_AVAIL) == wrap && !!(flags & PMD_PACKED_F_USED) != wrap;
}

/*
 * pmd_chain_parse_packed() without its fast path: walk the packed chain
 * whose first descriptor is at ring position pos
 * (the caller saw it available under wrap counter wrap): the descriptors
 * that follow it in the ring while NEXT is set (the wrap counter flips at
 * the ring's end), or the one indirect table it names.  The same rules and
 * results as pmd_chain_parse_walk(), plus: no chain longer than the ring,
 * INDIRECT only on a chain's single descriptor and never in its table, the
 * buffer id (the chain's last descriptor's, virtio 1.2 2.8.6) below the
 * queue size, and with check_wrap every later descriptor available under
 * its position's wrap counter.  On OK and IOERR *id is the buffer id and
 * *nring the ring descriptors the chain occupies (its used entry skips
 * them); c->ndesc counts the descriptors walked, table entries included.
 */
enum pmd_chain_result pmd_chain_parse_packed_walk(struct rte_vhost_memory *mem,
						  const struct pmd_chain_pring *ring, uint16_t pos,
						  bool wrap, struct pmd_chain *c, uint16_t *id,
						  uint16_t *nring);

/* Read packed descriptor i of tbl once (pmd_chain_desc_read()'s rules). */
static inline __attribute__((always_inline)) struct vring_packed_desc
pmd_chain_pdesc_read(const struct vring_packed_desc *tbl, uint32_t i)
{
	struct vring_packed_desc d;

	memcpy(&d, (const uint8_t *)tbl + (size_t)i * sizeof(d), sizeof(d));
	rte_compiler_barrier();
	return d;
}

/* The ring position after pos, flipping *wrap at the ring's end. */
static inline uint16_t pmd_packed_next(uint16_t pos, bool *wrap, uint16_t size)
{
	if (++pos == size) {
		*wrap = !*wrap;
		return 0;
	}
	return pos;
}

/*
 * The common packed chain in one pass: three ring descriptors, a readable
 * 16-byte header, one data buffer and a writable 1-byte status that carries
 * the buffer id, each inside one guest memory region (later ones available
 * under their position's wrap counter with check_wrap).  Fills c, *id and
 * *nring as pmd_chain_parse_packed_walk() would; false for any other chain,
 * which the walk then judges by every rule.
 */
static inline __attribute__((always_inline)) bool
pmd_chain_parse_packed_fast3(struct rte_vhost_memory *mem, const struct pmd_chain_pring *ring,
			     uint16_t pos, bool wrap, struct pmd_chain *c, uint16_t *id,
			     uint16_t *nring)
{
	const uint16_t ring_bits = PMD_PACKED_F_AVAIL | PMD_PACKED_F_USED;
	struct vring_packed_desc h, d, s;
	uint16_t p1, p2;
	bool w = wrap;

	if (pos >= ring->size || ring->size < 3)
		return false;
	h = pmd_chain_pdesc_read(ring->desc, pos);
	if ((h.flags & ~ring_bits) != VRING_DESC_F_NEXT || h.len != PMD_BLK_HDR_SIZE)
		return false;
	p1 = pmd_packed_next(pos, &w, ring->size);
	d = pmd_chain_pdesc_read(ring->desc, p1);
	if ((d.flags & ~(ring_bits | VRING_DESC_F_WRITE)) != VRING_DESC_F_NEXT || d.len == 0 ||
	    (ring->check_wrap && !pmd_packed_desc_avail(d.flags, w)))
		return false;
	p2 = pmd_packed_next(p1, &w, ring->size);
	s = pmd_chain_pdesc_read(ring->desc, p2);
	if ((s.flags & ~ring_bits) != VRING_DESC_F_WRITE || s.len != 1 || s.id >= ring->size ||
	    (ring->check_wrap && !pmd_packed_desc_avail(s.flags, w)))
		return false;
	if (!pmd_chain_fill3(mem, c, h.addr, d.addr, d.len, d.flags & VRING_DESC_F_WRITE, s.addr))
		return false;
	*id = s.id;
	*nring = 3;
	return true;
}

/*
 * The packed chain at pos when it is one INDIRECT descriptor (no NEXT)
 * naming a table of exactly three entries: a readable 16-byte header, one
 * data buffer, a writable 1-byte status, each inside one guest memory
 * region (Linux's layout with indirect descriptors negotiated).  Fills c,
 * *id and *nring (1) as pmd_chain_parse_packed_walk() would; false for any
 * other chain.
 */
bool pmd_chain_parse_packed_indirect3(struct rte_vhost_memory *mem,
				      const struct pmd_chain_pring *ring, uint16_t pos,
				      struct pmd_chain *c, uint16_t *id, uint16_t *nring);

/*
 * The packed chain at pos: the fast paths (ring, then indirect table), else
 * the walk (always inlined, as pmd_chain_parse()).
 */
static inline __attribute__((always_inline)) enum pmd_chain_result
pmd_chain_parse_packed(struct rte_vhost_memory *mem, const struct pmd_chain_pring *ring,
		       uint16_t pos, bool wrap, struct pmd_chain *c, uint16_t *id, uint16_t *nring)
{
	if (pmd_chain_parse_packed_fast3(mem, ring, pos, wrap, c, id, nring))
		return PMD_CHAIN_OK;
	if (pmd_chain_parse_packed_indirect3(mem, ring, pos, c, id, nring))
		return PMD_CHAIN_OK;
	return pmd_chain_parse_packed_walk(mem, ring, pos, wrap, c, id, nring);
}

/* What pmd_chain_peek() learns about a chain without validating it. */
struct pmd_chain_hint {
	uint32_t type;	   /* VIRTIO_BLK_T_*, CPU byte order */
	uint64_t sector;   /* CPU byte order */
	uint32_t data_len; /* length of the descriptor after the header's, 0 if none */
};

/*
 * Peek at the chain starting at head for a prefetch hint: read its header
 * (when the first descriptor holds all 16 bytes of it in one guest memory
 * region) and the length of the descriptor that follows.  Nothing is
 * validated beyond what reading safely needs, nothing is written, and the
 * result must not be used for anything but a hint: pmd_chain_parse() reads
 * the chain again.  Returns false when no hint could be read.
 */
bool pmd_chain_peek(struct rte_vhost_memory *mem, const struct pmd_chain_ring *ring, uint16_t head,
		    struct pmd_chain_hint *h);

/* Where pmd_chain_touch() found a chain's hint: pmd_chain_peek_touched() reads it there. */
struct pmd_chain_touched {
	const volatile struct virtio_blk_outhdr *hdr; /* NULL: no readable header */
	const struct vring_desc *next; /* the descriptor after the header's, NULL if none */
};

/*
 * Ask for the lines of the chain at head that a later pmd_chain_peek()
 * loads: its request header and the descriptor after the header's, and note
 * where they are in *t.  Reads the head descriptor (a chain through an
 * indirect table is left alone: t->hdr NULL); validates nothing, writes
 * nothing in guest memory.
 */
void pmd_chain_touch(struct rte_vhost_memory *mem, const struct pmd_chain_ring *ring, uint16_t head,
		     struct pmd_chain_touched *t);

/*
 * pmd_chain_peek() from what pmd_chain_touch() noted (t->hdr not NULL),
 * without walking the chain again: the header and the next descriptor's
 * length as they are now.  A hint only, as pmd_chain_peek()'s.
 */
static inline void pmd_chain_peek_touched(const struct pmd_chain_touched *t,
					  struct pmd_chain_hint *h)
{
	/* guest addresses need not be aligned (an indirect table at an odd address) */
	const uint8_t *hdr = (const uint8_t *)(uintptr_t)t->hdr;
	uint32_t type, len = 0;
	uint64_t sector;

	memcpy(&type, hdr + offsetof(struct virtio_blk_outhdr, type), sizeof(type));
	memcpy(&sector, hdr + offsetof(struct virtio_blk_outhdr, sector), sizeof(sector));
	if (t->next != NULL)
		memcpy(&len, (const uint8_t *)t->next + offsetof(struct vring_desc, len),
		       sizeof(len));
	h->type = rte_le_to_cpu_32(type);
	h->sector = rte_le_to_cpu_64(sector);
	h->data_len = rte_le_to_cpu_32(len);
}

_Static_assert(offsetof(struct vring_packed_desc, len) == offsetof(struct vring_desc, len),
	       "pmd_chain_peek_touched() reads a packed descriptor's length as a split one's");

/*
 * The packed look-ahead's touch (vq_packed.c): walk the chain whose first
 * descriptor is at ring position pos under wrap counter wrap while each
 * descriptor is available and NEXT is set, at most max_desc of them; ask for
 * its header's line and note where the header and the second descriptor
 * are in *t (t->hdr NULL for an indirect chain or no readable header).
 * Returns the ring descriptors the chain occupies, 0 when it is not
 * available whole within max_desc.  Validates nothing beyond what reading
 * safely needs and writes nothing: a hint only, the serve parses again.
 */
uint16_t pmd_chain_touch_packed(struct rte_vhost_memory *mem, const struct pmd_chain_pring *ring,
				uint16_t pos, bool wrap, uint16_t max_desc,
				struct pmd_chain_touched *t);

/*
 * Copy len bytes out of the segments iov[0..n) starting at byte offset off;
 * returns the number of bytes copied (less than len at the end of the data).
 */
uint64_t pmd_iov_copy_out(const struct fm_iov *iov, uint32_t n, uint64_t off, void *dst,
			  uint64_t len);

/* Copy len bytes into the segments iov[0..n) from offset 0; returns bytes copied. */
uint64_t pmd_iov_copy_in(const struct fm_iov *iov, uint32_t n, const void *src, uint64_t len);

#endif /* PMD_VQ_CHAIN_H */
