/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vu_client.c - vhost-user frontend messaging over a unix socket.
 */
#include "vu_client.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int set_err(struct vu_conn *c, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return rc;
}

const char *vu_request_name(uint32_t request)
{
	static const char *const names[] = {
	    [VHU_GET_FEATURES] = "GET_FEATURES",
	    [VHU_SET_FEATURES] = "SET_FEATURES",
	    [VHU_SET_OWNER] = "SET_OWNER",
	    [VHU_RESET_OWNER] = "RESET_OWNER",
	    [VHU_SET_MEM_TABLE] = "SET_MEM_TABLE",
	    [VHU_SET_VRING_NUM] = "SET_VRING_NUM",
	    [VHU_SET_VRING_ADDR] = "SET_VRING_ADDR",
	    [VHU_SET_VRING_BASE] = "SET_VRING_BASE",
	    [VHU_GET_VRING_BASE] = "GET_VRING_BASE",
	    [VHU_SET_VRING_KICK] = "SET_VRING_KICK",
	    [VHU_SET_VRING_CALL] = "SET_VRING_CALL",
	    [VHU_SET_VRING_ERR] = "SET_VRING_ERR",
	    [VHU_GET_PROTOCOL_FEATURES] = "GET_PROTOCOL_FEATURES",
	    [VHU_SET_PROTOCOL_FEATURES] = "SET_PROTOCOL_FEATURES",
	    [VHU_GET_QUEUE_NUM] = "GET_QUEUE_NUM",
	    [VHU_SET_VRING_ENABLE] = "SET_VRING_ENABLE",
	    [VHU_GET_CONFIG] = "GET_CONFIG",
	    [VHU_SET_CONFIG] = "SET_CONFIG",
	};
	if (request < sizeof(names) / sizeof(names[0]) && names[request])
		return names[request];
	return "request";
}

