/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_vq_chain.c - libFuzzer target: the descriptor-chain walker and
 * validator (pmd/vq_chain.c) over a fake guest memory map, followed by the
 * request layer (pmd/blk_req.c) for the chains it accepts.
 *
 * Input: layout and queue size (1 byte: bit 7 a packed ring, else split;
 * size 2^((b & 0x7f) % 13)), head (2 bytes; packed: ring position in bits
 * 0-14, the avail wrap counter in bit 15), flags (1 byte: bit 0 indirect
 * negotiated, bits 1.. device readonly / model status; packed: bits 4-7 the
 * look-ahead touch's descriptor limit - 1), then the bytes of
 * guest memory from 0x10000 on: the descriptor table (packed: descriptor
 * ring) lies at 0x10000, everything after it (indirect tables, headers,
 * data) wherever the descriptors point.  Guest memory is two adjacent 64 KiB regions with
 * separate host buffers and a hole above (test/unit/pmd/fake_guest.c), so
 * AddressSanitizer reports any host access that leaves a region.
 */
#include "fuzz_blk.h"

static struct fake_guest g;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fg_init(&g);
	return 0;
}

/* Is [p, p + len) inside one of the fake guest's regions? */
static bool in_guest(const uint8_t *p, uint64_t len)
{
	if (p >= g.a && p < g.a + FG_REGION_SIZE)
		return len <= (uint64_t)(g.a + FG_REGION_SIZE - p);
	if (p >= g.b && p < g.b + FG_REGION_SIZE)
		return len <= (uint64_t)(g.b + FG_REGION_SIZE - p);
	return false;
}

static void check_chain(const struct pmd_chain *c, enum pmd_chain_result res)
{
	uint64_t rd = 0, wr = 0;

	if (res == PMD_CHAIN_BROKEN) {
		FZ_CHECK(c->status == NULL && c->why != NULL, "BROKEN without a reason");
		return;
	}
	FZ_CHECK(c->status != NULL && in_guest(c->status, 1), "status byte outside guest memory");
	FZ_CHECK(res == PMD_CHAIN_OK || c->why != NULL, "IOERR without a reason");
	if (res != PMD_CHAIN_OK)
		return;
	FZ_CHECK(c->nrd + c->nwr <= PMD_CHAIN_MAX_IOV, "%u segments", c->nrd + c->nwr);
	for (uint32_t i = 0; i < c->nrd + c->nwr; i++) {
		FZ_CHECK(c->iov[i].len > 0, "empty segment %u", i);
		FZ_CHECK(in_guest(c->iov[i].base, c->iov[i].len), "segment %u outside guest memory",
			 i);
		if (i < c->nrd)
			rd += c->iov[i].len;
		else
			wr += c->iov[i].len;
	}
	FZ_CHECK(rd == c->rd_len && wr == c->wr_len, "lengths %llu/%llu, segments %llu/%llu",
		 (unsigned long long)c->rd_len, (unsigned long long)c->wr_len,
		 (unsigned long long)rd, (unsigned long long)wr);
}

/* A fast path must describe a chain as the general walk (w, rw) does. */
static void check_same_chain(const struct pmd_chain *c, enum pmd_chain_result res,
			     const struct pmd_chain *w, enum pmd_chain_result rw)
{
	FZ_CHECK(rw == res, "parse %d, walk %d", res, rw);
	FZ_CHECK(c->status == w->status, "status byte differs from the walk's");
	if (res != PMD_CHAIN_OK)
		return;
	FZ_CHECK(memcmp(&c->hdr, &w->hdr, sizeof(w->hdr)) == 0, "header differs from the walk's");
	FZ_CHECK(c->rd_len == w->rd_len && c->wr_len == w->wr_len && c->nrd == w->nrd &&
		     c->nwr == w->nwr && c->ndesc == w->ndesc && c->nempty == w->nempty,
		 "lengths or counts differ from the walk's");
	for (uint32_t i = 0; i < c->nrd + c->nwr; i++)
		FZ_CHECK(c->iov[i].base == w->iov[i].base && c->iov[i].len == w->iov[i].len,
			 "segment %u differs from the walk's", i);
}

static void check_same_as_walk(const struct pmd_chain_ring *ring, uint16_t head,
			       const struct pmd_chain *c, enum pmd_chain_result res)
{
	static struct pmd_chain w;

	check_same_chain(c, res, &w, pmd_chain_parse_walk(g.mem, ring, head, &w));
}

/* The request layer on a chain the walker accepted; flags as the input's. */
static void exec_chain(struct pmd_chain *c, enum pmd_chain_result res, uint8_t flags)
{
	struct pmd_blk_target t;
	struct pmd_blk_done done;
	struct fake_model m;

	fg_target(&t, &m, 64 * 512);
	t.readonly = flags & 2;
	m.status = (enum fm_status)((flags >> 2) % 3);
	pmd_blk_req_exec(&t, c, res, 1000, &done);
	fz_check_done(c, res, &done);
	fz_check_model_reqs(&t, &m, 0);
	*c->status = done.status;
}

