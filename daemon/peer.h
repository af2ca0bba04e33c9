/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * peer.h - who is on the other end of a vhost-user socket: the pid of the
 * frontend (QEMU) connected to one of this process's accepted unix sockets,
 * from SO_PEERCRED, and that socket.  Control path only (one thread).
 */
#ifndef FEMUD_PEER_H
#define FEMUD_PEER_H

#include <stdbool.h>
#include <sys/types.h>

/* Accepted sockets already attributed to a frontend (socket inode numbers). */
#define FEMUD_PEER_MAX_KNOWN 256
struct femud_peer_known {
	ino_t ino[FEMUD_PEER_MAX_KNOWN];
	unsigned n;
};

/*
 * Pid of the frontend on the newest connection accepted on `path`: the
 * accepted socket bound to path that is not in *known (with several such
 * sockets, the highest fd).  *known is then replaced by the sockets accepted
 * on path that are open now, so that a closed connection is forgotten and a
 * reused fd number is not mistaken for the old connection.  known may be
 * NULL (then: the highest-numbered accepted socket).  0 when none is found.
 */
pid_t femud_socket_peer_pid(const char *path, struct femud_peer_known *known);

/*
 * The same lookup, giving the peer's pid, uid and gid (SO_PEERCRED) of the
 * newest connection on path, and its accepted socket in *fd (fd may be
 * NULL); false when none is found.
 */
struct ucred;
bool femud_socket_peer_cred(const char *path, struct femud_peer_known *known, struct ucred *cr,
			    int *fd);

#endif /* FEMUD_PEER_H */
