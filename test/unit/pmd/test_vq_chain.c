/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_vq_chain.c - descriptor chain walker and validator against a fake
 * guest memory map: every accepted layout and every malformed case; the
 * prefetch peek.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "chain_assert.h"
#include "fake_guest.h"
#include "pmd/vq_chain.h"

#define QSIZE 512
#define HDR (FG_A_GPA + 0x100)
#define DATA (FG_A_GPA + 0x1000)
#define STATUS (FG_A_GPA + 0x3000)
#define ITBL (FG_A_GPA + 0x4000)

static struct fake_guest g;
static struct vring_desc desc[QSIZE];
static struct pmd_chain c;
static struct pmd_chain_ring ring;

static void setup(void)
{
	struct virtio_blk_outhdr h = {.type = VIRTIO_BLK_T_IN, .sector = 77};

	fg_init(&g);
	memset(desc, 0, sizeof(desc));
	memcpy(fg_host(&g, HDR), &h, sizeof(h));
	ring.desc = desc;
	ring.size = QSIZE;
	ring.indirect_ok = true;
}

static void teardown(void)
{
	fg_fini(&g);
}

static enum pmd_chain_result parse(uint16_t head)
{
	return pmd_chain_parse(g.mem, &ring, head, &c);
}

/* hdr, one writable data buffer, status: the usual Linux read. */
static void read_chain(uint16_t head, uint64_t data, uint32_t len)
{
	fg_desc(&desc[head], HDR, 16, VRING_DESC_F_NEXT, head + 1);
	fg_desc(&desc[head + 1], data, len, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, head + 2);
	fg_desc(&desc[head + 2], STATUS, 1, VRING_DESC_F_WRITE, 0);
}

TestSuite(vq_chain, .init = setup, .fini = teardown);

Test(vq_chain, read_three_descriptors)
{
	read_chain(5, DATA, 4096);
	cr_assert_eq(parse(5), PMD_CHAIN_OK);
	cr_assert_eq(c.hdr.type, VIRTIO_BLK_T_IN);
	cr_assert_eq(c.hdr.sector, 77);
	cr_assert_eq(c.nrd, 0);
	cr_assert_eq(c.nwr, 1);
	cr_assert_eq(c.wr_len, 4096);
	cr_assert_eq(c.iov[0].base, fg_host(&g, DATA));
	cr_assert_eq(c.iov[0].len, 4096);
	cr_assert_eq(c.status, fg_host(&g, STATUS));
	cr_assert_eq(c.hdr_at, fg_host(&g, HDR));
	cr_assert_eq(c.ndesc, 3);
}

Test(vq_chain, write_with_two_segments)
{
	fg_desc(&desc[0], HDR, 16, VRING_DESC_F_NEXT, 1);
	fg_desc(&desc[1], DATA, 512, VRING_DESC_F_NEXT, 2);
	fg_desc(&desc[2], DATA + 0x800, 1024, VRING_DESC_F_NEXT, 3);
	fg_desc(&desc[3], STATUS, 1, VRING_DESC_F_WRITE, 0);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	cr_assert_eq(c.nrd, 2);
	cr_assert_eq(c.rd_len, 1536);
	cr_assert_eq(c.nwr, 0);
	cr_assert_eq(c.wr_len, 0);
	cr_assert_eq(c.iov[1].base, fg_host(&g, DATA + 0x800));
}

Test(vq_chain, header_and_data_in_one_descriptor)
{
	fg_desc(&desc[0], HDR, 16 + 512, VRING_DESC_F_NEXT, 1);
	fg_desc(&desc[1], STATUS, 1, VRING_DESC_F_WRITE, 0);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	cr_assert_eq(c.hdr.sector, 77);
	cr_assert_eq(c.nrd, 1);
	cr_assert_eq(c.rd_len, 512);
	cr_assert_eq(c.iov[0].base, (uint8_t *)fg_host(&g, HDR) + 16);
	cr_assert_eq(c.hdr_at, fg_host(&g, HDR));
}

Test(vq_chain, header_split_over_two_descriptors)
{
	struct virtio_blk_outhdr h = {.type = VIRTIO_BLK_T_OUT, .sector = 0x1122334455ULL};

	memcpy(fg_host(&g, DATA), &h, 10);
	memcpy(fg_host(&g, DATA + 0x100), (uint8_t *)&h + 10, 6);
	fg_desc(&desc[0], DATA, 10, VRING_DESC_F_NEXT, 1);
	fg_desc(&desc[1], DATA + 0x100, 6, VRING_DESC_F_NEXT, 2);
	fg_desc(&desc[2], STATUS, 1, VRING_DESC_F_WRITE, 0);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	cr_assert_eq(c.hdr.type, VIRTIO_BLK_T_OUT);
	cr_assert_eq(c.hdr.sector, 0x1122334455ULL);
	cr_assert_eq(c.rd_len, 0);
	cr_assert_eq(c.hdr_at, fg_host(&g, DATA), "the header's first piece");
}

