/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mbe.c - the memory backend: allocation of a device's data region on a
 * NUMA node (libnuma), hugepage selection from sysfs counters, pre-faulting,
 * locking, and the move_pages placement check; file-backed regions for a
 * persistent medium (mem_path).  Runs at start-up only.
 */
#include <errno.h>
#include <inttypes.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "numa/mbe.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MBE_1G (1ull << 30)
#define MBE_2M (2ull << 20)

static uint64_t mbe_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool mbe_numa_ok(void)
{
	return numa_available() >= 0;
}

bool mbe_node_exists(int node)
{
	if (node < 0)
		return false;
	if (!mbe_numa_ok())
		return node == 0;
	if (node > numa_max_node())
		return false;
	return numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node);
}

int mbe_max_node(void)
{
	return mbe_numa_ok() ? numa_max_node() : 0;
}

int mbe_node_of_cpu(unsigned cpu)
{
	if (!mbe_numa_ok())
		return 0;
	return numa_node_of_cpu((int)cpu);
}

static uint64_t mbe_read_u64(const char *path)
{
	FILE *f = fopen(path, "r");
	unsigned long long v = 0;

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

uint64_t mbe_free_hugepages(size_t page_size, int node)
{
	char path[160];

	if (node < 0)
		snprintf(path, sizeof(path),
			 "/sys/kernel/mm/hugepages/hugepages-%zukB/free_hugepages",
			 page_size >> 10);
	else
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/hugepages/hugepages-%zukB/free_hugepages",
			 node, page_size >> 10);
	return mbe_read_u64(path);
}

/* MemAvailable from /proc/meminfo, bytes (0 when unknown). */
static uint64_t mbe_mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

static size_t mbe_round_up(size_t len, size_t align)
{
	return (len + align - 1) / align * align;
}

static void *mbe_map(size_t map_len, size_t page_size)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	void *p;

	if (page_size == MBE_1G || page_size == MBE_2M) {
		flags &= ~MAP_NORESERVE;
		flags |= MAP_HUGETLB | ((__builtin_ctzll(page_size)) << MAP_HUGE_SHIFT);
	}
	p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Pick 1 GiB, then 2 MiB pages when enough are free on the node. */
static size_t mbe_pick_hugepage_size(size_t len, int node)
{
	static const size_t sizes[] = {MBE_1G, MBE_2M};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t need = mbe_round_up(len, sizes[i]) / sizes[i];

		if (mbe_free_hugepages(sizes[i], node) >= need)
			return sizes[i];
	}
	return 0;
}

/* AnonHugePages of the mapping that starts at addr, from /proc/self/smaps (bytes). */
static size_t mbe_thp_bytes(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	bool in = false;
	size_t kb = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			if (in)
				break;
			in = start == (unsigned long)addr;
		} else if (in && sscanf(line, "AnonHugePages: %zu kB", &kb) == 1) {
			break;
		}
	}
	fclose(f);
	return kb << 10;
}

