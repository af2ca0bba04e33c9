/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * medium.c - persistent media (mem_path): layout, header check, making and
 * mapping the file (see medium.h).  Runs at start-up only.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <isa-l/crc.h>

#include "daemon/medium.h"

#define MB ((uint64_t)1 << 20)

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

void medium_layout_of(const struct femud_dev_opts *o, size_t page_size, struct medium_layout *lay)
{
	memset(lay, 0, sizeof(*lay));
	lay->page_size = page_size;
	lay->capacity_bytes = o->mcfg.capacity_bytes;
	lay->undo_off = round_up(lay->capacity_bytes, 4096);
	lay->undo_bytes = fm_undo_bytes();
	lay->state_off = round_up(lay->undo_off + lay->undo_bytes, 4096);
	lay->state_bytes = o->ops->state_size ? o->ops->state_size(&o->mcfg) : 0;
	lay->hdr_off = round_up(lay->state_off + lay->state_bytes, 4096);
	lay->file_bytes = round_up(lay->hdr_off + MEDIUM_HDR_BYTES, page_size);
	lay->hdr_off = lay->file_bytes - MEDIUM_HDR_BYTES;
	if (o->ops->layout)
		o->ops->layout(&o->mcfg, lay->layout, sizeof(lay->layout));
}

static uint32_t hdr_crc(const struct medium_hdr *h)
{
	struct medium_hdr c = *h;

	c.crc = 0;
	return crc32_iscsi((unsigned char *)&c, sizeof(c), 0xffffffffu);
}

void medium_hdr_fill(struct medium_hdr *h, const struct femud_dev_opts *o,
		     const struct medium_layout *lay)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MEDIUM_MAGIC, sizeof(h->magic));
	h->version = MEDIUM_VERSION;
	h->file_bytes = lay->file_bytes;
	h->capacity_bytes = lay->capacity_bytes;
	h->undo_off = lay->undo_off;
	h->undo_bytes = lay->undo_bytes;
	h->state_off = lay->state_off;
	h->state_bytes = lay->state_bytes;
	h->femu_mode = (uint32_t)o->femu_mode;
	h->secsz = o->secsz;
	snprintf(h->model, sizeof(h->model), "%s", o->ops->name);
	memcpy(h->layout, lay->layout, sizeof(h->layout));
	h->crc = hdr_crc(h);
}

