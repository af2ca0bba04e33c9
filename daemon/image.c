/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image.c - saving and loading device images with io_uring (see image.h):
 * the file format, the chunk I/O loop, the snapshot hand-over, progress.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <isa-l/crc.h>
#include <isa-l/mem_routines.h>

#include "daemon/image.h"
#include "daemon/log.h"
#include "ftl/fm_snap.h"
#include "pmd/pmd.h"

#define ALIGN 4096u
#define PROGRESS_NS 1000000000ull /* a progress line at most once a second */

static uint64_t up4k(uint64_t v)
{
	return (v + ALIGN - 1) / ALIGN * ALIGN;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t crc(const void *p, uint64_t len)
{
	return crc32_iscsi((unsigned char *)p, (int)len, 0xffffffffu);
}

static uint32_t hdr_crc(const struct image_hdr *h)
{
	struct image_hdr c = *h;

	c.crc = 0;
	return crc(&c, sizeof(c));
}

static void *alloc_aligned(uint64_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, ALIGN, up4k(len ? len : 1)) != 0)
		return NULL;
	memset(p, 0, up4k(len ? len : 1));
	return p;
}

/* ---- progress ---- */

struct progress {
	const char *what, *path;
	uint64_t t0, next, total; /* bytes of the device to go through */
};

static void progress_start(struct progress *pr, const char *what, const char *path, uint64_t total)
{
	pr->what = what;
	pr->path = path;
	pr->t0 = now_ns();
	pr->next = pr->t0 + PROGRESS_NS;
	pr->total = total;
}

static void progress_tick(struct progress *pr, uint64_t done, uint64_t moved)
{
	uint64_t t = now_ns();
	double s = (double)(t - pr->t0) / 1e9;

	if (t < pr->next || done == 0)
		return;
	pr->next = t + PROGRESS_NS;
	femud_log("image %s %s: %.0f%% (%" PRIu64 " of %" PRIu64 " MiB), %.0f MB/s, ETA %.1f s",
		  pr->what, pr->path, 100.0 * (double)done / (double)pr->total, done >> 20,
		  pr->total >> 20, (double)moved / s / 1e6,
		  s * (double)(pr->total - done) / (double)done);
}

/* ---- I/O ---- */

/* open with O_DIRECT where the file system takes it (tmpfs does not). */
static int open_io(const char *path, int flags, bool direct_ok, bool *direct)
{
	int fd = -1;

	*direct = false;
	if (direct_ok) {
		fd = open(path, flags | O_DIRECT | O_CLOEXEC, 0644);
		*direct = fd >= 0;
	}
	if (fd < 0 && (!direct_ok || errno == EINVAL))
		fd = open(path, flags | O_CLOEXEC, 0644);
	return fd;
}

