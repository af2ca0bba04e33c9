/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_nossd.c - the NoSSD model: data written through scattered segments
 * reads back as a transport reads it, out of the flat read region (also reads
 * longer than the block fm_data_read() prefetches, and the device's last
 * bytes in front of an unmapped page), discard/write-zeroes zero the range,
 * completion is immediate, submit() refuses reads, and model keys are
 * refused.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ftl/fm_data.h"
#include "ftl/fm_model_registry.h"

#define CAP (1u << 20)

static struct fm_model *m;
static uint8_t *data;
static char err[256];

static void setup(void)
{
	struct fm_model_config cfg = {.capacity_bytes = CAP, .capacity_set = true, .blk_size = 512};

	data = calloc(1, CAP);
	cr_assert_eq(fm_nossd_ops.configure(&cfg, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fm_nossd_ops.create(&cfg, data, &m, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(m->ops, &fm_nossd_ops, "the base struct names the model's ops");
}

static void teardown(void)
{
	fm_nossd_ops.destroy(m);
	free(data);
}

static enum fm_status rw(enum fm_op op, uint64_t off, struct fm_iov *iov, uint32_t n)
{
	struct fm_req r = {.op = op, .offset = off, .iov = iov, .iovcnt = n};
	uint64_t due = 1;

	for (uint32_t i = 0; i < n; i++)
		r.len += iov[i].len;
	if (op == FM_OP_READ) { /* a read is the transport's copy out of the flat region */
		fm_data_read(m->flat_read, &r);
		return FM_S_OK;
	}
	enum fm_status s = fm_nossd_ops.submit(m, &r, 1000, &due);
	cr_assert_leq(due, 1000, "NoSSD completes at once");
	return s;
}

Test(nossd, scattered_write_reads_back, .init = setup, .fini = teardown)
{
	uint8_t a[512], b[1536], c[4096];
	struct fm_iov w[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
	struct fm_iov r[1] = {{c, 2048}};

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7 + 3);
	cr_assert_eq(rw(FM_OP_WRITE, 8192, w, 2), FM_S_OK);
	cr_assert_eq(rw(FM_OP_READ, 8192, r, 1), FM_S_OK);
	cr_assert_eq(memcmp(c, a, 512), 0);
	cr_assert_eq(memcmp(c + 512, b, 1536), 0);
	cr_assert_eq(memcmp(data + 8192, a, 512), 0, "data lands at its byte offset");
}

/* Fill [off, off + len) of the device with a pattern of its byte offsets. */
static void fill_pattern(uint8_t *dev, uint64_t off, uint64_t len)
{
	for (uint64_t i = off; i < off + len; i++)
		dev[i] = (uint8_t)(i * 131 + (i >> 9));
}

static void expect_pattern(const uint8_t *buf, uint64_t off, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		cr_assert_eq(buf[i], (uint8_t)((off + i) * 131 + ((off + i) >> 9)),
			     "byte %lu of a read at %lu", (unsigned long)i, (unsigned long)off);
}

Test(nossd, reads_longer_than_the_prefetched_block_copy_every_segment, .init = setup,
     .fini = teardown)
{
	static uint8_t a[512], b[4096 + 1024], c[2560];
	struct fm_iov v[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
	uint64_t off = 65536 + 4096;

	fill_pattern(data, off, sizeof(a) + sizeof(b) + sizeof(c));
	cr_assert_eq(rw(FM_OP_READ, off, v, 3), FM_S_OK);
	expect_pattern(a, off, sizeof(a));
	expect_pattern(b, off + sizeof(a), sizeof(b));
	expect_pattern(c, off + sizeof(a) + sizeof(b), sizeof(c));
	/* one sector: below the prefetch threshold, the same copy */
	fill_pattern(data, 512, sizeof(a));
	cr_assert_eq(rw(FM_OP_READ, 512, v, 1), FM_S_OK);
	expect_pattern(a, 512, sizeof(a));
}

Test(nossd, the_last_block_reads_back_in_front_of_an_unmapped_page)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct fm_model_config cfg = {.capacity_bytes = CAP, .capacity_set = true, .blk_size = 512};
	uint8_t *map = mmap(NULL, CAP + (size_t)pg, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static uint8_t x[1024], y[3072];
	struct fm_iov v[2] = {{x, sizeof(x)}, {y, sizeof(y)}};
	struct fm_model *tail;

	cr_assert_neq(map, MAP_FAILED);
	cr_assert_eq(mprotect(map + CAP, (size_t)pg, PROT_NONE), 0);
	cr_assert_eq(fm_nossd_ops.configure(&cfg, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fm_nossd_ops.create(&cfg, map, &tail, err, sizeof(err)), 0, "%s", err);
	fill_pattern(map, CAP - 4096, 4096);
	{
		struct fm_req r = {
		    .op = FM_OP_READ, .offset = CAP - 4096, .len = 4096, .iov = v, .iovcnt = 2};

		fm_data_read(tail->flat_read, &r);
	}
	expect_pattern(x, CAP - 4096, sizeof(x));
	expect_pattern(y, CAP - 4096 + sizeof(x), sizeof(y));
	fm_nossd_ops.destroy(tail);
	munmap(map, CAP + (size_t)pg);
}

Test(nossd, discard_and_write_zeroes_read_back_zeros, .init = setup, .fini = teardown)
{
	uint8_t buf[4096];
	struct fm_iov v = {buf, sizeof(buf)};
	struct fm_req d = {.op = FM_OP_DISCARD, .offset = 0, .len = 1024};
	struct fm_req z = {.op = FM_OP_WRITE_ZEROES, .offset = 2048, .len = 1024};
	uint64_t due;

	memset(buf, 0xee, sizeof(buf));
	cr_assert_eq(rw(FM_OP_WRITE, 0, &v, 1), FM_S_OK);
	cr_assert_eq(fm_nossd_ops.submit(m, &d, 5, &due), FM_S_OK);
	cr_assert_eq(fm_nossd_ops.submit(m, &z, 5, &due), FM_S_OK);
	memset(buf, 1, sizeof(buf));
	cr_assert_eq(rw(FM_OP_READ, 0, &v, 1), FM_S_OK);
	for (int i = 0; i < 4096; i++) {
		bool zero = i < 1024 || (i >= 2048 && i < 3072);
		cr_assert_eq(buf[i], zero ? 0 : 0xee, "byte %d", i);
	}
}

Test(nossd, model_keys_are_refused)
{
	struct fm_kv kv = {"nchs", "4"};
	struct fm_model_config cfg = {
	    .capacity_bytes = CAP, .capacity_set = true, .blk_size = 512, .kv = &kv, .nkv = 1};

	cr_assert_lt(fm_nossd_ops.configure(&cfg, err, sizeof(err)), 0);
	cr_assert(strstr(err, "nchs") != NULL, "%s", err);
}

Test(nossd, registered_as_femu_mode_2)
{
	cr_assert_eq(fm_model_find(2), &fm_nossd_ops);
	cr_assert_null(fm_model_find(0));
}

/*
 * NoSSD's reads are plain copies of its data region: it says so (flat_read),
 * and a write through submit() is what a read of that region then returns.
 */
Test(nossd, flat_read_is_the_data_region_writes_land_there, .init = setup, .fini = teardown)
{
	uint8_t w[1024];
	struct fm_iov wi[1] = {{w, sizeof(w)}};

	cr_assert_eq(m->flat_read, data, "NoSSD's flat read region is not its data");
	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (uint8_t)(i ^ 0x5a);
	cr_assert_eq(rw(FM_OP_WRITE, 8192, wi, 1), FM_S_OK);
	cr_assert(memcmp((const uint8_t *)m->flat_read + 8192, w, sizeof(w)) == 0);
}

/* NoSSD has one read path, the transport's: submit() refuses a read and copies nothing. */
Test(nossd, submit_refuses_reads, .init = setup, .fini = teardown)
{
	uint8_t buf[512];
	struct fm_iov v = {buf, sizeof(buf)};
	struct fm_req r = {
	    .op = FM_OP_READ, .offset = 0, .len = sizeof(buf), .iov = &v, .iovcnt = 1};
	uint64_t due = 0;

	memset(data, 0x3c, 512);
	memset(buf, 0xee, sizeof(buf));
	cr_assert_eq(fm_nossd_ops.submit(m, &r, 1000, &due), FM_S_UNSUPP);
	for (size_t i = 0; i < sizeof(buf); i++)
		cr_assert_eq(buf[i], 0xee, "byte %zu copied by a refused read", i);
}
