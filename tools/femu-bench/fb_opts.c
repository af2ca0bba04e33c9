/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_opts.c - femu-bench command line parsing (getopt_long) and validation.
 */
#include "fb_opts.h"

#include "ftl/num_parse.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const rw_names[] = {
    [FB_RW_RANDREAD] = "randread", [FB_RW_RANDWRITE] = "randwrite", [FB_RW_READ] = "read",
    [FB_RW_WRITE] = "write",	   [FB_RW_RANDRW] = "randrw",
};

const char *fb_rw_name(enum fb_rw rw)
{
	return rw_names[rw];
}

void fb_opts_defaults(struct fb_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->rw = FB_RW_RANDREAD;
	o->mix = 50;
	o->bs[0] = 4096;
	o->nbs = 1;
	o->qd = 32;
	o->queues = 1;
	o->qsize = 1024;
	o->cpus[0] = -1;
	o->ncpus = 1;
	o->verify_gen = 1;
	o->peer_cpu = -1;
	o->event_idx = true;
	o->timeout_ms = 5000;
	o->seed = 1;
}

int fb_parse_size(const char *s, uint64_t *out)
{
	return num_parse(s, FB_SIZE_FLAGS, 0, UINT64_MAX, out) == 0 ? 0 : -1;
}

/* A parsed list being filled: out[0..n) of at most max entries. */
struct list_out {
	void *out;
	unsigned max;
	unsigned n;
};

/* Call item() for every comma-separated token of s; -1 on an empty list or a bad item. */
static int split_list(const char *s, int (*item)(char *tok, struct list_out *l), struct list_out *l)
{
	char buf[256];
	char *save = NULL, *tok;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	l->n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (item(tok, l) < 0)
			return -1;
	return l->n ? 0 : -1;
}

static int bs_item(char *tok, struct list_out *l)
{
	uint64_t v;

	if (l->n == l->max || fb_parse_size(tok, &v) < 0 || v < 512 || v % 512 || v > FB_MAX_IO)
		return -1;
	((uint32_t *)l->out)[l->n++] = (uint32_t)v;
	return 0;
}

int fb_parse_bs_list(const char *s, uint32_t *out, unsigned max, unsigned *n)
{
	struct list_out l = {.out = out, .max = max};

	if (split_list(s, bs_item, &l) < 0)
		return -1;
	*n = l.n;
	return 0;
}

static int cpu_item(char *tok, struct list_out *l)
{
	uint64_t a, b;

	if (num_range(tok, 0, FB_MAX_CPU_NUM, &a, &b) != 0)
		return -1;
	for (uint64_t c = a; c <= b; c++) {
		if (l->n == l->max)
			return -1;
		((int *)l->out)[l->n++] = (int)c;
	}
	return 0;
}

int fb_parse_cpu_list(const char *s, int *out, unsigned max, unsigned *n)
{
	struct list_out l = {.out = out, .max = max};

	if (split_list(s, cpu_item, &l) < 0)
		return -1;
	*n = l.n;
	return 0;
}

uint32_t fb_opts_max_bs(const struct fb_opts *o)
{
	uint32_t m = 0;
	for (unsigned i = 0; i < o->nbs; i++)
		if (o->bs[i] > m)
			m = o->bs[i];
	return m;
}

