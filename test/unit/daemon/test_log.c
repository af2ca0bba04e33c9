/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_log.c - femud's log lines: "femud: " on a plain stderr; "<N>" syslog
 * priorities instead when JOURNAL_STREAM names stderr (and only then), for
 * femud's own lines and for other code's multi-line text (DPDK's).
 * Criterion runs each test in its own process: the journal check is per test.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/log.h"

/* stderr into a fresh temporary file; its path in path (for reading back). */
static void stderr_to_file(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/femud-test-log.XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

static void journal_names_stderr(void)
{
	struct stat st;
	char v[64];

	cr_assert_eq(fstat(STDERR_FILENO, &st), 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", v, 1);
}

static char *read_back(const char *path)
{
	static char buf[4096];
	FILE *f;
	size_t n;

	fflush(stderr);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	unlink(path);
	return buf;
}

Test(log, plain_stderr_keeps_the_femud_prefix)
{
	char path[64];

	stderr_to_file(path, sizeof(path));
	unsetenv("JOURNAL_STREAM");
	femud_log_err("bad %d", 7);
	femud_log("fine");
	femud_log_raw(LOG_WARNING, "femud: dpdk said\n", 17);
	cr_expect_not(femud_log_to_journal());
	cr_expect_str_eq(read_back(path), "femud: bad 7\nfemud: fine\nfemud: dpdk said\n");
}

Test(log, journal_stream_gets_priorities)
{
	char path[64];
	const char raw[] = "femud: one\nsecond line\nfemud: no newline";

	stderr_to_file(path, sizeof(path));
	journal_names_stderr();
	femud_log_err("bad %d", 7);
	femud_log_warn("careful");
	femud_log_notice("signal %d: stopping", 15);
	femud_log("fine");
	femud_log_raw(LOG_DEBUG, raw, strlen(raw));
	cr_expect(femud_log_to_journal());
	cr_expect_str_eq(read_back(path), "<3>bad 7\n<4>careful\n<5>signal 15: stopping\n<6>fine\n"
					  "<7>one\n<7>second line\n<7>no newline\n");
}

Test(log, lines_each_at_the_given_priority)
{
	char path[64], msgs[] = "pollers share a core\nnode 1 is far";

	stderr_to_file(path, sizeof(path));
	journal_names_stderr();
	femud_log_lines(LOG_WARNING, "placement: ", msgs);
	cr_expect_str_eq(read_back(path),
			 "<4>placement: pollers share a core\n<4>placement: node 1 is far\n");
}

Test(log, journal_stream_of_another_file_is_not_the_journal)
{
	char path[64];

	stderr_to_file(path, sizeof(path));
	setenv("JOURNAL_STREAM", "1:1", 1); /* some other stream: stderr was redirected */
	femud_log_err("bad");
	cr_expect_not(femud_log_to_journal());
	cr_expect_str_eq(read_back(path), "femud: bad\n");
}
