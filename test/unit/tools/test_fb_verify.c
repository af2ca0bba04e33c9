/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fb_verify.c - the --verify sector format: stamped sectors check,
 * every single-byte corruption is caught, wrong LBA / generation / zeros are
 * told apart, multi-sector checks report the first bad sector.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fb_verify.h"

static uint8_t buf[8 * FB_VERIFY_SECTOR];
static uint64_t flba, fgen;

Test(fb_verify, stamped_sector_checks)
{
	fb_verify_stamp(buf, 12345, 7);
	cr_assert_eq(fb_verify_check_sector(buf, 12345, 7, &flba, &fgen), FB_V_OK);
}

Test(fb_verify, stamp_is_deterministic_and_depends_on_lba_and_gen)
{
	static uint8_t a[FB_VERIFY_SECTOR], b[FB_VERIFY_SECTOR], c[FB_VERIFY_SECTOR];
	fb_verify_stamp(a, 5, 1);
	fb_verify_stamp(b, 5, 1);
	cr_assert_arr_eq(a, b, sizeof(a));
	fb_verify_stamp(c, 5, 2);
	cr_assert_neq(memcmp(a + 32, c + 32, sizeof(a) - 32), 0);
	fb_verify_stamp(c, 6, 1);
	cr_assert_neq(memcmp(a + 32, c + 32, sizeof(a) - 32), 0);
}

Test(fb_verify, every_byte_flip_is_detected)
{
	for (unsigned i = 0; i < FB_VERIFY_SECTOR; i++) {
		fb_verify_stamp(buf, 99, 3);
		buf[i] ^= 0x10;
		cr_assert_neq(fb_verify_check_sector(buf, 99, 3, &flba, &fgen), FB_V_OK,
			      "flip at byte %u not detected", i);
	}
}

Test(fb_verify, kinds_of_mismatch)
{
	fb_verify_stamp(buf, 100, 4);
	cr_assert_eq(fb_verify_check_sector(buf, 101, 4, &flba, &fgen), FB_V_BAD_LBA);
	cr_assert_eq(flba, 100);
	cr_assert_eq(fb_verify_check_sector(buf, 100, 5, &flba, &fgen), FB_V_BAD_GEN);
	cr_assert_eq(fgen, 4);
	buf[300] ^= 1;
	cr_assert_eq(fb_verify_check_sector(buf, 100, 4, &flba, &fgen), FB_V_BAD_CRC);
	memset(buf, 0, FB_VERIFY_SECTOR);
	cr_assert_eq(fb_verify_check_sector(buf, 100, 4, &flba, &fgen), FB_V_ZERO);
	memset(buf, 0x5a, FB_VERIFY_SECTOR);
	cr_assert_eq(fb_verify_check_sector(buf, 100, 4, &flba, &fgen), FB_V_BAD_MAGIC);
	cr_assert_str_neq(fb_verify_res_str(FB_V_BAD_GEN), fb_verify_res_str(FB_V_BAD_LBA));
}

Test(fb_verify, multi_sector_reports_first_bad)
{
	enum fb_vres r;
	fb_verify_fill(buf, 1000, 8, 2);
	cr_assert_eq(fb_verify_check(buf, 1000, 8, 2, &r, &flba, &fgen), -1);
	fb_verify_stamp(buf + 5 * FB_VERIFY_SECTOR, 1005, 9);
	fb_verify_stamp(buf + 6 * FB_VERIFY_SECTOR, 1000, 2);
	cr_assert_eq(fb_verify_check(buf, 1000, 8, 2, &r, &flba, &fgen), 5);
	cr_assert_eq(r, FB_V_BAD_GEN);
	cr_assert_eq(fb_verify_check(buf + 6 * FB_VERIFY_SECTOR, 1006, 2, 2, &r, &flba, &fgen), 0);
	cr_assert_eq(r, FB_V_BAD_LBA);
	cr_assert_eq(flba, 1000);
}
