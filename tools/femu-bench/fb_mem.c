/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_mem.c - shared memfd region and its bump allocator.
 */
#include "fb_mem.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_2M (2ull << 20)

static size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static int map_fd(struct fb_mem *m, int fd, size_t size)
{
	if (ftruncate(fd, (off_t)size) < 0)
		return -errno;
	m->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (m->base == MAP_FAILED) {
		m->base = NULL;
		return -errno;
	}
	m->fd = fd;
	m->size = size;
	return 0;
}

int fb_mem_create(struct fb_mem *m, size_t size, bool hugepages)
{
	int fd, rc;

	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->gpa_base = FB_MEM_GPA_BASE;
	if (hugepages) {
		fd = memfd_create("femu-bench-huge", MFD_CLOEXEC | MFD_HUGETLB);
		if (fd >= 0) {
			rc = map_fd(m, fd, round_up(size, HUGE_2M));
			if (rc == 0) {
				m->huge = true;
				return 0;
			}
			close(fd);
			return rc;
		}
		return -errno;
	}
	fd = memfd_create("femu-bench", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = map_fd(m, fd, round_up(size, (size_t)sysconf(_SC_PAGESIZE)));
	if (rc < 0)
		close(fd);
	return rc;
}

void fb_mem_destroy(struct fb_mem *m)
{
	if (m->base)
		munmap(m->base, m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
}

void *fb_mem_alloc(struct fb_mem *m, size_t len, size_t align)
{
	size_t off = round_up(m->used, align);

	if (off > m->size || len > m->size - off)
		return NULL;
	m->used = off + len;
	return m->base + off;
}
