/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dev.h - one femud device: its backend memory, its model instance and its
 * vhost-user-blk endpoint, created and torn down in that order.
 */
#ifndef FEMUD_DEV_H
#define FEMUD_DEV_H

#include <stdio.h>

#include "daemon/options.h"
#include "numa/mbe.h"
#include "pmd/pmd.h"

struct femud_dev {
	struct femud_dev_opts *opts;
	struct mbe_region mem;
	struct fm_model *model;
	struct pmd_blk *blk;
};

/* Allocate the backend on `node` and create the model.  No socket yet. */
int femud_dev_create(struct femud_dev *d, struct femud_dev_opts *o, int node, unsigned mbe_flags,
		     char *err, size_t errlen);

/* Register the vhost-user socket (after EAL and pmd_init). */
int femud_dev_attach(struct femud_dev *d, char *err, size_t errlen);

/* Print the device's model counters with a "dev PATH" heading. */
void femud_dev_stats(const struct femud_dev *d, FILE *out);

/* Unregister (if attached), destroy the model, free the backend. */
void femud_dev_destroy(struct femud_dev *d);

#endif /* FEMUD_DEV_H */
