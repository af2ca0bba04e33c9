/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tools/femu-place/main.c - femu-place command line.
 *
 * Reads a topology (this host, or --topology XML/synthetic), plans where the
 * guest and femud go (plan.c) and prints the plan as text, JSON (--json) or
 * shell commands (--apply). Exit status: 0 plan printed, 1 no plan fits this
 * machine (the message says what is missing), 2 bad options or topology.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftl/num_parse.h"
#include "numa/place.h"
#include "tools/femu-place/emit.h"
#include "tools/femu-place/plan.h"

#define MIB ((uint64_t)1 << 20)

enum out_mode { OUT_TEXT, OUT_JSON, OUT_APPLY };

struct opts {
	const char *topology;
	enum out_mode mode;
	struct place_request rq;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: femu-place [options]\n"
		"Plans strict socket isolation for a QEMU guest served by femud: guest vCPUs\n"
		"and RAM on one package, femud's pollers and backend memory on another.\n\n"
		"  --topology SPEC     hwloc XML file or synthetic description (default: this "
		"host)\n"
		"  --vcpus N           guest vCPUs (default 4), one physical core each\n"
		"  --mem SIZE          guest RAM (default 4G)\n"
		"  --pollers M         femud poller lcores (default 2), one physical core each\n"
		"  --devsz SIZE        size of each device (default 1G, multiple of 1M)\n"
		"  --devices N         vhost-user-blk devices (default 1)\n"
		"  --eal-mem SIZE      femud's DPDK heap allowance in hugepages (default 64M)\n"
		"  --hugepage-size S   2M, 1G or auto (default auto: 1G if reserved, else 2M)\n"
		"  --no-hugepages      plan with normal pages\n"
		"  --guest-node N      force the guest's node\n"
		"  --femud-node N      force femud's (backend) node\n"
		"  --sock-prefix P     socket paths are P<i>.sock (default /tmp/femud-)\n"
		"  --femud PATH        femud binary in the printed commands (default femud)\n"
		"  --qemu PATH         QEMU binary (default qemu-system-x86_64)\n"
		"  --json              print the plan as JSON\n"
		"  --apply             print the shell commands that reserve hugepages and start\n"
		"                      femud pinned\n"
		"  -h, --help          this text\n"
		"Sizes take k/M/G/T suffixes (binary). CPU numbers are OS indexes (taskset).\n"
		"Exit status: 0 plan printed, 1 the machine is too small, 2 bad options.\n");
}

