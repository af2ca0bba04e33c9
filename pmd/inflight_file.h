/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inflight_file.h - inflight regions femud makes as named files, so that a
 * femud started after a crash can give a packed ring's position to a
 * frontend that never knew it.
 *
 * A frontend that lost its backend learns a split ring's position back from
 * guest memory (the used index), but a packed ring's position lives only in
 * the backend and in the inflight region the frontend keeps.  When femud dies
 * during a live migration before the switch-over, the source QEMU stops its
 * queue without an answer to GET_VRING_BASE and migrates the position it last
 * set (stale); the destination brings a new, empty inflight region, and the
 * source's region (the only copy of the position and of the requests in
 * flight) goes with the source.  So femud answers GET_INFLIGHT_FD itself with
 * a file of its own in a directory that outlives it (/dev/shm), named after
 * the device's socket, with a trailer after the region: per queue, whether
 * the frontend knows the ring's position (it does once GET_VRING_BASE
 * answered), the base the frontend last set and the ring's guest address.
 * A femud serving the socket anew finds the files an earlier one left
 * ("orphans"); a queue that starts with a new region takes an orphan's queue
 * area over when everything says it is the same ring of the same guest:
 * packed, same size, the frontend's base equal to the one the orphan's
 * frontend last set, same ring address, another frontend process (where
 * both are known: the same process lost its region by resetting the device).
 *
 * Control path only (rte_vhost's thread, under pmd_blk's lock); every access
 * is pread/pwrite on the file (a frontend that shrinks it cannot fault
 * femud).  Owns: files named PMD_IFF_PREFIX* in the directory it is given.
 */
#ifndef PMD_INFLIGHT_FILE_H
#define PMD_INFLIGHT_FILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "pmd/pmd.h"

/* Where the files go: a tmpfs that outlives femud (memory like a memfd). */
#define PMD_IFF_DIR "/dev/shm"
#define PMD_IFF_PREFIX "femud-inflight-"
/* Orphans kept per device (one per connection an earlier femud had). */
#define PMD_IFF_MAX_ORPHANS 8

/* One named region file and femud's copy of its trailer. */
struct pmd_iff;

/* The orphans of one device (files an earlier femud left). */
struct pmd_iff_orphans {
	struct pmd_iff *f[PMD_IFF_MAX_ORPHANS];
	unsigned n;
};

/*
 * Make the region for a GET_INFLIGHT_FD of num_queues queues of queue_size
 * entries (packed or split layout, initialised as rte_vhost does) in dir,
 * for the device at sock_path, frontend process pid (0: unknown).  0 and
 * *out, *fd (femud's descriptor, to be sent; owned by *out) and
 * *mmap_size; else -errno.
 */
int pmd_iff_make(const char *dir, const char *sock_path, pid_t frontend, bool packed,
		 uint16_t num_queues, uint16_t queue_size, struct pmd_iff **out, int *fd,
		 uint64_t *mmap_size);

/*
 * One packed queue's area (queue_size entries, its whole
 * pmd_inflight_packed_queue_bytes) as rte_vhost makes a new one.
 */
struct rte_vhost_inflight_info_packed;
void pmd_iff_packed_area_init(struct rte_vhost_inflight_info_packed *in, uint16_t queue_size);

/* Is fd the file of f (same device and inode; NULL f: no)? */
bool pmd_iff_is(const struct pmd_iff *f, int fd);

/* The frontend process now using f's region (a frontend brought it back). */
void pmd_iff_set_frontend(struct pmd_iff *f, pid_t frontend);

/*
 * Queue qid started on f's region: the frontend does not know its position
 * from here on; set_base is the base it last set, ring_gpa the ring's guest
 * address (SET_VRING_ADDR's log address).  Packed regions only: a split
 * ring's frontend finds the position in guest memory (the used index).
 */
void pmd_iff_queue_started(struct pmd_iff *f, uint16_t qid, uint16_t set_base, uint64_t ring_gpa);

