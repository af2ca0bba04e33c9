/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake_vhost.c - the fake rte_vhost and pollers of fake_vhost.h.  Defines
 * the rte_vhost, rte_malloc, rte_log and pmd_poller functions that
 * pmd/pmd_blk.c and pmd/vq.c call, so the target links without DPDK.
 * Behaviour follows DPDK 22.11's lib/vhost (vhost_user.c, vhost.c) as read
 * from its source: which messages it validates, when it translates rings,
 * when a vring counts as ready.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/virtio_ring.h>
#include <rte_vhost.h>

#include "fake_vhost.h"
#include "fuzz_util.h"
#include "pmd/blk_config.h"
#include "pmd/pmd.h"
#include "pmd/pmd_clock.h"
#include "pmd/poller.h"
#include "pmd/vhu_ctx.h"
#include "pmd/vq.h"
#include "test/unit/pmd/fake_guest.h"

#define FV_MAX_VRING 8		 /* vrings the fake accepts (rte_vhost: 256) */
#define FV_MAP_MAX (64ull << 20) /* larger mappings fail like a failed mmap */
#define FV_UNINIT_FD (-2)	 /* VIRTIO_UNINITIALIZED_EVENTFD */
#define FV_PAGE 4096ull

struct fv_vring {
	bool exists; /* named by a message (rte_vhost allocates it then) */
	uint32_t size;
	uint16_t last_avail, last_used;
	uint64_t desc_ua, avail_ua, used_ua;
	bool addr_set;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	int kickfd, callfd;
	bool enabled;
	bool ready; /* what femud was last told */
};

struct fv_conn {
	int vid;
	bool live;
	uint64_t features;
	uint64_t protocol_features;
	struct rte_vhost_memory *mem;
	struct fv_vring vr[FV_MAX_VRING];
	const struct rte_vhost_user_extern_ops *ext;
};

static const size_t file_size[FV_NFILES] = {FV_FILE0_SIZE, FV_FILE1_SIZE};
static int file_fd[FV_NFILES];
static uint8_t *file_map[FV_NFILES];
static int event_fd;
static char dev_path[108];
static const struct rte_vhost_device_ops *dev_ops;
static struct pmd_blk *dev;
static struct fake_model model;
static struct fv_conn conn;
static int next_vid;

/* ---- fake pollers: queues attached to "the" poller, swept by fv_sweep ---- */

static struct pmd_vq *attached[PMD_MAX_QUEUES * 4];
static unsigned nattached;
static struct pmd_chain scratch;

unsigned pmd_poller_count(void)
{
	return 1;
}

int pmd_poller_node(unsigned idx)
{
	(void)idx;
	return 0;
}

int pmd_poller_attach(unsigned idx, struct pmd_vq *q)
{
	(void)idx;
	if (nattached == sizeof(attached) / sizeof(attached[0]))
		return -ENOMEM;
	attached[nattached++] = q;
	return 0;
}

static struct pmd_chain flush_chain; /* the poller's scratch chain */

void pmd_poller_detach(struct pmd_vq *q)
{
	for (unsigned i = 0; i < nattached; i++) {
		if (attached[i] != q)
			continue;
		pmd_vq_flush(q, pmd_now_ns(), &flush_chain);
		attached[i] = attached[--nattached];
		return;
	}
	FZ_CHECK(0, "detach of a queue no poller holds");
}

/* As the real poller does: let go without posting the queue's pending completions. */
void pmd_poller_abandon(struct pmd_vq *q)
{
	for (unsigned i = 0; i < nattached; i++) {
		if (attached[i] != q)
			continue;
		attached[i] = attached[--nattached];
		return;
	}
	FZ_CHECK(0, "abandon of a queue no poller holds");
}

/* The one fake poller runs fn at once (pmd_blk.c's stats reset, model calls). */
void pmd_poller_call(unsigned idx, void (*fn)(void *arg), void *arg)
{
	(void)idx;
	fn(arg);
}

