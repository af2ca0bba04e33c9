/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * access.c - socket ownership, allowed peer uids and the peer log line
 * (see access.h).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/access.h"
#include "ftl/num_parse.h"
#include "daemon/log.h"

void femud_access_init(struct femud_access *a)
{
	memset(a, 0, sizeof(*a));
	a->owner_uid = (uid_t)-1;
	a->owner_gid = (gid_t)-1;
}

/* A number that fits an id (not -1), whole string. */
static bool id_number(const char *s, unsigned long *out)
{
	uint64_t v;

	if (num_parse(s, 0, 0, (uint64_t)(uid_t)-1 - 1, &v) != 0)
		return false;
	*out = (unsigned long)v;
	return true;
}

static int user_id(const char *s, uid_t *uid)
{
	struct passwd *pw;
	unsigned long v;

	if (id_number(s, &v)) {
		*uid = (uid_t)v;
		return 0;
	}
	pw = *s ? getpwnam(s) : NULL;
	if (pw == NULL)
		return -EINVAL;
	*uid = pw->pw_uid;
	return 0;
}

static int group_id(const char *s, gid_t *gid)
{
	struct group *gr;
	unsigned long v;

	if (id_number(s, &v)) {
		*gid = (gid_t)v;
		return 0;
	}
	gr = *s ? getgrnam(s) : NULL;
	if (gr == NULL)
		return -EINVAL;
	*gid = gr->gr_gid;
	return 0;
}

int femud_access_parse_owner(struct femud_access *a, const char *val, char *err, size_t errlen)
{
	char user[256];
	const char *colon = strchr(val, ':');
	size_t ulen = colon ? (size_t)(colon - val) : strlen(val);

	if (ulen >= sizeof(user))
		ulen = sizeof(user) - 1;
	memcpy(user, val, ulen);
	user[ulen] = '\0';
	if (user_id(user, &a->owner_uid) != 0) {
		snprintf(err, errlen, "--dev: bad value '%s' for key 'sock_owner': no user '%s'",
			 val, user);
		return -EINVAL;
	}
	if (colon != NULL && group_id(colon + 1, &a->owner_gid) != 0) {
		snprintf(err, errlen, "--dev: bad value '%s' for key 'sock_owner': no group '%s'",
			 val, colon + 1);
		return -EINVAL;
	}
	return 0;
}

int femud_access_parse_allow(struct femud_access *a, const char *val, char *err, size_t errlen)
{
	char buf[1024], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", val);
	a->nallow = 0;
	for (char *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		if (a->nallow == FEMUD_MAX_ALLOW_UID) {
			snprintf(err, errlen, "--dev: key 'allow_uid': more than %d uids",
				 FEMUD_MAX_ALLOW_UID);
			return -EINVAL;
		}
		if (user_id(tok, &a->allow[a->nallow]) != 0) {
			snprintf(
			    err, errlen,
			    "--dev: bad value '%s' for key 'allow_uid': no user '%s' (expected "
			    "UID[:UID...], numbers or user names)",
			    val, tok);
			return -EINVAL;
		}
		a->nallow++;
	}
	if (a->nallow == 0) {
		snprintf(err, errlen, "--dev: bad value '%s' for key 'allow_uid': no uid", val);
		return -EINVAL;
	}
	return 0;
}

bool femud_access_allowed(const struct femud_access *a, uid_t uid)
{
	if (a->nallow == 0)
		return true;
	for (unsigned i = 0; i < a->nallow; i++)
		if (a->allow[i] == uid)
			return true;
	return false;
}

int femud_access_admit(const struct femud_access *a, const char *path, const struct ucred *cr)
{
	if (cr == NULL) {
		if (a->nallow > 0) {
			femud_log_warn(
			    "%s: connection refused: the peer's credentials cannot be read "
			    "(allow_uid is set)",
			    path);
			return -1;
		}
		femud_log("%s: frontend connected (peer unknown)", path);
		return 0;
	}
	if (!femud_access_allowed(a, cr->uid)) {
		femud_log_warn(
		    "%s: connection refused: frontend pid %d uid %u gid %u is not in allow_uid",
		    path, (int)cr->pid, (unsigned)cr->uid, (unsigned)cr->gid);
		return -1;
	}
	femud_log("%s: frontend pid %d uid %u gid %u connected", path, (int)cr->pid,
		  (unsigned)cr->uid, (unsigned)cr->gid);
	return 0;
}
