/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * virtio_blk_wire.h - the wire formats both ends of a vhost-user-blk socket
 * speak, in one place: femud's backend (pmd/) and femu-bench's frontend
 * (tools/femu-bench/) include this header and declare none of it again.
 *
 *  - virtio-blk requests and config space, and the split ring: the kernel's
 *    UAPI headers (<linux/virtio_blk.h>, <linux/virtio_ring.h>,
 *    <linux/virtio_config.h>), included from here;
 *  - vhost-user messages, flags and protocol feature bits: in no public
 *    header (DPDK keeps its own private copy), so declared here after the
 *    vhost-user specification (QEMU docs/interop/vhost-user.rst);
 *  - the feature sets femud offers and femu-bench asks for.
 *
 * Needs no library: plain C types and constants only.  Little-endian
 * (vhost-user and virtio 1.x are).
 */
#ifndef PMD_VIRTIO_BLK_WIRE_H
#define PMD_VIRTIO_BLK_WIRE_H

#include <stdint.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

/* ---- vhost-user messages ---- */

/* Front-end requests (the ones femud or femu-bench send or handle). */
enum vhu_request {
	VHU_GET_FEATURES = 1,
	VHU_SET_FEATURES = 2,
	VHU_SET_OWNER = 3,
	VHU_RESET_OWNER = 4,
	VHU_SET_MEM_TABLE = 5,
	VHU_SET_LOG_BASE = 6,
	VHU_SET_LOG_FD = 7,
	VHU_SET_VRING_NUM = 8,
	VHU_SET_VRING_ADDR = 9,
	VHU_SET_VRING_BASE = 10,
	VHU_GET_VRING_BASE = 11,
	VHU_SET_VRING_KICK = 12,
	VHU_SET_VRING_CALL = 13,
	VHU_SET_VRING_ERR = 14,
	VHU_GET_PROTOCOL_FEATURES = 15,
	VHU_SET_PROTOCOL_FEATURES = 16,
	VHU_GET_QUEUE_NUM = 17,
	VHU_SET_VRING_ENABLE = 18,
	VHU_GET_CONFIG = 24,
	VHU_SET_CONFIG = 25,
	VHU_GET_INFLIGHT_FD = 31,
	VHU_SET_INFLIGHT_FD = 32,
	VHU_ADD_MEM_REG = 37,
	VHU_REM_MEM_REG = 38,
};

/* Header flags. */
#define VHU_FLAG_VERSION 0x1u	 /* protocol version 1, always set */
#define VHU_FLAG_REPLY 0x4u	 /* a reply */
#define VHU_FLAG_NEED_REPLY 0x8u /* ack wanted (with VHU_PF_REPLY_ACK) */

/* In the u64 of SET_VRING_KICK / SET_VRING_CALL / SET_VRING_ERR: the vring index, and no fd. */
#define VHU_VRING_IDX_MASK 0xffu
#define VHU_VRING_NOFD (1ull << 8)

/* The virtio feature bit that says vhost-user protocol features are negotiated. */
#define VHU_F_PROTOCOL_FEATURES 30
/* The virtio feature bit (vhost's VHOST_F_LOG_ALL) that turns dirty logging on. */
#define VHU_F_LOG_ALL 26

/* Protocol feature bits (GET/SET_PROTOCOL_FEATURES). */
enum vhu_protocol_feature {
	VHU_PF_MQ = 0,
	VHU_PF_LOG_SHMFD = 1,
	VHU_PF_REPLY_ACK = 3,
	VHU_PF_CONFIG = 9,
	VHU_PF_INFLIGHT_SHMFD = 12,
};

#define VHU_HDR_SIZE 12	       /* request, flags, size */
#define VHU_CONFIG_HDR_SIZE 12 /* offset, size, flags of a GET/SET_CONFIG payload */
#define VHU_MAX_CONFIG 256     /* config-space bytes one GET/SET_CONFIG carries */
#define VHU_MAX_REGIONS 8      /* memory regions in one SET_MEM_TABLE */
#define VHU_MAX_FDS 8	       /* file descriptors passed with one message */

/* SET_MEM_TABLE: one guest memory region (addresses and sizes in bytes). */
struct vhu_mem_region {
	uint64_t gpa;
	uint64_t size;
	uint64_t uaddr; /* the frontend's virtual address */
	uint64_t mmap_offset;
};

