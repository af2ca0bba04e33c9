/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_guard.c - checks of frontend-supplied memory tables, rings and vring
 * indexes before any poller uses them (see vq_guard.h).
 *
 * rte_vhost 22.11 maps what the frontend sends and hands out ring pointers
 * even when its own translation found them short (it then only refrains
 * from marking the vring ready, which femud, starting queues from
 * vring_state_changed and on restarts, cannot rely on).  These checks are
 * femud's own: a ring is used only when all of it, event-index fields
 * included, is inside one mapped region, and a region only when the file
 * behind it is long enough that no access can raise SIGBUS.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pmd/vq_guard.h"
#include "pmd/vq.h"

uint64_t pmd_ring_desc_bytes(uint32_t size)
{
	return 16ull * size;
}

uint64_t pmd_ring_avail_bytes(uint32_t size, bool event_idx)
{
	return 4ull + 2ull * size + (event_idx ? 2 : 0);
}

uint64_t pmd_ring_used_bytes(uint32_t size, bool event_idx)
{
	return 4ull + 8ull * size + (event_idx ? 2 : 0);
}

bool pmd_guard_range(const struct rte_vhost_memory *mem, const void *hva, uint64_t len)
{
	uint64_t a = (uint64_t)(uintptr_t)hva;
	uint32_t i;

	if (mem == NULL || hva == NULL || len == 0)
		return false;
	for (i = 0; i < mem->nregions; i++) {
		const struct rte_vhost_mem_region *r = &mem->regions[i];

		if (a >= r->host_user_addr && a - r->host_user_addr < r->size)
			return len <= r->size - (a - r->host_user_addr);
	}
	return false;
}

static bool ring_size_ok(uint32_t size)
{
	return size != 0 && size <= PMD_VQ_MAX_SIZE && (size & (size - 1)) == 0;
}

static bool aligned(const void *p, uintptr_t align)
{
	return ((uintptr_t)p & (align - 1)) == 0;
}

/* A packed ring: descriptor ring 16-byte aligned, both event areas 4 (virtio 1.2, 2.8.10.1). */
static const char *guard_packed(const struct rte_vhost_memory *mem, const struct pmd_ring_layout *r)
{
	const uint64_t ev = sizeof(struct vring_packed_desc_event);

	if (!aligned(r->desc, 16) || !aligned(r->avail, 4) || !aligned(r->used, 4))
		return "packed ring not aligned (descriptor ring 16, event areas 4 bytes)";
	if (!pmd_guard_range(mem, r->desc, pmd_ring_desc_bytes(r->size)))
		return "descriptor ring not inside one guest memory region";
	if (!pmd_guard_range(mem, r->avail, ev))
		return "driver event area not inside one guest memory region";
	if (!pmd_guard_range(mem, r->used, ev))
		return "device event area not inside one guest memory region";
	return NULL;
}

const char *pmd_guard_rings(const struct rte_vhost_memory *mem, const struct pmd_ring_layout *r)
{
	if (!ring_size_ok(r->size))
		return "queue size not a power of two in 1..32768";
	if (r->packed)
		return guard_packed(mem, r);
	if (!aligned(r->desc, 16) || !aligned(r->avail, 2) || !aligned(r->used, 4))
		return "ring not aligned (descriptor table 16, avail 2, used 4 bytes)";
	if (!pmd_guard_range(mem, r->desc, pmd_ring_desc_bytes(r->size)))
		return "descriptor table not inside one guest memory region";
	if (!pmd_guard_range(mem, r->avail, pmd_ring_avail_bytes(r->size, r->event_idx)))
		return "avail ring not inside one guest memory region";
	if (!pmd_guard_range(mem, r->used, pmd_ring_used_bytes(r->size, r->event_idx)))
		return "used ring not inside one guest memory region";
	return NULL;
}

