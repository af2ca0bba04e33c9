/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rpc_methods.c - femud's JSON-RPC methods over the device table (ctx is a
 * struct femud_devtab *).  Every method checks all of its params before it
 * changes anything; errors carry femud's RPC codes (rpc.h).
 *
 *   list        {path?}                 devices, options, queues and pollers
 *   stats       {path?}                 counters (stats.h's tree)
 *   stats_reset {path?}                 zero counters
 *   create      {spec}                  a device from a --dev spec
 *   delete      {path, force?}          remove a device
 *   set         {path, params: {k: v}}  change model keys (timings) at runtime
 *   poll_mode   {poller?, mode?, idle_us?}  show / change pollers' poll mode
 *   save_config {}                      the running configuration (config.h)
 *   version     {}                      femud's version and the RPC methods it serves
 *   placement   {}                      femud's pid, its pollers' CPUs, the backend node
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "daemon/config.h"
#include "daemon/rpc_methods.h"
#include "daemon/stats.h"
#include "pmd/pmd.h"

static json_t *fail(struct femud_rpc_error *e, int code, const char *msg)
{
	e->code = code;
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
	return NULL;
}

static int code_of_errno(int rc)
{
	switch (rc) {
	case -ENOENT:
		return FEMUD_RPC_NO_DEVICE;
	case -EEXIST:
	case -EADDRINUSE:
		return FEMUD_RPC_EXISTS;
	case -EBUSY:
		return FEMUD_RPC_BUSY;
	case -EINVAL:
	case -ERANGE:
	case -ENOTSUP:
		return FEMUD_RPC_BAD_OPTION;
	default:
		return FEMUD_RPC_FAILED;
	}
}

static json_t *no_device(struct femud_rpc_error *e, const char *path)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "no device on socket '%s'", path);
	return fail(e, FEMUD_RPC_NO_DEVICE, msg);
}

/* Optional "path" and nothing else. */
static int path_only(json_t *params, const char **path, struct femud_rpc_error *e)
{
	static const char *const keys[] = {"path", NULL};

	*path = NULL;
	return femud_rpc_params_only(params, keys, e) ||
	       femud_rpc_param_str(params, "path", false, path, e);
}

static json_t *dev_list_entry(struct femud_dev *d)
{
	static struct pmd_dev_snap s; /* devtab lock held */
	json_t *pollers = json_array();
	const struct femud_dev_opts *o = d->opts;

	memset(&s, 0, sizeof(s));
	if (d->blk != NULL)
		pmd_blk_stats(d->blk, &s);
	for (unsigned q = 0; q < o->queues; q++)
		json_array_append_new(pollers, json_integer(d->blk ? s.q[q].poller : -1));
	return json_pack("{s:s, s:s, s:i, s:I, s:i, s:i, s:b, s:s, s:i, s:I, s:i, s:i, s:o, s:o}",
			 "path", o->path, "model", o->ops->name, "femu_mode", o->femu_mode,
			 "capacity_bytes", (json_int_t)o->mcfg.capacity_bytes, "queues", o->queues,
			 "secsz", o->secsz, "readonly", o->readonly, "serial", o->serial,
			 "backend_node", d->mem.node, "backend_page_size",
			 (json_int_t)d->mem.page_size, "connected", s.live_conns, "frontend_pid",
			 s.live_conns ? (int)d->peer_pid : 0, "queue_pollers", pollers, "options",
			 femud_dev_options(d));
}

static void list_one(struct femud_dev *d, void *arg)
{
	json_array_append_new(arg, dev_list_entry(d));
}

static json_t *m_list(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	const char *path;
	json_t *arr;

	if (path_only(params, &path, e) != 0)
		return NULL;
	arr = json_array();
	if (femud_devtab_each(ctx, path, list_one, arr) == 0 && path != NULL) {
		json_decref(arr);
		return no_device(e, path);
	}
	return arr;
}

static json_t *m_stats(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	const char *path;
	json_t *s;

	if (path_only(params, &path, e) != 0)
		return NULL;
	s = femud_stats_collect(ctx, path);
	return s != NULL ? s : no_device(e, path);
}

