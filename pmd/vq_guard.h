/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_guard.h - what a frontend hands femud must be checked before a poller
 * touches it: the guest memory table (every region backed by its file for
 * its full length), the three rings of a split virtqueue or the descriptor
 * ring and event areas of a packed one (each inside one guest memory region
 * for its full length, aligned as virtio requires),
 * the vring index a vhost-user message names, and a queue's notifier fds.
 *
 * All functions are pure checks on the control path: nothing here writes
 * guest memory or keeps state.  Also the identity of a ring (the file and
 * offset behind it), so that a ring is served by one connection only.
 * Units: bytes.
 */
#ifndef PMD_VQ_GUARD_H
#define PMD_VQ_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_vhost.h>

#include "pmd/blk_config.h"

/* A split virtqueue as rte_vhost hands it out (host virtual addresses). */
struct pmd_ring_layout {
	const void *desc;
	const void *avail;
	const void *used;
	uint32_t size;	/* entries */
	bool event_idx; /* VIRTIO_RING_F_EVENT_IDX: used_event / avail_event exist */
	bool packed;	/* a packed ring: desc the descriptor ring, avail / used the
			   driver / device event suppression areas */
};

/* Bytes of each ring of a queue of size entries (virtio 1.2, 2.7.2). */
uint64_t pmd_ring_desc_bytes(uint32_t size);
uint64_t pmd_ring_avail_bytes(uint32_t size, bool event_idx); /* with used_event */
uint64_t pmd_ring_used_bytes(uint32_t size, bool event_idx);  /* with avail_event */

/* True when [hva, hva + len) lies inside the host mapping of one region of mem. */
bool pmd_guard_range(const struct rte_vhost_memory *mem, const void *hva, uint64_t len);

/*
 * NULL when the queue's size is a power of two in 1..32768 and each ring is
 * aligned (descriptor table 16, avail 2, used 4 bytes; packed: descriptor
 * ring 16, event areas 4) and lies entirely inside one guest memory region,
 * event-index fields included; else a
 * static string naming the first ring that fails.
 */
const char *pmd_guard_rings(const struct rte_vhost_memory *mem, const struct pmd_ring_layout *r);

/*
 * 0 when fd is a regular file at least offset + len bytes long (len > 0,
 * no overflow), so that a mapping of [offset, offset + len) of it never
 * raises SIGBUS; else -1 with the reason in why.
 */
int pmd_guard_file(int fd, uint64_t offset, uint64_t len, char *why, size_t whylen);

/*
 * The same for a SET_MEM_TABLE (or ADD_MEM_REG) message before rte_vhost
 * maps it: every region i with an fd (i < nfds) against fds[i]
 * (mmap_offset + size).  0 for every other message, and for tables
 * rte_vhost refuses itself (too many regions, short payload, fds missing).
 */
int pmd_guard_mem_msg(const struct vhu_msg *msg, const int *fds, int nfds, char *why,
		      size_t whylen);

/*
 * 0 when the file behind every region of mem (region fd, fstat) is a
 * regular file at least mmap_offset + size bytes long, so that no access
 * inside a region can fault with SIGBUS; else -1 with the reason in why.
 */
int pmd_guard_mem(const struct rte_vhost_memory *mem, char *why, size_t whylen);

/*
 * The vring index a vhost-user message names (SET_VRING_NUM, _ADDR, _BASE,
 * _KICK, _CALL, _ERR, _ENABLE, GET_VRING_BASE): true with *idx set, false
 * for every other message.
 */
bool pmd_guard_vring_index(const struct vhu_msg *msg, uint32_t *idx);

/*
 * NULL when a vring message may be applied to a device of `queues` queues:
 * its vring index is below queues, and SET_VRING_NUM's size is a power of
 * two in 1..32768 (a split ring).  Else the reason, written to buf.
 * Messages that name no vring always pass.
 */
const char *pmd_guard_vring_msg(const struct vhu_msg *msg, uint32_t queues, char *buf, size_t len);

/*
 * Where a ring lives, independent of who mapped it: the file behind its
 * guest memory region (device and inode) and the ring's offset in that
 * file.  Two connections whose queues have the same identity drive the same
 * ring (a frontend that reconnected on the same memory).
 */
struct pmd_ring_id {
	uint64_t dev, ino, off; /* off: bytes into the file */
	bool valid;
};

/*
 * The identity of the ring at hva in mem (rte_vhost maps each region's file
 * from offset 0, so the file offset is hva - mmap_addr); valid is false when
 * hva is in no region or the region's file cannot be looked at.
 */
struct pmd_ring_id pmd_ring_id_of(const struct rte_vhost_memory *mem, const void *hva);

static inline bool pmd_ring_id_same(const struct pmd_ring_id *a, const struct pmd_ring_id *b)
{
	return a->valid && b->valid && a->dev == b->dev && a->ino == b->ino && a->off == b->off;
}

/* Bytes rte_vhost gives each split queue in the inflight region (queue_size entries). */
uint64_t pmd_inflight_queue_bytes(uint32_t queue_size);
/* The same for a packed ring's area (rte_vhost_inflight_info_packed). */
uint64_t pmd_inflight_packed_queue_bytes(uint32_t queue_size);

