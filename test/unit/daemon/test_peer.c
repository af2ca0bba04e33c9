/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_peer.c - the frontend pid behind an accepted vhost-user socket, also
 * when the newest connection got a lower fd number than an older live one.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/peer.h"

static int listen_on(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(fd, 4), 0);
	return fd;
}

static pid_t connect_child(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			_exit(1);
		pause();
		_exit(0);
	}
	return pid;
}

Test(peer, finds_the_connected_process)
{
	char path[64];
	int lfd, cfd;
	pid_t child;

	snprintf(path, sizeof(path), "/tmp/femud-peer-%d.sock", (int)getpid());
	lfd = listen_on(path);
	cr_assert_eq(femud_socket_peer_pid(path, NULL), 0, "the listener alone has no peer");
	child = connect_child(path);
	cfd = accept(lfd, NULL, NULL);
	cr_assert_geq(cfd, 0);
	cr_expect_eq(femud_socket_peer_pid(path, NULL), child);
	cr_expect_eq(femud_socket_peer_pid("/tmp/femud-peer-none.sock", NULL), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(cfd);
	close(lfd);
	unlink(path);
}

static void reap(pid_t child)
{
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/*
 * Connections a (fd x), b (fd y > x); a closes; c is accepted into fd x.
 * The newest connection is c although b has the higher fd.
 */
Test(peer, newest_connection_found_when_its_fd_number_is_reused)
{
	struct femud_peer_known known = {.n = 0};
	char path[64];
	int lfd, fa, fb, fc;
	pid_t a, b, c;

	snprintf(path, sizeof(path), "/tmp/femud-peer2-%d.sock", (int)getpid());
	lfd = listen_on(path);
	a = connect_child(path);
	fa = accept(lfd, NULL, NULL);
	cr_assert_geq(fa, 0);
	cr_assert_eq(femud_socket_peer_pid(path, &known), a);
	b = connect_child(path);
	fb = accept(lfd, NULL, NULL);
	cr_assert_gt(fb, fa);
	cr_assert_eq(femud_socket_peer_pid(path, &known), b);
	close(fa);
	reap(a);
	c = connect_child(path);
	fc = accept(lfd, NULL, NULL);
	cr_assert_eq(fc, fa, "the kernel reuses the lowest free fd");
	cr_expect_eq(femud_socket_peer_pid(path, &known), c);
	cr_expect_eq(known.n, 2, "only the two open connections are remembered");
	/* nothing new: no pid rather than an old connection's */
	cr_expect_eq(femud_socket_peer_pid(path, &known), 0);
	reap(b);
	reap(c);
	close(fb);
	close(fc);
	close(lfd);
	unlink(path);
}