void fb_opts_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: femu-bench -s SOCK [options]\n"
	    "       femu-bench -s SOCK --hostile\n"
	    "       femu-bench -s SOCK --connect-churn N [--churn-overlap] [--queues N]\n"
	    "       femu-bench --selftest-peer [options]\n"
	    "A poll-mode vhost-user-blk initiator (QEMU's frontend role, without a VM).\n"
	    "  -s, --socket PATH     backend vhost-user socket\n"
	    "  --rw MODE             randread|randwrite|read|write|randrw (randread)\n"
	    "  --mix PCT             percent reads for randrw (50)\n"
	    "  --bs SIZE[,SIZE..]    request size(s), multiples of 512, picked at random (4k)\n"
	    "  --qd N                requests in flight per queue (32)\n"
	    "  --queues N            virtqueues to use (1)\n"
	    "  --qsize N             virtqueue size, power of two <= 1024 (1024)\n"
	    "  --time SEC            run for SEC seconds\n"
	    "  --ramp SEC            with --time: run SEC seconds of the same I/O first and\n"
	    "                        leave them out of every figure but the per-second rates\n"
	    "  --ios N               run N requests in total\n"
	    "                        (read/write without --time/--ios: one sequential pass)\n"
	    "  --size BYTES          byte range used (whole device from --offset)\n"
	    "  --offset BYTES        first byte of the range (0)\n"
	    "  --cpus LIST           one pinned worker thread per CPU, each owning its queues\n"
	    "  --verify              stamp written sectors (LBA, generation, checksum), check "
	    "reads\n"
	    "  --verify-gen N        generation written / expected (1)\n"
	    "  --verify-map FILE     (implies --verify) keep per sector the generation last\n"
	    "                        acknowledged and last submitted in FILE; reads must find\n"
	    "                        one of them (survives runs and a backend killed mid-run;\n"
	    "                        give every run its own --verify-gen)\n"
	    "  --progress FILE       keep each worker's count of completed requests in FILE\n"
	    "                        (created; worker k's at byte 64 k, 8 bytes, native\n"
	    "                        order), for a sampler that stops and continues the run\n"
	    "                        (tools/bench/turns)\n"
	    "  --json                print the result as one JSON object\n"
	    "  --hostile             run malformed-input cases; prints 'N passed, N failed'\n"
	    "  --case TEXT           with --hostile: only the cases whose name contains TEXT\n"
	    "  --connect-churn N     N fresh connections, each with its own memory and --queues\n"
	    "                        queues of --qsize, one 4 KiB request per queue (even\n"
	    "                        connections write, odd ones read back and compare);\n"
	    "                        prints the requests served and the failures\n"
	    "  --churn-overlap       with --connect-churn: odd connections stop their queues\n"
	    "                        but close only after the next one served its requests\n"
	    "  --selftest-peer       complete requests with an in-process polling peer (no "
	    "socket)\n"
	    "  --peer-cpu N          CPU of the self-test peer thread\n"
	    "  --no-event-idx        do not negotiate VIRTIO_RING_F_EVENT_IDX\n"
	    "  --dirty-log           turn on dirty logging once the queues run (as QEMU at a\n"
	    "                        live migration's start) and check the log at the end:\n"
	    "                        every page the backend wrote marked, no ring page it\n"
	    "                        only read\n"
	    "  --packed              negotiate VIRTIO_F_RING_PACKED and drive packed\n"
	    "                        virtqueues (fails when the backend does not offer them)\n"
	    "  --indirect            each request as one descriptor naming its slot's\n"
	    "                        indirect table (header, data, status), as Linux's\n"
	    "                        virtio driver sends multi-buffer requests when\n"
	    "                        VIRTIO_RING_F_INDIRECT_DESC is negotiated; either layout\n"
	    "  --hugepages           back the shared memory with hugetlb pages\n"
	    "  --rate IOPS           paced: submit at this rate in total (spread over the "
	    "queues,\n"
	    "                        at most --qd in flight each); latency counts from "
	    "submission\n"
	    "  --burst N             bursts: N requests per queue (at most --qd in flight), "
	    "then\n"
	    "  --gap-us LO[-HI]      an idle gap of LO..HI us after the burst completed\n"
	    "  --timeout MS          bound on every wait (5000)\n"
	    "  --seed N              random seed (1)\n"
	    "  -q, --quiet           no informational lines on stderr\n"
	    "  -h, --help\n");
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_rw(struct fb_opts *o, const char *s)
{
	for (unsigned i = 0; i < sizeof(rw_names) / sizeof(rw_names[0]); i++)
		if (strcmp(s, rw_names[i]) == 0) {
			o->rw = (enum fb_rw)i;
			return 0;
		}
	return -1;
}

