/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blk_config.h - the virtio-blk config space femud offers, the feature
 * bits, and the vhost-user GET_CONFIG / SET_CONFIG answers.
 *
 * rte_vhost 22.11 answers GET_CONFIG only for vDPA devices, so femud
 * answers it from a pre_msg_handle hook.  The config space layout is the
 * kernel's struct virtio_blk_config; the vhost-user message layout (in no
 * public DPDK header) and the feature sets are in virtio_blk_wire.h, shared
 * with femu-bench.
 */
#ifndef PMD_BLK_CONFIG_H
#define PMD_BLK_CONFIG_H

#include <stdint.h>

#include "pmd/pmd.h"
#include "pmd/virtio_blk_wire.h"

/* Virtio feature bits offered for a device (readonly adds VIRTIO_BLK_F_RO). */
uint64_t pmd_blk_features(bool readonly);

/* vhost-user protocol features offered. */
uint64_t pmd_blk_protocol_features(void);

/* Fill the config space of a device. */
void pmd_blk_config_init(struct virtio_blk_config *cfg, const struct pmd_blk_params *p);

/*
 * Answer a GET_CONFIG message in place, keeping the frontend's framing as
 * rte_vhost's own handler does: the reply has the payload size the request
 * had (QEMU: 12 + size; SPDK's virtio-user: 12 + 256 with the wanted bytes
 * in the config header's size), the window [offset, offset + size) of cfg
 * is copied (bytes past the end of cfg and the rest of the payload read as
 * zero).  Returns 0, or -1 without touching msg when its framing is not
 * usable (pmd_guard_config_msg()): the message must then be refused.
 */
int pmd_blk_config_get(const struct virtio_blk_config *cfg, struct vhu_msg *msg);

/*
 * Apply a SET_CONFIG message: only the writeback byte (wce) is writable in
 * virtio-blk; every other byte of the window is ignored.  A message whose
 * framing is not usable, or a window not covering wce, is ignored as a whole.
 */
void pmd_blk_config_set(struct virtio_blk_config *cfg, const struct vhu_msg *msg);

#endif /* PMD_BLK_CONFIG_H */
