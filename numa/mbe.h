/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mbe.h - memory backend: one region per device, on a chosen NUMA node,
 * backed by hugepages when the system has reserved enough of them, else by
 * normal pages; pre-faulted and locked so that no page fault ever happens on
 * the I/O path.
 *
 * Units: sizes in bytes, times in ns.
 */
#ifndef MBE_H
#define MBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* mbe_alloc() flags */
#define MBE_F_NO_HUGE (1u << 0) /* never try hugepages */
#define MBE_F_NO_LOCK (1u << 1) /* do not mlock (tests) */

struct mbe_region {
	void *addr;
	size_t len;	  /* bytes asked for */
	size_t map_len;	  /* bytes mapped: len rounded up to page_size */
	size_t page_size; /* 1 GiB, 2 MiB or the base page size */
	int node;	  /* node the region is bound to, -1 = none */
	bool hugepages;	  /* backed by explicit hugepages */
	bool locked;	  /* mlock() succeeded */
	size_t thp_bytes; /* of normal pages: bytes the kernel backs with THP (smaps) */
	uint64_t prefault_ns;
	char note[256]; /* why hugepages were not used, or lock warnings ("" if none) */
};

/* True when NUMA node `node` exists on this host (libnuma). */
bool mbe_node_exists(int node);

/* Highest node number on this host (0 on a non-NUMA host). */
int mbe_max_node(void);

/* NUMA node of CPU `cpu`, or -1. */
int mbe_node_of_cpu(unsigned cpu);

/*
 * Free hugepages of `page_size` bytes on `node` (-1: all nodes), from sysfs.
 * Returns 0 when the size is not supported.
 */
uint64_t mbe_free_hugepages(size_t page_size, int node);

/*
 * Allocate `len` bytes bound to `node` (-1: no binding): 1 GiB pages when
 * enough are free on the node, else 2 MiB pages, else normal pages (with
 * out->note saying how to reserve hugepages).  The region is zero-filled,
 * pre-faulted and (unless MBE_F_NO_LOCK) locked.
 * Returns 0, or a negative errno with a message in err.
 */
int mbe_alloc(size_t len, int node, unsigned flags, struct mbe_region *out, char *err,
	      size_t errlen);

void mbe_free(struct mbe_region *r);

/*
 * The file system holding the open file fd: its page size (hugetlbfs: the
 * huge page size, else the base page size), whether it keeps files in
 * memory (tmpfs, hugetlbfs) and its name for messages ("tmpfs", "hugetlbfs",
 * "ext4/xfs/... (disk)").
 */
size_t mbe_file_page_size(int fd, bool *in_memory, const char **fsname);

/*
 * Map the first `len` bytes (a multiple of mbe_file_page_size()) of the open
 * file fd shared, for a persistent medium.  With `fresh` the file is first
 * sized to len and its blocks reserved (fallocate), so that a file system
 * without room fails here with ENOSPC and a message, never later with
 * SIGBUS.  Pages are allocated on `node` (the task's memory policy while
 * they are reserved and faulted in, mbind for the mapping; pages an existing
 * file already has elsewhere are moved when the kernel can), pre-faulted
 * (written on tmpfs / hugetlbfs; only read on other file systems, where
 * writing would make the whole file dirty) and locked unless MBE_F_NO_LOCK.
 * Returns 0, or a negative errno with a message in err.
 */
int mbe_map_file(int fd, size_t len, int node, unsigned flags, bool fresh, struct mbe_region *out,
		 char *err, size_t errlen);

/*
 * Ask the kernel where `samples` pages spread over the region really are
 * (move_pages query).  Returns the number of sampled pages on r->node (or on
 * any node when r->node < 0), sets *other_node to a node some page landed
 * on instead (-1 if none) and *sampled to the number of pages asked for.
 */
int mbe_check_placement(const struct mbe_region *r, unsigned samples, int *other_node,
			unsigned *sampled);

#endif /* MBE_H */