static int parse_bs(struct fb_opts *o, const char *s)
{
	return fb_parse_bs_list(s, o->bs, FB_MAX_BS, &o->nbs);
}

static int parse_cpus(struct fb_opts *o, const char *s)
{
	return fb_parse_cpu_list(s, o->cpus, FB_MAX_CPUS, &o->ncpus);
}

/* --verify-map FILE: keep the expectations in FILE; implies --verify. */
static int parse_vmap(struct fb_opts *o, const char *s)
{
	o->verify_map = s;
	o->verify = true;
	return 0;
}

static int parse_time(struct fb_opts *o, const char *s)
{
	return num_double(s, 0, 1e6, &o->time_s) == 0 ? 0 : -1;
}

static int parse_ramp(struct fb_opts *o, const char *s)
{
	return num_double(s, 0, 1e6, &o->ramp_s) == 0 ? 0 : -1;
}

/* --rate IOPS: requests per second in total, > 0. */
static int parse_rate(struct fb_opts *o, const char *s)
{
	return num_double(s, 0, 1e9, &o->rate) == 0 ? 0 : -1;
}

int fb_parse_range(const char *s, uint32_t max, uint32_t *lo, uint32_t *hi)
{
	uint64_t a, b;

	if (num_range(s, 0, max, &a, &b) != 0)
		return -1;
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return 0;
}

/* --gap-us LO[-HI]: idle time after each burst, us. */
static int parse_gap(struct fb_opts *o, const char *s)
{
	return fb_parse_range(s, 10000000, &o->gap_us_lo, &o->gap_us_hi);
}

/* How an option's value is stored. */
enum opt_kind {
	K_STR,	/* const char * field = the argument */
	K_SET,	/* bool field = the row's value (no argument) */
	K_NUM,	/* unsigned / int / uint64_t field, checked by the row's num_spec */
	K_FN,	/* the row's own parser */
	K_HELP, /* print the usage */
};

/* One command-line option: its name, where it goes, what it accepts. */
struct opt_row {
	const char *name; /* long name */
	int letter;	  /* short option, 0 for none */
	enum opt_kind kind;
	size_t off;	      /* offsetof(struct fb_opts, field) */
	size_t width;	      /* K_NUM: sizeof the field (4 or 8) */
	bool set;	      /* K_SET: the value stored */
	struct num_spec spec; /* K_NUM; spec.expect: the message of a bad value */
	int (*parse)(struct fb_opts *o, const char *arg); /* K_FN: 0 or -1 */
};

#define FB_STR_(x) #x
#define FB_STR(x) FB_STR_(x)
#define FIELD(f) offsetof(struct fb_opts, f), sizeof(((struct fb_opts *)0)->f)
#define ROW_STR(n, l, f)                                                                           \
	{                                                                                          \
		n, l, K_STR, FIELD(f), false, {0}, NULL                                            \
	}
#define ROW_SET(n, l, f, v)                                                                        \
	{                                                                                          \
		n, l, K_SET, FIELD(f), v, {0}, NULL                                                \
	}
#define ROW_NUM(n, f, fl, lo, hi, ex)                                                              \
	{                                                                                          \
		n, 0, K_NUM, FIELD(f), false, {fl, lo, hi, ex}, NULL                               \
	}
#define ROW_FN(n, fn, ex)                                                                          \
	{                                                                                          \
		n, 0, K_FN, 0, 0, false, {0, 0, 0, ex}, fn                                         \
	}

