/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_ab_phase.c - in-run A/B (pmd_ab.h): the poller's phase clock, the copy
 * phases and the report.  Compiled only into -Dab_phase=N builds (meson);
 * PMD_AB_PHASE_REQUESTS (pmd_measure.h) is N.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>

#include "ftl/fm_model.h"
#include "pmd/blk_req.h"
#include "pmd/pmd_ab.h"
#include "pmd/pmd_clock.h"
#include "pmd/pmd_measure.h"
#include "pmd/vq.h"

#define AB_PHASE PMD_AB_PHASE_REQUESTS
_Static_assert(AB_PHASE > 0, "pmd_ab_phase.c belongs to -Dab_phase=N builds only (N > 0)");

unsigned pmd_ab_variant;

#define AB_COPY_SLOTS_DEFAULT 32 /* as femu-floor's copy rate */
#define AB_COPY_RING 8		 /* offsets kept ahead: a power of two > PMD_VQ_LOOKAHEAD */

static struct {
	bool ready;
	unsigned mask;
	double cut;	     /* requests/s between the slow and the fast mode */
	uint32_t copy_bytes; /* $FEMUD_AB_COPY: copy phases of reads this long (0: off) */
	uint64_t rnd;
	/* copy_slots buffers of copy_bytes, back to back (a driver's data slots) */
	uint8_t *dst;
	unsigned copy_slots; /* $FEMUD_AB_COPY_SLOTS, default AB_COPY_SLOTS_DEFAULT */
	uint64_t served, next, last;
	unsigned n;
	uint64_t dur[PMD_AB_MAX_PHASES];
	uint8_t on[PMD_AB_MAX_PHASES];
} ab;

static void ab_setup(void)
{
	const char *m = getenv("FEMUD_AB_MASK"), *c = getenv("FEMUD_AB_CUT");

	ab.mask = m != NULL ? (unsigned)strtoul(m, NULL, 0) : 1u;
	ab.cut = c != NULL ? strtod(c, NULL) : 900000.0;
	c = getenv("FEMUD_AB_COPY");
	ab.copy_bytes = c != NULL ? (uint32_t)strtoul(c, NULL, 0) & ~511u : 0;
	if (ab.copy_bytes > (1u << 20))
		ab.copy_bytes = 1u << 20;
	ab.rnd = 0x2545f4914f6cdd1dull;
	c = getenv("FEMUD_AB_COPY_SLOTS");
	ab.copy_slots = c != NULL ? (unsigned)strtoul(c, NULL, 0) : AB_COPY_SLOTS_DEFAULT;
	if (ab.copy_slots == 0 || ab.copy_slots > 4096)
		ab.copy_slots = AB_COPY_SLOTS_DEFAULT;
	if (ab.copy_bytes != 0) {
		ab.dst = aligned_alloc(4096, (size_t)ab.copy_slots * ab.copy_bytes);
		if (ab.dst == NULL)
			ab.copy_bytes = 0;
		else
			memset(ab.dst, 0, (size_t)ab.copy_slots * ab.copy_bytes);
	}
	ab.next = AB_PHASE;
	ab.ready = true;
}

void pmd_ab_served(unsigned n)
{
	uint64_t t;

	if (unlikely(!ab.ready))
		ab_setup();
	ab.served += n;
	if (likely(ab.served < ab.next))
		return;
	t = rte_rdtsc();
	if (ab.last != 0 && ab.n < PMD_AB_MAX_PHASES) {
		ab.dur[ab.n] = t - ab.last;
		ab.on[ab.n++] = pmd_ab_variant != 0;
	}
	ab.last = t;
	ab.next = ab.served + AB_PHASE;
	pmd_ab_variant = pmd_ab_variant != 0 ? 0 : ab.mask;
}

bool pmd_ab_copy_turn(void)
{
	return pmd_ab_variant != 0 && ab.copy_bytes != 0;
}

