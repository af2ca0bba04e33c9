/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numa/place.c - topology loading (hwloc) and CPU placement checks.
 * See place.h for the API and its conventions.
 */
#include "numa/place.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>

/* ------------------------------------------------------------ helpers */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Append a formatted line to buf (NUL-terminated, at most len bytes). */
static void append_line(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void append_line(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t used;

	if (buf == NULL || len == 0)
		return;
	used = strnlen(buf, len);
	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	used = strnlen(buf, len);
	if (used + 1 < len) {
		buf[used] = '\n';
		buf[used + 1] = '\0';
	}
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* ------------------------------------------------------------ loading */

/* Package index of an object: logical index of its Package ancestor. */
static int obj_package(hwloc_topology_t h, hwloc_obj_t obj)
{
	hwloc_obj_t p = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, obj);

	return p ? (int)p->logical_index : -1;
}

/* Lowest-numbered NUMA node with CPUs whose cpuset contains PU os_cpu. */
static int pu_node(hwloc_topology_t h, unsigned os_cpu)
{
	hwloc_obj_t n = NULL;

	while ((n = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, n)) != NULL) {
		if (n->cpuset && hwloc_bitmap_isset(n->cpuset, os_cpu))
			return (int)n->os_index;
	}
	return -1;
}

static int open_hwloc(hwloc_topology_t *hp, const char *spec, bool *is_host, char *err,
		      size_t errlen)
{
	hwloc_topology_t h;
	struct stat st;

	if (hwloc_topology_init(&h) != 0) {
		set_err(err, errlen, "hwloc_topology_init failed: %s", strerror(errno));
		return -1;
	}
	*is_host = (spec == NULL || spec[0] == '\0');
	if (!*is_host && stat(spec, &st) == 0) {
		if (hwloc_topology_set_xml(h, spec) != 0) {
			set_err(err, errlen, "cannot read topology XML '%s': %s", spec,
				strerror(errno));
			goto fail;
		}
	} else if (!*is_host) {
		if (hwloc_topology_set_synthetic(h, spec) != 0) {
			set_err(err, errlen,
				"'%s' is neither a readable file nor a valid hwloc synthetic "
				"description (e.g. \"pack:2 numa:1 core:16 pu:2\")",
				spec);
			goto fail;
		}
	}
	if (hwloc_topology_load(h) != 0) {
		set_err(err, errlen, "hwloc cannot load the topology: %s", strerror(errno));
		goto fail;
	}
	*hp = h;
	return 0;
fail:
	hwloc_topology_destroy(h);
	return -1;
}

static int load_cpus_and_cores(struct place_topo *t, hwloc_topology_t h, char *err, size_t errlen)
{
	int n_pu = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
	hwloc_obj_t *core_objs;
	hwloc_obj_t pu = NULL;
	unsigned i = 0;

	if (n_pu <= 0) {
		set_err(err, errlen, "the topology has no CPUs");
		return -1;
	}
	t->cpus = calloc((size_t)n_pu, sizeof(*t->cpus));
	t->cores = calloc((size_t)n_pu, sizeof(*t->cores));
	core_objs = calloc((size_t)n_pu, sizeof(*core_objs));
	if (!t->cpus || !t->cores || !core_objs) {
		free(core_objs);
		set_err(err, errlen, "out of memory");
		return -1;
	}
	while ((pu = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PU, pu)) != NULL) {
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_CORE, pu);
		struct place_cpu *c = &t->cpus[i++];
		unsigned k;
		int pkg = obj_package(h, pu);

		if (core == NULL)
			core = pu; /* no core level: every PU is its own core */
		c->os = pu->os_index;
		c->pkg = pkg < 0 ? 0 : (unsigned)pkg;
		c->node = pu_node(h, pu->os_index);
		for (k = 0; k < t->n_cores && core_objs[k] != core; k++)
			;
		if (k == t->n_cores) {
			core_objs[k] = core;
			t->cores[k].pkg = c->pkg;
			t->cores[k].node = c->node;
			t->n_cores++;
		}
		if (t->cores[k].n_pus < sizeof(t->cores[k].pus) / sizeof(t->cores[k].pus[0]))
			t->cores[k].pus[t->cores[k].n_pus++] = c->os;
		c->core = k;
	}
	t->n_cpus = i;
	free(core_objs);
	return 0;
}

