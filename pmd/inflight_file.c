/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inflight_file.c - inflight regions femud makes as named files (see
 * inflight_file.h).
 *
 * A file: the region as rte_vhost lays it out (num_queues areas of
 * pmd_inflight_[packed_]queue_bytes each, from offset 0), then at the next
 * page femud's trailer.  Name: PMD_IFF_PREFIX, a hash of the socket path,
 * the making femud's pid and a counter.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_vhost.h>

#include "pmd/inflight_file.h"
#include "pmd/vq_guard.h"

#define IFF_MAGIC 0x4c464944554d4546ull /* "FEMUDIFL" */
#define IFF_VERSION 1
#define IFF_PAGE 4096u

struct iff_queue {
	uint8_t running; /* the frontend does not know the ring's position */
	uint8_t pad;
	uint16_t set_base; /* the frontend's last SET_VRING_BASE */
	uint32_t pad2;
	uint64_t ring_gpa; /* SET_VRING_ADDR's log address (used ring / device area) */
};

struct iff_trailer {
	uint64_t magic;
	uint32_t version;
	int32_t frontend; /* pid, 0: unknown */
	uint64_t mmap_size;
	uint16_t num_queues;
	uint16_t queue_size;
	uint8_t packed;
	uint8_t pad[3];
	struct iff_queue q[PMD_MAX_QUEUES];
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

struct pmd_iff {
	int fd;
	dev_t dev;
	ino_t ino;
	uint64_t off; /* the trailer's */
	struct timespec mtime;
	struct iff_trailer t;
	char name[PATH_MAX];
};

static uint64_t iff_off(uint64_t mmap_size)
{
	return (mmap_size + IFF_PAGE - 1) / IFF_PAGE * IFF_PAGE;
}

static uint64_t iff_size(uint64_t mmap_size)
{
	return iff_off(mmap_size) + iff_off(sizeof(struct iff_trailer));
}

static uint64_t iff_qbytes(bool packed, uint16_t queue_size)
{
	return packed ? pmd_inflight_packed_queue_bytes(queue_size)
		      : pmd_inflight_queue_bytes(queue_size);
}

/* FNV-1a: the socket path in a file name of bounded length. */
static uint64_t iff_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

static int iff_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(fd, buf, len, (off_t)off);

	return n == (ssize_t)len ? 0 : (n < 0 ? -errno : -EIO);
}

static int iff_trailer_write(struct pmd_iff *f, size_t at, size_t len)
{
	return iff_pwrite(f->fd, (const uint8_t *)&f->t + at, len, f->off + at);
}

static void iff_queue_write(struct pmd_iff *f, uint16_t qid)
{
	/* a failed write leaves the queue as it was: no adoption, never a wrong one */
	(void)iff_trailer_write(f, offsetof(struct iff_trailer, q) + qid * sizeof(f->t.q[0]),
				sizeof(f->t.q[0]));
}

/* As rte_vhost lays a new packed area out: wrap counters 1, free list 0..n-1. */
void pmd_iff_packed_area_init(struct rte_vhost_inflight_info_packed *in, uint16_t queue_size)
{
	memset(in, 0, pmd_inflight_packed_queue_bytes(queue_size));
	in->used_wrap_counter = 1;
	in->old_used_wrap_counter = 1;
	for (uint16_t j = 0; j < queue_size; j++)
		in->desc[j].next = (uint16_t)(j + 1);
}

/* Lay out each packed queue's area of the file fd (pmd_iff_packed_area_init). */
static int iff_init_packed(int fd, uint16_t num_queues, uint16_t queue_size)
{
	uint64_t qbytes = pmd_inflight_packed_queue_bytes(queue_size);
	struct rte_vhost_inflight_info_packed *in = malloc(qbytes);
	int rc = 0;

	if (in == NULL)
		return -ENOMEM;
	pmd_iff_packed_area_init(in, queue_size);
	for (uint16_t k = 0; k < num_queues && rc == 0; k++)
		rc = iff_pwrite(fd, in, qbytes, k * qbytes);
	free(in);
	return rc;
}

