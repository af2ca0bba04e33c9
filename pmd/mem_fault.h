/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mem_fault.h - the safety net for guest memory whose file shrinks under
 * femud: a frontend may ftruncate the memfd behind a memory region (or
 * behind its inflight region) after femud checked it (SET_MEM_TABLE,
 * SET_INFLIGHT_FD), and any access past the new end of the
 * file then raises SIGBUS, in a poller or in rte_vhost's thread.
 *
 * The control path registers the host mappings of every connection's guest
 * memory (owner: the connection's vid) in a small fixed table.  A process
 * SIGBUS handler looks the faulting address up in it, lock-free: inside a
 * registered mapping, an anonymous page is mapped over the faulting page
 * (MAP_FIXED; the faulting access then completes, on zeros), the mapping is
 * marked broken and an eventfd is signalled, so that the control side can
 * stop the owner's queues (pmd_memfault_take).  Any other SIGBUS gets the
 * previous handler, or the default action (the process dies: a real bug
 * still crashes).  Nothing here is on the I/O path.
 */
#ifndef PMD_MEM_FAULT_H
#define PMD_MEM_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMD_MEMFAULT_SLOTS 1024 /* registered mappings, all connections together */

/*
 * Install the SIGBUS handler (once per process; later calls do nothing).
 * Returns 0, or -errno.
 */
int pmd_memfault_init(void);

/*
 * An eventfd that becomes readable after a fault in a registered mapping
 * (read it to re-arm; -1 before pmd_memfault_init).
 */
int pmd_memfault_fd(void);

/*
 * Register [addr, addr + len) as guest memory of owner (tag: which of its
 * mappings, e.g. the region index, handed back by pmd_memfault_take), replaced in units
 * of page bytes on a fault (the mapping's page size: 4 KiB, or the huge
 * page size of a hugetlbfs file; a power of two).  Single writer (the
 * control path, under its lock).  0, or -ENOSPC when the table is full
 * (the mapping is then not covered) or -EINVAL.
 */
int pmd_memfault_register(const void *addr, size_t len, size_t page, int owner, unsigned tag);

/*
 * Tags of an owner's mappings: its guest memory regions are tagged with
 * their index (below PMD_MEMFAULT_TAG_INFLIGHT), its inflight region
 * (VHOST_USER_SET_INFLIGHT_FD) with PMD_MEMFAULT_TAG_INFLIGHT, its dirty
 * log with PMD_MEMFAULT_TAG_LOG.
 */
#define PMD_MEMFAULT_TAG_INFLIGHT 0x10000u
#define PMD_MEMFAULT_TAG_LOG 0x10001u /* the dirty log (SET_LOG_BASE) */

/* Forget every mapping of owner (before they are unmapped). */
void pmd_memfault_unregister(int owner);

/* Forget the mappings of owner with a tag in [lo, hi) (before they are unmapped). */
void pmd_memfault_unregister_tags(int owner, unsigned lo, unsigned hi);

/* A fault in a registered mapping. */
struct pmd_memfault {
	int owner;
	unsigned tag;
	uint64_t offset; /* of the faulting address in the mapping, bytes */
};

/* The next mapping that faulted since the last call (its mark is cleared); false: none. */
bool pmd_memfault_take(struct pmd_memfault *f);

/*
 * A window on the calling thread, for a mapping femud cannot register
 * because another library makes it and writes into it at once (rte_vhost's
 * mmap of an inflight region for SET_INFLIGHT_FD: femud learns its address
 * only after the message): until pmd_memfault_window_close(), a SIGBUS on
 * this thread for an access past the end of a file (BUS_ADRERR) at an
 * address no registered mapping covers gets an anonymous page of page bytes
 * mapped over it, as a registered mapping's would.  Faults on other threads,
 * or of other kinds, are not touched.  One window at a time (the control
 * path's thread, under its lock).
 */
void pmd_memfault_window_open(size_t page);

/* Close the calling thread's window; the faults it patched (0: none, or no window open). */
unsigned pmd_memfault_window_close(void);

/* The SIGBUS handler's lookup (for tests): is addr in a registered mapping? */
bool pmd_memfault_covers(const void *addr);

#endif /* PMD_MEM_FAULT_H */
