/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_blk_req.c - request semantics per virtio-blk type: what reaches the
 * model, the status, the used length, and every range / direction /
 * segment-list check.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fake_guest.h"
#include "pmd/blk_req.h"

#define CAP (1ULL << 20) /* 1 MiB device: 2048 sectors */
#define NOW 1000

static struct pmd_blk_target t;
static struct fake_model m;
static struct pmd_chain c;
static struct pmd_blk_done d;
static uint8_t buf[8192];

static void setup(void)
{
	fg_target(&t, &m, CAP);
	memset(&c, 0, sizeof(c));
	memset(buf, 0xee, sizeof(buf));
}

TestSuite(blk_req, .init = setup);

static void hdr(uint32_t type, uint64_t sector)
{
	c.hdr.type = type;
	c.hdr.sector = sector;
}

/* Device-writable data of len bytes in one segment. */
static void wr_data(uint32_t len)
{
	c.iov[c.nrd + c.nwr].base = buf;
	c.iov[c.nrd + c.nwr].len = len;
	c.nwr++;
	c.wr_len += len;
}

static void rd_data(void *p, uint32_t len)
{
	c.iov[c.nrd].base = p;
	c.iov[c.nrd].len = len;
	c.nrd++;
	c.rd_len += len;
}

static void exec(void)
{
	pmd_blk_req_exec(&t, &c, PMD_CHAIN_OK, NOW, &d);
}

Test(blk_req, read_reaches_model_with_byte_offset)
{
	hdr(VIRTIO_BLK_T_IN, 8);
	wr_data(4096);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(m.calls, 1);
	cr_assert_eq(m.req[0].op, FM_OP_READ);
	cr_assert_eq(m.req[0].offset, 4096);
	cr_assert_eq(m.req[0].len, 4096);
	cr_assert_eq(m.req[0].iovcnt, 1);
	cr_assert_eq(m.req[0].iov[0].base, buf);
	cr_assert_eq(d.used_len, 4097);
	cr_assert_eq(d.rd_bytes, 4096);
}

/* A READ/WRITE with a data descriptor of length 0 (virtio-blk: no buffer) is IOERR. */
Test(blk_req, zero_length_data_descriptor_is_ioerr)
{
	static uint8_t src[512];
	uint32_t types[2] = {VIRTIO_BLK_T_IN, VIRTIO_BLK_T_OUT};

	for (int i = 0; i < 2; i++) {
		memset(&c, 0, sizeof(c));
		hdr(types[i], 0);
		if (types[i] == VIRTIO_BLK_T_IN)
			wr_data(512);
		else
			rd_data(src, 512);
		c.nempty = 1;
		exec();
		cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR, "type %u", types[i]);
		cr_assert_eq(d.used_len, 1);
		memset(&c, 0, sizeof(c)); /* only a zero-length descriptor: IOERR too */
		hdr(types[i], 0);
		c.nempty = 1;
		exec();
		cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR, "type %u", types[i]);
	}
	cr_assert_eq(m.calls, 0);
}

/* The transport's FM_REQ_PREFETCHED reaches the model with a read, never with a write. */
Test(blk_req, a_prefetched_read_says_so_to_the_model_a_write_never)
{
	hdr(VIRTIO_BLK_T_IN, 8);
	wr_data(4096);
	exec();
	cr_assert_eq(m.req[0].flags, 0, "not hinted: no flag");
	c.fm_flags = FM_REQ_PREFETCHED;
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(m.req[1].op, FM_OP_READ);
	cr_assert_eq(m.req[1].flags, FM_REQ_PREFETCHED);
	memset(&c, 0, sizeof(c));
	c.fm_flags = FM_REQ_PREFETCHED;
	hdr(VIRTIO_BLK_T_OUT, 8);
	rd_data(buf, 4096);
	exec();
	cr_assert_eq(m.req[2].op, FM_OP_WRITE);
	cr_assert_eq(m.req[2].flags, 0);
}

