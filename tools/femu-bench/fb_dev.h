/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_dev.h - one vhost-user-blk device as seen from femu-bench: the
 * connection, negotiated features, config space, and the start/stop
 * sequences (QEMU's order: SET_FEATURES, SET_MEM_TABLE, per queue
 * NUM/BASE/ADDR/KICK/CALL, then SET_VRING_ENABLE).
 */
#ifndef FB_DEV_H
#define FB_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "pmd/virtio_blk_wire.h"

#include "fb_mem.h"
#include "fb_vring.h"
#include "vu_client.h"

struct fb_dev {
	struct vu_conn conn;
	uint64_t offered;	 /* features the backend offered */
	uint64_t proto_offered;	 /* protocol features the backend offered */
	unsigned queues_offered; /* GET_QUEUE_NUM / config num_queues, 1 if unknown */
	bool have_config;
	struct virtio_blk_config cfg;
	uint64_t capacity; /* bytes (0 when the backend has no config space) */
	uint32_t blk_size; /* logical block size, bytes */
	bool readonly;
	char err[400];
};

/*
 * Connect and negotiate: SET_OWNER, GET_FEATURES, GET/SET_PROTOCOL_FEATURES,
 * GET_QUEUE_NUM, GET_CONFIG.  event_idx: negotiate VIRTIO_RING_F_EVENT_IDX if
 * offered.  Returns 0 or -errno with a message in dev->err.
 */
int fb_dev_connect(struct fb_dev *dev, const char *sock, unsigned timeout_ms, bool event_idx);

/*
 * fb_dev_connect(), retried while the backend closes the connection during
 * negotiation: a backend that serves one frontend at a time refuses a new
 * connection until it has processed the previous frontend's hang-up.
 * Gives up after timeout_ms.
 */
int fb_dev_connect_retry(struct fb_dev *dev, const char *sock, unsigned timeout_ms, bool event_idx);

/* Features femu-bench asks for (subset of what was offered). */
uint64_t fb_dev_wanted_features(const struct fb_dev *dev, bool event_idx);

/*
 * Ask for packed virtqueues (VIRTIO_F_RING_PACKED) on top of the features
 * negotiated by fb_dev_connect(): 0, or -ENOTSUP with a message in dev->err
 * when the backend does not offer them.  Queues must then be laid out packed.
 */
int fb_dev_use_packed(struct fb_dev *dev);

/*
 * Share mem and start vqs[0..n): SET_FEATURES, SET_MEM_TABLE, per queue
 * state, kick and call fds, enable, then a sync round trip.  0 or -errno.
 */
int fb_dev_start(struct fb_dev *dev, struct fb_mem *mem, struct fb_vq *vqs, unsigned n);

/* SET_MEM_TABLE for mem (one region). */
int fb_dev_set_mem_table(struct fb_dev *dev, struct fb_mem *mem);

/* Per-queue setup messages for one queue (no enable). */
int fb_dev_setup_vq(struct fb_dev *dev, struct fb_vq *vq);

/* Stop the queues (disable, GET_VRING_BASE), the connection stays open; 0 or -errno. */
int fb_dev_stop_queues(struct fb_dev *dev, struct fb_vq *vqs, unsigned n);

/* Stop the queues (disable, GET_VRING_BASE) and close the connection. */
void fb_dev_stop(struct fb_dev *dev, struct fb_vq *vqs, unsigned n);

#endif /* FB_DEV_H */
