/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test/unit/numa/test_place.c - Criterion tests of numa/place.c:
 * topology loading (synthetic, XML, host), poller checks, the
 * `--lcores auto` picker, size parsing, CPU list formatting and the
 * isolation notes (isolcpus=, nohz_full= read from a fake sysfs).
 */
#include <criterion/criterion.h>
#include <hwloc.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "numa/place.h"

/* 2 packages, 1 node each, 4 cores x 2 PUs: CPUs 2k and 2k+1 are siblings. */
#define TOPO_2S_SMT "pack:2 numa:1(memory=17179869184) core:4 pu:2"
/* Sub-NUMA clustering: 2 packages x 2 nodes x 2 cores x 2 PUs. */
#define TOPO_SNC "pack:2 numa:2 core:2 pu:2"

static struct place_topo *load(const char *spec)
{
	struct place_topo *t = NULL;
	char err[256] = "";

	cr_assert_eq(place_topology_load(&t, spec, err, sizeof(err)), 0, "%s: %s", spec, err);
	cr_assert_not_null(t);
	return t;
}

Test(place_topo, synthetic_counts_and_mapping)
{
	struct place_topo *t = load(TOPO_2S_SMT);
	const struct place_cpu *c5, *c9;

	cr_expect_eq(t->n_pkgs, 2);
	cr_expect_eq(t->n_nodes, 2);
	cr_expect_eq(t->n_cores, 8);
	cr_expect_eq(t->n_cpus, 16);
	cr_expect(place_has_smt(t));
	cr_expect_not(t->is_host);
	c5 = place_cpu_find(t, 5);
	c9 = place_cpu_find(t, 9);
	cr_assert_not_null(c5);
	cr_assert_not_null(c9);
	cr_expect_eq(c5->pkg, 0);
	cr_expect_eq(c5->node, 0);
	cr_expect_eq(c9->pkg, 1);
	cr_expect_eq(c9->node, 1);
	/* siblings share a core, neighbours across a core boundary do not */
	cr_expect_eq(place_cpu_find(t, 4)->core, c5->core);
	cr_expect_neq(place_cpu_find(t, 6)->core, c5->core);
	cr_expect_null(place_cpu_find(t, 16));
	cr_expect_eq(place_node_find(t, 1)->memory, 17179869184ULL);
	cr_expect_eq(place_node_find(t, 1)->n_cores, 4);
	place_topology_free(t);
}

Test(place_topo, snc_nodes_belong_to_packages)
{
	struct place_topo *t = load(TOPO_SNC);

	cr_expect_eq(place_node_count(t), 4);
	cr_expect_eq(place_node_package(t, 0), 0);
	cr_expect_eq(place_node_package(t, 1), 0);
	cr_expect_eq(place_node_package(t, 2), 1);
	cr_expect_eq(place_node_package(t, 3), 1);
	cr_expect_eq(place_node_package(t, 4), -1);
	cr_expect(place_node_exists(t, 3));
	cr_expect_not(place_node_exists(t, 4));
	cr_expect_not(place_node_exists(t, -1));
	/* CPUs 4-7 are the second node of package 0 */
	cr_expect_eq(place_cpu_find(t, 5)->node, 1);
	cr_expect_eq(place_cpu_find(t, 5)->pkg, 0);
	place_topology_free(t);
}

Test(place_topo, bad_spec_is_an_error)
{
	struct place_topo *t = (struct place_topo *)1;
	char err[256] = "";

	cr_expect_eq(place_topology_load(&t, "pack:two banana", err, sizeof(err)), -1);
	cr_expect_null(t);
	cr_expect(strstr(err, "synthetic") != NULL, "err: %s", err);
}