Test(blk_req, read_of_last_sector_ok_one_past_fails)
{
	hdr(VIRTIO_BLK_T_IN, CAP / 512 - 1);
	wr_data(512);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	hdr(VIRTIO_BLK_T_IN, CAP / 512 - 1);
	c.iov[0].len = 1024;
	c.wr_len = 1024;
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(d.used_len, 1);
	cr_assert_eq(m.calls, 1);
}

Test(blk_req, sector_overflow_is_ioerr)
{
	hdr(VIRTIO_BLK_T_IN, 1ULL << 62);
	wr_data(512);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	hdr(VIRTIO_BLK_T_IN, UINT64_MAX);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, length_not_multiple_of_512_is_ioerr)
{
	hdr(VIRTIO_BLK_T_IN, 0);
	wr_data(1000);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, read_with_readable_data_is_ioerr)
{
	hdr(VIRTIO_BLK_T_IN, 0);
	rd_data(buf + 4096, 512);
	wr_data(512);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, write_reaches_model)
{
	hdr(VIRTIO_BLK_T_OUT, 2);
	rd_data(buf, 512);
	rd_data(buf + 1024, 1024);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(m.req[0].op, FM_OP_WRITE);
	cr_assert_eq(m.req[0].offset, 1024);
	cr_assert_eq(m.req[0].len, 1536);
	cr_assert_eq(m.req[0].iovcnt, 2);
	cr_assert_eq(d.used_len, 1);
	cr_assert_eq(d.wr_bytes, 1536);
}

Test(blk_req, write_on_readonly_device_is_ioerr)
{
	t.readonly = true;
	hdr(VIRTIO_BLK_T_OUT, 0);
	rd_data(buf, 512);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, read_on_readonly_device_ok)
{
	t.readonly = true;
	hdr(VIRTIO_BLK_T_IN, 0);
	wr_data(512);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
}

Test(blk_req, write_with_writable_data_is_ioerr)
{
	hdr(VIRTIO_BLK_T_OUT, 0);
	rd_data(buf, 512);
	wr_data(512);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, flush_reaches_model)
{
	hdr(VIRTIO_BLK_T_FLUSH, 0);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(m.calls, 1);
	cr_assert_eq(m.req[0].op, FM_OP_FLUSH);
}

Test(blk_req, get_id_copies_serial)
{
	hdr(VIRTIO_BLK_T_GET_ID, 0);
	wr_data(PMD_SERIAL_LEN);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(memcmp(buf, "SERIAL-0123456789ABC", PMD_SERIAL_LEN), 0);
	cr_assert_eq(d.used_len, PMD_SERIAL_LEN + 1);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, get_id_short_buffer_gets_prefix_only)
{
	hdr(VIRTIO_BLK_T_GET_ID, 0);
	wr_data(6);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(memcmp(buf, "SERIAL", 6), 0);
	cr_assert_eq(buf[6], 0xee);
	cr_assert_eq(d.used_len, 7);
}

Test(blk_req, unknown_type_is_unsupp)
{
	hdr(99, 0);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_UNSUPP);
	hdr(10 /* GET_LIFETIME */, 0);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_UNSUPP);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, parse_error_is_ioerr_without_model)
{
	hdr(VIRTIO_BLK_T_IN, 0);
	wr_data(512);
	pmd_blk_req_exec(&t, &c, PMD_CHAIN_IOERR, NOW, &d);
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, model_status_and_due_time_propagate)
{
	m.status = FM_S_IOERR;
	m.due_delta = 40000;
	hdr(VIRTIO_BLK_T_IN, 0);
	wr_data(512);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(d.due_ns, NOW + 40000);
	cr_assert_eq(d.rd_bytes, 0);
}

static struct virtio_blk_discard_write_zeroes segs[PMD_BLK_MAX_DWZ_SEG + 1];