static json_t *m_stats_reset(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	const char *path;

	if (path_only(params, &path, e) != 0)
		return NULL;
	if (femud_stats_reset(ctx, path) != 0)
		return no_device(e, path);
	return json_true();
}

static json_t *m_create(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	static const char *const keys[] = {"spec", NULL};
	struct femud_devtab *t = ctx;
	const char *spec;
	char err[512] = "", path[PMD_STATS_PATH_LEN];
	struct femud_dev_opts o;
	struct femud_dev *d;
	json_t *res;
	int rc;

	if (femud_rpc_params_only(params, keys, e) != 0 ||
	    femud_rpc_param_str(params, "spec", true, &spec, e) != 0)
		return NULL;
	rc = femud_dev_parse(spec, &o, err, sizeof(err));
	if (rc != 0) {
		femud_dev_opts_free(&o);
		return fail(e, FEMUD_RPC_BAD_OPTION, err);
	}
	snprintf(path, sizeof(path), "%s", o.path);
	rc = femud_devtab_add(t, &o, err, sizeof(err));
	if (rc != 0)
		return fail(e, code_of_errno(rc), err);
	pthread_mutex_lock(&t->lock);
	d = femud_devtab_find(t, path);
	res = d != NULL ? dev_list_entry(d) : json_pack("{s:s}", "path", path);
	pthread_mutex_unlock(&t->lock);
	return res;
}

static json_t *m_delete(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	static const char *const keys[] = {"path", "force", NULL};
	const char *path;
	bool force = false;
	char err[512] = "";
	int rc;

	if (femud_rpc_params_only(params, keys, e) != 0 ||
	    femud_rpc_param_str(params, "path", true, &path, e) != 0 ||
	    femud_rpc_param_bool(params, "force", &force, e) != 0)
		return NULL;
	rc = femud_devtab_delete(ctx, path, force, err, sizeof(err));
	if (rc != 0)
		return fail(e, code_of_errno(rc), err);
	return json_true();
}

/* params {"k": "v" | integer} as fm_kv (values point into vals). */
static int set_kv(json_t *kvs, struct fm_kv *kv, char (*vals)[32], unsigned *n,
		  struct femud_rpc_error *e)
{
	const char *key;
	json_t *v;

	*n = 0;
	if (!json_is_object(kvs) || json_object_size(kvs) == 0 ||
	    json_object_size(kvs) > FEMUD_MAX_KV) {
		fail(e, FEMUD_RPC_INVALID_PARAMS,
		     "invalid params: 'params' must be an object of 1 to 64 model keys");
		return -1;
	}
	json_object_foreach(kvs, key, v)
	{
		if (json_is_string(v) && strlen(json_string_value(v)) < sizeof(vals[0]))
			snprintf(vals[*n], sizeof(vals[0]), "%s", json_string_value(v));
		else if (json_is_integer(v) && json_integer_value(v) >= 0)
			snprintf(vals[*n], sizeof(vals[0]), "%" JSON_INTEGER_FORMAT,
				 json_integer_value(v));
		else {
			e->code = FEMUD_RPC_INVALID_PARAMS;
			snprintf(e->msg, sizeof(e->msg),
				 "invalid params: '%s' must be a decimal string or an integer >= 0",
				 key);
			return -1;
		}
		kv[*n].key = key;
		kv[*n].val = vals[*n];
		(*n)++;
	}
	return 0;
}

static json_t *m_set(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	static const char *const keys[] = {"path", "params", NULL};
	static struct fm_kv kv[FEMUD_MAX_KV];
	static char vals[FEMUD_MAX_KV][32];
	struct femud_devtab *t = ctx;
	struct femud_dev *d;
	const char *path;
	char err[512] = "";
	unsigned n;
	json_t *res = NULL;
	int rc;

	if (femud_rpc_params_only(params, keys, e) != 0 ||
	    femud_rpc_param_str(params, "path", true, &path, e) != 0 ||
	    set_kv(json_object_get(params, "params"), kv, vals, &n, e) != 0)
		return NULL;
	pthread_mutex_lock(&t->lock);
	d = femud_devtab_find(t, path);
	if (d == NULL) {
		no_device(e, path);
	} else {
		rc = femud_dev_set(d, kv, n, err, sizeof(err));
		if (rc != 0)
			fail(e, code_of_errno(rc), err);
		else
			res = femud_dev_options(d);
	}
	pthread_mutex_unlock(&t->lock);
	return res;
}

