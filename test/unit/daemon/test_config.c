/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_config.c - femud's configuration file (daemon/config.c): devices are
 * parsed by the --dev parser (same keys, same errors), and every malformed
 * file is refused with a message naming the file and the problem.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/config.h"

static char err[512];
static char file[64];

static void write_file(const char *text)
{
	int fd;

	snprintf(file, sizeof(file), "/tmp/femud-test-config.XXXXXX");
	fd = mkstemp(file);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int load(const char *text, struct femud_opts *o)
{
	int rc;

	memset(o, 0, sizeof(*o));
	write_file(text);
	err[0] = '\0';
	rc = femud_config_load(file, o, err, sizeof(err));
	unlink(file);
	return rc;
}

Test(config, devices_are_parsed_as_dev_would)
{
	struct femud_opts o;

	cr_assert_eq(load("{\"femud_config\":1,\"devices\":[{\"path\":\"/tmp/a.sock\",\"devsz_mb\":"
			  "\"64\",\"queues\":2},{\"path\":\"/tmp/b.sock\",\"femu_mode\":\"1\","
			  "\"devsz_mb\":16,\"pg_rd_lat\":\"1000\"}]}",
			  &o),
		     0, "%s", err);
	cr_assert_eq(o.ndevs, 2);
	cr_assert_str_eq(o.devs[0].path, "/tmp/a.sock");
	cr_assert_eq(o.devs[0].devsz_mb, 64);
	cr_assert_eq(o.devs[0].queues, 2);
	cr_assert_eq(o.devs[1].femu_mode, 1);
	cr_assert_eq(o.devs[1].nkv, 1);
	cr_assert_str_eq(o.devs[1].kv[0].key, "pg_rd_lat");
	femud_opts_free(&o);
}

struct bad_case {
	const char *text;
	const char *msg;
};

Test(config, bad_files_are_refused_with_a_reason)
{
	static const struct bad_case cases[] = {
	    {"{", "line 1"},
	    {"[]", "not a femud configuration"},
	    {"{\"femud_config\":2,\"devices\":[]}", "not a femud configuration"},
	    {"{\"femud_config\":1}", "\"devices\" must be an array"},
	    {"{\"femud_config\":1,\"devices\":[5]}", "device 0: a device must be an object"},
	    {"{\"femud_config\":1,\"devices\":[{\"path\":\"/tmp/a\",\"queues\":true}]}",
	     "device 0: device key 'queues': value must be a string or an integer"},
	    {"{\"femud_config\":1,\"devices\":[{\"path\":\"/tmp/a\",\"serial\":\"a,b\"}]}",
	     "',' and '='"},
	    {"{\"femud_config\":1,\"devices\":[{\"path\":\"/tmp/a\",\"queues\":\"99\"}]}",
	     "device 0: --dev: bad value '99' for key 'queues'"},
	    {"{\"femud_config\":1,\"devices\":[{\"path\":\"/tmp/a\"},{\"path\":\"/tmp/b\","
	     "\"femu_mode\":\"1\",\"nchs\":\"0\"}]}",
	     "device 1: --dev path=/tmp/b: nchs=0"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct femud_opts o;

		cr_expect_eq(load(cases[i].text, &o), -EINVAL, "%s", cases[i].text);
		cr_expect_not_null(strstr(err, cases[i].msg), "%s: '%s'", cases[i].text, err);
		cr_expect_not_null(strstr(err, "--config /tmp/femud-test-config."), "%s", err);
		femud_opts_free(&o);
	}
}

Test(config, a_missing_file_is_named)
{
	struct femud_opts o;

	memset(&o, 0, sizeof(o));
	cr_assert_eq(femud_config_load("/nonexistent/femud.json", &o, err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "--config /nonexistent/femud.json"), "%s", err);
}

Test(config, pollers_give_the_poll_mode_unless_the_command_line_did)
{
	static const char text[] =
	    "{\"femud_config\":1,\"devices\":[],\"pollers\":[{\"poll_mode\":\"adaptive\","
	    "\"idle_us\":70},{\"poll_mode\":\"busy\",\"idle_us\":\"9\"}]}";
	struct femud_opts o;
	bool adaptive;
	uint64_t idle;

	cr_assert_eq(load(text, &o), 0, "%s", err);
	femud_opts_poll_mode(&o, 0, &adaptive, &idle);
	cr_assert(adaptive);
	cr_assert_eq(idle, 70);
	femud_opts_poll_mode(&o, 3, &adaptive, &idle);
	cr_assert_not(adaptive);
	cr_assert_eq(idle, 9);
	femud_opts_free(&o);

	/* --poll-mode busy on the command line wins over the file; --idle-us was not given */
	memset(&o, 0, sizeof(o));
	o.adaptive_set = true;
	o.adaptive[0] = false;
	o.nadaptive = 1;
	write_file(text);
	cr_assert_eq(femud_config_load(file, &o, err, sizeof(err)), 0, "%s", err);
	unlink(file);
	femud_opts_poll_mode(&o, 0, &adaptive, &idle);
	cr_assert_not(adaptive);
	cr_assert_eq(idle, 70);
	femud_opts_free(&o);
}

Test(config, bad_pollers_are_refused_with_a_reason)
{
	static const struct {
		const char *pollers, *msg;
	} cases[] = {
	    {"[]", "\"pollers\" must be a non-empty array"},
	    {"{}", "\"pollers\" must be a non-empty array"},
	    {"[{\"poll_mode\":\"busy\"}]", "poller 0 must be {\"poll_mode\""},
	    {"[{\"poll_mode\":\"busy\",\"idle_us\":5,\"x\":1}]", "poller 0 must be"},
	    {"[{\"poll_mode\":\"fast\",\"idle_us\":5}]",
	     "pollers: poll_mode: 'fast' is not busy or adaptive"},
	    {"[{\"poll_mode\":\"busy\",\"idle_us\":5},{\"poll_mode\":\"busy\",\"idle_us\":-1}]",
	     "poller 1: \"idle_us\" must be a string or a number"},
	    {"[{\"poll_mode\":\"busy\",\"idle_us\":2000000}]",
	     "pollers: idle_us: '2000000' is not a number of us"},
	};
	char text[512];
	struct femud_opts o;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "{\"femud_config\":1,\"devices\":[],\"pollers\":%s}",
			 cases[i].pollers);
		cr_assert_eq(load(text, &o), -EINVAL, "accepted: %s", cases[i].pollers);
		cr_assert(strstr(err, cases[i].msg) != NULL, "%s: '%s'", cases[i].pollers, err);
		cr_assert(strstr(err, "--config /tmp/femud-test-config.") != NULL, "%s", err);
		femud_opts_free(&o);
	}
}
