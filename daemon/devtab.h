/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devtab.h - the running set of devices: the ones of the command line and
 * --config, and those created and deleted at runtime (RPC).
 *
 * Threads: one control thread changes the set (start-up, then the RPC
 * thread); the signal thread, the RPC thread and rte_vhost's thread read it
 * under the table's lock.  Slow work (backend allocation, socket
 * unregistration) runs without the lock; a device is in the table only
 * while its model and backend exist, and is taken out before it is
 * destroyed.  Lock order: devtab lock before the pmd's control lock.
 */
#ifndef FEMUD_DEVTAB_H
#define FEMUD_DEVTAB_H

#include <pthread.h>
#include <stdbool.h>

#include "daemon/dev.h"

struct femud_devtab {
	pthread_mutex_t lock;
	struct femud_dev *devs[FEMUD_MAX_DEVS]; /* NULL: free slot; order of creation */
	int node;				/* backend NUMA node of every device (--mbe-node) */
	unsigned mbe_flags;			/* MBE_F_* */
	bool attached; /* the pmd is up: a new device registers its socket at once */
};

void femud_devtab_init(struct femud_devtab *t, int node, unsigned mbe_flags);

/*
 * Create a device from parsed options (taken over: *o is left empty, also
 * on error): backend on t->node (placement checked and logged), model, and
 * its socket when t->attached.  -EEXIST when the socket path is already a
 * device's; other negative errnos from the layers below.  err names the
 * option or says what failed.
 */
int femud_devtab_add(struct femud_devtab *t, struct femud_dev_opts *o, char *err, size_t errlen);

/* Parse spec exactly as --dev does, then femud_devtab_add(). */
int femud_devtab_create(struct femud_devtab *t, const char *spec, char *err, size_t errlen);

/*
 * Delete the device on socket path: -ENOENT when there is none, -EBUSY
 * (device unchanged) while a frontend is connected unless force (a
 * connection closed in the last FEMUD_DEVTAB_BUSY_GRACE_MS is waited for).
 */
#define FEMUD_DEVTAB_BUSY_GRACE_MS 1000
int femud_devtab_delete(struct femud_devtab *t, const char *path, bool force, char *err,
			size_t errlen);

/* Register every device's socket (after pmd_init); from then on t->attached. */
int femud_devtab_attach_all(struct femud_devtab *t, char *err, size_t errlen);

/* Destroy every device (force). */
void femud_devtab_destroy_all(struct femud_devtab *t);

/*
 * Call fn(d, arg) with the lock held for every device, or only for the one
 * on socket path (NULL: all), in table order; returns how many.
 */
unsigned femud_devtab_each(struct femud_devtab *t, const char *path,
			   void (*fn)(struct femud_dev *d, void *arg), void *arg);

/* Device on socket path, or NULL; lock held. */
struct femud_dev *femud_devtab_find(struct femud_devtab *t, const char *path);

#endif /* FEMUD_DEVTAB_H */