Test(vq_chain, data_and_status_in_one_descriptor)
{
	fg_desc(&desc[0], HDR, 16, VRING_DESC_F_NEXT, 1);
	fg_desc(&desc[1], DATA, 4097, VRING_DESC_F_WRITE, 0);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	cr_assert_eq(c.nwr, 1);
	cr_assert_eq(c.wr_len, 4096);
	cr_assert_eq(c.iov[0].len, 4096);
	cr_assert_eq(c.status, (uint8_t *)fg_host(&g, DATA) + 4096);
}

Test(vq_chain, buffer_spanning_two_regions_is_split)
{
	read_chain(0, FG_B_GPA - 1024, 4096);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	cr_assert_eq(c.nwr, 2);
	cr_assert_eq(c.wr_len, 4096);
	cr_assert_eq(c.iov[0].base, g.a + FG_REGION_SIZE - 1024);
	cr_assert_eq(c.iov[0].len, 1024);
	cr_assert_eq(c.iov[1].base, g.b);
	cr_assert_eq(c.iov[1].len, 3072);
}

Test(vq_chain, buffer_in_hole_is_ioerr)
{
	read_chain(0, FG_HOLE_GPA, 4096);
	cr_assert_eq(parse(0), PMD_CHAIN_IOERR);
	cr_assert_eq(c.status, fg_host(&g, STATUS));
	cr_assert_not_null(c.why);
}

Test(vq_chain, buffer_running_past_memory_end_is_ioerr)
{
	read_chain(0, FG_B_GPA + FG_REGION_SIZE - 512, 4096);
	cr_assert_eq(parse(0), PMD_CHAIN_IOERR);
	cr_assert_eq(c.status, fg_host(&g, STATUS));
}

Test(vq_chain, buffer_address_wrapping_is_ioerr)
{
	read_chain(0, UINT64_MAX - 100, 4096);
	cr_assert_eq(parse(0), PMD_CHAIN_IOERR);
}

Test(vq_chain, header_outside_memory_is_ioerr)
{
	read_chain(0, DATA, 512);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	desc[0].addr = FG_HOLE_GPA;
	cr_assert_eq(parse(0), PMD_CHAIN_IOERR);
	cr_assert_null(c.hdr_at, "no header read: nothing to guess from");
}

Test(vq_chain, short_header_is_ioerr)
{
	read_chain(0, DATA, 512);
	desc[0].len = 8;
	cr_assert_eq(parse(0), PMD_CHAIN_IOERR);
	cr_assert_eq(c.status, fg_host(&g, STATUS));
}

Test(vq_chain, no_writable_byte_is_broken)
{
	fg_desc(&desc[0], HDR, 16, VRING_DESC_F_NEXT, 1);
	fg_desc(&desc[1], DATA, 512, 0, 0);
	cr_assert_eq(parse(0), PMD_CHAIN_BROKEN);
	cr_assert_null(c.status);
}

Test(vq_chain, status_outside_memory_is_broken)
{
	read_chain(0, DATA, 512);
	desc[2].addr = FG_HOLE_GPA;
	cr_assert_eq(parse(0), PMD_CHAIN_BROKEN);
	cr_assert_null(c.status);
}

Test(vq_chain, zero_length_status_descriptor_uses_previous_writable_byte)
{
	read_chain(0, DATA, 513);
	desc[2].len = 0;
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	cr_assert_eq(c.wr_len, 512);
	cr_assert_eq(c.status, (uint8_t *)fg_host(&g, DATA) + 512);
}

Test(vq_chain, head_outside_queue_is_broken)
{
	cr_assert_eq(parse(QSIZE), PMD_CHAIN_BROKEN);
}

Test(vq_chain, next_outside_table_is_broken)
{
	read_chain(0, DATA, 512);
	desc[1].next = QSIZE;
	cr_assert_eq(parse(0), PMD_CHAIN_BROKEN);
}

Test(vq_chain, loop_is_broken)
{
	read_chain(0, DATA, 512);
	desc[1].next = 0;
	desc[2].flags |= VRING_DESC_F_NEXT;
	cr_assert_eq(parse(0), PMD_CHAIN_BROKEN);
}

