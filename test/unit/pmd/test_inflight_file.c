/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_inflight_file.c - pmd/inflight_file.c: a region femud makes is laid
 * out as rte_vhost lays out its own (packed: wrap counters 1, free list);
 * a file another femud process left with a queue whose frontend never
 * learned its position is found again, and a new region of the same ring
 * (packed, same size, same frontend base, same ring address, another
 * frontend process where both are known) gets its queue area byte for byte, once; anything that
 * differs gets nothing; files no frontend needs are removed, at most
 * PMD_IFF_MAX_ORPHANS kept, files of this process and files that are not
 * femud's left alone; a frontend bringing an orphan back reclaims it.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_vhost.h>

#include "pmd/inflight_file.h"
#include "pmd/vq_guard.h"

#define QSZ 8
#define BASE 0x8003 /* position 3, wrap counter 1 */
#define GPA 0x7f000ull
#define OLD_PID 4242 /* the source QEMU */
#define NEW_PID 4343 /* the destination QEMU */

static char dir[64];
static char SOCK[96]; /* the device's socket, in dir */

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_iff.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(SOCK, sizeof(SOCK), "%s/blk0.sock", dir);
}

static void teardown(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX];

	while (d != NULL && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
}

TestSuite(inflight_file, .init = setup, .fini = teardown);

static unsigned files_in_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static struct pmd_iff *make(pid_t frontend, bool packed, uint16_t qsize, int *fd)
{
	struct pmd_iff *f = NULL;
	uint64_t size = 0;

	cr_assert_eq(pmd_iff_make(dir, SOCK, frontend, packed, 2, qsize, &f, fd, &size), 0);
	cr_assert_eq(size, 2 * (packed ? pmd_inflight_packed_queue_bytes(qsize)
				       : pmd_inflight_queue_bytes(qsize)));
	return f;
}