static int cmp_core(const void *a, const void *b)
{
	const struct place_core *x = a, *y = b;

	return cmp_unsigned(&x->pus[0], &y->pus[0]);
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct place_cpu *x = a, *y = b;

	return cmp_unsigned(&x->os, &y->os);
}

static int cmp_node(const void *a, const void *b)
{
	const struct place_node *x = a, *y = b;

	return (x->os > y->os) - (x->os < y->os);
}

/* Sort cpus and cores by CPU number and re-link cpu->core. */
static void sort_cpus_and_cores(struct place_topo *t)
{
	unsigned i, j;

	for (i = 0; i < t->n_cores; i++)
		qsort(t->cores[i].pus, t->cores[i].n_pus, sizeof(unsigned), cmp_unsigned);
	qsort(t->cores, t->n_cores, sizeof(*t->cores), cmp_core);
	qsort(t->cpus, t->n_cpus, sizeof(*t->cpus), cmp_cpu);
	for (i = 0; i < t->n_cores; i++) {
		struct place_core *core = &t->cores[i];

		core->node = -1;
		for (j = 0; j < core->n_pus; j++) {
			struct place_cpu *c = (struct place_cpu *)place_cpu_find(t, core->pus[j]);

			if (c) {
				c->core = i;
				if (core->node < 0)
					core->node = c->node;
			}
		}
	}
}

/* Read one hugepage counter of a node from sysfs; -1 if unavailable. */
static long long sysfs_hugepages(int node, uint64_t size, const char *what)
{
	char path[160];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/node/node%d/hugepages/hugepages-%" PRIu64 "kB/%s", node,
		 size / 1024, what);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Fill page pools of a node: hwloc's page types, refreshed from sysfs. */
static void load_node_pages(struct place_topo *t, struct place_node *n, hwloc_obj_t obj)
{
	unsigned k;

	for (k = 0;
	     k < obj->attr->numanode.page_types_len && n->n_page_types < PLACE_MAX_PAGE_TYPES;
	     k++) {
		struct place_pages *p = &n->pages[n->n_page_types];

		if (obj->attr->numanode.page_types[k].size == 0)
			continue;
		p->size = obj->attr->numanode.page_types[k].size;
		p->count = obj->attr->numanode.page_types[k].count;
		p->free = p->count;
		if (t->is_host && p->size > 4096) {
			long long nr = sysfs_hugepages(n->os, p->size, "nr_hugepages");
			long long fr = sysfs_hugepages(n->os, p->size, "free_hugepages");

			if (nr >= 0)
				p->count = (uint64_t)nr;
			p->free = fr >= 0 ? (uint64_t)fr : p->count;
		}
		n->n_page_types++;
	}
}

static int load_nodes(struct place_topo *t, hwloc_topology_t h, char *err, size_t errlen)
{
	int n_nodes = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
	hwloc_obj_t obj = NULL;
	unsigned i, j;

	if (n_nodes <= 0) {
		set_err(err, errlen, "the topology has no NUMA node");
		return -1;
	}
	t->nodes = calloc((size_t)n_nodes, sizeof(*t->nodes));
	if (t->nodes == NULL) {
		set_err(err, errlen, "out of memory");
		return -1;
	}
	while ((obj = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, obj)) != NULL) {
		struct place_node *n = &t->nodes[t->n_nodes++];
		int pkg = obj_package(h, obj);

		n->os = (int)obj->os_index;
		n->memory = obj->attr->numanode.local_memory;
		n->pkg = pkg < 0 ? 0 : (unsigned)pkg;
		load_node_pages(t, n, obj);
		for (i = 0; i < t->n_cpus; i++) {
			if (t->cpus[i].node != n->os)
				continue;
			if (n->n_cpus++ == 0 && pkg < 0)
				n->pkg = t->cpus[i].pkg; /* machine-level node */
		}
		for (j = 0; j < t->n_cores; j++)
			n->n_cores += t->cores[j].node == n->os;
	}
	qsort(t->nodes, t->n_nodes, sizeof(*t->nodes), cmp_node);
	return 0;
}

