/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_options.c - femud's command-line parser: defaults, every daemon key,
 * and every error path (message names the key and the value).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "daemon/options.h"

static char err[512];

static int parse(struct femud_opts *o, int argc, const char **argv)
{
	err[0] = '\0';
	return femud_opts_parse(argc, (char **)argv, o, err, sizeof(err));
}

static int parse_dev(struct femud_dev_opts *d, const char *spec)
{
	err[0] = '\0';
	return femud_dev_parse(spec, d, err, sizeof(err));
}

static void free_dev(struct femud_dev_opts *d)
{
	if (d->ops != NULL && d->ops->release != NULL)
		d->ops->release(&d->mcfg);
	free(d->spec);
}

Test(options, defaults_of_a_minimal_device)
{
	struct femud_dev_opts d;

	cr_assert_eq(parse_dev(&d, "path=/tmp/x.sock"), 0, "%s", err);
	cr_assert_str_eq(d.path, "/tmp/x.sock");
	cr_assert_eq(d.devsz_mb, 1024);
	cr_assert_eq(d.femu_mode, 2);
	cr_assert_eq(d.queues, 8);
	cr_assert_eq(d.secsz, 512);
	cr_assert_eq(d.readonly, false);
	cr_assert_eq(d.sock_mode, 0600);
	cr_assert_eq(d.mcfg.capacity_bytes, 1024ull << 20);
	cr_assert_str_eq(d.ops->name, "nossd");
	free_dev(&d);
}

Test(options, every_daemon_key)
{
	struct femud_dev_opts d;

	cr_assert_eq(parse_dev(&d, "path=/tmp/y.sock,devsz_mb=64,queues=64,secsz=4096,"
				   "serial=ABCDEFGHIJKLMNOPQRST,readonly=1,sock_mode=0660"),
		     0, "%s", err);
	cr_assert_eq(d.mcfg.capacity_bytes, 64ull << 20);
	cr_assert_eq(d.queues, 64);
	cr_assert_eq(d.secsz, 4096);
	cr_assert_eq(d.mcfg.blk_size, 4096);
	cr_assert_str_eq(d.serial, "ABCDEFGHIJKLMNOPQRST");
	cr_assert(d.readonly);
	cr_assert_eq(d.sock_mode, 0660);
	free_dev(&d);
}

struct bad_case {
	const char *spec;
	const char *must_contain[2];
};

static const struct bad_case bad_cases[] = {
    {"devsz_mb=64", {"'path'", "required"}},
    {"path=", {"path", "empty"}},
    {"path=/tmp/a,devsz_mb=abc", {"devsz_mb", "'abc'"}},
    {"path=/tmp/a,devsz_mb=0", {"devsz_mb", "'0'"}},
    {"path=/tmp/a,devsz_mb=-5", {"devsz_mb", "'-5'"}},
    {"path=/tmp/a,devsz_mb=12x", {"devsz_mb", "'12x'"}},
    {"path=/tmp/a,queues=0", {"queues", "'0'"}},
    {"path=/tmp/a,queues=65", {"queues", "'65'"}},
    {"path=/tmp/a,secsz=1024", {"secsz", "'1024'"}},
    {"path=/tmp/a,serial=ABCDEFGHIJKLMNOPQRSTU", {"serial", "20 bytes"}},
    {"path=/tmp/a,readonly=2", {"readonly", "'2'"}},
    {"path=/tmp/a,sock_mode=999", {"sock_mode", "'999'"}},
    {"path=/tmp/a,femu_mode=0", {"femu_mode", "not supported"}},
    {"path=/tmp/a,femu_mode=3", {"femu_mode", "not supported"}},
    {"path=/tmp/a,femu_mode=9", {"femu_mode", "'9'"}},
    {"path=/tmp/a,bogus=1", {"bogus", "unknown"}},
    {"path=/tmp/a,novalue", {"novalue", "key=value"}},
    {"path=/tmp/a,=3", {"=3", "key=value"}},
};

Test(options, each_bad_device_key_is_named)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct femud_dev_opts d;
		int rc = parse_dev(&d, bad_cases[i].spec);

		cr_expect_lt(rc, 0, "'%s' was accepted", bad_cases[i].spec);
		for (int k = 0; k < 2; k++)
			cr_expect(strstr(err, bad_cases[i].must_contain[k]) != NULL,
				  "'%s': message '%s' lacks '%s'", bad_cases[i].spec, err,
				  bad_cases[i].must_contain[k]);
		free_dev(&d);
	}
}