/* GET_VRING_BASE answered for qid: the frontend knows the position. */
void pmd_iff_queue_returned(struct pmd_iff *f, uint16_t qid);

/* Has f (NULL: no) a queue whose position its frontend does not know? */
bool pmd_iff_running(const struct pmd_iff *f);

/*
 * Close f; unlink its name too when drop (its connection ended with femud
 * alive, or femud closes and no queue's position is unknown).
 */
void pmd_iff_close(struct pmd_iff *f, bool drop);

/* The file's name (for logs). */
const char *pmd_iff_name(const struct pmd_iff *f);

/*
 * Open the files of sock_path's device in dir that another femud process
 * left with a queue whose position its frontend did not know; the newest
 * PMD_IFF_MAX_ORPHANS are kept, the rest (and those with no such queue)
 * unlinked, as are other devices' files whose socket directory is gone;
 * files whose trailer is not femud's are left alone.  Returns how many
 * were kept.
 */
unsigned pmd_iff_orphans_scan(const char *dir, const char *sock_path, struct pmd_iff_orphans *o);

/*
 * The frontend brought back (SET_INFLIGHT_FD) the file fd: when it is one of
 * o's, take it out of o and return it (it is that connection's file now).
 */
struct pmd_iff *pmd_iff_orphan_reclaim(struct pmd_iff_orphans *o, int fd);

/*
 * f's frontend left without learning a queue's position (killed, or a
 * migration's source quit while stopped): f joins o, as if an earlier femud
 * had left it; the oldest orphan goes (unlinked) when o is full.
 */
void pmd_iff_orphan_keep(struct pmd_iff_orphans *o, struct pmd_iff *f);

/*
 * Is queue qid of f (an orphan, or another connection's file) the ring that
 * queue qid of frontend starts on `to` (another file) with base set_base at
 * ring_gpa: both packed with one queue size, f's queue started and not
 * returned, by another frontend (or one unknown), at that base and address.
 */
bool pmd_iff_same_ring(const struct pmd_iff *f, const struct pmd_iff *to, uint16_t qid,
		       pid_t frontend, uint16_t set_base, uint64_t ring_gpa);

/*
 * Queue qid of a connection of frontend pid starts on the new region `to`
 * (packed, queue_size entries) with base set_base on the ring at ring_gpa:
 * when an orphan's queue qid is that ring, copy its queue area (position,
 * requests in flight) into to's and return 1 (the orphan's queue is
 * consumed; an orphan with none left is unlinked); 0 when none matches;
 * -errno when the copy failed.  *from names the orphan.
 */
int pmd_iff_adopt(struct pmd_iff_orphans *o, struct pmd_iff *to, uint16_t qid, pid_t frontend,
		  uint16_t set_base, uint64_t ring_gpa, char *from, size_t fromlen);

/*
 * The same for one file f (an orphan, or the file of another connection of
 * the device whose queue qid is not started there: a frontend that brought
 * its file back without starting the queue, a live migration's source that
 * reconnected just before the switch-over): 1 when f's queue qid was that
 * ring and its area is now to's (f's queue counts as returned), 0 when it
 * is not that ring, -errno when the copy failed.
 */
int pmd_iff_take(struct pmd_iff *f, struct pmd_iff *to, uint16_t qid, pid_t frontend,
		 uint16_t set_base, uint64_t ring_gpa);

/*
 * Read queue qid's area of f into area / write area as queue qid's area of
 * to (bytes long: one packed queue area of the file's queue size; pread and
 * pwrite, so a file the frontend shrank cannot fault femud).  0, -EINVAL
 * (not such an area), or -errno.
 */
int pmd_iff_get_area(const struct pmd_iff *f, uint16_t qid, void *area, uint64_t bytes);
int pmd_iff_put_area(struct pmd_iff *to, uint16_t qid, const void *area, uint64_t bytes);

/* Close every orphan (their files stay for a later femud). */
void pmd_iff_orphans_close(struct pmd_iff_orphans *o);

#endif /* PMD_INFLIGHT_FILE_H */
