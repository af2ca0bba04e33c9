/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vhu_ctx.h - what rte_vhost hands femud's vhost-user message hooks: the
 * message (header and rte_vhost's whole payload union) followed by the
 * file descriptors it received with it.  The layout is DPDK 22.11's
 * struct vhu_msg_context (lib/vhost/vhost_user.h), in no public header;
 * femud reads the fds only after checking at run time that the bytes
 * there look like rte_vhost's fd array (see pmd_vhu_fds).
 *
 * The hooks need the fds for two things rte_vhost does not do: check the
 * file behind a memory region before rte_vhost maps it and reads rings in
 * it, and close the fds of a message femud answers or refuses itself
 * (rte_vhost closes them only for messages nobody handled).
 */
#ifndef PMD_VHU_CTX_H
#define PMD_VHU_CTX_H

#include <stdint.h>

#include "pmd/virtio_blk_wire.h"

/* Bytes of rte_vhost 22.11's VhostUserMsg payload union (its largest member). */
#define PMD_VHU_PAYLOAD_UNION 632

/* DPDK 22.11's struct vhu_msg_context: packed, the message first. */
struct pmd_vhu_ctx {
	union {
		struct vhu_msg msg;
		uint8_t raw[VHU_HDR_SIZE + PMD_VHU_PAYLOAD_UNION];
	} m;
	int fds[VHU_MAX_FDS];
	int fd_num;
} __attribute__((packed));

_Static_assert(sizeof(struct vhu_msg) <= VHU_HDR_SIZE + PMD_VHU_PAYLOAD_UNION,
	       "femud's message mirror fits in rte_vhost's");

/*
 * The fds rte_vhost received with the message, copied to fds: their count,
 * or -1 when the bytes after the message do not look like rte_vhost's fd
 * array (fd_num 0..8, fds[0..fd_num) open, the rest -1, as rte_vhost
 * leaves them): a DPDK whose layout differs.
 */
int pmd_vhu_fds(const void *ctx, int fds[VHU_MAX_FDS]);

/*
 * Close the fds of a message femud answers or refuses itself, and mark
 * them gone (fd_num 0, every slot -1) so that rte_vhost neither sends nor
 * closes them again.  Returns how many were closed, -1 (nothing done)
 * when pmd_vhu_fds() cannot see them.
 */
int pmd_vhu_fds_close(void *ctx);

/*
 * Attach fd to the reply of a message femud answers itself (rte_vhost sends
 * the fds of the context with it; fd stays the caller's).  0, or -1 (nothing
 * done) when pmd_vhu_fds() cannot see the fd array or the message had fds.
 */
int pmd_vhu_fd_reply(void *ctx, int fd);

#endif /* PMD_VHU_CTX_H */