static const struct opt_row opt_rows[] = {
    ROW_STR("socket", 's', sock),
    ROW_FN("rw", parse_rw, "expected randread, randwrite, read, write or randrw"),
    ROW_NUM("mix", mix, 0, 0, 100, "a percentage 0..100"),
    ROW_FN("bs", parse_bs, "up to " FB_STR(FB_MAX_BS) " sizes, multiples of 512 from 512 to 1M"),
    ROW_NUM("qd", qd, 0, 1, 1024, "1..1024"),
    ROW_NUM("queues", queues, 0, 1, FB_MAX_QUEUES, "1.." FB_STR(FB_MAX_QUEUES)),
    ROW_NUM("qsize", qsize, 0, 0, FB_MAX_QSIZE, "a power of two from 4 to " FB_STR(FB_MAX_QSIZE)),
    ROW_FN("time", parse_time, "seconds > 0"),
    ROW_FN("ramp", parse_ramp, "seconds > 0"),
    ROW_NUM("ios", ios, 0, 1, UINT64_MAX, "a count > 0"),
    ROW_NUM("size", size, FB_SIZE_FLAGS, 1, UINT64_MAX, "bytes > 0 (k/m/g suffixes)"),
    ROW_NUM("offset", offset, FB_SIZE_FLAGS, 0, UINT64_MAX, "bytes (k/m/g suffixes)"),
    ROW_FN("cpus", parse_cpus, "a list like 1 or 0,2 or 1-3"),
    ROW_SET("verify", 0, verify, true),
    ROW_NUM("verify-gen", verify_gen, 0, 0, UINT64_MAX, "a number"),
    ROW_FN("verify-map", parse_vmap, "a file"),
    ROW_STR("progress", 0, progress),
    ROW_SET("json", 0, json, true),
    ROW_SET("hostile", 0, hostile, true),
    ROW_STR("case", 0, hostile_case),
    ROW_NUM("connect-churn", connect_churn, 0, 1, UINT64_MAX, "a count > 0"),
    ROW_SET("churn-overlap", 0, churn_overlap, true),
    ROW_SET("selftest-peer", 0, selftest_peer, true),
    ROW_NUM("peer-cpu", peer_cpu, 0, 0, FB_MAX_CPU_NUM, "a CPU number"),
    ROW_SET("no-event-idx", 0, event_idx, false),
    ROW_SET("dirty-log", 0, dirty_log, true),
    ROW_SET("packed", 0, packed, true),
    ROW_SET("indirect", 0, indirect, true),
    ROW_SET("hugepages", 0, hugepages, true),
    ROW_NUM("timeout", timeout_ms, 0, 1, 3600000, "milliseconds 1..3600000"),
    ROW_NUM("seed", seed, 0, 0, UINT64_MAX, "a number"),
    ROW_FN("rate", parse_rate, "requests per second > 0"),
    ROW_NUM("burst", burst, 0, 1, 1u << 30, "requests per burst > 0"),
    ROW_FN("gap-us", parse_gap, "us, or LO-HI with LO <= HI <= 10000000"),
    ROW_SET("quiet", 'q', quiet, true),
    {"help", 'h', K_HELP, 0, 0, false, {0}, NULL},
};
#define NROWS (sizeof(opt_rows) / sizeof(opt_rows[0]))

/* getopt_long's table and short-option string for opt_rows (row i answers 256 + i). */
static void opt_getopt_tables(struct option *lo, char *shorts)
{
	size_t ns = 0;

	shorts[ns++] = ':';
	for (size_t i = 0; i < NROWS; i++) {
		const struct opt_row *r = &opt_rows[i];
		bool arg = r->kind != K_SET && r->kind != K_HELP;

		lo[i] = (struct option){r->name, arg ? required_argument : no_argument, NULL,
					(int)(256 + i)};
		if (r->letter) {
			shorts[ns++] = (char)r->letter;
			if (arg)
				shorts[ns++] = ':';
		}
	}
	lo[NROWS] = (struct option){NULL, 0, NULL, 0};
	shorts[ns] = '\0';
}

static void store_num(struct fb_opts *o, const struct opt_row *r, uint64_t v)
{
	char *field = (char *)o + r->off;

	if (r->width == sizeof(uint64_t)) {
		memcpy(field, &v, sizeof(v));
	} else {
		uint32_t v32 = (uint32_t)v; /* unsigned or int field; the range fits */

		memcpy(field, &v32, sizeof(v32));
	}
}