/* Export a synthetic topology to XML with an extra 2 MiB page pool. */
static void write_xml_with_hugepages(const char *path)
{
	hwloc_topology_t h;
	char *xml = NULL, *at, *out;
	int len = 0;
	const char *pool = "<page_type size=\"2097152\" count=\"100\"/>";
	FILE *f;

	cr_assert_eq(hwloc_topology_init(&h), 0);
	cr_assert_eq(hwloc_topology_set_synthetic(h, TOPO_2S_SMT), 0);
	cr_assert_eq(hwloc_topology_load(h), 0);
	cr_assert_eq(hwloc_topology_export_xmlbuffer(h, &xml, &len, 0), 0);
	at = strstr(xml, "<page_type size=\"4096\"");
	cr_assert_not_null(at);
	out = malloc(strlen(xml) + strlen(pool) + 1);
	cr_assert_not_null(out);
	memcpy(out, xml, (size_t)(at - xml));
	strcpy(out + (at - xml), pool);
	strcat(out, at);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(out, f);
	fclose(f);
	free(out);
	hwloc_free_xmlbuffer(h, xml);
	hwloc_topology_destroy(h);
}

Test(place_topo, xml_file_with_hugepage_pool)
{
	char path[] = "/tmp/test_place_XXXXXX";
	int fd = mkstemp(path);
	struct place_topo *t;
	uint64_t fr = 0;

	cr_assert_geq(fd, 0);
	close(fd);
	write_xml_with_hugepages(path);
	t = load(path);
	cr_expect_eq(t->n_cpus, 16);
	cr_expect_eq(t->n_pkgs, 2);
	/* the pool was inserted into the first node only */
	cr_expect_eq(place_node_pages(t, 0, 2097152, &fr), 100);
	cr_expect_eq(fr, 100);
	cr_expect_eq(place_node_pages(t, 1, 2097152, &fr), 0);
	cr_expect_eq(fr, 0);
	place_topology_free(t);
	unlink(path);
}

Test(place_topo, host_has_every_allowed_cpu)
{
	struct place_topo *t = load(NULL);
	cpu_set_t set;
	int cpu;

	cr_expect(t->is_host);
	cr_expect_str_eq(t->source, "host");
	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			cr_expect_not_null(place_cpu_find(t, (unsigned)cpu), "CPU %d", cpu);
	cr_expect_geq(t->n_nodes, 1);
	place_topology_free(t);
}

/* ------------------------------------------------------------ checks */

Test(place_check, clean_pollers_give_no_warning)
{
	struct place_topo *t = load(TOPO_2S_SMT);
	unsigned cpus[] = {10, 12, 14};
	char msgs[1024];

	cr_expect_eq(place_check_pollers(t, cpus, 3, 1, 0, msgs, sizeof(msgs)), 0, "%s", msgs);
	cr_expect_str_empty(msgs);
	place_topology_free(t);
}

Test(place_check, smt_siblings_warn)
{
	struct place_topo *t = load(TOPO_2S_SMT);
	unsigned cpus[] = {10, 11, 12};
	char msgs[1024];

	cr_expect_eq(place_check_pollers(t, cpus, 3, 1, 0, msgs, sizeof(msgs)), 1, "%s", msgs);
	cr_expect(strstr(msgs, "10 and 11 are SMT siblings") != NULL, "%s", msgs);
	place_topology_free(t);
}

Test(place_check, off_package_and_unknown_and_duplicate)
{
	struct place_topo *t = load(TOPO_2S_SMT);
	unsigned cpus[] = {2, 99, 12, 12};
	char msgs[2048];
	int n = place_check_pollers(t, cpus, 4, 1, 0, msgs, sizeof(msgs));

	cr_expect_eq(n, 3, "%s", msgs);
	cr_expect(strstr(msgs, "poller CPU 2 is on package 0") != NULL, "%s", msgs);
	cr_expect(strstr(msgs, "CPU 99 does not exist") != NULL, "%s", msgs);
	cr_expect(strstr(msgs, "CPU 12 is used by two pollers") != NULL, "%s", msgs);
	/* one warning per line */
	cr_expect_eq(strchr(msgs, '\n') != NULL, 1);
	place_topology_free(t);
}

Test(place_check, snc_other_node_same_package_is_fine)
{
	struct place_topo *t = load(TOPO_SNC);
	unsigned cpus[] = {8, 12}; /* nodes 2 and 3, both package 1 */
	char msgs[1024];

	cr_expect_eq(place_check_pollers(t, cpus, 2, 2, 0, msgs, sizeof(msgs)), 0, "%s", msgs);
	place_topology_free(t);
}