static void dwz(uint32_t type, unsigned n)
{
	hdr(type, 0);
	rd_data(segs, n * sizeof(segs[0]));
}

Test(blk_req, discard_segments_reach_model)
{
	segs[0] = (struct virtio_blk_discard_write_zeroes){.sector = 8, .num_sectors = 16};
	segs[1] = (struct virtio_blk_discard_write_zeroes){.sector = 100, .num_sectors = 1};
	m.due_delta = 5;
	dwz(VIRTIO_BLK_T_DISCARD, 2);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(m.calls, 2);
	cr_assert_eq(m.req[0].op, FM_OP_DISCARD);
	cr_assert_eq(m.req[0].offset, 4096);
	cr_assert_eq(m.req[0].len, 8192);
	cr_assert_eq(m.req[1].offset, 51200);
	cr_assert_eq(m.req[1].len, 512);
	cr_assert_eq(d.due_ns, NOW + 5);
}

Test(blk_req, discard_segment_split_over_iovs)
{
	segs[0] = (struct virtio_blk_discard_write_zeroes){.sector = 8, .num_sectors = 16};
	hdr(VIRTIO_BLK_T_DISCARD, 0);
	rd_data(segs, 5);
	rd_data((uint8_t *)segs + 5, 11);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(m.req[0].offset, 4096);
	cr_assert_eq(m.req[0].len, 8192);
}

Test(blk_req, discard_with_unmap_flag_is_unsupp)
{
	segs[0] = (struct virtio_blk_discard_write_zeroes){
	    .sector = 0, .num_sectors = 8, .flags = VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP};
	dwz(VIRTIO_BLK_T_DISCARD, 1);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_UNSUPP);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, write_zeroes_with_unmap_passes_flag)
{
	segs[0] = (struct virtio_blk_discard_write_zeroes){
	    .sector = 0, .num_sectors = 8, .flags = VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP};
	segs[1] = (struct virtio_blk_discard_write_zeroes){.sector = 16, .num_sectors = 8};
	dwz(VIRTIO_BLK_T_WRITE_ZEROES, 2);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(m.req[0].op, FM_OP_WRITE_ZEROES);
	cr_assert_eq(m.req[0].flags, FM_REQ_UNMAP);
	cr_assert_eq(m.req[1].flags, 0);
}

Test(blk_req, write_zeroes_reserved_flags_unsupp)
{
	segs[0] =
	    (struct virtio_blk_discard_write_zeroes){.sector = 0, .num_sectors = 8, .flags = 2};
	dwz(VIRTIO_BLK_T_WRITE_ZEROES, 1);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_UNSUPP);
}

