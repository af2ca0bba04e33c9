/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nossd.c - FEMU's NoSSD (femu_mode=2): a zero-latency memory disk.  Data is
 * copied at submission and every request completes at once; reads are the
 * transport's own copies out of the data region (its flat read region).  The model keeps
 * no mutable state, so any number of pollers may call submit() concurrently.
 * On a persistent medium (mem_path) writes go through the medium's undo log
 * (fm_undo.h) so that a killed femud leaves every block old or new.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ftl/fm_data.h"
#include "ftl/fm_model_registry.h"
#include "ftl/fm_snap.h"
#include "ftl/fm_undo.h"

struct nossd {
	struct fm_model base;
	void *data;
	uint64_t capacity;    /* bytes */
	struct fm_undo *undo; /* persistent medium: block-atomic writes; NULL = volatile */
};

static inline struct nossd *to_nossd(struct fm_model *m)
{
	return FM_MODEL_CONTAINER(m, struct nossd, base);
}

static int nossd_configure(struct fm_model_config *cfg, char *err, size_t errlen)
{
	if (cfg->nkv > 0) {
		snprintf(err, errlen, "unknown key '%s' for femu_mode=2 (NoSSD)", cfg->kv[0].key);
		return -EINVAL;
	}
	if (!cfg->capacity_set) {
		snprintf(err, errlen, "devsz_mb is required for femu_mode=2 (NoSSD)");
		return -EINVAL;
	}
	return 0;
}

static int nossd_create(struct fm_model_config *cfg, void *data, struct fm_model **out, char *err,
			size_t errlen)
{
	struct nossd *n = calloc(1, sizeof(*n));

	if (n == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	n->base.ops = &fm_nossd_ops;
	n->base.flat_read = data; /* every read is the transport's copy, whatever undo does */
	n->data = data;
	n->capacity = cfg->capacity_bytes;
	n->undo = cfg->undo;
	*out = &n->base;
	return 0;
}

static void nossd_destroy(struct fm_model *m)
{
	free(to_nossd(m));
}

FM_HOT_TEXT static enum fm_status nossd_submit(struct fm_model *model, const struct fm_req *req,
					       uint64_t now_ns, uint64_t *due_ns)
{
	const struct nossd *m = to_nossd(model);

	*due_ns = now_ns;
	switch (req->op) {
	case FM_OP_READ:
		return FM_S_UNSUPP; /* the transport reads flat_read itself (fm_model.h) */
	case FM_OP_WRITE:
		if (__builtin_expect(model->snap != NULL, 0))
			fm_snap_before_write(model->snap, req->offset, req->len);
		if (m->undo != NULL)
			fm_undo_write(m->undo, m->data, req);
		else
			fm_data_write(m->data, req);
		return FM_S_OK;
	case FM_OP_FLUSH:
		return FM_S_OK; /* memory is the medium: nothing volatile to flush */
	case FM_OP_DISCARD:
	case FM_OP_WRITE_ZEROES:
		/* A discarded range reads back zeros (virtio-blk allows it; tests rely on it). */
		if (__builtin_expect(model->snap != NULL, 0))
			fm_snap_before_write(model->snap, req->offset, req->len);
		if (m->undo != NULL)
			fm_undo_zero(m->undo, m->data, req->offset, req->len);
		else
			fm_data_zero(m->data, req->offset, req->len);
		return FM_S_OK;
	}
	return FM_S_UNSUPP;
}

/* Warm the cache for a request the transport will submit soon. */
static void nossd_prefetch(struct fm_model *model, enum fm_op op, uint64_t offset, uint64_t len)
{
	const struct nossd *m = to_nossd(model);

	if (op == FM_OP_READ || op == FM_OP_WRITE)
		fm_data_prefetch(m->data, offset, len, op == FM_OP_WRITE);
}

static void nossd_stats(struct fm_model *m, const struct fm_stats_sink *sink)
{
	sink->u64(sink->arg, "capacity_bytes", to_nossd(m)->capacity);
}

const struct fm_model_ops fm_nossd_ops = {
    .name = "nossd",
    .femu_mode = 2,
    .configure = nossd_configure,
    .create = nossd_create,
    .destroy = nossd_destroy,
    .submit = nossd_submit,
    .stats = nossd_stats,
    .prefetch = nossd_prefetch,
    .single_writer = false,
};