static int full_pio(int fd, void *buf, uint64_t len, uint64_t off, bool write)
{
	while (len > 0) {
		ssize_t n =
		    write ? pwrite(fd, buf, len, (off_t)off) : pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? -EIO : -errno;
		buf = (uint8_t *)buf + n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* One chunk I/O in flight. */
struct slot {
	uint64_t c;
	const void *src; /* buffer, NULL = free slot */
	bool write;
};

struct loop {
	struct io_uring ring;
	struct slot slots[IMAGE_QD];
	unsigned inflight;
	uint64_t moved; /* bytes transferred */
};

/*
 * The ring's async workers (io-wq: a write to a regular file is copied by
 * one of them) may run on the CPUs this thread may run on, and no others:
 * a saver is a control thread, kept off the pollers' CPUs, and so are they.
 */
static int loop_init(struct loop *l)
{
	cpu_set_t cpus;
	int rc;

	memset(l, 0, sizeof(*l));
	rc = io_uring_queue_init(IMAGE_QD, &l->ring, 0);
	if (rc == 0 && pthread_getaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0)
		io_uring_register_iowq_aff(&l->ring, sizeof(cpus), &cpus); /* best effort */
	return rc;
}

/* Reap one completion; calls done(c) for it.  Returns 0 or the I/O's error. */
static int loop_reap(struct loop *l, void (*done)(void *, uint64_t), void *arg,
		     const uint32_t *lens)
{
	struct io_uring_cqe *cqe;
	struct slot *s;
	int rc = io_uring_wait_cqe(&l->ring, &cqe);

	if (rc < 0)
		return rc;
	s = io_uring_cqe_get_data(cqe);
	rc = cqe->res < 0 ? cqe->res : 0;
	if (rc == 0 && (uint32_t)cqe->res < lens[s - l->slots])
		rc = s->write ? -ENOSPC : -EIO; /* a short write to a file: no room left */
	if (rc == 0)
		l->moved += lens[s - l->slots];
	io_uring_cqe_seen(&l->ring, cqe);
	l->inflight--;
	if (done != NULL)
		done(arg, s->c);
	s->src = NULL;
	return rc;
}

static struct slot *loop_free_slot(struct loop *l, unsigned *idx)
{
	for (unsigned i = 0; i < IMAGE_QD; i++)
		if (l->slots[i].src == NULL) {
			*idx = i;
			return &l->slots[i];
		}
	return NULL;
}

/* ---- save ---- */

struct saver {
	const struct image_dev *d;
	struct fm_snap snap;
	bool published;
	struct image_hdr *hdr;
	struct image_ent *index;
	void *state;
	int fd;
	bool direct;
	struct loop l;
	uint32_t lens[IMAGE_QD];
};

/* Copy the model's state and publish the snapshot at one instant: pollers parked. */
static void snapshot_begin(struct saver *s)
{
	pmd_pollers_park();
	if (s->d->state_bytes > 0)
		memcpy(s->state, s->d->state, s->d->state_bytes);
	if (s->d->model != NULL) {
		s->d->model->snap = &s->snap;
		s->published = true;
	}
	pmd_pollers_unpark();
}

static void snapshot_end(struct saver *s)
{
	if (s->published) {
		pmd_pollers_park();
		s->d->model->snap = NULL;
		pmd_pollers_unpark();
	}
	fm_snap_fini(&s->snap);
}

static void chunk_saved(void *arg, uint64_t c)
{
	fm_snap_done(&((struct saver *)arg)->snap, c);
}

static int save_chunks(struct saver *s, const char *path)
{
	struct progress pr;
	uint64_t off = s->hdr->data_off, cap = s->d->o->mcfg.capacity_bytes;
	int rc = 0;

	progress_start(&pr, "save", path, cap);
	for (uint64_t c = 0; c < s->snap.nchunks && rc == 0; c++) {
		uint32_t len =
		    (uint32_t)(cap - c * IMAGE_CHUNK < IMAGE_CHUNK ? cap - c * IMAGE_CHUNK
								   : IMAGE_CHUNK);
		const void *src = fm_snap_claim(&s->snap, c);
		struct io_uring_sqe *sqe;
		struct slot *sl;
		unsigned i;

		s->index[c].len = len;
		if (isal_zero_detect((void *)src, len) == 0) {
			fm_snap_done(&s->snap, c);
			continue;
		}
		s->index[c].off = off;
		s->index[c].crc = crc(src, len);
		while ((sl = loop_free_slot(&s->l, &i)) == NULL && rc == 0)
			rc = loop_reap(&s->l, chunk_saved, s, s->lens);
		if (rc != 0) {
			fm_snap_done(&s->snap, c);
			break;
		}
		*sl = (struct slot){.c = c, .src = src, .write = true};
		s->lens[i] = len;
		sqe = io_uring_get_sqe(&s->l.ring);
		io_uring_prep_write(sqe, s->fd, src, len, off);
		io_uring_sqe_set_data(sqe, sl);
		s->l.inflight++;
		rc = io_uring_submit(&s->l.ring) < 0 ? -EIO : 0;
		off += up4k(len);
		s->hdr->stored_chunks++;
		progress_tick(&pr, (c + 1) * IMAGE_CHUNK, s->l.moved);
	}
	while (s->l.inflight > 0) {
		int r = loop_reap(&s->l, chunk_saved, s, s->lens);

		rc = rc ? rc : r;
	}
	s->hdr->file_bytes = off;
	return rc;
}

static int save_meta(struct saver *s)
{
	struct image_hdr *h = s->hdr;
	int rc;

	h->index_crc = crc(s->index, h->nchunks * sizeof(*s->index));
	h->state_crc = crc(s->state, h->state_bytes);
	h->crc = hdr_crc(h);
	rc = full_pio(s->fd, s->index, h->index_bytes, h->index_off, true);
	if (rc == 0)
		rc = full_pio(s->fd, s->state, up4k(h->state_bytes), h->state_off, true);
	if (rc == 0)
		rc = full_pio(s->fd, h, ALIGN, 0, true);
	if (rc == 0 && fdatasync(s->fd) != 0)
		rc = -errno;
	return rc;
}

static int saver_init(struct saver *s, const struct image_dev *d)
{
	struct image_hdr *h;
	uint64_t cap = d->o->mcfg.capacity_bytes;

	memset(s, 0, sizeof(*s));
	s->d = d;
	s->fd = -1;
	if (fm_snap_init(&s->snap, d->data, cap, IMAGE_CHUNK) != 0)
		return -ENOMEM;
	h = s->hdr = alloc_aligned(ALIGN);
	s->index = alloc_aligned(s->snap.nchunks * sizeof(*s->index));
	s->state = alloc_aligned(d->state_bytes);
	if (h == NULL || s->index == NULL || s->state == NULL || loop_init(&s->l) != 0)
		return -ENOMEM;
	memcpy(h->magic, IMAGE_MAGIC, sizeof(h->magic));
	h->version = IMAGE_VERSION;
	h->chunk = IMAGE_CHUNK;
	h->nchunks = s->snap.nchunks;
	h->index_off = ALIGN;
	h->index_bytes = up4k(h->nchunks * sizeof(*s->index));
	h->state_off = h->index_off + h->index_bytes;
	h->state_bytes = d->state_bytes;
	h->data_off = h->state_off + up4k(d->state_bytes);
	medium_hdr_fill(&h->dev, d->o, d->lay);
	return 0;
}

static void saver_fini(struct saver *s)
{
	if (s->l.ring.ring_fd > 0)
		io_uring_queue_exit(&s->l.ring);
	if (s->fd >= 0)
		close(s->fd);
	free(s->hdr);
	free(s->index);
	free(s->state);
	fm_snap_fini(&s->snap);
}

int image_save(const char *path, const struct image_dev *d, char *err, size_t errlen)
{
	char tmp[4200];
	struct saver s;
	uint64_t t0 = now_ns();
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	rc = saver_init(&s, d);
	if (rc == 0) {
		s.fd = open_io(tmp, O_WRONLY | O_CREAT | O_TRUNC,
			       d->o->mcfg.capacity_bytes % ALIGN == 0, &s.direct);
		rc = s.fd < 0 ? -errno : 0;
	}
	if (rc == 0) {
		snapshot_begin(&s);
		rc = save_chunks(&s, path);
		snapshot_end(&s);
	}
	if (rc == 0)
		rc = save_meta(&s);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0) {
		snprintf(err, errlen, "image save to %s failed: %s; %s", path, strerror(-rc),
			 access(path, F_OK) == 0 ? "the old image is intact" : "no image written");
		unlink(tmp);
	} else {
		double sec = (double)(now_ns() - t0) / 1e9;

		femud_log_notice(
		    "image saved to %s: %" PRIu64 " of %" PRIu64 " chunks stored (%" PRIu64
		    " MiB), %" PRIu64 " copied on write, %.2f s, %.0f MB/s%s",
		    path, s.hdr->stored_chunks, s.hdr->nchunks, s.hdr->file_bytes >> 20,
		    s.snap.cowed, sec, (double)s.l.moved / sec / 1e6, s.direct ? ", O_DIRECT" : "");
	}
	saver_fini(&s);
	return rc;
}

/* ---- load ---- */

struct loader {
	const struct image_dev *d;
	const char *path;
	struct image_hdr *hdr;
	struct image_ent *index;
	int fd;
	bool direct;
	uint64_t size;
	struct loop l;
	uint32_t lens[IMAGE_QD];
	uint64_t bad_chunk; /* first chunk whose checksum failed, UINT64_MAX = none */
};

static int load_refuse(const struct loader *ld, char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "--dev path=%s: image=%s: %s", ld->d->o->path, ld->path, why);
	return -EINVAL;
}

