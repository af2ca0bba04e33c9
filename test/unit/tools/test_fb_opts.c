/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fb_opts.c - femu-bench option parsing: defaults, every option, the
 * size / block-size / CPU list parsers and every error path.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <string.h>

#include "fb_opts.h"

static struct fb_opts o;
static char err[256];

static int parse(int argc, const char **argv)
{
	fb_opts_defaults(&o);
	err[0] = '\0';
	return fb_opts_parse(&o, argc, (char **)argv, err, sizeof(err));
}

#define PARSE(...)                                                                                 \
	({                                                                                         \
		const char *argv_[] = {"femu-bench", __VA_ARGS__};                                 \
		parse((int)(sizeof(argv_) / sizeof(argv_[0])), argv_);                             \
	})

#define EXPECT_ERR(needle, ...)                                                                    \
	do {                                                                                       \
		cr_assert_eq(PARSE(__VA_ARGS__), -1);                                              \
		cr_assert(strstr(err, needle), "error '%s' lacks '%s'", err, needle);              \
	} while (0)

Test(fb_opts, defaults)
{
	cr_assert_eq(PARSE("-s", "/x.sock"), 0);
	cr_assert_str_eq(o.sock, "/x.sock");
	cr_assert_eq(o.rw, FB_RW_RANDREAD);
	cr_assert_eq(o.nbs, 1);
	cr_assert_eq(o.bs[0], 4096);
	cr_assert_eq(o.qd, 32);
	cr_assert_eq(o.queues, 1);
	cr_assert_eq(o.qsize, 1024);
	cr_assert_eq(o.ncpus, 1);
	cr_assert_eq(o.cpus[0], -1);
	cr_assert_eq(o.verify_gen, 1);
	cr_assert(o.event_idx);
	cr_assert_eq(o.timeout_ms, 5000);
	cr_assert_eq(o.time_s, 0);
	cr_assert_eq(o.ramp_s, 0);
	cr_assert_eq(o.ios, 0);
}

Test(fb_opts, ramp_with_time)
{
	cr_assert_eq(PARSE("-s", "x", "--time", "10", "--ramp", "2.5"), 0, "%s", err);
	cr_assert_float_eq(o.time_s, 10, 1e-9);
	cr_assert_float_eq(o.ramp_s, 2.5, 1e-9);
}

Test(fb_opts, every_option)
{
	cr_assert_eq(PARSE("--socket", "/s", "--rw", "randrw", "--mix", "70", "--bs", "512,4k,1M",
			   "--qd", "100", "--queues", "4", "--qsize", "512", "--time", "2.5",
			   "--size", "1G", "--offset", "4k", "--cpus", "0,2-3", "--verify",
			   "--verify-gen", "42", "--json", "--no-event-idx", "--hugepages",
			   "--timeout", "250", "--seed", "9", "--indirect", "-q"),
		     0, "%s", err);
	cr_assert_eq(o.rw, FB_RW_RANDRW);
	cr_assert_eq(o.mix, 70);
	cr_assert_eq(o.nbs, 3);
	cr_assert_eq(o.bs[0], 512);
	cr_assert_eq(o.bs[1], 4096);
	cr_assert_eq(o.bs[2], 1u << 20);
	cr_assert_eq(fb_opts_max_bs(&o), 1u << 20);
	cr_assert_eq(o.qd, 100);
	cr_assert_eq(o.queues, 4);
	cr_assert_eq(o.qsize, 512);
	cr_assert_float_eq(o.time_s, 2.5, 1e-9);
	cr_assert_eq(o.size, 1ull << 30);
	cr_assert_eq(o.offset, 4096);
	cr_assert_eq(o.ncpus, 3);
	cr_assert_eq(o.cpus[0], 0);
	cr_assert_eq(o.cpus[1], 2);
	cr_assert_eq(o.cpus[2], 3);
	cr_assert(o.verify);
	cr_assert_eq(o.verify_gen, 42);
	cr_assert(o.json);
	cr_assert(!o.event_idx);
	cr_assert(o.hugepages);
	cr_assert(o.indirect);
	cr_assert_eq(o.timeout_ms, 250);
	cr_assert_eq(o.seed, 9);
	cr_assert(o.quiet);
}

