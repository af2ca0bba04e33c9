/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_cost.c - the cost breakdown (pmd_measure.h): the calling thread's copy
 * tick count and the breakdown's printers.  Compiled only into
 * -Dcost_breakdown=true builds (meson); reads queue counters, writes only
 * to the stream it is given.
 */
#include "pmd/pmd_measure.h"
#include "pmd/pmd_stats.h"

_Static_assert(PMD_COST_ON, "pmd_cost.c belongs to -Dcost_breakdown=true builds only");

__thread uint64_t pmd_cost_copy_ticks;

void pmd_vq_cost_print(FILE *out, unsigned qid, const struct pmd_vq_stats *c, uint64_t requests,
		       uint64_t tsc_hz)
{
	double k = requests && tsc_hz ? 1e9 / (double)tsc_hz / (double)requests : 0;
	uint64_t total = c->cost_ring + c->cost_hint + c->cost_validate + c->cost_model +
			 c->cost_copy + c->cost_complete + c->cost_publish;

	fprintf(out,
		"  q%u cost_ns_per_request ring %.1f hint %.1f validate %.1f model %.1f copy %.1f "
		"complete %.1f publish %.1f total %.1f requests_per_sweep %.1f\n",
		qid, (double)c->cost_ring * k, (double)c->cost_hint * k,
		(double)c->cost_validate * k, (double)c->cost_model * k, (double)c->cost_copy * k,
		(double)c->cost_complete * k, (double)c->cost_publish * k, (double)total * k,
		c->cost_sweeps ? (double)requests / (double)c->cost_sweeps : 0.0);
}

void pmd_vq_cost_json(FILE *out, const struct pmd_vq_stats *c, uint64_t requests,
		      double ticks_per_ns)
{
	double k = requests ? 1.0 / ticks_per_ns / (double)requests : 0;

	if (c->cost_sweeps == 0)
		return;
	fprintf(out,
		", \"cost_ns\": {\"ring\": %.1f, \"hint\": %.1f, \"validate\": %.1f, "
		"\"model\": %.1f, \"copy\": %.1f, \"complete\": %.1f, \"publish\": %.1f}, "
		"\"requests_per_sweep\": %.1f",
		(double)c->cost_ring * k, (double)c->cost_hint * k, (double)c->cost_validate * k,
		(double)c->cost_model * k, (double)c->cost_copy * k, (double)c->cost_complete * k,
		(double)c->cost_publish * k, (double)requests / (double)c->cost_sweeps);
}