/* First key=value of want whose value differs in have; 0 when none. */
static int layout_diff(const char *want, const char *have, char *msg, size_t len)
{
	char w[MEDIUM_LAYOUT_LEN], *save = NULL;

	snprintf(w, sizeof(w), "%s", want);
	for (char *kv = strtok_r(w, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
		const char *p = have, *found = NULL;

		while (p && *p) {
			if (strncmp(p, kv, klen) == 0 && p[klen] == '=') {
				found = p + klen + 1;
				break;
			}
			p = strchr(p, ',');
			p = p ? p + 1 : NULL;
		}
		if (found == NULL || strncmp(found, eq + 1, strcspn(found, ",")) != 0 ||
		    strlen(eq + 1) != strcspn(found, ",")) {
			snprintf(msg, len, "it was made with %.*s=%.*s, --dev has %s", (int)klen,
				 kv, found ? (int)strcspn(found, ",") : 1, found ? found : "?", kv);
			return 1;
		}
	}
	return 0;
}

int medium_hdr_check(const struct medium_hdr *h, const struct femud_dev_opts *o,
		     const struct medium_layout *lay, const char *what, const char *hint, char *err,
		     size_t errlen)
{
	char why[400] = "";

	if (memcmp(h->magic, MEDIUM_MAGIC, sizeof(h->magic)) != 0)
		snprintf(why, sizeof(why), "no femud medium header (not a medium, or truncated)");
	else if (h->version != MEDIUM_VERSION)
		snprintf(why, sizeof(why), "format version %u, this femud reads version %u",
			 h->version, MEDIUM_VERSION);
	else if (h->crc != hdr_crc(h))
		snprintf(why, sizeof(why), "header checksum mismatch (corrupted)");
	else if (h->femu_mode != (uint32_t)o->femu_mode)
		snprintf(why, sizeof(why),
			 "it holds a femu_mode=%u (%.16s) device, --dev has femu_mode=%d",
			 h->femu_mode, h->model, o->femu_mode);
	else if (h->secsz != o->secsz)
		snprintf(why, sizeof(why), "it was made with secsz=%u, --dev has secsz=%u",
			 h->secsz, o->secsz);
	else if (layout_diff(lay->layout, h->layout, why, sizeof(why)))
		; /* a geometry key first: it explains a capacity that differs too */
	else if (h->capacity_bytes != lay->capacity_bytes)
		snprintf(why, sizeof(why),
			 "it holds %" PRIu64 " bytes (devsz_mb=%" PRIu64
			 "), --dev asks for %" PRIu64 " bytes (devsz_mb=%" PRIu64 ")",
			 h->capacity_bytes, h->capacity_bytes / MB, lay->capacity_bytes,
			 lay->capacity_bytes / MB);
	else if (h->undo_off != lay->undo_off || h->undo_bytes != lay->undo_bytes ||
		 h->state_off != lay->state_off || h->state_bytes != lay->state_bytes)
		snprintf(why, sizeof(why),
			 "its state area (%" PRIu64 " bytes at %" PRIu64
			 ") differs from this femud's (%" PRIu64 " at %" PRIu64 ")",
			 h->state_bytes, h->state_off, lay->state_bytes, lay->state_off);
	if (why[0] == '\0')
		return 0;
	snprintf(err, errlen, "%s: %s; %s", what, why, hint);
	return -EINVAL;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* An existing file: read its header (pread, nothing written) and check it. */
static int medium_check_file(struct medium *md, const struct femud_dev_opts *o, uint64_t size,
			     char *err, size_t errlen)
{
	struct medium_hdr h;
	char what[300];

	snprintf(what, sizeof(what), "--dev path=%s: mem_path=%s", o->path, o->mem_path);
	if (size < MEDIUM_HDR_BYTES ||
	    pread(md->fd, &h, sizeof(h), (off_t)(size - MEDIUM_HDR_BYTES)) != (ssize_t)sizeof(h)) {
		snprintf(err, errlen,
			 "%s: %" PRIu64 " bytes, too short for a medium (truncated?); "
			 "left as it is (format=1 makes it anew, erasing it)",
			 what, size);
		return -EINVAL;
	}
	if (size == md->lay.file_bytes && all_zero(&h, sizeof(h))) {
		md->fresh = true; /* made by a start that did not finish */
		return 0;
	}
	if (memcmp(h.magic, MEDIUM_MAGIC, sizeof(h.magic)) == 0 && h.file_bytes != size &&
	    h.version == MEDIUM_VERSION) {
		snprintf(
		    err, errlen,
		    "%s: %" PRIu64 " bytes, its header says %" PRIu64
		    " (truncated or extended); left as it is (format=1 makes it anew, erasing it)",
		    what, size, h.file_bytes);
		return -EINVAL;
	}
	if (size != md->lay.file_bytes && memcmp(h.magic, MEDIUM_MAGIC, sizeof(h.magic)) != 0) {
		snprintf(err, errlen,
			 "%s: no femud medium header (not a medium, or truncated: %" PRIu64
			 " bytes); left as it is (format=1 makes it anew, erasing it)",
			 what, size);
		return -EINVAL;
	}
	return medium_hdr_check(&h, o, &md->lay, what,
				"left as it is (format=1 makes it anew, erasing it)", err, errlen);
}

static int medium_open_fd(struct medium *md, const struct femud_dev_opts *o, bool *created,
			  uint64_t *size, char *err, size_t errlen)
{
	struct stat st;

	*created = false;
	md->fd = open(o->mem_path, O_RDWR | O_CLOEXEC);
	if (md->fd < 0 && errno == ENOENT) {
		md->fd = open(o->mem_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		*created = md->fd >= 0;
	}
	if (md->fd < 0 || fstat(md->fd, &st) != 0) {
		snprintf(err, errlen, "--dev path=%s: mem_path=%s: %s", o->path, o->mem_path,
			 strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "--dev path=%s: mem_path=%s: not a regular file", o->path,
			 o->mem_path);
		return -EINVAL;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

static void medium_fail(struct medium *md, const struct femud_dev_opts *o, bool created)
{
	if (created)
		unlink(o->mem_path);
	medium_close(md);
}

int medium_open(struct medium *md, const struct femud_dev_opts *o, int node, unsigned mbe_flags,
		struct mbe_region *mem, char *err, size_t errlen)
{
	char merr[300];
	bool created = false;
	uint64_t size = 0;
	int rc;

	memset(md, 0, sizeof(*md));
	rc = medium_open_fd(md, o, &created, &size, err, errlen);
	if (rc != 0) {
		medium_fail(md, o, false);
		return rc;
	}
	medium_layout_of(o, mbe_file_page_size(md->fd, &md->in_memory, &md->fsname), &md->lay);
	md->fresh = size == 0 || o->format;
	if (!md->fresh && (rc = medium_check_file(md, o, size, err, errlen)) != 0) {
		medium_fail(md, o, false);
		return rc;
	}
	if (md->fresh && size != 0 && ftruncate(md->fd, 0) != 0) { /* format=1: all zero */
		snprintf(err, errlen, "--dev path=%s: mem_path=%s: format: %s", o->path,
			 o->mem_path, strerror(errno));
		medium_fail(md, o, false);
		return -errno;
	}
	rc = mbe_map_file(md->fd, md->lay.file_bytes, node, mbe_flags, md->fresh, mem, merr,
			  sizeof(merr));
	if (rc != 0) {
		snprintf(err, errlen, "--dev path=%s: mem_path=%s: %s", o->path, o->mem_path, merr);
		medium_fail(md, o, created);
		return rc;
	}
	md->data = mem->addr;
	md->state = (uint8_t *)mem->addr + md->lay.state_off;
	md->hdr = (struct medium_hdr *)((uint8_t *)mem->addr + md->lay.hdr_off);
	fm_undo_init(&md->undo, (uint8_t *)mem->addr + md->lay.undo_off, o->secsz);
	if (!md->fresh)
		md->restored = fm_undo_recover(&md->undo, md->data, md->lay.capacity_bytes);
	return 0;
}

void medium_commit(struct medium *md, const struct femud_dev_opts *o)
{
	struct medium_hdr h;

	if (!md->fresh || md->hdr == NULL)
		return;
	medium_hdr_fill(&h, o, &md->lay);
	memcpy((uint8_t *)md->hdr + sizeof(h.magic), (uint8_t *)&h + sizeof(h.magic),
	       sizeof(h) - sizeof(h.magic));
	__asm__ __volatile__("" ::: "memory");
	memcpy(md->hdr->magic, h.magic, sizeof(h.magic));
	if (!md->in_memory)
		msync(md->data, md->lay.file_bytes, MS_SYNC);
	md->fresh = false;
}

void medium_close(struct medium *md)
{
	if (md->fd > 0)
		close(md->fd);
	md->fd = -1;
}
