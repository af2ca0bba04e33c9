/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * access.h - who may connect to a device's vhost-user socket: the socket's
 * owner and group (--dev sock_owner=USER[:GROUP], with sock_mode, so that a
 * QEMU running as another user, e.g. libvirt's qemu user, can connect
 * without a world-writable socket), the uids allowed to connect
 * (allow_uid=UID[:UID...]; names or numbers), and the log line that names
 * each connecting frontend (pid, uid, gid from SO_PEERCRED).  Control path
 * only (rte_vhost's thread and option parsing).
 */
#ifndef FEMUD_ACCESS_H
#define FEMUD_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define FEMUD_MAX_ALLOW_UID 16

/* Access settings of one device (part of struct femud_dev_opts). */
struct femud_access {
	uid_t owner_uid; /* (uid_t)-1: socket owner left as created */
	gid_t owner_gid; /* (gid_t)-1: group left as created */
	uid_t allow[FEMUD_MAX_ALLOW_UID];
	unsigned nallow; /* 0: every peer the socket's mode lets in */
};

/* No owner change, every uid allowed. */
void femud_access_init(struct femud_access *a);

/*
 * Parse sock_owner=USER[:GROUP] (names from the password / group database,
 * or numbers).  0, or -EINVAL with a message naming the key in err.
 */
int femud_access_parse_owner(struct femud_access *a, const char *val, char *err, size_t errlen);

/* Parse allow_uid=UID[:UID...] (names or numbers).  0, or -EINVAL with a message. */
int femud_access_parse_allow(struct femud_access *a, const char *val, char *err, size_t errlen);

/* May a peer with this uid connect? */
bool femud_access_allowed(const struct femud_access *a, uid_t uid);

/*
 * Decide on a frontend that just connected to path, whose credentials are
 * *cr (NULL when they could not be read): logs "PATH: frontend pid P uid U
 * gid G connected", or refuses (returns -1, with a log line naming the uid)
 * a peer that a's allow_uid does not list; unreadable credentials are
 * refused only when allow_uid is set.  0: accept.
 */
struct ucred;
int femud_access_admit(const struct femud_access *a, const char *path, const struct ucred *cr);

#endif /* FEMUD_ACCESS_H */