void fv_sweep(void)
{
	uint64_t drained;

	for (unsigned i = 0; i < nattached; i++) {
		struct pmd_vq *q = attached[i];
		struct fv_vring *v = q->qid < FV_MAX_VRING ? &conn.vr[q->qid] : NULL;

		/* rte_vhost must still have this ring mapped, or femud uses stale memory */
		FZ_CHECK(conn.live && q->vid == conn.vid,
			 "queue %u of a closed connection is polled", q->qid);
		FZ_CHECK(v != NULL && v->desc != NULL && v->avail != NULL && v->used != NULL,
			 "queue %u is polled while rte_vhost has no ring for it", q->qid);
		pmd_vq_sweep(q, pmd_now_ns(), &scratch);
	}
	if (read(event_fd, &drained, sizeof(drained)) < 0 && errno != EAGAIN)
		abort();
}

/* ---- DPDK functions femud calls ---- */

int pmd_logtype;

int rte_log(uint32_t level, uint32_t logtype, const char *format, ...)
{
	static int verbose = -1;
	va_list ap;

	(void)level;
	(void)logtype;
	if (verbose < 0)
		verbose = getenv("FUZZ_VERBOSE") != NULL;
	if (verbose) {
		va_start(ap, format);
		vfprintf(stderr, format, ap);
		va_end(ap);
	}
	return 0;
}

void *rte_zmalloc_socket(const char *type, size_t size, unsigned align, int socket)
{
	(void)type;
	(void)size;
	(void)align;
	(void)socket;
	return NULL; /* no hugepage memory: vq.c falls back to libc */
}

void rte_free(void *p)
{
	FZ_CHECK(p == NULL, "rte_free of memory rte_malloc never gave");
}

int rte_vhost_driver_register(const char *path, uint64_t flags)
{
	(void)flags;
	snprintf(dev_path, sizeof(dev_path), "%s", path);
	return 0;
}

int rte_vhost_driver_unregister(const char *path)
{
	(void)path;
	return 0;
}

int rte_vhost_driver_set_features(const char *path, uint64_t features)
{
	(void)path;
	(void)features;
	return 0;
}

int rte_vhost_driver_set_protocol_features(const char *path, uint64_t features)
{
	(void)path;
	(void)features;
	return 0;
}

int rte_vhost_driver_callback_register(const char *path, struct rte_vhost_device_ops const *ops)
{
	(void)path;
	dev_ops = ops;
	return 0;
}

