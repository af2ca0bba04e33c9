/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_vu_client.c - the vhost-user frontend messaging against a scripted
 * fake backend on a unix socket: message layout on the wire, replies,
 * REPLY_ACK, file descriptors, and the bounded / diagnosed failures
 * (missing socket, refused connection, no reply, hang-up, wrong reply).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fb_time.h"
#include "vu_client.h"

enum behaviour { ANSWER, SILENT, HANG_UP, WRONG_REQUEST, NACK };

struct fake {
	char path[108];
	int lfd;
	enum behaviour how;
	pthread_t th;
	struct vhu_msg last; /* last message received */
	int last_nfds;
};

static struct fake fk;

static int recv_msg(int fd, struct vhu_msg *m, int *nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 8)];
	struct iovec iov = {m, VHU_HDR_SIZE};
	struct msghdr mh = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	if (recvmsg(fd, &mh, 0) != VHU_HDR_SIZE)
		return -1;
	*nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int *fds = (int *)CMSG_DATA(c);
		for (int i = 0; i < n; i++)
			close(fds[i]);
		*nfds += n;
	}
	if (m->size && recv(fd, &m->payload, m->size, MSG_WAITALL) != (ssize_t)m->size)
		return -1;
	return 0;
}

static void *fake_main(void *arg)
{
	(void)arg;
	int c = accept(fk.lfd, NULL, NULL);
	struct vhu_msg m;

	while (c >= 0 && recv_msg(c, &m, &fk.last_nfds) == 0) {
		fk.last = m;
		if (fk.how == HANG_UP)
			break;
		if (fk.how == SILENT)
			continue;
		if (m.request == VHU_GET_FEATURES || (m.flags & VHU_FLAG_NEED_REPLY)) {
			struct vhu_msg r = {
			    .request = m.request, .flags = VHU_FLAG_REPLY | 1, .size = 8};
			r.payload.u64 = m.request == VHU_GET_FEATURES ? 0x1234 : (fk.how == NACK);
			if (fk.how == WRONG_REQUEST)
				r.request = 77;
			if (write(c, &r, VHU_HDR_SIZE + 8) < 0)
				break;
		}
	}
	if (c >= 0)
		close(c);
	return NULL;
}

static void start_fake(enum behaviour how)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	memset(&fk, 0, sizeof(fk));
	fk.how = how;
	snprintf(fk.path, sizeof(fk.path), "/tmp/bench-vuc-%d.sock", getpid());
	unlink(fk.path);
	strcpy(sa.sun_path, fk.path);
	fk.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_geq(fk.lfd, 0);
	cr_assert_eq(bind(fk.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(fk.lfd, 1), 0);
	cr_assert_eq(pthread_create(&fk.th, NULL, fake_main, NULL), 0);
}

static void stop_fake(struct vu_conn *c)
{
	vu_close(c);
	pthread_join(fk.th, NULL);
	close(fk.lfd);
	unlink(fk.path);
}

Test(vu_client, get_features_round_trip)
{
	struct vu_conn c;
	uint64_t f = 0;

	start_fake(ANSWER);
	cr_assert_eq(vu_connect(&c, fk.path, 1000), 0, "%s", c.err);
	cr_assert_eq(vu_get_u64(&c, VHU_GET_FEATURES, &f), 0, "%s", c.err);
	cr_assert_eq(f, 0x1234);
	cr_assert_eq(fk.last.request, VHU_GET_FEATURES);
	cr_assert_eq(fk.last.flags & 3, VHU_FLAG_VERSION);
	stop_fake(&c);
}

Test(vu_client, wire_layout_and_fds)
{
	struct vu_conn c;
	int efd[2] = {dup(0), dup(0)};

	start_fake(ANSWER);
	cr_assert_eq(vu_connect(&c, fk.path, 1000), 0);
	cr_assert_eq(vu_set_state(&c, VHU_SET_VRING_NUM, 3, 256), 0);
	cr_assert_eq(vu_set_vring_fd(&c, VHU_SET_VRING_KICK, 2, efd[0]), 0);
	cr_assert_eq(vu_sync(&c), 0); /* everything above has been read */
	/* the last message before the sync was the kick with one fd */
	cr_assert_eq(vu_set_vring_fd(&c, VHU_SET_VRING_CALL, 5, -1), 0);
	cr_assert_eq(vu_sync(&c), 0);
	stop_fake(&c);
	cr_assert_eq(fk.last.request, VHU_GET_FEATURES);
	close(efd[0]);
	close(efd[1]);
}

