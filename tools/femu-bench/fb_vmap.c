/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_vmap.c - the verify map file (see fb_vmap.h): a 64-byte header {magic,
 * sectors} and one {acked, pending} pair per 512-byte sector, mapped shared.
 */
#include "fb_vmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define VMAP_MAGIC 0x314d564246ull /* "FBVM1" */
#define VMAP_HDR 64u

struct vmap_hdr {
	uint64_t magic;
	uint64_t nsec;
};

int fb_vmap_open(struct fb_vmap *m, const char *path, uint64_t dev_bytes, char *err, size_t errlen)
{
	uint64_t nsec = dev_bytes / FB_VERIFY_SECTOR;
	size_t len = VMAP_HDR + nsec * sizeof(struct fb_vmap_ent);
	struct vmap_hdr *h;
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	memset(m, 0, sizeof(*m));
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "--verify-map %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_size != 0 && (size_t)st.st_size != len) {
		snprintf(err, errlen,
			 "--verify-map %s: %lld bytes, a map of this %" PRIu64
			 "-byte device has %zu",
			 path, (long long)st.st_size, dev_bytes, len);
		close(fd);
		return -1;
	}
	if (st.st_size == 0 && ftruncate(fd, (off_t)len) != 0) {
		snprintf(err, errlen, "--verify-map %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	m->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m->map == MAP_FAILED) {
		snprintf(err, errlen, "--verify-map %s: %s", path, strerror(errno));
		m->map = NULL;
		return -1;
	}
	m->map_len = len;
	h = m->map;
	if (h->magic == 0) {
		h->nsec = nsec;
		h->magic = VMAP_MAGIC;
	} else if (h->magic != VMAP_MAGIC || h->nsec != nsec) {
		snprintf(err, errlen, "--verify-map %s: not a verify map of this device", path);
		fb_vmap_close(m);
		return -1;
	}
	m->e = (struct fb_vmap_ent *)((uint8_t *)m->map + VMAP_HDR);
	m->nsec = nsec;
	return 0;
}

void fb_vmap_close(struct fb_vmap *m)
{
	if (m->map != NULL)
		munmap(m->map, m->map_len);
	m->map = NULL;
	m->e = NULL;
}

void fb_vmap_submitted(struct fb_vmap *m, uint64_t lba, uint32_t nsec, uint64_t gen)
{
	for (uint32_t i = 0; i < nsec; i++)
		__atomic_store_n(&m->e[lba + i].pending, gen, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* before the request is published */
}

void fb_vmap_acked(struct fb_vmap *m, uint64_t lba, uint32_t nsec, uint64_t gen)
{
	for (uint32_t i = 0; i < nsec; i++)
		__atomic_store_n(&m->e[lba + i].acked, gen, __ATOMIC_RELAXED);
}

/* One sector: good when it holds gen (all zeros for gen 0). */
static enum fb_vres check_gen(const void *buf, uint64_t lba, uint64_t gen, uint64_t *flba,
			      uint64_t *fgen)
{
	enum fb_vres r = fb_verify_check_sector(buf, lba, gen, flba, fgen);

	if (gen == 0)
		return r == FB_V_ZERO ? FB_V_OK : (r == FB_V_OK ? FB_V_BAD_GEN : r);
	return r;
}

int fb_vmap_check(struct fb_vmap *m, const void *buf, uint64_t lba, uint32_t nsec, bool settle,
		  enum fb_vres *res, uint64_t *want, uint64_t *found_lba, uint64_t *found_gen)
{
	for (uint32_t i = 0; i < nsec; i++) {
		const void *s = (const uint8_t *)buf + (size_t)i * FB_VERIFY_SECTOR;
		struct fb_vmap_ent *e = &m->e[lba + i];
		uint64_t a = __atomic_load_n(&e->acked, __ATOMIC_RELAXED);
		uint64_t p = __atomic_load_n(&e->pending, __ATOMIC_RELAXED);
		uint64_t fl, fg, got = a;
		enum fb_vres r = check_gen(s, lba + i, a, found_lba, found_gen);

		if (r != FB_V_OK && p != a && check_gen(s, lba + i, p, &fl, &fg) == FB_V_OK)
			r = FB_V_OK, got = p;
		if (r != FB_V_OK) {
			*res = r;
			*want = a;
			return (int)i;
		}
		if (settle) {
			e->acked = got;
			e->pending = got;
		}
	}
	return -1;
}
