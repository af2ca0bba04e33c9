/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_num_parse.c - the number parser every module and tool uses: plain
 * numbers, hex and octal, size suffixes, ranges, overflow, fractions, and
 * the error message that names the key and the value.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "ftl/num_parse.h"

Test(num_parse, decimal_whole_string_only)
{
	uint64_t v = 7;

	cr_assert_eq(num_u64("0", &v), 0);
	cr_assert_eq(v, 0);
	cr_assert_eq(num_u64("18446744073709551615", &v), 0);
	cr_assert_eq(v, UINT64_MAX);
	v = 7;
	cr_assert_eq(num_u64("18446744073709551616", &v), -ERANGE);
	cr_assert_eq(num_u64("", &v), -EINVAL);
	cr_assert_eq(num_u64(NULL, &v), -EINVAL);
	cr_assert_eq(num_u64("-1", &v), -EINVAL);
	cr_assert_eq(num_u64("+1", &v), -EINVAL);
	cr_assert_eq(num_u64(" 1", &v), -EINVAL);
	cr_assert_eq(num_u64("1 ", &v), -EINVAL);
	cr_assert_eq(num_u64("12x", &v), -EINVAL);
	cr_assert_eq(num_u64("4k", &v), -EINVAL, "no suffix without NUM_SUFFIX");
	cr_assert_eq(num_u64("0x10", &v), -EINVAL, "no hex without NUM_HEX");
	cr_assert_eq(v, 7, "nothing written on error");
}

Test(num_parse, range_is_checked)
{
	uint64_t v = 0;

	cr_assert_eq(num_parse("1", 0, 1, 64, &v), 0);
	cr_assert_eq(num_parse("64", 0, 1, 64, &v), 0);
	cr_assert_eq(v, 64);
	cr_assert_eq(num_parse("0", 0, 1, 64, &v), -ERANGE);
	cr_assert_eq(num_parse("65", 0, 1, 64, &v), -ERANGE);
}

Test(num_parse, hex_and_octal)
{
	uint64_t v = 0;

	cr_assert_eq(num_parse("0x1000", NUM_HEX, 0, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(num_parse("0X1f", NUM_HEX, 0, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 31);
	cr_assert_eq(num_parse("010", NUM_HEX, 0, UINT64_MAX, &v), 0);
	cr_assert_eq(v, 10, "a leading 0 is still decimal");
	cr_assert_eq(num_parse("0x", NUM_HEX, 0, UINT64_MAX, &v), -EINVAL);
	cr_assert_eq(num_parse("0x-1", NUM_HEX, 0, UINT64_MAX, &v), -EINVAL);
	cr_assert_eq(num_parse("0660", NUM_OCTAL, 0, 0777, &v), 0);
	cr_assert_eq(v, 0660);
	cr_assert_eq(num_parse("0680", NUM_OCTAL, 0, 0777, &v), -EINVAL);
	cr_assert_eq(num_parse("01000", NUM_OCTAL, 0, 0777, &v), -ERANGE);
}

Test(num_parse, sizes_with_binary_suffixes)
{
	uint64_t v = 0;

	cr_assert_eq(num_size("4G", &v), 0);
	cr_assert_eq(v, 4ULL << 30);
	cr_assert_eq(num_size("512M", &v), 0);
	cr_assert_eq(v, 512ULL << 20);
	cr_assert_eq(num_size("4GiB", &v), 0);
	cr_assert_eq(v, 4ULL << 30);
	cr_assert_eq(num_size("4kB", &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(num_size("1t", &v), 0);
	cr_assert_eq(v, 1ULL << 40);
	cr_assert_eq(num_size("1000", &v), 0);
	cr_assert_eq(v, 1000);
	cr_assert_eq(num_size("1000B", &v), 0);
	cr_assert_eq(v, 1000);
	cr_assert_eq(num_size("1.5G", &v), -EINVAL);
	cr_assert_eq(num_size("G", &v), -EINVAL);
	cr_assert_eq(num_size("", &v), -EINVAL);
	cr_assert_eq(num_size("-1", &v), -EINVAL);
	cr_assert_eq(num_size("4Gx", &v), -EINVAL);
	cr_assert_eq(num_size("4iB", &v), -EINVAL, "iB needs a multiplier");
	cr_assert_eq(num_size("99999999999T", &v), -ERANGE);
	cr_assert_eq(num_size("16777216T", &v), -ERANGE); /* 2^64 */
	cr_assert_eq(num_size("16777215T", &v), 0);
	cr_assert_eq(v, 16777215ULL << 40);
}

Test(num_parse, scan_inside_a_string)
{
	const char *s = "12-34";
	uint64_t v = 0;

	cr_assert_eq(num_scan(&s, 1023, &v), 0);
	cr_assert_eq(v, 12);
	cr_assert_str_eq(s, "-34");
	cr_assert_eq(num_scan(&s, 1023, &v), -EINVAL, "no digit at '-'");
	s = "2048@1";
	cr_assert_eq(num_scan(&s, 1023, &v), -ERANGE);
}

Test(num_parse, ranges)
{
	uint64_t a = 0, b = 0;

	cr_assert_eq(num_range("3", 0, 4095, &a, &b), 0);
	cr_assert_eq(a, 3);
	cr_assert_eq(b, 3);
	cr_assert_eq(num_range("2-5", 0, 4095, &a, &b), 0);
	cr_assert_eq(a, 2);
	cr_assert_eq(b, 5);
	cr_assert_eq(num_range("5-2", 0, 4095, &a, &b), -EINVAL);
	cr_assert_eq(num_range("1-", 0, 4095, &a, &b), -EINVAL);
	cr_assert_eq(num_range("-1", 0, 4095, &a, &b), -EINVAL);
	cr_assert_eq(num_range("1-4096", 0, 4095, &a, &b), -ERANGE);
}

Test(num_parse, fractions)
{
	double d = 0;

	cr_assert_eq(num_double("2", 0, 1e6, &d), 0);
	cr_assert_float_eq(d, 2.0, 1e-12);
	cr_assert_eq(num_double("0.25", 0, 1e6, &d), 0);
	cr_assert_float_eq(d, 0.25, 1e-12);
	cr_assert_eq(num_double("0", 0, 1e6, &d), -ERANGE, "must be above lo");
	cr_assert_eq(num_double("2e6", 0, 1e6, &d), -ERANGE);
	cr_assert_eq(num_double("-1", 0, 1e6, &d), -EINVAL);
	cr_assert_eq(num_double("1s", 0, 1e6, &d), -EINVAL);
	cr_assert_eq(num_double("nan", 0, 1e6, &d), -EINVAL);
}

Test(num_parse, error_names_key_and_value)
{
	const struct num_spec qd = {0, 1, 1024, "1..1024"};
	char err[128] = "";
	uint64_t v = 0;

	cr_assert_eq(num_parse_key("--qd", "0", &qd, &v, err, sizeof(err)), -ERANGE);
	cr_assert_str_eq(err, "--qd 0: 1..1024");
	cr_assert_eq(num_parse_key("--qd", "x", &qd, &v, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "--qd x: 1..1024");
	err[0] = '\0';
	cr_assert_eq(num_parse_key("--qd", "32", &qd, &v, err, sizeof(err)), 0);
	cr_assert_eq(v, 32);
	cr_assert_str_eq(err, "", "no message on success");
}