int pmd_guard_file(int fd, uint64_t offset, uint64_t len, char *why, size_t whylen)
{
	uint64_t need = offset + len;
	struct stat st;

	if (len == 0 || need < offset) {
		snprintf(why, whylen, "empty, or offset + size overflows");
		return -1;
	}
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(why, whylen, "no file descriptor to check");
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "backed by a file that is not a regular file");
		return -1;
	}
	if ((uint64_t)st.st_size < need) {
		snprintf(why, whylen, "file has %llu bytes, shorter than mmap_offset + size = %llu",
			 (unsigned long long)st.st_size, (unsigned long long)need);
		return -1;
	}
	return 0;
}

/* Check one region against the file behind it; 0 or -1 with why. */
static int guard_region(const struct rte_vhost_mem_region *r, uint32_t i, char *why, size_t len)
{
	uint64_t base = (uint64_t)(uintptr_t)r->mmap_addr;
	char buf[120];

	if (r->host_user_addr < base || r->size == 0) {
		snprintf(why, len, "region %u: empty or outside its mapping", i);
		return -1;
	}
	if (pmd_guard_file(r->fd, r->host_user_addr - base, r->size, buf, sizeof(buf)) != 0) {
		snprintf(why, len, "region %u: %s", i, buf);
		return -1;
	}
	return 0;
}

int pmd_guard_mem(const struct rte_vhost_memory *mem, char *why, size_t whylen)
{
	uint32_t i;

	if (mem == NULL) {
		snprintf(why, whylen, "no guest memory table");
		return -1;
	}
	for (i = 0; i < mem->nregions; i++) {
		if (guard_region(&mem->regions[i], i, why, whylen) != 0)
			return -1;
	}
	return 0;
}

/* One region of a SET_MEM_TABLE / ADD_MEM_REG message against its fd. */
static int guard_msg_region(struct vhu_mem_region r, int fd, uint32_t i, char *why, size_t len)
{
	char buf[120];

	if (pmd_guard_file(fd, r.mmap_offset, r.size, buf, sizeof(buf)) == 0)
		return 0;
	snprintf(why, len, "region %u: %s", i, buf);
	return -1;
}

int pmd_guard_mem_msg(const struct vhu_msg *msg, const int *fds, int nfds, char *why, size_t whylen)
{
	uint32_t i, n;

	if (msg->request == VHU_ADD_MEM_REG)
		return nfds < 1 || msg->size < sizeof(msg->payload.memreg)
			   ? 0
			   : guard_msg_region(msg->payload.memreg.region, fds[0], 0, why, whylen);
	if (msg->request != VHU_SET_MEM_TABLE)
		return 0;
	n = msg->payload.mem.nregions;
	if (n > VHU_MAX_REGIONS || msg->size < 8 + n * sizeof(struct vhu_mem_region))
		return 0; /* rte_vhost refuses it */
	for (i = 0; i < n && (int)i < nfds; i++) {
		if (guard_msg_region(msg->payload.mem.region[i], fds[i], i, why, whylen) != 0)
			return -1;
	}
	return 0;
}

bool pmd_guard_vring_index(const struct vhu_msg *msg, uint32_t *idx)
{
	switch (msg->request) {
	case VHU_SET_VRING_KICK:
	case VHU_SET_VRING_CALL:
	case VHU_SET_VRING_ERR:
		*idx = (uint32_t)(msg->payload.u64 & VHU_VRING_IDX_MASK);
		return true;
	case VHU_SET_VRING_NUM:
	case VHU_SET_VRING_ADDR: /* struct vhost_vring_addr starts with the index too */
	case VHU_SET_VRING_BASE:
	case VHU_GET_VRING_BASE:
	case VHU_SET_VRING_ENABLE:
		*idx = msg->payload.state.index;
		return true;
	default:
		return false;
	}
}

