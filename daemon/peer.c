/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * peer.c - find the frontend's pid behind a vhost-user connection.  rte_vhost
 * does not hand out the connection's fd, so the accepted sockets of this
 * process are looked up in /proc/self/fd: an AF_UNIX stream socket whose
 * local name is the device path and that is not the listener.  The sockets
 * seen at the previous lookup are remembered by inode, so the new
 * connection is told apart from older live ones whatever its fd number.
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

/* Is fd an accepted (not listening) unix socket bound to path?  Its inode in *ino. */
static bool peer_is_accepted_on(int fd, const char *path, ino_t *ino)
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
	*ino = st.st_ino;
	return true;
}

static bool peer_known(const struct femud_peer_known *k, ino_t ino)
{
	for (unsigned i = 0; k != NULL && i < k->n; i++)
		if (k->ino[i] == ino)
			return true;
	return false;
}

static bool peer_cred_of(int fd, struct ucred *cr)
{
	socklen_t cl = sizeof(*cr);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &cl) == 0;
}

bool femud_socket_peer_cred(const char *path, struct femud_peer_known *known, struct ucred *cr,
			    int *fd_out)
{
	DIR *d = opendir("/proc/self/fd");
	struct femud_peer_known now = {.n = 0};
	struct dirent *e;
	int best_fd = -1;
	bool found = false;

	if (d == NULL)
		return false;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name);
		ino_t ino;

		if (e->d_name[0] == '.' || fd == dirfd(d) || !peer_is_accepted_on(fd, path, &ino))
			continue;
		if (now.n < FEMUD_PEER_MAX_KNOWN)
			now.ino[now.n++] = ino;
		if (fd > best_fd && !peer_known(known, ino))
			best_fd = fd;
	}
	if (best_fd >= 0)
		found = peer_cred_of(best_fd, cr);
	if (fd_out != NULL)
		*fd_out = found ? best_fd : -1;
	closedir(d);
	if (known != NULL)
		*known = now;
	return found;
}

pid_t femud_socket_peer_pid(const char *path, struct femud_peer_known *known)
{
	struct ucred cr;

	return femud_socket_peer_cred(path, known, &cr, NULL) ? cr.pid : 0;
}
