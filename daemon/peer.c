/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * peer.c - find the frontend's pid behind a vhost-user connection.  rte_vhost
 * does not hand out the connection's fd, so the accepted sockets of this
 * process are looked up in /proc/self/fd: an AF_UNIX stream socket whose
 * local name is the device path and that is not the listener.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "daemon/peer.h"

static bool peer_is_accepted_on(int fd, const char *path)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int listening = 0;
	socklen_t ol = sizeof(listening);
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
		return false;
	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0 || sa.sun_family != AF_UNIX)
		return false;
	if (len <= offsetof(struct sockaddr_un, sun_path) ||
	    strncmp(sa.sun_path, path, sizeof(sa.sun_path)) != 0)
		return false;
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ol) != 0 || listening)
		return false;
	return true;
}

pid_t femud_socket_peer_pid(const char *path)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int best_fd = -1;
	pid_t pid = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(d) || fd <= best_fd)
			continue;
		if (peer_is_accepted_on(fd, path))
			best_fd = fd;
	}
	if (best_fd >= 0) {
		struct ucred cred;
		socklen_t cl = sizeof(cred);

		if (getsockopt(best_fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
			pid = cred.pid;
	}
	closedir(d);
	return pid;
}