/* Queue qid's packed area of the file behind fd, mapped (munmap_area when done). */
static struct rte_vhost_inflight_info_packed *area(int fd, uint16_t qid, uint16_t qsize)
{
	uint64_t q = pmd_inflight_packed_queue_bytes(qsize);
	uint8_t *m = mmap(NULL, 2 * q, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	cr_assert_neq(m, MAP_FAILED);
	return (struct rte_vhost_inflight_info_packed *)(m + qid * q);
}

static void munmap_area(struct rte_vhost_inflight_info_packed *a, uint16_t qid, uint16_t qsize)
{
	uint64_t q = pmd_inflight_packed_queue_bytes(qsize);

	munmap((uint8_t *)a - qid * q, 2 * q);
}

/* Rename the file f was (this process's) as if another process had made it; the new name in to. */
static void made_by_another_process(const char *from, char *to, size_t len)
{
	/* PREFIX HASH-PID-N -> PREFIX HASH-1-N */
	const char *pid = strrchr(from, '/') + 1 + strlen(PMD_IFF_PREFIX) + 17;

	snprintf(to, len, "%.*s1%s", (int)(pid - from), from, strchr(pid, '-'));
	cr_assert_eq(rename(from, to), 0, "%s -> %s", from, to);
}

/*
 * What an earlier femud leaves when it dies serving queue 0 of the
 * frontend's ring (base set_base set by the frontend, ring at GPA):
 * position 14, wrap 0, one request in flight; its name carries another
 * process's pid.  Its name in to.
 */
static void earlier_femud_left_as(pid_t frontend, uint16_t qsize, uint16_t set_base, char *to,
				  size_t len)
{
	int fd;
	struct pmd_iff *f = make(frontend, true, qsize, &fd);
	struct rte_vhost_inflight_info_packed *a = area(fd, 0, qsize);
	char from[PATH_MAX];

	pmd_iff_queue_started(f, 0, set_base, GPA);
	a->version = 1;
	a->used_idx = a->old_used_idx = 14;
	a->used_wrap_counter = a->old_used_wrap_counter = 0;
	a->desc[5].inflight = 1;
	a->desc[5].addr = 0x123000;
	a->desc[5].len = 4096;
	munmap_area(a, 0, qsize);
	snprintf(from, sizeof(from), "%s", pmd_iff_name(f));
	pmd_iff_close(f, false);
	made_by_another_process(from, to, len);
}

static void earlier_femud_left(pid_t frontend, uint16_t qsize, uint16_t set_base)
{
	char to[PATH_MAX];

	earlier_femud_left_as(frontend, qsize, set_base, to, sizeof(to));
}

Test(inflight_file, a_packed_region_is_laid_out_as_rte_vhost_lays_it_out)
{
	int fd;
	struct pmd_iff *f = make(NEW_PID, true, QSZ, &fd);
	struct stat st;

	cr_assert_eq(fstat(fd, &st), 0);
	cr_assert_geq((uint64_t)st.st_size, 2 * pmd_inflight_packed_queue_bytes(QSZ));
	cr_assert_eq(st.st_mode & 0777, 0600);
	for (uint16_t q = 0; q < 2; q++) {
		struct rte_vhost_inflight_info_packed *a = area(fd, q, QSZ);

		cr_assert_eq(a->version, 0, "a new region: rte_vhost resubmits nothing");
		cr_assert_eq(a->used_idx, 0);
		cr_assert_eq(a->used_wrap_counter, 1);
		cr_assert_eq(a->old_used_wrap_counter, 1);
		for (uint16_t j = 0; j < QSZ; j++)
			cr_assert_eq(a->desc[j].next, j + 1);
		munmap_area(a, q, QSZ);
	}
	cr_assert(pmd_iff_is(f, fd));
	cr_assert_not(pmd_iff_is(NULL, fd));
	pmd_iff_close(f, true);
	cr_assert_eq(files_in_dir(), 0, "dropped with its connection");
}

Test(inflight_file, the_same_ring_takes_the_orphans_queue_area_once)
{
	struct pmd_iff_orphans o;
	char from[PATH_MAX] = "";
	int fd;
	struct pmd_iff *to;
	struct rte_vhost_inflight_info_packed *a;

	earlier_femud_left(OLD_PID, QSZ, BASE);
	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), 1);
	to = make(NEW_PID, true, QSZ, &fd);
	cr_assert_eq(pmd_iff_adopt(&o, to, 0, NEW_PID, BASE, GPA, from, sizeof(from)), 1);
	cr_assert_not_null(strstr(from, PMD_IFF_PREFIX), "%s", from);
	a = area(fd, 0, QSZ);
	cr_assert_eq(a->version, 1, "rte_vhost resubmits what the orphan had in flight");
	cr_assert_eq(a->old_used_idx, 14);
	cr_assert_eq(a->old_used_wrap_counter, 0);
	cr_assert_eq(a->desc[5].inflight, 1);
	cr_assert_eq(a->desc[5].addr, 0x123000);
	cr_assert_eq(a->desc[5].len, 4096);
	munmap_area(a, 0, QSZ);
	a = area(fd, 1, QSZ);
	cr_assert_eq(a->version, 0, "queue 1 was not the orphan's to give");
	munmap_area(a, 1, QSZ);
	/* consumed: the orphan had one queue running, its file is gone */
	cr_assert_eq(o.n, 0);
	cr_assert_eq(files_in_dir(), 1);
	cr_assert_eq(pmd_iff_adopt(&o, to, 0, NEW_PID, BASE, GPA, from, sizeof(from)), 0);
	pmd_iff_close(to, true);
}

Test(inflight_file, an_orphan_of_an_unknown_frontend_is_taken_by_any)
{
	struct pmd_iff_orphans o;
	char from[PATH_MAX];
	int fd;
	struct pmd_iff *to;

	earlier_femud_left(0, QSZ, BASE);
	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), 1);
	to = make(OLD_PID, true, QSZ, &fd);
	cr_assert_eq(pmd_iff_adopt(&o, to, 0, OLD_PID, BASE, GPA, from, sizeof(from)), 1);
	pmd_iff_close(to, true);
}

/* A new region whose queue 0 differs from the orphan's in one way: nothing taken. */
static void refused(pid_t frontend, bool packed, uint16_t qsize, uint16_t qid, uint16_t base,
		    uint64_t gpa, const char *what)
{
	struct pmd_iff_orphans o;
	char from[PATH_MAX];
	int fd;
	struct pmd_iff *to;

	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), 1, "%s", what);
	to = make(NEW_PID, packed, qsize, &fd);
	cr_assert_eq(pmd_iff_adopt(&o, to, qid, frontend, base, gpa, from, sizeof(from)), 0, "%s",
		     what);
	cr_assert_eq(o.n, 1, "%s: the orphan stays", what);
	if (packed) {
		struct rte_vhost_inflight_info_packed *a = area(fd, qid, qsize);

		cr_assert_eq(a->version, 0, "%s: the new region is untouched", what);
		munmap_area(a, qid, qsize);
	}
	pmd_iff_close(to, true);
	pmd_iff_orphans_close(&o);
}

