/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tools/femu-place/plan.c - the placement planner.
 *
 * Candidates are (guest node set, femud node) pairs, tried in phases:
 * SOCKET (different packages), NODE (different nodes of one package),
 * SPLIT (one node). The first phase with a candidate that fits wins; among
 * those, the best score (hugepages already reserved, guest on one node,
 * femud away from CPU 0's package/node, main lcore on its own core).
 */
#include "tools/femu-place/plan.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB ((uint64_t)1 << 30)
#define MIB ((uint64_t)1 << 20)
#define PAGE_2M (2 * MIB)

/* One candidate pair and the result of trying it. */
struct cand {
	enum place_isolation iso;
	unsigned n_g;
	int g[PLACE_PLAN_MAX_NODES];
	int f;
};

static void msg(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void msg(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static void note(struct place_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct place_plan *p, const char *fmt, ...)
{
	size_t used = strlen(p->notes);
	va_list ap;

	if (used + 2 >= sizeof(p->notes))
		return;
	va_start(ap, fmt);
	vsnprintf(p->notes + used, sizeof(p->notes) - used - 1, fmt, ap);
	va_end(ap);
	strcat(p->notes, "\n");
}

static double gib(uint64_t bytes)
{
	return (double)bytes / (double)GIB;
}

static uint64_t div_up(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

static bool in_set(const int *set, unsigned n, int v)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (set[i] == v)
			return true;
	return false;
}

static bool core_has_cpu0(const struct place_core *c)
{
	return c->pus[0] == 0;
}

/* ------------------------------------------------------------ core pools */

/*
 * Ordered pool of free core indexes on the given nodes: ascending (or
 * descending) by first CPU, the core of CPU 0 last. Returns the count.
 */
static unsigned core_pool(const struct place_topo *t, const int *nodes, unsigned n_nodes,
			  const bool *used, bool descending, unsigned *out)
{
	unsigned i, n = 0;
	int cpu0 = -1;

	for (i = 0; i < t->n_cores; i++) {
		unsigned k = descending ? t->n_cores - 1 - i : i;

		if (used[k] || !in_set(nodes, n_nodes, t->cores[k].node))
			continue;
		if (core_has_cpu0(&t->cores[k]))
			cpu0 = (int)k;
		else
			out[n++] = k;
	}
	if (cpu0 >= 0)
		out[n++] = (unsigned)cpu0;
	return n;
}

/* Nodes femud may take cores from: f first, then f's package outside G. */
static unsigned femud_nodes(const struct place_topo *t, const struct cand *c, int *out)
{
	unsigned i, n = 0;
	const struct place_node *fn = place_node_find(t, c->f);

	out[n++] = c->f;
	if (c->iso == PLACE_ISO_SPLIT)
		return n;
	for (i = 0; i < t->n_nodes && n < PLACE_PLAN_MAX_NODES; i++) {
		const struct place_node *nd = &t->nodes[i];

		if (nd->os != c->f && nd->pkg == fn->pkg && !in_set(c->g, c->n_g, nd->os))
			out[n++] = nd->os;
	}
	return n;
}

/* Take up to want cores from the femud pool (f's cores before the rest). */
static unsigned take_femud_cores(const struct place_topo *t, const struct cand *c, bool *used,
				 unsigned want, unsigned *out)
{
	int nodes[PLACE_PLAN_MAX_NODES];
	unsigned n_nodes = femud_nodes(t, c, nodes), got = 0, i, k, n;
	unsigned *pool = malloc(t->n_cores * sizeof(*pool));

	if (pool == NULL)
		return 0;
	for (i = 0; i < n_nodes && got < want; i++) {
		n = core_pool(t, &nodes[i], 1, used, c->iso == PLACE_ISO_SPLIT, pool);
		for (k = 0; k < n && got < want; k++) {
			used[pool[k]] = true;
			out[got++] = pool[k];
		}
	}
	free(pool);
	return got;
}

/* ------------------------------------------------------------ page sizes */

static uint64_t free_pages(const struct place_topo *t, int node, uint64_t size)
{
	uint64_t fr = 0;

	place_node_pages(t, node, size, &fr);
	return fr;
}

static uint64_t femud_bytes(const struct place_request *rq, uint64_t page)
{
	return rq->devices * div_up(rq->devsz, page) * page + div_up(rq->eal_mem, page) * page;
}

/* Guest page size: 1 GiB when reserved and free on every guest node. */
static uint64_t pick_guest_page(const struct place_topo *t, const struct place_request *rq,
				const struct cand *c)
{
	uint64_t per_node = div_up(div_up(rq->mem, GIB), c->n_g);
	unsigned i;

	if (rq->no_huge)
		return 4096;
	if (rq->huge_size)
		return rq->huge_size;
	if (rq->mem % GIB)
		return PAGE_2M;
	for (i = 0; i < c->n_g; i++)
		if (free_pages(t, c->g[i], GIB) < per_node)
			return PAGE_2M;
	return GIB;
}

static uint64_t pick_femud_page(const struct place_topo *t, const struct place_request *rq, int f)
{
	if (rq->no_huge)
		return 4096;
	if (rq->huge_size)
		return rq->huge_size;
	if (rq->devsz % GIB || free_pages(t, f, GIB) < femud_bytes(rq, GIB) / GIB)
		return PAGE_2M;
	return GIB;
}

/* ------------------------------------------------------------ hugepages */

static struct place_huge *huge_entry(const struct place_topo *t, struct place_plan *p, int node,
				     uint64_t size)
{
	unsigned i;
	struct place_huge *h;

	for (i = 0; i < p->n_huge; i++)
		if (p->huge[i].node == node && p->huge[i].page_size == size)
			return &p->huge[i];
	if (p->n_huge == PLACE_PLAN_MAX_HUGE)
		return NULL;
	h = &p->huge[p->n_huge++];
	memset(h, 0, sizeof(*h));
	h->node = node;
	h->page_size = size;
	h->reserved = place_node_pages(t, node, size, &h->free);
	return h;
}

/* Fill p->huge from the chosen nodes and page sizes. */
static void plan_hugepages(const struct place_topo *t, const struct place_request *rq,
			   struct place_plan *p)
{
	uint64_t pages = p->guest_mem / p->guest_page;
	struct place_huge *h;
	unsigned i;

	p->n_huge = 0;
	if (rq->no_huge)
		return;
	for (i = 0; i < p->n_guest_nodes; i++) {
		h = huge_entry(t, p, p->guest_nodes[i], p->guest_page);
		if (h) /* interleaved: an even share per node, rounded up */
			h->need_guest += div_up(pages, p->n_guest_nodes);
	}
	h = huge_entry(t, p, p->mbe_node, p->femud_page);
	if (h)
		h->need_femud += femud_bytes(rq, p->femud_page) / p->femud_page;
}

static bool hugepages_ready(const struct place_plan *p)
{
	unsigned i;

	for (i = 0; i < p->n_huge; i++)
		if (p->huge[i].free < place_huge_need(&p->huge[i]))
			return false;
	return true;
}

/* Memory needed on each node fits its size. */
static bool memory_fits(const struct place_topo *t, const struct place_request *rq,
			const struct place_plan *p, char *why, size_t len)
{
	unsigned i;

	for (i = 0; i < t->n_nodes; i++) {
		const struct place_node *nd = &t->nodes[i];
		uint64_t g = 0, f = 0;

		if (in_set(p->guest_nodes, p->n_guest_nodes, nd->os))
			g = div_up(p->guest_mem / p->guest_page, p->n_guest_nodes) * p->guest_page;
		if (nd->os == p->mbe_node)
			f = femud_bytes(rq, p->femud_page);
		if (g + f > nd->memory) {
			msg(why, len,
			    "node %d has %.2f GiB of memory, the plan needs %.2f GiB there "
			    "(guest %.2f GiB, femud %.2f GiB)",
			    nd->os, gib(nd->memory), gib(g + f), gib(g), gib(f));
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------ one candidate */

/* Choose femud's main lcore; false if there is no CPU for it. */
static bool place_main_lcore(const struct place_topo *t, const struct place_request *rq,
			     const struct cand *c, bool *used, struct place_plan *p)
{
	unsigned core;

	if (take_femud_cores(t, c, used, 1, &core) == 1) {
		p->lcore_cpus[0] = t->cores[core].pus[0];
		p->n_lcores = rq->pollers + 1;
		return true;
	}
	core = place_cpu_find(t, p->lcore_cpus[1])->core;
	if (t->cores[core].n_pus > 1) {
		p->lcore_cpus[0] = t->cores[core].pus[1];
		p->main_on_sibling = true;
		p->n_lcores = rq->pollers + 1;
		return true;
	}
	if (rq->pollers == 1) { /* one lcore: the main lcore also polls */
		memmove(p->lcore_cpus, p->lcore_cpus + 1, sizeof(unsigned));
		p->n_lcores = 1;
		return true;
	}
	return false;
}

/* QEMU's non-vCPU threads: every guest-side CPU whose core femud does not use. */
static void place_emu_cpus(const struct place_topo *t, const bool *femud_core, struct place_plan *p)
{
	unsigned i;

	p->n_emu_cpus = 0;
	for (i = 0; i < t->n_cpus; i++) {
		const struct place_cpu *cpu = &t->cpus[i];

		if (in_set(p->guest_nodes, p->n_guest_nodes, cpu->node) && !femud_core[cpu->core])
			p->emu_cpus[p->n_emu_cpus++] = cpu->os;
	}
}

/* Try a candidate; fill p and return its score, or -1 with a reason in why. */
static int try_cand(const struct place_topo *t, const struct place_request *rq,
		    const struct cand *c, struct place_plan *p, char *why, size_t len)
{
	bool *used = calloc(t->n_cores, sizeof(bool));
	bool *femud_core = calloc(t->n_cores, sizeof(bool));
	unsigned *cores = malloc((t->n_cores + 1) * sizeof(unsigned));
	unsigned i, got;
	int score = -1;

	if (!used || !femud_core || !cores) {
		msg(why, len, "out of memory");
		goto out;
	}
	p->isolation = c->iso;
	p->n_guest_nodes = c->n_g;
	memcpy(p->guest_nodes, c->g, c->n_g * sizeof(int));
	p->guest_pkg = (unsigned)place_node_package(t, c->g[0]);
	p->mbe_node = c->f;
	p->femud_pkg = (unsigned)place_node_package(t, c->f);
	p->main_on_sibling = false;

	got = take_femud_cores(t, c, used, rq->pollers, cores);
	if (got < rq->pollers) {
		msg(why, len,
		    "femud's side (node %d, package %u) has %u free physical cores, "
		    "%u pollers need %u",
		    c->f, p->femud_pkg, got, rq->pollers, rq->pollers);
		goto out;
	}
	for (i = 0; i < got; i++)
		p->lcore_cpus[1 + i] = t->cores[cores[i]].pus[0];

	got = core_pool(t, c->g, c->n_g, used, false, cores);
	if (got < rq->vcpus) {
		msg(why, len,
		    "node(s) of the guest have %u free physical cores, %u vCPUs need %u "
		    "(one core per vCPU)",
		    got, rq->vcpus, rq->vcpus);
		goto out;
	}
	for (i = 0; i < rq->vcpus; i++) {
		used[cores[i]] = true;
		p->vcpu_cpus[i] = t->cores[cores[i]].pus[0];
	}

	if (!place_main_lcore(t, rq, c, used, p)) {
		msg(why, len,
		    "no CPU left for femud's main (control) lcore: with %u pollers it "
		    "needs one more core, or SMT",
		    rq->pollers);
		goto out;
	}
	for (i = 0; i < p->n_lcores; i++)
		femud_core[place_cpu_find(t, p->lcore_cpus[i])->core] = true;
	place_emu_cpus(t, femud_core, p);

	p->guest_page = pick_guest_page(t, rq, c);
	p->femud_page = pick_femud_page(t, rq, c->f);
	p->guest_mem = div_up(rq->mem, p->guest_page) * p->guest_page;
	if (!memory_fits(t, rq, p, why, len))
		goto out;
	plan_hugepages(t, rq, p);

	score = 0;
	if (!rq->no_huge && hugepages_ready(p))
		score += 8;
	if (c->n_g == 1)
		score += 4;
	if (c->iso == PLACE_ISO_SOCKET && place_cpu_find(t, 0) &&
	    place_cpu_find(t, 0)->pkg != p->femud_pkg)
		score += 2;
	if (c->iso == PLACE_ISO_NODE && place_cpu_find(t, 0) && place_cpu_find(t, 0)->node != c->f)
		score += 2;
	if (!p->main_on_sibling && p->n_lcores > rq->pollers)
		score += 1;
out:
	free(used);
	free(femud_core);
	free(cores);
	return score;
}

/* ------------------------------------------------------------ enumeration */

struct search {
	const struct place_topo *t;
	const struct place_request *rq;
	struct place_plan *best, *tmp;
	int best_score;
	bool tried;
	char why[512]; /* reason of the first failed candidate of the phase */
};

static void consider(struct search *s, const struct cand *c)
{
	char why[512] = "";
	int score = try_cand(s->t, s->rq, c, s->tmp, why, sizeof(why));
	struct place_plan swap;

	if (score < 0) {
		if (!s->tried)
			snprintf(s->why, sizeof(s->why), "%s", why);
		s->tried = true;
		return;
	}
	s->tried = true;
	if (score > s->best_score) {
		s->best_score = score;
		swap = *s->best;
		*s->best = *s->tmp;
		*s->tmp = swap;
	}
}

static bool node_usable(const struct place_topo *t, const struct place_node *n, int want)
{
	(void)t;
	return n->n_cores > 0 && (want < 0 || want == n->os);
}

/* Every guest node set on package pkg (each node, then all nodes together). */
static void guest_sets_on_pkg(struct search *s, unsigned pkg, int f, enum place_isolation iso)
{
	const struct place_topo *t = s->t;
	struct cand c = {.iso = iso, .f = f};
	struct cand all = {.iso = iso, .f = f};
	unsigned i;

	for (i = 0; i < t->n_nodes; i++) {
		const struct place_node *n = &t->nodes[i];

		if (n->pkg != pkg || n->n_cores == 0 || n->os == f)
			continue;
		if (all.n_g < PLACE_PLAN_MAX_NODES)
			all.g[all.n_g++] = n->os;
		if (!node_usable(t, n, s->rq->guest_node))
			continue;
		c.n_g = 1;
		c.g[0] = n->os;
		consider(s, &c);
	}
	if (all.n_g > 1 && s->rq->guest_node < 0 && iso == PLACE_ISO_SOCKET)
		consider(s, &all);
}

static void phase(struct search *s, enum place_isolation iso)
{
	const struct place_topo *t = s->t;
	unsigned i, pkg;

	for (i = 0; i < t->n_nodes; i++) {
		const struct place_node *f = &t->nodes[i];

		if (!node_usable(t, f, s->rq->femud_node))
			continue;
		if (iso == PLACE_ISO_SPLIT) {
			struct cand c = {.iso = iso, .n_g = 1, .g = {f->os}, .f = f->os};

			if (s->rq->guest_node < 0 || s->rq->guest_node == f->os)
				consider(s, &c);
		} else if (iso == PLACE_ISO_NODE) {
			guest_sets_on_pkg(s, f->pkg, f->os, iso);
		} else {
			for (pkg = 0; pkg < t->n_pkgs; pkg++)
				if (pkg != f->pkg)
					guest_sets_on_pkg(s, pkg, f->os, iso);
		}
	}
}

/* ------------------------------------------------------------ entry */

static int check_request(const struct place_request *rq, char *err, size_t errlen)
{
	if (rq->vcpus == 0 || rq->pollers == 0 || rq->devices == 0) {
		msg(err, errlen, "--vcpus, --pollers and --devices must be at least 1");
		return -1;
	}
	if (rq->mem == 0 || rq->devsz == 0 || rq->devsz % MIB) {
		msg(err, errlen, "--mem must be > 0 and --devsz a positive multiple of 1 MiB");
		return -1;
	}
	if (rq->huge_size && rq->huge_size != PAGE_2M && rq->huge_size != GIB) {
		msg(err, errlen, "--hugepage-size must be 2M or 1G");
		return -1;
	}
	return 0;
}

/* Totals check, so that a machine too small gets a clear message. */
static int check_capacity(const struct place_topo *t, const struct place_request *rq, char *err,
			  size_t errlen)
{
	uint64_t mem = 0, need = rq->mem + femud_bytes(rq, rq->no_huge ? 4096 : PAGE_2M);
	unsigned i, cores = 0;

	for (i = 0; i < t->n_nodes; i++) {
		mem += t->nodes[i].memory;
		cores += t->nodes[i].n_cores;
	}
	if (cores < rq->vcpus + rq->pollers) {
		msg(err, errlen,
		    "not enough CPUs: the guest needs %u physical cores (one per vCPU) and femud "
		    "%u (one per poller), %u in total; this machine has %u physical cores (%u "
		    "CPUs)",
		    rq->vcpus, rq->pollers, rq->vcpus + rq->pollers, cores, t->n_cpus);
		return -1;
	}
	if (mem < need) {
		msg(err, errlen,
		    "not enough memory: the guest needs %.2f GiB and femud %.2f GiB (%u x %.2f GiB "
		    "devices + %.2f GiB EAL heap), %.2f GiB in total; this machine has %.2f GiB",
		    gib(rq->mem), gib(need - rq->mem), rq->devices, gib(rq->devsz),
		    gib(rq->eal_mem), gib(need), gib(mem));
		return -1;
	}
	if ((rq->guest_node >= 0 && !place_node_exists(t, rq->guest_node)) ||
	    (rq->femud_node >= 0 && !place_node_exists(t, rq->femud_node))) {
		msg(err, errlen,
		    "--guest-node/--femud-node: no such NUMA node (this machine has %u)",
		    t->n_nodes);
		return -1;
	}
	return 0;
}

static int alloc_plan(struct place_plan *p, const struct place_topo *t,
		      const struct place_request *rq)
{
	memset(p, 0, sizeof(*p));
	p->vcpu_cpus = calloc(rq->vcpus, sizeof(unsigned));
	p->emu_cpus = calloc(t->n_cpus, sizeof(unsigned));
	p->lcore_cpus = calloc(rq->pollers + 1, sizeof(unsigned));
	return (p->vcpu_cpus && p->emu_cpus && p->lcore_cpus) ? 0 : -1;
}

static void describe(const struct place_topo *t, const struct place_request *rq,
		     struct place_plan *p, const char *socket_why, const char *node_why)
{
	const struct place_node *f = place_node_find(t, p->mbe_node);
	const struct place_cpu *cpu0 = place_cpu_find(t, 0);
	char nodes[128] = "";
	unsigned i;

	for (i = 0; i < p->n_guest_nodes; i++)
		snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes), "%s%d", i ? "," : "",
			 p->guest_nodes[i]);
	switch (p->isolation) {
	case PLACE_ISO_SOCKET:
		msg(p->isolation_note, sizeof(p->isolation_note),
		    "strict socket isolation: guest on package %u, femud's pollers and backend "
		    "memory on package %u; only the per-I/O data copy crosses the socket link",
		    p->guest_pkg, p->femud_pkg);
		break;
	case PLACE_ISO_NODE:
		msg(p->isolation_note, sizeof(p->isolation_note),
		    "strict socket isolation is not possible (%s); guest and femud use different "
		    "NUMA nodes of package %u: separate memory controllers, but shared last-level "
		    "cache and package bandwidth",
		    t->n_pkgs < 2 ? "this machine has one package" : socket_why, p->femud_pkg);
		break;
	case PLACE_ISO_SPLIT:
		msg(p->isolation_note, sizeof(p->isolation_note),
		    "strict isolation is not possible (%s); node %d's cores are split between "
		    "femud and the guest, which share its memory bandwidth and caches",
		    t->n_nodes < 2 ? "this machine has one NUMA node" : node_why, p->mbe_node);
		break;
	}
	msg(p->guest_reason, sizeof(p->guest_reason),
	    "node%s %s (package %u): %u vCPU%s, each on a physical core of its own, %.2f GiB "
	    "RAM bound there%s",
	    p->n_guest_nodes > 1 ? "s" : "", nodes, p->guest_pkg, rq->vcpus,
	    rq->vcpus > 1 ? "s" : "", gib(p->guest_mem),
	    p->n_guest_nodes > 1 ? " (interleaved: no single node of the package fits)" : "");
	msg(p->femud_reason, sizeof(p->femud_reason),
	    "node %d (package %u): %u poller core%s next to the backend memory (%u x %.2f GiB, "
	    "node %d has %.2f GiB)%s",
	    p->mbe_node, p->femud_pkg, rq->pollers, rq->pollers > 1 ? "s" : "", rq->devices,
	    gib(rq->devsz), p->mbe_node, gib(f->memory),
	    (cpu0 && p->isolation == PLACE_ISO_SOCKET && cpu0->pkg != p->femud_pkg)
		? "; CPU 0 (OS housekeeping, interrupts) is on the other package"
		: "");
}

static void add_notes(const struct place_topo *t, const struct place_request *rq,
		      struct place_plan *p)
{
	unsigned i;

	if (p->n_lcores == 1)
		note(p, "femud runs with one lcore: its main lcore also polls (no CPU left for a "
			"separate control lcore)");
	if (p->main_on_sibling)
		note(p,
		     "femud's main (control) lcore CPU %u shares a physical core with poller "
		     "CPU %u (no spare core on femud's side)",
		     p->lcore_cpus[0], p->lcore_cpus[1]);
	if (rq->vcpus > PLACE_PLAN_MAX_QUEUES)
		note(p, "%u vCPUs but femud offers at most %u queues per device: num-queues=%u",
		     rq->vcpus, PLACE_PLAN_MAX_QUEUES, PLACE_PLAN_MAX_QUEUES);
	for (i = 0; i < p->n_huge; i++) {
		const struct place_huge *h = &p->huge[i];

		if (h->free < place_huge_need(h))
			note(p,
			     "node %d: %" PRIu64 " hugepages of %" PRIu64 " KiB needed, %" PRIu64
			     " free now (femu-place --apply prints the commands to reserve them)",
			     h->node, place_huge_need(h), h->page_size / 1024, h->free);
	}
	if (rq->no_huge)
		note(p, "planned without hugepages: expect TLB misses on the I/O path");
	if (!t->is_host)
		note(p,
		     "topology '%s' is not this host: reservations and pinning are what that "
		     "machine would need",
		     t->source);
}

int place_plan_build(const struct place_topo *t, const struct place_request *rq,
		     struct place_plan *p, char *err, size_t errlen)
{
	struct place_plan tmp;
	struct search s = {.t = t, .rq = rq, .best = p, .tmp = &tmp, .best_score = -1};
	char socket_why[512] = "no second package has room", node_why[512] = "";
	enum place_isolation iso;

	if (check_request(rq, err, errlen) || check_capacity(t, rq, err, errlen))
		return -1;
	if (alloc_plan(p, t, rq) || alloc_plan(&tmp, t, rq)) {
		place_plan_free(p);
		place_plan_free(&tmp);
		msg(err, errlen, "out of memory");
		return -1;
	}
	for (iso = PLACE_ISO_SOCKET; iso <= PLACE_ISO_SPLIT && s.best_score < 0; iso++) {
		s.tried = false;
		s.why[0] = '\0';
		phase(&s, iso);
		if (s.tried && iso == PLACE_ISO_SOCKET)
			snprintf(socket_why, sizeof(socket_why), "%s", s.why);
		if (s.tried && iso == PLACE_ISO_NODE)
			snprintf(node_why, sizeof(node_why), "%s", s.why);
		if (s.best_score < 0 && s.tried)
			snprintf(err, errlen, "no placement fits: %s", s.why);
	}
	place_plan_free(&tmp);
	if (s.best_score < 0) {
		if (!s.tried && err && errlen)
			msg(err, errlen, "no placement fits the --guest-node/--femud-node given");
		place_plan_free(p);
		return -1;
	}
	p->queues = rq->vcpus > PLACE_PLAN_MAX_QUEUES ? PLACE_PLAN_MAX_QUEUES : rq->vcpus;
	describe(t, rq, p, socket_why, node_why[0] ? node_why : "no second node has room");
	add_notes(t, rq, p);
	return 0;
}

void place_plan_free(struct place_plan *p)
{
	free(p->vcpu_cpus);
	free(p->emu_cpus);
	free(p->lcore_cpus);
	p->vcpu_cpus = NULL;
	p->emu_cpus = NULL;
	p->lcore_cpus = NULL;
}
