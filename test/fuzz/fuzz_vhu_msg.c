/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_vhu_msg.c - libFuzzer target: femud's vhost-user message hooks and
 * queue lifecycle (pmd/pmd_blk.c) fed as a frontend would send messages,
 * through a fake rte_vhost (fake_vhost.c) over memfd-backed guest memory;
 * every queue femud starts is swept (pmd/vq.c, vq_chain.c, blk_req.c) after
 * every message, so rings, descriptors and requests the "guest" wrote are
 * served for real.
 *
 * Input: one byte for the model's completion delay (0: inline, else n us),
 * then up to 64 operations:
 *   0xff file(1) offset(4) len(1) bytes   the guest writes into a memory file
 *   R flags(1) nfds(1) fdsel(2) size(2) payload
 *                                          vhost-user request R % 64: flags
 *                                          (bit 3 REPLY_ACK), nfds % 9 fds,
 *                                          2 bits each of fdsel (0/1 guest
 *                                          file, 2-3 eventfd), payload of
 *                                          size % 269 bytes
 */
#include "fake_vhost.h"
#include "fuzz_util.h"

#define QUEUES 2
#define MAX_OPS 64

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fv_init(QUEUES);
	return 0;
}

static void guest_write(struct fz_in *in)
{
	uint8_t buf[256];
	unsigned f = fz_u8(in);
	uint32_t off = fz_u32(in);
	uint8_t len = fz_u8(in);

	fz_take(in, buf, len);
	fv_guest_write(f, off, buf, len);
}

static void message(struct fz_in *in, uint8_t op)
{
	struct fv_msg m;
	struct fv_result r;
	uint16_t fdsel;

	memset(&m, 0, sizeof(m));
	m.request = op % 64;
	m.flags = fz_u8(in);
	m.nfds = fz_u8(in) % (FV_MAX_FDS + 1);
	fdsel = fz_u16(in);
	for (unsigned i = 0; i < m.nfds; i++)
		m.fd_sel[i] = (fdsel >> (2 * i)) & 3;
	m.size = fz_u16(in) % (FV_PAYLOAD_MAX + 1);
	fz_take(in, m.payload, m.size);
	fv_message(&m, &r);
	if (m.request == VHU_GET_QUEUE_NUM && r.replied && !r.nack)
		FZ_CHECK(r.reply_u64 == QUEUES, "GET_QUEUE_NUM answered %llu, device has %u",
			 (unsigned long long)r.reply_u64, QUEUES);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};

	fv_begin((uint64_t)fz_u8(&in) * 1000);
	for (unsigned n = 0; n < MAX_OPS && in.left > 0; n++) {
		uint8_t op = fz_u8(&in);

		if (op == 0xff)
			guest_write(&in);
		else
			message(&in, op);
		fv_sweep();
	}
	fv_end();
	return 0;
}
