/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blk_config.c - virtio-blk config space, feature bits and GET_CONFIG
 * answers (see blk_config.h).
 */
#include <stddef.h>
#include <string.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include <rte_common.h>
#include <rte_vhost.h>

#include "pmd/blk_config.h"
#include "pmd/blk_req.h"
#include "pmd/vq_guard.h"

_Static_assert(sizeof(struct pmd_blk_config) == 60, "virtio-blk config layout");

uint64_t pmd_blk_features(bool readonly)
{
	uint64_t f = (1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_RING_F_INDIRECT_DESC) |
		     (1ULL << VIRTIO_RING_F_EVENT_IDX) | (1ULL << VHOST_USER_F_PROTOCOL_FEATURES) |
		     (1ULL << VIRTIO_BLK_F_SIZE_MAX) | (1ULL << VIRTIO_BLK_F_SEG_MAX) |
		     (1ULL << VIRTIO_BLK_F_BLK_SIZE) | (1ULL << VIRTIO_BLK_F_FLUSH) |
		     (1ULL << VIRTIO_BLK_F_TOPOLOGY) | (1ULL << VIRTIO_BLK_F_CONFIG_WCE) |
		     (1ULL << VIRTIO_BLK_F_MQ) | (1ULL << VIRTIO_BLK_F_DISCARD) |
		     (1ULL << VIRTIO_BLK_F_WRITE_ZEROES);

	if (readonly)
		f |= 1ULL << VIRTIO_BLK_F_RO;
	return f;
}

uint64_t pmd_blk_protocol_features(void)
{
	return (1ULL << VHOST_USER_PROTOCOL_F_MQ) | (1ULL << VHOST_USER_PROTOCOL_F_REPLY_ACK) |
	       (1ULL << VHOST_USER_PROTOCOL_F_CONFIG) |
	       (1ULL << VHOST_USER_PROTOCOL_F_INFLIGHT_SHMFD);
}

void pmd_blk_config_init(struct pmd_blk_config *cfg, const struct pmd_blk_params *p)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->capacity = p->capacity_bytes >> 9;
	cfg->size_max = PMD_BLK_SIZE_MAX;
	cfg->seg_max = PMD_BLK_SEG_MAX;
	cfg->blk_size = p->blk_size;
	cfg->min_io_size = 1;
	cfg->opt_io_size = 0; /* no preferred I/O size: none is faster */
	cfg->wce = 1;
	cfg->num_queues = (uint16_t)p->queues;
	cfg->max_discard_sectors = PMD_BLK_MAX_DWZ_SECTORS;
	cfg->max_discard_seg = PMD_BLK_MAX_DWZ_SEG;
	cfg->discard_sector_alignment = p->blk_size >> 9;
	cfg->max_write_zeroes_sectors = PMD_BLK_MAX_DWZ_SECTORS;
	cfg->max_write_zeroes_seg = PMD_BLK_MAX_DWZ_SEG;
	cfg->write_zeroes_may_unmap = 1;
}

int pmd_blk_config_get(const struct pmd_blk_config *cfg, struct pmd_vhu_msg *msg)
{
	uint32_t off = msg->payload.cfg.offset;
	uint32_t len = msg->payload.cfg.size;
	uint32_t n = 0;

	if (pmd_guard_config_msg(msg) != NULL)
		return -1;
	/* the frontend's framing stays: msg->size is not changed */
	memset(msg->payload.cfg.region, 0, msg->size - PMD_VHU_CONFIG_HDR_SIZE);
	if (off < sizeof(*cfg)) {
		n = (uint32_t)sizeof(*cfg) - off;
		if (n > len)
			n = len;
		memcpy(msg->payload.cfg.region, (const uint8_t *)cfg + off, n);
	}
	return 0;
}

void pmd_blk_config_set(struct pmd_blk_config *cfg, const struct pmd_vhu_msg *msg)
{
	const uint32_t wce = offsetof(struct pmd_blk_config, wce);
	uint32_t off = msg->payload.cfg.offset;
	uint32_t len = msg->payload.cfg.size;

	if (pmd_guard_config_msg(msg) != NULL || off > wce || wce - off >= len)
		return;
	cfg->wce = msg->payload.cfg.region[wce - off] & 1;
}