Test(inflight_file, a_ring_that_differs_in_anything_takes_nothing)
{
	earlier_femud_left(OLD_PID, QSZ, BASE);
	refused(NEW_PID, true, QSZ, 0, BASE + 1, GPA, "another frontend base");
	refused(NEW_PID, true, QSZ, 0, BASE, GPA + 0x1000, "another ring address");
	refused(NEW_PID, true, QSZ, 0, BASE, 0, "no ring address");
	refused(OLD_PID, true, QSZ, 0, BASE, GPA, "the same frontend (it reset its device)");
	refused(NEW_PID, true, 2 * QSZ, 0, BASE, GPA, "another ring size");
	refused(NEW_PID, false, QSZ, 0, BASE, GPA, "a split ring");
	refused(NEW_PID, true, QSZ, 1, BASE, GPA, "a queue the orphan did not run");
}

Test(inflight_file, a_queue_whose_frontend_learned_its_position_is_not_an_orphan)
{
	struct pmd_iff_orphans o;
	int fd;
	struct pmd_iff *f = make(OLD_PID, true, QSZ, &fd);
	char name[PATH_MAX], other[PATH_MAX], junk[PATH_MAX];

	pmd_iff_queue_started(f, 0, BASE, GPA);
	pmd_iff_queue_returned(f, 0); /* GET_VRING_BASE answered */
	cr_assert_not(pmd_iff_running(f));
	snprintf(name, sizeof(name), "%s", pmd_iff_name(f));
	pmd_iff_close(f, false);
	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), 0);
	cr_assert_eq(files_in_dir(), 1, "this process's own files are not looked at");
	made_by_another_process(name, other, sizeof(other));
	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), 0);
	cr_assert_eq(files_in_dir(), 0, "another process's file that no frontend needs: removed");

	earlier_femud_left_as(OLD_PID, QSZ, BASE, other, sizeof(other));
	/* femud's name, not femud's contents */
	snprintf(junk, sizeof(junk), "%.*s999", (int)(strrchr(other, '-') + 1 - other), other);
	fd = open(junk, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "not femud's", 11), 11);
	close(fd);
	snprintf(other, sizeof(other), "%s/other.sock", dir);
	cr_assert_eq(pmd_iff_orphans_scan(dir, other, &o), 0, "another socket's device finds none");
	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), 1);
	cr_assert_eq(files_in_dir(), 2, "the orphan, and the file that is not femud's");
	pmd_iff_orphans_close(&o);
}

Test(inflight_file, another_devices_orphans_go_with_their_socket_directory)
{
	struct pmd_iff_orphans o;
	char sub[128], sock2[160];

	earlier_femud_left(OLD_PID, QSZ, BASE); /* SOCK's */
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	snprintf(sock2, sizeof(sock2), "%s/x.sock", sub);
	cr_assert_eq(pmd_iff_orphans_scan(dir, sock2, &o), 0);
	cr_assert_eq(files_in_dir(), 2, "SOCK's file and sub/");
	cr_assert_eq(rmdir(sub), 0);
	cr_assert_eq(pmd_iff_orphans_scan(dir, sock2, &o), 0);
	cr_assert_eq(files_in_dir(), 1, "SOCK's directory is there: its file stays");
	/* a device whose socket directory is gone */
	snprintf(SOCK, sizeof(SOCK), "%s/gone/blk0.sock", dir);
	earlier_femud_left(OLD_PID, QSZ, BASE);
	cr_assert_eq(files_in_dir(), 2);
	cr_assert_eq(pmd_iff_orphans_scan(dir, sock2, &o), 0);
	cr_assert_eq(files_in_dir(), 1, "the file of a socket nobody can connect to is removed");
}