struct vhu_mem_table {
	uint32_t nregions;
	uint32_t padding;
	struct vhu_mem_region region[VHU_MAX_REGIONS];
};

/* ADD_MEM_REG / REM_MEM_REG: one region. */
struct vhu_mem_reg {
	uint64_t padding;
	struct vhu_mem_region region;
};

/* SET_VRING_NUM / SET_VRING_BASE / GET_VRING_BASE / SET_VRING_ENABLE. */
struct vhu_vring_state {
	uint32_t index;
	uint32_t num;
};

/* SET_VRING_ADDR: the rings' addresses in the frontend's address space. */
struct vhu_vring_addr {
	uint32_t index;
	uint32_t flags;
	uint64_t desc;
	uint64_t used;
	uint64_t avail;
	uint64_t log;
};

/* GET_INFLIGHT_FD / SET_INFLIGHT_FD: the shared inflight region (bytes; entries). */
struct vhu_inflight {
	uint64_t mmap_size;
	uint64_t mmap_offset;
	uint16_t num_queues;
	uint16_t queue_size;
};

/* SET_LOG_BASE: the dirty log, one bit per 4 KiB page of guest physical memory (bytes). */
struct vhu_log {
	uint64_t mmap_size;
	uint64_t mmap_offset;
};

/* GET_CONFIG / SET_CONFIG: a window [offset, offset + size) of the config space. */
struct vhu_config {
	uint32_t offset;
	uint32_t size;
	uint32_t flags;
	uint8_t region[VHU_MAX_CONFIG];
};

/* A message: header, then size bytes of payload (file descriptors travel beside it). */
struct vhu_msg {
	uint32_t request;
	uint32_t flags;
	uint32_t size; /* payload bytes */
	union {
		uint64_t u64;
		struct vhu_vring_state state;
		struct vhu_vring_addr addr;
		struct vhu_mem_table mem;
		struct vhu_mem_reg memreg;
		struct vhu_inflight inflight;
		struct vhu_log log;
		struct vhu_config config;
	} payload;
} __attribute__((packed));

_Static_assert(sizeof(struct vhu_mem_region) == 32, "vhost-user memory region layout");
_Static_assert(sizeof(struct vhu_vring_addr) == 40, "vhost-user vring address layout");
_Static_assert(sizeof(struct vhu_inflight) == 24, "vhost-user inflight layout");

/* ---- feature sets ---- */

/*
 * The virtio features of a vhost-user-blk device that femud offers and
 * femu-bench asks for, besides the two that vary: VIRTIO_BLK_F_RO (femud:
 * readonly devices; femu-bench: accepted when offered) and
 * VIRTIO_RING_F_EVENT_IDX (femud: always; femu-bench: when asked to).
 */
#define VIRTIO_BLK_WIRE_FEATURES                                                                   \
	((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_INDIRECT_DESC) |                    \
	 (1ull << VHU_F_PROTOCOL_FEATURES) | (1ull << VIRTIO_BLK_F_SIZE_MAX) |                     \
	 (1ull << VIRTIO_BLK_F_SEG_MAX) | (1ull << VIRTIO_BLK_F_BLK_SIZE) |                        \
	 (1ull << VIRTIO_BLK_F_FLUSH) | (1ull << VIRTIO_BLK_F_TOPOLOGY) |                          \
	 (1ull << VIRTIO_BLK_F_CONFIG_WCE) | (1ull << VIRTIO_BLK_F_MQ) |                           \
	 (1ull << VIRTIO_BLK_F_DISCARD) | (1ull << VIRTIO_BLK_F_WRITE_ZEROES))

/*
 * The protocol features both ends use; femud offers VHU_PF_INFLIGHT_SHMFD
 * on top (QEMU keeps inflight state across a backend restart, femu-bench
 * does not).
 */
#define VHU_BLK_PROTOCOL_FEATURES                                                                  \
	((1ull << VHU_PF_MQ) | (1ull << VHU_PF_REPLY_ACK) | (1ull << VHU_PF_CONFIG))

#endif /* PMD_VIRTIO_BLK_WIRE_H */
