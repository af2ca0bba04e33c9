/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_util.h - shared by the libFuzzer targets in test/fuzz/: a cursor that
 * takes fixed-size fields out of the fuzzer's input (missing bytes read as
 * zero, so every input is a valid program) and the invariant check that
 * turns a broken promise into a crash libFuzzer records.
 */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fz_in {
	const uint8_t *p;
	size_t left;
};

static inline void fz_take(struct fz_in *in, void *dst, size_t n)
{
	size_t k = n < in->left ? n : in->left;

	memset(dst, 0, n);
	memcpy(dst, in->p, k);
	in->p += k;
	in->left -= k;
}

/* fz_u8() .. fz_u64(): the next field, in the host's byte order. */
#define FZ_GETTER(name, type)                                                                      \
	static inline type name(struct fz_in *in)                                                  \
	{                                                                                          \
		type v;                                                                            \
		fz_take(in, &v, sizeof(v));                                                        \
		return v;                                                                          \
	}
FZ_GETTER(fz_u8, uint8_t)
FZ_GETTER(fz_u16, uint16_t)
FZ_GETTER(fz_u32, uint32_t)
FZ_GETTER(fz_u64, uint64_t)

/* An invariant of the code under test does not hold: abort with a message. */
#define FZ_CHECK(cond, ...)                                                                        \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz invariant broken (%s:%d): %s: ", __FILE__, __LINE__, \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif /* FUZZ_UTIL_H */