/*
 * The packed walker on the ring at 0x10000: what it accepts is checked as a
 * split chain is, plus its buffer id and ring descriptor count.
 */
static enum pmd_chain_result packed_parse(uint16_t size, uint16_t head, bool indirect,
					  struct pmd_chain *c)
{
	const struct pmd_chain_pring ring = {.desc = (const struct vring_packed_desc *)g.a,
					     .size = size,
					     .indirect_ok = indirect,
					     .check_wrap = true};
	static struct pmd_chain w;
	uint16_t id = 0xffff, nring = 0, wid = 0xffff, wnring = 0;
	enum pmd_chain_result res =
	    pmd_chain_parse_packed(g.mem, &ring, head & 0x7fff, head >> 15, c, &id, &nring);
	enum pmd_chain_result rw =
	    pmd_chain_parse_packed_walk(g.mem, &ring, head & 0x7fff, head >> 15, &w, &wid, &wnring);

	check_chain(c, res);
	check_same_chain(c, res, &w, rw);
	if (res != PMD_CHAIN_BROKEN)
		FZ_CHECK(id == wid && nring == wnring, "id %u / %u ring descriptors, walk %u / %u",
			 id, nring, wid, wnring);
	if (res != PMD_CHAIN_BROKEN) {
		FZ_CHECK(id < size, "buffer id %u of a queue of %u", id, size);
		FZ_CHECK(nring >= 1 && nring <= size, "%u ring descriptors in a queue of %u", nring,
			 size);
	}
	return res;
}

/*
 * The packed look-ahead's touch: reads only what it may (ASan watches),
 * never walks more than it is allowed to, and what it notes reads back as
 * a hint.
 */
static void packed_touch(uint16_t size, uint16_t head, uint8_t flags)
{
	const struct pmd_chain_pring ring = {.desc = (const struct vring_packed_desc *)g.a,
					     .size = size};
	uint16_t max = (uint16_t)(1u + (flags >> 4));
	struct pmd_chain_touched t;
	struct pmd_chain_hint h;
	uint16_t n = pmd_chain_touch_packed(g.mem, &ring, head & 0x7fff, head >> 15, max, &t);

	FZ_CHECK(n <= max && n <= size, "touch walked %u descriptors (at most %u, queue of %u)", n,
		 max, size);
	if (n == 0)
		return;
	FZ_CHECK((head & 0x7fff) < size, "touched a chain at %u of a queue of %u", head & 0x7fff,
		 size);
	if (t.hdr != NULL)
		pmd_chain_peek_touched(&t, &h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	static struct pmd_chain c;
	struct pmd_chain_ring ring;
	struct pmd_chain_hint hint;
	enum pmd_chain_result res;
	uint16_t head;
	uint8_t flags;
	struct pmd_chain_touched touched;
	uint8_t layout = fz_u8(&in);

	ring.size = (uint16_t)(1u << ((layout & 0x7f) % 13));
	head = fz_u16(&in);
	flags = fz_u8(&in);
	ring.indirect_ok = flags & 1;
	ring.desc = (const struct vring_desc *)g.a;
	memset(g.a, 0, FG_REGION_SIZE);
	memset(g.b, 0, FG_REGION_SIZE);
	fz_take(&in, g.a, FG_REGION_SIZE);
	fz_take(&in, g.b, FG_REGION_SIZE);

	if (layout & 0x80) {
		packed_touch(ring.size, head, flags);
		res = packed_parse(ring.size, head, ring.indirect_ok, &c);
		if (res != PMD_CHAIN_BROKEN)
			exec_chain(&c, res, flags);
		return 0;
	}

	pmd_chain_touch(g.mem, &ring, head, &touched); /* reads only what it may: ASan watches */
	if (pmd_chain_peek(g.mem, &ring, head, &hint))
		FZ_CHECK(head < ring.size, "peeked head %u of a queue of %u", head, ring.size);
	else
		FZ_CHECK(touched.hdr == NULL, "touch found a header the peek could not read");
	if (touched.hdr != NULL) {
		struct pmd_chain_hint fast;

		pmd_chain_peek_touched(&touched, &fast);
		FZ_CHECK(fast.type == hint.type && fast.sector == hint.sector &&
			     fast.data_len == hint.data_len,
			 "peek from the touch (%u %llu %u) differs from the full peek (%u %llu %u)",
			 fast.type, (unsigned long long)fast.sector, fast.data_len, hint.type,
			 (unsigned long long)hint.sector, hint.data_len);
	}
	res = pmd_chain_parse(g.mem, &ring, head, &c);
	check_chain(&c, res);
	check_same_as_walk(&ring, head, &c, res);
	if (res != PMD_CHAIN_BROKEN)
		exec_chain(&c, res, flags);
	return 0;
}
