/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_undo.c - the sector undo log (ftl/fm_undo.c): writes through it land
 * exactly like plain copies (segments that split blocks, partial blocks at
 * the ends, 512 and 4096-byte blocks); a block marked as being written when
 * the process "died" is rolled back to its old content by recovery, and
 * nothing else is touched; NoSSD writes through the log when it has one.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ftl/fm_data.h"
#include "ftl/fm_model_registry.h"
#include "ftl/fm_undo.h"

#define CAP (256u << 10)

static uint8_t *data, *want, *area;
static struct fm_undo u;

static void setup(void)
{
	data = malloc(CAP);
	want = malloc(CAP);
	area = calloc(1, fm_undo_bytes());
	for (unsigned i = 0; i < CAP; i++)
		data[i] = want[i] = (uint8_t)(i * 7 + 3);
}

static void teardown(void)
{
	free(data);
	free(want);
	free(area);
}

TestSuite(undo, .init = setup, .fini = teardown);

/* Write [off, off + total) from segments of the given lengths, through the log and plainly. */
static void write_both(uint32_t blk, uint64_t off, const uint32_t *lens, unsigned n, uint8_t seed)
{
	struct fm_iov iov[8];
	struct fm_req r = {.op = FM_OP_WRITE, .offset = off, .iov = iov, .iovcnt = n};
	uint8_t *src[8];

	fm_undo_init(&u, area, blk);
	for (unsigned i = 0; i < n; i++) {
		src[i] = malloc(lens[i]);
		memset(src[i], seed + i, lens[i]);
		iov[i].base = src[i];
		iov[i].len = lens[i];
		r.len += lens[i];
	}
	fm_undo_write(&u, data, &r);
	fm_data_write(want, &r);
	for (unsigned i = 0; i < n; i++)
		free(src[i]);
}

Test(undo, writes_land_like_plain_copies)
{
	const uint32_t a[] = {100 * 4, 1000 - 400 + 24, 3072, 8192};
	const uint32_t b[] = {512, 4096 + 1024};

	write_both(512, 4096, a, 4, 0x10);
	write_both(4096, 512, b, 2, 0x40); /* partial blocks at both ends */
	write_both(4096, 65536, (uint32_t[]){4096}, 1, 0x80);
	cr_assert(memcmp(data, want, CAP) == 0);
	for (unsigned i = 0; i < FM_UNDO_SLOTS; i++)
		cr_assert_eq(((struct fm_undo_slot *)area)[i].mark, 0, "slot %u left marked", i);
}

Test(undo, zero_lands_like_memset)
{
	fm_undo_init(&u, area, 4096);
	fm_undo_zero(&u, data, 1536, 9216);
	memset(want + 1536, 0, 9216);
	cr_assert(memcmp(data, want, CAP) == 0);
}

Test(undo, recovery_rolls_back_the_block_being_written)
{
	struct fm_undo_slot *s = (struct fm_undo_slot *)area;

	fm_undo_init(&u, area, 4096);
	cr_assert_eq(fm_undo_recover(&u, data, CAP), 0, "a clean log restores nothing");
	/* as if killed inside the copy of block 3: old saved and marked, half written */
	memcpy(s[5].old, data + 3 * 4096, 4096);
	s[5].mark = 3 * 4096 + 1;
	memset(data + 3 * 4096, 0xee, 2048);
	cr_assert_eq(fm_undo_recover(&u, data, CAP), 1);
	cr_assert(memcmp(data, want, CAP) == 0, "the torn block is back to its old content");
	cr_assert_eq(s[5].mark, 0);
	/* a mark outside the device or not on a block boundary is dropped, not applied */
	s[7].mark = CAP + 1;
	s[8].mark = 100;
	cr_assert_eq(fm_undo_recover(&u, data, CAP), 0);
	cr_assert(memcmp(data, want, CAP) == 0);
	cr_assert_eq(s[7].mark + s[8].mark, 0);
}

Test(undo, nossd_writes_through_the_log)
{
	struct fm_model_config cfg = {.capacity_bytes = CAP, .capacity_set = true, .blk_size = 512};
	struct fm_model *m;
	char err[128];
	uint8_t buf[1024];
	struct fm_iov iov = {buf, sizeof(buf)};
	struct fm_req r = {
	    .op = FM_OP_WRITE, .offset = 2048, .len = sizeof(buf), .iov = &iov, .iovcnt = 1};
	uint64_t due;

	fm_undo_init(&u, area, 512);
	cfg.undo = &u;
	cr_assert_eq(fm_nossd_ops.configure(&cfg, err, sizeof(err)), 0);
	cr_assert_eq(fm_nossd_ops.create(&cfg, data, &m, err, sizeof(err)), 0);
	memset(buf, 0x5a, sizeof(buf));
	cr_assert_eq(fm_nossd_ops.submit(m, &r, 10, &due), FM_S_OK);
	/* the thread's slot saved the last block's old content */
	cr_assert(memcmp(data + 2048, buf, sizeof(buf)) == 0);
	bool saved = false;
	for (unsigned i = 0; i < FM_UNDO_SLOTS; i++)
		saved |= memcmp(((struct fm_undo_slot *)area)[i].old, want + 2560, 512) == 0;
	cr_assert(saved, "the old content went through an undo slot");
	fm_nossd_ops.destroy(m);
}
