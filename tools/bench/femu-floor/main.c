/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - femu-floor: print what this machine allows a vhost-user-blk
 * backend on CPU A serving an initiator on CPU B (see floor.h), as text or
 * one JSON object.  tools/bench/sweep and tools/bench/model print it next to
 * their figures.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "floor.h"
#include "ftl/num_parse.h"

struct floor_opts {
	int cpu_a, cpu_b;
	unsigned size_mb;
	unsigned loss_ms;
	unsigned soak_s;       /* --copy-soak: only the per-second copy rate */
	unsigned ring_ms;      /* --ring-ms: time of each high-QD split-ring measurement */
	int ring_qd1;	       /* --ring-qd1: only the bare split ring at QD1 */
	const char *loop_file; /* --ring-qd1-loop: the QD1 ring without end, its count there */
	int virtio_layout;     /* --virtio-layout: that ring with virtio-blk's layout */
	const char *copy_file; /* --copy-loop: the overlapped copy without end, its count there */
	const char *ring_file; /* --ring-loop: the split ring at --qd without end, its count */
	unsigned qd;	       /* --qd: the queue depth of --ring-loop */
	unsigned bs;	       /* --bs: bytes per request of --ring-loop (0: 4096) */
	int rtt;	       /* --rtt: only the cache-line round trip */
	unsigned layouts;      /* --layout: LAYOUT_SPLIT and/or LAYOUT_PACKED ring figures */
	int json;
};