int place_topology_load(struct place_topo **out, const char *spec, char *err, size_t errlen)
{
	struct place_topo *t;
	hwloc_topology_t h;
	bool is_host;
	int n_pkgs;

	*out = NULL;
	if (open_hwloc(&h, spec, &is_host, err, errlen) != 0)
		return -1;
	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		hwloc_topology_destroy(h);
		set_err(err, errlen, "out of memory");
		return -1;
	}
	t->hwloc = h;
	t->is_host = is_host;
	snprintf(t->source, sizeof(t->source), "%s", is_host ? "host" : spec);
	n_pkgs = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE);
	t->n_pkgs = n_pkgs > 0 ? (unsigned)n_pkgs : 1;
	if (load_cpus_and_cores(t, h, err, errlen) != 0)
		goto fail;
	sort_cpus_and_cores(t);
	if (load_nodes(t, h, err, errlen) != 0)
		goto fail;
	*out = t;
	return 0;
fail:
	place_topology_free(t);
	return -1;
}

void place_topology_free(struct place_topo *t)
{
	if (t == NULL)
		return;
	if (t->hwloc)
		hwloc_topology_destroy((hwloc_topology_t)t->hwloc);
	free(t->cpus);
	free(t->cores);
	free(t->nodes);
	free(t);
}

/* ------------------------------------------------------------ lookups */

