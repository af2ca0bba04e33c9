/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lcores.h - reading DPDK EAL's --lcores syntax ("2-3", "0@2,1@3",
 * "(0-1)@(2,3)") into lcore ids and the CPU each runs on, so femud can check
 * CPUs and pick the main lcore before EAL starts.
 */
#ifndef FEMUD_LCORES_H
#define FEMUD_LCORES_H

#include <stddef.h>

#define FEMUD_MAX_LCORES 128

struct femud_lcore {
	unsigned id; /* EAL lcore id */
	int cpu;     /* first OS CPU it may run on */
};

struct femud_lcores {
	struct femud_lcore l[FEMUD_MAX_LCORES]; /* in command-line order */
	unsigned n;
};

/* Returns 0, or -EINVAL with a message naming --lcores in err. */
int femud_lcores_parse(const char *s, struct femud_lcores *out, char *err, size_t errlen);

#endif /* FEMUD_LCORES_H */