#define LAYOUT_SPLIT 1u
#define LAYOUT_PACKED 2u

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: femu-floor [--cpus A,B] [--size-mb N] [--loss-ms MS] [--ring-ms MS] "
		"[--copy-soak SEC] [--ring-qd1] [--json]\n"
		"       femu-floor [--cpus A,B] [--size-mb N] --ring-qd1-loop FILE "
		"[--virtio-layout]\n"
		"       femu-floor [--cpus A,B] [--size-mb N] --copy-loop FILE\n"
		"       femu-floor [--cpus A,B] [--size-mb N] --ring-loop FILE --qd N [--bs B]\n"
		"       femu-floor [--cpus A,B] --rtt [--json]\n"
		"  (each ring figure and loop in the --layout split|packed|both given)\n"
		"Measures the floor under any vhost-user-blk backend on CPU A serving an\n"
		"initiator on CPU B: cache-line round trip A<->B, DRAM latency, random\n"
		"4 KiB copies (one at a time and overlapped) out of an N MiB buffer on A,\n"
		"a bare split-ring backend's 4 KiB random reads at QD1, QD32 and QD128,\n"
		"and the CPU time each CPU loses (busy-loop gaps > 1 us).\n"
		"  --cpus A,B     backend CPU and initiator CPU (default 0,1)\n"
		"  --size-mb N    buffer size, as the backend's (default 1024, min 1)\n"
		"  --loss-ms MS   busy-loop time per CPU (default 1000)\n"
		"  --ring-ms MS   time of each high-QD split-ring measurement, after short\n"
		"                 trials of its look-ahead (default 2000, min 100)\n"
		"  --copy-soak SEC  only this: random 4 KiB copies on CPU A out of a fresh\n"
		"                 buffer for SEC seconds, the rate of each second\n"
		"  --ring-qd1     only this: the bare split-ring backend's 4 KiB QD1 figure,\n"
		"                 and the same with virtio-blk's request layout and EVENT_IDX\n"
		"                 (well under a second: to pair with a backend's QD1 run)\n"
		"  --layout L     split (default), packed or both: the ring floors of a split\n"
		"                 virtqueue, of a packed one (virtio 1.2; keys packed_ring_*),\n"
		"                 or each in the same run; with --ring-qd1-loop or --ring-loop\n"
		"                 split or packed: which ring runs\n"
		"  --json         one JSON object (\"layouts\" names the layouts measured)\n"
		"  --ring-qd1-loop FILE  only this: the bare ring at QD1 without end (until\n"
		"                 SIGINT/SIGTERM), the count of requests completed so far in\n"
		"                 FILE (created, 8 bytes, native order) after each one: for a\n"
		"                 sampler that stops and continues this process in turns with\n"
		"                 a backend under test (tools/bench/turns)\n"
		"  --virtio-layout  with --ring-qd1-loop: virtio-blk's layout and EVENT_IDX\n"
		"  --copy-loop FILE  only this: the overlapped random 4 KiB copy on CPU A\n"
		"                 (its best hints first picked in short trials) without end,\n"
		"                 the count of copies so far in FILE, as --ring-qd1-loop\n"
		"  --ring-loop FILE  only this: the bare split ring at queue depth --qd N\n"
		"                 (2..256; its look-ahead, publish interval and hints first\n"
		"                 picked in short trials, as the QD32/QD128 figures) without\n"
		"                 end, the count of requests so far in FILE, as --ring-qd1-loop\n"
		"  --bs B         with --ring-loop: each request reads B bytes (512..4096, a\n"
		"                 multiple of 512; default 4096)\n"
		"  --rtt          only this: the cache-line round trip A<->B in ns, from\n"
		"                 20000 round trips (a few ms; no buffer): which placement\n"
		"                 the two CPUs have now (tools/bench/turns)\n");
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	uint64_t v;

	if (num_parse(s, 0, 0, max, &v) != 0)
		return -1;
	*out = (unsigned long)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct floor_opts *o)
{
	static const struct option lo[] = {{"cpus", required_argument, NULL, 'c'},
					   {"size-mb", required_argument, NULL, 's'},
					   {"loss-ms", required_argument, NULL, 'l'},
					   {"json", no_argument, NULL, 'j'},
					   {"copy-soak", required_argument, NULL, 'k'},
					   {"ring-ms", required_argument, NULL, 'r'},
					   {"ring-qd1", no_argument, NULL, 'q'},
					   {"ring-qd1-loop", required_argument, NULL, 'L'},
					   {"virtio-layout", no_argument, NULL, 'V'},
					   {"copy-loop", required_argument, NULL, 'C'},
					   {"ring-loop", required_argument, NULL, 'R'},
					   {"qd", required_argument, NULL, 'Q'},
					   {"bs", required_argument, NULL, 'B'},
					   {"rtt", no_argument, NULL, 't'},
					   {"layout", required_argument, NULL, 'y'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	unsigned long v, a, b;
	int c;

	*o = (struct floor_opts){.cpu_a = 0,
				 .cpu_b = 1,
				 .size_mb = 1024,
				 .loss_ms = 1000,
				 .ring_ms = 2000,
				 .layouts = LAYOUT_SPLIT};
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c': {
			char tmp[64], *comma;

			snprintf(tmp, sizeof(tmp), "%s", optarg);
			comma = strchr(tmp, ',');
			if (comma == NULL)
				goto bad_cpus;
			*comma = '\0';
			if (parse_uint(tmp, CPU_SETSIZE - 1, &a) ||
			    parse_uint(comma + 1, CPU_SETSIZE - 1, &b) || a == b)
				goto bad_cpus;
			o->cpu_a = (int)a;
			o->cpu_b = (int)b;
			break;
		bad_cpus:
			fprintf(stderr, "femu-floor: --cpus '%s': two different CPU numbers A,B\n",
				optarg);
			return -1;
		}
		case 's':
			if (parse_uint(optarg, 1u << 20, &v) || v == 0) {
				fprintf(stderr,
					"femu-floor: --size-mb '%s': a number of MiB >= 1\n",
					optarg);
				return -1;
			}
			o->size_mb = (unsigned)v;
			break;
		case 'l':
			if (parse_uint(optarg, 600000, &v) || v == 0) {
				fprintf(stderr, "femu-floor: --loss-ms '%s': 1..600000 ms\n",
					optarg);
				return -1;
			}
			o->loss_ms = (unsigned)v;
			break;
		case 'r':
			if (parse_uint(optarg, 600000, &v) || v < 100) {
				fprintf(stderr, "femu-floor: --ring-ms '%s': 100..600000 ms\n",
					optarg);
				return -1;
			}
			o->ring_ms = (unsigned)v;
			break;
		case 'j':
			o->json = 1;
			break;
		case 'q':
			o->ring_qd1 = 1;
			break;
		case 'L':
			o->loop_file = optarg;
			break;
		case 'V':
			o->virtio_layout = 1;
			break;
		case 'C':
			o->copy_file = optarg;
			break;
		case 'R':
			o->ring_file = optarg;
			break;
		case 'Q':
			if (parse_uint(optarg, FLOOR_RING_MAX_QD, &v) || v < 2) {
				fprintf(stderr, "femu-floor: --qd '%s': a queue depth 2..%u\n",
					optarg, FLOOR_RING_MAX_QD);
				return -1;
			}
			o->qd = (unsigned)v;
			break;
		case 'B':
			if (parse_uint(optarg, 4096, &v) || v < 512 || v % 512 != 0) {
				fprintf(stderr,
					"femu-floor: --bs '%s': bytes per request, 512..4096 in "
					"steps of 512\n",
					optarg);
				return -1;
			}
			o->bs = (unsigned)v;
			break;
		case 't':
			o->rtt = 1;
			break;
		case 'y':
			if (strcmp(optarg, "split") == 0)
				o->layouts = LAYOUT_SPLIT;
			else if (strcmp(optarg, "packed") == 0)
				o->layouts = LAYOUT_PACKED;
			else if (strcmp(optarg, "both") == 0)
				o->layouts = LAYOUT_SPLIT | LAYOUT_PACKED;
			else {
				fprintf(stderr,
					"femu-floor: --layout '%s': split, packed or both\n",
					optarg);
				return -1;
			}
			break;
		case 'k':
			if (parse_uint(optarg, 3600, &v) || v == 0) {
				fprintf(stderr, "femu-floor: --copy-soak '%s': 1..3600 s\n",
					optarg);
				return -1;
			}
			o->soak_s = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "femu-floor: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (o->virtio_layout && o->loop_file == NULL) {
		fprintf(stderr, "femu-floor: --virtio-layout goes with --ring-qd1-loop FILE\n");
		return -1;
	}
	if (o->copy_file != NULL && (o->loop_file != NULL || o->ring_qd1 || o->soak_s > 0)) {
		fprintf(stderr, "femu-floor: --copy-loop FILE is a mode of its own (not with "
				"--ring-qd1-loop, --ring-qd1 or --copy-soak)\n");
		return -1;
	}
	if (o->rtt &&
	    (o->copy_file != NULL || o->loop_file != NULL || o->ring_qd1 || o->soak_s > 0)) {
		fprintf(stderr, "femu-floor: --rtt is a mode of its own (not with --copy-loop, "
				"--ring-qd1-loop, --ring-qd1 or --copy-soak)\n");
		return -1;
	}
	if (o->ring_file != NULL && (o->copy_file != NULL || o->loop_file != NULL || o->ring_qd1 ||
				     o->soak_s > 0 || o->rtt)) {
		fprintf(stderr,
			"femu-floor: --ring-loop FILE is a mode of its own (not with "
			"--copy-loop, --ring-qd1-loop, --ring-qd1, --copy-soak or --rtt)\n");
		return -1;
	}
	if ((o->ring_file != NULL || o->loop_file != NULL) &&
	    o->layouts == (LAYOUT_SPLIT | LAYOUT_PACKED)) {
		fprintf(stderr,
			"femu-floor: --layout both: a loop runs one ring (split or packed)\n");
		return -1;
	}
	if (o->virtio_layout && o->layouts == LAYOUT_PACKED) {
		fprintf(stderr, "femu-floor: --virtio-layout is the split ring's (--layout packed "
				"has virtio-blk's layout already)\n");
		return -1;
	}
	if (o->bs != 0 && o->ring_file == NULL) {
		fprintf(stderr, "femu-floor: --bs B goes with --ring-loop FILE\n");
		return -1;
	}
	if ((o->ring_file != NULL) != (o->qd != 0)) {
		fprintf(stderr, "femu-floor: %s\n",
			o->qd != 0 ? "--qd N goes with --ring-loop FILE"
				   : "--ring-loop FILE needs --qd N (the queue depth, 2..256)");
		return -1;
	}
	return 0;
}

