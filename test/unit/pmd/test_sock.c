/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_sock.c - claiming a socket path before listening: free path, live
 * listener (refused), stale socket file (replaced), not a socket (refused).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "pmd/pmd.h"

static char path[64];
static char err[256];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/pmd-ut-%d.sock", getpid());
	unlink(path);
	err[0] = '\0';
}

static void teardown(void)
{
	unlink(path);
}

static int bound_socket(bool listening)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (listening)
		cr_assert_eq(listen(fd, 1), 0);
	return fd;
}

TestSuite(sock, .init = setup, .fini = teardown);

Test(sock, free_path_is_claimed)
{
	cr_assert_eq(pmd_sock_path_claim(path, err, sizeof(err)), 0);
}

Test(sock, live_listener_is_refused)
{
	int fd = bound_socket(true);
	struct stat st;

	cr_assert_eq(pmd_sock_path_claim(path, err, sizeof(err)), -EADDRINUSE);
	cr_assert(strstr(err, path) != NULL, "message names the path: %s", err);
	cr_assert_eq(stat(path, &st), 0, "live socket must not be removed");
	close(fd);
}

Test(sock, stale_socket_is_replaced)
{
	struct stat st;

	close(bound_socket(false)); /* file stays, nobody listens */
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(pmd_sock_path_claim(path, err, sizeof(err)), 0);
	cr_assert_neq(stat(path, &st), 0, "stale socket file not removed");
}

Test(sock, regular_file_is_refused)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(pmd_sock_path_claim(path, err, sizeof(err)), -EEXIST);
	cr_assert(access(path, F_OK) == 0, "regular file removed");
}