static int iff_stat(struct pmd_iff *f)
{
	struct stat st;

	if (fstat(f->fd, &st) != 0)
		return -errno;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->mtime = st.st_mtim;
	return 0;
}

int pmd_iff_make(const char *dir, const char *sock_path, pid_t frontend, bool packed,
		 uint16_t num_queues, uint16_t queue_size, struct pmd_iff **out, int *fd,
		 uint64_t *mmap_size)
{
	static unsigned serial;
	struct pmd_iff *f;
	uint64_t size = num_queues * iff_qbytes(packed, queue_size);
	int rc;

	if (num_queues == 0 || num_queues > PMD_MAX_QUEUES || queue_size == 0)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	snprintf(f->name, sizeof(f->name), "%s/" PMD_IFF_PREFIX "%016" PRIx64 "-%d-%u", dir,
		 iff_hash(sock_path), (int)getpid(), serial++);
	f->fd = open(f->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (f->fd < 0) {
		rc = -errno;
		free(f);
		return rc;
	}
	f->off = iff_off(size);
	f->t = (struct iff_trailer){.magic = IFF_MAGIC,
				    .version = IFF_VERSION,
				    .frontend = (int32_t)frontend,
				    .mmap_size = size,
				    .num_queues = num_queues,
				    .queue_size = queue_size,
				    .packed = packed};
	snprintf(f->t.sock_path, sizeof(f->t.sock_path), "%s", sock_path);
	rc = ftruncate(f->fd, (off_t)iff_size(size)) != 0 ? -errno : 0;
	if (rc == 0 && packed)
		rc = iff_init_packed(f->fd, num_queues, queue_size);
	if (rc == 0)
		rc = iff_trailer_write(f, 0, sizeof(f->t));
	if (rc == 0)
		rc = iff_stat(f);
	if (rc != 0) {
		pmd_iff_close(f, true);
		return rc;
	}
	*out = f;
	*fd = f->fd;
	*mmap_size = size;
	return 0;
}

bool pmd_iff_is(const struct pmd_iff *f, int fd)
{
	struct stat st;

	return f != NULL && fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == f->dev &&
	       st.st_ino == f->ino;
}

void pmd_iff_set_frontend(struct pmd_iff *f, pid_t frontend)
{
	f->t.frontend = (int32_t)frontend;
	(void)iff_trailer_write(f, offsetof(struct iff_trailer, frontend), sizeof(f->t.frontend));
}

void pmd_iff_queue_started(struct pmd_iff *f, uint16_t qid, uint16_t set_base, uint64_t ring_gpa)
{
	if (qid >= f->t.num_queues || !f->t.packed)
		return; /* a split ring's position is in guest memory: nobody needs the file */
	f->t.q[qid] = (struct iff_queue){.running = 1, .set_base = set_base, .ring_gpa = ring_gpa};
	iff_queue_write(f, qid);
}

void pmd_iff_queue_returned(struct pmd_iff *f, uint16_t qid)
{
	if (qid >= f->t.num_queues || !f->t.q[qid].running)
		return;
	f->t.q[qid].running = 0;
	iff_queue_write(f, qid);
}

bool pmd_iff_running(const struct pmd_iff *f)
{
	if (f == NULL)
		return false;
	for (uint16_t k = 0; k < f->t.num_queues; k++)
		if (f->t.q[k].running)
			return true;
	return false;
}

void pmd_iff_close(struct pmd_iff *f, bool drop)
{
	if (f == NULL)
		return;
	if (drop)
		unlink(f->name);
	close(f->fd);
	free(f);
}

const char *pmd_iff_name(const struct pmd_iff *f)
{
	return f->name;
}

/* Read and check the trailer of an open candidate file; 0 when it is femud's. */
static int iff_load(struct pmd_iff *f)
{
	struct stat st;
	uint64_t trailer = iff_off(sizeof(struct iff_trailer));
	const struct iff_trailer *t = &f->t;

	if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < trailer)
		return -EINVAL;
	f->off = (uint64_t)st.st_size - trailer;
	if (pread(f->fd, &f->t, sizeof(f->t), (off_t)f->off) != (ssize_t)sizeof(f->t))
		return -EIO;
	if (t->magic != IFF_MAGIC || t->version != IFF_VERSION ||
	    memchr(t->sock_path, '\0', sizeof(t->sock_path)) == NULL || t->num_queues == 0 ||
	    t->num_queues > PMD_MAX_QUEUES || t->queue_size == 0 ||
	    (t->queue_size & (t->queue_size - 1)) != 0 ||
	    t->mmap_size != t->num_queues * iff_qbytes(t->packed, t->queue_size) ||
	    f->off != iff_off(t->mmap_size))
		return -EINVAL;
	return iff_stat(f);
}