Test(vq_chain, self_loop_on_head_is_broken)
{
	fg_desc(&desc[3], HDR, 16, VRING_DESC_F_NEXT, 3);
	cr_assert_eq(parse(3), PMD_CHAIN_BROKEN);
}

Test(vq_chain, readable_after_writable_is_ioerr)
{
	fg_desc(&desc[0], HDR, 16, VRING_DESC_F_NEXT, 1);
	fg_desc(&desc[1], DATA, 512, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	fg_desc(&desc[2], DATA + 0x800, 512, VRING_DESC_F_NEXT, 3);
	fg_desc(&desc[3], STATUS, 1, VRING_DESC_F_WRITE, 0);
	cr_assert_eq(parse(0), PMD_CHAIN_IOERR);
	cr_assert_eq(c.status, fg_host(&g, STATUS));
}

Test(vq_chain, zero_length_descriptors_are_skipped)
{
	fg_desc(&desc[0], HDR, 16, VRING_DESC_F_NEXT, 1);
	fg_desc(&desc[1], FG_HOLE_GPA, 0, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	fg_desc(&desc[2], DATA, 512, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 3);
	fg_desc(&desc[3], STATUS, 1, VRING_DESC_F_WRITE, 0);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	cr_assert_eq(c.nwr, 1);
	cr_assert_eq(c.wr_len, 512);
	cr_assert_eq(c.nempty, 1); /* counted: blk_req answers a READ/WRITE with it IOERR */
	read_chain(0, DATA, 512);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	cr_assert_eq(c.nempty, 0, "reset on every parse");
}

static void indirect_table(uint32_t n)
{
	struct vring_desc *t = fg_host(&g, ITBL);

	fg_desc(&t[0], HDR, 16, VRING_DESC_F_NEXT, 1);
	fg_desc(&t[1], DATA, 4096, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	fg_desc(&t[2], STATUS, 1, VRING_DESC_F_WRITE, 0);
	fg_desc(&desc[9], ITBL, n * sizeof(struct vring_desc), VRING_DESC_F_INDIRECT, 0);
}

Test(vq_chain, indirect_table_accepted)
{
	indirect_table(3);
	cr_assert_eq(parse(9), PMD_CHAIN_OK);
	cr_assert_eq(c.wr_len, 4096);
	cr_assert_eq(c.status, fg_host(&g, STATUS));
}

Test(vq_chain, indirect_not_negotiated_is_broken)
{
	indirect_table(3);
	ring.indirect_ok = false;
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
}

Test(vq_chain, indirect_with_next_is_broken)
{
	indirect_table(3);
	desc[9].flags |= VRING_DESC_F_NEXT;
	desc[9].next = 10;
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
}

Test(vq_chain, indirect_bad_length_is_broken)
{
	indirect_table(3);
	desc[9].len = 40;
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
	desc[9].len = 0;
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
	desc[9].len = (PMD_CHAIN_MAX_INDIRECT + 1) * 16;
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
}

Test(vq_chain, indirect_table_longer_than_queue_is_broken)
{
	indirect_table(3);
	desc[9].len = (QSIZE + 1) * sizeof(struct vring_desc);
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
	desc[9].len = QSIZE * sizeof(struct vring_desc);
	cr_assert_eq(parse(9), PMD_CHAIN_OK);
}

Test(vq_chain, indirect_table_outside_memory_is_broken)
{
	indirect_table(3);
	desc[9].addr = FG_HOLE_GPA;
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
}

Test(vq_chain, indirect_table_spanning_regions_is_broken)
{
	indirect_table(3);
	desc[9].addr = FG_B_GPA - 16;
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
}

Test(vq_chain, nested_indirect_is_broken)
{
	struct vring_desc *t = fg_host(&g, ITBL);

	indirect_table(3);
	fg_desc(&t[1], ITBL, 48, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 2);
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
}

Test(vq_chain, indirect_in_middle_of_direct_chain_is_broken)
{
	indirect_table(3);
	fg_desc(&desc[8], HDR, 16, VRING_DESC_F_NEXT, 9);
	cr_assert_eq(parse(8), PMD_CHAIN_BROKEN);
}

Test(vq_chain, indirect_next_outside_table_is_broken)
{
	struct vring_desc *t = fg_host(&g, ITBL);

	indirect_table(3);
	t[1].next = 3; /* valid in the ring, not in a 3-entry table */
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
}

Test(vq_chain, indirect_loop_is_broken)
{
	struct vring_desc *t = fg_host(&g, ITBL);

	indirect_table(3);
	t[2].flags |= VRING_DESC_F_NEXT;
	t[2].next = 1;
	cr_assert_eq(parse(9), PMD_CHAIN_BROKEN);
}

Test(vq_chain, too_many_segments_is_ioerr)
{
	uint16_t i, n = PMD_CHAIN_MAX_IOV + 2;

	fg_desc(&desc[0], HDR, 16, VRING_DESC_F_NEXT, 1);
	for (i = 1; i <= n; i++)
		fg_desc(&desc[i], DATA + 512ULL * (i % 8), 512,
			VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, i + 1);
	fg_desc(&desc[n + 1], STATUS, 1, VRING_DESC_F_WRITE, 0);
	cr_assert_eq(parse(0), PMD_CHAIN_IOERR);
	cr_assert_eq(c.status, fg_host(&g, STATUS));
}

Test(vq_chain, max_segments_accepted)
{
	uint16_t i, n = PMD_CHAIN_MAX_IOV - 1; /* + status = full array */

	fg_desc(&desc[0], HDR, 16, VRING_DESC_F_NEXT, 1);
	for (i = 1; i <= n; i++)
		fg_desc(&desc[i], DATA, 512, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, i + 1);
	fg_desc(&desc[n + 1], STATUS, 1, VRING_DESC_F_WRITE, 0);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	cr_assert_eq(c.nwr, n);
	cr_assert_eq(c.wr_len, 512ULL * n);
}

Test(vq_chain, chain_rewritten_after_parse_does_not_change_result)
{
	read_chain(0, DATA, 4096);
	cr_assert_eq(parse(0), PMD_CHAIN_OK);
	desc[1].addr = FG_HOLE_GPA; /* the guest scribbles afterwards */
	cr_assert_eq(c.iov[0].base, fg_host(&g, DATA));
}

Test(vq_chain, iov_copy_helpers_cross_segments)
{
	uint8_t a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, out[6] = {0};
	const uint8_t src[5] = {9, 9, 9, 9, 9};
	struct fm_iov iov[2] = {{a, 4}, {b, 4}};

	cr_assert_eq(pmd_iov_copy_out(iov, 2, 2, out, 6), 6);
	cr_assert_arr_eq(out, ((uint8_t[]){3, 4, 5, 6, 7, 8}), 6);
	cr_assert_eq(pmd_iov_copy_out(iov, 2, 6, out, 6), 2);
	cr_assert_eq(pmd_iov_copy_in(iov, 2, src, 5), 5);
	cr_assert_eq(a[3], 9);
	cr_assert_eq(b[0], 9);
	cr_assert_eq(b[1], 6);
}

/* Does [p, p + len) lie inside one of the fake guest's host buffers? */
static bool inside_guest(const void *p, uint64_t len)
{
	const uint8_t *b = p;

	return (b >= g.a && b + len <= g.a + FG_REGION_SIZE) ||
	       (b >= g.b && b + len <= g.b + FG_REGION_SIZE);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A random address: mostly inside the regions, sometimes at or past an edge. */
static uint64_t rnd_gpa(uint64_t *s)
{
	switch (rnd(s) % 6) {
	case 0:
		return FG_HOLE_GPA + rnd(s) % 0x1000;
	case 1:
		return FG_B_GPA - rnd(s) % 64;
	case 2:
		return FG_B_GPA + FG_REGION_SIZE - rnd(s) % 64;
	case 3:
		return rnd(s);
	default:
		return FG_A_GPA + rnd(s) % (2 * FG_REGION_SIZE);
	}
}

Test(vq_chain, random_chains_never_point_outside_guest_memory)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	struct vring_desc *t = fg_host(&g, ITBL);
	unsigned ok = 0, ioerr = 0, broken = 0;

	for (int iter = 0; iter < 20000; iter++) {
		unsigned n = 1 + rnd(&seed) % 12, i;
		enum pmd_chain_result r;

		for (i = 0; i < 16; i++) {
			struct vring_desc *d = (i % 2) ? &desc[i / 2] : &t[i / 2];

			fg_desc(d, rnd_gpa(&seed), (uint32_t)(rnd(&seed) % 9000),
				(uint16_t)(rnd(&seed) & 7), (uint16_t)(rnd(&seed) % (n + 2)));
		}
		if (rnd(&seed) % 4 == 0)
			fg_desc(&desc[0], ITBL, (uint32_t)(16 * (1 + rnd(&seed) % 8)),
				VRING_DESC_F_INDIRECT, 0);
		ring.indirect_ok = rnd(&seed) & 1;
		r = parse((uint16_t)(rnd(&seed) % 10));
		if (r == PMD_CHAIN_BROKEN) {
			cr_assert_null(c.status);
			broken++;
			continue;
		}
		cr_assert(inside_guest(c.status, 1), "status outside guest memory");
		cr_assert_leq(c.nrd + c.nwr, PMD_CHAIN_MAX_IOV);
		if (r == PMD_CHAIN_IOERR) {
			ioerr++;
			continue;
		}
		/* (guest buffers may overlap each other: that is the guest's business) */
		uint64_t sum = 0;

		for (i = 0; i < c.nrd + c.nwr; i++) {
			cr_assert(inside_guest(c.iov[i].base, c.iov[i].len),
				  "segment %u outside guest memory", i);
			sum += c.iov[i].len;
		}
		cr_assert_eq(sum, c.rd_len + c.wr_len);
		ok++;
	}
	cr_log_info("random chains: %u ok, %u ioerr, %u broken", ok, ioerr, broken);
	cr_assert_gt(ok, 0);
	cr_assert_gt(ioerr, 0);
	cr_assert_gt(broken, 0);
}

static bool peek(uint16_t head, struct pmd_chain_hint *h)
{
	return pmd_chain_peek(g.mem, &ring, head, h);
}

Test(vq_chain, peek_direct_read)
{
	struct pmd_chain_hint h;

	read_chain(5, DATA, 4096);
	cr_assert(peek(5, &h));
	cr_assert_eq(h.type, VIRTIO_BLK_T_IN);
	cr_assert_eq(h.sector, 77);
	cr_assert_eq(h.data_len, 4096);
}

Test(vq_chain, peek_indirect_read)
{
	struct pmd_chain_hint h;

	indirect_table(3);
	cr_assert(peek(9, &h));
	cr_assert_eq(h.sector, 77);
	cr_assert_eq(h.data_len, 4096);
	ring.indirect_ok = false;
	cr_assert_not(peek(9, &h));
	ring.indirect_ok = true;
	desc[9].addr = FG_HOLE_GPA;
	cr_assert_not(peek(9, &h));
}

Test(vq_chain, peek_refuses_what_it_cannot_read)
{
	struct pmd_chain_hint h;

	cr_assert_not(peek(QSIZE, &h), "head outside the queue");
	read_chain(5, FG_HOLE_GPA, 16);
	desc[5].addr = FG_HOLE_GPA;
	cr_assert_not(peek(5, &h), "header outside memory");
	read_chain(5, DATA, 4096);
	desc[5].addr = FG_B_GPA - 8;
	cr_assert_not(peek(5, &h), "header spanning two regions");
	read_chain(5, DATA, 4096);
	desc[5].len = 8;
	cr_assert_not(peek(5, &h), "header split over descriptors");
	read_chain(5, DATA, 4096);
	desc[5].flags |= VRING_DESC_F_WRITE;
	cr_assert_not(peek(5, &h), "writable header");
}

Test(vq_chain, peek_without_valid_next_has_no_data_len)
{
	struct pmd_chain_hint h;

	read_chain(5, DATA, 4096);
	desc[5].next = QSIZE;
	cr_assert(peek(5, &h));
	cr_assert_eq(h.data_len, 0);
	desc[5].flags = 0;
	cr_assert(peek(5, &h));
	cr_assert_eq(h.data_len, 0);
	cr_assert_eq(parse(5), PMD_CHAIN_BROKEN, "peek must not make parse lenient");
}

/* pmd_chain_parse (with its three-descriptor fast path) against the general walk. */
static void assert_same_as_walk(uint16_t head)
{
	static struct pmd_chain w;
	enum pmd_chain_result rf = pmd_chain_parse(g.mem, &ring, head, &c);
	enum pmd_chain_result rw = pmd_chain_parse_walk(g.mem, &ring, head, &w);

	cr_assert_eq(rf, rw);
	assert_chain_same(rf, &c, &w);
}

Test(vq_chain, three_descriptor_fast_path_agrees_with_the_walk)
{
	static const uint16_t odd_flags[] = {
	    0, VRING_DESC_F_WRITE, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE,
	    VRING_DESC_F_NEXT | VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT | 0x8};
	const uint64_t datas[] = {DATA, FG_B_GPA - 1024, FG_B_GPA + FG_REGION_SIZE - 512,
				  FG_HOLE_GPA, UINT64_MAX - 100};
	const uint32_t lens[] = {0, 1, 16, 512, 4096};

	for (unsigned d = 0; d < sizeof(datas) / sizeof(datas[0]); d++) {
		for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			read_chain(10, datas[d], lens[l]);
			assert_same_as_walk(10);
			desc[11].flags = VRING_DESC_F_NEXT; /* a write */
			assert_same_as_walk(10);
		}
	}
	for (unsigned f = 0; f < sizeof(odd_flags) / sizeof(odd_flags[0]); f++) {
		for (unsigned which = 10; which <= 12; which++) {
			read_chain(10, DATA, 4096);
			desc[which].flags = odd_flags[f];
			assert_same_as_walk(10);
		}
	}
	for (unsigned which = 10; which <= 12; which++) {
		for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			read_chain(10, DATA, 4096);
			desc[which].len = lens[l];
			assert_same_as_walk(10);
		}
		read_chain(10, DATA, 4096);
		desc[which].addr = FG_HOLE_GPA;
		assert_same_as_walk(10);
		read_chain(10, DATA, 4096);
		desc[which].next = QSIZE;
		assert_same_as_walk(10);
		read_chain(10, DATA, 4096);
		desc[which].next = 10; /* loops back to the head */
		assert_same_as_walk(10);
	}
	read_chain(10, FG_B_GPA - 16, 4096); /* header at the end of region A */
	desc[10].addr = FG_B_GPA - 8;	     /* split over both regions */
	assert_same_as_walk(10);
	read_chain(0, DATA, 4096);
	ring.size = 2; /* a chain of three cannot fit a table of two */
	assert_same_as_walk(0);
	ring.size = 4;
	assert_same_as_walk(0);
}

Test(vq_chain, three_descriptor_read_and_write_take_the_data_buffer_whole)
{
	read_chain(10, FG_B_GPA + 0x100, 4096);
	cr_assert_eq(parse(10), PMD_CHAIN_OK);
	cr_assert_eq(c.nwr, 1);
	cr_assert_eq(c.nrd, 0);
	cr_assert_eq(c.wr_len, 4096);
	cr_assert_eq(c.rd_len, 0);
	cr_assert_eq(c.iov[0].base, fg_host(&g, FG_B_GPA + 0x100));
	cr_assert_eq(c.status, fg_host(&g, STATUS));
	cr_assert_null(c.why);
	desc[11].flags = VRING_DESC_F_NEXT;
	cr_assert_eq(parse(10), PMD_CHAIN_OK);
	cr_assert_eq(c.nrd, 1);
	cr_assert_eq(c.nwr, 0);
	cr_assert_eq(c.rd_len, 4096);
	cr_assert_eq(c.wr_len, 0);
	cr_assert_eq(c.iov[0].base, fg_host(&g, FG_B_GPA + 0x100));
	cr_assert_eq(c.ndesc, 3);
	cr_assert_eq(c.nempty, 0);
}

/*
 * pmd_chain_touch only reads: whatever the driver put in the chain (a head
 * outside the queue, a header outside memory or across regions, a next
 * outside the table, an indirect table), the descriptors are left as they
 * were and the chain parses as before.  The sanitizer build catches a read
 * outside the table.
 */
static void assert_touch_leaves_chain_alone(uint16_t head)
{
	static struct vring_desc before[QSIZE];
	enum pmd_chain_result r = head < QSIZE ? parse(head) : PMD_CHAIN_BROKEN;

	struct pmd_chain_touched touched;

	memcpy(before, desc, sizeof(desc));
	pmd_chain_touch(g.mem, &ring, head, &touched);
	cr_assert_arr_eq(before, desc, sizeof(desc));
	if (head < QSIZE)
		cr_assert_eq(parse(head), r);
}

Test(vq_chain, touch_reads_nothing_it_cannot_and_writes_nothing)
{
	read_chain(5, DATA, 4096);
	assert_touch_leaves_chain_alone(5);
	assert_touch_leaves_chain_alone(QSIZE);
	assert_touch_leaves_chain_alone(UINT16_MAX);
	desc[5].addr = FG_HOLE_GPA;
	assert_touch_leaves_chain_alone(5);
	read_chain(5, DATA, 4096);
	desc[5].addr = FG_B_GPA - 8;
	assert_touch_leaves_chain_alone(5);
	read_chain(5, DATA, 4096);
	desc[5].next = QSIZE;
	assert_touch_leaves_chain_alone(5);
	indirect_table(3);
	assert_touch_leaves_chain_alone(9);
}

/* Touch the chain at head: what it noted reads as a full peek does (a 4 KiB read here). */
static void assert_touch_reads_as_peek(uint16_t head, struct pmd_chain_touched *t)
{
	struct pmd_chain_hint full, fast;

	pmd_chain_touch(g.mem, &ring, head, t);
	cr_assert_not_null(t->hdr);
	cr_assert(peek(head, &full));
	pmd_chain_peek_touched(t, &fast);
	cr_assert_eq(fast.type, full.type);
	cr_assert_eq(fast.sector, full.sector);
	cr_assert_eq(fast.data_len, full.data_len);
	cr_assert_eq(fast.data_len, 4096);
}

/* What the touch notes gives the same hint as a full peek, and nothing for a chain it cannot read.
 */
Test(vq_chain, touch_notes_where_the_peek_reads)
{
	struct pmd_chain_touched t;
	struct pmd_chain_hint fast;

	read_chain(5, DATA, 4096);
	assert_touch_reads_as_peek(5, &t);
	cr_assert_eq(t.next, &desc[desc[5].next]);

	/* the driver changed the header since the touch: the noted place reads it as it is now */
	((struct virtio_blk_outhdr *)fg_host(&g, HDR))->sector = 99;
	pmd_chain_peek_touched(&t, &fast);
	cr_assert_eq(fast.sector, 99);

	desc[5].flags = 0; /* no next descriptor */
	pmd_chain_touch(g.mem, &ring, 5, &t);
	cr_assert_null(t.next);
	pmd_chain_peek_touched(&t, &fast);
	cr_assert_eq(fast.data_len, 0);

	read_chain(5, DATA, 4096);
	desc[5].flags |= VRING_DESC_F_WRITE;
	pmd_chain_touch(g.mem, &ring, 5, &t);
	cr_assert_null(t.hdr, "writable header");
	read_chain(5, DATA, 4096);
	desc[5].len = 8;
	pmd_chain_touch(g.mem, &ring, 5, &t);
	cr_assert_null(t.hdr, "header split over descriptors");
	read_chain(5, DATA, 4096);
	desc[5].addr = FG_HOLE_GPA;
	pmd_chain_touch(g.mem, &ring, 5, &t);
	cr_assert_null(t.hdr, "header outside memory");
	pmd_chain_touch(g.mem, &ring, QSIZE, &t);
	cr_assert_null(t.hdr, "head outside the queue");
	cr_assert_null(t.next);
	/* an indirect chain: the header and data descriptor are its table's */
	indirect_table(3);
	assert_touch_reads_as_peek(9, &t);
	cr_assert_eq((const void *)t.hdr, fg_host(&g, HDR));
	cr_assert_eq(t.next, (const struct vring_desc *)fg_host(&g, ITBL) + 1);
	ring.indirect_ok = false;
	pmd_chain_touch(g.mem, &ring, 9, &t);
	cr_assert_null(t.hdr, "indirect descriptors not negotiated");
	ring.indirect_ok = true;
	desc[9].flags |= VRING_DESC_F_NEXT;
	pmd_chain_touch(g.mem, &ring, 9, &t);
	cr_assert_null(t.hdr, "an indirect descriptor with NEXT");
	indirect_table(3);
	desc[9].addr = FG_HOLE_GPA;
	pmd_chain_touch(g.mem, &ring, 9, &t);
	cr_assert_null(t.hdr, "a table outside memory");
}

/*
 * The indirect fast path takes Linux's chain (a lone INDIRECT head naming a
 * table of header, data, status) and describes it as the walk does; every
 * variant it does not take the walk judges: the two always agree.
 */
Test(vq_chain, indirect_fast_path_agrees_with_the_walk)
{
	struct vring_desc *t = fg_host(&g, ITBL);
	static const uint16_t odd_flags[] = {
	    0, VRING_DESC_F_WRITE, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE,
	    VRING_DESC_F_NEXT | VRING_DESC_F_INDIRECT, VRING_DESC_F_NEXT | 0x8};
	const uint32_t lens[] = {0, 1, 16, 512, 4096};

	indirect_table(3);
	cr_assert(pmd_chain_parse_indirect3(g.mem, &ring, 9, &c));
	cr_assert_eq(c.wr_len, 4096);
	cr_assert_eq(c.iov[0].base, fg_host(&g, DATA));
	cr_assert_eq(c.status, fg_host(&g, STATUS));
	cr_assert_eq(c.hdr.sector, 77);
	assert_same_as_walk(9);
	t[1].flags = VRING_DESC_F_NEXT; /* a write */
	assert_same_as_walk(9);
	for (unsigned e = 0; e < 3; e++) {
		for (unsigned f = 0; f < sizeof(odd_flags) / sizeof(odd_flags[0]); f++) {
			indirect_table(3);
			t[e].flags = odd_flags[f];
			assert_same_as_walk(9);
		}
		for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			indirect_table(3);
			t[e].len = lens[l];
			assert_same_as_walk(9);
		}
		indirect_table(3);
		t[e].addr = FG_HOLE_GPA;
		assert_same_as_walk(9);
		for (uint16_t next = 0; next <= 3; next++) { /* loops and ends past the table */
			indirect_table(3);
			t[e].next = next;
			assert_same_as_walk(9);
		}
	}
	for (uint32_t n = 0; n <= 4; n++) { /* the table's length in entries */
		indirect_table(n);
		assert_same_as_walk(9);
	}
	indirect_table(3);
	desc[9].len = 47;
	assert_same_as_walk(9);
	indirect_table(3);
	desc[9].flags |= VRING_DESC_F_WRITE;
	assert_same_as_walk(9);
	indirect_table(3);
	desc[9].addr = FG_B_GPA - 32; /* the table runs into the next region */
	assert_same_as_walk(9);
	fg_desc(&desc[1], ITBL, 3 * sizeof(struct vring_desc), VRING_DESC_F_INDIRECT, 0);
	ring.size = 2; /* a table longer than the queue */
	assert_same_as_walk(1);
	ring.size = QSIZE;
	ring.indirect_ok = false;
	cr_assert_not(pmd_chain_parse_indirect3(g.mem, &ring, 9, &c));
	assert_same_as_walk(9);
}

