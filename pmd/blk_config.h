/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blk_config.h - the virtio-blk config space femud offers, the feature
 * bits, and the vhost-user GET_CONFIG / SET_CONFIG answers.
 *
 * rte_vhost 22.11 answers GET_CONFIG only for vDPA devices, so femud
 * answers it from a pre_msg_handle hook.  The vhost-user message layout is
 * not in a public DPDK header; struct pmd_vhu_msg mirrors the part of it
 * femud reads (the vhost-user specification's wire format).
 */
#ifndef PMD_BLK_CONFIG_H
#define PMD_BLK_CONFIG_H

#include <stdint.h>

#include "pmd/pmd.h"

/* virtio-blk config space up to write_zeroes_may_unmap (virtio 1.1), 60 bytes. */
struct pmd_blk_config {
	uint64_t capacity; /* 512-byte sectors */
	uint32_t size_max;
	uint32_t seg_max;
	uint16_t cylinders;
	uint8_t heads;
	uint8_t sectors;
	uint32_t blk_size;
	uint8_t physical_block_exp;
	uint8_t alignment_offset;
	uint16_t min_io_size;
	uint32_t opt_io_size;
	uint8_t wce;
	uint8_t unused;
	uint16_t num_queues;
	uint32_t max_discard_sectors;
	uint32_t max_discard_seg;
	uint32_t discard_sector_alignment;
	uint32_t max_write_zeroes_sectors;
	uint32_t max_write_zeroes_seg;
	uint8_t write_zeroes_may_unmap;
	uint8_t unused1[3];
} __attribute__((packed));

/* vhost-user requests femud looks at. */
enum pmd_vhu_request {
	PMD_VHU_RESET_OWNER = 4,
	PMD_VHU_SET_MEM_TABLE = 5,
	PMD_VHU_SET_VRING_NUM = 8,
	PMD_VHU_SET_VRING_ADDR = 9,
	PMD_VHU_SET_VRING_BASE = 10,
	PMD_VHU_GET_VRING_BASE = 11,
	PMD_VHU_SET_VRING_KICK = 12,
	PMD_VHU_SET_VRING_CALL = 13,
	PMD_VHU_SET_VRING_ERR = 14,
	PMD_VHU_GET_QUEUE_NUM = 17,
	PMD_VHU_SET_VRING_ENABLE = 18,
	PMD_VHU_GET_CONFIG = 24,
	PMD_VHU_SET_CONFIG = 25,
	PMD_VHU_GET_INFLIGHT_FD = 31,
	PMD_VHU_SET_INFLIGHT_FD = 32,
	PMD_VHU_ADD_MEM_REG = 37,
	PMD_VHU_REM_MEM_REG = 38,
};

#define PMD_VHU_HDR_SIZE 12	   /* request, flags, size */
#define PMD_VHU_CONFIG_HDR_SIZE 12 /* offset, size, flags */
#define PMD_VHU_MAX_CONFIG_SIZE 256
#define PMD_VHU_VRING_IDX_MASK 0xffu /* in the u64 of SET_VRING_KICK/CALL/ERR */

/* The start of a vhost-user message as rte_vhost passes it to the hooks. */
struct pmd_vhu_msg {
	uint32_t request;
	uint32_t flags;
	uint32_t size; /* payload bytes */
	union {
		uint64_t u64;
		struct {
			uint32_t index;
			uint32_t num;
		} state;
		struct {
			uint32_t offset;
			uint32_t size;
			uint32_t flags;
			uint8_t region[PMD_VHU_MAX_CONFIG_SIZE];
		} cfg;
	} payload;
} __attribute__((packed));

/* Virtio feature bits offered for a device (readonly adds VIRTIO_BLK_F_RO). */
uint64_t pmd_blk_features(bool readonly);

/* vhost-user protocol features offered. */
uint64_t pmd_blk_protocol_features(void);

/* Fill the config space of a device. */
void pmd_blk_config_init(struct pmd_blk_config *cfg, const struct pmd_blk_params *p);

/*
 * Answer a GET_CONFIG message in place, keeping the frontend's framing as
 * rte_vhost's own handler does: the reply has the payload size the request
 * had (QEMU: 12 + size; SPDK's virtio-user: 12 + 256 with the wanted bytes
 * in the config header's size), the window [offset, offset + size) of cfg
 * is copied (bytes past the end of cfg and the rest of the payload read as
 * zero).  Returns 0, or -1 without touching msg when its framing is not
 * usable (pmd_guard_config_msg()): the message must then be refused.
 */
int pmd_blk_config_get(const struct pmd_blk_config *cfg, struct pmd_vhu_msg *msg);

/*
 * Apply a SET_CONFIG message: only the writeback byte (wce) is writable in
 * virtio-blk; every other byte of the window is ignored.  A message whose
 * framing is not usable, or a window not covering wce, is ignored as a whole.
 */
void pmd_blk_config_set(struct pmd_blk_config *cfg, const struct pmd_vhu_msg *msg);

#endif /* PMD_BLK_CONFIG_H */