Test(place_check, missing_mbe_node_is_an_error)
{
	struct place_topo *t = load(TOPO_2S_SMT);
	unsigned cpus[] = {8};
	char msgs[512];

	cr_expect_eq(place_check_pollers(t, cpus, 1, 5, 0, msgs, sizeof(msgs)), -1);
	cr_expect(strstr(msgs, "node 5 does not exist") != NULL, "%s", msgs);
	place_topology_free(t);
}

/* A child process that sleeps, pinned to exactly one CPU. */
static pid_t pinned_child(int cpu)
{
	cpu_set_t one;
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	cr_assert_eq(sched_setaffinity(pid, sizeof(one), &one), 0);
	return pid;
}

static int first_allowed_cpu(void)
{
	cpu_set_t set;
	int cpu;

	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return -1;
}

Test(place_check, qemu_affinity_overlap)
{
	int cpu = first_allowed_cpu();
	pid_t child = pinned_child(cpu);
	unsigned cpus[] = {(unsigned)cpu, (unsigned)cpu + 1, 4000};
	char msgs[1024] = "";
	char want[64];
	int n = place_check_pid_overlap(cpus, 3, child, msgs, sizeof(msgs));

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* the child may run only on `cpu`: exactly that one overlaps */
	cr_expect_eq(n, 1, "%s", msgs);
	snprintf(want, sizeof(want), "poller CPU %d: process %d", cpu, (int)child);
	cr_expect(strstr(msgs, want) != NULL, "%s", msgs);
}

Test(place_check, qemu_pid_through_check_pollers)
{
	struct place_topo *t = load(NULL);
	int cpu = first_allowed_cpu();
	pid_t child = pinned_child(cpu);
	unsigned cpus[] = {(unsigned)cpu};
	char msgs[1024];
	int n = place_check_pollers(t, cpus, 1, -1, child, msgs, sizeof(msgs));
	char want[128], name[64];

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	cr_expect_eq(n, 1, "%s", msgs);
	/* the frontend is named by its executable (here: this test, forked) */
	snprintf(want, sizeof(want), "process %d (%s) may also run on it", (int)child,
		 place_process_name(getpid(), name, sizeof(name)));
	cr_expect(strstr(msgs, want) != NULL, "'%s' lacks '%s'", msgs, want);
	cr_expect(strstr(name, "test_") == name, "named %s", name);
	place_topology_free(t);
}

Test(place_check, process_named_by_its_executable)
{
	char name[64];
	pid_t child = fork();

	cr_assert_str_eq(place_process_name(getpid(), name, sizeof(name)), "test_numa_place");
	cr_assert_geq(child, 0);
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0); /* gone: no exe, no comm */
	cr_assert_str_eq(place_process_name(child, name, sizeof(name)), "unknown");
}

Test(place_check, vanished_pid_is_reported)
{
	pid_t child = fork();
	unsigned cpus[] = {0};
	char msgs[512] = "";

	cr_assert_geq(child, 0);
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0); /* reaped: the pid no longer exists */
	cr_expect_eq(place_check_pid_overlap(cpus, 1, child, msgs, sizeof(msgs)), -1);
	cr_expect(strstr(msgs, "cannot read the CPU affinity") != NULL, "%s", msgs);
}

/* ------------------------------------------------------------ auto lcores */

Test(place_auto, avoids_cpu0_core_and_siblings)
{
	struct place_topo *t = load("pack:1 numa:1 core:4 pu:2");
	unsigned cpus[4];
	char err[256] = "";

	cr_assert_eq(place_auto_lcores(t, 0, 3, cpus, err, sizeof(err)), 3, "%s", err);
	cr_expect_eq(cpus[0], 2);
	cr_expect_eq(cpus[1], 4);
	cr_expect_eq(cpus[2], 6);
	place_topology_free(t);
}

Test(place_auto, uses_cpu0_core_last_when_no_room)
{
	struct place_topo *t = load("pack:1 numa:1 core:4 pu:2");
	unsigned cpus[4];
	char err[256] = "";

	cr_assert_eq(place_auto_lcores(t, 0, 4, cpus, err, sizeof(err)), 4, "%s", err);
	cr_expect_eq(cpus[3], 0);
	cr_expect_eq(place_auto_lcores(t, 0, 5, cpus, err, sizeof(err)), -1);
	cr_expect(strstr(err, "has 4 physical cores") != NULL, "%s", err);
	place_topology_free(t);
}

