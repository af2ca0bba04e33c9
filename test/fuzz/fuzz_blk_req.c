/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_blk_req.c - libFuzzer target: the virtio-blk request layer
 * (pmd/blk_req.c) on chains the walker could have produced, without going
 * through a descriptor table, so the fuzzer reaches every request type,
 * sector range and segment layout quickly.
 *
 * Input: device (capacity in sectors: 4 bytes; flags: 1 byte, bit 0
 * readonly, bit 1 4096-byte blocks, bits 2-3 model status), the 16-byte
 * request header, the number of readable and writable segments (1 byte
 * each), one 4-byte length per segment (taken modulo 16 KiB, plus 1), then the
 * readable data (discard / write-zeroes segment lists).  Every segment is
 * its own heap allocation of exactly its length, so AddressSanitizer reports
 * any access past a segment.
 */
#include "fuzz_blk.h"

#define SEG_LEN_MAX 16384u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	static struct pmd_chain c;
	struct pmd_blk_target t;
	struct pmd_blk_done done;
	struct fake_model m;
	uint8_t status_byte = 0xff;
	uint64_t sectors;
	uint8_t flags;

	sectors = fz_u32(&in);
	flags = fz_u8(&in);
	fg_target(&t, &m, 0);
	t.blk_size = (flags & 2) ? 4096 : 512;
	t.capacity = sectors * 512 / t.blk_size * t.blk_size;
	t.readonly = flags & 1;
	m.status = (enum fm_status)((flags >> 2) % 3);

	memset(&c, 0, sizeof(c));
	fz_take(&in, &c.hdr, sizeof(c.hdr));
	c.nrd = fz_u8(&in) % (PMD_CHAIN_MAX_IOV / 2 + 1);
	c.nwr = fz_u8(&in) % (PMD_CHAIN_MAX_IOV / 2 + 1);
	c.status = &status_byte;
	for (uint32_t i = 0; i < c.nrd + c.nwr; i++) {
		uint32_t len = fz_u32(&in) % SEG_LEN_MAX + 1;

		c.iov[i].len = len;
		c.iov[i].base = malloc(len);
		memset(c.iov[i].base, 0, len);
		if (i < c.nrd) {
			fz_take(&in, c.iov[i].base, len > in.left ? in.left : len);
			c.rd_len += len;
		} else {
			c.wr_len += len;
		}
	}

	pmd_blk_req_exec(&t, &c, PMD_CHAIN_OK, 1000, &done);
	fz_check_done(&c, PMD_CHAIN_OK, &done);
	fz_check_model_reqs(&t, &m, 0);
	if (done.status != VIRTIO_BLK_S_OK)
		FZ_CHECK(done.used_len == 1, "a failed request reports %u bytes written",
			 done.used_len);
	pmd_blk_req_exec(&t, &c, PMD_CHAIN_IOERR, 1000, &done);
	FZ_CHECK(done.status == VIRTIO_BLK_S_IOERR && done.used_len == 1,
		 "a rejected chain was answered %u with %u bytes", done.status, done.used_len);
	for (uint32_t i = 0; i < c.nrd + c.nwr; i++)
		free(c.iov[i].base);
	return 0;
}