const char *pmd_guard_vring_msg(const struct vhu_msg *msg, uint32_t queues, char *buf, size_t len)
{
	uint32_t idx;

	if (!pmd_guard_vring_index(msg, &idx))
		return NULL;
	if (idx >= queues) {
		snprintf(buf, len, "queue index %u, the device has %u queues", idx, queues);
		return buf;
	}
	if (msg->request == VHU_SET_VRING_NUM && !ring_size_ok(msg->payload.state.num)) {
		snprintf(buf, len, "queue %u: size %u not a power of two in 1..%u", idx,
			 msg->payload.state.num, PMD_VQ_MAX_SIZE);
		return buf;
	}
	return NULL;
}

struct pmd_ring_id pmd_ring_id_of(const struct rte_vhost_memory *mem, const void *hva)
{
	uint64_t a = (uint64_t)(uintptr_t)hva;
	struct pmd_ring_id id = {.valid = false};
	struct stat st;

	for (uint32_t i = 0; mem != NULL && i < mem->nregions; i++) {
		const struct rte_vhost_mem_region *r = &mem->regions[i];
		uint64_t base = (uint64_t)(uintptr_t)r->mmap_addr;

		if (a < r->host_user_addr || a - r->host_user_addr >= r->size)
			continue;
		if (a < base || r->fd < 0 || fstat(r->fd, &st) != 0)
			return id;
		id = (struct pmd_ring_id){
		    .dev = st.st_dev, .ino = st.st_ino, .off = a - base, .valid = true};
		return id;
	}
	return id;
}

uint64_t pmd_inflight_queue_bytes(uint32_t queue_size)
{
	uint64_t b = sizeof(struct rte_vhost_inflight_info_split) +
		     (uint64_t)queue_size * sizeof(struct rte_vhost_inflight_desc_split);

	return (b + 63) & ~63ull; /* rte_vhost aligns each queue's area to 64 bytes */
}

uint64_t pmd_inflight_packed_queue_bytes(uint32_t queue_size)
{
	uint64_t b = sizeof(struct rte_vhost_inflight_info_packed) +
		     (uint64_t)queue_size * sizeof(struct rte_vhost_inflight_desc_packed);

	return (b + 63) & ~63ull;
}

const char *pmd_guard_inflight_msg(const struct vhu_msg *msg, int fd, uint32_t queues, bool packed,
				   char *buf, size_t len)
{
	uint64_t qbytes;

	struct vhu_inflight in = msg->payload.inflight;
	char why[120];

	if ((msg->request != VHU_GET_INFLIGHT_FD && msg->request != VHU_SET_INFLIGHT_FD) ||
	    msg->size != sizeof(in))
		return NULL;
	if (!ring_size_ok(in.queue_size)) {
		snprintf(buf, len, "inflight queue size %u not a power of two in 1..%u",
			 in.queue_size, PMD_VQ_MAX_SIZE);
		return buf;
	}
	if (in.num_queues < 1 || in.num_queues > queues) {
		snprintf(buf, len, "inflight region for %u queues, the device has %u",
			 in.num_queues, queues);
		return buf;
	}
	if (msg->request == VHU_GET_INFLIGHT_FD)
		return NULL;
	qbytes = packed ? pmd_inflight_packed_queue_bytes(in.queue_size)
			: pmd_inflight_queue_bytes(in.queue_size);
	if (in.mmap_size < in.num_queues * qbytes) {
		snprintf(buf, len,
			 "inflight region of %llu bytes, %u queues of %u entries need %llu",
			 (unsigned long long)in.mmap_size, in.num_queues, in.queue_size,
			 (unsigned long long)(in.num_queues * qbytes));
		return buf;
	}
	if (pmd_guard_file(fd, in.mmap_offset, in.mmap_size, why, sizeof(why)) != 0) {
		snprintf(buf, len, "inflight region: %s", why);
		return buf;
	}
	return NULL;
}

