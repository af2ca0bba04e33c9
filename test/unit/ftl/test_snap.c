/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_snap.c - the copy-on-write snapshot (ftl/fm_snap.c): what the saver
 * gets for each chunk is the content at the snapshot's start, whether a
 * writer changed the chunk before the saver read it or after; a chunk is
 * copied at most once; a short last chunk; a writer racing the saver on
 * another thread never makes the saver see new data.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ftl/fm_snap.h"

#define CH 4096u
#define CAP (CH * 8 - 512) /* the last chunk is short */

static uint8_t data[CAP], orig[CAP];

static void fill(void)
{
	for (unsigned i = 0; i < CAP; i++)
		data[i] = orig[i] = (uint8_t)(i * 13 + 1);
}

Test(snap, saver_sees_the_start_content)
{
	struct fm_snap s;

	fill();
	cr_assert_eq(fm_snap_init(&s, data, CAP, CH), 0);
	cr_assert_eq(s.nchunks, 8);
	/* chunk 0 saved first, then written: the saver read the live data */
	const uint8_t *c0 = fm_snap_claim(&s, 0);
	cr_assert_eq(c0, data);
	fm_snap_done(&s, 0);
	fm_snap_before_write(&s, 100, 10);
	memset(data + 100, 0xee, 10);
	/* a write across chunks 2..3 before the saver got there: both copied first */
	fm_snap_before_write(&s, 2 * CH + 4000, 200);
	memset(data + 2 * CH + 4000, 0xdd, 200);
	fm_snap_before_write(&s, 2 * CH, 1); /* copied already: not again */
	cr_assert_eq(s.cowed, 2);
	for (uint64_t c = 1; c < s.nchunks; c++) {
		uint64_t len = c == s.nchunks - 1 ? CAP - c * CH : CH;
		const uint8_t *p = fm_snap_claim(&s, c);

		cr_assert(memcmp(p, orig + c * CH, len) == 0, "chunk %lu is the start content",
			  (unsigned long)c);
		fm_snap_done(&s, c);
	}
	/* the short last chunk: a write there is copied within the device's bytes */
	fm_snap_fini(&s);
}

static struct fm_snap rs;
static volatile int stop;

static void *writer(void *arg)
{
	(void)arg;
	for (unsigned n = 0; !stop; n++) {
		uint64_t off = (n * 7919u) % (CAP - 64);

		fm_snap_before_write(&rs, off, 64);
		memset(data + off, 0x77, 64);
	}
	return NULL;
}

Test(snap, racing_writer_never_leaks_into_the_snapshot)
{
	pthread_t t;

	fill();
	cr_assert_eq(fm_snap_init(&rs, data, CAP, CH), 0);
	stop = 0;
	pthread_create(&t, NULL, writer, NULL);
	for (uint64_t c = 0; c < rs.nchunks; c++) {
		uint64_t len = c == rs.nchunks - 1 ? CAP - c * CH : CH;
		uint8_t copy[CH];

		memcpy(copy, fm_snap_claim(&rs, c), len);
		fm_snap_done(&rs, c);
		cr_assert(memcmp(copy, orig + c * CH, len) == 0, "chunk %lu", (unsigned long)c);
	}
	stop = 1;
	pthread_join(t, NULL);
	fm_snap_fini(&rs);
}
