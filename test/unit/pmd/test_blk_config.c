/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_blk_config.c - config space contents, feature bits and GET_CONFIG
 * answers for short, partial, over-long and out-of-range requests.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>

#include "pmd/blk_config.h"

static struct virtio_blk_config cfg;
static const struct pmd_blk_params params = {
    .path = "/tmp/x", .queues = 4, .blk_size = 4096, .capacity_bytes = 256ULL << 20};

static void setup(void)
{
	pmd_blk_config_init(&cfg, &params);
}

TestSuite(blk_config, .init = setup);

Test(blk_config, fields)
{
	cr_assert_eq(cfg.capacity, (256ULL << 20) / 512);
	cr_assert_eq(cfg.blk_size, 4096);
	cr_assert_eq(cfg.num_queues, 4);
	cr_assert_eq(cfg.discard_sector_alignment, 8);
	cr_assert_gt(cfg.seg_max, 0);
	cr_assert_gt(cfg.max_discard_seg, 0);
	cr_assert_eq(offsetof(struct virtio_blk_config, num_queues), 34);
	cr_assert_eq(offsetof(struct virtio_blk_config, write_zeroes_may_unmap), 56);
}

Test(blk_config, features)
{
	uint64_t rw = pmd_blk_features(false), ro = pmd_blk_features(true);

	cr_assert(rw & (1ULL << VIRTIO_F_VERSION_1));
	cr_assert(rw & (1ULL << VIRTIO_BLK_F_MQ));
	cr_assert(rw & (1ULL << VIRTIO_BLK_F_DISCARD));
	cr_assert(rw & (1ULL << VIRTIO_BLK_F_WRITE_ZEROES));
	cr_assert_not(rw & (1ULL << VIRTIO_BLK_F_RO));
	cr_assert_eq(ro, rw | (1ULL << VIRTIO_BLK_F_RO));
	cr_assert(pmd_blk_protocol_features() & (1ULL << 9));  /* CONFIG */
	cr_assert(pmd_blk_protocol_features() & (1ULL << 12)); /* INFLIGHT_SHMFD */
	cr_assert(rw & (1ULL << 30));			       /* VHOST_USER_F_PROTOCOL_FEATURES */
	cr_assert(rw & (1ULL << VIRTIO_RING_F_EVENT_IDX));
}

static struct vhu_msg msg;

/* GET_CONFIG framed with payload size msg_len (QEMU: 12 + len; SPDK: 12 + 256). */
static int ask_framed(uint32_t off, uint32_t len, uint32_t msg_len)
{
	memset(&msg, 0xaa, sizeof(msg));
	msg.request = VHU_GET_CONFIG;
	msg.size = msg_len;
	msg.payload.config.offset = off;
	msg.payload.config.size = len;
	return pmd_blk_config_get(&cfg, &msg);
}

static void ask(uint32_t off, uint32_t len)
{
	cr_assert_eq(ask_framed(off, len, VHU_CONFIG_HDR_SIZE + len), 0);
}

Test(blk_config, qemu_sized_request)
{
	ask(0, 57);
	cr_assert_eq(msg.size, VHU_CONFIG_HDR_SIZE + 57);
	cr_assert_eq(memcmp(msg.payload.config.region, &cfg, 57), 0);
	cr_assert_eq(msg.payload.config.region[57], 0xaa); /* nothing past the answer */
}

Test(blk_config, short_request_gets_prefix)
{
	ask(0, 8);
	cr_assert_eq(msg.payload.config.size, 8);
	cr_assert_eq(memcmp(msg.payload.config.region, &cfg, 8), 0);
}

Test(blk_config, offset_request_gets_window)
{
	ask(20, 4);
	cr_assert_eq(memcmp(msg.payload.config.region, (uint8_t *)&cfg + 20, 4), 0);
}

Test(blk_config, longer_request_padded_with_zeros)
{
	uint8_t zero[160] = {0};

	ask(0, 160);
	cr_assert_eq(msg.payload.config.size, 160);
	cr_assert_eq(memcmp(msg.payload.config.region, &cfg, sizeof(cfg)), 0);
	cr_assert_eq(memcmp(msg.payload.config.region + sizeof(cfg), zero, 160 - sizeof(cfg)), 0);
	/* past write_zeroes_may_unmap (byte 56): nothing femud offers, all zero */
	cr_assert_eq(memcmp(msg.payload.config.region + 60, zero, 100), 0);
}

Test(blk_config, request_past_end_is_zeros)
{
	ask(200, 16);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(msg.payload.config.region[i], 0);
}

/* SPDK's virtio-user: the full 256-byte payload, the wanted bytes in cfg.size. */
Test(blk_config, spdk_framing_kept)
{
	uint8_t zero[256] = {0};

	cr_assert_eq(ask_framed(0, 20, VHU_CONFIG_HDR_SIZE + VHU_MAX_CONFIG), 0);
	cr_assert_eq(msg.size, VHU_CONFIG_HDR_SIZE + VHU_MAX_CONFIG);
	cr_assert_eq(msg.payload.config.size, 20);
	cr_assert_eq(memcmp(msg.payload.config.region, &cfg, 20), 0);
	cr_assert_eq(memcmp(msg.payload.config.region + 20, zero, 256 - 20), 0);
}

Test(blk_config, qemu_framing_kept)
{
	ask(0, sizeof(cfg));
	cr_assert_eq(msg.size, VHU_CONFIG_HDR_SIZE + sizeof(cfg));
	cr_assert_eq(memcmp(msg.payload.config.region, &cfg, sizeof(cfg)), 0);
}

Test(blk_config, unusable_framing_refused_untouched)
{
	cr_assert_eq(ask_framed(0, 100000, VHU_CONFIG_HDR_SIZE + 256), -1); /* window > payload */
	cr_assert_eq(msg.payload.config.region[0], 0xaa);
	cr_assert_eq(ask_framed(0, 60, VHU_CONFIG_HDR_SIZE + 8), -1);
	cr_assert_eq(ask_framed(0, 0, 8), -1);	  /* no room for the config header */
	cr_assert_eq(ask_framed(0, 8, 4096), -1); /* more than 12 + 256 */
	cr_assert_eq(ask_framed(0, 0, 12), 0);	  /* an empty window is answerable */
	cr_assert_eq(msg.size, 12);
}

static void set_window(uint32_t off, uint32_t len, uint8_t fill)
{
	memset(&msg, 0, sizeof(msg));
	msg.request = VHU_SET_CONFIG;
	msg.payload.config.offset = off;
	msg.payload.config.size = len;
	msg.size = VHU_CONFIG_HDR_SIZE + (len < 256 ? len : 256);
	memset(msg.payload.config.region, fill, sizeof(msg.payload.config.region));
	pmd_blk_config_set(&cfg, &msg);
}

Test(blk_config, set_config_changes_only_wce)
{
	struct virtio_blk_config before = cfg;

	cr_assert_eq(cfg.wce, 1);
	set_window(offsetof(struct virtio_blk_config, wce), 1, 0);
	cr_assert_eq(cfg.wce, 0);
	set_window(0, sizeof(cfg), 0xff); /* whole struct: only wce is taken */
	cr_assert_eq(cfg.wce, 1);
	before.wce = 1;
	cr_assert_eq(memcmp(&cfg, &before, sizeof(cfg)), 0);
}

Test(blk_config, set_config_outside_wce_ignored)
{
	set_window(0, 8, 0);
	cr_assert_eq(cfg.wce, 1);
	set_window(33, 8, 0);
	cr_assert_eq(cfg.wce, 1);
	set_window(0, 100000, 0);
	cr_assert_eq(cfg.wce, 1);
}
