/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * num_parse.h - the one number parser of femud and its tools: unsigned
 * integers (decimal, optionally 0x hexadecimal or octal), sizes with binary
 * suffixes, "A-B" ranges, positive decimal fractions, with range checks and
 * error messages that name the option or key and the value.
 *
 * Used by daemon/ (options, lcores), ftl/ (model keys), numa/ (sizes) and
 * tools/ (femu-bench, femu-place, femu-floor).  It lives in ftl/ because
 * ftl/ is the bottom of the build order, and it is a library of its own
 * (num_dep) that depends on nothing.  Control path only.
 *
 * Syntax: the string must start with a digit (no sign, no space) and be
 * consumed entirely.
 */
#ifndef NUM_PARSE_H
#define NUM_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* num_parse() flags. */
#define NUM_HEX (1u << 0)   /* "0x..." is hexadecimal (otherwise decimal) */
#define NUM_OCTAL (1u << 1) /* octal digits only (permission bits) */
#define NUM_SUFFIX                                                                                 \
	(1u << 2) /* a binary size suffix: k/K m/M g/G t/T (2^10 .. 2^40), "B" or "iB" may follow  \
		   */

/*
 * Parse all of s as an unsigned number in [lo, hi].  Returns 0; -EINVAL
 * when s is not such a number (NULL, empty, sign, junk, a suffix where
 * none is allowed); -ERANGE when it is one but overflows 64 bits or lies
 * outside [lo, hi].  *out is written only on success.
 */
int num_parse(const char *s, unsigned flags, uint64_t lo, uint64_t hi, uint64_t *out);

/* A plain decimal number (no hex, no suffix), any 64-bit value. */
static inline int num_u64(const char *s, uint64_t *out)
{
	return num_parse(s, 0, 0, UINT64_MAX, out);
}

/* A size in bytes with an optional binary suffix ("4k", "2MiB", "1G"). */
static inline int num_size(const char *s, uint64_t *out)
{
	return num_parse(s, NUM_SUFFIX, 0, UINT64_MAX, out);
}

/*
 * A decimal number at *s inside a longer string (a tokenizer's step): the
 * digits there, at most hi; *s is moved past them.  Returns 0, -EINVAL (no
 * digit at *s) or -ERANGE.
 */
int num_scan(const char **s, uint64_t hi, uint64_t *out);

/*
 * "A" or "A-B" of decimal numbers in [lo, hi] with A <= B (*a = *b = A for
 * a single number).  Returns 0, -EINVAL or -ERANGE as num_parse().
 */
int num_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *a, uint64_t *b);

/*
 * A decimal fraction ("2", "0.5", "1e3") with lo < v <= hi.  Returns 0,
 * -EINVAL (not a number) or -ERANGE.
 */
int num_double(const char *s, double lo, double hi, double *out);

/* What a value must be, for table-driven option parsers. */
struct num_spec {
	unsigned flags;	    /* NUM_* */
	uint64_t lo, hi;    /* accepted range */
	const char *expect; /* e.g. "1..1024", "bytes > 0 (k/m/g suffixes)" */
};

/*
 * Parse val by spec; on error write "KEY VAL: EXPECT" to err (key as the
 * user wrote it: "--qd", "devsz_mb") and return -EINVAL or -ERANGE.
 */
int num_parse_key(const char *key, const char *val, const struct num_spec *spec, uint64_t *out,
		  char *err, size_t errlen);

#endif /* NUM_PARSE_H */
