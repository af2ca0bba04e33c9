/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lcores.c - parser for DPDK EAL's --lcores syntax.  EAL parses the same
 * string again at start; femud reads it first to name the main lcore, find
 * the pollers' CPUs (for --mbe-node's default and the placement checks) and
 * reject bad lists with a message that names the option.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/lcores.h"
#include "ftl/num_parse.h"

#define LC_MAX_NUM 1023

struct lc_set {
	unsigned v[FEMUD_MAX_LCORES];
	unsigned n;
};

static int lc_num(const char **p, unsigned *out)
{
	uint64_t v;
	int rc = num_scan(p, LC_MAX_NUM, &v);

	if (rc == 0)
		*out = (unsigned)v;
	return rc;
}

static int lc_add(struct lc_set *s, unsigned v)
{
	if (s->n == FEMUD_MAX_LCORES)
		return -E2BIG;
	s->v[s->n++] = v;
	return 0;
}

/* num | num-num */
static int lc_range(const char **p, struct lc_set *s)
{
	unsigned a, b;
	int rc = lc_num(p, &a);

	if (rc)
		return rc;
	b = a;
	if (**p == '-') {
		(*p)++;
		rc = lc_num(p, &b);
		if (rc)
			return rc;
		if (b < a)
			return -EINVAL;
	}
	for (unsigned v = a; v <= b; v++) {
		rc = lc_add(s, v);
		if (rc)
			return rc;
	}
	return 0;
}

/* range | '(' range (',' range)* ')' */
static int lc_group(const char **p, struct lc_set *s)
{
	int rc;

	if (**p != '(')
		return lc_range(p, s);
	(*p)++;
	for (;;) {
		rc = lc_range(p, s);
		if (rc)
			return rc;
		if (**p == ')') {
			(*p)++;
			return 0;
		}
		if (**p != ',')
			return -EINVAL;
		(*p)++;
	}
}

static bool lc_seen(const struct femud_lcores *out, unsigned id)
{
	for (unsigned i = 0; i < out->n; i++)
		if (out->l[i].id == id)
			return true;
	return false;
}

static int lc_element(const char **p, struct femud_lcores *out)
{
	struct lc_set ids = {0}, cpus = {0};
	int rc = lc_group(p, &ids);

	if (rc)
		return rc;
	if (**p == '@') {
		(*p)++;
		rc = lc_group(p, &cpus);
		if (rc)
			return rc;
	}
	for (unsigned i = 0; i < ids.n; i++) {
		if (lc_seen(out, ids.v[i]))
			return -EEXIST;
		if (out->n == FEMUD_MAX_LCORES)
			return -E2BIG;
		out->l[out->n].id = ids.v[i];
		out->l[out->n].cpu = (int)(cpus.n ? cpus.v[0] : ids.v[i]);
		out->n++;
	}
	return 0;
}

int femud_lcores_parse(const char *s, struct femud_lcores *out, char *err, size_t errlen)
{
	const char *p = s;
	int rc;

	memset(out, 0, sizeof(*out));
	if (s == NULL || *s == '\0') {
		snprintf(err, errlen, "--lcores: empty list");
		return -EINVAL;
	}
	for (;;) {
		rc = lc_element(&p, out);
		if (rc)
			break;
		if (*p == '\0')
			return 0;
		if (*p != ',') {
			rc = -EINVAL;
			break;
		}
		p++;
	}
	if (rc == -EEXIST)
		snprintf(err, errlen, "--lcores '%s': an lcore id appears twice", s);
	else if (rc == -E2BIG)
		snprintf(err, errlen, "--lcores '%s': more than %d lcores", s, FEMUD_MAX_LCORES);
	else
		snprintf(err, errlen,
			 "--lcores '%s': cannot parse at '%s' (expected e.g. 2-3, 0@2,1@3 or auto)",
			 s, p);
	return -EINVAL;
}