/* Apply one option; 1 after --help, -1 with a message naming the option. */
static int opt_apply(struct fb_opts *o, const struct opt_row *r, const char *arg, char *err,
		     size_t errlen)
{
	char name[32];
	uint64_t v;

	switch (r->kind) {
	case K_STR:
		memcpy((char *)o + r->off, &arg, sizeof(arg));
		return 0;
	case K_SET:
		*(bool *)((char *)o + r->off) = r->set;
		return 0;
	case K_NUM:
		snprintf(name, sizeof(name), "--%s", r->name);
		if (num_parse_key(name, arg, &r->spec, &v, err, errlen) != 0)
			return -1;
		store_num(o, r, v);
		return 0;
	case K_FN:
		if (r->parse(o, arg) < 0)
			return fail(err, errlen, "--%s %s: %s", r->name, arg, r->spec.expect);
		return 0;
	case K_HELP:
		fb_opts_usage(stdout);
		return 1;
	}
	return -1;
}

static int check_pacing(const struct fb_opts *o, char *err, size_t errlen)
{
	if (o->rate > 0 && o->burst)
		return fail(err, errlen, "--rate and --burst are exclusive");
	if (o->burst == 0 && o->gap_us_hi)
		return fail(err, errlen, "--gap-us needs --burst");
	return 0;
}

static int check_combination(struct fb_opts *o, char *err, size_t errlen)
{
	if (!o->sock && !o->selftest_peer)
		return fail(err, errlen, "-s SOCK is required (or --selftest-peer)");
	if (o->time_s > 0 && o->ios)
		return fail(err, errlen, "--time and --ios are exclusive");
	if (o->ramp_s > 0 && !(o->time_s > 0))
		return fail(err, errlen, "--ramp needs --time");
	if ((o->qsize & (o->qsize - 1)) || o->qsize < 4 || o->qsize > FB_MAX_QSIZE)
		return fail(err, errlen, "--qsize %u: a power of two from 4 to %u", o->qsize,
			    FB_MAX_QSIZE);
	if (o->qd > o->qsize / 3)
		return fail(err, errlen,
			    "--qd %u: at most %u with --qsize %u (3 descriptors per request)",
			    o->qd, o->qsize / 3, o->qsize);
	if (o->ncpus > o->queues)
		return fail(err, errlen,
			    "--cpus has %u entries but only %u queues: each thread "
			    "needs at least one queue",
			    o->ncpus, o->queues);
	if (o->size % 512 || o->offset % 512)
		return fail(err, errlen, "--size and --offset must be multiples of 512");
	if (o->connect_churn && (o->selftest_peer || o->hostile))
		return fail(
		    err, errlen,
		    "--connect-churn needs a backend socket (no --selftest-peer, --hostile)");
	if (o->indirect && (o->selftest_peer || o->hostile || o->connect_churn))
		return fail(err, errlen,
			    "--indirect drives a workload's requests (not with --selftest-peer, "
			    "--hostile or --connect-churn)");
	if (o->churn_overlap && !o->connect_churn)
		return fail(err, errlen, "--churn-overlap needs --connect-churn");
	if (o->size && o->size < fb_opts_max_bs(o))
		return fail(err, errlen, "--size %llu is smaller than --bs %u",
			    (unsigned long long)o->size, fb_opts_max_bs(o));
	return check_pacing(o, err, errlen);
}

int fb_opts_parse(struct fb_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	struct option lo[NROWS + 1];
	char shorts[2 * NROWS + 2];
	int c, rc;

	opt_getopt_tables(lo, shorts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const struct opt_row *r = NULL;

		for (size_t i = 0; i < NROWS && r == NULL; i++)
			if (c == (int)(256 + i) || (opt_rows[i].letter && c == opt_rows[i].letter))
				r = &opt_rows[i];
		if (c == ':')
			return fail(err, errlen, "%s needs a value", argv[optind - 1]);
		if (r == NULL)
			return fail(err, errlen, "unknown option %s", argv[optind - 1]);
		rc = opt_apply(o, r, optarg, err, errlen);
		if (rc != 0)
			return rc;
	}
	if (optind < argc)
		return fail(err, errlen, "unexpected argument %s", argv[optind]);
	return check_combination(o, err, errlen);
}
