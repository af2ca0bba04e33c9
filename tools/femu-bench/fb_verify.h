/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_verify.h - the --verify block format.  Every 512-byte sector written in
 * verify mode carries a header {magic, crc32c, lba, generation} and a payload
 * derived from (lba, generation), so any later run that knows the generation
 * (--verify-gen) can check a sector without state from the writing run.
 * The crc32c (DPDK rte_hash_crc) covers everything after the crc field.
 */
#ifndef FB_VERIFY_H
#define FB_VERIFY_H

#include <stdint.h>

#define FB_VERIFY_SECTOR 512u
#define FB_VERIFY_MAGIC 0x31564246u /* "FBV1" little endian */

enum fb_vres {
	FB_V_OK = 0,
	FB_V_ZERO,	/* all zero: never written */
	FB_V_BAD_MAGIC, /* not a femu-bench sector */
	FB_V_BAD_CRC,	/* header intact, content damaged */
	FB_V_BAD_LBA,	/* a valid sector of another LBA (misdirected I/O) */
	FB_V_BAD_GEN,	/* a valid sector of another generation (stale or lost write) */
	FB_V_BAD_DATA,	/* crc matches but the payload is not the expected pattern */
};

struct fb_vsec_hdr {
	uint32_t magic;
	uint32_t crc; /* crc32c of bytes [8, 512) */
	uint64_t lba; /* 512-byte sector number */
	uint64_t gen;
};

/* Write the stamped content of sector lba, generation gen, into buf (512 B). */
void fb_verify_stamp(void *buf, uint64_t lba, uint64_t gen);

/* Stamp nsec consecutive sectors starting at lba. */
void fb_verify_fill(void *buf, uint64_t lba, uint32_t nsec, uint64_t gen);

/* Check one sector; on a mismatch found_lba and found_gen say what was there. */
enum fb_vres fb_verify_check_sector(const void *buf, uint64_t lba, uint64_t gen,
				    uint64_t *found_lba, uint64_t *found_gen);

/*
 * Check nsec sectors.  Returns the index of the first bad sector (its result
 * in *res) or -1 when all are good.
 */
int fb_verify_check(const void *buf, uint64_t lba, uint32_t nsec, uint64_t gen, enum fb_vres *res,
		    uint64_t *found_lba, uint64_t *found_gen);

const char *fb_verify_res_str(enum fb_vres r);

#endif /* FB_VERIFY_H */
