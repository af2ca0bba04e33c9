/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * peer.h - who is on the other end of a vhost-user socket: the pid of the
 * frontend (QEMU) connected to one of this process's accepted unix sockets,
 * from SO_PEERCRED.  Control path only.
 */
#ifndef FEMUD_PEER_H
#define FEMUD_PEER_H

#include <sys/types.h>

/*
 * Pid of the process connected to the most recently accepted socket of
 * this process bound to `path`; 0 when none is found.
 */
pid_t femud_socket_peer_pid(const char *path);

#endif /* FEMUD_PEER_H */