static int load_hdr(struct loader *ld, char *err, size_t errlen)
{
	struct image_hdr *h = ld->hdr;
	char why[600], what[300];
	uint64_t nchunks = (ld->d->o->mcfg.capacity_bytes + IMAGE_CHUNK - 1) / IMAGE_CHUNK;

	if (ld->size < ALIGN || full_pio(ld->fd, h, ALIGN, 0, false) != 0)
		return load_refuse(ld, err, errlen, "too short for an image (truncated?)");
	if (memcmp(h->magic, IMAGE_MAGIC, sizeof(h->magic)) != 0)
		return load_refuse(ld, err, errlen, "not a femud image (bad magic)");
	if (h->version != IMAGE_VERSION) {
		snprintf(why, sizeof(why), "format version %u, this femud reads version %u",
			 h->version, IMAGE_VERSION);
		return load_refuse(ld, err, errlen, why);
	}
	if (h->crc != hdr_crc(h))
		return load_refuse(ld, err, errlen, "header checksum mismatch (corrupted)");
	snprintf(what, sizeof(what), "--dev path=%s: image=%s", ld->d->o->path, ld->path);
	if (medium_hdr_check(&h->dev, ld->d->o, ld->d->lay, what, "not loaded", err, errlen) != 0)
		return -EINVAL;
	if (h->file_bytes != ld->size) {
		snprintf(why, sizeof(why),
			 "%" PRIu64 " bytes, its header says %" PRIu64 " (truncated or extended)",
			 ld->size, h->file_bytes);
		return load_refuse(ld, err, errlen, why);
	}
	if (h->chunk != IMAGE_CHUNK || h->nchunks != nchunks ||
	    h->state_bytes != ld->d->state_bytes || h->index_off != ALIGN ||
	    h->index_bytes != up4k(nchunks * sizeof(struct image_ent)) ||
	    h->state_off != h->index_off + h->index_bytes ||
	    h->data_off != h->state_off + up4k(h->state_bytes) || h->data_off > h->file_bytes)
		return load_refuse(ld, err, errlen,
				   "inconsistent layout in its header (corrupted)");
	return 0;
}