Test(fb_opts, rw_names_round_trip)
{
	const char *names[] = {"randread", "randwrite", "read", "write", "randrw"};
	for (unsigned i = 0; i < 5; i++) {
		cr_assert_eq(PARSE("-s", "x", "--rw", names[i]), 0);
		cr_assert_str_eq(fb_rw_name(o.rw), names[i]);
	}
}

Test(fb_opts, help_returns_1)
{
	cr_redirect_stdout();
	cr_assert_eq(PARSE("--help"), 1);
}

Test(fb_opts, modes_without_socket)
{
	cr_assert_eq(PARSE("--selftest-peer", "--ios", "10"), 0);
	cr_assert(o.selftest_peer);
	cr_assert_eq(o.ios, 10);
	EXPECT_ERR("-s SOCK", "--rw", "read");
}

Test(fb_opts, errors_name_the_option)
{
	EXPECT_ERR("--rw", "-s", "x", "--rw", "sideways");
	EXPECT_ERR("--mix", "-s", "x", "--mix", "101");
	EXPECT_ERR("--mix", "-s", "x", "--mix", "-1");
	EXPECT_ERR("--bs", "-s", "x", "--bs", "1000");
	EXPECT_ERR("--bs", "-s", "x", "--bs", "2M");
	EXPECT_ERR("--bs", "-s", "x", "--bs", "256");
	EXPECT_ERR("--bs", "-s", "x", "--bs", "4k,,8k,x");
	EXPECT_ERR("--bs", "-s", "x", "--bs", "512,1k,2k,4k,8k,16k,32k,64k,128k");
	EXPECT_ERR("--qd", "-s", "x", "--qd", "0");
	EXPECT_ERR("--qd", "-s", "x", "--qd", "2000");
	EXPECT_ERR("--qd", "-s", "x", "--qd", "200", "--qsize", "512");
	EXPECT_ERR("--queues", "-s", "x", "--queues", "0");
	EXPECT_ERR("--queues", "-s", "x", "--queues", "65");
	EXPECT_ERR("--qsize", "-s", "x", "--qsize", "1000");
	EXPECT_ERR("--qsize", "-s", "x", "--qsize", "2048");
	EXPECT_ERR("--time", "-s", "x", "--time", "0");
	EXPECT_ERR("--time", "-s", "x", "--time", "abc");
	EXPECT_ERR("--ios", "-s", "x", "--ios", "0");
	EXPECT_ERR("exclusive", "-s", "x", "--ios", "5", "--time", "1");
	EXPECT_ERR("--ramp", "-s", "x", "--ramp", "0", "--time", "1");
	EXPECT_ERR("--ramp needs --time", "-s", "x", "--ramp", "1");
	EXPECT_ERR("--ramp needs --time", "-s", "x", "--ramp", "1", "--ios", "5");
	EXPECT_ERR("--size", "-s", "x", "--size", "0");
	EXPECT_ERR("--size", "-s", "x", "--size", "12q");
	EXPECT_ERR("multiples of 512", "-s", "x", "--size", "1000");
	EXPECT_ERR("multiples of 512", "-s", "x", "--offset", "100");
	EXPECT_ERR("smaller than --bs", "-s", "x", "--size", "4k", "--bs", "8k");
	EXPECT_ERR("--cpus", "-s", "x", "--cpus", "3-1");
	EXPECT_ERR("--cpus", "-s", "x", "--cpus", "a");
	EXPECT_ERR("queues", "-s", "x", "--cpus", "0,1", "--queues", "1");
	EXPECT_ERR("--timeout", "-s", "x", "--timeout", "0");
	EXPECT_ERR("--verify-gen", "-s", "x", "--verify-gen", "x");
	EXPECT_ERR("--peer-cpu", "-s", "x", "--peer-cpu", "-2");
	EXPECT_ERR("unknown option", "-s", "x", "--frobnicate");
	EXPECT_ERR("needs a value", "-s", "x", "--bs");
	EXPECT_ERR("unexpected argument", "-s", "x", "extra");
	EXPECT_ERR("--indirect drives a workload", "--selftest-peer", "--indirect");
	EXPECT_ERR("--indirect drives a workload", "-s", "x", "--hostile", "--indirect");
	EXPECT_ERR("--indirect drives a workload", "-s", "x", "--connect-churn", "2", "--indirect");
}

