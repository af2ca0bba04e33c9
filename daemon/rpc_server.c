/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rpc_server.c - the JSON-RPC socket and its control thread (see rpc.h):
 * one poll() loop over the listening socket, a wake-up eventfd and every
 * client; non-blocking reads and writes with per-client buffers, size
 * limits and deadlines.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "daemon/log.h"
#include "daemon/rpc.h"
#include "pmd/pmd.h"

struct rpc_client {
	int fd;
	char *in; /* FEMUD_RPC_MAX_MSG + 1 bytes */
	size_t in_len;
	char *out; /* pending response bytes */
	size_t out_len, out_off;
	uint64_t msg_deadline;	/* ms: partial request or unread response; 0 = none */
	uint64_t idle_deadline; /* ms */
	bool closing;		/* close once out is written */
};

struct femud_rpc {
	char path[108];
	int lfd;
	int wake; /* eventfd: stop */
	pthread_t thread;
	bool started;
	const struct femud_rpc_method *table;
	void *ctx;
	struct rpc_client cl[FEMUD_RPC_MAX_CLIENTS];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int femud_rpc_open(struct femud_rpc **out, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct femud_rpc *r;
	mode_t old;
	int rc;

	rc = pmd_sock_path_claim(path, err, errlen);
	if (rc != 0) {
		if (err[0] == '\0')
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	snprintf(r->path, sizeof(r->path), "%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (unsigned i = 0; i < FEMUD_RPC_MAX_CLIENTS; i++)
		r->cl[i].fd = -1;
	r->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	r->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	old = umask(0177); /* the socket is created 0600 */
	rc = r->lfd < 0 || r->wake < 0 || bind(r->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
		     listen(r->lfd, 16) != 0
		 ? -errno
		 : 0;
	umask(old);
	if (rc == 0 && chmod(path, 0600) != 0)
		rc = -errno;
	if (rc != 0) {
		snprintf(err, errlen, "--rpc %s: cannot listen: %s", path, strerror(-rc));
		if (r->lfd >= 0)
			close(r->lfd);
		if (r->wake >= 0)
			close(r->wake);
		free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static void client_drop(struct rpc_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->in);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Queue a response (taken) and a newline; a client with a pending response is not read. */
static void client_send(struct rpc_client *c, json_t *resp)
{
	char *s = json_dumps(resp, JSON_COMPACT);
	size_t n;

	json_decref(resp);
	if (s == NULL) {
		c->closing = true;
		return;
	}
	n = strlen(s);
	c->out = realloc(c->out, c->out_len + n + 1);
	if (c->out == NULL) {
		free(s);
		c->out_len = c->out_off = 0;
		c->closing = true;
		return;
	}
	memcpy(c->out + c->out_len, s, n);
	c->out[c->out_len + n] = '\n';
	c->out_len += n + 1;
	free(s);
	c->msg_deadline = now_ms() + FEMUD_RPC_MSG_TIMEOUT_MS;
}

static void client_fail(struct rpc_client *c, int code, const char *msg)
{
	client_send(c, femud_rpc_error_response(NULL, code, msg));
	c->closing = true;
}

static void client_accept(struct femud_rpc *r)
{
	int fd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct rpc_client *c = NULL;

	if (fd < 0)
		return;
	for (unsigned i = 0; i < FEMUD_RPC_MAX_CLIENTS && c == NULL; i++)
		if (r->cl[i].fd < 0)
			c = &r->cl[i];
	if (c == NULL) {
		static const char busy[] = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32005,"
					   "\"message\":\"too many RPC clients\"},\"id\":null}\n";

		if (write(fd, busy, sizeof(busy) - 1) < 0) {
			/* nothing more to tell it */
		}
		close(fd);
		return;
	}
	c->fd = fd;
	c->in = malloc(FEMUD_RPC_MAX_MSG + 1);
	if (c->in == NULL) {
		client_drop(c);
		return;
	}
	c->idle_deadline = now_ms() + FEMUD_RPC_IDLE_TIMEOUT_MS;
}

/* Answer every whole request in the input buffer. */
static void client_process(struct femud_rpc *r, struct rpc_client *c)
{
	struct femud_rpc_error e;
	size_t used;
	json_t *req;
	int rc;

	while (!c->closing && c->out_len == 0) {
		rc = femud_rpc_next(c->in, c->in_len, &req, &used, &e);
		memmove(c->in, c->in + used, c->in_len - used);
		c->in_len -= used;
		if (rc < 0) {
			client_fail(c, e.code, e.msg); /* the stream cannot be resynchronised */
			return;
		}
		if (rc == 0)
			break;
		json_t *resp = femud_rpc_handle(r->table, r->ctx, req);

		json_decref(req);
		if (resp != NULL)
			client_send(c, resp);
	}
	if (c->in_len == FEMUD_RPC_MAX_MSG && !c->closing) {
		char msg[96];

		snprintf(msg, sizeof(msg), "request larger than %u bytes", FEMUD_RPC_MAX_MSG);
		client_fail(c, FEMUD_RPC_INVALID_REQUEST, msg);
	}
	if (c->out_len == 0)
		c->msg_deadline =
		    c->in_len > 0
			? (c->msg_deadline ? c->msg_deadline : now_ms() + FEMUD_RPC_MSG_TIMEOUT_MS)
			: 0;
}

static void client_read(struct femud_rpc *r, struct rpc_client *c)
{
	ssize_t n = read(c->fd, c->in + c->in_len, FEMUD_RPC_MAX_MSG - c->in_len);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		client_drop(c);
		return;
	}
	if (n < 0)
		return;
	c->in_len += (size_t)n;
	c->idle_deadline = now_ms() + FEMUD_RPC_IDLE_TIMEOUT_MS;
	client_process(r, c);
}

static void client_write(struct femud_rpc *r, struct rpc_client *c)
{
	ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		client_drop(c);
		return;
	}
	if (n > 0)
		c->out_off += (size_t)n;
	if (c->out_off < c->out_len)
		return;
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	c->msg_deadline = 0;
	c->idle_deadline = now_ms() + FEMUD_RPC_IDLE_TIMEOUT_MS;
	if (c->closing) {
		client_drop(c);
		return;
	}
	client_process(r, c); /* requests that came while the response was pending */
}

/* Deadlines: an unfinished request gets an error, an unread response a disconnect. */
static void client_expire(struct rpc_client *c, uint64_t now)
{
	if (c->msg_deadline != 0 && now >= c->msg_deadline) {
		if (c->out_len > 0 || c->closing) {
			client_drop(c);
		} else {
			char msg[96];

			snprintf(msg, sizeof(msg), "incomplete request: no more bytes for %u ms",
				 FEMUD_RPC_MSG_TIMEOUT_MS);
			client_fail(c, FEMUD_RPC_PARSE_ERROR, msg);
		}
	} else if (now >= c->idle_deadline && c->out_len == 0) {
		client_drop(c);
	}
}

static int rpc_poll_timeout(const struct femud_rpc *r, uint64_t now)
{
	uint64_t next = now + 1000;

	for (unsigned i = 0; i < FEMUD_RPC_MAX_CLIENTS; i++) {
		const struct rpc_client *c = &r->cl[i];

		if (c->fd < 0)
			continue;
		if (c->msg_deadline != 0 && c->msg_deadline < next)
			next = c->msg_deadline;
		if (c->idle_deadline < next)
			next = c->idle_deadline;
	}
	return next > now ? (int)(next - now) : 0;
}

static bool rpc_poll_once(struct femud_rpc *r)
{
	struct pollfd pfd[FEMUD_RPC_MAX_CLIENTS + 2];
	unsigned map[FEMUD_RPC_MAX_CLIENTS];
	unsigned n = 2, nc = 0;

	pfd[0] = (struct pollfd){.fd = r->wake, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = r->lfd, .events = POLLIN};
	for (unsigned i = 0; i < FEMUD_RPC_MAX_CLIENTS; i++) {
		struct rpc_client *c = &r->cl[i];

		if (c->fd < 0)
			continue;
		pfd[n].fd = c->fd;
		pfd[n].events = c->out_len > 0 ? POLLOUT : POLLIN;
		pfd[n++].revents = 0;
		map[nc++] = i;
	}
	if (poll(pfd, n, rpc_poll_timeout(r, now_ms())) < 0 && errno != EINTR)
		return false;
	if (pfd[0].revents & POLLIN)
		return false;
	for (unsigned k = 0; k < nc; k++) {
		struct rpc_client *c = &r->cl[map[k]];
		short ev = pfd[k + 2].revents;

		if (ev & POLLOUT)
			client_write(r, c);
		else if (ev & (POLLIN | POLLHUP | POLLERR))
			client_read(r, c);
	}
	if (pfd[1].revents & POLLIN)
		client_accept(r);
	for (unsigned i = 0; i < FEMUD_RPC_MAX_CLIENTS; i++)
		if (r->cl[i].fd >= 0)
			client_expire(&r->cl[i], now_ms());
	return true;
}

static void *rpc_thread(void *arg)
{
	struct femud_rpc *r = arg;

	while (rpc_poll_once(r))
		;
	return NULL;
}

int femud_rpc_start(struct femud_rpc *r, const struct femud_rpc_method *table, void *ctx)
{
	int rc;

	r->table = table;
	r->ctx = ctx;
	/* a control thread: on the CPUs no lcore uses when there are any */
	rc = rte_ctrl_thread_create(&r->thread, "femud-rpc", NULL, rpc_thread, r);
	if (rc != 0)
		return -rc;
	r->started = true;
	return 0;
}

void femud_rpc_close(struct femud_rpc *r)
{
	uint64_t one = 1;

	if (r == NULL)
		return;
	if (r->started) {
		if (write(r->wake, &one, sizeof(one)) != sizeof(one))
			femud_log_err("rpc: cannot wake the RPC thread");
		pthread_join(r->thread, NULL);
	}
	for (unsigned i = 0; i < FEMUD_RPC_MAX_CLIENTS; i++)
		if (r->cl[i].fd >= 0)
			client_drop(&r->cl[i]);
	close(r->lfd);
	close(r->wake);
	unlink(r->path);
	free(r);
}
