/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.c - collecting and printing the daemon's counters (see stats.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "daemon/stats.h"

#define STATS_MODEL_MAX 64

/* A model's counters, copied on its poller (no allocation there). */
struct model_snap {
	unsigned n;
	struct {
		const char *key; /* the model's string literal */
		bool real;
		uint64_t u;
		double d;
	} v[STATS_MODEL_MAX];
	struct fm_model *model;
	const struct fm_model_ops *ops;
};

static void snap_add(struct model_snap *s, const char *key, bool real, uint64_t u, double d)
{
	if (s->n == STATS_MODEL_MAX)
		return;
	s->v[s->n].key = key;
	s->v[s->n].real = real;
	s->v[s->n].u = u;
	s->v[s->n++].d = d;
}

static void snap_u64(void *arg, const char *key, uint64_t v)
{
	snap_add(arg, key, false, v, 0);
}

static void snap_f64(void *arg, const char *key, double v)
{
	snap_add(arg, key, true, 0, v);
}

/* On the model's thread. */
static void model_snap_take(void *arg)
{
	struct model_snap *s = arg;
	struct fm_stats_sink sink = {.u64 = snap_u64, .f64 = snap_f64, .arg = s};

	s->ops->stats(s->model, &sink);
}

static void model_call(struct femud_dev *d, void (*fn)(void *), void *arg)
{
	if (d->blk != NULL)
		pmd_blk_model_call(d->blk, fn, arg);
	else
		fn(arg); /* no socket yet: no poller has the model */
}

static json_t *model_stats_json(struct femud_dev *d)
{
	static struct model_snap s; /* callers hold the devtab lock */
	json_t *o = json_object();

	memset(&s, 0, sizeof(s));
	s.model = d->model;
	s.ops = d->opts->ops;
	model_call(d, model_snap_take, &s);
	for (unsigned i = 0; i < s.n; i++)
		json_object_set_new(o, s.v[i].key,
				    s.v[i].real ? json_real(s.v[i].d)
						: json_integer((json_int_t)s.v[i].u));
	return o;
}

/* Queue counters (plus kicks) as JSON members of o. */
static void counters_json(json_t *o, const struct pmd_vq_stats *st, uint64_t kicks)
{
#define STATS_JSON_(field, name, kind)                                                             \
	json_object_set_new(o, name, json_integer((json_int_t)st->field));
	PMD_VQ_COUNTERS(STATS_JSON_)
#undef STATS_JSON_
	json_object_set_new(o, "kicks", json_integer((json_int_t)kicks));
	json_object_set_new(o, "late_ns_avg",
			    json_integer(st->late ? (json_int_t)(st->late_ns_sum / st->late) : 0));
}

static json_t *queues_json(const struct pmd_dev_snap *s, json_t *totals)
{
	json_t *arr = json_array();
	struct pmd_vq_stats sum;
	uint64_t kicks = 0;

	memset(&sum, 0, sizeof(sum));
	for (unsigned q = 0; q < s->queues; q++) {
		json_t *o = json_object();

		json_object_set_new(o, "id", json_integer(q));
		counters_json(o, &s->q[q].st, s->q[q].kicks);
		json_object_set_new(o, "poller", json_integer(s->q[q].poller));
		if (s->q[q].poller >= 0) {
			json_object_set_new(o, "avail_next", json_integer(s->q[q].avail_next));
			json_object_set_new(o, "used_next", json_integer(s->q[q].used_next));
			json_object_set_new(o, "pending", json_integer(s->q[q].pending));
		}
		json_array_append_new(arr, o);
		pmd_vq_stats_add(&sum, &s->q[q].st);
		kicks += s->q[q].kicks;
	}
	counters_json(totals, &sum, kicks);
	return arr;
}

static json_t *dev_stats_json(struct femud_dev *d)
{
	static struct pmd_dev_snap s; /* callers hold the devtab lock */
	json_t *o = json_object();
	json_t *totals = json_object();

	memset(&s, 0, sizeof(s));
	if (d->blk != NULL)
		pmd_blk_stats(d->blk, &s);
	else
		s.queues = 0;
	json_object_set_new(o, "path", json_string(d->opts->path));
	json_object_set_new(o, "model", json_string(d->opts->ops->name));
	json_object_set_new(o, "connections", json_integer((json_int_t)s.connections));
	json_object_set_new(o, "connected", json_integer(s.live_conns));
	json_object_set_new(o, "frontend_pid", json_integer(s.live_conns ? d->peer_pid : 0));
	json_object_set_new(o, "queues", queues_json(&s, totals));
	json_object_set_new(o, "totals", totals);
	json_object_set_new(o, "model_stats", model_stats_json(d));
	return o;
}

/* A poller's poll mode as members of o: "poll_mode" (busy | adaptive), "idle_us". */
static void poll_mode_json(json_t *o, const struct pmd_poller_snap *p)
{
	json_object_set_new(o, "poll_mode", json_string(p->adaptive ? "adaptive" : "busy"));
	json_object_set_new(o, "idle_us", json_integer((json_int_t)(p->idle_ns / 1000)));
}