Test(fb_opts, pacing)
{
	uint32_t lo, hi;

	cr_assert_eq(PARSE("-s", "x"), 0);
	cr_assert_eq(o.rate, 0);
	cr_assert_eq(o.burst, 0);
	cr_assert_eq(PARSE("-s", "x", "--rate", "1000", "--queues", "2"), 0, "%s", err);
	cr_assert_float_eq(o.rate, 1000.0, 1e-9);
	cr_assert_eq(PARSE("-s", "x", "--burst", "8", "--gap-us", "30-80"), 0, "%s", err);
	cr_assert_eq(o.burst, 8);
	cr_assert_eq(o.gap_us_lo, 30);
	cr_assert_eq(o.gap_us_hi, 80);
	cr_assert_eq(PARSE("-s", "x", "--burst", "1", "--gap-us", "50"), 0, "%s", err);
	cr_assert_eq(o.gap_us_lo, 50);
	cr_assert_eq(o.gap_us_hi, 50);
	EXPECT_ERR("--rate", "-s", "x", "--rate", "0");
	EXPECT_ERR("--rate", "-s", "x", "--rate", "fast");
	EXPECT_ERR("--burst", "-s", "x", "--burst", "0");
	EXPECT_ERR("--gap-us", "-s", "x", "--burst", "4", "--gap-us", "80-30");
	EXPECT_ERR("--gap-us", "-s", "x", "--burst", "4", "--gap-us", "-5");
	EXPECT_ERR("--gap-us", "-s", "x", "--burst", "4", "--gap-us", "5-");
	EXPECT_ERR("--gap-us needs --burst", "-s", "x", "--gap-us", "5");
	EXPECT_ERR("exclusive", "-s", "x", "--burst", "4", "--rate", "100");
	cr_assert_eq(fb_parse_range("0-10000000", 10000000, &lo, &hi), 0);
	cr_assert_eq(hi, 10000000);
	cr_assert_eq(fb_parse_range("10000001", 10000000, &lo, &hi), -1);
	cr_assert_eq(fb_parse_range("", 10, &lo, &hi), -1);
}

Test(fb_opts, parse_size)
{
	uint64_t v;

	cr_assert_eq(fb_parse_size("4096", &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(fb_parse_size("4k", &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(fb_parse_size("4KiB", &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(fb_parse_size("2M", &v), 0);
	cr_assert_eq(v, 2u << 20);
	cr_assert_eq(fb_parse_size("3g", &v), 0);
	cr_assert_eq(v, 3ull << 30);
	cr_assert_eq(fb_parse_size("1T", &v), 0);
	cr_assert_eq(v, 1ull << 40);
	cr_assert_eq(fb_parse_size("0x1000", &v), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(fb_parse_size("", &v), -1);
	cr_assert_eq(fb_parse_size("-4k", &v), -1);
	cr_assert_eq(fb_parse_size("4kx", &v), -1);
	cr_assert_eq(fb_parse_size("k", &v), -1);
	cr_assert_eq(fb_parse_size("99999999999T", &v), -1); /* overflows 64 bits */
	cr_assert_eq(fb_parse_size("18446744073709551616", &v), -1);
}

Test(fb_opts, cpu_list)
{
	int c[8];
	unsigned n;

	cr_assert_eq(fb_parse_cpu_list("1", c, 8, &n), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(c[0], 1);
	cr_assert_eq(fb_parse_cpu_list("0,2-4,7", c, 8, &n), 0);
	cr_assert_eq(n, 5);
	cr_assert_arr_eq(c, ((int[]){0, 2, 3, 4, 7}), 5 * sizeof(int));
	cr_assert_eq(fb_parse_cpu_list("0-8", c, 8, &n), -1); /* 9 entries > max */
	cr_assert_eq(fb_parse_cpu_list("", c, 8, &n), -1);
	cr_assert_eq(fb_parse_cpu_list("1-", c, 8, &n), -1);
	cr_assert_eq(fb_parse_cpu_list("x", c, 8, &n), -1);
}

Test(fb_opts, hostile_case_filter)
{
	cr_assert_eq(PARSE("-s", "x", "--hostile", "--case", "indirect"), 0);
	cr_assert(o.hostile);
	cr_assert_str_eq(o.hostile_case, "indirect");
	EXPECT_ERR("needs a value", "-s", "x", "--hostile", "--case");
}