static int parse_uint(const char *opt, const char *s, unsigned *out)
{
	uint64_t v;

	if (num_parse(s, 0, 0, UINT_MAX / 2, &v) != 0) {
		fprintf(stderr, "femu-place: %s: '%s' is not a number\n", opt, s);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static int parse_sz(const char *opt, const char *s, uint64_t *out)
{
	if (num_size(s, out) != 0) {
		fprintf(stderr, "femu-place: %s: '%s' is not a size (e.g. 512M, 4G)\n", opt, s);
		return -1;
	}
	return 0;
}

static int parse_node(const char *opt, const char *s, int *out)
{
	unsigned v;

	if (parse_uint(opt, s, &v) != 0)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_huge(const char *s, struct place_request *rq)
{
	if (strcmp(s, "auto") == 0) {
		rq->huge_size = 0;
		return 0;
	}
	if (num_size(s, &rq->huge_size) != 0 ||
	    (rq->huge_size != 2 * MIB && rq->huge_size != 1024 * MIB)) {
		fprintf(stderr, "femu-place: --hugepage-size: '%s' is not 2M, 1G or auto\n", s);
		return -1;
	}
	return 0;
}

static void set_defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->rq.vcpus = 4;
	o->rq.mem = 4096 * MIB;
	o->rq.pollers = 2;
	o->rq.devsz = 1024 * MIB;
	o->rq.devices = 1;
	o->rq.eal_mem = 64 * MIB;
	o->rq.guest_node = -1;
	o->rq.femud_node = -1;
	o->rq.sock_prefix = "/tmp/femud-";
	o->rq.femud_path = "femud";
	o->rq.qemu_path = "qemu-system-x86_64";
}

/* Returns 0 to go on, 1 after --help, -1 on a bad option. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
	    {"topology", required_argument, NULL, 't'},
	    {"vcpus", required_argument, NULL, 'c'},
	    {"mem", required_argument, NULL, 'm'},
	    {"pollers", required_argument, NULL, 'p'},
	    {"devsz", required_argument, NULL, 's'},
	    {"devices", required_argument, NULL, 'd'},
	    {"eal-mem", required_argument, NULL, 'e'},
	    {"hugepage-size", required_argument, NULL, 'H'},
	    {"no-hugepages", no_argument, NULL, 'N'},
	    {"guest-node", required_argument, NULL, 'g'},
	    {"femud-node", required_argument, NULL, 'f'},
	    {"sock-prefix", required_argument, NULL, 'P'},
	    {"femud", required_argument, NULL, 'F'},
	    {"qemu", required_argument, NULL, 'Q'},
	    {"json", no_argument, NULL, 'j'},
	    {"apply", no_argument, NULL, 'a'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct place_request *rq = &o->rq;
	int c, r = 0;

	while (r == 0 && (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			o->topology = optarg;
			break;
		case 'c':
			r = parse_uint("--vcpus", optarg, &rq->vcpus);
			break;
		case 'm':
			r = parse_sz("--mem", optarg, &rq->mem);
			break;
		case 'p':
			r = parse_uint("--pollers", optarg, &rq->pollers);
			break;
		case 's':
			r = parse_sz("--devsz", optarg, &rq->devsz);
			break;
		case 'd':
			r = parse_uint("--devices", optarg, &rq->devices);
			break;
		case 'e':
			r = parse_sz("--eal-mem", optarg, &rq->eal_mem);
			break;
		case 'H':
			r = parse_huge(optarg, rq);
			break;
		case 'N':
			rq->no_huge = true;
			break;
		case 'g':
			r = parse_node("--guest-node", optarg, &rq->guest_node);
			break;
		case 'f':
			r = parse_node("--femud-node", optarg, &rq->femud_node);
			break;
		case 'P':
			rq->sock_prefix = optarg;
			break;
		case 'F':
			rq->femud_path = optarg;
			break;
		case 'Q':
			rq->qemu_path = optarg;
			break;
		case 'j':
			o->mode = OUT_JSON;
			break;
		case 'a':
			o->mode = OUT_APPLY;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (r == 0 && optind < argc) {
		fprintf(stderr, "femu-place: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	/* QEMU's -m and femud's devsz_mb work in MiB */
	rq->mem = (rq->mem + MIB - 1) / MIB * MIB;
	return r;
}

int main(int argc, char **argv)
{
	struct place_topo *t = NULL;
	struct place_plan plan;
	struct opts o;
	char err[1024] = "";
	int r;

	set_defaults(&o);
	r = parse_args(argc, argv, &o);
	if (r != 0)
		return r > 0 ? 0 : 2;
	if (place_topology_load(&t, o.topology, err, sizeof(err)) != 0) {
		fprintf(stderr, "femu-place: topology: %s\n", err);
		return 2;
	}
	if (place_plan_build(t, &o.rq, &plan, err, sizeof(err)) != 0) {
		fprintf(stderr, "femu-place: %s\n", err);
		place_topology_free(t);
		return 1;
	}
	if (o.mode == OUT_JSON)
		place_emit_json(stdout, t, &o.rq, &plan);
	else if (o.mode == OUT_APPLY)
		place_emit_apply(stdout, &o.rq, &plan);
	else
		place_emit_text(stdout, t, &o.rq, &plan);
	place_plan_free(&plan);
	place_topology_free(t);
	return 0;
}