/*
 * NULL when a GET_INFLIGHT_FD / SET_INFLIGHT_FD message fits a device of
 * `queues` queues: queue_size a power of two in 1..32768, num_queues in
 * 1..queues, and for SET_INFLIGHT_FD an mmap_size that holds num_queues
 * queue areas (packed: of the packed layout, which rte_vhost picks from the
 * negotiated features) and a file (fd) that backs mmap_offset + mmap_size
 * (rte_vhost writes each queue's area as soon as it maps the region).  Else
 * the reason, written to buf.  Other messages, and a payload of the wrong
 * size (rte_vhost refuses it), pass.
 */
const char *pmd_guard_inflight_msg(const struct vhu_msg *msg, int fd, uint32_t queues, bool packed,
				   char *buf, size_t len);

/*
 * NULL when a SET_LOG_BASE message can be mapped safely: one fd, a
 * 16-byte payload, a log of at least one byte whose file (fd) backs
 * mmap_offset + mmap_size (pollers mark pages in it as soon as logging is
 * on: a short file would raise SIGBUS there).  Else the reason, in buf.
 */
const char *pmd_guard_log_msg(const struct vhu_msg *msg, const int *fds, int nfds, char *buf,
			      size_t len);

/*
 * Is the framing of a GET_CONFIG / SET_CONFIG message usable?  Its payload
 * must hold the 12-byte config header and at most 256 bytes of region, and
 * the window it asks for (config header's size) must fit in the payload it
 * sent: QEMU sends exactly 12 + size bytes, SPDK's virtio-user the full
 * 12 + 256 with a smaller size.  NULL when usable, else why not.
 */
const char *pmd_guard_config_msg(const struct vhu_msg *msg);

/*
 * A queue's notifiers as rte_vhost hands them out (-1: none): vhost-user
 * passes them as eventfds.  A poller writes its calls without waiting, and
 * another kind of file (a full pipe, a socket) would block it, and every
 * queue on it, for good.  NULL if both are usable, else which one is not.
 */
const char *pmd_guard_notify_fds(int callfd, int kickfd);

/* Is fd (>= 0) an eventfd of this process?  Reads /proc: control paths only. */
bool pmd_guard_fd_is_eventfd(int fd);

/*
 * Make a notifier eventfd non-blocking (fd < 0: nothing).  A write into an
 * eventfd whose counter the frontend filled to its maximum blocks until
 * someone reads it: a blocking call fd would stop a poller for good, a
 * kick fd the control thread's read of it.  The flag belongs to the open
 * file the frontend shares (QEMU's eventfds have it already).  Returns 0
 * when it was non-blocking already, 1 when set now, or -errno.
 */
int pmd_guard_notify_nonblock(int fd);

/*
 * Read and reset an eventfd's counter without waiting, whatever its
 * O_NONBLOCK flag says (the frontend shares it and may have cleared it, or
 * read the counter between a readiness check and the read): preadv2 with
 * RWF_NOWAIT.  Returns the counter, 0 when it was 0 or fd < 0.
 */
uint64_t pmd_guard_eventfd_take(int fd);

/*
 * Replies a frontend has not read yet, bytes (the kernel's accounting of
 * what was sent on sock_fd and not yet received; SIOCOUTQ); 0 when sock_fd
 * < 0 or unknown.  rte_vhost sends replies with a blocking sendmsg on the
 * one thread that serves every vhost-user socket: a frontend that asks and
 * never reads fills its socket and that thread then waits for it, holding
 * every other connection.  Past PMD_GUARD_UNREAD_MAX its messages are
 * refused and the connection closed, long before the socket is full.  A
 * frontend that reads its replies stays near 0.
 */
#define PMD_GUARD_UNREAD_MAX 65536
int pmd_guard_replies_unread(int sock_fd);

/*
 * Bound how long a read on a frontend's socket may wait (SO_RCVTIMEO,
 * PMD_GUARD_MSG_WAIT_MS).  rte_vhost reads a message's header when the
 * socket is readable, then its payload with a blocking read: a frontend
 * that sends a header and holds back the payload would hold the thread
 * that serves every vhost-user socket.  With the bound the read fails and
 * rte_vhost closes that connection.  A frontend sends header and payload
 * together (QEMU: one write), so it never waits.  0 or -errno.
 */
#define PMD_GUARD_MSG_WAIT_MS 1000
int pmd_guard_sock_bound_reads(int sock_fd);

/*
 * The same rule for SET_VRING_CALL / SET_VRING_KICK before rte_vhost keeps
 * the fd (fds, nfds: what came with msg, nfds < 0 when unknown), so that the
 * frontend gets a NACK at once instead of a queue that never starts.  NULL
 * for other requests, a message without an fd (VHU_VRING_NOFD) or an
 * eventfd; else why the message is refused.
 */
const char *pmd_guard_notify_msg(const struct vhu_msg *msg, const int *fds, int nfds);

#endif /* PMD_VQ_GUARD_H */
