/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_access.c - sock_owner and allow_uid values: names and numbers,
 * unknown users and groups refused naming the key, the allow list.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "daemon/access.h"

static struct femud_access a;
static char err[256];

static void setup(void)
{
	femud_access_init(&a);
	err[0] = '\0';
}

TestSuite(access, .init = setup);

Test(access, defaults_change_nothing_and_allow_everyone)
{
	cr_assert_eq(a.owner_uid, (uid_t)-1);
	cr_assert_eq(a.owner_gid, (gid_t)-1);
	cr_assert(femud_access_allowed(&a, 0));
	cr_assert(femud_access_allowed(&a, 12345));
}

Test(access, owner_by_number_and_name)
{
	cr_assert_eq(femud_access_parse_owner(&a, "107:108", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.owner_uid, 107);
	cr_assert_eq(a.owner_gid, 108);
	femud_access_init(&a);
	cr_assert_eq(femud_access_parse_owner(&a, "root", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.owner_uid, 0);
	cr_assert_eq(a.owner_gid, (gid_t)-1, "no group given: left as created");
	cr_assert_eq(femud_access_parse_owner(&a, "root:root", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.owner_gid, 0);
}

Test(access, unknown_owner_or_group_refused_naming_the_key)
{
	cr_assert_eq(femud_access_parse_owner(&a, "no_such_user_femud", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "'sock_owner'") && strstr(err, "no user"), "%s", err);
	cr_assert_eq(femud_access_parse_owner(&a, "0:no_such_group_femud", err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "no group"), "%s", err);
	cr_assert_eq(femud_access_parse_owner(&a, "", err, sizeof(err)), -EINVAL);
	cr_assert_eq(femud_access_parse_owner(&a, ":0", err, sizeof(err)), -EINVAL);
	cr_assert_eq(femud_access_parse_owner(&a, "-1", err, sizeof(err)), -EINVAL);
	cr_assert_eq(femud_access_parse_owner(&a, "4294967295", err, sizeof(err)), -EINVAL);
}

Test(access, allow_list)
{
	cr_assert_eq(femud_access_parse_allow(&a, "107:root:1000", err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(a.nallow, 3);
	cr_assert(femud_access_allowed(&a, 107));
	cr_assert(femud_access_allowed(&a, 0));
	cr_assert(femud_access_allowed(&a, 1000));
	cr_assert_not(femud_access_allowed(&a, 1001));
	cr_assert_not(femud_access_allowed(&a, 65534));
}

Test(access, bad_allow_lists_refused)
{
	cr_assert_eq(femud_access_parse_allow(&a, "", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "'allow_uid'"), "%s", err);
	cr_assert_eq(femud_access_parse_allow(&a, "107:nobody_femud_x", err, sizeof(err)), -EINVAL);
	cr_assert_eq(femud_access_parse_allow(&a, "1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17", err,
					      sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "more than"), "%s", err);
}
