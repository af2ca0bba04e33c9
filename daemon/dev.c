/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dev.c - lifecycle of one device: backend memory (numa/), model (ftl/),
 * vhost-user-blk endpoint (pmd/).
 */
#include <errno.h>
#include <string.h>

#include "daemon/dev.h"

int femud_dev_create(struct femud_dev *d, struct femud_dev_opts *o, int node, unsigned mbe_flags,
		     char *err, size_t errlen)
{
	char merr[200];
	int rc;

	memset(d, 0, sizeof(*d));
	d->opts = o;
	rc = mbe_alloc(o->mcfg.capacity_bytes, node, mbe_flags, &d->mem, merr, sizeof(merr));
	if (rc != 0) {
		snprintf(err, errlen, "--dev path=%s: devsz_mb=%llu: backend memory: %s", o->path,
			 (unsigned long long)(o->mcfg.capacity_bytes >> 20), merr);
		return rc;
	}
	o->mcfg.mbe_node = node;
	rc = o->ops->create(&o->mcfg, d->mem.addr, &d->model, merr, sizeof(merr));
	if (rc != 0) {
		snprintf(err, errlen, "--dev path=%s: model %s: %s", o->path, o->ops->name, merr);
		mbe_free(&d->mem);
		return rc;
	}
	return 0;
}

int femud_dev_attach(struct femud_dev *d, char *err, size_t errlen)
{
	const struct femud_dev_opts *o = d->opts;
	struct pmd_blk_params p = {
	    .path = o->path,
	    .sock_mode = (mode_t)o->sock_mode,
	    .queues = o->queues,
	    .blk_size = o->secsz,
	    .capacity_bytes = o->mcfg.capacity_bytes,
	    .readonly = o->readonly,
	};

	snprintf(p.serial, sizeof(p.serial), "%s", o->serial);
	return pmd_blk_create(&p, o->ops, d->model, &d->blk, err, errlen);
}

void femud_dev_stats(const struct femud_dev *d, FILE *out)
{
	fprintf(out, "dev %s\n", d->opts->path);
	if (d->model != NULL)
		d->opts->ops->stats(d->model, out);
}

void femud_dev_destroy(struct femud_dev *d)
{
	if (d->blk != NULL)
		pmd_blk_destroy(d->blk);
	d->blk = NULL;
	if (d->model != NULL)
		d->opts->ops->destroy(d->model);
	d->model = NULL;
	mbe_free(&d->mem);
}