Test(place_auto, stays_on_the_node)
{
	struct place_topo *t = load(TOPO_SNC);
	unsigned cpus[2];
	char err[256] = "";
	int i;

	cr_assert_eq(place_auto_lcores(t, 3, 2, cpus, err, sizeof(err)), 2, "%s", err);
	for (i = 0; i < 2; i++)
		cr_expect_eq(place_cpu_find(t, cpus[i])->node, 3, "CPU %u", cpus[i]);
	cr_expect_neq(place_cpu_find(t, cpus[0])->core, place_cpu_find(t, cpus[1])->core);
	cr_expect_eq(place_auto_lcores(t, 9, 1, cpus, err, sizeof(err)), -1);
	cr_expect(strstr(err, "node 9 does not exist") != NULL, "%s", err);
	place_topology_free(t);
}

Test(place_auto, no_smt)
{
	struct place_topo *t = load("pack:1 core:3 pu:1");
	unsigned cpus[2];
	char err[256] = "";

	cr_expect_not(place_has_smt(t));
	cr_assert_eq(place_auto_lcores(t, 0, 2, cpus, err, sizeof(err)), 2, "%s", err);
	cr_expect_eq(cpus[0], 1);
	cr_expect_eq(cpus[1], 2);
	place_topology_free(t);
}

/* ------------------------------------------------------------ helpers */

Test(place_util, format_cpulist)
{
	unsigned cpus[] = {11, 3, 0, 1, 2, 8, 10};
	unsigned one[] = {7};
	char buf[64];

	cr_expect_str_eq(place_format_cpulist(cpus, 7, buf, sizeof(buf)), "0-3,8,10-11");
	cr_expect_str_eq(place_format_cpulist(one, 1, buf, sizeof(buf)), "7");
	cr_expect_str_eq(place_format_cpulist(one, 0, buf, sizeof(buf)), "");
}

/* ------------------------------------------------------------ isolation */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* A fake /sys/devices/system/cpu: isolcpus=1-2,6 nohz_full=2,5-6. */
Test(place, isolation_notes_pollers_the_kernel_does_not_keep_free)
{
	char dir[] = "/tmp/femud-iso-XXXXXX";
	const unsigned cpus[] = {1, 2, 3, 5, 6};
	char msgs[2048] = "";

	cr_assert_not_null(mkdtemp(dir));
	write_file(dir, "isolated", "1-2,6\n");
	write_file(dir, "nohz_full", "2,5-6\n");
	cr_assert_eq(place_check_isolation(dir, cpus, 5, msgs, sizeof(msgs)), 3, "%s", msgs);
	cr_assert(strstr(msgs, "poller CPU 1 is not in nohz_full=: the timer tick") != NULL, "%s",
		  msgs);
	cr_assert(strstr(msgs, "poller CPU 3 is not in isolcpus= or nohz_full=") != NULL, "%s",
		  msgs);
	cr_assert(strstr(msgs, "poller CPU 5 is not in isolcpus=: other tasks") != NULL, "%s",
		  msgs);
	cr_assert(strstr(msgs, "CPU 2 ") == NULL && strstr(msgs, "CPU 6 ") == NULL, "%s", msgs);

	/* empty lists (the usual "\n") and missing files: nothing is isolated */
	write_file(dir, "isolated", "\n");
	msgs[0] = '\0';
	cr_assert_eq(place_check_isolation(dir, cpus, 2, msgs, sizeof(msgs)), 2, "%s", msgs);
	msgs[0] = '\0';
	cr_assert_eq(place_check_isolation("/nonexistent-femud", cpus, 1, msgs, sizeof(msgs)), 1);
	cr_assert(strstr(msgs, "poller CPU 1 is not in isolcpus= or nohz_full=") != NULL, "%s",
		  msgs);
	cr_assert_eq(place_check_isolation(dir, cpus, 0, NULL, 0), 0);
	char path[256];
	snprintf(path, sizeof(path), "%s/isolated", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/nohz_full", dir);
	unlink(path);
	rmdir(dir);
}