Test(inflight_file, at_most_the_newest_orphans_are_kept)
{
	struct pmd_iff_orphans o;

	for (unsigned k = 0; k < PMD_IFF_MAX_ORPHANS + 3; k++)
		earlier_femud_left(OLD_PID, QSZ, (uint16_t)(BASE + k));
	cr_assert_eq(files_in_dir(), PMD_IFF_MAX_ORPHANS + 3);
	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), PMD_IFF_MAX_ORPHANS);
	cr_assert_eq(files_in_dir(), PMD_IFF_MAX_ORPHANS);
	pmd_iff_orphans_close(&o);
	cr_assert_eq(files_in_dir(), PMD_IFF_MAX_ORPHANS, "closing keeps them for a later femud");
}

Test(inflight_file, a_frontend_that_brings_an_orphan_back_reclaims_it)
{
	struct pmd_iff_orphans o;
	struct pmd_iff *f;
	char name[PATH_MAX];
	DIR *d;
	struct dirent *e;
	int fd = -1, other;

	earlier_femud_left(OLD_PID, QSZ, BASE);
	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), 1);
	d = opendir(dir);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			snprintf(name, sizeof(name), "%s/%s", dir, e->d_name);
	closedir(d);
	fd = open(name, O_RDWR); /* the descriptor the frontend kept */
	cr_assert_geq(fd, 0);
	other = memfd_create("other", 0);
	cr_assert_null(pmd_iff_orphan_reclaim(&o, other));
	f = pmd_iff_orphan_reclaim(&o, fd);
	cr_assert_not_null(f);
	cr_assert_eq(o.n, 0);
	cr_assert(pmd_iff_running(f), "its queue's position is still unknown to the frontend");
	pmd_iff_close(f, false);
	cr_assert_eq(files_in_dir(), 1, "it keeps its name");
	close(fd);
	close(other);
}

/*
 * A frontend brought an orphan back and did not start its queue (a live
 * migration's source just before the switch-over): another frontend's new
 * region starting the same ring takes the queue area from that live file,
 * once; the file itself is never its own source.
 */
Test(inflight_file, a_reclaimed_file_whose_queue_did_not_start_gives_its_area_once)
{
	struct pmd_iff_orphans o;
	struct pmd_iff *f, *to;
	struct rte_vhost_inflight_info_packed *a;
	char name[PATH_MAX];
	int fd, tofd;

	earlier_femud_left_as(OLD_PID, QSZ, BASE, name, sizeof(name));
	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), 1);
	fd = open(name, O_RDWR);
	cr_assert_geq(fd, 0);
	f = pmd_iff_orphan_reclaim(&o, fd);
	cr_assert_not_null(f);
	pmd_iff_set_frontend(f, OLD_PID);
	cr_assert_eq(pmd_iff_take(f, f, 0, NEW_PID, BASE, GPA), 0, "not its own source");
	to = make(NEW_PID, true, QSZ, &tofd);
	cr_assert_eq(pmd_iff_take(f, to, 0, OLD_PID, BASE, GPA), 0, "its own frontend: no");
	cr_assert_eq(pmd_iff_take(f, to, 0, NEW_PID, BASE + 1, GPA), 0, "another base: no");
	cr_assert_eq(pmd_iff_take(f, to, 0, NEW_PID, BASE, GPA), 1);
	a = area(tofd, 0, QSZ);
	cr_assert_eq(a->version, 1);
	cr_assert_eq(a->old_used_idx, 14);
	cr_assert_eq(a->old_used_wrap_counter, 0);
	cr_assert_eq(a->desc[5].inflight, 1);
	cr_assert_eq(a->desc[5].addr, 0x123000);
	munmap_area(a, 0, QSZ);
	cr_assert_not(pmd_iff_running(f), "given: its frontend's queue is not the ring's any more");
	cr_assert_eq(pmd_iff_take(f, to, 0, NEW_PID, BASE, GPA), 0, "once");
	cr_assert_eq(pmd_iff_take(NULL, to, 0, NEW_PID, BASE, GPA), 0);
	pmd_iff_close(to, true);
	pmd_iff_close(f, true);
	close(fd);
	cr_assert_eq(files_in_dir(), 0);
}

/*
 * Files whose frontends left without learning a position join the orphans;
 * past PMD_IFF_MAX_ORPHANS the oldest goes, unlinked, and the newest stay.
 */