Test(blk_req, discard_bad_lists_are_ioerr_and_nothing_applied)
{
	/* second segment out of range: the first must not be applied */
	segs[0] = (struct virtio_blk_discard_write_zeroes){.sector = 0, .num_sectors = 8};
	segs[1] =
	    (struct virtio_blk_discard_write_zeroes){.sector = CAP / 512 - 4, .num_sectors = 8};
	dwz(VIRTIO_BLK_T_DISCARD, 2);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);

	memset(&c, 0, sizeof(c));
	hdr(VIRTIO_BLK_T_DISCARD, 0);
	rd_data(segs, 20); /* not a multiple of 16 */
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);

	memset(&c, 0, sizeof(c));
	memset(segs, 0, sizeof(segs));
	dwz(VIRTIO_BLK_T_DISCARD, PMD_BLK_MAX_DWZ_SEG + 1);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);

	memset(&c, 0, sizeof(c));
	hdr(VIRTIO_BLK_T_DISCARD, 0);
	exec(); /* no segment at all */
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);

	memset(&c, 0, sizeof(c));
	segs[0] = (struct virtio_blk_discard_write_zeroes){
	    .sector = 0, .num_sectors = PMD_BLK_MAX_DWZ_SECTORS + 1};
	dwz(VIRTIO_BLK_T_DISCARD, 1);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);

	memset(&c, 0, sizeof(c));
	segs[0] = (struct virtio_blk_discard_write_zeroes){.sector = UINT64_MAX, .num_sectors = 1};
	dwz(VIRTIO_BLK_T_WRITE_ZEROES, 1);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, discard_on_readonly_is_ioerr)
{
	t.readonly = true;
	segs[0] = (struct virtio_blk_discard_write_zeroes){.sector = 0, .num_sectors = 8};
	dwz(VIRTIO_BLK_T_DISCARD, 1);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	dwz(VIRTIO_BLK_T_WRITE_ZEROES, 1);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t rnd_sector(uint64_t *s)
{
	switch (rnd(s) % 4) {
	case 0:
		return rnd(s);
	case 1:
		return CAP / 512 - rnd(s) % 16;
	default:
		return rnd(s) % (CAP / 512);
	}
}

/* Whatever the guest sends, the model only sees requests inside the device. */
Test(blk_req, random_requests_reach_model_only_inside_device)
{
	static const uint32_t types[] = {VIRTIO_BLK_T_IN,
					 VIRTIO_BLK_T_OUT,
					 VIRTIO_BLK_T_FLUSH,
					 VIRTIO_BLK_T_GET_ID,
					 VIRTIO_BLK_T_DISCARD,
					 VIRTIO_BLK_T_WRITE_ZEROES,
					 7,
					 0xffffffffu};
	static uint8_t big[16 * 4096];
	uint64_t seed = 12345;
	unsigned served = 0;

	for (int iter = 0; iter < 20000; iter++) {
		unsigned k, nseg = rnd(&seed) % 4;

		memset(&c, 0, sizeof(c));
		memset(&m, 0, sizeof(m));
		t.readonly = rnd(&seed) % 5 == 0;
		hdr(types[rnd(&seed) % 8], rnd_sector(&seed));
		for (k = 0; k < nseg; k++) {
			uint32_t len = (uint32_t)(rnd(&seed) % 4 == 0 ? rnd(&seed) % 4096
								      : 512 * (1 + rnd(&seed) % 8));
			uint8_t *p = big + 4096 * k;

			if (rnd(&seed) & 1) {
				struct virtio_blk_discard_write_zeroes *sg = (void *)p;

				sg->sector = rnd_sector(&seed);
				sg->num_sectors = (uint32_t)(rnd(&seed) % 64);
				sg->flags = (uint32_t)(rnd(&seed) % 3);
			}
			if (c.nwr == 0 && (rnd(&seed) & 1))
				rd_data(p, len);
			else {
				c.iov[c.nrd + c.nwr].base = p;
				c.iov[c.nrd + c.nwr].len = len;
				c.nwr++;
				c.wr_len += len;
			}
		}
		exec();
		cr_assert(d.status == VIRTIO_BLK_S_OK || d.status == VIRTIO_BLK_S_IOERR ||
			  d.status == VIRTIO_BLK_S_UNSUPP);
		for (k = 0; k < m.calls && k < FM_REC_MAX; k++) {
			const struct fm_req *r = &m.req[k];
			uint64_t sum = 0;
			uint32_t j;

			served++;
			cr_assert_eq(r->offset % 512, 0);
			cr_assert_eq(r->len % 512, 0);
			cr_assert_leq(r->len, CAP);
			cr_assert_leq(r->offset, CAP - r->len);
			if (r->op != FM_OP_READ && r->op != FM_OP_WRITE)
				continue;
			cr_assert(!(t.readonly && r->op == FM_OP_WRITE));
			for (j = 0; j < r->iovcnt; j++)
				sum += r->iov[j].len;
			cr_assert_eq(sum, r->len);
		}
		cr_assert(!(t.readonly && m.calls &&
			    (m.req[0].op == FM_OP_DISCARD || m.req[0].op == FM_OP_WRITE_ZEROES)));
	}
	cr_assert_gt(served, 100);
}

/* Prefetch hints: reads and writes inside the device reach the model's op. */
static void hint_as(uint32_t type, uint64_t sector, uint32_t data_len, bool near)
{
	const struct pmd_chain_hint h = {.type = type, .sector = sector, .data_len = data_len};

	pmd_blk_req_prefetch(&t, &h, near);
}

static void hint(uint32_t type, uint64_t sector, uint32_t data_len)
{
	hint_as(type, sector, data_len, false);
}

Test(blk_req, prefetch_hint_of_read_and_write)
{
	t.ops = &fake_model_pf_ops;
	hint(VIRTIO_BLK_T_IN, 3, 4096);
	hint(VIRTIO_BLK_T_OUT, 8, 512);
	cr_assert_eq(m.npf, 2);
	cr_assert_eq(m.pf[0].op, FM_OP_READ);
	cr_assert_eq(m.pf[0].offset, 3 * 512);
	cr_assert_eq(m.pf[0].len, 4096);
	cr_assert_eq(m.pf[1].op, FM_OP_WRITE);
	cr_assert_eq(m.pf[1].offset, 8 * 512);
	cr_assert_eq(m.calls, 0, "a hint submitted something");
}

/* A near hint reaches a model without a flat read region through its op, as given. */
Test(blk_req, near_hint_reaches_the_model_op_unchanged)
{
	t.ops = &fake_model_pf_ops;
	hint_as(VIRTIO_BLK_T_IN, 5, 512, true);
	hint_as(VIRTIO_BLK_T_IN, CAP / 512, 512, true); /* one past the end: ignored */
	cr_assert_eq(m.npf, 1);
	cr_assert_eq(m.pf[0].op, FM_OP_READ);
	cr_assert_eq(m.pf[0].offset, 5 * 512);
	cr_assert_eq(m.pf[0].len, 512);
	cr_assert_eq(m.calls, 0, "a hint submitted something");
}

Test(blk_req, prefetch_hint_ignored_when_not_servable)
{
	t.ops = &fake_model_pf_ops;
	hint(VIRTIO_BLK_T_IN, CAP / 512, 512);	    /* one past the end */
	hint(VIRTIO_BLK_T_IN, UINT64_MAX / 8, 512); /* sector overflows */
	hint(VIRTIO_BLK_T_IN, 0, 0);
	hint(VIRTIO_BLK_T_FLUSH, 0, 512);
	hint(VIRTIO_BLK_T_GET_ID, 0, 20);
	t.readonly = true;
	hint(VIRTIO_BLK_T_OUT, 0, 512);
	cr_assert_eq(m.npf, 0);
	hint(VIRTIO_BLK_T_IN, CAP / 512 - 1, 512); /* last sector */
	cr_assert_eq(m.npf, 1);
	t.ops = &fake_model_ops; /* no prefetch op: nothing to call */
	hint(VIRTIO_BLK_T_IN, 0, 512);
	cr_assert_eq(m.npf, 1);
}

/*
 * A model with a flat read region (fm_model.h flat_read, NoSSD): reads are
 * copied out of it here and hinted here, with the model's submit() and
 * prefetch() left out; writes and the other types still reach the model.
 */
static uint8_t flat[CAP];

static void flat_setup(void)
{
	for (size_t i = 0; i < sizeof(flat); i++)
		flat[i] = (uint8_t)(i * 7 + i / 4096);
	m.base.flat_read = flat;
}

Test(blk_req, flat_read_is_copied_without_the_model)
{
	flat_setup();
	hdr(VIRTIO_BLK_T_IN, 8);
	wr_data(4096);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(m.calls, 0, "the read reached the model's submit()");
	cr_assert(memcmp(buf, flat + 8 * 512, 4096) == 0, "not the region's bytes at sector 8");
	cr_assert_eq(buf[4096], 0xee, "copied past the data buffer");
	cr_assert_eq(d.used_len, 4097);
	cr_assert_eq(d.rd_bytes, 4096);
	cr_assert_eq(d.due_ns, NOW);
}

Test(blk_req, flat_read_over_two_segments_and_the_last_sector)
{
	static uint8_t second[512];

	flat_setup();
	hdr(VIRTIO_BLK_T_IN, CAP / 512 - 2);
	wr_data(512);
	c.iov[1].base = second;
	c.iov[1].len = 512;
	c.nwr++;
	c.wr_len += 512;
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert(memcmp(buf, flat + CAP - 1024, 512) == 0);
	cr_assert(memcmp(second, flat + CAP - 512, 512) == 0);
	cr_assert_eq(d.used_len, 1025);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, flat_read_out_of_range_is_ioerr_and_copies_nothing)
{
	flat_setup();
	hdr(VIRTIO_BLK_T_IN, CAP / 512 - 7); /* 4 KiB from 3.5 KiB before the end */
	wr_data(4096);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(d.used_len, 1);
	for (size_t i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xee, "byte %zu written by a refused read", i);
	hdr(VIRTIO_BLK_T_IN, UINT64_MAX / 8); /* the byte offset overflows */
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_IOERR);
	cr_assert_eq(m.calls, 0);
}

