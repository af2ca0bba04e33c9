/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * placement.h - femud's placement policy: which lcores run the pollers
 * (--lcores, its default and "auto[:N]"), which NUMA node holds the backends
 * (--mbe-node, default: the first poller's node), and the warnings about
 * where pollers and frontends run (hwloc, numa/place.c), at start-up and
 * whenever a frontend connects.  Never fatal except for options that name
 * CPUs or nodes this host does not have.  Control path only (one thread).
 */
#ifndef FEMUD_PLACEMENT_H
#define FEMUD_PLACEMENT_H

#include <stddef.h>
#include <sys/types.h>

#include "daemon/lcores.h"
#include "daemon/options.h"

struct femud_placement {
	const struct femud_opts *opts;
	char lcores_str[256];	    /* the EAL --lcores argument */
	struct femud_lcores lcores; /* lcores_str parsed: l[0] is the main lcore */
	int mbe_node;		    /* NUMA node of every backend */
};

/*
 * Choose the lcores and the backend node for o, check them against this
 * host, and log (never fail on) placement warnings.  Returns 0, or -EINVAL
 * with a message naming the option in err.  p keeps a pointer to o.
 */
int femud_placement_resolve(struct femud_placement *p, const struct femud_opts *o, char *err,
			    size_t errlen);

/*
 * The lcore ids that poll into ids (FEMUD_MAX_LCORES long): every lcore
 * after the main one, or the main lcore alone when it is the only one.
 * Returns their number; *main_polls says which case it is.
 */
unsigned femud_placement_pollers(const struct femud_placement *p, unsigned *ids, bool *main_polls);

/*
 * A frontend (process pid, 0 = unknown) just connected to path: warn when
 * it may run on a poller's CPU.  Any control thread (rte_vhost's).
 */
void femud_placement_check_frontend(const struct femud_placement *p, const char *path, pid_t pid);

#endif /* FEMUD_PLACEMENT_H */