Test(inflight_file, kept_files_are_bounded_the_oldest_going_first)
{
	struct pmd_iff_orphans o = {.n = 0};
	char first[PATH_MAX], last[PATH_MAX]; /* the oldest, the newest */

	for (unsigned k = 0; k <= PMD_IFF_MAX_ORPHANS; k++) {
		int fd;
		struct pmd_iff *f = make(NEW_PID, true, QSZ, &fd);
		/* later files written later, but the second one the longest ago */
		struct timespec t = {.tv_sec = k == 1 ? 1000 : 2000 + k};

		pmd_iff_queue_started(f, 0, BASE, GPA);
		cr_assert_eq(futimens(fd, (struct timespec[2]){t, t}), 0);
		if (k == 1 || k == PMD_IFF_MAX_ORPHANS)
			snprintf(k == 1 ? first : last, PATH_MAX, "%s", pmd_iff_name(f));
		pmd_iff_orphan_keep(&o, f);
	}
	cr_assert_eq(o.n, PMD_IFF_MAX_ORPHANS);
	cr_assert_eq(files_in_dir(), PMD_IFF_MAX_ORPHANS);
	cr_assert_neq(access(first, F_OK), 0, "the oldest went");
	cr_assert_eq(access(last, F_OK), 0, "the newest stays");
	pmd_iff_orphans_close(&o);
	cr_assert_eq(files_in_dir(), PMD_IFF_MAX_ORPHANS, "kept for a later femud");
}

/* A split ring's file never waits for anyone: its frontend reads the used index back. */
Test(inflight_file, a_split_rings_file_is_never_kept)
{
	struct pmd_iff_orphans o;
	int fd;
	struct pmd_iff *f = make(OLD_PID, false, QSZ, &fd);
	char name[PATH_MAX], other[PATH_MAX];

	pmd_iff_queue_started(f, 0, BASE, GPA);
	cr_assert_not(pmd_iff_running(f));
	snprintf(name, sizeof(name), "%s", pmd_iff_name(f));
	pmd_iff_close(f, false); /* femud died */
	made_by_another_process(name, other, sizeof(other));
	cr_assert_eq(pmd_iff_orphans_scan(dir, SOCK, &o), 0);
	cr_assert_eq(files_in_dir(), 0, "removed by the next femud");
}

/*
 * A queue area read from one file and written to another lands as queue
 * qid's area there, byte for byte, the other queue untouched; a size that is
 * not the file's area, a queue past its queues or a split ring's file is
 * refused before anything is read or written.
 */
Test(inflight_file, a_queue_area_moves_between_files_whole_or_not_at_all)
{
	uint64_t q = pmd_inflight_packed_queue_bytes(QSZ);
	int fd_a, fd_b, fd_s;
	struct pmd_iff *a = make(NEW_PID, true, QSZ, &fd_a),
		       *b = make(NEW_PID + 1, true, QSZ, &fd_b);
	struct pmd_iff *split = make(NEW_PID + 2, false, QSZ, &fd_s);
	struct rte_vhost_inflight_info_packed *src = area(fd_a, 1, QSZ), *dst, *other;
	uint8_t *buf = malloc(q);

	cr_assert_not_null(buf);
	src->old_used_idx = 5;
	src->old_used_wrap_counter = 0;
	src->desc[3].inflight = 1;
	src->desc[3].addr = 0x1234;
	cr_assert_eq(pmd_iff_get_area(a, 1, buf, q), 0);
	cr_assert_eq(memcmp(buf, src, q), 0);
	cr_assert_eq(pmd_iff_put_area(b, 1, buf, q), 0);
	dst = area(fd_b, 1, QSZ);
	other = area(fd_b, 0, QSZ);
	cr_assert_eq(memcmp(dst, src, q), 0);
	cr_assert_eq(other->old_used_idx, 0, "queue 0 of the other file untouched");
	cr_assert_eq(other->desc[3].inflight, 0);
	cr_assert_eq(pmd_iff_get_area(a, 1, buf, q - 1), -EINVAL);
	cr_assert_eq(pmd_iff_put_area(b, 2, buf, q), -EINVAL);
	cr_assert_eq(pmd_iff_get_area(NULL, 0, buf, q), -EINVAL);
	cr_assert_eq(pmd_iff_put_area(split, 0, buf, q), -EINVAL);
	munmap_area(src, 1, QSZ);
	munmap_area(dst, 1, QSZ);
	munmap_area(other, 0, QSZ);
	free(buf);
	pmd_iff_close(a, true);
	pmd_iff_close(b, true);
	pmd_iff_close(split, true);
	close(fd_a);
	close(fd_b);
	close(fd_s);
}
