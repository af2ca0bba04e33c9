/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * placement.c - femud's placement policy (see placement.h): default and
 * automatic lcore choice, CPU and node checks, poller and frontend
 * placement warnings.  The topology checks themselves live in numa/place.c.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "daemon/log.h"
#include "daemon/placement.h"
#include "ftl/num_parse.h"
#include "numa/mbe.h"
#include "numa/place.h"

/* Default lcore list: one lcore on the last CPU this process may use. */
static int placement_default_lcores(struct femud_placement *p)
{
	cpu_set_t set;
	int last = -1;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -errno;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			last = c;
	if (last < 0)
		return -ENOENT;
	snprintf(p->lcores_str, sizeof(p->lcores_str), "0@%d", last);
	return 0;
}

static bool placement_cpu_listed(const unsigned *cpus, unsigned n, unsigned cpu)
{
	for (unsigned i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return true;
	return false;
}

/* lcore i on cpus[i]; with share_first the main lcore 0 also sits on cpus[0]. */
static void placement_format_lcores(struct femud_placement *p, const unsigned *cpus, unsigned n,
				    bool share_first)
{
	size_t len = 0;
	unsigned id = 0;

	if (share_first)
		len +=
		    (size_t)snprintf(p->lcores_str, sizeof(p->lcores_str), "%u@%u,", id++, cpus[0]);
	for (unsigned i = 0; i < n && len < sizeof(p->lcores_str); i++)
		len += (size_t)snprintf(p->lcores_str + len, sizeof(p->lcores_str) - len, "%s%u@%u",
					i ? "," : "", id++, cpus[i]);
}

/*
 * --lcores auto[:N]: N pollers (default 1) on the backend's node, one per
 * physical core, avoiding CPU 0's core when there is room (numa/place.c);
 * plus a main lcore on another core when the node has one to spare.
 */
static int placement_auto_lcores(struct femud_placement *p, struct place_topo *t, char *err,
				 size_t errlen)
{
	unsigned cpus[FEMUD_MAX_LCORES];
	uint64_t pollers = 1;
	int node = p->opts->mbe_node >= 0 ? p->opts->mbe_node : 0;
	const char *colon = strchr(p->opts->lcores, ':');
	int n;

	if ((colon != NULL && num_parse(colon + 1, 0, 1, FEMUD_MAX_LCORES - 1, &pollers) != 0) ||
	    (colon == NULL && strcmp(p->opts->lcores, "auto") != 0)) {
		snprintf(err, errlen, "--lcores '%s': expected auto or auto:N (N pollers)",
			 p->opts->lcores);
		return -EINVAL;
	}
	n = place_auto_lcores(t, node, (unsigned)pollers + 1, cpus, err, errlen);
	if (n > 0 && placement_cpu_listed(cpus, (unsigned)n, 0))
		n = -1; /* no room for a separate main lcore away from CPU 0 */
	if (n > 0) {
		placement_format_lcores(p, cpus, (unsigned)n, false);
		return 0;
	}
	err[0] = '\0';
	n = place_auto_lcores(t, node, (unsigned)pollers, cpus, err, errlen);
	if (n < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "--lcores %s: %s", p->opts->lcores, why);
		return -EINVAL;
	}
	/* One lcore polls on the main lcore; several: the idle main lcore shares the first CPU. */
	placement_format_lcores(p, cpus, (unsigned)n, n > 1);
	return 0;
}

/* The CPUs of the polling lcores into cpus (FEMUD_MAX_LCORES long); returns their number. */
static unsigned placement_poller_cpus(const struct femud_placement *p, unsigned *cpus)
{
	unsigned n = 0;

	for (unsigned i = p->lcores.n > 1 ? 1 : 0; i < p->lcores.n; i++)
		cpus[n++] = (unsigned)p->lcores.l[i].cpu;
	return n;
}

unsigned femud_placement_pollers(const struct femud_placement *p, unsigned *ids, bool *main_polls)
{
	unsigned n = 0;

	*main_polls = p->lcores.n == 1;
	for (unsigned i = *main_polls ? 0 : 1; i < p->lcores.n; i++)
		ids[n++] = p->lcores.l[i].id;
	return n;
}

