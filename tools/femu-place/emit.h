/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tools/femu-place/emit.h - femu-place's outputs: the femud
 * and QEMU command lines derived from a plan, and the plan as text, JSON or
 * the shell commands that apply it (--apply).
 */
#ifndef FEMUD_TOOLS_PLACE_EMIT_H
#define FEMUD_TOOLS_PLACE_EMIT_H

#include <stdio.h>

#include "tools/femu-place/plan.h"

/* A NULL-terminated argument vector of owned strings. */
struct place_argv {
	unsigned n, cap;
	char **v;
};

void place_argv_free(struct place_argv *a);
/* femud's argv (argv[0] = rq->femud_path) and QEMU's placement options. */
int place_femud_argv(const struct place_request *rq, const struct place_plan *p,
		     struct place_argv *a);
int place_qemu_argv(const struct place_request *rq, const struct place_plan *p,
		    struct place_argv *a);
/* QEMU's options that do not depend on placement (-machine, -accel, -cpu). */
int place_qemu_base_argv(struct place_argv *a);

void place_emit_text(FILE *out, const struct place_topo *t, const struct place_request *rq,
		     const struct place_plan *p);
void place_emit_json(FILE *out, const struct place_topo *t, const struct place_request *rq,
		     const struct place_plan *p);
void place_emit_apply(FILE *out, const struct place_request *rq, const struct place_plan *p);

#endif