static volatile sig_atomic_t g_loop_stop;

static void loop_stop(int sig)
{
	(void)sig;
	g_loop_stop = 1;
}

/* The option that names the count file (--ring-qd1-loop, --copy-loop, --ring-loop), or NULL. */
static const char *loop_opt(const struct floor_opts *o)
{
	return o->loop_file != NULL   ? "--ring-qd1-loop"
	       : o->copy_file != NULL ? "--copy-loop"
	       : o->ring_file != NULL ? "--ring-loop"
				      : NULL;
}

/* The count file: 8 bytes mapped shared, zero. NULL after printing why. */
static uint64_t *loop_count_map(const struct floor_opts *o)
{
	const char *path = o->loop_file != NULL	  ? o->loop_file
			   : o->copy_file != NULL ? o->copy_file
						  : o->ring_file;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	void *p = MAP_FAILED;

	if (fd >= 0 && ftruncate(fd, 4096) == 0)
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		fprintf(stderr, "femu-floor: %s '%s': %s\n", loop_opt(o), path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* --ring-loop: the split ring at --qd until *stop; 0 or -errno after printing it. */
static int ring_loop(const struct floor_opts *o, struct floor_buf *buf, uint64_t *count)
{
	struct floor_ring_res p;
	char pub[32] = "per batch";
	bool packed = o->layouts == LAYOUT_PACKED;
	const char *name = packed ? "packed" : "split";
	unsigned bs = o->bs != 0 ? o->bs : 4096;
	int rc =
	    floor_ring_count(o->cpu_a, o->cpu_b, buf, o->qd, packed, bs, &p, count, &g_loop_stop);

	if (rc != 0) {
		fprintf(stderr, "femu-floor: --ring-loop: %s ring QD%u CPU %d <-> %d: %s\n", name,
			o->qd, o->cpu_a, o->cpu_b, strerror(-rc));
		return rc;
	}
	if (p.pub != 0)
		snprintf(pub, sizeof(pub), "every %u requests", p.pub);
	printf("bare %s ring at QD%u, %u B reads (look-ahead %u, %s,%s used index %s): %" PRIu64
	       " requests\n",
	       name, o->qd, bs, p.look, floor_pf_name(p.pf),
	       p.pf_first ? " block asked for first," : "", pub, *count);
	return 0;
}

/*
 * --ring-qd1-loop (the QD1 ring), --copy-loop (the overlapped copy on CPU A)
 * or --ring-loop (the ring at --qd) until SIGINT/SIGTERM, the count in the file.
 */
static int count_loop(const struct floor_opts *o, struct floor_buf *buf, uint64_t *count)
{
	struct sigaction sa = {.sa_handler = loop_stop};
	int rc;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o->ring_file != NULL) {
		rc = ring_loop(o, buf, count);
	} else if (o->copy_file != NULL) {
		floor_pin(o->cpu_a);
		rc = floor_copy4k_loop(buf, count, &g_loop_stop);
		if (rc != 0)
			fprintf(stderr, "femu-floor: --copy-loop: %s\n", strerror(-rc));
		else
			printf("random 4 KiB copies (CPU %d, %u MiB): %" PRIu64 "\n", o->cpu_a,
			       o->size_mb, *count);
	} else {
		enum floor_qd1 kind = o->layouts == LAYOUT_PACKED ? FLOOR_QD1_PACKED
				      : o->virtio_layout	  ? FLOOR_QD1_VIRTIO
								  : FLOOR_QD1_BARE;
		static const char *const names[] = {"bare", "virtio-layout", "packed"};

		rc = floor_ring_qd1_count(o->cpu_a, o->cpu_b, buf, kind, count, &g_loop_stop);
		if (rc != 0)
			fprintf(stderr, "femu-floor: ring CPU %d <-> %d: %s\n", o->cpu_a, o->cpu_b,
				strerror(-rc));
		else
			printf("%s ring at QD1: %" PRIu64 " requests\n", names[kind], *count);
	}
	munmap(count, 4096);
	floor_buf_fini(buf);
	return rc != 0;
}

/* --copy-soak: per-second random 4 KiB copy rates on CPU A. */
static int copy_soak(const struct floor_opts *o, struct floor_buf *buf)
{
	double *r = calloc(o->soak_s, sizeof(*r));

	if (r == NULL)
		return 1;
	floor_pin(o->cpu_a);
	floor_copy4k_soak(buf, o->soak_s, r);
	floor_buf_fini(buf);
	printf(o->json ? "{\"cpu\": %d, \"size_mb\": %u, \"copy4k_per_s\": ["
		       : "random 4 KiB copies per second (CPU %d, %u MiB):",
	       o->cpu_a, o->size_mb);
	for (unsigned i = 0; i < o->soak_s; i++)
		printf(o->json ? "%s%.0f" : "%s%.0f", o->json && i ? ", " : " ", r[i]);
	printf(o->json ? "]}\n" : "\n");
	free(r);
	return 0;
}

/*
 * The QD1 ring figures of --layout, ns: split (bare, virtio layout), packed;
 * 0 or 1 after printing what failed.
 */
static int ring_qd1_both(const struct floor_opts *o, struct floor_buf *buf, double *bare,
			 double *virtio, double *packed)
{
	const char *what = "bare split";
	int rc = 0;

	if (o->layouts & LAYOUT_SPLIT)
		rc = floor_ring_qd1_ns(o->cpu_a, o->cpu_b, buf, 200000, bare);
	if (rc == 0 && (o->layouts & LAYOUT_SPLIT)) {
		what = "virtio-layout split";
		rc = floor_ring_qd1_virtio_ns(o->cpu_a, o->cpu_b, buf, 200000, virtio);
	}
	if (rc == 0 && (o->layouts & LAYOUT_PACKED)) {
		what = "packed";
		rc = floor_ring_qd1_packed_ns(o->cpu_a, o->cpu_b, buf, 200000, packed);
	}
	if (rc != 0) {
		fprintf(stderr, "femu-floor: %s ring at QD1, CPU %d <-> %d: %s\n", what, o->cpu_a,
			o->cpu_b, strerror(-rc));
		return 1;
	}
	return 0;
}

/* "layouts": [...] of the JSON output. */
static void json_layouts(const struct floor_opts *o)
{
	printf("\"layouts\": [%s%s%s]", (o->layouts & LAYOUT_SPLIT) ? "\"split\"" : "",
	       o->layouts == (LAYOUT_SPLIT | LAYOUT_PACKED) ? ", " : "",
	       (o->layouts & LAYOUT_PACKED) ? "\"packed\"" : "");
}

/* --ring-qd1: the QD1 ring figures only: split (bare and virtio's layout), packed. */
static int ring_qd1_only(const struct floor_opts *o, struct floor_buf *buf)
{
	double ns = 0, vns = 0, pns = 0;
	int rc = ring_qd1_both(o, buf, &ns, &vns, &pns);
	bool split = o->layouts & LAYOUT_SPLIT, packed = o->layouts & LAYOUT_PACKED;

	floor_buf_fini(buf);
	if (rc != 0)
		return 1;
	if (o->json) {
		printf("{\"cpus\": [%d, %d], \"size_mb\": %u, ", o->cpu_a, o->cpu_b, o->size_mb);
		json_layouts(o);
		if (split)
			printf(", \"ring_qd1_4k_ns\": %.1f, \"ring_qd1_4k_max_iops\": %.0f, "
			       "\"ring_qd1_virtio_4k_ns\": %.1f, \"ring_qd1_virtio_4k_max_iops\": "
			       "%.0f",
			       ns, 1e9 / ns, vns, 1e9 / vns);
		if (packed)
			printf(", \"packed_ring_qd1_4k_ns\": %.1f, "
			       "\"packed_ring_qd1_4k_max_iops\": %.0f",
			       pns, 1e9 / pns);
		printf("}\n");
		return 0;
	}
	if (split)
		printf("bare split-ring backend (CPU %d, initiator CPU %d, %u MiB), 4 KiB read "
		       "QD1: %.1f ns = at most %.0f IOPS; with virtio-blk's layout and EVENT_IDX: "
		       "%.1f ns = at most %.0f IOPS\n",
		       o->cpu_a, o->cpu_b, o->size_mb, ns, 1e9 / ns, vns, 1e9 / vns);
	if (packed)
		printf("bare packed-ring backend (CPU %d, initiator CPU %d, %u MiB), 4 KiB read "
		       "QD1 with virtio-blk's layout and descriptor events: %.1f ns = at most %.0f "
		       "IOPS\n",
		       o->cpu_a, o->cpu_b, o->size_mb, pns, 1e9 / pns);
	return 0;
}

/* Round trips of --rtt: 20000 take 1-15 ms on the machines seen (50-700 ns each). */
#define RTT_ONLY_ROUNDS 20000u

/* --rtt: the cache-line round trip between the two CPUs, one figure. */
static int rtt_only(const struct floor_opts *o)
{
	double rtt = 0;
	int rc = floor_rtt_ns(o->cpu_a, o->cpu_b, RTT_ONLY_ROUNDS, &rtt);

	if (rc != 0) {
		fprintf(stderr, "femu-floor: --rtt: the round trip CPU %d <-> %d failed: %s\n",
			o->cpu_a, o->cpu_b, strerror(-rc));
		return 1;
	}
	if (o->json)
		printf("{\"cpus\": [%d, %d], \"rtt_ns\": %.1f}\n", o->cpu_a, o->cpu_b, rtt);
	else
		printf("cache-line round trip CPU %d <-> %d: %.1f ns\n", o->cpu_a, o->cpu_b, rtt);
	return 0;
}

/* Queue depths of the high-QD split-ring floor (keys ring_qd<N>_4k_per_s). */
static const unsigned ring_qds[] = {32, 128};
#define NRING (sizeof(ring_qds) / sizeof(ring_qds[0]))

struct floor_figs {
	double rtt, dram, copy, copy_memcpy, copy_first, rate, qd1, ring, ring_virtio, ring_packed;
	struct floor_ring_res ringq[NRING];  /* split */
	struct floor_ring_res pringq[NRING]; /* packed */
	struct floor_copy_res copy_res;
	struct floor_loss la, lb;
};

/* Every figure; 0 or 1 after printing what failed. */
static int measure(const struct floor_opts *o, struct floor_buf *buf, struct floor_figs *f)
{
	int rc = floor_rtt_ns(o->cpu_a, o->cpu_b, 200000, &f->rtt);

	if (rc != 0) {
		fprintf(stderr, "femu-floor: round trip CPU %d <-> %d: %s\n", o->cpu_a, o->cpu_b,
			strerror(-rc));
		return 1;
	}
	if (ring_qd1_both(o, buf, &f->ring, &f->ring_virtio, &f->ring_packed) != 0)
		return 1;
	/* each depth's layouts next to each other: a machine that changes speed hits both */
	for (unsigned i = 0; i < NRING; i++)
		for (unsigned packed = 0; packed < 2; packed++) {
			if (!(o->layouts & (packed ? LAYOUT_PACKED : LAYOUT_SPLIT)))
				continue;
			rc = floor_ring_rate(o->cpu_a, o->cpu_b, buf, ring_qds[i], packed, 4096,
					     o->ring_ms, packed ? &f->pringq[i] : &f->ringq[i]);
			if (rc != 0) {
				fprintf(stderr, "femu-floor: %s ring QD%u CPU %d <-> %d: %s\n",
					packed ? "packed" : "split", ring_qds[i], o->cpu_a,
					o->cpu_b, strerror(-rc));
				return 1;
			}
		}
	floor_pin(o->cpu_a);
	f->copy_memcpy = floor_copy4k_ns(buf, 200000, false);
	f->copy_first = floor_copy4k_ns(buf, 200000, true);
	/* the floor: the faster way */
	f->copy = f->copy_first < f->copy_memcpy ? f->copy_first : f->copy_memcpy;
	f->rate = floor_copy4k_rate(buf, 1000000, &f->copy_res);
	f->dram = floor_dram_ns(buf, 500000); /* last: it writes pointers into the buffer */
	floor_cpu_loss(o->loss_ms, &f->la);
	floor_pin(o->cpu_b);
	floor_cpu_loss(o->loss_ms, &f->lb);
	f->qd1 = f->rtt + f->copy;
	return 0;
}

/* The high-QD ring keys of one layout (prefix "" split, "packed_" packed). */
static void json_ring_depths(const char *pre, const struct floor_ring_res *q)
{
	for (unsigned i = 0; i < NRING; i++)
		printf("\"%sring_qd%u_4k_per_s\": %.0f, \"%sring_qd%u_look\": %u, "
		       "\"%sring_qd%u_publish_every\": %u, \"%sring_qd%u_hint\": \"%s\", "
		       "\"%sring_qd%u_block_first\": %s, ",
		       pre, ring_qds[i], q[i].rate, pre, ring_qds[i], q[i].look, pre, ring_qds[i],
		       q[i].pub, pre, ring_qds[i], floor_pf_name(q[i].pf), pre, ring_qds[i],
		       q[i].pf_first ? "true" : "false");
}

static void print_json(const struct floor_opts *o, const struct floor_figs *f)
{
	printf("{\"cpus\": [%d, %d], \"size_mb\": %u, \"rtt_ns\": %.1f, \"dram_ns\": %.1f, "
	       "\"copy4k_ns\": %.1f, \"copy4k_memcpy_ns\": %.1f, \"copy4k_per_s\": %.0f, "
	       "\"copy4k_top_trial_per_s\": %.0f, \"copy4k_look\": %u, \"copy4k_hint\": \"%s\", "
	       "\"copy4k_block_first\": %s, "
	       "\"qd1_4k_floor_ns\": %.1f, "
	       "\"qd1_4k_max_iops\": %.0f, ",
	       o->cpu_a, o->cpu_b, o->size_mb, f->rtt, f->dram, f->copy, f->copy_memcpy, f->rate,
	       f->copy_res.top_trial, f->copy_res.look, floor_pf_name(f->copy_res.pf),
	       f->copy_res.pf_first ? "true" : "false", f->qd1, 1e9 / f->qd1);
	json_layouts(o);
	printf(", ");
	if (o->layouts & LAYOUT_SPLIT) {
		printf("\"ring_qd1_4k_ns\": %.1f, "
		       "\"ring_qd1_4k_max_iops\": %.0f, \"ring_qd1_virtio_4k_ns\": %.1f, "
		       "\"ring_qd1_virtio_4k_max_iops\": %.0f, ",
		       f->ring, 1e9 / f->ring, f->ring_virtio, 1e9 / f->ring_virtio);
		json_ring_depths("", f->ringq);
	}
	if (o->layouts & LAYOUT_PACKED) {
		printf("\"packed_ring_qd1_4k_ns\": %.1f, \"packed_ring_qd1_4k_max_iops\": %.0f, ",
		       f->ring_packed, 1e9 / f->ring_packed);
		json_ring_depths("packed_", f->pringq);
	}
	printf("\"ring_ms\": %u, \"cpu_lost_pct\": [%.2f, %.2f], "
	       "\"gaps_per_s\": [%.0f, %.0f], \"gaps10_per_s\": [%.0f, %.0f], "
	       "\"max_gap_us\": [%.1f, %.1f]}\n",
	       o->ring_ms, f->la.lost_pct, f->lb.lost_pct, f->la.gaps_per_s, f->lb.gaps_per_s,
	       f->la.gaps10_per_s, f->lb.gaps10_per_s, f->la.max_gap_us, f->lb.max_gap_us);
}

/* The high-QD ring lines of one layout. */
static void text_ring_depths(const char *name, const struct floor_ring_res *q, double copy_rate)
{
	for (unsigned i = 0; i < NRING; i++) {
		char pub[32] = "per batch";

		if (q[i].pub != 0)
			snprintf(pub, sizeof(pub), "every %u requests", q[i].pub);
		printf("  bare %s-ring backend, 4 KiB random read QD%u (look-ahead %u, %s,%s used "
		       "index %s): %.2f M/s = %.0f%% of the overlapped copy rate\n",
		       name, ring_qds[i], q[i].look, floor_pf_name(q[i].pf),
		       q[i].pf_first ? " block asked for first," : "", pub, q[i].rate / 1e6,
		       100.0 * q[i].rate / copy_rate);
	}
}

static void print_text(const struct floor_opts *o, const struct floor_figs *f)
{
	printf("machine floor (backend CPU %d, initiator CPU %d, %u MiB buffer):\n", o->cpu_a,
	       o->cpu_b, o->size_mb);
	printf("  cache-line round trip CPU %d <-> %d   %8.1f ns\n", o->cpu_a, o->cpu_b, f->rtt);
	printf("  random dependent load                %8.1f ns\n", f->dram);
	printf("  random 4 KiB copy, one at a time     %8.1f ns (memcpy alone %.1f ns; with the\n"
	       "                                       block's lines asked for first %.1f ns)\n",
	       f->copy, f->copy_memcpy, f->copy_first);
	printf("  random 4 KiB copies, overlapped      %8.2f M/s (one core; look-ahead %u, %s%s;\n"
	       "                                       fastest trial of the pick %.2f M/s)\n",
	       f->rate / 1e6, f->copy_res.look, floor_pf_name(f->copy_res.pf),
	       f->copy_res.pf_first ? ", block asked for first" : "", f->copy_res.top_trial / 1e6);
	printf("  => 4 KiB read QD1 floor (round trip + copy) %.1f ns = at most %.0f IOPS\n",
	       f->qd1, 1e9 / f->qd1);
	if (o->layouts & LAYOUT_SPLIT) {
		printf("  bare split-ring backend, 4 KiB read QD1 (rings, header, copy, status "
		       "only) %.1f ns = at most %.0f IOPS\n",
		       f->ring, 1e9 / f->ring);
		printf(
		    "  the same with virtio-blk's layout (3 descriptors, header and status in "
		    "two\n  lines, data into the initiator's buffer, EVENT_IDX fields) %.1f ns = "
		    "at most %.0f IOPS\n",
		    f->ring_virtio, 1e9 / f->ring_virtio);
		text_ring_depths("split", f->ringq, f->rate);
	}
	if (o->layouts & LAYOUT_PACKED) {
		printf("  bare packed-ring backend, 4 KiB read QD1 with virtio-blk's layout and "
		       "descriptor events %.1f ns = at most %.0f IOPS\n",
		       f->ring_packed, 1e9 / f->ring_packed);
		text_ring_depths("packed", f->pringq, f->rate);
	}
	printf("  CPU time lost (gaps > 1 us): CPU %d %.2f%% (%.0f/s, %.0f/s > 10 us, max %.0f "
	       "us), CPU %d %.2f%% (%.0f/s, %.0f/s > 10 us, max %.0f us)\n",
	       o->cpu_a, f->la.lost_pct, f->la.gaps_per_s, f->la.gaps10_per_s, f->la.max_gap_us,
	       o->cpu_b, f->lb.lost_pct, f->lb.gaps_per_s, f->lb.gaps10_per_s, f->lb.max_gap_us);
}

int main(int argc, char **argv)
{
	struct floor_opts o;
	struct floor_buf buf;
	struct floor_figs f;
	uint64_t *count = NULL;
	int rc;

	if (parse_opts(argc, argv, &o) != 0)
		return 2;
	if (loop_opt(&o) != NULL && (count = loop_count_map(&o)) == NULL)
		return 2;
	if ((rc = floor_pin(o.cpu_b)) != 0 || (rc = floor_pin(o.cpu_a)) != 0) {
		fprintf(stderr, "femu-floor: --cpus %d,%d: cannot run there: %s\n", o.cpu_a,
			o.cpu_b, strerror(-rc));
		return 2;
	}
	if (o.rtt)
		return rtt_only(&o);
	rc = floor_buf_init(&buf, (size_t)o.size_mb << 20);
	if (rc != 0) {
		if (count != NULL)
			munmap(count, 4096);
		fprintf(stderr, "femu-floor: --size-mb %u: cannot map the buffer: %s\n", o.size_mb,
			strerror(-rc));
		return 1;
	}
	if (o.soak_s > 0)
		return copy_soak(&o, &buf);
	if (o.ring_qd1)
		return ring_qd1_only(&o, &buf);
	if (count != NULL)
		return count_loop(&o, &buf, count);
	rc = measure(&o, &buf, &f);
	floor_buf_fini(&buf);
	if (rc != 0)
		return rc;
	if (o.json)
		print_json(&o, &f);
	else
		print_text(&o, &f);
	return 0;
}