static int iff_newer_first(const void *a, const void *b)
{
	const struct pmd_iff *x = *(struct pmd_iff *const *)a, *y = *(struct pmd_iff *const *)b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec > y->mtime.tv_sec ? -1 : 1;
	return x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : x->mtime.tv_nsec < y->mtime.tv_nsec;
}

/* Open name in dir as a file another femud process made; NULL when it is not one. */
static struct pmd_iff *iff_candidate(const char *dir, const char *name)
{
	size_t plen = strlen(PMD_IFF_PREFIX) + 17; /* the prefix, the hash and '-' */
	struct pmd_iff *f;

	if (strncmp(name, PMD_IFF_PREFIX, strlen(PMD_IFF_PREFIX)) != 0 || strlen(name) <= plen ||
	    atoi(name + plen) == (int)getpid())
		return NULL; /* not femud's, or this process's own */
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	snprintf(f->name, sizeof(f->name), "%s/%s", dir, name);
	f->fd = open(f->name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (f->fd < 0 || iff_load(f) != 0) {
		if (f->fd >= 0)
			close(f->fd);
		free(f);
		return NULL;
	}
	return f;
}

/*
 * Can a frontend still come back to the socket of f (another device's)?
 * Not once the socket's directory is gone (a test's, a removed runtime
 * directory): nobody can connect there again.
 */
static bool iff_socket_dir_exists(const struct pmd_iff *f)
{
	char d[sizeof(f->t.sock_path)];
	char *slash;
	struct stat st;

	snprintf(d, sizeof(d), "%s", f->t.sock_path);
	slash = strrchr(d, '/');
	if (slash == NULL)
		return true; /* relative to some working directory: cannot tell */
	*slash = '\0';
	return stat(slash == d ? "/" : d, &st) == 0 || errno != ENOENT;
}

unsigned pmd_iff_orphans_scan(const char *dir, const char *sock_path, struct pmd_iff_orphans *o)
{
	struct pmd_iff *found[64];
	struct dirent *e;
	unsigned n = 0;
	DIR *d;

	o->n = 0;
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		struct pmd_iff *f = iff_candidate(dir, e->d_name);

		if (f == NULL)
			continue;
		if (strcmp(f->t.sock_path, sock_path) != 0)
			pmd_iff_close(f, !iff_socket_dir_exists(f)); /* another device's */
		else if (!pmd_iff_running(f) || n == RTE_DIM(found))
			pmd_iff_close(f, true); /* no frontend needs it */
		else
			found[n++] = f;
	}
	closedir(d);
	qsort(found, n, sizeof(found[0]), iff_newer_first);
	for (unsigned k = 0; k < n; k++) {
		if (k < PMD_IFF_MAX_ORPHANS)
			o->f[o->n++] = found[k];
		else
			pmd_iff_close(found[k], true);
	}
	return o->n;
}

static void iff_orphan_remove(struct pmd_iff_orphans *o, unsigned k)
{
	o->f[k] = o->f[--o->n];
	o->f[o->n] = NULL;
}

struct pmd_iff *pmd_iff_orphan_reclaim(struct pmd_iff_orphans *o, int fd)
{
	for (unsigned k = 0; k < o->n; k++) {
		struct pmd_iff *f = o->f[k];

		if (pmd_iff_is(f, fd)) {
			iff_orphan_remove(o, k);
			return f;
		}
	}
	return NULL;
}

