/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numa/place.h - machine topology and CPU placement checks.
 *
 * A small layer over hwloc that flattens the topology into what placement
 * needs: packages, NUMA nodes (with memory and hugepage pools), physical
 * cores and PUs. It is used by femud at start (poller lcore checks,
 * `--lcores auto`) and by tools/femu-place (placement plans).
 *
 * Units and conventions:
 *  - CPU numbers are OS indexes (what taskset and DPDK use), never hwloc
 *    logical indexes.
 *  - NUMA nodes are OS indexes (what numactl and QEMU host-nodes= use).
 *  - Packages and cores are numbered by the library, 0..n-1 in topology
 *    order; they have no meaning outside one place_topo.
 *  - Memory sizes are bytes.
 * Functions that can fail take an `err` buffer of `errlen` bytes and
 * write a one-line reason into it.
 */
#ifndef FEMUD_NUMA_PLACE_H
#define FEMUD_NUMA_PLACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#define PLACE_MAX_PAGE_TYPES 4

/* One PU (logical CPU / hardware thread). */
struct place_cpu {
	unsigned os;   /* OS CPU number */
	unsigned core; /* index into place_topo.cores */
	unsigned pkg;  /* package index */
	int node;      /* OS index of its NUMA node, -1 if it has none */
};

/* One physical core and its PUs (SMT siblings), sorted by CPU number. */
struct place_core {
	unsigned pkg;
	int node; /* NUMA node of its first PU */
	unsigned n_pus;
	unsigned pus[8]; /* OS CPU numbers; cores with more PUs are truncated */
};

/* A hugepage (or base page) pool of one NUMA node. */
struct place_pages {
	uint64_t size;	/* page size in bytes */
	uint64_t count; /* pages reserved (for hugepages: nr_hugepages) */
	uint64_t free;	/* pages free now (host: sysfs; otherwise = count) */
};

/* One NUMA node. */
struct place_node {
	int os;		  /* OS node number */
	unsigned pkg;	  /* package index */
	uint64_t memory;  /* local memory in bytes */
	unsigned n_cpus;  /* PUs local to this node */
	unsigned n_cores; /* physical cores whose first PU is local to it */
	unsigned n_page_types;
	struct place_pages pages[PLACE_MAX_PAGE_TYPES];
};

/* The flattened topology. Arrays are sorted by OS number (cpus, nodes). */
struct place_topo {
	void *hwloc;	  /* hwloc_topology_t, owned */
	bool is_host;	  /* read from this machine (sysfs info is valid) */
	char source[256]; /* "host", the XML path, or the synthetic string */
	unsigned n_pkgs;
	unsigned n_cpus;
	struct place_cpu *cpus;
	unsigned n_cores;
	struct place_core *cores;
	unsigned n_nodes;
	struct place_node *nodes;
};

/*
 * Load a topology. spec NULL or "" reads this host; a path to an existing
 * file is read as hwloc XML; anything else is an hwloc synthetic description
 * ("pack:2 numa:1(memory=68719476736) core:16 pu:2"). Returns 0 and sets
 * *out, or -1 with a reason in err.
 */
int place_topology_load(struct place_topo **out, const char *spec, char *err, size_t errlen);
void place_topology_free(struct place_topo *t);

/* Lookups; NULL / -1 when absent. */
const struct place_cpu *place_cpu_find(const struct place_topo *t, unsigned os_cpu);
const struct place_node *place_node_find(const struct place_topo *t, int os_node);
bool place_node_exists(const struct place_topo *t, int os_node);
unsigned place_node_count(const struct place_topo *t);
/* True when the topology has more than one PU on some core. */
bool place_has_smt(const struct place_topo *t);
/* Package index of a node, or -1 if the node does not exist. */
int place_node_package(const struct place_topo *t, int os_node);
/* Free pages of the given size on a node now (0 if none / unknown). */
uint64_t place_node_pages(const struct place_topo *t, int os_node, uint64_t page_size,
			  uint64_t *free_out);

/*
 * Check poller CPUs against the backend node and the QEMU process.
 * Writes one warning per line into msgs (NUL-terminated, truncated to len)
 * and returns how many warnings there were:
 *  - a CPU that is not in the topology;
 *  - a poller CPU not on the package of mbe_node (skipped if mbe_node < 0);
 *  - two pollers on one physical core (SMT siblings) or on the same CPU;
 *  - a poller CPU that process qemu_pid may also run on (qemu_pid > 0);
 *    an affinity that cannot be read counts as one warning.
 * Returns -1 only when mbe_node is given but does not exist (reason in msgs).
 */
int place_check_pollers(const struct place_topo *t, const unsigned *cpus, unsigned n, int mbe_node,
			pid_t qemu_pid, char *msgs, size_t len);

/*
 * Warn (one line per CPU, appended to msgs at its current end) for every
 * CPU in cpus[] that process pid may run on (sched_getaffinity). Returns the
 * number of overlapping CPUs, or -1 when the affinity cannot be read (the
 * reason is appended to msgs).
 */
int place_check_pid_overlap(const unsigned *cpus, unsigned n, pid_t pid, char *msgs, size_t len);

/*
 * The name of process pid for messages: the file name of its executable
 * (/proc/PID/exe), else its comm, else "unknown".  Returns buf.
 */
const char *place_process_name(pid_t pid, char *buf, size_t len);

/*
 * Note (one line per CPU, appended to msgs) every poller CPU that the kernel
 * does not keep free for it: not in isolcpus= (other tasks may be scheduled
 * there) or not in nohz_full= (the timer tick still interrupts it).  Reads
 * the cpulists "isolated" and "nohz_full" of sysfs_dir (normally
 * /sys/devices/system/cpu; a missing file counts as an empty list).
 * Returns the number of CPUs noted.  Advice, not a fault: such a poller
 * works, but completions due while it is interrupted are posted late.
 */
int place_check_isolation(const char *sysfs_dir, const unsigned *cpus, unsigned n, char *msgs,
			  size_t len);

/*
 * `--lcores auto`: pick n CPUs on os_node, one PU (the lowest-numbered) per
 * physical core, avoiding the core of CPU 0 when the node has n other cores.
 * Returns n with cpus_out[0..n-1] filled, or -1 with a reason in err (node
 * missing, fewer than n physical cores on it).
 */
int place_auto_lcores(const struct place_topo *t, int os_node, unsigned n_pollers,
		      unsigned *cpus_out, char *err, size_t errlen);

/* Format a CPU list compactly ("0-3,8,10-11"); returns buf. */
char *place_format_cpulist(const unsigned *cpus, unsigned n, char *buf, size_t len);

#endif