Test(blk_req, flat_read_model_still_gets_writes_and_flushes)
{
	static uint8_t src[512];

	flat_setup();
	hdr(VIRTIO_BLK_T_OUT, 4);
	rd_data(src, 512);
	exec();
	cr_assert_eq(d.status, VIRTIO_BLK_S_OK);
	cr_assert_eq(m.calls, 1);
	cr_assert_eq(m.req[0].op, FM_OP_WRITE);
	memset(&c, 0, sizeof(c));
	hdr(VIRTIO_BLK_T_FLUSH, 0);
	exec();
	cr_assert_eq(m.calls, 2);
	cr_assert_eq(m.req[1].op, FM_OP_FLUSH);
}

Test(blk_req, flat_read_hints_stay_here_write_hints_reach_the_model)
{
	flat_setup();
	t.ops = &fake_model_pf_ops;
	hint(VIRTIO_BLK_T_IN, 3, 4096);
	hint(VIRTIO_BLK_T_IN, CAP / 512, 512); /* one past the end: nothing, no fault */
	cr_assert_eq(m.npf, 0, "a flat read's hint reached the model's prefetch()");
	hint(VIRTIO_BLK_T_OUT, 8, 512);
	cr_assert_eq(m.npf, 1);
	cr_assert_eq(m.pf[0].op, FM_OP_WRITE);
	cr_assert_eq(m.calls, 0);
}