Test(options, global_options_and_several_devices)
{
	struct femud_opts o;
	const char *argv[] = {"femud",
			      "--lcores",
			      "0@1,1@0",
			      "--mbe-node",
			      "0",
			      "--dev",
			      "path=/tmp/a.sock,devsz_mb=16",
			      "--dev",
			      "path=/tmp/b.sock,devsz_mb=32,queues=2",
			      "--log-level",
			      "lib.vhost.*:debug",
			      "--dry-run"};

	cr_assert_eq(parse(&o, 12, argv), 0, "%s", err);
	cr_assert_str_eq(o.lcores, "0@1,1@0");
	cr_assert_eq(o.mbe_node, 0);
	cr_assert_eq(o.ndevs, 2);
	cr_assert_eq(o.devs[1].queues, 2);
	cr_assert_eq(o.devs[1].mcfg.capacity_bytes, 32ull << 20);
	cr_assert(o.dry_run);
	cr_assert_str_eq(o.log_level, "lib.vhost.*:debug");
	femud_opts_free(&o);
}

Test(options, poll_mode_and_idle_threshold)
{
	struct femud_opts o;
	const char *def[] = {"femud", "--dev", "path=/tmp/a.sock"};
	const char *ad[] = {"femud", "--poll-mode", "adaptive",	       "--idle-us",
			    "200",   "--dev",	    "path=/tmp/a.sock"};
	const char *busy[] = {"femud", "--poll-mode",	  "busy", "--idle-us", "0",
			      "--dev", "path=/tmp/a.sock"};
	bool adaptive;
	uint64_t idle;

	cr_assert_eq(parse(&o, 3, def), 0, "%s", err);
	femud_opts_poll_mode(&o, 0, &adaptive, &idle);
	cr_assert_eq(adaptive, FEMUD_DEFAULT_ADAPTIVE);
	cr_assert_eq(idle, FEMUD_DEFAULT_IDLE_US);
	cr_assert_not(o.adaptive_set || o.idle_us_set);
	femud_opts_free(&o);
	cr_assert_eq(parse(&o, 7, ad), 0, "%s", err);
	femud_opts_poll_mode(&o, 5, &adaptive, &idle);
	cr_assert(adaptive && o.adaptive_set && o.idle_us_set);
	cr_assert_eq(idle, 200);
	femud_opts_free(&o);
	cr_assert_eq(parse(&o, 7, busy), 0, "%s", err);
	femud_opts_poll_mode(&o, 0, &adaptive, &idle);
	cr_assert_not(adaptive);
	cr_assert_eq(idle, 0);
	femud_opts_free(&o);
}

Test(options, poll_mode_per_poller_lists_repeat_their_last_value)
{
	struct femud_opts o;
	const char *args[] = {"femud",	 "--poll-mode", "busy,adaptive,busy", "--idle-us",
			      "10,2000", "--dev",	"path=/tmp/a.sock"};
	const bool want_mode[] = {false, true, false, false};
	const uint64_t want_idle[] = {10, 2000, 2000, 2000};
	bool adaptive;
	uint64_t idle;

	cr_assert_eq(parse(&o, 7, args), 0, "%s", err);
	cr_assert_eq(o.nadaptive, 3);
	cr_assert_eq(o.nidle_us, 2);
	for (unsigned i = 0; i < 4; i++) {
		femud_opts_poll_mode(&o, i, &adaptive, &idle);
		cr_assert_eq(adaptive, want_mode[i], "poller %u", i);
		cr_assert_eq(idle, want_idle[i], "poller %u", i);
	}
	femud_opts_free(&o);
}

Test(options, bad_poll_mode_lists_name_the_option_and_value)
{
	static const struct {
		const char *opt, *val, *msg;
	} cases[] = {
	    {"--poll-mode", "fast", "--poll-mode: 'fast' is not busy or adaptive"},
	    {"--poll-mode", "busy,,adaptive", "--poll-mode: 'busy,,adaptive' is not a comma"},
	    {"--poll-mode", "busy,", "--poll-mode: 'busy,' is not a comma"},
	    {"--poll-mode", "", "--poll-mode: '' is not a comma"},
	    {"--idle-us", "50,x", "--idle-us: 'x' is not a number of us from 0 to 1000000"},
	    {"--idle-us", "1000001", "--idle-us: '1000001' is not a number of us"},
	    {"--idle-us", ",5", "--idle-us: ',5' is not a comma"},
	};
	struct femud_opts o;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *args[] = {"femud", cases[i].opt, cases[i].val, "--dev",
				      "path=/tmp/a.sock"};

		cr_assert_eq(parse(&o, 5, args), -EINVAL, "%s %s accepted", cases[i].opt,
			     cases[i].val);
		cr_assert(strstr(err, cases[i].msg) != NULL, "%s %s: '%s'", cases[i].opt,
			  cases[i].val, err);
		femud_opts_free(&o);
	}
}