static int mbe_bind(void *addr, size_t len, int node, char *err, size_t errlen)
{
	struct bitmask *nodes;
	long rc;

	if (node < 0 || !mbe_numa_ok())
		return 0;
	nodes = numa_allocate_nodemask();
	numa_bitmask_setbit(nodes, (unsigned)node);
	rc = mbind(addr, len, MPOL_BIND, nodes->maskp, nodes->size + 1, MPOL_MF_STRICT);
	numa_bitmask_free(nodes);
	if (rc != 0) {
		snprintf(err, errlen, "cannot bind backend memory to node %d: %s", node,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

/* Touch every page once so that the I/O path never faults. */
static void mbe_prefault(void *addr, size_t len, size_t page_size)
{
	if (madvise(addr, len, MADV_POPULATE_WRITE) == 0)
		return;
	for (size_t off = 0; off < len; off += page_size)
		((volatile uint8_t *)addr)[off] = 0;
}

static int mbe_try(struct mbe_region *r, size_t page_size, char *err, size_t errlen)
{
	int rc;

	r->page_size = page_size;
	r->map_len = mbe_round_up(r->len, page_size);
	r->addr = mbe_map(r->map_len, page_size);
	if (r->addr == NULL) {
		snprintf(err, errlen, "cannot map %zu bytes with %zu-byte pages: %s", r->map_len,
			 page_size, strerror(errno));
		return -ENOMEM;
	}
	rc = mbe_bind(r->addr, r->map_len, r->node, err, errlen);
	if (rc != 0) {
		munmap(r->addr, r->map_len);
		r->addr = NULL;
	}
	return rc;
}

static void mbe_lock(struct mbe_region *r)
{
	size_t n = strlen(r->note);

	r->locked = mlock(r->addr, r->map_len) == 0;
	if (!r->locked)
		snprintf(r->note + n, sizeof(r->note) - n,
			 "%smlock failed (%s): raise RLIMIT_MEMLOCK (ulimit -l) to keep the "
			 "backend resident",
			 n ? "; " : "", strerror(errno));
}

int mbe_alloc(size_t len, int node, unsigned flags, struct mbe_region *out, char *err,
	      size_t errlen)
{
	size_t huge = 0;
	uint64_t t0;
	int rc = -ENOMEM;

	memset(out, 0, sizeof(*out));
	out->len = len;
	out->node = node;
	if (len == 0) {
		snprintf(err, errlen, "backend size is 0");
		return -EINVAL;
	}
	if (node >= 0 && !mbe_node_exists(node)) {
		snprintf(err, errlen, "NUMA node %d does not exist (highest node is %d)", node,
			 mbe_max_node());
		return -ENODEV;
	}
	if (!(flags & MBE_F_NO_HUGE))
		huge = mbe_pick_hugepage_size(len, node);
	t0 = mbe_now_ns();
	if (huge != 0)
		rc = mbe_try(out, huge, err, errlen);
	if (rc != 0) {
		if (!(flags & MBE_F_NO_HUGE))
			snprintf(out->note, sizeof(out->note),
				 "no hugepages for %zu MiB on node %d; using normal pages (reserve "
				 "with: echo N > /sys/devices/system/node/node%d/hugepages/"
				 "hugepages-2048kB/nr_hugepages)",
				 len >> 20, node < 0 ? 0 : node, node < 0 ? 0 : node);
		uint64_t avail = mbe_mem_available();

		if (avail != 0 && len > avail) {
			snprintf(
			    err, errlen,
			    "%zu MiB asked for but only %llu MiB of memory are available (and no "
			    "hugepages reserved for it)",
			    len >> 20, (unsigned long long)(avail >> 20));
			return -ENOMEM;
		}
		rc = mbe_try(out, (size_t)sysconf(_SC_PAGESIZE), err, errlen);
		if (rc != 0)
			return rc;
		madvise(out->addr, out->map_len, MADV_HUGEPAGE); /* THP when available */
	}
	out->hugepages = out->page_size != (size_t)sysconf(_SC_PAGESIZE);
	mbe_prefault(out->addr, out->map_len, out->page_size);
	if (!(flags & MBE_F_NO_LOCK))
		mbe_lock(out);
	out->prefault_ns = mbe_now_ns() - t0;
	out->thp_bytes = out->hugepages ? 0 : mbe_thp_bytes(out->addr);
	return 0;
}

void mbe_free(struct mbe_region *r)
{
	if (r->addr != NULL)
		munmap(r->addr, r->map_len);
	r->addr = NULL;
}

int mbe_check_placement(const struct mbe_region *r, unsigned samples, int *other_node,
			unsigned *sampled)
{
	size_t npages = r->map_len / r->page_size;
	void **pages;
	int *status;
	int on_node = 0;

	*other_node = -1;
	*sampled = 0;
	if (samples == 0 || npages == 0 || !mbe_numa_ok())
		return 0;
	if (samples > npages)
		samples = (unsigned)npages;
	pages = calloc(samples, sizeof(*pages));
	status = calloc(samples, sizeof(*status));
	if (pages == NULL || status == NULL) {
		free(pages);
		free(status);
		return 0;
	}
	for (unsigned i = 0; i < samples; i++)
		pages[i] = (uint8_t *)r->addr + (npages * i / samples) * r->page_size;
	if (numa_move_pages(0, samples, pages, NULL, status, 0) == 0) {
		for (unsigned i = 0; i < samples; i++) {
			if (status[i] < 0)
				continue;
			if (r->node < 0 || status[i] == r->node)
				on_node++;
			else
				*other_node = status[i];
		}
		*sampled = samples;
	}
	free(pages);
	free(status);
	return on_node;
}

/* ---- file-backed regions (persistent medium) ---- */

size_t mbe_file_page_size(int fd, bool *in_memory, const char **fsname)
{
	struct statfs sf;
	size_t base = (size_t)sysconf(_SC_PAGESIZE);

	*in_memory = false;
	*fsname = "disk file system";
	if (fstatfs(fd, &sf) != 0)
		return base;
	if (sf.f_type == HUGETLBFS_MAGIC) {
		*in_memory = true;
		*fsname = "hugetlbfs";
		return (size_t)sf.f_bsize;
	}
	if (sf.f_type == TMPFS_MAGIC) {
		*in_memory = true;
		*fsname = "tmpfs";
	}
	return base;
}

/* The task's policy while pages are allocated: file pages follow it, not mbind. */
static void mbe_task_bind(int node)
{
	struct bitmask *nodes;

	if (node < 0 || !mbe_numa_ok())
		return;
	nodes = numa_allocate_nodemask();
	numa_bitmask_setbit(nodes, (unsigned)node);
	set_mempolicy(MPOL_BIND, nodes->maskp, nodes->size + 1);
	numa_bitmask_free(nodes);
}

static void mbe_task_unbind(int node)
{
	if (node >= 0 && mbe_numa_ok())
		set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

static int mbe_file_reserve(int fd, size_t len, const char *fsname, char *err, size_t errlen)
{
	if (ftruncate(fd, (off_t)len) != 0) {
		snprintf(err, errlen, "cannot size the file to %zu bytes on %s: %s", len, fsname,
			 strerror(errno));
		return -errno;
	}
	if (fallocate(fd, 0, 0, (off_t)len) == 0)
		return 0;
	if (errno == EOPNOTSUPP)
		return 0; /* e.g. a file system without fallocate: sparse, filled on use */
	snprintf(err, errlen, "the %s holding it cannot hold %zu MiB (fallocate: %s)", fsname,
		 len >> 20, strerror(errno));
	return errno == ENOSPC ? -ENOSPC : -errno;
}

static int mbe_file_bind(struct mbe_region *r, char *err, size_t errlen)
{
	struct bitmask *nodes;
	long rc;

	if (r->node < 0 || !mbe_numa_ok())
		return 0;
	nodes = numa_allocate_nodemask();
	numa_bitmask_setbit(nodes, (unsigned)r->node);
	rc = mbind(r->addr, r->map_len, MPOL_BIND, nodes->maskp, nodes->size + 1, MPOL_MF_MOVE);
	numa_bitmask_free(nodes);
	if (rc != 0 && errno != EIO) {
		snprintf(err, errlen, "cannot bind the medium to node %d: %s", r->node,
			 strerror(errno));
		return -errno;
	}
	return 0;
}

/* Fault the mapping in; reading (never writing) where MADV_POPULATE_* is unknown. */
static int mbe_file_prefault(struct mbe_region *r, bool in_mem)
{
	if (madvise(r->addr, r->len, in_mem ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	for (size_t off = 0; off < r->len; off += r->page_size)
		(void)((volatile uint8_t *)r->addr)[off];
	return 0;
}

int mbe_map_file(int fd, size_t len, int node, unsigned flags, bool fresh, struct mbe_region *out,
		 char *err, size_t errlen)
{
	const char *fsname;
	bool in_mem;
	uint64_t t0 = mbe_now_ns();
	int rc = 0;

	memset(out, 0, sizeof(*out));
	out->len = len;
	out->map_len = len;
	out->node = node;
	out->page_size = mbe_file_page_size(fd, &in_mem, &fsname);
	if (node >= 0 && !mbe_node_exists(node)) {
		snprintf(err, errlen, "NUMA node %d does not exist (highest node is %d)", node,
			 mbe_max_node());
		return -ENODEV;
	}
	mbe_task_bind(node);
	if (fresh)
		rc = mbe_file_reserve(fd, len, fsname, err, errlen);
	if (rc == 0) {
		out->addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (out->addr == MAP_FAILED) {
			out->addr = NULL;
			snprintf(err, errlen, "cannot map %zu bytes of it shared: %s", len,
				 strerror(errno));
			rc = -errno;
		}
	}
	if (rc == 0)
		rc = mbe_file_bind(out, err, errlen);
	if (rc == 0 && mbe_file_prefault(out, in_mem) != 0) {
		snprintf(err, errlen, "cannot fault in the %s file (%s)%s", fsname, strerror(errno),
			 errno == EFAULT || errno == ENOMEM ? ": the file system is out of room"
							    : "");
		rc = errno == EFAULT ? -ENOSPC : -errno;
	}
	mbe_task_unbind(node);
	if (rc != 0) {
		mbe_free(out);
		return rc;
	}
	out->hugepages = out->page_size != (size_t)sysconf(_SC_PAGESIZE);
	if (!in_mem)
		snprintf(out->note, sizeof(out->note),
			 "the medium is on a %s: writes after the kernel's writeback fault "
			 "(tmpfs or hugetlbfs avoid it)",
			 fsname);
	if (!(flags & MBE_F_NO_LOCK))
		mbe_lock(out);
	out->prefault_ns = mbe_now_ns() - t0;
	return 0;
}
