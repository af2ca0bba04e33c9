/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test/unit/numa/test_place_plan.c - Criterion tests of femu-place's planner
 * and command lines (tools/femu-place/plan.c, emit.c): node
 * choice, lcore fallbacks, overrides, errors, QEMU/femud arguments and the
 * --apply hugepage targets.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numa/place.h"
#include "tools/femu-place/emit.h"
#include "tools/femu-place/plan.h"

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

static struct place_topo *topo;

static struct place_request request(unsigned vcpus, uint64_t mem, unsigned pollers)
{
	struct place_request rq = {
	    .vcpus = vcpus,
	    .mem = mem,
	    .pollers = pollers,
	    .devsz = 1 * GIB,
	    .devices = 1,
	    .eal_mem = 64 * MIB,
	    .guest_node = -1,
	    .femud_node = -1,
	    .sock_prefix = "/tmp/s-",
	    .femud_path = "femud",
	    .qemu_path = "qemu",
	};
	return rq;
}

static void load(const char *spec)
{
	char err[256] = "";

	cr_assert_eq(place_topology_load(&topo, spec, err, sizeof(err)), 0, "%s", err);
}

static void unload(void)
{
	place_topology_free(topo);
	topo = NULL;
}

static void build_ok(const struct place_request *rq, struct place_plan *p)
{
	char err[512] = "";

	cr_assert_eq(place_plan_build(topo, rq, p, err, sizeof(err)), 0, "%s", err);
}

static void build_fails(const struct place_request *rq, const char *needle)
{
	struct place_plan p;
	char err[512] = "";

	cr_assert_eq(place_plan_build(topo, rq, &p, err, sizeof(err)), -1);
	cr_expect(strstr(err, needle) != NULL, "want '%s' in: %s", needle, err);
}

static const struct place_cpu *cpu(unsigned os)
{
	const struct place_cpu *c = place_cpu_find(topo, os);

	cr_assert_not_null(c, "CPU %u", os);
	return c;
}

TestSuite(place_plan, .fini = unload);

Test(place_plan, two_sockets_femud_away_from_cpu0)
{
	struct place_request rq = request(4, 4 * GIB, 2);
	struct place_plan p;
	unsigned i;

	load("pack:2 numa:1(memory=17179869184) core:8 pu:2");
	build_ok(&rq, &p);
	cr_expect_eq(p.isolation, PLACE_ISO_SOCKET);
	cr_expect_eq(p.mbe_node, 1);
	cr_expect_eq(p.guest_nodes[0], 0);
	cr_expect_eq(p.n_lcores, 3);
	for (i = 0; i < p.n_lcores; i++)
		cr_expect_eq(cpu(p.lcore_cpus[i])->pkg, 1);
	for (i = 0; i < rq.vcpus; i++) {
		cr_expect_eq(cpu(p.vcpu_cpus[i])->pkg, 0);
		cr_expect_neq(cpu(p.vcpu_cpus[i])->core, cpu(0)->core, "vCPU on CPU 0's core");
	}
	place_plan_free(&p);
}

Test(place_plan, main_lcore_on_sibling_when_cores_run_out)
{
	struct place_request rq = request(1, 1 * GIB, 2);
	struct place_plan p;

	load("pack:2 numa:1(memory=17179869184) core:2 pu:2");
	build_ok(&rq, &p);
	cr_expect(p.main_on_sibling);
	cr_expect_eq(p.n_lcores, 3);
	cr_expect_eq(cpu(p.lcore_cpus[0])->core, cpu(p.lcore_cpus[1])->core);
	cr_expect_neq(p.lcore_cpus[0], p.lcore_cpus[1]);
	cr_expect(strstr(p.notes, "shares a physical core") != NULL, "%s", p.notes);
	place_plan_free(&p);
}

Test(place_plan, single_lcore_when_nothing_is_left)
{
	struct place_request rq = request(1, 1 * GIB, 1);
	struct place_plan p;

	load("pack:1 numa:1(memory=8589934592) core:2 pu:1");
	build_ok(&rq, &p);
	cr_expect_eq(p.isolation, PLACE_ISO_SPLIT);
	cr_expect_eq(p.n_lcores, 1);
	cr_expect_neq(p.lcore_cpus[0], p.vcpu_cpus[0]);
	cr_expect(strstr(p.notes, "main lcore also polls") != NULL, "%s", p.notes);
	place_plan_free(&p);
}

Test(place_plan, no_cpu_for_main_lcore_is_an_error)
{
	struct place_request rq = request(1, 1 * GIB, 2);

	load("pack:1 numa:1(memory=8589934592) core:3 pu:1");
	build_fails(&rq, "main (control) lcore");
}

Test(place_plan, overrides_are_honoured)
{
	struct place_request rq = request(2, 2 * GIB, 2);
	struct place_plan p;

	load("pack:4 numa:1(memory=17179869184) core:5 pu:1");
	rq.guest_node = 3;
	rq.femud_node = 2;
	build_ok(&rq, &p);
	cr_expect_eq(p.guest_nodes[0], 3);
	cr_expect_eq(p.mbe_node, 2);
	place_plan_free(&p);
	rq.femud_node = 3; /* the same node: only a split is possible */
	build_ok(&rq, &p);
	cr_expect_eq(p.isolation, PLACE_ISO_SPLIT);
	cr_expect_eq(p.mbe_node, 3);
	place_plan_free(&p);
	rq.guest_node = 7;
	build_fails(&rq, "no such NUMA node");
}

