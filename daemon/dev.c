/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dev.c - lifecycle of one device: backend memory (numa/), model (ftl/),
 * vhost-user-blk endpoint (pmd/).
 */
#include <errno.h>
#include <string.h>

#include "daemon/dev.h"
#include "daemon/log.h"

/* Move *o into d->o; the model keys' array moves with it. */
static void dev_take_opts(struct femud_dev *d, struct femud_dev_opts *o)
{
	d->o = *o;
	d->o.mcfg.kv = d->o.kv;
	d->opts = &d->o;
	memset(o, 0, sizeof(*o));
}

int femud_dev_create(struct femud_dev *d, struct femud_dev_opts *o, int node, unsigned mbe_flags,
		     char *err, size_t errlen)
{
	char merr[200];
	int rc;

	memset(d, 0, sizeof(*d));
	dev_take_opts(d, o);
	o = d->opts;
	rc = mbe_alloc(o->mcfg.capacity_bytes, node, mbe_flags, &d->mem, merr, sizeof(merr));
	if (rc != 0) {
		snprintf(err, errlen, "--dev path=%s: devsz_mb=%llu: backend memory: %s", o->path,
			 (unsigned long long)(o->mcfg.capacity_bytes >> 20), merr);
		femud_dev_opts_free(o);
		return rc;
	}
	o->mcfg.mbe_node = node;
	rc = o->ops->create(&o->mcfg, d->mem.addr, &d->model, merr, sizeof(merr));
	if (rc != 0) {
		snprintf(err, errlen, "--dev path=%s: model %s: %s", o->path, o->ops->name, merr);
		mbe_free(&d->mem);
		femud_dev_opts_free(o);
		return rc;
	}
	o->mcfg.priv = NULL; /* the model owns it now */
	return 0;
}

int femud_dev_attach(struct femud_dev *d, char *err, size_t errlen)
{
	const struct femud_dev_opts *o = d->opts;
	struct pmd_blk_params p = {
	    .path = o->path,
	    .sock_mode = (mode_t)o->sock_mode,
	    .sock_chown = o->access.owner_uid != (uid_t)-1,
	    .sock_uid = o->access.owner_uid,
	    .sock_gid = o->access.owner_gid,
	    .queues = o->queues,
	    .blk_size = o->secsz,
	    .capacity_bytes = o->mcfg.capacity_bytes,
	    .readonly = o->readonly,
	};

	snprintf(p.serial, sizeof(p.serial), "%s", o->serial);
	return pmd_blk_create(&p, o->ops, d->model, &d->blk, err, errlen);
}

void femud_dev_report_backend(const struct femud_dev *d)
{
	const struct mbe_region *m = &d->mem;
	int other;
	unsigned sampled;
	int on = mbe_check_placement(m, 64, &other, &sampled);
	char thp[64] = "";

	if (m->thp_bytes > 0)
		snprintf(thp, sizeof(thp), " (%zu MiB as transparent 2 MiB pages)",
			 m->thp_bytes >> 20);
	femud_log("dev %s: %zu MiB backend on node %d (%d of %u sampled pages verified there), %s "
		  "pages%s, pre-faulted in %.1f ms%s",
		  d->opts->path, m->len >> 20, m->node, on, sampled,
		  m->page_size >= (1u << 30)   ? "1 GiB"
		  : m->page_size >= (2u << 20) ? "2 MiB"
					       : "4 KiB",
		  thp, m->prefault_ns / 1e6, m->locked ? ", locked" : "");
	if (m->note[0] != '\0')
		femud_log("warning: dev %s: %s", d->opts->path, m->note);
	if (sampled > 0 && (unsigned)on < sampled)
		femud_log("warning: dev %s: %u of %u sampled backend pages are on node %d, not on "
			  "--mbe-node %d",
			  d->opts->path, sampled - (unsigned)on, sampled, other, m->node);
}

