/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mem_fault.c - the SIGBUS net of pmd/mem_fault.c: a registered
 * mapping whose file shrank under it is patched with a zero page (the
 * access completes, the fault is reported once with its owner, region and
 * offset, and the eventfd wakes the control side); a SIGBUS anywhere else
 * (not registered, or unregistered) still kills the process; an owner's
 * mappings are forgotten all at once or by tag range (guest memory, inflight);
 * a window on one thread patches a fault in a mapping nobody registered and
 * leaves other threads and closed windows alone.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pmd/mem_fault.h"

#define PG 4096u

static int fd = -1;
static volatile uint8_t *map;

/* A shared mapping of a 4-page memfd, then the file cut to one page. */
static void shrunk_mapping(void)
{
	signal(SIGBUS,
	       SIG_DFL); /* not a sanitizer's handler: the default action is what is tested */
	cr_assert_eq(pmd_memfault_init(), 0);
	fd = memfd_create("mem_fault", MFD_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, 4 * PG), 0);
	map = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq((void *)map, MAP_FAILED);
	map[0] = 0x5a;
	map[2 * PG] = 0x77;
	cr_assert_eq(ftruncate(fd, PG), 0);
}

static bool event_pending(void)
{
	struct pollfd p = {.fd = pmd_memfault_fd(), .events = POLLIN};

	return poll(&p, 1, 0) == 1;
}

Test(mem_fault, fault_in_a_registered_mapping_is_patched_and_reported)
{
	struct pmd_memfault f;
	uint64_t n;

	shrunk_mapping();
	cr_assert_eq(pmd_memfault_register((void *)map, 4 * PG, PG, 7, 3), 0);
	cr_assert(pmd_memfault_covers((void *)(map + 4 * PG - 1)));
	cr_assert(!pmd_memfault_covers((void *)(map + 4 * PG)));
	cr_assert(!event_pending());
	cr_assert_eq(map[2 * PG + 5], 0, "the cut page reads as zeros");
	map[2 * PG + 6] = 1; /* and takes writes */
	cr_assert_eq(map[0], 0x5a, "pages still in the file keep their data");
	cr_assert(event_pending());
	cr_assert_eq(read(pmd_memfault_fd(), &n, sizeof(n)), (ssize_t)sizeof(n));
	cr_assert(pmd_memfault_take(&f));
	cr_assert_eq(f.owner, 7);
	cr_assert_eq(f.tag, 3);
	cr_assert_eq(f.offset, 2 * PG + 5);
	cr_assert(!pmd_memfault_take(&f), "reported once");
	/* another cut page faults (and is reported) on its own */
	cr_assert_eq(map[3 * PG], 0);
	cr_assert(pmd_memfault_take(&f));
	cr_assert_eq(f.offset, 3 * PG);
	pmd_memfault_unregister(7);
	cr_assert(!pmd_memfault_covers((void *)map));
	munmap((void *)map, 4 * PG);
	close(fd);
}

/* A real bug still crashes: SIGBUS outside every registered mapping. */
Test(mem_fault, fault_outside_registered_mappings_kills, .signal = SIGBUS)
{
	shrunk_mapping();
	cr_assert_eq(pmd_memfault_register((void *)map, PG, PG, 1, 0), 0); /* page 0 only */
	(void)map[2 * PG];
	cr_assert_fail("no SIGBUS");
}

Test(mem_fault, fault_after_unregister_kills, .signal = SIGBUS)
{
	shrunk_mapping();
	cr_assert_eq(pmd_memfault_register((void *)map, 4 * PG, PG, 2, 0), 0);
	pmd_memfault_unregister(2);
	(void)map[2 * PG];
	cr_assert_fail("no SIGBUS");
}

Test(mem_fault, a_sent_sigbus_kills, .signal = SIGBUS)
{
	signal(SIGBUS, SIG_DFL);
	cr_assert_eq(pmd_memfault_init(), 0);
	raise(SIGBUS);
	cr_assert_fail("survived a sent SIGBUS");
}