static json_t *pollers_json(void)
{
	struct pmd_poller_snap p[PMD_MAX_POLLERS]; /* 5 KiB: no static, two threads collect */
	unsigned n = pmd_pollers_stats(p, PMD_MAX_POLLERS);
	json_t *arr = json_array();

	for (unsigned i = 0; i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "id", json_integer(p[i].idx));
		json_object_set_new(o, "lcore", json_integer(p[i].lcore));
		json_object_set_new(o, "queues", json_integer(p[i].nvq));
		poll_mode_json(o, &p[i]);
#define STATS_POLLER_(field, name, kind)                                                           \
	json_object_set_new(o, name, json_integer((json_int_t)p[i].st.field));
		PMD_POLLER_COUNTERS(STATS_POLLER_)
#undef STATS_POLLER_
		json_array_append_new(arr, o);
	}
	return arr;
}

json_t *femud_stats_poll_modes(struct femud_devtab *t, bool config)
{
	struct pmd_poller_snap p[PMD_MAX_POLLERS];
	unsigned n = t->attached ? pmd_pollers_stats(p, PMD_MAX_POLLERS) : 0;
	json_t *arr = json_array();

	for (unsigned i = 0; i < n; i++) {
		json_t *o = json_object();

		poll_mode_json(o, &p[i]);
		if (!config) {
			json_object_set_new(o, "id", json_integer(p[i].idx));
			json_object_set_new(o, "lcore", json_integer(p[i].lcore));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

static void collect_one(struct femud_dev *d, void *arg)
{
	json_array_append_new(arg, dev_stats_json(d));
}

json_t *femud_stats_collect(struct femud_devtab *t, const char *path)
{
	json_t *devs = json_array();

	if (femud_devtab_each(t, path, collect_one, devs) == 0 && path != NULL) {
		json_decref(devs);
		return NULL;
	}
	/* pollers after the devices: their queue counts match or are newer */
	return json_pack("{s:o, s:o}", "devices", devs, "pollers",
			 t->attached ? pollers_json() : json_array());
}

static void print_value(FILE *out, const char *sep, const char *key, const json_t *v)
{
	if (json_is_real(v))
		fprintf(out, "%s%s %.3f", sep, key, json_real_value(v));
	else if (json_is_integer(v))
		fprintf(out, "%s%s %" JSON_INTEGER_FORMAT, sep, key, json_integer_value(v));
	else if (json_is_string(v))
		fprintf(out, "%s%s %s", sep, key, json_string_value(v));
}

/* Members of o on one line, "key value" separated by sep; skip: names not printed. */
static void print_members(FILE *out, const json_t *o, const char *sep, const char *const *skip)
{
	const char *key;
	const json_t *v;
	const char *s = "";

	json_object_foreach((json_t *)o, key, v)
	{
		bool skipped = false;

		for (unsigned i = 0; skip != NULL && skip[i] != NULL; i++)
			skipped |= strcmp(key, skip[i]) == 0;
		if (skipped)
			continue;
		print_value(out, s, key, v);
		s = sep;
	}
}

static void print_device(const json_t *d, FILE *out)
{
	static const char *const qskip[] = {"id", "poller", NULL};
	const char *path = json_string_value(json_object_get(d, "path"));
	const json_t *q;
	size_t i;

	fprintf(out, "dev %s\nmodel %s\n", path, json_string_value(json_object_get(d, "model")));
	print_members(out, json_object_get(d, "model_stats"), "\n", NULL);
	fprintf(out, "\ndevice %s connections %" JSON_INTEGER_FORMAT "\n", path,
		json_integer_value(json_object_get(d, "connections")));
	json_array_foreach(json_object_get(d, "queues"), i, q)
	{
		fprintf(out, "  q%zu ", i);
		print_members(out, q, " ", qskip);
		fputc('\n', out);
	}
}

void femud_stats_print(const json_t *stats, FILE *out)
{
	static const char *const pskip[] = {"id", "lcore", "queues", NULL};
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(stats, "devices"), i, v) print_device(v, out);
	json_array_foreach(json_object_get(stats, "pollers"), i, v)
	{
		fprintf(out,
			"poller %zu lcore %" JSON_INTEGER_FORMAT " queues %" JSON_INTEGER_FORMAT
			" ",
			i, json_integer_value(json_object_get(v, "lcore")),
			json_integer_value(json_object_get(v, "queues")));
		print_members(out, v, " ", pskip);
		fputc('\n', out);
	}
}

/* On the model's thread. */
static void model_reset(void *arg)
{
	struct femud_dev *d = arg;

	if (d->opts->ops->stats_reset != NULL)
		d->opts->ops->stats_reset(d->model);
}

static void reset_one(struct femud_dev *d, void *arg)
{
	(void)arg;
	if (d->blk != NULL)
		pmd_blk_stats_reset(d->blk);
	model_call(d, model_reset, d);
}

int femud_stats_reset(struct femud_devtab *t, const char *path)
{
	if (femud_devtab_each(t, path, reset_one, NULL) == 0 && path != NULL)
		return -ENOENT;
	if (path == NULL && t->attached)
		pmd_pollers_stats_reset();
	return 0;
}
