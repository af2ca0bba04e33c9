/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - femu-floor: print what this machine allows a vhost-user-blk
 * backend on CPU A serving an initiator on CPU B (see floor.h), as text or
 * one JSON object.  tools/bench and tools/bench-model print it next to
 * their figures.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floor.h"
#include "ftl/num_parse.h"

struct floor_opts {
	int cpu_a, cpu_b;
	unsigned size_mb;
	unsigned loss_ms;
	unsigned soak_s; /* --copy-soak: only the per-second copy rate */
	int json;
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: femu-floor [--cpus A,B] [--size-mb N] [--loss-ms MS] [--copy-soak SEC] "
		   "[--json]\n"
		   "Measures the floor under any vhost-user-blk backend on CPU A serving an\n"
		   "initiator on CPU B: cache-line round trip A<->B, DRAM latency and random\n"
		   "4 KiB copies (one at a time and overlapped) out of an N MiB buffer on A,\n"
		   "and the CPU time each CPU loses (busy-loop gaps > 1 us).\n"
		   "  --cpus A,B     backend CPU and initiator CPU (default 0,1)\n"
		   "  --size-mb N    buffer size, as the backend's (default 1024, min 1)\n"
		   "  --loss-ms MS   busy-loop time per CPU (default 1000)\n"
		   "  --copy-soak SEC  only this: random 4 KiB copies on CPU A out of a fresh\n"
		   "                 buffer for SEC seconds, the rate of each second\n"
		   "  --json         one JSON object\n");
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
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	unsigned long v, a, b;
	int c;

	*o = (struct floor_opts){.cpu_a = 0, .cpu_b = 1, .size_mb = 1024, .loss_ms = 1000};
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
		case 'j':
			o->json = 1;
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
	return 0;
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

int main(int argc, char **argv)
{
	struct floor_opts o;
	struct floor_buf buf;
	struct floor_loss la, lb;
	double rtt, dram, copy, rate, qd1, ring;
	int rc;

	if (parse_opts(argc, argv, &o) != 0)
		return 2;
	if ((rc = floor_pin(o.cpu_b)) != 0 || (rc = floor_pin(o.cpu_a)) != 0) {
		fprintf(stderr, "femu-floor: --cpus %d,%d: cannot run there: %s\n", o.cpu_a,
			o.cpu_b, strerror(-rc));
		return 2;
	}
	rc = floor_buf_init(&buf, (size_t)o.size_mb << 20);
	if (rc != 0) {
		fprintf(stderr, "femu-floor: --size-mb %u: cannot map the buffer: %s\n", o.size_mb,
			strerror(-rc));
		return 1;
	}
	if (o.soak_s > 0)
		return copy_soak(&o, &buf);
	rc = floor_rtt_ns(o.cpu_a, o.cpu_b, 200000, &rtt);
	if (rc != 0) {
		fprintf(stderr, "femu-floor: round trip CPU %d <-> %d: %s\n", o.cpu_a, o.cpu_b,
			strerror(-rc));
		floor_buf_fini(&buf);
		return 1;
	}
	rc = floor_ring_qd1_ns(o.cpu_a, o.cpu_b, &buf, 200000, &ring);
	if (rc != 0) {
		fprintf(stderr, "femu-floor: ring CPU %d <-> %d: %s\n", o.cpu_a, o.cpu_b,
			strerror(-rc));
		floor_buf_fini(&buf);
		return 1;
	}
	floor_pin(o.cpu_a);
	copy = floor_copy4k_ns(&buf, 200000);
	rate = floor_copy4k_rate(&buf, 500000);
	dram = floor_dram_ns(&buf, 500000); /* last: it writes pointers into the buffer */
	floor_cpu_loss(o.loss_ms, &la);
	floor_pin(o.cpu_b);
	floor_cpu_loss(o.loss_ms, &lb);
	floor_buf_fini(&buf);
	qd1 = rtt + copy;
	if (o.json) {
		printf("{\"cpus\": [%d, %d], \"size_mb\": %u, \"rtt_ns\": %.1f, \"dram_ns\": %.1f, "
		       "\"copy4k_ns\": %.1f, \"copy4k_per_s\": %.0f, \"qd1_4k_floor_ns\": %.1f, "
		       "\"qd1_4k_max_iops\": %.0f, \"ring_qd1_4k_ns\": %.1f, "
		       "\"ring_qd1_4k_max_iops\": %.0f, "
		       "\"cpu_lost_pct\": [%.2f, %.2f], "
		       "\"gaps_per_s\": [%.0f, %.0f], \"gaps10_per_s\": [%.0f, %.0f], "
		       "\"max_gap_us\": [%.1f, %.1f]}\n",
		       o.cpu_a, o.cpu_b, o.size_mb, rtt, dram, copy, rate, qd1, 1e9 / qd1, ring,
		       1e9 / ring, la.lost_pct, lb.lost_pct, la.gaps_per_s, lb.gaps_per_s,
		       la.gaps10_per_s, lb.gaps10_per_s, la.max_gap_us, lb.max_gap_us);
		return 0;
	}
	printf("machine floor (backend CPU %d, initiator CPU %d, %u MiB buffer):\n", o.cpu_a,
	       o.cpu_b, o.size_mb);
	printf("  cache-line round trip CPU %d <-> %d   %8.1f ns\n", o.cpu_a, o.cpu_b, rtt);
	printf("  random dependent load                %8.1f ns\n", dram);
	printf("  random 4 KiB copy, one at a time     %8.1f ns\n", copy);
	printf("  random 4 KiB copies, overlapped      %8.2f M/s (one core)\n", rate / 1e6);
	printf("  => 4 KiB read QD1 floor (round trip + copy) %.1f ns = at most %.0f IOPS\n", qd1,
	       1e9 / qd1);
	printf("  bare split-ring backend, 4 KiB read QD1 (rings, header, copy, status only) "
	       "%.1f ns = at most %.0f IOPS\n",
	       ring, 1e9 / ring);
	printf(
	    "  CPU time lost (gaps > 1 us): CPU %d %.2f%% (%.0f/s, %.0f/s > 10 us, max %.0f us), "
	    "CPU %d %.2f%% (%.0f/s, %.0f/s > 10 us, max %.0f us)\n",
	    o.cpu_a, la.lost_pct, la.gaps_per_s, la.gaps10_per_s, la.max_gap_us, o.cpu_b,
	    lb.lost_pct, lb.gaps_per_s, lb.gaps10_per_s, lb.max_gap_us);
	return 0;
}