Test(place_plan, wide_guest_interleaves_over_its_package)
{
	struct place_request rq = request(6, 4 * GIB, 2);
	struct place_plan p;
	struct place_argv a = {0};
	unsigned i;
	bool found = false;

	load("pack:2 numa:2(memory=8589934592) core:4 pu:2");
	build_ok(&rq, &p);
	cr_expect_eq(p.n_guest_nodes, 2);
	cr_assert_eq(place_qemu_argv(&rq, &p, &a), 0);
	for (i = 0; i < a.n; i++)
		if (strstr(a.v[i], "host-nodes=") && strstr(a.v[i], "policy=interleave"))
			found = true;
	cr_expect(found);
	/* per-node share of the guest's 2 MiB pages: 4 GiB / 2 nodes */
	for (i = 0; i < p.n_huge; i++)
		if (p.huge[i].need_guest)
			cr_expect_eq(p.huge[i].need_guest, 1024, "node %d", p.huge[i].node);
	place_argv_free(&a);
	place_plan_free(&p);
}

Test(place_plan, per_node_memory_is_checked)
{
	struct place_request rq = request(1, 3 * GIB, 1);

	rq.devsz = 64 * MIB;
	load("pack:1 numa:2(memory=2147483648) core:4 pu:1");
	build_fails(&rq, "node 0 has 2.00 GiB");
}

Test(place_plan, femud_and_qemu_arguments)
{
	struct place_request rq = request(2, 2 * GIB, 2);
	struct place_plan p;
	struct place_argv f = {0}, q = {0};
	char want[64];

	rq.devices = 2;
	rq.devsz = 512 * MIB;
	load("pack:2 numa:1(memory=17179869184) core:4 pu:1");
	build_ok(&rq, &p);
	cr_assert_eq(place_femud_argv(&rq, &p, &f), 0);
	cr_assert_eq(f.n, 9);
	cr_expect_str_eq(f.v[0], "femud");
	cr_expect_str_eq(f.v[1], "--lcores");
	snprintf(want, sizeof(want), "0@%u,1@%u,2@%u", p.lcore_cpus[0], p.lcore_cpus[1],
		 p.lcore_cpus[2]);
	cr_expect_str_eq(f.v[2], want);
	cr_expect_str_eq(f.v[4], "1");
	cr_expect_str_eq(f.v[6], "path=/tmp/s-0.sock,devsz_mb=512,queues=2");
	cr_expect_str_eq(f.v[8], "path=/tmp/s-1.sock,devsz_mb=512,queues=2");
	cr_expect_null(f.v[9]);
	cr_assert_eq(place_qemu_argv(&rq, &p, &q), 0);
	cr_expect_str_eq(q.v[1], "2");
	cr_expect_str_eq(q.v[3], "2048M");
	cr_expect_str_eq(q.v[5], "memory-backend-memfd,id=mem0,size=2048M,share=on,hugetlb=on,"
				 "hugetlbsize=2M,prealloc=on,host-nodes=0,policy=bind");
	cr_expect_str_eq(q.v[15], "vhost-user-blk-pci,chardev=vub1,num-queues=2");
	place_argv_free(&f);
	place_argv_free(&q);
	place_plan_free(&p);
}

Test(place_plan, no_hugepages_plan)
{
	struct place_request rq = request(1, 1 * GIB, 1);
	struct place_plan p;
	struct place_argv q = {0};

	rq.no_huge = true;
	load("pack:2 numa:1(memory=17179869184) core:4 pu:1");
	build_ok(&rq, &p);
	cr_expect_eq(p.n_huge, 0);
	cr_assert_eq(place_qemu_argv(&rq, &p, &q), 0);
	cr_expect(strstr(q.v[5], "hugetlb") == NULL, "%s", q.v[5]);
	place_argv_free(&q);
	place_plan_free(&p);
}

Test(place_plan, apply_reserves_what_is_missing)
{
	struct place_request rq = request(2, 2 * GIB, 2);
	struct place_plan p;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	load("pack:2 numa:1(memory=17179869184) core:4 pu:1");
	build_ok(&rq, &p);
	f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	place_emit_apply(f, &rq, &p);
	fclose(f);
	/* guest: 2 GiB / 2 MiB on node 0; femud: (1 GiB + 64 MiB) / 2 MiB on node 1 */
	cr_expect(strstr(text, "echo 1024 > /sys/devices/system/node/node0/hugepages/"
			       "hugepages-2048kB/nr_hugepages") != NULL,
		  "%s", text);
	cr_expect(strstr(text, "echo 544 > /sys/devices/system/node/node1/hugepages/"
			       "hugepages-2048kB/nr_hugepages") != NULL,
		  "%s", text);
	cr_expect(strstr(text, "\ntaskset -c ") != NULL, "%s", text);
	free(text);
	place_plan_free(&p);
}

Test(place_plan, bad_requests)
{
	struct place_request rq = request(0, 1 * GIB, 1);

	load("pack:1 numa:1 core:4 pu:1");
	build_fails(&rq, "at least 1");
	rq = request(1, 1 * GIB, 1);
	rq.devsz = 1000;
	build_fails(&rq, "multiple of 1 MiB");
	rq = request(1, 1 * GIB, 1);
	rq.huge_size = 4096;
	build_fails(&rq, "2M or 1G");
}
