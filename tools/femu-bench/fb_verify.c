/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_verify.c - stamp and check --verify sectors (see fb_verify.h).
 */
#include "fb_verify.h"

#include <stddef.h>
#include <string.h>

#include <rte_hash_crc.h>

#define PAYLOAD_WORDS ((FB_VERIFY_SECTOR - sizeof(struct fb_vsec_hdr)) / 8)

static inline uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void payload(uint64_t *w, uint64_t lba, uint64_t gen)
{
	uint64_t s = lba * 0xd1b54a32d192ed03ull ^ gen * 0x8cb92ba72f3d8dd7ull;
	for (size_t i = 0; i < PAYLOAD_WORDS; i++)
		w[i] = splitmix64(&s);
}

static uint32_t sector_crc(const void *buf)
{
	return rte_hash_crc((const uint8_t *)buf + 8, FB_VERIFY_SECTOR - 8, 0xffffffffu);
}

void fb_verify_stamp(void *buf, uint64_t lba, uint64_t gen)
{
	struct fb_vsec_hdr *h = buf;

	h->magic = FB_VERIFY_MAGIC;
	h->lba = lba;
	h->gen = gen;
	payload((uint64_t *)(h + 1), lba, gen);
	h->crc = sector_crc(buf);
}

void fb_verify_fill(void *buf, uint64_t lba, uint32_t nsec, uint64_t gen)
{
	for (uint32_t i = 0; i < nsec; i++)
		fb_verify_stamp((uint8_t *)buf + (size_t)i * FB_VERIFY_SECTOR, lba + i, gen);
}

static int all_zero(const void *buf)
{
	const uint64_t *w = buf;
	for (size_t i = 0; i < FB_VERIFY_SECTOR / 8; i++)
		if (w[i])
			return 0;
	return 1;
}

enum fb_vres fb_verify_check_sector(const void *buf, uint64_t lba, uint64_t gen,
				    uint64_t *found_lba, uint64_t *found_gen)
{
	const struct fb_vsec_hdr *h = buf;
	uint64_t expect[PAYLOAD_WORDS];

	*found_lba = h->lba;
	*found_gen = h->gen;
	if (h->magic != FB_VERIFY_MAGIC)
		return all_zero(buf) ? FB_V_ZERO : FB_V_BAD_MAGIC;
	if (h->crc != sector_crc(buf))
		return FB_V_BAD_CRC;
	if (h->lba != lba)
		return FB_V_BAD_LBA;
	if (h->gen != gen)
		return FB_V_BAD_GEN;
	payload(expect, lba, gen);
	if (memcmp(h + 1, expect, sizeof(expect)) != 0)
		return FB_V_BAD_DATA;
	return FB_V_OK;
}

int fb_verify_check(const void *buf, uint64_t lba, uint32_t nsec, uint64_t gen, enum fb_vres *res,
		    uint64_t *found_lba, uint64_t *found_gen)
{
	for (uint32_t i = 0; i < nsec; i++) {
		enum fb_vres r =
		    fb_verify_check_sector((const uint8_t *)buf + (size_t)i * FB_VERIFY_SECTOR,
					   lba + i, gen, found_lba, found_gen);
		if (r != FB_V_OK) {
			*res = r;
			return (int)i;
		}
	}
	return -1;
}

const char *fb_verify_res_str(enum fb_vres r)
{
	switch (r) {
	case FB_V_OK:
		return "ok";
	case FB_V_ZERO:
		return "all zeros (never written)";
	case FB_V_BAD_MAGIC:
		return "not a femu-bench sector (bad magic)";
	case FB_V_BAD_CRC:
		return "checksum mismatch";
	case FB_V_BAD_LBA:
		return "sector of another LBA";
	case FB_V_BAD_GEN:
		return "wrong generation";
	case FB_V_BAD_DATA:
		return "payload mismatch";
	}
	return "?";
}