/*
 * The reference for a flat read: a model whose submit() copies a read out of
 * the same region byte by byte (and records every call, as fake_submit()).
 */
static enum fm_status copy_model_submit(struct fm_model *model, const struct fm_req *req,
					uint64_t now_ns, uint64_t *due_ns)
{
	uint64_t off = req->offset;

	cr_assert_eq(model, &m.base);
	if (m.calls < FM_REC_MAX)
		m.req[m.calls] = *req;
	m.calls++;
	*due_ns = now_ns;
	if (req->op != FM_OP_READ)
		return FM_S_OK;
	for (uint32_t i = 0; i < req->iovcnt; i++)
		for (uint32_t j = 0; j < req->iov[i].len; j++)
			((uint8_t *)req->iov[i].base)[j] = flat[off++];
	return FM_S_OK;
}

static const struct fm_model_ops copy_model_ops = {.name = "copy", .submit = copy_model_submit};

/*
 * pmd_blk_req_exec() on random IN requests around the read path's limits
 * (segments, lengths, sectors near and past the end, readable data, empty
 * descriptors, a rejected parse): with a flat read region (copied in pmd/,
 * one segment inline, several through fm_data_read()) it answers as the
 * model's own read does without one: same status, used length, byte
 * counts, due time and bytes in the buffers; it answers OK exactly for the
 * reads it should, and a flat read never reaches submit().
 */
