/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * thread_diag.c - sampling a thread of this process from /proc (see
 * thread_diag.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmd/thread_diag.h"

pid_t pmd_thread_self(void)
{
	return gettid();
}

/* Read /proc/self/task/TID/name into buf (NUL-terminated); bytes read or -1. */
static ssize_t task_read(pid_t tid, const char *name, char *buf, size_t len)
{
	char path[64];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, name);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (ssize_t)n;
}

void pmd_thread_sample(pid_t tid, struct pmd_thread_sample *s)
{
	char buf[512];
	const char *p;
	struct timespec ts;
	unsigned long long run, wait;

	memset(s, 0, sizeof(*s));
	s->syscall = -2;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->at_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	/* "tid (comm) S ...": comm may hold spaces and parentheses, the state follows the last ')'
	 */
	if (task_read(tid, "stat", buf, sizeof(buf)) <= 0 || (p = strrchr(buf, ')')) == NULL ||
	    p[1] != ' ' || p[2] == '\0')
		return;
	s->ok = true;
	s->state = p[2];
	if (task_read(tid, "schedstat", buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%llu %llu", &run, &wait) == 2) {
		s->has_sched = true;
		s->run_ns = run;
		s->wait_ns = wait;
	}
	/* "running", or "NR args... sp pc" (NR -1: blocked outside a syscall) */
	if (task_read(tid, "syscall", buf, sizeof(buf)) > 0) {
		char *end;

		if (strncmp(buf, "running", 7) == 0) {
			s->syscall = -1;
		} else {
			s->syscall = strtol(buf, &end, 10);
			if (s->syscall >= 0)
				s->arg0 = strtoull(end, NULL, 16); /* " 0x7 ..." */
		}
	}
	if (task_read(tid, "wchan", s->wchan, sizeof(s->wchan)) <= 0)
		s->wchan[0] = '\0';
}

const char *pmd_thread_describe(pid_t tid, const struct pmd_thread_sample *before,
				const struct pmd_thread_sample *now, char *buf, size_t len)
{
	size_t n;

	if (!now->ok) {
		snprintf(buf, len, "thread %d: not found in /proc", (int)tid);
		return buf;
	}
	n = (size_t)snprintf(buf, len, "thread %d state %c", (int)tid, now->state);
	if (n < len && now->syscall >= 0)
		n += (size_t)snprintf(buf + n, len - n, ", in syscall %ld (wchan %s)", now->syscall,
				      now->wchan[0] ? now->wchan : "?");
	else if (n < len && now->syscall == -1)
		n += (size_t)snprintf(buf + n, len - n, ", not in a syscall");
	if (n < len && now->has_sched && before != NULL && before->ok && before->has_sched &&
	    now->at_ns > before->at_ns)
		snprintf(buf + n, len - n,
			 ", in the last %.1f s ran %.1f ms and waited %.1f ms for a CPU",
			 (double)(now->at_ns - before->at_ns) / 1e9,
			 (double)(now->run_ns - before->run_ns) / 1e6,
			 (double)(now->wait_ns - before->wait_ns) / 1e6);
	else if (n < len && now->has_sched)
		snprintf(buf + n, len - n, ", ran %.1f ms and waited %.1f ms for a CPU in all",
			 (double)now->run_ns / 1e6, (double)now->wait_ns / 1e6);
	return buf;
}