void pmd_iff_orphan_keep(struct pmd_iff_orphans *o, struct pmd_iff *f)
{
	unsigned old = 0;

	iff_stat(f); /* its last trailer write: how recent it is */
	if (o->n == PMD_IFF_MAX_ORPHANS) {
		for (unsigned k = 1; k < o->n; k++)
			if (iff_newer_first(&o->f[old], &o->f[k]) < 0)
				old = k;
		pmd_iff_close(o->f[old], true);
		iff_orphan_remove(o, old);
	}
	o->f[o->n++] = f;
}

bool pmd_iff_same_ring(const struct pmd_iff *f, const struct pmd_iff *to, uint16_t qid,
		       pid_t frontend, uint16_t set_base, uint64_t ring_gpa)
{
	const struct iff_queue *q;

	if (f == NULL || to == NULL || f == to || qid >= PMD_MAX_QUEUES)
		return false;
	q = &f->t.q[qid];
	return f->t.packed && to->t.packed && f->t.queue_size == to->t.queue_size &&
	       qid < f->t.num_queues && qid < to->t.num_queues && q->running &&
	       (f->t.frontend == 0 || frontend == 0 || f->t.frontend != (int32_t)frontend) &&
	       q->set_base == set_base && q->ring_gpa == ring_gpa && ring_gpa != 0;
}

/* Is [qid's area] of f a packed queue area of bytes?  Its size, or 0. */
static uint64_t iff_area_bytes(const struct pmd_iff *f, uint16_t qid, uint64_t bytes)
{
	uint64_t qbytes;

	if (f == NULL || !f->t.packed || qid >= f->t.num_queues)
		return 0;
	qbytes = pmd_inflight_packed_queue_bytes(f->t.queue_size);
	return bytes == qbytes ? qbytes : 0;
}

int pmd_iff_get_area(const struct pmd_iff *f, uint16_t qid, void *area, uint64_t bytes)
{
	uint64_t qbytes = iff_area_bytes(f, qid, bytes);

	if (qbytes == 0)
		return -EINVAL;
	return pread(f->fd, area, qbytes, (off_t)(qid * qbytes)) == (ssize_t)qbytes ? 0 : -EIO;
}

int pmd_iff_put_area(struct pmd_iff *to, uint16_t qid, const void *area, uint64_t bytes)
{
	uint64_t qbytes = iff_area_bytes(to, qid, bytes);

	if (qbytes == 0)
		return -EINVAL;
	return iff_pwrite(to->fd, area, qbytes, qid * qbytes);
}

int pmd_iff_take(struct pmd_iff *f, struct pmd_iff *to, uint16_t qid, pid_t frontend,
		 uint16_t set_base, uint64_t ring_gpa)
{
	uint64_t qbytes;
	void *area;
	int rc;

	if (!pmd_iff_same_ring(f, to, qid, frontend, set_base, ring_gpa))
		return 0;
	qbytes = pmd_inflight_packed_queue_bytes(to->t.queue_size);
	area = malloc(qbytes);
	if (area == NULL)
		return -ENOMEM;
	rc = pmd_iff_get_area(f, qid, area, qbytes);
	if (rc == 0)
		rc = pmd_iff_put_area(to, qid, area, qbytes);
	free(area);
	if (rc != 0)
		return rc;
	pmd_iff_queue_returned(f, qid);
	return 1;
}

int pmd_iff_adopt(struct pmd_iff_orphans *o, struct pmd_iff *to, uint16_t qid, pid_t frontend,
		  uint16_t set_base, uint64_t ring_gpa, char *from, size_t fromlen)
{
	for (unsigned k = 0; k < o->n; k++) {
		struct pmd_iff *f = o->f[k];
		int rc = pmd_iff_take(f, to, qid, frontend, set_base, ring_gpa);

		if (rc == 0)
			continue;
		snprintf(from, fromlen, "%s", f->name);
		if (rc == 1 && !pmd_iff_running(f)) {
			iff_orphan_remove(o, k);
			pmd_iff_close(f, true);
		}
		return rc;
	}
	return 0;
}

void pmd_iff_orphans_close(struct pmd_iff_orphans *o)
{
	for (unsigned k = 0; k < o->n; k++)
		pmd_iff_close(o->f[k], false);
	o->n = 0;
}
