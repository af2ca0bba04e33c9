/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.c - femud's log lines (see log.h).  One fprintf-sized write per line
 * under stdio's stream lock, so lines of several threads do not mix.
 * Touches only stderr and the environment (JOURNAL_STREAM, read once).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/log.h"

static pthread_once_t g_journal_once = PTHREAD_ONCE_INIT;
static bool g_journal;

/* systemd sets JOURNAL_STREAM=DEV:INODE of the stream it connected to stderr. */
static void log_detect_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	g_journal = js != NULL && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
		    fstat(STDERR_FILENO, &st) == 0 && (unsigned long long)st.st_dev == dev &&
		    (unsigned long long)st.st_ino == ino;
}

bool femud_log_to_journal(void)
{
	pthread_once(&g_journal_once, log_detect_journal);
	return g_journal;
}

void femud_logp(int pri, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (femud_log_to_journal())
		fprintf(stderr, "<%d>%s\n", pri & LOG_PRIMASK, line);
	else
		fprintf(stderr, "femud: %s\n", line);
}

void femud_log_raw(int pri, const char *buf, size_t len)
{
	static const char tag[] = "femud: ";

	if (!femud_log_to_journal()) {
		fwrite(buf, 1, len, stderr);
		return;
	}
	flockfile(stderr);
	while (len > 0) {
		const char *nl = memchr(buf, '\n', len);
		size_t n = nl != NULL ? (size_t)(nl - buf) + 1 : len;
		size_t skip = n >= sizeof(tag) - 1 && memcmp(buf, tag, sizeof(tag) - 1) == 0
				  ? sizeof(tag) - 1
				  : 0;

		fprintf(stderr, "<%d>%.*s%s", pri & LOG_PRIMASK, (int)(n - skip), buf + skip,
			nl != NULL ? "" : "\n");
		buf += n;
		len -= n;
	}
	funlockfile(stderr);
}

void femud_log_lines(int pri, const char *prefix, char *msgs)
{
	for (char *save = NULL, *line = strtok_r(msgs, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		femud_logp(pri, "%s%s", prefix, line);
}
