/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.c - femud's log lines (see log.h).  One fprintf-sized write per line
 * under stdio's stream lock, so lines of several threads do not mix.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "daemon/log.h"

void femud_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "femud: %s\n", line);
}

void femud_log_lines(const char *prefix, char *msgs)
{
	for (char *save = NULL, *line = strtok_r(msgs, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		femud_log("%s%s", prefix, line);
}
