/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_peer.c - the frontend pid behind an accepted vhost-user socket. */
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
	cr_assert_eq(listen(fd, 1), 0);
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
	cr_assert_eq(femud_socket_peer_pid(path), 0, "the listener alone has no peer");
	child = connect_child(path);
	cfd = accept(lfd, NULL, NULL);
	cr_assert_geq(cfd, 0);
	cr_expect_eq(femud_socket_peer_pid(path), child);
	cr_expect_eq(femud_socket_peer_pid("/tmp/femud-peer-none.sock"), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(cfd);
	close(lfd);
	unlink(path);
}