/*
 * virtio 1.1 2.7.5.3 sets no alignment for an indirect table or a request
 * header: a table and a header at odd guest addresses parse and peek like
 * aligned ones (the sanitizer build catches a misaligned member access).
 */
Test(vq_chain, indirect_table_and_header_at_odd_addresses)
{
	struct virtio_blk_outhdr h = {.type = VIRTIO_BLK_T_IN, .sector = 1234567};
	uint64_t itbl = ITBL + 3, hdr = HDR + 0x41;
	uint8_t *t = fg_host(&g, itbl);
	struct vring_desc d[3];
	struct pmd_chain_hint ph;
	struct pmd_chain_touched tt;

	memcpy(fg_host(&g, hdr), &h, sizeof(h));
	fg_desc(&d[0], hdr, 16, VRING_DESC_F_NEXT, 1);
	fg_desc(&d[1], DATA + 5, 4096, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	fg_desc(&d[2], STATUS + 7, 1, VRING_DESC_F_WRITE, 0);
	memcpy(t, d, sizeof(d));
	fg_desc(&desc[9], itbl, sizeof(d), VRING_DESC_F_INDIRECT, 0);
	cr_assert_eq(parse(9), PMD_CHAIN_OK);
	cr_assert_eq(c.hdr.type, VIRTIO_BLK_T_IN);
	cr_assert_eq(c.hdr.sector, 1234567);
	cr_assert_eq(c.nwr, 1);
	cr_assert_eq(c.iov[0].base, fg_host(&g, DATA + 5));
	cr_assert_eq(c.wr_len, 4096);
	cr_assert_eq(c.status, fg_host(&g, STATUS + 7));
	cr_assert_eq(c.ndesc, 3);
	cr_assert(peek(9, &ph));
	cr_assert_eq(ph.sector, 1234567);
	cr_assert_eq(ph.data_len, 4096);

	pmd_chain_touch(g.mem, &ring, 9, &tt);
	cr_assert_eq((const void *)tt.hdr, fg_host(&g, hdr));
	pmd_chain_peek_touched(&tt, &ph);
	cr_assert_eq(ph.sector, 1234567);
	cr_assert_eq(ph.data_len, 4096);

	/* the same chain direct, its header at the odd address */
	fg_desc(&desc[20], hdr, 16, VRING_DESC_F_NEXT, 21);
	fg_desc(&desc[21], DATA, 4096, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 22);
	fg_desc(&desc[22], STATUS, 1, VRING_DESC_F_WRITE, 0);
	pmd_chain_touch(g.mem, &ring, 20, &tt);
	cr_assert_not_null(tt.hdr);
	pmd_chain_peek_touched(&tt, &ph);
	cr_assert_eq(ph.sector, 1234567);
	cr_assert_eq(ph.data_len, 4096);
	cr_assert_eq(parse(20), PMD_CHAIN_OK);
	cr_assert_eq(c.hdr.sector, 1234567);
}
