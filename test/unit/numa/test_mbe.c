/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mbe.c - the memory backend: allocation on a node, fallback to normal
 * pages, zero fill, the placement query, and errors for a missing node.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "numa/mbe.h"

static char err[256];

Test(mbe, normal_pages_on_node0_are_zeroed_and_usable)
{
	struct mbe_region r;
	size_t len = 8u << 20;

	cr_assert_eq(mbe_alloc(len, 0, MBE_F_NO_HUGE | MBE_F_NO_LOCK, &r, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_not_null(r.addr);
	cr_assert_eq(r.page_size, (size_t)sysconf(_SC_PAGESIZE));
	cr_assert(!r.hugepages);
	cr_assert_geq(r.map_len, len);
	for (size_t off = 0; off < len; off += 4096)
		cr_assert_eq(((uint8_t *)r.addr)[off], 0);
	memset(r.addr, 0xa5, len);
	cr_assert_eq(((uint8_t *)r.addr)[len - 1], 0xa5);
	mbe_free(&r);
	cr_assert_null(r.addr);
}

Test(mbe, placement_query_finds_pages_on_the_bound_node)
{
	struct mbe_region r;
	int other;
	unsigned sampled;

	cr_assert_eq(mbe_alloc(4u << 20, 0, MBE_F_NO_HUGE | MBE_F_NO_LOCK, &r, err, sizeof(err)), 0,
		     "%s", err);
	int on = mbe_check_placement(&r, 16, &other, &sampled);
	cr_assert_eq(sampled, 16);
	cr_assert_eq(on, 16, "%d of 16 pages on node 0 (other %d)", on, other);
	cr_assert_eq(other, -1);
	mbe_free(&r);
}

Test(mbe, a_node_that_does_not_exist_is_an_error)
{
	struct mbe_region r;
	int bad = mbe_max_node() + 1;

	cr_assert(!mbe_node_exists(bad));
	cr_assert(mbe_node_exists(0));
	cr_assert_lt(mbe_alloc(1u << 20, bad, MBE_F_NO_LOCK, &r, err, sizeof(err)), 0);
	cr_assert(strstr(err, "does not exist") != NULL, "%s", err);
	cr_assert_null(r.addr);
}

Test(mbe, no_hugepages_falls_back_with_a_note)
{
	struct mbe_region r;
	/* Ask for more 1 GiB / 2 MiB pages than are free: the fallback must say so. */
	size_t len = (size_t)(mbe_free_hugepages(2u << 20, 0) + 4) * (2u << 20);

	if (len > (256u << 20))
		cr_skip_test("too many hugepages reserved here to force the fallback cheaply");
	cr_assert_eq(mbe_alloc(len, 0, MBE_F_NO_LOCK, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert(!r.hugepages);
	cr_assert(strstr(r.note, "nr_hugepages") != NULL, "note: %s", r.note);
	mbe_free(&r);
}

Test(mbe, zero_length_is_an_error)
{
	struct mbe_region r;

	cr_assert_eq(mbe_alloc(0, 0, MBE_F_NO_LOCK, &r, err, sizeof(err)), -EINVAL);
}

Test(mbe, more_than_the_available_memory_is_refused_before_touching_it)
{
	struct mbe_region r;
	size_t huge = (size_t)1 << 46; /* 64 TiB: more than any test machine has */

	cr_assert_eq(mbe_alloc(huge, 0, MBE_F_NO_HUGE | MBE_F_NO_LOCK, &r, err, sizeof(err)),
		     -ENOMEM);
	cr_assert(strstr(err, "available") != NULL, "%s", err);
	cr_assert_null(r.addr);
}

/* What "AnonHugePages" the kernel reports for the region is what femud logs. */
Test(mbe, transparent_huge_pages_of_normal_pages_are_reported)
{
	struct mbe_region r;
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f != NULL) {
		if (fgets(mode, sizeof(mode), f) == NULL)
			mode[0] = '\0';
		fclose(f);
	}
	cr_assert_eq(mbe_alloc(32u << 20, 0, MBE_F_NO_HUGE | MBE_F_NO_LOCK, &r, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_leq(r.thp_bytes, r.map_len);
	cr_assert_eq(r.thp_bytes % (2u << 20), 0, "THP bytes %zu not whole 2 MiB pages",
		     r.thp_bytes);
	if (strstr(mode, "[never]") != NULL)
		cr_assert_eq(r.thp_bytes, 0, "THP off but %zu bytes reported", r.thp_bytes);
	mbe_free(&r);
}