int femud_dev_destroy(struct femud_dev *d, bool force)
{
	if (d->blk != NULL && pmd_blk_close(d->blk, force) != 0)
		return -EBUSY;
	d->blk = NULL;
	if (d->model != NULL)
		d->opts->ops->destroy(d->model);
	d->model = NULL;
	mbe_free(&d->mem);
	femud_dev_opts_free(d->opts);
	json_decref(d->set_kv);
	d->set_kv = NULL;
	return 0;
}

struct dev_set_call {
	struct femud_dev *d;
	const struct fm_kv *kv;
	unsigned nkv;
	char *err;
	size_t errlen;
	int rc;
};

/* On the model's thread. */
static void dev_set_on_model(void *arg)
{
	struct dev_set_call *c = arg;

	c->rc = c->d->opts->ops->set(c->d->model, c->kv, c->nkv, c->err, c->errlen);
}

int femud_dev_set(struct femud_dev *d, const struct fm_kv *kv, unsigned nkv, char *err,
		  size_t errlen)
{
	struct dev_set_call c = {d, kv, nkv, err, errlen, 0};

	if (d->opts->ops->set == NULL) {
		snprintf(err, errlen, "%s=%s: model %s has no parameters that change at runtime",
			 nkv ? kv[0].key : "", nkv ? kv[0].val : "", d->opts->ops->name);
		return -ENOTSUP;
	}
	if (d->blk != NULL)
		pmd_blk_model_call(d->blk, dev_set_on_model, &c);
	else
		dev_set_on_model(&c);
	if (c.rc != 0)
		return c.rc;
	if (d->set_kv == NULL)
		d->set_kv = json_object();
	for (unsigned i = 0; i < nkv; i++)
		json_object_set_new(d->set_kv, kv[i].key, json_string(kv[i].val));
	return 0;
}

static void opt_set(json_t *o, const char *key, const char *fmt, unsigned long long v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), fmt, v);
	json_object_set_new(o, key, json_string(buf));
}

/* sock_owner and allow_uid as --dev values (numbers), when set. */
static void dev_access_options(json_t *j, const struct femud_access *a)
{
	char buf[16 * FEMUD_MAX_ALLOW_UID];
	size_t n = 0;

	if (a->owner_uid != (uid_t)-1) {
		if (a->owner_gid != (gid_t)-1)
			snprintf(buf, sizeof(buf), "%u:%u", (unsigned)a->owner_uid,
				 (unsigned)a->owner_gid);
		else
			snprintf(buf, sizeof(buf), "%u", (unsigned)a->owner_uid);
		json_object_set_new(j, "sock_owner", json_string(buf));
	}
	for (unsigned i = 0; i < a->nallow; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%u", i ? ":" : "",
				      (unsigned)a->allow[i]);
	if (a->nallow > 0)
		json_object_set_new(j, "allow_uid", json_string(buf));
}

json_t *femud_dev_options(const struct femud_dev *d)
{
	const struct femud_dev_opts *o = d->opts;
	json_t *j = json_object();
	const char *key;
	json_t *v;

	json_object_set_new(j, "path", json_string(o->path));
	if (o->devsz_set)
		opt_set(j, "devsz_mb", "%llu", o->devsz_mb);
	opt_set(j, "femu_mode", "%llu", (unsigned long long)o->femu_mode);
	opt_set(j, "queues", "%llu", o->queues);
	opt_set(j, "secsz", "%llu", o->secsz);
	json_object_set_new(j, "serial", json_string(o->serial));
	opt_set(j, "readonly", "%llu", o->readonly);
	opt_set(j, "sock_mode", "0%llo", o->sock_mode);
	dev_access_options(j, &o->access);
	for (unsigned i = 0; i < o->nkv; i++)
		json_object_set_new(j, o->kv[i].key, json_string(o->kv[i].val));
	json_object_foreach(d->set_kv, key, v) json_object_set(j, key, v);
	return j;
}