static int load_index_state(struct loader *ld, char *err, size_t errlen)
{
	struct image_hdr *h = ld->hdr;
	void *state = alloc_aligned(h->state_bytes);
	char why[200];
	int rc;

	ld->index = alloc_aligned(h->index_bytes);
	if (ld->index == NULL || state == NULL) {
		free(state);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = full_pio(ld->fd, ld->index, h->index_bytes, h->index_off, false);
	if (rc == 0)
		rc = full_pio(ld->fd, state, up4k(h->state_bytes), h->state_off, false);
	if (rc != 0) {
		free(state);
		snprintf(why, sizeof(why), "read: %s", strerror(-rc));
		return load_refuse(ld, err, errlen, why);
	}
	if (crc(ld->index, h->nchunks * sizeof(*ld->index)) != h->index_crc ||
	    crc(state, h->state_bytes) != h->state_crc) {
		free(state);
		return load_refuse(ld, err, errlen,
				   "index or model state checksum mismatch (corrupted)");
	}
	for (uint64_t c = 0; c < h->nchunks; c++) {
		const struct image_ent *e = &ld->index[c];
		uint64_t len = ld->d->o->mcfg.capacity_bytes - c * IMAGE_CHUNK;

		len = len < IMAGE_CHUNK ? len : IMAGE_CHUNK;
		if (e->len != len ||
		    (e->off != 0 && (e->off < h->data_off || e->off + len > h->file_bytes))) {
			free(state);
			snprintf(why, sizeof(why),
				 "index entry of chunk %" PRIu64 " out of range (corrupted)", c);
			return load_refuse(ld, err, errlen, why);
		}
	}
	if (h->state_bytes > 0 && ld->d->state != NULL)
		memcpy(ld->d->state, state, h->state_bytes);
	free(state);
	return 0;
}

static void chunk_loaded(void *arg, uint64_t c)
{
	struct loader *ld = arg;
	const struct image_ent *e = &ld->index[c];

	if (crc((uint8_t *)ld->d->data + c * IMAGE_CHUNK, e->len) != e->crc &&
	    ld->bad_chunk == UINT64_MAX)
		ld->bad_chunk = c;
}

static int load_chunks(struct loader *ld, char *err, size_t errlen)
{
	struct progress pr;
	uint8_t *data = ld->d->data;
	int rc = 0;

	progress_start(&pr, "load", ld->path, ld->d->o->mcfg.capacity_bytes);
	for (uint64_t c = 0; c < ld->hdr->nchunks && rc == 0; c++) {
		const struct image_ent *e = &ld->index[c];
		struct io_uring_sqe *sqe;
		struct slot *sl;
		unsigned i;

		if (e->off == 0) {
			if (!ld->d->region_zero)
				memset(data + c * IMAGE_CHUNK, 0, e->len);
			continue;
		}
		while ((sl = loop_free_slot(&ld->l, &i)) == NULL && rc == 0)
			rc = loop_reap(&ld->l, chunk_loaded, ld, ld->lens);
		if (rc != 0)
			break;
		*sl = (struct slot){.c = c, .src = data + c * IMAGE_CHUNK};
		ld->lens[i] = e->len;
		sqe = io_uring_get_sqe(&ld->l.ring);
		io_uring_prep_read(sqe, ld->fd, data + c * IMAGE_CHUNK, e->len, e->off);
		io_uring_sqe_set_data(sqe, sl);
		ld->l.inflight++;
		rc = io_uring_submit(&ld->l.ring) < 0 ? -EIO : 0;
		progress_tick(&pr, (c + 1) * IMAGE_CHUNK, ld->l.moved);
	}
	while (ld->l.inflight > 0) {
		int r = loop_reap(&ld->l, chunk_loaded, ld, ld->lens);

		rc = rc ? rc : r;
	}
	if (rc != 0) {
		char why[200];

		snprintf(why, sizeof(why), "read: %s", strerror(-rc));
		return load_refuse(ld, err, errlen, why);
	}
	if (ld->bad_chunk != UINT64_MAX) {
		char why[200];

		snprintf(why, sizeof(why),
			 "chunk %" PRIu64 " (device bytes %" PRIu64 "-%" PRIu64
			 ") checksum mismatch (corrupted)",
			 ld->bad_chunk, ld->bad_chunk * IMAGE_CHUNK,
			 ld->bad_chunk * IMAGE_CHUNK + ld->index[ld->bad_chunk].len - 1);
		return load_refuse(ld, err, errlen, why);
	}
	return 0;
}

static int image_read(const char *path, const struct image_dev *d, bool probe, char *err,
		      size_t errlen)
{
	struct loader ld = {.d = d, .path = path, .fd = -1, .bad_chunk = UINT64_MAX};
	uint64_t t0 = now_ns();
	struct stat st;
	int rc;

	ld.fd = open_io(path, O_RDONLY, d->o->mcfg.capacity_bytes % ALIGN == 0, &ld.direct);
	if (ld.fd < 0 || fstat(ld.fd, &st) != 0) {
		rc = -errno;
		snprintf(err, errlen, "--dev path=%s: image=%s: %s", d->o->path, path,
			 strerror(errno));
		if (ld.fd >= 0)
			close(ld.fd);
		return rc;
	}
	ld.size = (uint64_t)st.st_size;
	ld.hdr = alloc_aligned(ALIGN);
	rc = ld.hdr == NULL || loop_init(&ld.l) != 0 ? -ENOMEM : 0;
	if (rc != 0)
		snprintf(err, errlen, "out of memory");
	if (rc == 0)
		rc = load_hdr(&ld, err, errlen);
	if (rc == 0)
		rc = load_index_state(&ld, err, errlen);
	if (rc == 0 && !probe)
		rc = load_chunks(&ld, err, errlen);
	if (rc == 0 && !probe) {
		double sec = (double)(now_ns() - t0) / 1e9;

		femud_log_notice("image loaded from %s: %" PRIu64 " of %" PRIu64
				 " chunks stored, %.2f s, "
				 "%.0f MB/s%s",
				 path, ld.hdr->stored_chunks, ld.hdr->nchunks, sec,
				 (double)ld.l.moved / sec / 1e6, ld.direct ? ", O_DIRECT" : "");
	}
	if (ld.l.ring.ring_fd > 0)
		io_uring_queue_exit(&ld.l.ring);
	close(ld.fd);
	free(ld.hdr);
	free(ld.index);
	return rc;
}

int image_probe(const char *path, const struct image_dev *d, char *err, size_t errlen)
{
	return image_read(path, d, true, err, errlen);
}

int image_load(const char *path, const struct image_dev *d, char *err, size_t errlen)
{
	return image_read(path, d, false, err, errlen);
}