Test(mem_fault, registration_limits)
{
	static uint8_t buf[PG];

	cr_assert_eq(pmd_memfault_register(NULL, PG, PG, 1, 0), -EINVAL);
	cr_assert_eq(pmd_memfault_register(buf, 0, PG, 1, 0), -EINVAL);
	cr_assert_eq(pmd_memfault_register(buf, PG, 3000, 1, 0), -EINVAL);
	cr_assert_eq(pmd_memfault_register(buf, SIZE_MAX, PG, 1, 0), -EINVAL);
	for (unsigned i = 0; i < PMD_MEMFAULT_SLOTS; i++)
		cr_assert_eq(pmd_memfault_register(buf, PG, PG, 5, i), 0);
	cr_assert_eq(pmd_memfault_register(buf, PG, PG, 6, 0), -ENOSPC);
	pmd_memfault_unregister(5);
	cr_assert_eq(pmd_memfault_register(buf, PG, PG, 6, 0), 0);
	pmd_memfault_unregister(6);
}

/* A connection's guest memory and its inflight region are forgotten separately. */
Test(mem_fault, unregister_by_tag_range_keeps_the_other_mappings)
{
	static uint8_t guest[PG] __attribute__((aligned(PG)));
	static uint8_t inflight[PG] __attribute__((aligned(PG)));

	cr_assert_eq(pmd_memfault_register(guest, PG, PG, 4, 0), 0);
	cr_assert_eq(pmd_memfault_register(inflight, PG, PG, 4, PMD_MEMFAULT_TAG_INFLIGHT), 0);
	pmd_memfault_unregister_tags(4, 0, PMD_MEMFAULT_TAG_INFLIGHT); /* a new memory table */
	cr_assert_not(pmd_memfault_covers(guest));
	cr_assert(pmd_memfault_covers(inflight));
	cr_assert_eq(pmd_memfault_register(guest, PG, PG, 4, 1), 0);
	pmd_memfault_unregister_tags(4, PMD_MEMFAULT_TAG_INFLIGHT, PMD_MEMFAULT_TAG_INFLIGHT + 1);
	cr_assert(pmd_memfault_covers(guest));
	cr_assert_not(pmd_memfault_covers(inflight));
	pmd_memfault_unregister(4);
	cr_assert_not(pmd_memfault_covers(guest));
}

/*
 * A window on this thread covers a mapping nobody registered (rte_vhost's
 * own mapping of an inflight region while it handles SET_INFLIGHT_FD): the
 * cut page is patched, the access completes, the close counts it; nothing
 * is reported through the eventfd (the window's owner acts on the count).
 */
Test(mem_fault, window_patches_a_fault_on_its_thread)
{
	shrunk_mapping();
	pmd_memfault_window_open(PG);
	map[2 * PG + 1] = 9; /* rte_vhost's write of desc_num */
	cr_assert_eq(map[3 * PG], 0);
	cr_assert_eq(map[0], 0x5a);
	cr_assert_eq(pmd_memfault_window_close(), 2, "two cut pages patched");
	cr_assert_eq(pmd_memfault_window_close(), 0, "closed once");
	cr_assert(!event_pending());
	munmap((void *)map, 4 * PG);
	close(fd);
}

static void *touch_cut_page(void *arg)
{
	(void)arg;
	(void)map[2 * PG];
	return NULL;
}

/* A fault on another thread while the window is open is not the window's: it kills. */
Test(mem_fault, window_leaves_other_threads_alone, .signal = SIGBUS)
{
	pthread_t t;

	shrunk_mapping();
	pmd_memfault_window_open(PG);
	cr_assert_eq(pthread_create(&t, NULL, touch_cut_page, NULL), 0);
	pthread_join(t, NULL);
	cr_assert_fail("no SIGBUS");
}

/* After the window closes a fault on the same thread kills again. */
Test(mem_fault, window_closed_kills, .signal = SIGBUS)
{
	shrunk_mapping();
	pmd_memfault_window_open(PG);
	cr_assert_eq(pmd_memfault_window_close(), 0);
	(void)map[2 * PG];
	cr_assert_fail("no SIGBUS");
}