struct image_save_call {
	json_t *started;
	int rc; /* the first failure */
	const char *path;
};

static void image_save_one(struct femud_dev *d, void *arg)
{
	struct image_save_call *c = arg;
	int rc;

	if (d->opts->image == NULL && c->path == NULL)
		return; /* all devices: those with image= */
	rc = femud_dev_image_save_start(d);
	if (rc == 0)
		json_array_append_new(c->started, json_pack("{s:s, s:s}", "path", d->opts->path,
							    "image", d->opts->image));
	else if (c->rc == 0)
		c->rc = rc;
}

/* Saving runs on helper threads: the log says when each is done (or why it failed). */
static json_t *m_image_save(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	struct image_save_call c = {json_array(), 0, NULL};

	if (path_only(params, &c.path, e) != 0 ||
	    (femud_devtab_each(ctx, c.path, image_save_one, &c) == 0 && c.path != NULL)) {
		json_decref(c.started);
		return e->code ? NULL : no_device(e, c.path);
	}
	if (c.rc != 0) {
		json_decref(c.started);
		return fail(e, code_of_errno(c.rc),
			    c.rc == -EBUSY ? "an image save of this device is already running"
					   : "the device has no image=FILE to save to");
	}
	return json_pack("{s:o}", "saving", c.started);
}

/* An optional integer parameter in [0, max]: 0 (absent: *out untouched), or -1 (e set). */
static int param_uint(json_t *params, const char *key, json_int_t max, json_int_t *out,
		      struct femud_rpc_error *e)
{
	json_t *v = json_object_get(params, key);
	char msg[128];

