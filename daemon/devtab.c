/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * devtab.c - the running set of devices (see devtab.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/devtab.h"

void femud_devtab_init(struct femud_devtab *t, int node, unsigned mbe_flags)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	t->node = node;
	t->mbe_flags = mbe_flags;
}

struct femud_dev *femud_devtab_find(struct femud_devtab *t, const char *path)
{
	for (unsigned i = 0; i < FEMUD_MAX_DEVS; i++)
		if (t->devs[i] != NULL && strcmp(t->devs[i]->opts->path, path) == 0)
			return t->devs[i];
	return NULL;
}

unsigned femud_devtab_each(struct femud_devtab *t, const char *path,
			   void (*fn)(struct femud_dev *d, void *arg), void *arg)
{
	unsigned n = 0;

	pthread_mutex_lock(&t->lock);
	for (unsigned i = 0; i < FEMUD_MAX_DEVS; i++) {
		struct femud_dev *d = t->devs[i];

		if (d == NULL || (path != NULL && strcmp(path, d->opts->path) != 0))
			continue;
		fn(d, arg);
		n++;
	}
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* A free slot for path, or -EEXIST / -ENOSPC (lock held). */
static int devtab_slot(struct femud_devtab *t, const char *path, char *err, size_t errlen)
{
	int free_slot = -1;

	if (femud_devtab_find(t, path) != NULL) {
		snprintf(err, errlen, "--dev: socket path '%s' is already a device's", path);
		return -EEXIST;
	}
	for (int i = FEMUD_MAX_DEVS - 1; i >= 0; i--)
		if (t->devs[i] == NULL)
			free_slot = i;
	if (free_slot < 0) {
		snprintf(err, errlen, "--dev: more than %d devices", FEMUD_MAX_DEVS);
		return -ENOSPC;
	}
	return free_slot;
}

static void devtab_put(struct femud_devtab *t, int slot, struct femud_dev *d)
{
	pthread_mutex_lock(&t->lock);
	t->devs[slot] = d;
	pthread_mutex_unlock(&t->lock);
}

int femud_devtab_add(struct femud_devtab *t, struct femud_dev_opts *o, char *err, size_t errlen)
{
	struct femud_dev *d;
	int slot, rc;

	pthread_mutex_lock(&t->lock);
	slot = devtab_slot(t, o->path, err, errlen);
	pthread_mutex_unlock(&t->lock);
	d = slot >= 0 ? calloc(1, sizeof(*d)) : NULL;
	if (d == NULL) {
		if (slot >= 0)
			snprintf(err, errlen, "out of memory");
		femud_dev_opts_free(o);
		return slot < 0 ? slot : -ENOMEM;
	}
	rc = femud_dev_create(d, o, t->node, t->mbe_flags, err, errlen);
	if (rc != 0) {
		free(d);
		return rc;
	}
	femud_dev_report_backend(d);
	devtab_put(t, slot, d);
	if (!t->attached)
		return 0;
	rc = femud_dev_attach(d, err, errlen);
	if (rc != 0) {
		devtab_put(t, slot, NULL);
		femud_dev_destroy(d, true);
		free(d);
	}
	return rc;
}

int femud_devtab_create(struct femud_devtab *t, const char *spec, char *err, size_t errlen)
{
	struct femud_dev_opts o;
	int rc = femud_dev_parse(spec, &o, err, errlen);

	if (rc != 0) {
		femud_dev_opts_free(&o);
		return rc;
	}
	return femud_devtab_add(t, &o, err, errlen);
}

/*
 * Destroy d; without force only when no frontend is connected.  A frontend
 * that has just closed its connection may not have been noticed by
 * rte_vhost's thread yet: it gets FEMUD_DEVTAB_BUSY_GRACE_MS.
 */
static int devtab_destroy_when_idle(struct femud_dev *d, bool force)
{
	for (unsigned ms = 0;; ms += 10) {
		int rc = femud_dev_destroy(d, force);

		if (rc != -EBUSY || ms >= FEMUD_DEVTAB_BUSY_GRACE_MS)
			return rc;
		usleep(10000);
	}
}

int femud_devtab_delete(struct femud_devtab *t, const char *path, bool force, char *err,
			size_t errlen)
{
	struct femud_dev *d = NULL;
	int slot;

	pthread_mutex_lock(&t->lock);
	for (slot = 0; slot < FEMUD_MAX_DEVS; slot++) {
		d = t->devs[slot];
		if (d != NULL && strcmp(d->opts->path, path) == 0)
			break;
	}
	if (slot < FEMUD_MAX_DEVS)
		t->devs[slot] = NULL; /* out of sight of readers before it goes */
	pthread_mutex_unlock(&t->lock);
	if (slot == FEMUD_MAX_DEVS) {
		snprintf(err, errlen, "no device on socket '%s'", path);
		return -ENOENT;
	}
	if (devtab_destroy_when_idle(d, force) != 0) {
		devtab_put(t, slot, d);
		snprintf(
		    err, errlen,
		    "device '%s' has a frontend connected (pid %d); stop it first or use force",
		    path, (int)d->peer_pid);
		return -EBUSY;
	}
	free(d);
	return 0;
}

int femud_devtab_attach_all(struct femud_devtab *t, char *err, size_t errlen)
{
	t->attached = true;
	for (unsigned i = 0; i < FEMUD_MAX_DEVS; i++) {
		int rc = t->devs[i] != NULL ? femud_dev_attach(t->devs[i], err, errlen) : 0;

		if (rc != 0)
			return rc;
	}
	return 0;
}

void femud_devtab_destroy_all(struct femud_devtab *t)
{
	for (unsigned i = 0; i < FEMUD_MAX_DEVS; i++) {
		struct femud_dev *d;

		pthread_mutex_lock(&t->lock);
		d = t->devs[i];
		t->devs[i] = NULL;
		pthread_mutex_unlock(&t->lock);
		if (d != NULL) {
			femud_dev_destroy(d, true);
			free(d);
		}
	}
}