const struct place_cpu *place_cpu_find(const struct place_topo *t, unsigned os_cpu)
{
	size_t lo = 0, hi = t->n_cpus;

	while (lo < hi) { /* cpus[] is sorted by os */
		size_t mid = lo + (hi - lo) / 2;

		if (t->cpus[mid].os == os_cpu)
			return &t->cpus[mid];
		if (t->cpus[mid].os < os_cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct place_node *place_node_find(const struct place_topo *t, int os_node)
{
	unsigned i;

	for (i = 0; i < t->n_nodes; i++)
		if (t->nodes[i].os == os_node)
			return &t->nodes[i];
	return NULL;
}

bool place_node_exists(const struct place_topo *t, int os_node)
{
	return place_node_find(t, os_node) != NULL;
}

unsigned place_node_count(const struct place_topo *t)
{
	return t->n_nodes;
}

bool place_has_smt(const struct place_topo *t)
{
	unsigned i;

	for (i = 0; i < t->n_cores; i++)
		if (t->cores[i].n_pus > 1)
			return true;
	return false;
}

int place_node_package(const struct place_topo *t, int os_node)
{
	const struct place_node *n = place_node_find(t, os_node);

	return n ? (int)n->pkg : -1;
}

uint64_t place_node_pages(const struct place_topo *t, int os_node, uint64_t page_size,
			  uint64_t *free_out)
{
	const struct place_node *n = place_node_find(t, os_node);
	unsigned k;

	if (free_out)
		*free_out = 0;
	if (n == NULL)
		return 0;
	for (k = 0; k < n->n_page_types; k++) {
		if (n->pages[k].size != page_size)
			continue;
		if (free_out)
			*free_out = n->pages[k].free;
		return n->pages[k].count;
	}
	return 0;
}

/* ------------------------------------------------------------ checks */

const char *place_process_name(pid_t pid, char *buf, size_t len)
{
	char path[64], exe[4096];
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n > 0) {
		const char *base;

		exe[n] = '\0';
		base = strrchr(exe, '/');
		snprintf(buf, len, "%s", base ? base + 1 : exe);
		return buf;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (f != NULL && fgets(buf, (int)len, f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
		return buf;
	}
	if (f != NULL)
		fclose(f);
	snprintf(buf, len, "unknown");
	return buf;
}

int place_check_pid_overlap(const unsigned *cpus, unsigned n, pid_t pid, char *msgs, size_t len)
{
	cpu_set_t *set;
	size_t setsize;
	int ncpu = 4096, found = 0;
	char name[64];
	unsigned i;

	set = CPU_ALLOC(ncpu);
	if (set == NULL) {
		append_line(msgs, len, "cannot check process %d: out of memory", (int)pid);
		return -1;
	}
	setsize = CPU_ALLOC_SIZE(ncpu);
	CPU_ZERO_S(setsize, set);
	if (sched_getaffinity(pid, setsize, set) != 0) {
		append_line(msgs, len, "cannot read the CPU affinity of process %d: %s", (int)pid,
			    strerror(errno));
		CPU_FREE(set);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (cpus[i] < (unsigned)ncpu && CPU_ISSET_S(cpus[i], setsize, set)) {
			if (found == 0)
				place_process_name(pid, name, sizeof(name));
			append_line(msgs, len,
				    "poller CPU %u: process %d (%s) may also run on it; "
				    "pin it away from femud's CPUs",
				    cpus[i], (int)pid, name);
			found++;
		}
	}
	CPU_FREE(set);
	return found;
}

/* Warn for CPUs unknown to the topology or off the backend's package. */
static int check_packages(const struct place_topo *t, const unsigned *cpus, unsigned n,
			  int mbe_node, char *msgs, size_t len)
{
	const struct place_node *mn = mbe_node >= 0 ? place_node_find(t, mbe_node) : NULL;
	int warnings = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		const struct place_cpu *c = place_cpu_find(t, cpus[i]);

		if (c == NULL) {
			append_line(msgs, len,
				    "poller CPU %u does not exist in the topology (absent, offline "
				    "or not allowed)",
				    cpus[i]);
			warnings++;
		} else if (mn && c->pkg != mn->pkg) {
			append_line(
			    msgs, len,
			    "poller CPU %u is on package %u (node %d), not on package %u of "
			    "backend node %d: every I/O crosses the socket link",
			    cpus[i], c->pkg, c->node, mn->pkg, mbe_node);
			warnings++;
		}
	}
	return warnings;
}

/* Warn for pairs of pollers on the same CPU or on one physical core. */
static int check_shared_cores(const struct place_topo *t, const unsigned *cpus, unsigned n,
			      char *msgs, size_t len)
{
	int warnings = 0;
	unsigned i, j;

	for (i = 0; i < n; i++) {
		const struct place_cpu *a = place_cpu_find(t, cpus[i]);

		for (j = i + 1; j < n && a; j++) {
			const struct place_cpu *b = place_cpu_find(t, cpus[j]);

			if (b == NULL)
				continue;
			if (a->os == b->os) {
				append_line(msgs, len, "poller CPU %u is used by two pollers",
					    a->os);
				warnings++;
			} else if (a->core == b->core) {
				append_line(
				    msgs, len,
				    "poller CPUs %u and %u are SMT siblings on one physical "
				    "core: they slow each other down",
				    a->os, b->os);
				warnings++;
			}
		}
	}
	return warnings;
}

int place_check_pollers(const struct place_topo *t, const unsigned *cpus, unsigned n, int mbe_node,
			pid_t qemu_pid, char *msgs, size_t len)
{
	int warnings = 0, r;

	if (msgs && len)
		msgs[0] = '\0';
	if (mbe_node >= 0 && !place_node_exists(t, mbe_node)) {
		append_line(msgs, len, "backend node %d does not exist (this machine has %u nodes)",
			    mbe_node, t->n_nodes);
		return -1;
	}
	warnings += check_packages(t, cpus, n, mbe_node, msgs, len);
	warnings += check_shared_cores(t, cpus, n, msgs, len);
	if (qemu_pid > 0) {
		r = place_check_pid_overlap(cpus, n, qemu_pid, msgs, len);
		warnings += r < 0 ? 1 : r;
	}
	return warnings;
}

/* ------------------------------------------------------------ isolation */

/* The cpulist in file dir/name ("1-3,5"), parsed by hwloc; empty if absent. */
static hwloc_bitmap_t read_cpulist(const char *dir, const char *name)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	char path[512], line[4096];
	FILE *f;

	if (set == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f == NULL)
		return set;
	if (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] != '\0' && hwloc_bitmap_list_sscanf(set, line) != 0)
			hwloc_bitmap_zero(set);
	}
	fclose(f);
	return set;
}

