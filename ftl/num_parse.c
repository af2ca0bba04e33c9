/* SPDX-License-Identifier: GPL-2.0-or-later */
/* num_parse.c - numbers, sizes and ranges from strings (see num_parse.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftl/num_parse.h"

/* The binary shift of a size suffix letter, or -1. */
static int suffix_shift(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 10;
	case 'm':
	case 'M':
		return 20;
	case 'g':
	case 'G':
		return 30;
	case 't':
	case 'T':
		return 40;
	default:
		return -1;
	}
}

/* After the digits: an optional suffix; returns the shift, or -1 on junk. */
static int parse_suffix(const char *end, unsigned flags)
{
	int shift = 0;

	if (*end == '\0')
		return 0;
	if (!(flags & NUM_SUFFIX))
		return -1;
	shift = suffix_shift(*end);
	if (shift > 0)
		end++;
	else
		shift = 0;
	if (strcmp(end, "B") == 0 || (shift > 0 && strcmp(end, "iB") == 0) || *end == '\0')
		return shift;
	return -1;
}

int num_parse(const char *s, unsigned flags, uint64_t lo, uint64_t hi, uint64_t *out)
{
	int base = flags & NUM_OCTAL ? 8 : 10;
	unsigned long long v;
	char *end;
	int shift;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	if ((flags & NUM_HEX) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		if (s[2] == '\0' || s[2] == '-' || s[2] == '+' || s[2] == ' ')
			return -EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, base);
	if (end == s)
		return -EINVAL;
	shift = parse_suffix(end, flags);
	if (shift < 0)
		return -EINVAL;
	if (errno == ERANGE || (shift > 0 && v > (UINT64_MAX >> shift)))
		return -ERANGE;
	v <<= shift;
	if (v < lo || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

int num_scan(const char **s, uint64_t hi, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (**s < '0' || **s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(*s, &end, 10);
	if (errno == ERANGE || v > hi)
		return -ERANGE;
	*s = end;
	*out = v;
	return 0;
}

int num_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *a, uint64_t *b)
{
	const char *dash;
	char first[32];
	int rc;

	if (s == NULL)
		return -EINVAL;
	dash = strchr(s, '-');
	if (dash == NULL) {
		rc = num_parse(s, 0, lo, hi, a);
		if (rc == 0)
			*b = *a;
		return rc;
	}
	if ((size_t)(dash - s) >= sizeof(first))
		return -EINVAL;
	memcpy(first, s, (size_t)(dash - s));
	first[dash - s] = '\0';
	rc = num_parse(first, 0, lo, hi, a);
	if (rc == 0)
		rc = num_parse(dash + 1, 0, lo, hi, b);
	if (rc == 0 && *b < *a)
		rc = -EINVAL;
	return rc;
}

int num_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (s == NULL || ((*s < '0' || *s > '9') && *s != '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0')
		return -EINVAL;
	if (errno == ERANGE || !(v > lo) || v > hi)
		return -ERANGE;
	*out = v;
	return 0;
}

int num_parse_key(const char *key, const char *val, const struct num_spec *spec, uint64_t *out,
		  char *err, size_t errlen)
{
	int rc = num_parse(val, spec->flags, spec->lo, spec->hi, out);

	if (rc != 0)
		snprintf(err, errlen, "%s %s: %s", key, val ? val : "", spec->expect);
	return rc;
}