	if (v == NULL)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max) {
		snprintf(msg, sizeof(msg),
			 "'%s' must be an integer from 0 to %" JSON_INTEGER_FORMAT, key, max);
		fail(e, FEMUD_RPC_INVALID_PARAMS, msg);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

/*
 * Show every poller's poll mode, or change it: mode ("busy" | "adaptive")
 * and/or idle_us, on poller (an index) or on all of them.  What is not
 * given keeps each poller's current value.
 */
static json_t *m_poll_mode(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	static const char *const keys[] = {"poller", "mode", "idle_us", NULL};
	struct pmd_poller_snap p[PMD_MAX_POLLERS];
	struct femud_devtab *t = ctx;
	const char *mode = NULL;
	json_int_t poller = -1, idle_us = -1;
	unsigned n = t->attached ? pmd_pollers_stats(p, PMD_MAX_POLLERS) : 0;

	if (femud_rpc_params_only(params, keys, e) != 0 ||
	    femud_rpc_param_str(params, "mode", false, &mode, e) != 0 ||
	    param_uint(params, "poller", PMD_MAX_POLLERS - 1, &poller, e) != 0 ||
	    param_uint(params, "idle_us", FEMUD_MAX_IDLE_US, &idle_us, e) != 0)
		return NULL;
	if (mode != NULL && strcmp(mode, "busy") != 0 && strcmp(mode, "adaptive") != 0)
		return fail(e, FEMUD_RPC_INVALID_PARAMS, "'mode' must be \"busy\" or \"adaptive\"");
	if (poller >= (json_int_t)n)
		return fail(e, FEMUD_RPC_INVALID_PARAMS, "'poller': no such poller");
	for (unsigned i = 0; i < n && (mode != NULL || idle_us >= 0); i++) {
		bool adaptive = mode != NULL ? strcmp(mode, "adaptive") == 0 : p[i].adaptive;
		uint64_t idle_ns = idle_us >= 0 ? (uint64_t)idle_us * 1000 : p[i].idle_ns;

		if (poller >= 0 && (json_int_t)i != poller)
			continue;
		if (pmd_poller_set_mode(i, adaptive ? PMD_POLL_ADAPTIVE : PMD_POLL_BUSY, idle_ns) !=
		    0)
			return fail(e, FEMUD_RPC_FAILED, "the poller refused the poll mode");
	}
	return json_pack("{s:o}", "pollers", femud_stats_poll_modes(t, false));
}

static void options_one(struct femud_dev *d, void *arg)
{
	json_array_append_new(arg, femud_dev_options(d));
}

static json_t *m_save_config(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	static const char *const keys[] = {NULL};
	json_t *devs, *root, *pollers;

	if (femud_rpc_params_only(params, keys, e) != 0)
		return NULL;
	devs = json_array();
	femud_devtab_each(ctx, NULL, options_one, devs);
	root = json_pack("{s:i, s:o}", "femud_config", FEMUD_CONFIG_VERSION, "devices", devs);
	pollers = femud_stats_poll_modes(ctx, true);
	if (json_array_size(pollers) > 0)
		json_object_set_new(root, "pollers", pollers);
	else
		json_decref(pollers);
	return root;
}

/* {"version": "X.Y.Z", "methods": [...]}: lets a client check what this femud serves. */
static json_t *m_version(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	static const char *const keys[] = {NULL};
	json_t *names;

	(void)ctx;
	if (femud_rpc_params_only(params, keys, e) != 0)
		return NULL;
	names = json_array();
	for (const struct femud_rpc_method *m = femud_rpc_methods; m->name != NULL; m++)
		json_array_append_new(names, json_string(m->name));
	return json_pack("{s:s, s:o}", "version", FEMUD_VERSION, "methods", names);
}

/*
 * Where femud runs, for the frontend's pinning (femuctl libvirt-xml): the
 * CPUs the pollers spin on are the ones a guest's vCPUs and QEMU must avoid.
 */
static json_t *m_placement(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	static const char *const keys[] = {NULL};
	struct pmd_poller_snap p[PMD_MAX_POLLERS];
	struct femud_devtab *t = ctx;
	unsigned n = t->attached ? pmd_pollers_stats(p, PMD_MAX_POLLERS) : 0;
	json_t *cpus;

	if (femud_rpc_params_only(params, keys, e) != 0)
		return NULL;
	cpus = json_array();
	for (unsigned i = 0; i < n; i++) {
		rte_cpuset_t set = rte_lcore_cpuset(p[i].lcore);

		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				json_array_append_new(cpus, json_integer(c));
	}
	return json_pack("{s:i, s:o, s:i}", "pid", (int)getpid(), "poller_cpus", cpus,
			 "backend_node", t->node);
}

const struct femud_rpc_method femud_rpc_methods[] = {
    {"list", m_list, "{path?}: devices with options, model, capacity, frontend, queue pollers"},
    {"stats", m_stats, "{path?}: counters per device, queue and poller"},
    {"stats_reset", m_stats_reset, "{path?}: zero the counters"},
    {"create", m_create, "{spec}: a device from a --dev spec 'path=SOCK,key=value,...'"},
    {"delete", m_delete, "{path, force?}: remove a device (force: even with a frontend)"},
    {"set", m_set, "{path, params: {key: value}}: change model keys (timings) at runtime"},
    {"poll_mode", m_poll_mode,
     "{poller?, mode?, idle_us?}: pollers' poll mode (busy|adaptive) and idle threshold (us); "
     "changes the given poller, or all"},
    {"save_config", m_save_config, "{}: the running configuration for femud --config"},
    {"image_save", m_image_save,
     "{path?}: save the device's image (image=FILE) in the background; the log says when done"},
    {"version", m_version, "{}: femud's version and the names of its RPC methods"},
    {"placement", m_placement, "{}: femud's pid, the CPUs its pollers spin on, backend node"},
    {NULL, NULL, NULL},
};
