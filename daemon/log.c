/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log.c - femud's stderr messages (see log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "daemon/log.h"

void femud_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("femud: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void femud_log_lines(const char *prefix, char *msgs)
{
	for (char *save = NULL, *line = strtok_r(msgs, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		femud_log("%s%s", prefix, line);
}
