/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_lcores.c - the EAL --lcores syntax as femud reads it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "daemon/lcores.h"

static char err[256];

Test(lcores, plain_range)
{
	struct femud_lcores l;

	cr_assert_eq(femud_lcores_parse("2-4", &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.n, 3);
	for (unsigned i = 0; i < 3; i++) {
		cr_assert_eq(l.l[i].id, 2 + i);
		cr_assert_eq(l.l[i].cpu, (int)(2 + i));
	}
}

Test(lcores, mapped_to_cpus)
{
	struct femud_lcores l;

	cr_assert_eq(femud_lcores_parse("0@2,1@3", &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.n, 2);
	cr_assert_eq(l.l[0].id, 0);
	cr_assert_eq(l.l[0].cpu, 2);
	cr_assert_eq(l.l[1].id, 1);
	cr_assert_eq(l.l[1].cpu, 3);
}

Test(lcores, groups_in_parentheses)
{
	struct femud_lcores l;

	cr_assert_eq(femud_lcores_parse("(0-1)@(4,5),7", &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.n, 3);
	cr_assert_eq(l.l[1].id, 1);
	cr_assert_eq(l.l[1].cpu, 4);
	cr_assert_eq(l.l[2].id, 7);
	cr_assert_eq(l.l[2].cpu, 7);
}

Test(lcores, errors_name_the_option)
{
	const char *bad[] = {"", "a", "3-1", "1,,2", "1@", "(1-2", "0,0", "1@x", "2048"};
	struct femud_lcores l;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(femud_lcores_parse(bad[i], &l, err, sizeof(err)), -EINVAL, "'%s'",
			     bad[i]);
		cr_expect(strstr(err, "--lcores") != NULL, "'%s': %s", bad[i], err);
	}
}
