/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bbssd_testlib.c - helpers for the BlackBox SSD unit tests (see the header).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "bbssd_testlib.h"

static unsigned split_opts(struct tdev *d, const char *opts)
{
	unsigned n = 0;
	char *save = NULL;

	snprintf(d->opts, sizeof(d->opts), "%s", opts ? opts : "");
	for (char *tok = strtok_r(d->opts, ",", &save); tok && n < 32;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		cr_assert_not_null(eq, "test option '%s' is not key=value", tok);
		*eq = '\0';
		d->kv[n].key = tok;
		d->kv[n].val = eq + 1;
		n++;
	}
	return n;
}

int tdev_configure(struct tdev *d, const char *opts, uint64_t capacity, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->cfg.nkv = split_opts(d, opts);
	d->cfg.kv = d->kv;
	d->cfg.capacity_set = capacity != 0;
	d->cfg.capacity_bytes = capacity ? capacity : 1024 * MIB;
	d->cfg.blk_size = 512;
	d->cfg.mbe_node = -1;
	return fm_bbssd_ops.configure(&d->cfg, err, errlen);
}

void tdev_open_node(struct tdev *d, const char *opts, uint64_t capacity, int node)
{
	char err[256] = "";

	cr_assert_eq(tdev_configure(d, opts, capacity, err, sizeof(err)), 0, "configure: %s", err);
	d->cap = d->cfg.capacity_bytes;
	d->data = calloc(1, d->cap);
	cr_assert_not_null(d->data);
	d->cfg.mbe_node = node;
	cr_assert_eq(fm_bbssd_ops.create(&d->cfg, d->data, &d->model, err, sizeof(err)), 0,
		     "create: %s", err);
	cr_assert_eq(d->model->ops, &fm_bbssd_ops);
	cr_assert_null(d->cfg.priv, "create() took the parameters");
	d->m = bbssd_dev_of(d->model);
	d->clock = 1000;
}

void tdev_open(struct tdev *d, const char *opts, uint64_t capacity)
{
	tdev_open_node(d, opts, capacity, -1);
}

void tdev_close(struct tdev *d)
{
	fm_bbssd_ops.destroy(d->model);
	free(d->data);
	d->model = NULL;
	d->m = NULL;
	d->data = NULL;
}

enum fm_status tdev_try(struct tdev *d, enum fm_op op, uint64_t off, uint64_t len, void *buf,
			uint64_t now, uint64_t *due)
{
	struct fm_iov iov = {.base = buf, .len = (uint32_t)len};
	struct fm_req req = {
	    .op = op,
	    .offset = off,
	    .len = len,
	    .iov = buf ? &iov : NULL,
	    .iovcnt = buf ? 1 : 0,
	};

	return fm_bbssd_ops.submit(d->model, &req, now, due);
}

uint64_t tdev_io(struct tdev *d, enum fm_op op, uint64_t off, uint64_t len, void *buf, uint64_t now)
{
	uint64_t due = 0;
	enum fm_status st = tdev_try(d, op, off, len, buf, now, &due);

	cr_assert_eq(st, FM_S_OK, "op %d at %llu+%llu: status %d", op, (unsigned long long)off,
		     (unsigned long long)len, st);
	cr_assert_geq(due, now);
	return due;
}

void tdev_fill(struct tdev *d, uint64_t len, uint64_t bs)
{
	uint8_t *buf = malloc(bs);

	cr_assert_not_null(buf);
	for (uint64_t off = 0; off < len; off += bs) {
		memset(buf, (int)(off / bs) & 0xff, bs);
		d->clock = tdev_io(d, FM_OP_WRITE, off, bs, buf, d->clock);
	}
	free(buf);
	d->clock = tdev_idle_time(d);
}

static uint64_t max_of(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

uint64_t tdev_idle_time(const struct tdev *d)
{
	const struct bbssd_timeline *tl = &d->m->tl;
	uint64_t t =
	    max_of(d->clock, max_of(tl->fw_free, max_of(tl->link_free[0], tl->link_free[1])));

	for (uint64_t i = 0; i < d->m->p.nluns; i++)
		t = max_of(t, tl->lun_free[i]);
	for (uint64_t i = 0; i < d->m->p.nchs; i++)
		t = max_of(t, tl->ch_free[i]);
	return t;
}

uint64_t tdev_lat(struct tdev *d, enum fm_op op, uint64_t off, uint64_t len)
{
	uint8_t *buf = malloc(len);
	uint64_t now, due;

	cr_assert_not_null(buf);
	memset(buf, 0x5a, len);
	now = tdev_idle_time(d);
	due = tdev_io(d, op, off, len, buf, now);
	d->clock = due;
	free(buf);
	return due - now;
}

uint64_t trand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

double tdev_closed_loop_iops(struct tdev *d, unsigned qd, uint64_t span, unsigned n)
{
	uint64_t *due = calloc(qd, sizeof(*due));
	uint64_t seed = 0x9e3779b97f4a7c15ull, t0 = tdev_idle_time(d), now = t0;
	uint8_t buf[4096];

	cr_assert_not_null(due);
	for (unsigned i = 0; i < qd; i++)
		due[i] = tdev_io(d, FM_OP_READ, trand(&seed) % (span / 4096) * 4096, 4096, buf, t0);
	for (unsigned done = 0; done < n; done++) {
		unsigned first = 0;

		for (unsigned i = 1; i < qd; i++)
			if (due[i] < due[first])
				first = i;
		now = due[first];
		due[first] =
		    tdev_io(d, FM_OP_READ, trand(&seed) % (span / 4096) * 4096, 4096, buf, now);
	}
	free(due);
	d->clock = now;
	return (double)n * 1e9 / (double)(now - t0);
}
