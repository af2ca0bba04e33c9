/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_mem.h - the memory femu-bench shares with the backend: one memfd
 * (optionally hugetlb) mapping holding every ring, request header, status
 * byte and data buffer, handed out by a bump allocator.  "Guest physical"
 * addresses (what descriptors carry) are gpa_base + offset in the region.
 */
#ifndef FB_MEM_H
#define FB_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FB_MEM_GPA_BASE 0x40000000ull /* arbitrary, non-zero */

struct fb_mem {
	int fd;	       /* memfd, sent with SET_MEM_TABLE */
	uint8_t *base; /* our mapping */
	size_t size;   /* bytes, a multiple of the page size */
	size_t used;   /* bump pointer */
	uint64_t gpa_base;
	bool huge;
};

/* Create a shared region of at least size bytes.  Returns 0 or -errno. */
int fb_mem_create(struct fb_mem *m, size_t size, bool hugepages);

void fb_mem_destroy(struct fb_mem *m);

/* Allocate len bytes aligned to align (a power of two); NULL when full. */
void *fb_mem_alloc(struct fb_mem *m, size_t len, size_t align);

static inline uint64_t fb_mem_gpa(const struct fb_mem *m, const void *p)
{
	return m->gpa_base + (uint64_t)((const uint8_t *)p - m->base);
}

#endif /* FB_MEM_H */
