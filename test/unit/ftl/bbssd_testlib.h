/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bbssd_testlib.h - helpers for the BlackBox SSD unit tests: build a model
 * from a FEMU-style option string over a real data buffer, submit single
 * requests at a chosen time, fill a range, find when the device is idle.
 * Times in ns, sizes in bytes.
 */
#ifndef TEST_BBSSD_TESTLIB_H
#define TEST_BBSSD_TESTLIB_H

#include <stdint.h>

#include "ftl/bbssd.h"

/* The tutorial's device (seed 003): 512 MiB of NAND, 2 channels x 4 LUNs. */
#define TUTORIAL "nchs=2,luns_per_ch=4,blks_per_pl=64,op_pcent=25"

#define KIB ((uint64_t)1024)
#define MIB (KIB * 1024)
#define US ((uint64_t)1000) /* ns per microsecond */

struct tdev {
	struct fm_model_config cfg;
	struct fm_kv kv[32];
	char opts[512];
	struct fm_model *model; /* what the transport holds */
	struct bbssd_dev *m;	/* the same device, as bbssd.c sees it */
	uint8_t *data;
	uint64_t cap;	/* bytes */
	uint64_t clock; /* ns, the test's "now" */
};

/*
 * Configure a model from "k=v,k=v" (secsz 512).  capacity = 0: devsz_mb not
 * given (the daemon's default 1024 MiB is passed unset).  Returns
 * configure()'s result and leaves its message in err.
 */
int tdev_configure(struct tdev *d, const char *opts, uint64_t capacity, char *err, size_t errlen);

/* Configure and create (asserting success), with node -1. */
void tdev_open(struct tdev *d, const char *opts, uint64_t capacity);
void tdev_open_node(struct tdev *d, const char *opts, uint64_t capacity, int node);
void tdev_close(struct tdev *d);

/* One request at time now; asserts FM_S_OK and returns its due time. */
uint64_t tdev_io(struct tdev *d, enum fm_op op, uint64_t off, uint64_t len, void *buf,
		 uint64_t now);

/* Same, returning the status. */
enum fm_status tdev_try(struct tdev *d, enum fm_op op, uint64_t off, uint64_t len, void *buf,
			uint64_t now, uint64_t *due);

/* Sequential writes of bs bytes over [0, len), each issued when the last completes. */
void tdev_fill(struct tdev *d, uint64_t len, uint64_t bs);

/* The first time at which no LUN, channel, link queue or firmware core is busy. */
uint64_t tdev_idle_time(const struct tdev *d);

/* Latency of one request issued at an idle moment (advances the clock). */
uint64_t tdev_lat(struct tdev *d, enum fm_op op, uint64_t off, uint64_t len);

/* xorshift64 */
uint64_t trand(uint64_t *state);

/*
 * Closed-loop queue-depth qd random 4 KiB reads over [0, span): each
 * completion issues the next read at its due time.  Returns completions
 * per second over n completions.
 */
double tdev_closed_loop_iops(struct tdev *d, unsigned qd, uint64_t span, unsigned n);

#endif
