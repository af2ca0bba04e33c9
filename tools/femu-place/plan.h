/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tools/femu-place/plan.h - the placement planner of femu-place.
 *
 * Given a topology (numa/place.h) and what the guest and femud need, choose
 * the guest's node(s) and CPUs (one physical core per vCPU), femud's node
 * and lcores (one physical core per poller), and the hugepages each node
 * needs. Preference order: guest and femud on different packages (strict
 * socket isolation), else on different NUMA nodes of one package, else a
 * split of one node's cores. CPU numbers are OS indexes; sizes are bytes.
 */
#ifndef FEMUD_TOOLS_PLACE_PLAN_H
#define FEMUD_TOOLS_PLACE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "numa/place.h"

#define PLACE_PLAN_MAX_NODES 64
#define PLACE_PLAN_MAX_HUGE 16
#define PLACE_PLAN_MAX_QUEUES 64 /* femud's per-device virtqueue limit */
#define PLACE_PLAN_MSG 4096

/* What to place. */
struct place_request {
	unsigned vcpus;
	uint64_t mem; /* guest RAM */
	unsigned pollers;
	uint64_t devsz; /* per device */
	unsigned devices;
	uint64_t eal_mem;	 /* femud's own hugepage heap (DPDK EAL) allowance */
	uint64_t huge_size;	 /* 0 = auto (1 GiB pages if reserved, else 2 MiB) */
	bool no_huge;		 /* plan with normal pages */
	int guest_node;		 /* -1 = choose */
	int femud_node;		 /* -1 = choose */
	const char *sock_prefix; /* sockets are <prefix><i>.sock */
	const char *femud_path;
	const char *qemu_path;
};

enum place_isolation {
	PLACE_ISO_SOCKET, /* different packages */
	PLACE_ISO_NODE,	  /* different nodes of one package */
	PLACE_ISO_SPLIT,  /* one node's cores split */
};

/* Hugepages needed on one node, of one page size. */
struct place_huge {
	int node;
	uint64_t page_size;
	uint64_t need_guest; /* pages */
	uint64_t need_femud; /* pages */
	uint64_t reserved;   /* nr_hugepages now */
	uint64_t free;	     /* free now */
};

struct place_plan {
	enum place_isolation isolation;
	/* guest */
	unsigned n_guest_nodes;
	int guest_nodes[PLACE_PLAN_MAX_NODES];
	unsigned guest_pkg;
	unsigned *vcpu_cpus; /* [vcpus]: vCPU i runs on vcpu_cpus[i] */
	unsigned n_emu_cpus;
	unsigned *emu_cpus; /* QEMU's other threads: all guest-side CPUs */
	uint64_t guest_page;
	uint64_t guest_mem; /* rounded up to guest_page */
	/* femud */
	int mbe_node;
	unsigned femud_pkg;
	unsigned n_lcores;
	unsigned *lcore_cpus; /* [0] = main lcore, then one per poller */
	bool main_on_sibling; /* main lcore shares a poller's core */
	uint64_t femud_page;
	unsigned queues; /* per device */
	/* hugepages */
	unsigned n_huge;
	struct place_huge huge[PLACE_PLAN_MAX_HUGE];
	/* prose */
	char guest_reason[512];
	char femud_reason[512];
	char isolation_note[512];
	char notes[PLACE_PLAN_MSG]; /* warnings, one per line */
};

/* Build a plan. Returns 0, or -1 with the reason (what is missing) in err. */
int place_plan_build(const struct place_topo *t, const struct place_request *rq,
		     struct place_plan *p, char *err, size_t errlen);
void place_plan_free(struct place_plan *p);

/* Total pages needed for one entry. */
static inline uint64_t place_huge_need(const struct place_huge *h)
{
	return h->need_guest + h->need_femud;
}

#endif