const char *pmd_guard_log_msg(const struct vhu_msg *msg, const int *fds, int nfds, char *buf,
			      size_t len)
{
	struct vhu_log lg = msg->payload.log;
	char why[120];

	if (msg->request != VHU_SET_LOG_BASE)
		return NULL;
	if (nfds != 1)
		return "dirty log without exactly one fd";
	if (msg->size != sizeof(lg))
		return "dirty log payload not 16 bytes";
	if (lg.mmap_size == 0)
		return "dirty log of 0 bytes";
	if (pmd_guard_file(fds[0], lg.mmap_offset, lg.mmap_size, why, sizeof(why)) != 0) {
		snprintf(buf, len, "dirty log: %s", why);
		return buf;
	}
	return NULL;
}

const char *pmd_guard_config_msg(const struct vhu_msg *msg)
{
	if (msg->size < VHU_CONFIG_HDR_SIZE || msg->size > VHU_CONFIG_HDR_SIZE + VHU_MAX_CONFIG)
		return "payload size not 12..268 bytes";
	if (msg->payload.config.size > msg->size - VHU_CONFIG_HDR_SIZE)
		return "config window larger than the message carries";
	return NULL;
}

bool pmd_guard_fd_is_eventfd(int fd)
{
	char path[64], link[64];
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

/* A notifier fd is usable: none (-1: polling) or an eventfd. */
static bool guard_notify_fd_ok(int fd)
{
	return fd < 0 || pmd_guard_fd_is_eventfd(fd);
}

const char *pmd_guard_notify_msg(const struct vhu_msg *msg, const int *fds, int nfds)
{
	if (msg->request != VHU_SET_VRING_CALL && msg->request != VHU_SET_VRING_KICK)
		return NULL;
	/* no fd (polling), or fds femud cannot see: left to rte_vhost and queue start */
	if ((msg->payload.u64 & VHU_VRING_NOFD) || nfds < 1 || guard_notify_fd_ok(fds[0]))
		return NULL;
	return msg->request == VHU_SET_VRING_CALL ? "the call fd is not an eventfd"
						  : "the kick fd is not an eventfd";
}

const char *pmd_guard_notify_fds(int callfd, int kickfd)
{
	if (!guard_notify_fd_ok(callfd))
		return "its call fd is not an eventfd (SET_VRING_CALL)";
	if (!guard_notify_fd_ok(kickfd))
		return "its kick fd is not an eventfd (SET_VRING_KICK)";
	return NULL;
}

uint64_t pmd_guard_eventfd_take(int fd)
{
	uint64_t n = 0;
	struct iovec iov = {.iov_base = &n, .iov_len = sizeof(n)};
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	if (fd < 0)
		return 0;
	if (preadv2(fd, &iov, 1, -1, RWF_NOWAIT) == (ssize_t)sizeof(n))
		return n;
	if (errno != EOPNOTSUPP)
		return 0; /* EAGAIN: nothing counted */
	/* a kernel whose eventfd does not take RWF_NOWAIT: the readiness check narrows the race */
	if (poll(&pfd, 1, 0) != 1 || !(pfd.revents & POLLIN) ||
	    read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return 0;
	return n;
}

int pmd_guard_replies_unread(int sock_fd)
{
	int n = 0;

	if (sock_fd < 0 || ioctl(sock_fd, SIOCOUTQ, &n) != 0)
		return 0;
	return n;
}

int pmd_guard_sock_bound_reads(int sock_fd)
{
	struct timeval tv = {.tv_sec = PMD_GUARD_MSG_WAIT_MS / 1000,
			     .tv_usec = (PMD_GUARD_MSG_WAIT_MS % 1000) * 1000};

	if (setsockopt(sock_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0)
		return -errno;
	return 0;
}

int pmd_guard_notify_nonblock(int fd)
{
	int fl;

	if (fd < 0)
		return 0;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -errno;
	if (fl & O_NONBLOCK)
		return 0;
	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return -errno;
	return 1;
}
