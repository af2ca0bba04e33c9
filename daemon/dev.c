/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dev.c - lifecycle of one device: backend memory (numa/) or persistent
 * medium (medium.c), model (ftl/), image load and save (image.c),
 * vhost-user-blk endpoint (pmd/).
 */
#include <errno.h>
#include <numa.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "daemon/dev.h"
#include "daemon/image.h"
#include "daemon/log.h"

/* Move *o into d->o; the model keys' array moves with it. */
static void dev_take_opts(struct femud_dev *d, struct femud_dev_opts *o)
{
	d->o = *o;
	d->o.mcfg.kv = d->o.kv;
	d->opts = &d->o;
	memset(o, 0, sizeof(*o));
}

/* The persistent medium: map it, hand its undo log and state area to the model. */
static int dev_open_medium(struct femud_dev *d, struct femud_dev_opts *o, int node,
			   unsigned mbe_flags, char *err, size_t errlen)
{
	int rc = medium_open(&d->med, o, node, mbe_flags, &d->mem, err, errlen);

	if (rc != 0)
		return rc;
	o->mcfg.undo = &d->med.undo;
	o->mcfg.state = d->med.state;
	o->mcfg.state_fresh = d->med.fresh;
	snprintf(d->note, sizeof(d->note), "medium %s on %s: %s", o->mem_path, d->med.fsname,
		 d->med.fresh ? "made anew" : "reused");
	if (d->med.restored > 0) {
		size_t n = strlen(d->note);

		snprintf(d->note + n, sizeof(d->note) - n,
			 ", %u block(s) interrupted mid-write rolled back", d->med.restored);
	}
	return 0;
}

static void dev_close_medium(struct femud_dev *d)
{
	if (d->opts != NULL && d->opts->mem_path != NULL)
		medium_close(&d->med);
}

/* The model's state block: in the medium, else allocated here on the backend's node. */
static int dev_state(struct femud_dev *d, struct femud_dev_opts *o, int node, char *err,
		     size_t errlen)
{
	d->state_bytes = o->ops->state_size ? o->ops->state_size(&o->mcfg) : 0;
	if (o->mem_path != NULL || d->state_bytes == 0)
		return 0;
	d->state = node >= 0 && numa_available() >= 0 ? numa_alloc_onnode(d->state_bytes, node)
						      : malloc(d->state_bytes);
	if (d->state == NULL) {
		snprintf(err, errlen, "--dev path=%s: out of memory for the model state", o->path);
		return -ENOMEM;
	}
	memset(d->state, 0, d->state_bytes);
	d->state_owned = true;
	o->mcfg.state = d->state;
	o->mcfg.state_fresh = true;
	return 0;
}

static void dev_state_free(struct femud_dev *d)
{
	if (!d->state_owned)
		return;
	if (d->opts->mcfg.mbe_node >= 0 && numa_available() >= 0)
		numa_free(d->state, d->state_bytes);
	else
		free(d->state);
	d->state = NULL;
	d->state_owned = false;
}

static struct image_dev dev_image(const struct femud_dev *d)
{
	return (struct image_dev){.o = d->opts,
				  .lay = &d->ident,
				  .data = d->mem.addr,
				  .state = d->state,
				  .state_bytes = d->state_bytes,
				  .model = d->model,
				  .region_zero = true};
}

/* image=FILE that exists: check it before anything is touched (-EINVAL: refused). */
static int dev_image_probe(struct femud_dev *d, struct femud_dev_opts *o, bool *load, char *err,
			   size_t errlen)
{
	struct image_dev id = {.o = o, .lay = &d->ident, .state_bytes = d->ident.state_bytes};

	*load = o->image != NULL && access(o->image, F_OK) == 0;
	if (!*load)
		return 0;
	return image_probe(o->image, &id, err, errlen);
}

/* Load the image into the fresh backend and state; the model then adopts the state. */
static int dev_image_load(struct femud_dev *d, struct femud_dev_opts *o, char *err, size_t errlen)
{
	struct image_dev id = dev_image(d);
	int rc = image_load(o->image, &id, err, errlen);
	size_t n = strlen(d->note);

	if (rc != 0)
		return rc;
	o->mcfg.state_fresh = false;
	snprintf(d->note + n, sizeof(d->note) - n, "%sloaded from image %s", n ? "; " : "",
		 o->image);
	return 0;
}

/* Backend memory, or the mem_path medium. */
static int dev_backend(struct femud_dev *d, struct femud_dev_opts *o, int node, unsigned mbe_flags,
		       char *err, size_t errlen)
{
	char merr[300];
	int rc;

	if (o->mem_path != NULL)
		return dev_open_medium(d, o, node, mbe_flags, err, errlen);
	rc = mbe_alloc(o->mcfg.capacity_bytes, node, mbe_flags, &d->mem, merr, sizeof(merr));
	if (rc != 0)
		snprintf(err, errlen, "--dev path=%s: devsz_mb=%llu: backend memory: %s", o->path,
			 (unsigned long long)(o->mcfg.capacity_bytes >> 20), merr);
	return rc;
}

static void dev_undo(struct femud_dev *d)
{
	dev_state_free(d);
	mbe_free(&d->mem);
	dev_close_medium(d);
	femud_dev_opts_free(d->opts);
}

