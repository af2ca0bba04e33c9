/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_dirtylog.c - turning a backend's dirty logging on and checking the log
 * (see fb_dirtylog.h).
 */
#include "fb_dirtylog.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define LOG_PAGE 4096u
#define VRING_F_LOG 0 /* SET_VRING_ADDR flags: log the used ring (vhost's VHOST_VRING_F_LOG) */

static int log_err(struct fb_dev *dev, int rc, const char *what)
{
	snprintf(dev->err, sizeof(dev->err), "dirty log: %s: %s", what,
		 dev->conn.err[0] ? dev->conn.err : strerror(-rc));
	return rc;
}

static int log_map(struct fb_dirtylog *lg, const struct fb_mem *mem)
{
	uint64_t pages = (mem->gpa_base + mem->size + LOG_PAGE - 1) / LOG_PAGE;
	long pg = sysconf(_SC_PAGESIZE);

	lg->size = (pages + 7) / 8;
	lg->size = (lg->size + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	lg->fd = memfd_create("femu-bench-log", MFD_CLOEXEC);
	if (lg->fd < 0)
		return -errno;
	if (ftruncate(lg->fd, (off_t)lg->size) != 0)
		return -errno;
	lg->bits = mmap(NULL, lg->size, PROT_READ | PROT_WRITE, MAP_SHARED, lg->fd, 0);
	if (lg->bits == MAP_FAILED) {
		lg->bits = NULL;
		return -errno;
	}
	return 0;
}

int fb_dirtylog_start(struct fb_dirtylog *lg, struct fb_dev *dev, const struct fb_mem *mem,
		      const struct fb_vq *vqs, unsigned n)
{
	struct vhu_log l = {0};
	struct vhu_msg r;
	int rc;

	memset(lg, 0, sizeof(*lg));
	lg->fd = -1;
	if (!(dev->offered & (1ull << VHU_F_LOG_ALL)) ||
	    !(dev->proto_offered & (1ull << VHU_PF_LOG_SHMFD)))
		return log_err(dev, -ENOTSUP, "the backend offers no LOG_ALL / LOG_SHMFD");
	rc = log_map(lg, mem);
	if (rc < 0)
		return log_err(dev, rc, "memfd");
	rc = vu_set_u64(&dev->conn, VHU_SET_PROTOCOL_FEATURES,
			dev->conn.proto_features | (1ull << VHU_PF_LOG_SHMFD));
	if (rc < 0)
		return log_err(dev, rc, "SET_PROTOCOL_FEATURES");
	dev->conn.proto_features |= 1ull << VHU_PF_LOG_SHMFD;
	/* with LOG_SHMFD the backend answers SET_LOG_BASE once it mapped the log */
	l.mmap_size = lg->size;
	rc = vu_send(&dev->conn, VHU_SET_LOG_BASE, 0, &l, sizeof(l), &lg->fd, 1);
	if (rc == 0)
		rc = vu_recv(&dev->conn, VHU_SET_LOG_BASE, &r);
	if (rc < 0)
		return log_err(dev, rc, "SET_LOG_BASE");
	dev->conn.features |= 1ull << VHU_F_LOG_ALL;
	rc = vu_set_u64(&dev->conn, VHU_SET_FEATURES, dev->conn.features);
	if (rc < 0)
		return log_err(dev, rc, "SET_FEATURES");
	for (unsigned i = 0; i < n; i++) {
		struct vhu_vring_addr a = {
		    .index = vqs[i].index,
		    .flags = 1u << VRING_F_LOG,
		    .desc = (uint64_t)(uintptr_t)vqs[i].vr.desc,
		    .used = (uint64_t)(uintptr_t)vqs[i].vr.used,
		    .avail = (uint64_t)(uintptr_t)vqs[i].vr.avail,
		};

		/* packed: the driver area in avail, the device area in used */
		if (vqs[i].packed) {
			a.desc = (uint64_t)(uintptr_t)vqs[i].pdesc;
			a.avail = (uint64_t)(uintptr_t)vqs[i].drv_ev;
			a.used = (uint64_t)(uintptr_t)vqs[i].dev_ev;
		}
		a.log = fb_mem_gpa(mem, (const void *)(uintptr_t)a.used);

		rc = vu_set(&dev->conn, VHU_SET_VRING_ADDR, &a, sizeof(a), NULL, 0);
		if (rc < 0)
			return log_err(dev, rc, "SET_VRING_ADDR");
	}
	rc = vu_sync(&dev->conn);
	return rc < 0 ? log_err(dev, rc, "sync") : 0;
}

static bool page_marked(const struct fb_dirtylog *lg, uint64_t gpa)
{
	uint64_t pg = gpa / LOG_PAGE;

	return pg / 8 < lg->size && (lg->bits[pg / 8] & (1u << (pg % 8)));
}

/* Every page of [p, p + len) marked (want) or unmarked (!want); else why, in err. */
static int range_is(const struct fb_dirtylog *lg, const struct fb_mem *mem, const void *p,
		    uint64_t len, bool want, const char *what, unsigned q, char *err, size_t errlen)
{
	uint64_t gpa = fb_mem_gpa(mem, p);

	for (uint64_t a = gpa & ~(uint64_t)(LOG_PAGE - 1); a < gpa + len; a += LOG_PAGE) {
		if (page_marked(lg, a) != want) {
			snprintf(err, errlen, "queue %u: %s page at 0x%llx %s", q, what,
				 (unsigned long long)a,
				 want ? "written but not marked" : "marked but never written");
			return -1;
		}
	}
	return 0;
}

/* Split: the used ring marked, the descriptor table and avail ring (only read) not. */
static int ring_split_ok(const struct fb_dirtylog *lg, const struct fb_mem *mem,
			 const struct fb_vq *v, unsigned q, char *err, size_t errlen)
{
	uint64_t used_len = 4 + 8ull * v->size + 2;
	/* the avail ring's last page is the used ring's first when they share one */
	uint64_t avail_end = fb_mem_gpa(mem, v->vr.used) & ~(uint64_t)(LOG_PAGE - 1);
	uint64_t ro_len = avail_end - fb_mem_gpa(mem, v->vr.desc);

	if (range_is(lg, mem, v->vr.used, used_len, true, "used ring", q, err, errlen))
		return -1;
	return range_is(lg, mem, v->vr.desc, ro_len, false, "descriptor/avail", q, err, errlen);
}

/*
 * Packed: used descriptors are written in place from ring position 0 on, so
 * the descriptor ring's first page is marked once anything completed.
 */
static int ring_packed_ok(const struct fb_dirtylog *lg, const struct fb_mem *mem,
			  const struct fb_vq *v, unsigned q, char *err, size_t errlen)
{
	return range_is(lg, mem, v->pdesc, sizeof(*v->pdesc), true, "descriptor ring", q, err,
			errlen);
}

int fb_dirtylog_check(const struct fb_dirtylog *lg, const struct fb_mem *mem,
		      const struct fb_vq *vqs, unsigned n, bool reads, uint64_t *marked, char *err,
		      size_t errlen)
{
	*marked = 0;
	for (size_t i = 0; i < lg->size; i++)
		*marked += (uint64_t)__builtin_popcount(lg->bits[i]);
	for (unsigned i = 0; i < n; i++) {
		const struct fb_vq *v = &vqs[i];

		if (range_is(lg, mem, v->status, v->nslots, true, "status", i, err, errlen) ||
		    (v->indirect && range_is(lg, mem, v->ind, (uint64_t)v->nslots * FB_IND_BYTES,
					     false, "indirect table", i, err, errlen)) ||
		    (v->packed ? ring_packed_ok(lg, mem, v, i, err, errlen)
			       : ring_split_ok(lg, mem, v, i, err, errlen)))
			return -1;
		for (unsigned k = 0; reads && k < v->nslots; k++)
			if (range_is(lg, mem, fb_vq_slot_data(v, k), 512, true, "read buffer", i,
				     err, errlen))
				return -1;
	}
	return 0;
}

void fb_dirtylog_fini(struct fb_dirtylog *lg)
{
	if (lg->bits != NULL)
		munmap(lg->bits, lg->size);
	if (lg->fd >= 0)
		close(lg->fd);
	lg->bits = NULL;
	lg->fd = -1;
}