Test(vu_client, kick_message_carries_fd)
{
	struct vu_conn c;
	int fd = dup(0);

	start_fake(SILENT);
	cr_assert_eq(vu_connect(&c, fk.path, 1000), 0);
	cr_assert_eq(vu_set_vring_fd(&c, VHU_SET_VRING_KICK, 2, fd), 0);
	usleep(100000);
	cr_assert_eq(fk.last.request, VHU_SET_VRING_KICK);
	cr_assert_eq(fk.last.size, 8);
	cr_assert_eq(fk.last.payload.u64, 2);
	cr_assert_eq(fk.last_nfds, 1);
	cr_assert_eq(vu_set_vring_fd(&c, VHU_SET_VRING_CALL, 1, -1), 0);
	usleep(100000);
	cr_assert_eq(fk.last.payload.u64, 1 | VHU_VRING_NOFD);
	cr_assert_eq(fk.last_nfds, 0);
	stop_fake(&c);
	close(fd);
}

Test(vu_client, reply_ack_nack_is_an_error)
{
	struct vu_conn c;

	start_fake(NACK);
	cr_assert_eq(vu_connect(&c, fk.path, 1000), 0);
	c.proto_features = 1ull << VHU_PF_REPLY_ACK;
	cr_assert_eq(vu_set_u64(&c, VHU_SET_FEATURES, 1), -EPROTO);
	cr_assert(strstr(c.err, "refused SET_FEATURES"), "%s", c.err);
	cr_assert(fk.last.flags & VHU_FLAG_NEED_REPLY);
	stop_fake(&c);
}

Test(vu_client, no_reply_is_a_bounded_timeout)
{
	struct vu_conn c;
	uint64_t f, t0;

	start_fake(SILENT);
	cr_assert_eq(vu_connect(&c, fk.path, 200), 0);
	t0 = fb_now_ns();
	cr_assert_eq(vu_get_u64(&c, VHU_GET_FEATURES, &f), -ETIMEDOUT);
	cr_assert_lt(fb_now_ns() - t0, 2000000000ull);
	cr_assert(strstr(c.err, "no reply to GET_FEATURES"), "%s", c.err);
	stop_fake(&c);
}

Test(vu_client, hang_up_is_reported)
{
	struct vu_conn c;
	uint64_t f;

	start_fake(HANG_UP);
	cr_assert_eq(vu_connect(&c, fk.path, 1000), 0);
	cr_assert_eq(vu_get_u64(&c, VHU_GET_FEATURES, &f), -ECONNRESET);
	cr_assert(strstr(c.err, "closed the connection"), "%s", c.err);
	cr_assert(vu_peer_closed(&c));
	stop_fake(&c);
}

Test(vu_client, wrong_reply_is_a_protocol_error)
{
	struct vu_conn c;
	uint64_t f;

	start_fake(WRONG_REQUEST);
	cr_assert_eq(vu_connect(&c, fk.path, 1000), 0);
	cr_assert_eq(vu_get_u64(&c, VHU_GET_FEATURES, &f), -EPROTO);
	stop_fake(&c);
}

Test(vu_client, connect_errors_are_told_apart)
{
	struct vu_conn c;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char path[108];
	int fd;

	snprintf(path, sizeof(path), "/tmp/bench-vuc-missing-%d.sock", getpid());
	unlink(path);
	cr_assert_eq(vu_connect(&c, path, 100), -ENOENT);
	cr_assert(strstr(c.err, "no socket at"), "%s", c.err);
	/* bound but not listening: refused */
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(vu_connect(&c, path, 100), -ECONNREFUSED);
	cr_assert(strstr(c.err, "refused"), "%s", c.err);
	close(fd);
	unlink(path);
	cr_assert_eq(vu_connect(&c, "/dev/null", 100), -ENOTSOCK);
}