void femud_placement_check_frontend(const struct femud_placement *p, const char *path, pid_t pid)
{
	unsigned cpus[FEMUD_MAX_LCORES];
	unsigned n;
	char msgs[1024] = "", prefix[256];

	if (pid <= 0 || pid == p->opts->qemu_pid)
		return; /* unknown, or already checked at start */
	n = placement_poller_cpus(p, cpus);
	if (place_check_pid_overlap(cpus, n, pid, msgs, sizeof(msgs)) <= 0)
		return;
	snprintf(prefix, sizeof(prefix), "warning: placement: %s: frontend pid %d: ", path,
		 (int)pid);
	femud_log_lines(LOG_WARNING, prefix, msgs);
}

/* Warnings about where the pollers are (hwloc), notes on their isolation: never fatal. */
static void placement_check_pollers(const struct femud_placement *p, const struct place_topo *t)
{
	unsigned cpus[FEMUD_MAX_LCORES];
	unsigned n = placement_poller_cpus(p, cpus);
	char msgs[2048] = "";

	if (place_check_pollers(t, cpus, n, p->mbe_node, p->opts->qemu_pid, msgs, sizeof(msgs)) > 0)
		femud_log_lines(LOG_WARNING, "warning: placement: ", msgs);
	msgs[0] = '\0';
	if (place_check_isolation("/sys/devices/system/cpu", cpus, n, msgs, sizeof(msgs)) > 0)
		femud_log_lines(LOG_NOTICE, "note: placement: ", msgs);
}

static int placement_check_lcore_cpus(const struct femud_placement *p, char *err, size_t errlen)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	for (unsigned i = 0; i < p->lcores.n; i++) {
		int cpu = p->lcores.l[i].cpu;

		if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set)) {
			snprintf(err, errlen,
				 "--lcores '%s': CPU %d does not exist or is not allowed for this "
				 "process",
				 p->lcores_str, cpu);
			return -EINVAL;
		}
	}
	return 0;
}

/* The first poller: lcore 1 of the list, or the main lcore when it is alone. */
static int placement_first_poller_cpu(const struct femud_placement *p)
{
	return p->lcores.l[p->lcores.n > 1 ? 1 : 0].cpu;
}

static int placement_resolve_lcores(struct femud_placement *p, struct place_topo *topo, char *err,
				    size_t errlen)
{
	const struct femud_opts *o = p->opts;
	int rc;

	if (o->lcores == NULL)
		rc = placement_default_lcores(p);
	else if (strncmp(o->lcores, "auto", 4) == 0)
		rc = placement_auto_lcores(p, topo, err, errlen);
	else
		rc = snprintf(p->lcores_str, sizeof(p->lcores_str), "%s", o->lcores) >=
			     (int)sizeof(p->lcores_str)
			 ? -EINVAL
			 : 0;
	if (rc != 0) {
		if (*err == '\0')
			snprintf(err, errlen, "--lcores: cannot choose lcores (%s)", strerror(-rc));
		return -EINVAL;
	}
	rc = femud_lcores_parse(p->lcores_str, &p->lcores, err, errlen);
	if (rc == 0)
		rc = placement_check_lcore_cpus(p, err, errlen);
	if (rc != 0)
		return rc;
	p->mbe_node = o->mbe_node;
	if (p->mbe_node < 0) {
		p->mbe_node = mbe_node_of_cpu((unsigned)placement_first_poller_cpu(p));
		if (p->mbe_node < 0)
			p->mbe_node = 0;
	}
	return 0;
}

int femud_placement_resolve(struct femud_placement *p, const struct femud_opts *o, char *err,
			    size_t errlen)
{
	struct place_topo *topo = NULL;
	int rc;

	p->opts = o;
	if (o->mbe_node >= 0 && !mbe_node_exists(o->mbe_node)) {
		snprintf(err, errlen,
			 "--mbe-node %d: NUMA node does not exist (this host has nodes 0-%d)",
			 o->mbe_node, mbe_max_node());
		return -EINVAL;
	}
	if (place_topology_load(&topo, NULL, err, errlen) != 0)
		return -EINVAL;
	rc = placement_resolve_lcores(p, topo, err, errlen);
	if (rc == 0)
		placement_check_pollers(p, topo);
	place_topology_free(topo);
	return rc;
}