Test(options, global_errors_name_the_option)
{
	struct {
		int argc;
		const char *argv[6];
		const char *needle;
	} cases[] = {
	    {1, {"femud"}, "--dev"},
	    {3, {"femud", "--mbe-node", "x"}, "--mbe-node"},
	    {3, {"femud", "--mbe-node", "-1"}, "--mbe-node"},
	    {2, {"femud", "--frobnicate"}, "--frobnicate"},
	    {3, {"femud", "--qemu-pid", "0"}, "--qemu-pid"},
	    {3, {"femud", "--poll-mode", "lazy"}, "--poll-mode"},
	    {3, {"femud", "--idle-us", "1000001"}, "--idle-us"},
	    {3, {"femud", "--idle-us", "-1"}, "--idle-us"},
	    {3, {"femud", "--idle-us", "5ms"}, "--idle-us"},
	    {5, {"femud", "--dev", "path=/tmp/s", "--dev", "path=/tmp/s"}, "given twice"},
	    {4, {"femud", "--dev", "path=/tmp/s", "extra"}, "extra"},
	    {3, {"femud", "--rpc", ""}, "--rpc"},
	    {3,
	     {"femud", "--rpc",
	      "/tmp/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
	     "--rpc"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct femud_opts o;

		cr_expect_lt(parse(&o, cases[i].argc, cases[i].argv), 0, "case %zu accepted", i);
		cr_expect(strstr(err, cases[i].needle) != NULL, "case %zu: '%s' lacks '%s'", i, err,
			  cases[i].needle);
		femud_opts_free(&o);
	}
}

Test(options, help_and_version_need_no_device)
{
	struct femud_opts o;
	const char *h[] = {"femud", "--help"};
	const char *v[] = {"femud", "--version"};

	cr_assert_eq(parse(&o, 2, h), 0);
	cr_assert(o.help);
	femud_opts_free(&o);
	cr_assert_eq(parse(&o, 2, v), 0);
	cr_assert(o.version);
	femud_opts_free(&o);
}

/*
 * Found by test/fuzz/fuzz_options: a parse that stops inside grouped short
 * options ("-z..." : unknown 'z') left getopt pointing into that argv; the
 * next parse went on from there (reading a string its caller may have
 * freed: heap-use-after-free under AddressSanitizer) and took a device
 * nobody gave it.
 */
Test(options, a_second_parse_forgets_the_first_argv)
{
	struct femud_opts o;
	const char *first[] = {"femud", "-zdpath=/tmp/first"};
	const char *second[] = {"femud", "--dev", "path=/tmp/second"};

	cr_assert_lt(parse(&o, 2, first), 0);
	femud_opts_free(&o);
	cr_assert_eq(parse(&o, 3, second), 0, "%s", err);
	cr_assert_eq(o.ndevs, 1);
	cr_assert_str_eq(o.devs[0].path, "/tmp/second");
	femud_opts_free(&o);
}

Test(options, rpc_socket_default_none_and_empty_start)
{
	struct femud_opts o;
	const char *dflt[] = {"femud", "--dev", "path=/tmp/s"};
	const char *none[] = {"femud", "--rpc", "none", "--dev", "path=/tmp/s"};
	const char *empty[] = {"femud", "--rpc", "/tmp/r.sock"};
	const char *cfg[] = {"femud", "--config", "/tmp/c.json"};

	cr_assert_eq(parse(&o, 3, dflt), 0, "%s", err);
	cr_assert_str_eq(femud_opts_rpc_path(&o), FEMUD_RPC_DEFAULT);
	femud_opts_free(&o);
	cr_assert_eq(parse(&o, 5, none), 0, "%s", err);
	cr_assert_null(femud_opts_rpc_path(&o));
	femud_opts_free(&o);
	/* --rpc without --dev: an empty daemon that waits for devices */
	cr_assert_eq(parse(&o, 3, empty), 0, "%s", err);
	cr_assert_eq(o.ndevs, 0);
	cr_assert_str_eq(femud_opts_rpc_path(&o), "/tmp/r.sock");
	femud_opts_free(&o);
	/* --config alone: the devices come from the file */
	cr_assert_eq(parse(&o, 3, cfg), 0, "%s", err);
	cr_assert_str_eq(o.config, "/tmp/c.json");
	femud_opts_free(&o);
}