/* xorshift64*, as femu-floor draws its blocks */
static uint64_t ab_rnd(void)
{
	ab.rnd ^= ab.rnd >> 12;
	ab.rnd ^= ab.rnd << 25;
	ab.rnd ^= ab.rnd >> 27;
	return ab.rnd * 2685821657736338717ull;
}

/* Hint len bytes of the read at off + from through the sweep's own (second-level) hint call. */
static void ab_copy_hint(const struct pmd_blk_target *t, uint64_t off, uint32_t from, uint32_t len)
{
	const struct pmd_chain_hint h = {
	    .type = VIRTIO_BLK_T_IN, .sector = (off + from) / 512, .data_len = len};

	pmd_blk_req_prefetch(t, &h, false);
}

void pmd_ab_copy_phase(const struct pmd_blk_target *t)
{
	const uint32_t len = ab.copy_bytes;
	const uint32_t first = len > PMD_VQ_HINT_SPLIT_BYTES ? PMD_VQ_HINT_SPLIT_BYTES : len;
	const uint64_t units = t->capacity / len;
	uint64_t off[AB_COPY_RING];
	uint64_t now = pmd_now_ns();
	struct pmd_blk_done done;
	unsigned i;

	if (units == 0) {
		pmd_ab_served(AB_PHASE);
		return;
	}
	for (i = 0; i < PMD_VQ_LOOKAHEAD; i++) {
		off[i] = (ab_rnd() % units) * len;
		ab_copy_hint(t, off[i], 0, len);
	}
	for (i = 0; i < AB_PHASE; i++) {
		const unsigned ahead = (i + PMD_VQ_LOOKAHEAD) % AB_COPY_RING;
		const unsigned rest = (i + PMD_VQ_HINT_REST_AHEAD) % AB_COPY_RING;
		struct fm_iov iov = {.base = ab.dst + (size_t)(i % ab.copy_slots) * len,
				     .len = len};

		off[ahead] = (ab_rnd() % units) * len;
		ab_copy_hint(t, off[ahead], 0, first);
		if (i + PMD_VQ_HINT_REST_AHEAD >= PMD_VQ_LOOKAHEAD)
			ab_copy_hint(t, off[rest], first, len - first);
		pmd_blk_req_read(t, off[i % AB_COPY_RING], len, &iov, 1, FM_REQ_PREFETCHED, now,
				 &done);
	}
	pmd_ab_served(AB_PHASE);
}

static void ab_line(FILE *out, const char *what, double lo, double hi, double hz)
{
	struct pmd_ab_summary s;

	if (pmd_ab_summarize(ab.dur, ab.on, ab.n, AB_PHASE, hz, lo, hi, &s) == 0) {
		fprintf(out, "ab: %s: no phase triple\n", what);
		return;
	}
	fprintf(out,
		"ab: %s: %u triples, variant/baseline speed median %.4f (q1 %.4f, q3 %.4f), "
		"variant ahead in %u; median speeds variant %.0f/s, baseline %.0f/s\n",
		what, s.triples, s.median, s.q1, s.q3, s.ahead, s.var_rate, s.base_rate);
}

void pmd_ab_report(FILE *out)
{
	double hz = pmd_clock.mult != 0
			? (double)PMD_NS_PER_S * 4294967296.0 / (double)pmd_clock.mult
			: 1.0;
	char what[96];

	fprintf(out, "ab: mask %#x, %u requests a phase, %u phases\n", ab.mask, (unsigned)AB_PHASE,
		ab.n);
	ab_line(out, "all", 0.0, 1e300, hz);
	snprintf(what, sizeof(what), "fast mode (baseline >= %.0f/s)", ab.cut);
	ab_line(out, what, ab.cut, 1e300, hz);
	snprintf(what, sizeof(what), "slow mode (baseline < %.0f/s)", ab.cut);
	ab_line(out, what, 0.0, ab.cut, hz);
	if (ab.copy_bytes != 0)
		fprintf(out,
			"ab: copy phases of %u-byte reads through the model: the variant is the "
			"copy, so 1/median is the serving rate over the copy rate\n",
			ab.copy_bytes);
}
