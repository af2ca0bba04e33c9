/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_opts.c - femu-bench command line parsing (getopt_long) and validation.
 */
#include "fb_opts.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
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
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	default:
		return -1;
	}
	if (*end == 'i' || *end == 'B') /* accept 4KiB, 4KB */
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	if (*end != '\0')
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
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

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int cpu_item(char *tok, struct list_out *l)
{
	unsigned long long a, b;
	char *dash = strchr(tok, '-');

	if (dash)
		*dash = '\0';
	if (parse_uint(tok, 4095, &a) < 0)
		return -1;
	b = a;
	if (dash && (parse_uint(dash + 1, 4095, &b) < 0 || b < a))
		return -1;
	for (unsigned long long c = a; c <= b; c++) {
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
	fprintf(out,
		"usage: femu-bench -s SOCK [options]\n"
		"       femu-bench -s SOCK --hostile\n"
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
		"  --json                print the result as one JSON object\n"
		"  --hostile             run malformed-input cases; prints 'N passed, N failed'\n"
		"  --case TEXT           with --hostile: only the cases whose name contains TEXT\n"
		"  --selftest-peer       complete requests with an in-process polling peer (no "
		"socket)\n"
		"  --peer-cpu N          CPU of the self-test peer thread\n"
		"  --no-event-idx        do not negotiate VIRTIO_RING_F_EVENT_IDX\n"
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

enum {
	O_RW = 256,
	O_MIX,
	O_BS,
	O_QD,
	O_QUEUES,
	O_QSIZE,
	O_TIME,
	O_IOS,
	O_SIZE,
	O_OFFSET,
	O_CPUS,
	O_VERIFY,
	O_VGEN,
	O_VMAP,
	O_JSON,
	O_HOSTILE,
	O_PEER,
	O_PEER_CPU,
	O_NO_EVIDX,
	O_HUGE,
	O_TIMEOUT,
	O_SEED,
	O_CASE,
	O_RAMP,
	O_RATE,
	O_BURST,
	O_GAP,
};

static const struct option long_opts[] = {
    {"socket", required_argument, NULL, 's'},
    {"rw", required_argument, NULL, O_RW},
    {"mix", required_argument, NULL, O_MIX},
    {"bs", required_argument, NULL, O_BS},
    {"qd", required_argument, NULL, O_QD},
    {"queues", required_argument, NULL, O_QUEUES},
    {"qsize", required_argument, NULL, O_QSIZE},
    {"time", required_argument, NULL, O_TIME},
    {"ramp", required_argument, NULL, O_RAMP},
    {"ios", required_argument, NULL, O_IOS},
    {"size", required_argument, NULL, O_SIZE},
    {"offset", required_argument, NULL, O_OFFSET},
    {"cpus", required_argument, NULL, O_CPUS},
    {"verify", no_argument, NULL, O_VERIFY},
    {"verify-gen", required_argument, NULL, O_VGEN},
    {"verify-map", required_argument, NULL, O_VMAP},
    {"json", no_argument, NULL, O_JSON},
    {"hostile", no_argument, NULL, O_HOSTILE},
    {"case", required_argument, NULL, O_CASE},
    {"selftest-peer", no_argument, NULL, O_PEER},
    {"peer-cpu", required_argument, NULL, O_PEER_CPU},
    {"no-event-idx", no_argument, NULL, O_NO_EVIDX},
    {"hugepages", no_argument, NULL, O_HUGE},
    {"timeout", required_argument, NULL, O_TIMEOUT},
    {"seed", required_argument, NULL, O_SEED},
    {"rate", required_argument, NULL, O_RATE},
    {"burst", required_argument, NULL, O_BURST},
    {"gap-us", required_argument, NULL, O_GAP},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_rw(const char *s, enum fb_rw *rw)
{
	for (unsigned i = 0; i < sizeof(rw_names) / sizeof(rw_names[0]); i++)
		if (strcmp(s, rw_names[i]) == 0) {
			*rw = (enum fb_rw)i;
			return 0;
		}
	return -1;
}

/* A number > 0 and <= max (seconds, requests per second). */
static int parse_positive(const char *s, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > max)
		return -1;
	*out = v;
	return 0;
}

int fb_parse_range(const char *s, uint32_t max, uint32_t *lo, uint32_t *hi)
{
	unsigned long long a, b;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	a = strtoull(s, &end, 10);
	b = a;
	if (!errno && *end == '-' && end[1] >= '0' && end[1] <= '9')
		b = strtoull(end + 1, &end, 10);
	if (errno || *end || a > b || b > max)
		return -1;
	*lo = (uint32_t)a;
	*hi = (uint32_t)b;
	return 0;
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
	if (o->size && o->size < fb_opts_max_bs(o))
		return fail(err, errlen, "--size %llu is smaller than --bs %u",
			    (unsigned long long)o->size, fb_opts_max_bs(o));
	return check_pacing(o, err, errlen);
}

int fb_opts_parse(struct fb_opts *o, int argc, char **argv, char *err, size_t errlen)
{
	unsigned long long v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:qh", long_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->sock = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			fb_opts_usage(stdout);
			return 1;
		case O_RW:
			if (parse_rw(optarg, &o->rw) < 0)
				return fail(err, errlen,
					    "--rw %s: expected randread, randwrite, "
					    "read, write or randrw",
					    optarg);
			break;
		case O_MIX:
			if (parse_uint(optarg, 100, &v) < 0)
				return fail(err, errlen, "--mix %s: a percentage 0..100", optarg);
			o->mix = (unsigned)v;
			break;
		case O_BS:
			if (fb_parse_bs_list(optarg, o->bs, FB_MAX_BS, &o->nbs) < 0)
				return fail(err, errlen,
					    "--bs %s: up to %d sizes, multiples of 512 "
					    "from 512 to 1M",
					    optarg, FB_MAX_BS);
			break;
		case O_QD:
			if (parse_uint(optarg, 1024, &v) < 0 || v == 0)
				return fail(err, errlen, "--qd %s: 1..1024", optarg);
			o->qd = (unsigned)v;
			break;
		case O_QUEUES:
			if (parse_uint(optarg, FB_MAX_QUEUES, &v) < 0 || v == 0)
				return fail(err, errlen, "--queues %s: 1..%d", optarg,
					    FB_MAX_QUEUES);
			o->queues = (unsigned)v;
			break;
		case O_QSIZE:
			if (parse_uint(optarg, FB_MAX_QSIZE, &v) < 0)
				return fail(err, errlen, "--qsize %s: a power of two from 4 to %d",
					    optarg, FB_MAX_QSIZE);
			o->qsize = (unsigned)v;
			break;
		case O_TIME:
			if (parse_positive(optarg, 1e6, &o->time_s) < 0)
				return fail(err, errlen, "--time %s: seconds > 0", optarg);
			break;
		case O_RAMP:
			if (parse_positive(optarg, 1e6, &o->ramp_s) < 0)
				return fail(err, errlen, "--ramp %s: seconds > 0", optarg);
			break;
		case O_IOS:
			if (parse_uint(optarg, UINT64_MAX, &v) < 0 || v == 0)
				return fail(err, errlen, "--ios %s: a count > 0", optarg);
			o->ios = v;
			break;
		case O_SIZE:
			if (fb_parse_size(optarg, &o->size) < 0 || o->size == 0)
				return fail(err, errlen, "--size %s: bytes > 0 (k/m/g suffixes)",
					    optarg);
			break;
		case O_OFFSET:
			if (fb_parse_size(optarg, &o->offset) < 0)
				return fail(err, errlen, "--offset %s: bytes (k/m/g suffixes)",
					    optarg);
			break;
		case O_CPUS:
			if (fb_parse_cpu_list(optarg, o->cpus, FB_MAX_CPUS, &o->ncpus) < 0)
				return fail(err, errlen, "--cpus %s: a list like 1 or 0,2 or 1-3",
					    optarg);
			break;
		case O_VERIFY:
			o->verify = true;
			break;
		case O_VGEN:
			if (parse_uint(optarg, UINT64_MAX, &v) < 0)
				return fail(err, errlen, "--verify-gen %s: a number", optarg);
			o->verify_gen = v;
			break;
		case O_VMAP:
			o->verify_map = optarg;
			o->verify = true;
			break;
		case O_JSON:
			o->json = true;
			break;
		case O_HOSTILE:
			o->hostile = true;
			break;
		case O_CASE:
			o->hostile_case = optarg;
			break;
		case O_PEER:
			o->selftest_peer = true;
			break;
		case O_PEER_CPU:
			if (parse_uint(optarg, 4095, &v) < 0)
				return fail(err, errlen, "--peer-cpu %s: a CPU number", optarg);
			o->peer_cpu = (int)v;
			break;
		case O_NO_EVIDX:
			o->event_idx = false;
			break;
		case O_HUGE:
			o->hugepages = true;
			break;
		case O_TIMEOUT:
			if (parse_uint(optarg, 3600000, &v) < 0 || v == 0)
				return fail(err, errlen, "--timeout %s: milliseconds 1..3600000",
					    optarg);
			o->timeout_ms = (unsigned)v;
			break;
		case O_SEED:
			if (parse_uint(optarg, UINT64_MAX, &v) < 0)
				return fail(err, errlen, "--seed %s: a number", optarg);
			o->seed = v;
			break;
		case O_RATE:
			if (parse_positive(optarg, 1e9, &o->rate) < 0)
				return fail(err, errlen, "--rate %s: requests per second > 0",
					    optarg);
			break;
		case O_BURST:
			if (parse_uint(optarg, 1u << 30, &v) < 0 || v == 0)
				return fail(err, errlen, "--burst %s: requests per burst > 0",
					    optarg);
			o->burst = (unsigned)v;
			break;
		case O_GAP:
			if (fb_parse_range(optarg, 10000000, &o->gap_us_lo, &o->gap_us_hi) < 0)
				return fail(err, errlen,
					    "--gap-us %s: us, or LO-HI with LO <= HI <= 10000000",
					    optarg);
			break;
		case ':':
			return fail(err, errlen, "%s needs a value", argv[optind - 1]);
		default:
			return fail(err, errlen, "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fail(err, errlen, "unexpected argument %s", argv[optind]);
	return check_combination(o, err, errlen);
}
