/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_client.c - femuctl's JSON-RPC client (see ctl_client.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_client.h"

int ctl_connect(struct ctl_client *c, const char *path, int timeout_ms, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int rc;

	c->len = 0;
	c->next_id = 1;
	c->timeout_ms = timeout_ms;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "%s: socket path too long", path);
		return -ENAMETOOLONG;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		snprintf(err, errlen,
			 "cannot connect to femud at %s: %s (is femud running with --rpc %s?)",
			 path, strerror(-rc), path);
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
		return rc;
	}
	return 0;
}

static int ctl_send(struct ctl_client *c, const char *s, char *msg, size_t msglen)
{
	size_t len = strlen(s), off = 0;

	while (off < len) {
		ssize_t n = send(c->fd, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(msg, msglen, "cannot send to femud: %s", strerror(errno));
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

/* Read until a newline; returns the line's length (without it) or -1. */
static ssize_t ctl_read_line(struct ctl_client *c, char *msg, size_t msglen)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
		ssize_t n;

		if (nl != NULL)
			return nl - c->buf;
		if (c->len == sizeof(c->buf)) {
			snprintf(msg, msglen, "response larger than %zu bytes", sizeof(c->buf));
			return -1;
		}
		n = poll(&pfd, 1, c->timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			snprintf(msg, msglen, "no response from femud within %d ms", c->timeout_ms);
			return -1;
		}
		n = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(msg, msglen, "femud closed the connection%s%s", n < 0 ? ": " : "",
				 n < 0 ? strerror(errno) : "");
			return -1;
		}
		c->len += (size_t)n;
	}
}

static int ctl_answer(json_t *resp, json_t **result, int *code, char *msg, size_t msglen)
{
	json_t *err = json_object_get(resp, "error");

	if (json_is_object(err)) {
		*code = (int)json_integer_value(json_object_get(err, "code"));
		snprintf(msg, msglen, "%s",
			 json_string_value(json_object_get(err, "message")) ?: "error");
		return 1;
	}
	*result = json_incref(json_object_get(resp, "result"));
	if (*result == NULL) {
		snprintf(msg, msglen, "malformed response (no result)");
		return -1;
	}
	return 0;
}

int ctl_call(struct ctl_client *c, const char *method, json_t *params, json_t **result, int *code,
	     char *msg, size_t msglen)
{
	json_t *req =
	    json_pack("{s:s, s:s, s:I}", "jsonrpc", "2.0", "method", method, "id", c->next_id++);
	json_error_t je;
	json_t *resp;
	char *s;
	ssize_t n;
	int rc;

	if (params != NULL)
		json_object_set(req, "params", params);
	s = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	rc = s != NULL ? ctl_send(c, s, msg, msglen) : -1;
	free(s);
	if (rc != 0)
		return -1;
	n = ctl_read_line(c, msg, msglen);
	if (n < 0)
		return -1;
	resp = json_loadb(c->buf, (size_t)n, 0, &je);
	memmove(c->buf, c->buf + n + 1, c->len - (size_t)n - 1);
	c->len -= (size_t)n + 1;
	if (resp == NULL) {
		snprintf(msg, msglen, "malformed response: %s", je.text);
		return -1;
	}
	rc = ctl_answer(resp, result, code, msg, msglen);
	json_decref(resp);
	return rc;
}

void ctl_close(struct ctl_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