int place_check_isolation(const char *sysfs_dir, const unsigned *cpus, unsigned n, char *msgs,
			  size_t len)
{
	hwloc_bitmap_t iso = read_cpulist(sysfs_dir, "isolated");
	hwloc_bitmap_t nohz = read_cpulist(sysfs_dir, "nohz_full");
	int noted = 0;

	for (unsigned i = 0; iso != NULL && nohz != NULL && i < n; i++) {
		bool in_iso = hwloc_bitmap_isset(iso, cpus[i]);
		bool in_nohz = hwloc_bitmap_isset(nohz, cpus[i]);

		if (in_iso && in_nohz)
			continue;
		append_line(msgs, len,
			    "poller CPU %u is not in %s%s%s: %s; completions due meanwhile are "
			    "posted late (counted as late)",
			    cpus[i], in_iso ? "" : "isolcpus=", in_iso || in_nohz ? "" : " or ",
			    in_nohz ? "" : "nohz_full=",
			    in_iso ? "the timer tick still interrupts it"
				   : "other tasks may be scheduled on it");
		noted++;
	}
	hwloc_bitmap_free(iso);
	hwloc_bitmap_free(nohz);
	return noted;
}

/* ------------------------------------------------------------ auto lcores */

static bool core_has_cpu(const struct place_core *c, unsigned os_cpu)
{
	unsigned i;

	for (i = 0; i < c->n_pus; i++)
		if (c->pus[i] == os_cpu)
			return true;
	return false;
}

int place_auto_lcores(const struct place_topo *t, int os_node, unsigned n_pollers,
		      unsigned *cpus_out, char *err, size_t errlen)
{
	const struct place_node *node = place_node_find(t, os_node);
	unsigned i, got = 0, avail = 0;
	int cpu0_core = -1;

	if (node == NULL) {
		set_err(err, errlen, "NUMA node %d does not exist (this machine has %u nodes)",
			os_node, t->n_nodes);
		return -1;
	}
	if (n_pollers == 0) {
		set_err(err, errlen, "need at least one lcore");
		return -1;
	}
	for (i = 0; i < t->n_cores; i++) {
		if (t->cores[i].node != os_node)
			continue;
		avail++;
		if (core_has_cpu(&t->cores[i], 0))
			cpu0_core = (int)i;
	}
	if (avail < n_pollers) {
		set_err(err, errlen, "NUMA node %d has %u physical cores, %u lcores requested",
			os_node, avail, n_pollers);
		return -1;
	}
	for (i = 0; i < t->n_cores && got < n_pollers; i++) {
		if (t->cores[i].node != os_node || (int)i == cpu0_core)
			continue;
		cpus_out[got++] = t->cores[i].pus[0];
	}
	if (got < n_pollers && cpu0_core >= 0)
		cpus_out[got++] = t->cores[cpu0_core].pus[0]; /* no room without it */
	return (int)got;
}

/* ------------------------------------------------------------ formatting */

char *place_format_cpulist(const unsigned *cpus, unsigned n, char *buf, size_t len)
{
	unsigned *s = NULL;
	size_t used = 0;
	unsigned i, j;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (n == 0)
		return buf;
	s = malloc(n * sizeof(*s));
	if (s == NULL)
		return buf;
	memcpy(s, cpus, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_unsigned);
	for (i = 0; i < n && used + 1 < len; i = j) {
		for (j = i + 1; j < n && s[j] <= s[j - 1] + 1; j++)
			;
		if (s[j - 1] == s[i])
			used +=
			    (size_t)snprintf(buf + used, len - used, "%s%u", used ? "," : "", s[i]);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%u-%u", used ? "," : "",
						 s[i], s[j - 1]);
		if (used >= len)
			used = len - 1;
	}
	free(s);
	return buf;
}