int vu_connect(struct vu_conn *c, const char *path, unsigned timeout_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->timeout_ms = timeout_ms;
	if (strlen(path) >= sizeof(sa.sun_path))
		return set_err(c, -ENAMETOOLONG, "socket path too long: %s", path);
	if (stat(path, &st) < 0)
		return set_err(c, -errno, "no socket at %s (%s): is the backend running?", path,
			       strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return set_err(c, -ENOTSOCK, "%s is not a unix socket", path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return set_err(c, -errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		if (e == ECONNREFUSED)
			return set_err(c, -e,
				       "connection refused on %s: no backend is listening "
				       "(stale socket?)",
				       path);
		return set_err(c, -e, "connect %s: %s", path, strerror(e));
	}
	c->fd = fd;
	return 0;
}

void vu_close(struct vu_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int vu_send_raw(struct vu_conn *c, const void *buf, size_t len, const int *fds, unsigned nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * VHU_MAX_FDS)];
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (nfds > VHU_MAX_FDS)
		return set_err(c, -EINVAL, "too many fds");
	if (nfds) {
		struct cmsghdr *cm;
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return set_err(c, -errno, "send: %s", strerror(errno));
	if ((size_t)n != len)
		return set_err(c, -EIO, "short send (%zd of %zu bytes)", n, len);
	return 0;
}

int vu_send(struct vu_conn *c, uint32_t request, uint32_t flags, const void *payload, uint32_t size,
	    const int *fds, unsigned nfds)
{
	struct vhu_msg m;

	if (size > sizeof(m.payload))
		return set_err(c, -EINVAL, "payload too large");
	m.request = request;
	m.flags = flags | VHU_FLAG_VERSION;
	m.size = size;
	if (size)
		memcpy(&m.payload, payload, size);
	return vu_send_raw(c, &m, VHU_HDR_SIZE + size, fds, nfds);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly len bytes before the deadline. */
static int read_full(struct vu_conn *c, void *buf, size_t len, long long deadline)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		long long left = deadline - now_ms();
		ssize_t n;
		int rc;

		/* past the deadline still one look without waiting: a client that was
		 * descheduled until then must not miss a reply that came meanwhile */
		rc = poll(&p, 1, left > 0 ? (int)left : 0);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (rc == 0)
			return -ETIMEDOUT;
		n = recv(c->fd, (char *)buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		got += (size_t)n;
	}
	return 0;
}

int vu_recv(struct vu_conn *c, uint32_t request, struct vhu_msg *reply)
{
	long long deadline = now_ms() + c->timeout_ms;
	int rc;

	rc = read_full(c, reply, VHU_HDR_SIZE, deadline);
	if (rc == -ETIMEDOUT)
		return set_err(c, rc, "no reply to %s within %u ms", vu_request_name(request),
			       c->timeout_ms);
	if (rc == -ECONNRESET)
		return set_err(c, rc,
			       "backend closed the connection (waiting for the reply "
			       "to %s)",
			       vu_request_name(request));
	if (rc < 0)
		return set_err(c, rc, "recv: %s", strerror(-rc));
	if (reply->size > sizeof(reply->payload))
		return set_err(c, -EPROTO, "reply to %s too large (%u bytes)",
			       vu_request_name(request), reply->size);
	rc = read_full(c, &reply->payload, reply->size, deadline);
	if (rc < 0)
		return set_err(c, rc, "reply to %s truncated: %s", vu_request_name(request),
			       strerror(-rc));
	if (!(reply->flags & VHU_FLAG_REPLY) || reply->request != request)
		return set_err(c, -EPROTO, "unexpected message %u (flags 0x%x) waiting for %s",
			       reply->request, reply->flags, vu_request_name(request));
	return (int)reply->size;
}

int vu_get_u64(struct vu_conn *c, uint32_t request, uint64_t *val)
{
	struct vhu_msg r;
	int rc = vu_send(c, request, 0, NULL, 0, NULL, 0);

	if (rc < 0)
		return rc;
	rc = vu_recv(c, request, &r);
	if (rc < 0)
		return rc;
	if (rc != 8)
		return set_err(c, -EPROTO, "reply to %s has %d bytes, expected 8",
			       vu_request_name(request), rc);
	*val = r.payload.u64;
	return 0;
}

int vu_set(struct vu_conn *c, uint32_t request, const void *payload, uint32_t size, const int *fds,
	   unsigned nfds)
{
	bool ack = c->proto_features & (1ull << VHU_PF_REPLY_ACK);
	struct vhu_msg r;
	int rc = vu_send(c, request, ack ? VHU_FLAG_NEED_REPLY : 0, payload, size, fds, nfds);

	if (rc < 0 || !ack)
		return rc;
	rc = vu_recv(c, request, &r);
	if (rc < 0)
		return rc;
	if (rc != 8)
		return set_err(c, -EPROTO, "ack of %s has %d bytes", vu_request_name(request), rc);
	if (r.payload.u64 != 0)
		return set_err(c, -EPROTO, "backend refused %s (ack %llu)",
			       vu_request_name(request), (unsigned long long)r.payload.u64);
	return 0;
}

int vu_set_u64(struct vu_conn *c, uint32_t request, uint64_t val)
{
	return vu_set(c, request, &val, sizeof(val), NULL, 0);
}

int vu_set_state(struct vu_conn *c, uint32_t request, uint32_t index, uint32_t num)
{
	struct vhu_vring_state s = {.index = index, .num = num};
	return vu_set(c, request, &s, sizeof(s), NULL, 0);
}

int vu_set_vring_fd(struct vu_conn *c, uint32_t request, uint32_t index, int fd)
{
	uint64_t v = index;

	if (fd < 0) {
		v |= VHU_VRING_NOFD;
		return vu_set(c, request, &v, sizeof(v), NULL, 0);
	}
	return vu_set(c, request, &v, sizeof(v), &fd, 1);
}

/* Send GET_CONFIG for [offset, +size) in a payload of payload bytes; reply in r. */
static int config_round_trip(struct vu_conn *c, uint32_t offset, uint32_t size, uint32_t payload,
			     struct vhu_msg *r)
{
	struct vhu_config cfg;
	int rc;

	if (size > VHU_MAX_CONFIG)
		return -EINVAL;
	memset(&cfg, 0, sizeof(cfg));
	cfg.offset = offset;
	cfg.size = size;
	rc = vu_send(c, VHU_GET_CONFIG, 0, &cfg, payload, NULL, 0);
	return rc < 0 ? rc : vu_recv(c, VHU_GET_CONFIG, r);
}

int vu_get_config(struct vu_conn *c, void *out, uint32_t size)
{
	struct vhu_msg r;
	int rc = config_round_trip(c, 0, size, 12 + size, &r);

	if (rc < 0)
		return rc;
	if (rc < 12)
		return set_err(c, -EPROTO, "GET_CONFIG reply has %d bytes", rc);
	if (r.payload.config.size == 0 || rc - 12 < (int)r.payload.config.size)
		return set_err(c, -EPROTO, "backend failed GET_CONFIG (%u bytes answered)",
			       r.payload.config.size);
	size = r.payload.config.size < size ? r.payload.config.size : size;
	memcpy(out, r.payload.config.region, size);
	return (int)size;
}

int vu_get_config_framed(struct vu_conn *c, void *out, uint32_t offset, uint32_t size,
			 bool full_payload)
{
	uint32_t payload = 12 + (full_payload ? VHU_MAX_CONFIG : size);
	struct vhu_msg r;
	int rc = config_round_trip(c, offset, size, payload, &r);

	if (rc < 0)
		return rc;
	if ((uint32_t)rc != payload)
		return set_err(c, -EPROTO,
			       "GET_CONFIG reply of %d payload bytes to a request of %u", rc,
			       payload);
	if (r.payload.config.size != size)
		return set_err(c, -EPROTO, "GET_CONFIG answered %u bytes of %u",
			       r.payload.config.size, size);
	memcpy(out, r.payload.config.region, size);
	return (int)size;
}

int vu_sync(struct vu_conn *c)
{
	uint64_t f;
	return vu_get_u64(c, VHU_GET_FEATURES, &f);
}

bool vu_peer_closed(struct vu_conn *c)
{
	struct pollfd p = {.fd = c->fd, .events = POLLIN};
	char b;

	if (c->fd < 0)
		return true;
	if (poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLHUP | POLLERR))
		return true;
	return recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}
