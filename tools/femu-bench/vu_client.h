/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vu_client.h - the frontend side of the vhost-user protocol (QEMU's role):
 * connect to a backend's unix socket, send messages with file descriptors,
 * receive replies with a bounded wait.  The message layouts, request codes
 * and feature bits are pmd/virtio_blk_wire.h's, shared with femud.
 */
#ifndef VU_CLIENT_H
#define VU_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmd/virtio_blk_wire.h"

struct vu_conn {
	int fd;
	unsigned timeout_ms;
	uint64_t features;	 /* negotiated virtio features */
	uint64_t proto_features; /* negotiated protocol features */
	char err[256];		 /* last error, human readable */
};

/*
 * Connect to the backend socket.  Errors distinguish a missing socket, a
 * refused connection and a path that is not a socket.  Returns 0 or -errno.
 */
int vu_connect(struct vu_conn *c, const char *path, unsigned timeout_ms);

void vu_close(struct vu_conn *c);

/* Send a message (header + size bytes of payload) with fds.  0 or -errno. */
int vu_send(struct vu_conn *c, uint32_t request, uint32_t flags, const void *payload, uint32_t size,
	    const int *fds, unsigned nfds);

/* Send raw bytes (for malformed messages). */
int vu_send_raw(struct vu_conn *c, const void *buf, size_t len, const int *fds, unsigned nfds);

/*
 * Receive one reply to request within the timeout; checks the REPLY flag and
 * the request code.  Returns the payload size or -errno (-ETIMEDOUT,
 * -ECONNRESET when the backend closed the connection).
 */
int vu_recv(struct vu_conn *c, uint32_t request, struct vhu_msg *reply);

/* GET_* returning a u64. */
int vu_get_u64(struct vu_conn *c, uint32_t request, uint64_t *val);

/*
 * A SET_* message; when REPLY_ACK was negotiated the backend's ack is awaited
 * and a non-zero ack is an error (-EPROTO).
 */
int vu_set(struct vu_conn *c, uint32_t request, const void *payload, uint32_t size, const int *fds,
	   unsigned nfds);

int vu_set_u64(struct vu_conn *c, uint32_t request, uint64_t val);

int vu_set_state(struct vu_conn *c, uint32_t request, uint32_t index, uint32_t num);

/* SET_VRING_KICK / SET_VRING_CALL with an eventfd (fd < 0: NOFD flag). */
int vu_set_vring_fd(struct vu_conn *c, uint32_t request, uint32_t index, int fd);

/* GET_CONFIG of size bytes at offset 0 into out; returns bytes answered or -errno. */
int vu_get_config(struct vu_conn *c, void *out, uint32_t size);

/*
 * GET_CONFIG of size bytes at offset, framed as QEMU does (payload 12 + size
 * bytes) or, with full_payload, as SPDK's virtio-user does (payload 12 + 256,
 * the wanted bytes in the config header's size).  The reply must keep the
 * framing (payload size equal to the request's, as QEMU checks: "bad msg
 * size") and answer size bytes.  Returns size or -errno.
 */
int vu_get_config_framed(struct vu_conn *c, void *out, uint32_t offset, uint32_t size,
			 bool full_payload);

/*
 * Round trip (GET_FEATURES) so that every message sent before has been
 * processed by the backend.  0 or -errno.
 */
int vu_sync(struct vu_conn *c);

/* True when the backend has closed the connection (non-blocking check). */
bool vu_peer_closed(struct vu_conn *c);

const char *vu_request_name(uint32_t request);

#endif /* VU_CLIENT_H */
