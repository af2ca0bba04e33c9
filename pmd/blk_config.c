/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blk_config.c - virtio-blk config space, feature bits and GET_CONFIG
 * answers (see blk_config.h).
 */
#include <stddef.h>
#include <string.h>

#include <rte_common.h>
#include <rte_vhost.h>

#include "pmd/blk_config.h"
#include "pmd/blk_req.h"
#include "pmd/vq_guard.h"

/* The spec's values (virtio_blk_wire.h) are rte_vhost's. */
_Static_assert(VHU_F_PROTOCOL_FEATURES == VHOST_USER_F_PROTOCOL_FEATURES, "vhost-user feature bit");
_Static_assert(VHU_PF_MQ == VHOST_USER_PROTOCOL_F_MQ &&
		   VHU_PF_REPLY_ACK == VHOST_USER_PROTOCOL_F_REPLY_ACK &&
		   VHU_PF_CONFIG == VHOST_USER_PROTOCOL_F_CONFIG &&
		   VHU_PF_INFLIGHT_SHMFD == VHOST_USER_PROTOCOL_F_INFLIGHT_SHMFD &&
		   VHU_PF_LOG_SHMFD == VHOST_USER_PROTOCOL_F_LOG_SHMFD,
	       "vhost-user protocol feature bits");
_Static_assert(VHU_F_LOG_ALL == VHOST_F_LOG_ALL, "dirty log feature bit");
_Static_assert(offsetof(struct virtio_blk_config, write_zeroes_may_unmap) == 56,
	       "virtio-blk config layout");

uint64_t pmd_blk_features(bool readonly)
{
	/* LOG_ALL: the frontend may log femud's writes (live migration, vq_log.h) */
	uint64_t f = VIRTIO_BLK_WIRE_FEATURES | (1ULL << VIRTIO_RING_F_EVENT_IDX) |
		     (1ULL << VIRTIO_F_RING_PACKED) | (1ULL << VHU_F_LOG_ALL);

	if (readonly)
		f |= 1ULL << VIRTIO_BLK_F_RO;
	return f;
}

uint64_t pmd_blk_protocol_features(void)
{
	return VHU_BLK_PROTOCOL_FEATURES | (1ULL << VHU_PF_INFLIGHT_SHMFD) |
	       (1ULL << VHU_PF_LOG_SHMFD);
}

void pmd_blk_config_init(struct virtio_blk_config *cfg, const struct pmd_blk_params *p)
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

int pmd_blk_config_get(const struct virtio_blk_config *cfg, struct vhu_msg *msg)
{
	uint32_t off = msg->payload.config.offset;
	uint32_t len = msg->payload.config.size;
	uint32_t n = 0;

	if (pmd_guard_config_msg(msg) != NULL)
		return -1;
	/* the frontend's framing stays: msg->size is not changed */
	memset(msg->payload.config.region, 0, msg->size - VHU_CONFIG_HDR_SIZE);
	if (off < sizeof(*cfg)) {
		n = (uint32_t)sizeof(*cfg) - off;
		if (n > len)
			n = len;
		memcpy(msg->payload.config.region, (const uint8_t *)cfg + off, n);
	}
	return 0;
}

void pmd_blk_config_set(struct virtio_blk_config *cfg, const struct vhu_msg *msg)
{
	const uint32_t wce = offsetof(struct virtio_blk_config, wce);
	uint32_t off = msg->payload.config.offset;
	uint32_t len = msg->payload.config.size;

	if (pmd_guard_config_msg(msg) != NULL || off > wce || wce - off >= len)
		return;
	cfg->wce = msg->payload.config.region[wce - off] & 1;
}