int femud_dev_create(struct femud_dev *d, struct femud_dev_opts *o, int node, unsigned mbe_flags,
		     char *err, size_t errlen)
{
	char merr[300];
	bool load = false;
	int rc;

	memset(d, 0, sizeof(*d));
	dev_take_opts(d, o);
	o = d->opts;
	d->med.fd = -1;
	o->mcfg.mbe_node = node;
	medium_layout_of(o, 4096, &d->ident); /* while the model's options are still there */
	rc = dev_image_probe(d, o, &load, err, errlen);
	if (rc == 0 && load && o->mem_path != NULL)
		o->format = true; /* the medium is made anew from the image */
	if (rc == 0)
		rc = dev_backend(d, o, node, mbe_flags, err, errlen);
	if (rc == 0)
		rc = dev_state(d, o, node, err, errlen);
	if (rc == 0 && o->mem_path != NULL)
		d->state = d->med.state;
	if (rc == 0 && load)
		rc = dev_image_load(d, o, err, errlen);
	if (rc != 0) {
		dev_undo(d);
		return rc;
	}
	o->mcfg.mbe_node = node;
	rc = o->ops->create(&o->mcfg, d->mem.addr, &d->model, merr, sizeof(merr));
	if (rc != 0) {
		snprintf(err, errlen, "--dev path=%s: model %s: %s", o->path, o->ops->name, merr);
		dev_undo(d);
		return rc;
	}
	o->mcfg.priv = NULL; /* the model owns it now */
	if (o->mcfg.note[0] != '\0') {
		size_t n = strlen(d->note);

		snprintf(d->note + n, sizeof(d->note) - n, "%s%s", n ? "; " : "", o->mcfg.note);
	}
	if (o->mem_path != NULL)
		medium_commit(&d->med, o);
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
		femud_log_warn("warning: dev %s: %s", d->opts->path, m->note);
	if (sampled > 0 && (unsigned)on < sampled)
		femud_log_warn(
		    "warning: dev %s: %u of %u sampled backend pages are on node %d, not on "
		    "--mbe-node %d",
		    d->opts->path, sampled - (unsigned)on, sampled, other, m->node);
	if (d->note[0] != '\0')
		femud_log("dev %s: %s", d->opts->path, d->note);
}

int femud_dev_destroy(struct femud_dev *d, bool force)
{
	if (d->blk != NULL && pmd_blk_close(d->blk, force) != 0)
		return -EBUSY;
	d->blk = NULL;
	femud_dev_image_save_wait(d, false);
	if (d->model != NULL)
		d->opts->ops->destroy(d->model);
	d->model = NULL;
	dev_state_free(d);
	mbe_free(&d->mem);
	dev_close_medium(d);
	femud_dev_opts_free(d->opts);
	json_decref(d->set_kv);
	d->set_kv = NULL;
	return 0;
}

static void *dev_saver_main(void *arg)
{
	struct femud_dev *d = arg;
	struct image_dev id = dev_image(d);
	char err[600];

	if (image_save(d->opts->image, &id, err, sizeof(err)) != 0)
		femud_log_err("dev %s: %s", d->opts->path, err);
	__atomic_store_n(&d->saving, 2, __ATOMIC_RELEASE); /* finished, to be joined */
	return NULL;
}

int femud_dev_image_save_async(struct femud_dev *d)
{
	if (d->opts->image == NULL || d->model == NULL)
		return -EINVAL;
	if (__atomic_load_n(&d->saving, __ATOMIC_ACQUIRE) == 2) {
		pthread_join(d->saver, NULL); /* the last save finished */
		__atomic_store_n(&d->saving, 0, __ATOMIC_RELEASE);
	}
	if (__atomic_load_n(&d->saving, __ATOMIC_ACQUIRE) != 0)
		return -EBUSY;
	__atomic_store_n(&d->saving, 1, __ATOMIC_RELEASE);
	/* a control thread: off the pollers' CPUs (the caller may run on one) */
	if (rte_ctrl_thread_create(&d->saver, "femud-save", NULL, dev_saver_main, d) != 0) {
		__atomic_store_n(&d->saving, 0, __ATOMIC_RELEASE);
		return -EAGAIN;
	}
	return 0;
}

int femud_dev_image_save_wait(struct femud_dev *d, bool now)
{
	if (__atomic_load_n(&d->saving, __ATOMIC_ACQUIRE)) {
		pthread_join(d->saver, NULL);
		__atomic_store_n(&d->saving, 0, __ATOMIC_RELEASE);
	}
	if (!now || d->opts->image == NULL || d->model == NULL)
		return 0;
	struct image_dev id = dev_image(d);
	char err[600];
	int rc = image_save(d->opts->image, &id, err, sizeof(err));

	if (rc != 0)
		femud_log_err("dev %s: %s", d->opts->path, err);
	return rc;
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
	if (o->mem_path != NULL)
		json_object_set_new(j, "mem_path", json_string(o->mem_path));
	if (o->image != NULL)
		json_object_set_new(j, "image", json_string(o->image));
	if (o->image_save)
		opt_set(j, "image_save", "%llu", 1);
	for (unsigned i = 0; i < o->nkv; i++)
		json_object_set_new(j, o->kv[i].key, json_string(o->kv[i].val));
	json_object_foreach(d->set_kv, key, v) json_object_set(j, key, v);
	return j;
}

int femud_dev_image_save_start(struct femud_dev *d)
{
	int rc = femud_dev_image_save_async(d);

	if (rc == 0)
		femud_log("dev %s: saving image to %s", d->opts->path, d->opts->image);
	else if (rc == -EBUSY)
		femud_log_notice("dev %s: an image save is already running", d->opts->path);
	return rc;
}
