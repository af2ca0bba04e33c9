/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dev.h - one femud device: its options, its backend memory, its model
 * instance and its vhost-user-blk endpoint, created and torn down in that
 * order.
 */
#ifndef FEMUD_DEV_H
#define FEMUD_DEV_H

#include <pthread.h>
#include <stdio.h>

#include <jansson.h>

#include "daemon/medium.h"
#include "daemon/options.h"
#include "daemon/peer.h"
#include "numa/mbe.h"
#include "pmd/pmd.h"

struct femud_dev {
	struct femud_dev_opts o;     /* owned: the parsed --dev (or RPC create) spec */
	struct femud_dev_opts *opts; /* = &o */
	struct mbe_region mem;
	struct fm_model *model;
	struct pmd_blk *blk;
	/* connections already attributed to a frontend (rte_vhost's thread, devtab lock) */
	struct femud_peer_known peers;
	pid_t peer_pid;	   /* frontend of the newest connection, 0 = unknown */
	json_t *set_kv;	   /* model keys changed at runtime: key -> string value (or NULL) */
	struct medium med; /* with mem_path: the persistent medium (med.fd >= 0) */
	char note[320];	   /* what start-up found (medium made / reused / repaired), or "" */
	struct medium_layout
	    ident;   /* identity for images (model options, state size), fixed at create */
	void *state; /* the model's state block (in the medium, or allocated here) */
	size_t state_bytes;
	bool state_owned;
	pthread_t saver; /* image save in progress (saving != 0) */
	int saving;	 /* atomic: 0 none, 1 a save thread runs, 2 it finished (to be joined) */
};

/*
 * Take over *o (o is left empty: femud_opts_free() frees nothing of it),
 * allocate the backend on `node` and create the model.  No socket yet.
 * On error d owns nothing and err says why.
 */
int femud_dev_create(struct femud_dev *d, struct femud_dev_opts *o, int node, unsigned mbe_flags,
		     char *err, size_t errlen);

/* Register the vhost-user socket (after EAL and pmd_init). */
int femud_dev_attach(struct femud_dev *d, char *err, size_t errlen);

/*
 * Start saving the device's image (image=FILE) on a helper thread; returns
 * at once.  -EBUSY when a save is already running, -EINVAL without image=.
 */
int femud_dev_image_save_async(struct femud_dev *d);

/* The same, logging that it started (or why not). */
int femud_dev_image_save_start(struct femud_dev *d);

/* Wait for a save in progress; with `now`, then save synchronously (image_save=1 at a stop). */
int femud_dev_image_save_wait(struct femud_dev *d, bool now);

/* Log where the backend is (and what start-up found in a medium or image); warn when it is not
 * where it was asked to be. */
void femud_dev_report_backend(const struct femud_dev *d);

/*
 * Change model keys of the running device (the model's set op, on the
 * thread that calls its submit()); all or nothing.  -EINVAL / -ERANGE /
 * -ENOTSUP with a message naming the key and value.  kv values must stay
 * valid only for the call.
 */
int femud_dev_set(struct femud_dev *d, const struct fm_kv *kv, unsigned nkv, char *err,
		  size_t errlen);

/* The device's options as --dev keys (string values), runtime changes included. */
json_t *femud_dev_options(const struct femud_dev *d);

/*
 * Stop the endpoint (refused with -EBUSY while a frontend is connected,
 * unless force), destroy the model, free the backend and the options.
 */
int femud_dev_destroy(struct femud_dev *d, bool force);

#endif /* FEMUD_DEV_H */