int rte_vhost_driver_start(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int rte_vhost_get_ifname(int vid, char *buf, size_t len)
{
	if (!conn.live || vid != conn.vid)
		return -1;
	snprintf(buf, len, "%s", dev_path);
	return 0;
}

int rte_vhost_extern_callback_register(int vid, struct rte_vhost_user_extern_ops const *ops,
				       void *ctx)
{
	(void)ctx;
	if (vid != conn.vid)
		return -1;
	conn.ext = ops;
	return 0;
}

int rte_vhost_get_negotiated_features(int vid, uint64_t *features)
{
	if (!conn.live || vid != conn.vid)
		return -1;
	*features = conn.features;
	return 0;
}

static struct fv_vring *vring_of(int vid, uint16_t qid)
{
	if (!conn.live || vid != conn.vid || qid >= FV_MAX_VRING || !conn.vr[qid].exists)
		return NULL;
	return &conn.vr[qid];
}

int rte_vhost_get_vhost_vring(int vid, uint16_t qid, struct rte_vhost_vring *vr)
{
	struct fv_vring *v = vring_of(vid, qid);

	if (v == NULL)
		return -1;
	memset(vr, 0, sizeof(*vr));
	vr->desc = v->desc;
	vr->avail = v->avail;
	vr->used = v->used;
	vr->size = (uint16_t)v->size;
	vr->kickfd = v->kickfd;
	vr->callfd = v->callfd;
	return 0;
}

int rte_vhost_get_vring_base(int vid, uint16_t qid, uint16_t *last_avail, uint16_t *last_used)
{
	struct fv_vring *v = vring_of(vid, qid);

	if (v == NULL)
		return -1;
	*last_avail = v->last_avail;
	*last_used = v->last_used;
	return 0;
}

int rte_vhost_set_vring_base(int vid, uint16_t qid, uint16_t last_avail, uint16_t last_used)
{
	struct fv_vring *v = vring_of(vid, qid);

	if (v == NULL)
		return -1;
	v->last_avail = last_avail;
	v->last_used = last_used;
	return 0;
}

int rte_vhost_get_mem_table(int vid, struct rte_vhost_memory **mem)
{
	size_t sz;

	if (!conn.live || vid != conn.vid || conn.mem == NULL)
		return -1;
	sz = sizeof(*conn.mem) + conn.mem->nregions * sizeof(conn.mem->regions[0]);
	*mem = malloc(sz);
	if (*mem == NULL)
		return -1;
	memcpy(*mem, conn.mem, sz);
	return 0;
}

int rte_vhost_get_vhost_ring_inflight(int vid, uint16_t qid, struct rte_vhost_ring_inflight *ri)
{
	(void)vid;
	(void)qid;
	(void)ri;
	return -1; /* no inflight region: the fake refuses GET/SET_INFLIGHT_FD */
}

int rte_vhost_set_inflight_desc_split(int vid, uint16_t qid, uint16_t idx)
{
	(void)vid;
	(void)qid;
	(void)idx;
	FZ_CHECK(0, "inflight call without an inflight region");
	return -1;
}

int rte_vhost_set_last_inflight_io_split(int vid, uint16_t qid, uint16_t idx)
{
	return rte_vhost_set_inflight_desc_split(vid, qid, idx);
}

int rte_vhost_clr_inflight_desc_split(int vid, uint16_t qid, uint16_t last_used_idx, uint16_t idx)
{
	(void)last_used_idx;
	return rte_vhost_set_inflight_desc_split(vid, qid, idx);
}

/* ---- dirty log: femud marks only while LOG_ALL is negotiated; the fake maps no log ---- */

void rte_vhost_log_write(int vid, uint64_t addr, uint64_t len)
{
	(void)addr;
	(void)len;
	FZ_CHECK(vid == conn.vid && (conn.features & (1ULL << VHOST_F_LOG_ALL)),
		 "dirty log write without LOG_ALL");
}

void rte_vhost_log_used_vring(int vid, uint16_t vring_idx, uint64_t offset, uint64_t len)
{
	(void)vring_idx;
	rte_vhost_log_write(vid, offset, len);
}

int rte_vhost_get_log_base(int vid, uint64_t *log_base, uint64_t *log_size)
{
	(void)vid;
	*log_base = 0;
	*log_size = 0;
	return 0;
}

int rte_vhost_set_inflight_desc_packed(int vid, uint16_t qid, uint16_t head, uint16_t last,
				       uint16_t *entry)
{
	(void)last;
	(void)entry;
	return rte_vhost_set_inflight_desc_split(vid, qid, head);
}

int rte_vhost_set_last_inflight_io_packed(int vid, uint16_t qid, uint16_t head)
{
	return rte_vhost_set_inflight_desc_split(vid, qid, head);
}

int rte_vhost_clr_inflight_desc_packed(int vid, uint16_t qid, uint16_t head)
{
	return rte_vhost_set_inflight_desc_split(vid, qid, head);
}

int rte_vhost_get_vring_base_from_inflight(int vid, uint16_t qid, uint16_t *last_avail,
					   uint16_t *last_used)
{
	(void)last_avail;
	(void)last_used;
	return rte_vhost_set_inflight_desc_split(vid, qid, 0);
}

/* ---- guest memory ---- */

static void mem_unmap(void)
{
	if (conn.mem == NULL)
		return;
	for (uint32_t i = 0; i < conn.mem->nregions; i++)
		munmap(conn.mem->regions[i].mmap_addr, conn.mem->regions[i].mmap_size);
	free(conn.mem);
	conn.mem = NULL;
}

/* Frontend (QEMU) virtual address to host address; *len shortened at a region end. */
static uint64_t qva_to_vva(uint64_t qva, uint64_t *len)
{
	for (uint32_t i = 0; conn.mem != NULL && i < conn.mem->nregions; i++) {
		const struct rte_vhost_mem_region *r = &conn.mem->regions[i];

		if (qva >= r->guest_user_addr && qva < r->guest_user_addr + r->size) {
			if (*len > r->guest_user_addr + r->size - qva)
				*len = r->guest_user_addr + r->size - qva;
			return qva - r->guest_user_addr + r->host_user_addr;
		}
	}
	*len = 0;
	return 0;
}

/* Do len bytes at host address p lie inside a guest file (not past its end)? */
static bool file_backed(const void *p, uint64_t len)
{
	const uint8_t *h = p;

	for (uint32_t i = 0; conn.mem != NULL && i < conn.mem->nregions; i++) {
		const struct rte_vhost_mem_region *r = &conn.mem->regions[i];
		const uint8_t *base = r->mmap_addr;
		uint64_t fsize = r->fd == file_fd[0] ? file_size[0] : file_size[1];

		if (h >= base && h < base + r->mmap_size)
			return (uint64_t)(h - base) + len <= fsize;
	}
	return false;
}

/* Ring pointers as translate_ring_addresses() leaves them: set even when short. */
static void vring_translate(struct fv_vring *v)
{
	bool eidx = conn.features & (1ull << VIRTIO_RING_F_EVENT_IDX);
	uint64_t want, len;

	v->desc = NULL;
	v->avail = NULL;
	v->used = NULL;
	if (!v->addr_set || conn.mem == NULL)
		return;
	want = len = sizeof(struct vring_desc) * (uint64_t)v->size;
	v->desc = (struct vring_desc *)(uintptr_t)qva_to_vva(v->desc_ua, &len);
	if (v->desc == NULL || len != want)
		return;
	want = len = sizeof(struct vring_avail) + 2ull * v->size + (eidx ? 2 : 0);
	v->avail = (struct vring_avail *)(uintptr_t)qva_to_vva(v->avail_ua, &len);
	if (v->avail == NULL || len != want)
		return;
	want = len = sizeof(struct vring_used) +
		     sizeof(struct vring_used_elem) * (uint64_t)v->size + (eidx ? 2 : 0);
	v->used = (struct vring_used *)(uintptr_t)qva_to_vva(v->used_ua, &len);
	if (v->used == NULL || len != want)
		return;
	/*
	 * rte_vhost trusts the used index it finds.  It reads it even when the
	 * region is not backed by its file there (a SIGBUS inside rte_vhost,
	 * not femud's code); the fake skips that read so that the fuzzer goes
	 * on to femud's own code.
	 */
	if (file_backed(v->used, 4)) {
		uint16_t idx;

		memcpy(&idx, (uint8_t *)v->used + 2, sizeof(idx)); /* may be misaligned */
		if (v->last_used != idx)
			v->last_avail = v->last_used = idx;
	}
}

static int fd_of(uint8_t sel)
{
	return sel < FV_NFILES ? file_fd[sel] : event_fd;
}

/* SET_MEM_TABLE as vhost_user_set_mem_table() maps it; -1: error. */
static int set_mem_table(const struct fv_msg *m)
{
	struct {
		uint32_t nregions, padding;
		struct {
			uint64_t gpa, size, uaddr, offset;
		} r[FV_MAX_FDS];
	} t;
	struct rte_vhost_memory *mem;

	memcpy(&t, m->payload, sizeof(t));
	if (t.nregions == 0 || t.nregions > FV_MAX_FDS || t.nregions != m->nfds)
		return -1;
	mem_unmap();
	mem = calloc(1, sizeof(*mem) + t.nregions * sizeof(mem->regions[0]));
	conn.mem = mem;
	for (uint32_t i = 0; i < t.nregions; i++) {
		struct rte_vhost_mem_region *r = &mem->regions[i];
		uint64_t msize = t.r[i].size + t.r[i].offset;
		void *p;

		if (t.r[i].size == 0 || msize < t.r[i].size || msize > FV_MAP_MAX ||
		    m->fd_sel[i] >= FV_NFILES)
			return -1;
		msize = (msize + FV_PAGE - 1) & ~(FV_PAGE - 1);
		p = mmap(NULL, msize, PROT_READ | PROT_WRITE, MAP_SHARED, fd_of(m->fd_sel[i]), 0);
		if (p == MAP_FAILED)
			return -1;
		r->guest_phys_addr = t.r[i].gpa;
		r->guest_user_addr = t.r[i].uaddr;
		r->size = t.r[i].size;
		r->mmap_addr = p;
		r->mmap_size = msize;
		r->host_user_addr = (uint64_t)(uintptr_t)p + t.r[i].offset;
		r->fd = fd_of(m->fd_sel[i]);
		mem->nregions = i + 1;
	}
	for (unsigned q = 0; q < FV_MAX_VRING; q++)
		if (conn.vr[q].exists)
			vring_translate(&conn.vr[q]);
	return 0;
}

void fv_guest_write(unsigned f, uint64_t off, const uint8_t *p, size_t len)
{
	f %= FV_NFILES;
	off %= file_size[f];
	if (len > file_size[f] - off)
		len = file_size[f] - off;
	memcpy(file_map[f] + off, p, len);
}

/* ---- connections ---- */

static void conn_open(void)
{
	memset(&conn, 0, sizeof(conn));
	conn.vid = next_vid++ % 4;
	conn.live = true;
	for (unsigned q = 0; q < FV_MAX_VRING; q++) {
		conn.vr[q].kickfd = FV_UNINIT_FD;
		conn.vr[q].callfd = FV_UNINIT_FD;
	}
	FZ_CHECK(dev_ops->new_connection(conn.vid) == 0, "femud refused a connection");
}

static void conn_close(void)
{
	if (!conn.live)
		return;
	dev_ops->destroy_connection(conn.vid);
	for (unsigned i = 0; i < nattached; i++)
		FZ_CHECK(attached[i]->vid != conn.vid, "queue %u still polled after hang-up",
			 attached[i]->qid);
	mem_unmap();
	conn.live = false;
}

/* vq_is_ready(): the rings and both fds are known, and the vring is enabled. */
static bool vring_ready(const struct fv_vring *v)
{
	return v->exists && v->desc != NULL && v->avail != NULL && v->used != NULL &&
	       v->kickfd != FV_UNINIT_FD && v->callfd != FV_UNINIT_FD && v->enabled;
}

/* Tell femud about every vring whose readiness changed. */
static void notify_ready(void)
{
	for (unsigned q = 0; q < FV_MAX_VRING && conn.live; q++) {
		struct fv_vring *v = &conn.vr[q];
		bool now = vring_ready(v);

		if (now != v->ready) {
			v->ready = now;
			dev_ops->vring_state_changed(conn.vid, (uint16_t)q, now);
		}
	}
}

/* A vring that was ready is stopped before its fds change (set_vring_kick/call). */
static void vring_unready(unsigned q)
{
	if (conn.vr[q].ready) {
		conn.vr[q].ready = false;
		dev_ops->vring_state_changed(conn.vid, (uint16_t)q, 0);
	}
}

/* The vring named by a message; NULL (error) beyond what rte_vhost accepts. */
static struct fv_vring *msg_vring(uint32_t index)
{
	if (index >= FV_MAX_VRING)
		return NULL;
	conn.vr[index].exists = true;
	return &conn.vr[index];
}

/* rte_vhost's own handler; returns 0 (ok), 1 (reply) or -1 (error). */
static int handle(const struct fv_msg *m, struct fv_result *r)
{
	struct {
		uint32_t index, num;
	} st;
	struct {
		uint32_t index, flags;
		uint64_t desc, used, avail, log;
	} a;
	uint64_t u64;
	struct fv_vring *v;

	memcpy(&st, m->payload, sizeof(st));
	memcpy(&a, m->payload, sizeof(a));
	memcpy(&u64, m->payload, sizeof(u64));
	switch (m->request) {
	case VHU_GET_FEATURES:
		r->reply_u64 = pmd_blk_features(false);
		return 1;
	case VHU_SET_FEATURES:
		if (u64 & ~pmd_blk_features(false))
			return -1;
		conn.features = u64;
		return 0;
	case VHU_SET_OWNER:
		return 0;
	case VHU_RESET_OWNER:
		/* cleanup_device() + reset_device(): memory unmapped, vrings reset */
		mem_unmap();
		for (unsigned q = 0; q < FV_MAX_VRING; q++) {
			memset(&conn.vr[q], 0, sizeof(conn.vr[q]));
			conn.vr[q].kickfd = FV_UNINIT_FD;
			conn.vr[q].callfd = FV_UNINIT_FD;
		}
		conn.features = 0;
		conn.protocol_features = 0;
		return 0;
	case VHU_SET_MEM_TABLE:
		return set_mem_table(m);
	case VHU_SET_VRING_NUM:
		v = msg_vring(st.index);
		if (v == NULL || st.num > 32768 || (st.num & (st.num - 1)) != 0)
			return -1;
		v->size = st.num;
		return 0;
	case VHU_SET_VRING_ADDR:
		v = msg_vring(a.index);
		if (v == NULL)
			return -1;
		v->desc_ua = a.desc;
		v->used_ua = a.used;
		v->avail_ua = a.avail;
		v->addr_set = true;
		vring_translate(v);
		return 0;
	case VHU_SET_VRING_BASE:
		v = msg_vring(st.index);
		if (v == NULL)
			return -1;
		v->last_avail = v->last_used = (uint16_t)st.num;
		return 0;
	case VHU_GET_VRING_BASE:
		v = msg_vring(st.index);
		if (v == NULL)
			return -1;
		r->reply_u64 = ((uint64_t)v->last_avail << 32) | st.index;
		v->kickfd = FV_UNINIT_FD;
		v->callfd = FV_UNINIT_FD;
		v->desc = NULL; /* vring_invalidate() */
		v->avail = NULL;
		v->used = NULL;
		return 1;
	case VHU_SET_VRING_KICK:
	case VHU_SET_VRING_CALL:
	case VHU_SET_VRING_ERR:
		v = msg_vring((uint32_t)(u64 & 0xff));
		if (v == NULL || m->nfds != ((u64 & 0x100) ? 0u : 1u))
			return -1;
		if (m->request == VHU_SET_VRING_ERR)
			return 0;
		vring_unready((unsigned)(u64 & 0xff));
		if (m->request == VHU_SET_VRING_KICK) {
			v->kickfd = (u64 & 0x100) ? -1 : event_fd;
			vring_translate(v);
		} else {
			v->callfd = (u64 & 0x100) ? -1 : event_fd;
		}
		return 0;
	case VHU_GET_PROTOCOL_FEATURES:
		r->reply_u64 = pmd_blk_protocol_features();
		return 1;
	case VHU_SET_PROTOCOL_FEATURES:
		if (u64 & ~pmd_blk_protocol_features())
			return -1;
		conn.protocol_features = u64;
		return 0;
	case VHU_GET_QUEUE_NUM:
		r->reply_u64 = FV_MAX_VRING;
		return 1;
	case VHU_SET_VRING_ENABLE:
		v = msg_vring(st.index);
		if (v == NULL)
			return -1;
		v->enabled = st.num != 0;
		return 0;
	default:
		/* GET/SET_CONFIG (not a vDPA device), inflight, the rest: not handled */
		return -1;
	}
}

void fv_message(const struct fv_msg *m, struct fv_result *r)
{
	/*
	 * What rte_vhost hands the hooks (pmd/vhu_ctx.h): its message (header
	 * and payload union, larger than the part femud mirrors) followed by
	 * the fds, here duplicates of the ones handle() uses.
	 */
	struct pmd_vhu_ctx ctx;
	enum rte_vhost_msg_result res;
	int h;

	memset(r, 0, sizeof(*r));
	if (!conn.live)
		conn_open();
	memset(&ctx, 0, sizeof(ctx));
	for (unsigned i = 0; i < FV_MAX_FDS; i++)
		ctx.fds[i] = i < m->nfds ? fcntl(fd_of(m->fd_sel[i]), F_DUPFD_CLOEXEC, 0) : -1;
	ctx.fd_num = (int)m->nfds;
	ctx.m.msg.request = m->request;
	ctx.m.msg.flags = m->flags;
	ctx.m.msg.size = m->size;
	memcpy(&ctx.m.msg.payload, m->payload, m->size < FV_PAYLOAD_MAX ? m->size : FV_PAYLOAD_MAX);

	res = conn.ext != NULL ? conn.ext->pre_msg_handle(conn.vid, &ctx)
			       : RTE_VHOST_MSG_RESULT_NOT_HANDLED;
	/*
	 * rte_vhost closes the fds only of messages nobody handled; femud
	 * answers GET_INFLIGHT_FD with its own file's fd (sent, still femud's)
	 */
	if (res == RTE_VHOST_MSG_RESULT_REPLY && m->request == VHU_GET_INFLIGHT_FD) {
		FZ_CHECK(ctx.fd_num == 1 && fcntl(ctx.fds[0], F_GETFD) >= 0,
			 "GET_INFLIGHT_FD answered without an open fd (%d fds)", ctx.fd_num);
	} else if (res != RTE_VHOST_MSG_RESULT_NOT_HANDLED) {
		FZ_CHECK(ctx.fd_num == 0, "request %u answered in the pre hook, %d fds left open",
			 m->request, ctx.fd_num);
	} else {
		for (int i = 0; i < ctx.fd_num; i++)
			close(ctx.fds[i]); /* handle() works on the originals */
	}
	if (res == RTE_VHOST_MSG_RESULT_NOT_HANDLED) {
		h = handle(m, r);
		res = h < 0 ? RTE_VHOST_MSG_RESULT_ERR
			    : (h > 0 ? RTE_VHOST_MSG_RESULT_REPLY : RTE_VHOST_MSG_RESULT_OK);
	} else if (res == RTE_VHOST_MSG_RESULT_REPLY) {
		FZ_CHECK(ctx.m.msg.size <= FV_PAYLOAD_MAX, "reply of %u payload bytes",
			 ctx.m.msg.size);
		memcpy(&r->reply_u64, &ctx.m.msg.payload, sizeof(r->reply_u64));
		r->reply_size = ctx.m.msg.size;
	}
	if (res != RTE_VHOST_MSG_RESULT_ERR && conn.ext != NULL) {
		enum rte_vhost_msg_result p = conn.ext->post_msg_handle(conn.vid, &ctx);

		if (p != RTE_VHOST_MSG_RESULT_NOT_HANDLED)
			res = p;
	}
	r->replied = res == RTE_VHOST_MSG_RESULT_REPLY;
	if ((m->flags & VHU_FLAG_NEED_REPLY) && !r->replied) {
		r->replied = true;
		r->nack = res == RTE_VHOST_MSG_RESULT_ERR;
	} else if (res == RTE_VHOST_MSG_RESULT_ERR) {
		conn_close();
		r->closed = true;
		return;
	}
	notify_ready();
}

/* ---- set-up ---- */

static char iff_dir[] = "/tmp/femud-fuzz-inflight-XXXXXX";

static void iff_dir_remove(void)
{
	rmdir(iff_dir);
}

void fv_init(unsigned queues)
{
	struct pmd_blk_params p = {
	    .sock_mode = 0600,
	    .queues = queues,
	    .blk_size = 512,
	    .capacity_bytes = 1 << 20,
	    .serial = "fuzz",
	};
	char dir[] = "/tmp/femud-fuzz-XXXXXX";
	char path[64], err[256];

	pmd_clock_init(2000000000ull); /* any rate: only the order of times matters */
	for (unsigned f = 0; f < FV_NFILES; f++) {
		file_fd[f] = memfd_create("guest", MFD_CLOEXEC);
		FZ_CHECK(file_fd[f] >= 0 && ftruncate(file_fd[f], (off_t)file_size[f]) == 0,
			 "memfd");
		file_map[f] =
		    mmap(NULL, file_size[f], PROT_READ | PROT_WRITE, MAP_SHARED, file_fd[f], 0);
		FZ_CHECK(file_map[f] != MAP_FAILED, "mmap");
	}
	event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	FZ_CHECK(mkdtemp(dir) != NULL && mkdtemp(iff_dir) != NULL && event_fd >= 0, "set-up");
	/* femud's inflight files: one per GET_INFLIGHT_FD, gone with the connection */
	pmd_set_inflight_dir(iff_dir);
	atexit(iff_dir_remove);
	snprintf(path, sizeof(path), "%s/blk.sock", dir);
	p.path = path;
	memset(&model, 0, sizeof(model));
	model.base.ops = &fake_model_ops;
	FZ_CHECK(pmd_blk_create(&p, &fake_model_ops, &model.base, &dev, err, sizeof(err)) == 0,
		 "%s", err);
	FZ_CHECK(dev_ops != NULL, "no device callbacks");
	unlink(path);
	rmdir(dir);
}

void fv_begin(uint64_t model_due_delta_ns)
{
	for (unsigned f = 0; f < FV_NFILES; f++)
		memset(file_map[f], 0, file_size[f]);
	model.due_delta = model_due_delta_ns;
	model.status = FM_S_OK;
	conn_open();
}

void fv_end(void)
{
	conn_close();
	FZ_CHECK(nattached == 0, "%u queues still polled after every frontend left", nattached);
}
