/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_cost.c - femud's per-request CPU cost on one core, without a second CPU,
 * a socket or DPDK's EAL: femud's own sweep (pmd_vq_sweep() over a NoSSD
 * model on a backend allocated as femud allocates it) serving a split ring
 * that this program fills, on the same CPU, between sweeps, in femu-bench's
 * layout (slot s: descriptor s for the header, nslots + 2s and nslots + 2s + 1
 * for the data and the status; header and status arrays; one data buffer per
 * slot).  Only the sweeps are timed.  Batches of sweeps alternate with batches
 * of the bare copy (random blocks copied into the same buffers with each of
 * femu-floor's two best hints; the faster counts), so that the ratio is taken
 * under the same conditions even on a busy machine; each figure is the median
 * of its batches (a batch the scheduler interrupted is an outlier).
 *
 * What it leaves out: the cache-line transfers between the initiator's and
 * the backend's CPUs (avail, used, header and status lines).  It measures
 * what the core does per request, the part batching and prefetching must
 * keep below the copy.  Units: ns per request.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>
#include <rte_cycles.h>
#include <rte_vhost.h>

#include "ftl/fm_model.h"
#if __has_include("ftl/fm_model_registry.h")
#include "ftl/fm_model_registry.h" /* fm_nossd_ops (older trees: in fm_model.h) */
#endif
#include "numa/mbe.h"
#include "pmd/blk_req.h"
#include "pmd/pmd_measure.h"
#include "pmd/vq.h"

#define QSIZE 1024u
#define GPA_BASE 0x100000ull
#define OFF_AVAIL 0x4000u
#define OFF_USED 0x5000u
#define OFF_HDR 0x8000u
#define OFF_STATUS 0xa000u
#define OFF_DATA 0x10000u
#define BATCHES_MAX 65536
#define LINE 64u

struct opts {
	uint32_t bs;
	unsigned qd;
	unsigned size_mb;
	double time_s;
	int cpu;
	bool no_huge;
	bool json;
	bool cold_ring;	 /* flush the lines the initiator wrote, as if they were on its CPU */
	bool per_second; /* print the medians of every second (a fresh backend over time) */
};

struct ring {
	uint8_t *mem; /* the one guest memory region */
	size_t len;
	struct rte_vhost_memory *map;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	struct virtio_blk_outhdr *hdr;
	uint8_t *status;
	uint8_t *data;
	uint16_t avail_idx, last_used;
	uint16_t free[QSIZE];
	unsigned nfree;
};

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* TSC ticks per ns, measured against CLOCK_MONOTONIC over 50 ms. */
static double tsc_per_ns(void)
{
	double t0 = now_s();
	uint64_t c0 = rte_rdtsc();

	while (now_s() - t0 < 0.05)
		;
	return (double)(rte_rdtsc() - c0) / ((now_s() - t0) * 1e9);
}

static uint64_t gpa(const struct ring *r, const void *p)
{
	return GPA_BASE + (uint64_t)((const uint8_t *)p - r->mem);
}

static int ring_init(struct ring *r, const struct opts *o)
{
	memset(r, 0, sizeof(*r));
	r->len = OFF_DATA + (size_t)o->qd * o->bs;
	r->mem = aligned_alloc(4096, (r->len + 4095) & ~(size_t)4095);
	r->map = calloc(1, sizeof(*r->map) + sizeof(struct rte_vhost_mem_region));
	if (r->mem == NULL || r->map == NULL)
		return -ENOMEM;
	memset(r->mem, 0, r->len);
	r->map->nregions = 1;
	r->map->regions[0].guest_phys_addr = GPA_BASE;
	r->map->regions[0].guest_user_addr = GPA_BASE;
	r->map->regions[0].host_user_addr = (uint64_t)(uintptr_t)r->mem;
	r->map->regions[0].size = r->len;
	r->desc = (struct vring_desc *)r->mem;
	r->avail = (struct vring_avail *)(r->mem + OFF_AVAIL);
	r->used = (struct vring_used *)(r->mem + OFF_USED);
	r->hdr = (struct virtio_blk_outhdr *)(r->mem + OFF_HDR);
	r->status = r->mem + OFF_STATUS;
	r->data = r->mem + OFF_DATA;
	for (unsigned s = 0; s < o->qd; s++) {
		unsigned d = o->qd + 2 * s;

		r->desc[s] = (struct vring_desc){gpa(r, &r->hdr[s]), sizeof(r->hdr[s]),
						 VRING_DESC_F_NEXT, (uint16_t)d};
		r->desc[d] =
		    (struct vring_desc){gpa(r, r->data + (size_t)s * o->bs), o->bs,
					VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, (uint16_t)(d + 1)};
		r->desc[d + 1] =
		    (struct vring_desc){gpa(r, &r->status[s]), 1, VRING_DESC_F_WRITE, 0};
		r->free[r->nfree++] = (uint16_t)s;
	}
	return 0;
}

/*
 * --cold-ring: write back and drop the lines the initiator wrote (headers,
 * status bytes, avail entries and index, used ring), so that the sweep
 * misses on them as it does when the initiator runs on another CPU.
 */
static void ring_flush(const struct ring *r, const struct opts *o)
{
	for (unsigned s = 0; s < o->qd; s += LINE / sizeof(r->hdr[0]))
		__builtin_ia32_clflush(&r->hdr[s]);
	for (unsigned s = 0; s < o->qd; s += LINE)
		__builtin_ia32_clflush(&r->status[s]);
	for (unsigned i = 0; i < 4 + 2 * QSIZE; i += LINE)
		__builtin_ia32_clflush((uint8_t *)r->avail + i);
	for (unsigned i = 0; i < 4 + 8 * QSIZE; i += LINE)
		__builtin_ia32_clflush((uint8_t *)r->used + i);
	__builtin_ia32_mfence();
}

/* The initiator's part: every free slot gets a random read; publish avail->idx. */
static void ring_submit(struct ring *r, const struct opts *o, uint64_t blocks, uint64_t *rng)
{
	while (r->nfree > 0) {
		uint16_t s = r->free[--r->nfree];

		r->hdr[s].type = VIRTIO_BLK_T_IN;
		r->hdr[s].sector = rng_next(rng) % blocks * (o->bs / 512);
		r->status[s] = 0xff;
		r->avail->ring[r->avail_idx & (QSIZE - 1)] = s;
		r->avail_idx++;
	}
	__atomic_store_n(&r->avail->idx, r->avail_idx, __ATOMIC_RELEASE);
	if (o->cold_ring)
		ring_flush(r, o);
}

/* The initiator's part: take back completed slots; false on a bad completion. */
static bool ring_reap(struct ring *r)
{
	uint16_t end = __atomic_load_n(&r->used->idx, __ATOMIC_ACQUIRE);

	for (; r->last_used != end; r->last_used++) {
		uint32_t id = r->used->ring[r->last_used & (QSIZE - 1)].id;

		if (r->status[id] != VIRTIO_BLK_S_OK)
			return false;
		r->free[r->nfree++] = (uint16_t)id;
	}
	return true;
}

/* One batch of femud sweeps: TSC ticks per request, or < 0 on an error. */
static double batch_vq(struct ring *r, const struct opts *o, struct pmd_vq *q,
		       struct pmd_chain *scratch, uint64_t blocks, uint64_t *rng, unsigned nreq)
{
	uint64_t ticks = 0;
	unsigned done = 0;

	while (done < nreq) {
		uint64_t t0;

		ring_submit(r, o, blocks, rng);
		t0 = rte_rdtsc();
		done += pmd_vq_sweep(q, 0, scratch);
		ticks += rte_rdtsc() - t0;
		if (!ring_reap(r))
			return -1;
	}
	return (double)ticks / done;
}

/* How the bare copy prefetches a block ahead of its copy (femu-floor's best two, and femud's). */
enum copy_pf {
	COPY_PF_L1_512,	     /* the first 512 B to the first level, one block ahead */
	COPY_PF_L2_4K,	     /* up to 4 KiB to the second level, two blocks ahead */
	COPY_PF_L2_4K_FIRST, /* the same, and each copy asks for its own block first */
	/* the first 2 KiB to L2 PMD_VQ_LOOKAHEAD ahead, the rest PMD_VQ_HINT_REST_AHEAD ahead,
	 * and first (femud before FM_REQ_PREFETCHED) */
	COPY_PF_L2_SPLIT_FIRST,
	/* the same without the copy's own hint (femud: pmd/vq.h, FM_REQ_PREFETCHED) */
	COPY_PF_L2_SPLIT,
	COPY_PF_COUNT
};
static const char *const copy_pf_names[COPY_PF_COUNT] = {
    "512 B to L1 one ahead", "4 KiB to L2 two ahead", "4 KiB to L2 two ahead and first",
    "4 KiB to L2 in halves (as femud's look-ahead), and first",
    "4 KiB to L2 in halves (as femud's look-ahead)"};
#define COPY_LOOK_MAX (PMD_VQ_LOOKAHEAD > 4 ? PMD_VQ_LOOKAHEAD : 4u)
#define COPY_SPLIT 2048u

/* prefetcht1 of bytes [from, 4 KiB) (at most bs) of the block at p. */
static inline void prefetch_l2_from(const uint8_t *p, uint32_t from, uint32_t bs)
{
	for (unsigned l = from; l < 4096 && l < bs; l += LINE)
		__builtin_prefetch(p + l, 0, 2);
}

/* prefetcht1 of the first 4 KiB (at most bs bytes) of the block at p. */
static inline void prefetch_l2_4k(const uint8_t *p, uint32_t bs)
{
	prefetch_l2_from(p, 0, bs);
}

/* One batch of bare copies of random blocks, prefetched as pf says: ticks per copy. */
static double batch_copy(const uint8_t *backend, const struct ring *r, const struct opts *o,
			 uint64_t blocks, uint64_t *rng, unsigned n, enum copy_pf pf)
{
	const bool split = pf == COPY_PF_L2_SPLIT_FIRST || pf == COPY_PF_L2_SPLIT;
	const unsigned look = pf == COPY_PF_L1_512 ? 1 : split ? PMD_VQ_LOOKAHEAD : 2;
	uint64_t ahead[COPY_LOOK_MAX], t0;

	for (unsigned k = 0; k < look; k++)
		ahead[k] = rng_next(rng) % blocks;
	t0 = rte_rdtsc();
	for (unsigned i = 0; i < n; i++) {
		uint64_t cur = ahead[i % look], next = rng_next(rng) % blocks;
		const uint8_t *p = backend + next * o->bs;

		ahead[i % look] = next; /* copied look iterations from now */
		if (pf == COPY_PF_L1_512) {
			for (unsigned l = 0; l < 512 && l < o->bs; l += LINE)
				__builtin_prefetch(p + l, 0, 3);
		} else if (split) {
			prefetch_l2_4k(p, o->bs < COPY_SPLIT ? o->bs : COPY_SPLIT);
			prefetch_l2_from(backend +
					     ahead[(i + PMD_VQ_HINT_REST_AHEAD) % look] * o->bs,
					 COPY_SPLIT, o->bs);
		} else {
			prefetch_l2_4k(p, o->bs);
		}
		if (pf == COPY_PF_L2_4K_FIRST || pf == COPY_PF_L2_SPLIT_FIRST)
			prefetch_l2_4k(backend + cur * o->bs, o->bs);
		memcpy(r->data + (size_t)(i % o->qd) * o->bs, backend + cur * o->bs, o->bs);
	}
	return (double)(rte_rdtsc() - t0) / n;
}

static double median(double *v, unsigned n);

/*
 * The cost breakdown (pmd_measure.h, cost breakdown builds only): a batch's
 * queue counters per COST_SCALE requests, and their median over batches,
 * field by field (every counter is a uint64_t; only the cost_* ones are
 * printed).
 */
#define COST_SCALE 1000u
#define STATS_FIELDS (sizeof(struct pmd_vq_stats) / sizeof(uint64_t))
_Static_assert(sizeof(struct pmd_vq_stats) % sizeof(uint64_t) == 0, "counters are uint64_t");

static void cost_delta(struct pmd_vq_stats *d, const struct pmd_vq_stats *a,
		       const struct pmd_vq_stats *b, uint64_t requests)
{
	const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
	uint64_t *pd = (uint64_t *)d;

	for (size_t i = 0; i < STATS_FIELDS; i++)
		pd[i] = requests ? (pb[i] - pa[i]) * COST_SCALE / requests : 0;
}

/* Field by field median of n batches' breakdowns (a preempted batch is an outlier). */
static void cost_median(struct pmd_vq_stats *m, const struct pmd_vq_stats *b, unsigned n)
{
	static double v[BATCHES_MAX];
	uint64_t *pm = (uint64_t *)m;

	for (size_t f = 0; f < STATS_FIELDS; f++) {
		for (unsigned i = 0; i < n; i++)
			v[i] = (double)((const uint64_t *)&b[i])[f];
		pm[f] = (uint64_t)median(v, n);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* --per-second: medians of the batches that ended in each whole second. */
static void print_seconds(const double *vq, const double *cp, const double *t, unsigned n)
{
	static double a[BATCHES_MAX], b[BATCHES_MAX];

	for (unsigned i = 0, sec = 0; i < n; sec++) {
		unsigned k = 0;

		for (; i < n && t[i] < sec + 1; i++, k++) {
			a[k] = vq[i];
			b[k] = cp[i];
		}
		if (k == 0)
			continue;
		{
			double mv = median(a, k), mc = median(b, k);

			printf("second %u: %u batches, femud %.1f ns, copy %.1f ns, %.1f%%\n", sec,
			       k, mv, mc, 100 * mc / mv);
		}
	}
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: vq-cost [--bs SIZE] [--qd N] [--size-mb N] [--time SEC] [--cpu N] "
	    "[--no-huge] [--cold-ring] [--per-second] [--json]\n"
	    "femud's sweep (NoSSD, random reads) and the bare copy on one CPU, alternating\n"
	    "batches: ns per request of each, medians.\n"
	    "  --bs SIZE      request size in bytes, multiple of 512 up to 131072 (4096)\n"
	    "  --qd N         requests in flight, 1..%u (32)\n"
	    "  --size-mb N    backend size (1024)\n"
	    "  --time SEC     measuring time (3)\n"
	    "  --cpu N        CPU to run on (0)\n"
	    "  --no-huge      normal pages (transparent huge pages when the kernel gives them)\n"
	    "  --json         one JSON object\n",
	    QSIZE / 3);
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {{"bs", required_argument, NULL, 'b'},
					   {"qd", required_argument, NULL, 'q'},
					   {"size-mb", required_argument, NULL, 's'},
					   {"time", required_argument, NULL, 't'},
					   {"cpu", required_argument, NULL, 'c'},
					   {"no-huge", no_argument, NULL, 'n'},
					   {"json", no_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {"cold-ring", no_argument, NULL, 'r'},
					   {"per-second", no_argument, NULL, 'p'},
					   {NULL, 0, NULL, 0}};
	char *end;
	int c;

	*o = (struct opts){.bs = 4096, .qd = 32, .size_mb = 1024, .time_s = 3, .cpu = 0};
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		errno = 0;
		switch (c) {
		case 'b':
			o->bs = (uint32_t)strtoul(optarg, &end, 10);
			if (errno || *end || o->bs == 0 || o->bs % 512 || o->bs > 131072) {
				fprintf(stderr,
					"vq-cost: --bs %s: a multiple of 512 up to 131072\n",
					optarg);
				return -1;
			}
			break;
		case 'q':
			o->qd = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || o->qd == 0 || o->qd > QSIZE / 3) {
				fprintf(stderr, "vq-cost: --qd %s: 1..%u\n", optarg, QSIZE / 3);
				return -1;
			}
			break;
		case 's':
			o->size_mb = (unsigned)strtoul(optarg, &end, 10);
			if (errno || *end || o->size_mb == 0 || o->size_mb > (1u << 20)) {
				fprintf(stderr, "vq-cost: --size-mb %s: MiB >= 1\n", optarg);
				return -1;
			}
			break;
		case 't':
			o->time_s = strtod(optarg, &end);
			if (errno || *end || !(o->time_s > 0) || o->time_s > 3600) {
				fprintf(stderr, "vq-cost: --time %s: seconds, 0 < SEC <= 3600\n",
					optarg);
				return -1;
			}
			break;
		case 'c':
			o->cpu = (int)strtol(optarg, &end, 10);
			if (errno || *end || o->cpu < 0 || o->cpu >= CPU_SETSIZE) {
				fprintf(stderr, "vq-cost: --cpu %s: a CPU number\n", optarg);
				return -1;
			}
			break;
		case 'n':
			o->no_huge = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'r':
			o->cold_ring = true;
			break;
		case 'p':
			o->per_second = true;
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
		fprintf(stderr, "vq-cost: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static struct pmd_vq *make_queue(struct ring *r, const struct pmd_blk_target *t)
{
	struct pmd_vq_setup s = {.desc = r->desc,
				 .avail = r->avail,
				 .used = r->used,
				 .size = QSIZE,
				 .callfd = -1,
				 .kickfd = -1,
				 .event_idx = true,
				 .mem = r->map,
				 .target = t};

	return pmd_vq_create(&s);
}

int main(int argc, char **argv)
{
	static double vq_b[BATCHES_MAX], cp_b[BATCHES_MAX], t_b[BATCHES_MAX];
	static double cpv[COPY_PF_COUNT][BATCHES_MAX]; /* per hint scheme */
	enum copy_pf best_pf = COPY_PF_L1_512;
	static struct pmd_vq_stats cost_b[BATCHES_MAX]; /* untouched unless PMD_COST_ON */
	struct pmd_vq_stats cost_med = {0};
	static struct pmd_chain scratch;
	struct fm_model_config cfg = {0};
	struct pmd_blk_target t = {.blk_size = 512, .ops = &fm_nossd_ops};
	struct mbe_region be;
	struct pmd_vq *q;
	struct ring r;
	struct opts o;
	char err[256];
	uint64_t rng = 0x9e3779b97f4a7c15ull, blocks;
	unsigned nb = 0, per;
	double tpn, t_start, t_end, v, cp = 0;

	if (parse(argc, argv, &o) != 0)
		return 2;
	if (pin(o.cpu) != 0) {
		fprintf(stderr, "vq-cost: --cpu %d: cannot run there\n", o.cpu);
		return 2;
	}
	if (mbe_alloc((size_t)o.size_mb << 20, -1, o.no_huge ? MBE_F_NO_HUGE : 0, &be, err,
		      sizeof(err)) != 0) {
		fprintf(stderr, "vq-cost: backend: %s\n", err);
		return 1;
	}
	cfg.capacity_bytes = (uint64_t)o.size_mb << 20;
	cfg.capacity_set = true;
	cfg.blk_size = 512;
	cfg.mbe_node = -1;
	if (fm_nossd_ops.configure(&cfg, err, sizeof(err)) != 0 ||
	    fm_nossd_ops.create(&cfg, be.addr, &t.model, err, sizeof(err)) != 0) {
		fprintf(stderr, "vq-cost: model: %s\n", err);
		return 1;
	}
	t.capacity = cfg.capacity_bytes;
	if (ring_init(&r, &o) != 0 || (q = make_queue(&r, &t)) == NULL) {
		fprintf(stderr, "vq-cost: out of memory\n");
		return 1;
	}
	blocks = t.capacity / o.bs;
	tpn = tsc_per_ns();
	per = o.bs <= 4096 ? 2000 : 200;
	/* warm-up: one batch of each, not counted */
	batch_vq(&r, &o, q, &scratch, blocks, &rng, per);
	for (int pf = 0; pf < COPY_PF_COUNT; pf++)
		batch_copy(be.addr, &r, &o, blocks, &rng, per, (enum copy_pf)pf);
	t_start = now_s();
	t_end = t_start + o.time_s;
	while (nb < BATCHES_MAX && (nb < 3 || now_s() < t_end)) {
		const struct pmd_vq_stats st0 = q->st;

		vq_b[nb] = batch_vq(&r, &o, q, &scratch, blocks, &rng, per) / tpn;
		if (PMD_COST_ON)
			cost_delta(&cost_b[nb], &st0, &q->st, q->st.requests - st0.requests);
		for (int pf = 0; pf < COPY_PF_COUNT; pf++)
			cpv[pf][nb] =
			    batch_copy(be.addr, &r, &o, blocks, &rng, per, (enum copy_pf)pf) / tpn;
		cp_b[nb] = cpv[0][nb];
		for (int pf = 1; pf < COPY_PF_COUNT; pf++)
			cp_b[nb] = RTE_MIN(cp_b[nb], cpv[pf][nb]);
		t_b[nb] = now_s() - t_start;
		if (vq_b[nb] < 0) {
			fprintf(stderr, "vq-cost: a request failed\n");
			return 1;
		}
		nb++;
	}
	if (o.per_second)
		print_seconds(vq_b, cp_b, t_b, nb);
	v = median(vq_b, nb);
	for (int pf = 0; pf < COPY_PF_COUNT; pf++) {
		double m = median(cpv[pf], nb);

		if (pf == 0 || m < cp) {
			cp = m;
			best_pf = (enum copy_pf)pf;
		}
	}
	if (PMD_COST_ON)
		cost_median(&cost_med, cost_b, nb);
	if (o.json) {
		printf("{\"bs\": %u, \"qd\": %u, \"size_mb\": %u, \"page_size\": %zu, "
		       "\"thp_bytes\": %zu, \"batches\": %u, \"vq_ns\": %.1f, \"copy_ns\": %.1f, "
		       "\"vq_per_s\": %.0f, \"copy_per_s\": %.0f, \"vq_share_of_copy\": %.4f, "
		       "\"copy_prefetch\": \"%s\"",
		       o.bs, o.qd, o.size_mb, be.page_size, be.thp_bytes, nb, v, cp, 1e9 / v,
		       1e9 / cp, cp / v, copy_pf_names[best_pf]);
		PMD_COST_JSON(stdout, &cost_med, COST_SCALE, tpn);
		printf("}\n");
	} else {
		printf("bs %u qd %u, %u MiB backend (%zu-byte pages, %zu MiB THP), %u batches: "
		       "femud sweep %.1f ns/request (%.2fM/s), bare copy %.1f ns (%.2fM/s, %s): "
		       "femud at %.1f%% of the copy rate\n",
		       o.bs, o.qd, o.size_mb, be.page_size, be.thp_bytes >> 20, nb, v, 1e3 / v, cp,
		       1e3 / cp, copy_pf_names[best_pf], 100 * cp / v);
		PMD_COST_PRINT(stdout, 0, &cost_med, COST_SCALE, (uint64_t)(tpn * 1e9));
	}
	pmd_vq_free(q);
	fm_nossd_ops.destroy(t.model);
	mbe_free(&be);
	return 0;
}