Test(blk_req, flat_read_answers_as_the_models_own_read)
{
	static uint8_t a[3][4096], b[3][4096];
	uint64_t seed = 99;
	unsigned one_seg = 0, multi_seg = 0, refused = 0;

	flat_setup();
	t.ops = &copy_model_ops;
	m.base.ops = &copy_model_ops;
	for (int iter = 0; iter < 20000; iter++) {
		struct pmd_blk_done da, db;
		struct pmd_chain ca;
		unsigned k, calls, nseg = 1 + (rnd(&seed) % 4 == 0 ? rnd(&seed) % 3 : 0);
		enum pmd_chain_result parsed = rnd(&seed) % 16 ? PMD_CHAIN_OK : PMD_CHAIN_IOERR;
		bool is_read = rnd(&seed) % 8 != 0, valid;

		memset(&c, 0, sizeof(c));
		hdr(is_read ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT, rnd_sector(&seed));
		if (rnd(&seed) % 16 == 0)
			rd_data(a[2], 512);
		for (k = 0; k < nseg; k++) {
			uint32_t len = rnd(&seed) % 8 ? 512 * (uint32_t)(1 + rnd(&seed) % 8)
						      : (uint32_t)(rnd(&seed) % 4097);

			c.iov[c.nrd + c.nwr].base = a[k];
			c.iov[c.nrd + c.nwr].len = len;
			c.nwr++;
			c.wr_len += len;
		}
		c.nempty = rnd(&seed) % 16 == 0;
		c.fm_flags = rnd(&seed) & 1 ? FM_REQ_PREFETCHED : 0;
		ca = c;
		memset(a, 0xa5, sizeof(a));
		memset(b, 0xa5, sizeof(b));
		memset(&da, 0x5a, sizeof(da));
		memset(&db, 0x5a, sizeof(db));
		calls = m.calls;
		m.base.flat_read = flat;
		pmd_blk_req_exec(&t, &c, parsed, NOW, &da);
		if (is_read)
			cr_assert_eq(m.calls, calls, "iteration %d: a flat read reached submit()",
				     iter);
		/* the model's own read of the same chain, its segments moved to b */
		for (k = 0; k < c.nrd + c.nwr; k++)
			for (unsigned j = 0; j < 3; j++)
				if (ca.iov[k].base == a[j])
					ca.iov[k].base = b[j];
		m.base.flat_read = NULL;
		calls = m.calls;
		pmd_blk_req_exec(&t, &ca, parsed, NOW, &db);
		cr_assert_eq(da.status, db.status, "iteration %d", iter);
		cr_assert_eq(da.used_len, db.used_len, "iteration %d", iter);
		cr_assert_eq(da.due_ns, db.due_ns);
		cr_assert_eq(da.rd_bytes, db.rd_bytes);
		cr_assert_eq(da.wr_bytes, db.wr_bytes);
		cr_assert(memcmp(a, b, sizeof(a)) == 0, "iteration %d: buffers differ", iter);
		if (!is_read)
			continue;
		valid = parsed == PMD_CHAIN_OK && c.nrd == 0 && c.nempty == 0 &&
			c.wr_len % 512 == 0 && c.hdr.sector <= CAP / 512 &&
			c.wr_len <= CAP - c.hdr.sector * 512;
		cr_assert_eq(da.status, valid ? VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR,
			     "iteration %d", iter);
		cr_assert_eq(m.calls - calls, valid && c.wr_len != 0, "iteration %d", iter);
		if (valid && c.wr_len != 0) {
			cr_assert_eq(da.used_len, 1 + c.wr_len);
			one_seg += c.nwr == 1;
			multi_seg += c.nwr > 1;
		}
		refused += !valid;
	}
	cr_assert_gt(one_seg, 1000);
	cr_assert_gt(multi_seg, 200);
	cr_assert_gt(refused, 1000);
}
