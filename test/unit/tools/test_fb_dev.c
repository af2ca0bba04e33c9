/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fb_dev.c - femu-bench's vhost-user-blk negotiation against a scripted
 * fake backend: SET_OWNER first, features narrowed to what femu-bench uses,
 * protocol features, GET_QUEUE_NUM capped by the config's num_queues,
 * GET_CONFIG asked for sizeof(struct virtio_blk_config) and retried with the
 * older sizes when refused, capacity / block size / read-only taken from
 * the answers.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>

#include "fb_dev.h"
#include "vu_client.h"

#define FAKE_FEATURES                                                                              \
	((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_RING_F_EVENT_IDX) |                        \
	 (1ull << VHU_F_PROTOCOL_FEATURES) | (1ull << VIRTIO_BLK_F_BLK_SIZE) |                     \
	 (1ull << VIRTIO_BLK_F_MQ) | (1ull << VIRTIO_BLK_F_RO) | (1ull << 55) /* unknown */)

struct fake {
	char path[108];
	int lfd;
	pthread_t th;
	uint32_t max_config; /* GET_CONFIG larger than this gets an empty (failed) reply */
	uint32_t requests[32];
	uint32_t config_sizes[4];
	unsigned nreq, nconfig;
	uint64_t set_features, set_protocol;
};

static struct fake fk;

static void reply(int c, uint32_t req, const void *p, uint32_t size)
{
	struct vhu_msg r = {
	    .request = req, .flags = VHU_FLAG_REPLY | VHU_FLAG_VERSION, .size = size};
	memcpy(&r.payload, p, size);
	cr_assert_eq(write(c, &r, VHU_HDR_SIZE + size), (ssize_t)(VHU_HDR_SIZE + size));
}

static void answer_config(int c, const struct vhu_msg *m)
{
	struct vhu_config cfg;
	struct virtio_blk_config *bc = (struct virtio_blk_config *)cfg.region;

	memset(&cfg, 0, sizeof(cfg));
	if (fk.nconfig < 4)
		fk.config_sizes[fk.nconfig++] = m->payload.config.size;
	if (m->payload.config.size > fk.max_config) {
		reply(c, VHU_GET_CONFIG, &cfg, 0);
		return;
	}
	cfg.size = m->payload.config.size;
	bc->capacity = 2048; /* sectors: 1 MiB */
	bc->blk_size = 4096;
	bc->num_queues = 2;
	reply(c, VHU_GET_CONFIG, &cfg, 12 + cfg.size);
}

static void *fake_main(void *arg)
{
	(void)arg;
	int c = accept(fk.lfd, NULL, NULL);
	struct vhu_msg m;

	while (c >= 0 && recv(c, &m, VHU_HDR_SIZE, MSG_WAITALL) == VHU_HDR_SIZE) {
		uint64_t v;
		if (m.size && recv(c, &m.payload, m.size, MSG_WAITALL) != (ssize_t)m.size)
			break;
		if (fk.nreq < 32)
			fk.requests[fk.nreq++] = m.request;
		switch (m.request) {
		case VHU_GET_FEATURES:
			v = FAKE_FEATURES;
			reply(c, m.request, &v, 8);
			continue;
		case VHU_GET_PROTOCOL_FEATURES:
			v = (1ull << VHU_PF_MQ) | (1ull << VHU_PF_CONFIG) |
			    (1ull << VHU_PF_REPLY_ACK) | (1ull << 12);
			reply(c, m.request, &v, 8);
			continue;
		case VHU_GET_QUEUE_NUM:
			v = 4;
			reply(c, m.request, &v, 8);
			continue;
		case VHU_GET_CONFIG:
			answer_config(c, &m);
			continue;
		case VHU_SET_FEATURES:
			fk.set_features = m.payload.u64;
			break;
		case VHU_SET_PROTOCOL_FEATURES:
			fk.set_protocol = m.payload.u64;
			break;
		}
		if (m.flags & VHU_FLAG_NEED_REPLY) {
			v = 0;
			reply(c, m.request, &v, 8);
		}
	}
	if (c >= 0)
		close(c);
	return NULL;
}

static void start_fake(uint32_t max_config)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	memset(&fk, 0, sizeof(fk));
	fk.max_config = max_config;
	snprintf(fk.path, sizeof(fk.path), "/tmp/bench-fbdev-%d.sock", getpid());
	unlink(fk.path);
	strcpy(sa.sun_path, fk.path);
	fk.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(fk.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(fk.lfd, 1), 0);
	cr_assert_eq(pthread_create(&fk.th, NULL, fake_main, NULL), 0);
}

static void stop_fake(struct fb_dev *dev)
{
	vu_close(&dev->conn);
	pthread_join(fk.th, NULL);
	close(fk.lfd);
	unlink(fk.path);
}

static struct fb_dev dev;

Test(fb_dev, negotiation_against_a_full_size_config)
{
	start_fake(4096);
	cr_assert_eq(fb_dev_connect(&dev, fk.path, 1000, false), 0, "%s", dev.err);
	cr_assert_eq(fk.requests[0], VHU_SET_OWNER);
	cr_assert_eq(fk.requests[1], VHU_GET_FEATURES);
	cr_assert_eq(dev.offered, FAKE_FEATURES);
	/* wanted: known bits only, EVENT_IDX not asked for */
	cr_assert_eq(dev.conn.features,
		     FAKE_FEATURES & ~(1ull << VIRTIO_RING_F_EVENT_IDX) & ~(1ull << 55));
	/* protocol: MQ, CONFIG, REPLY_ACK; not the offered INFLIGHT_SHMFD (12) */
	cr_assert_eq(fk.set_protocol,
		     (1ull << VHU_PF_MQ) | (1ull << VHU_PF_CONFIG) | (1ull << VHU_PF_REPLY_ACK));
	cr_assert_eq(fk.nconfig, 1);
	cr_assert_eq(fk.config_sizes[0], sizeof(struct virtio_blk_config));
	cr_assert_eq(dev.capacity, 1 << 20);
	cr_assert_eq(dev.blk_size, 4096);
	cr_assert_eq(dev.queues_offered, 2, "GET_QUEUE_NUM 4 capped by num_queues 2");
	cr_assert(dev.readonly);
	stop_fake(&dev);
}

Test(fb_dev, event_idx_when_asked)
{
	start_fake(4096);
	cr_assert_eq(fb_dev_connect(&dev, fk.path, 1000, true), 0, "%s", dev.err);
	cr_assert(dev.conn.features & (1ull << VIRTIO_RING_F_EVENT_IDX));
	stop_fake(&dev);
}

Test(fb_dev, config_retried_with_older_sizes)
{
	uint32_t older = offsetof(struct virtio_blk_config, write_zeroes_may_unmap) + 4;

	start_fake(older);
	cr_assert_eq(fb_dev_connect(&dev, fk.path, 1000, false), 0, "%s", dev.err);
	cr_assert_eq(fk.nconfig, 2);
	cr_assert_eq(fk.config_sizes[0], sizeof(struct virtio_blk_config));
	cr_assert_eq(fk.config_sizes[1], older);
	cr_assert_eq(dev.capacity, 1 << 20);
	stop_fake(&dev);
}

Test(fb_dev, config_refused_at_every_size_is_an_error)
{
	start_fake(8);
	cr_assert_lt(fb_dev_connect(&dev, fk.path, 1000, false), 0);
	cr_assert(strstr(dev.err, "GET_CONFIG"), "%s", dev.err);
	cr_assert_eq(fk.nconfig, 3);
	stop_fake(&dev);
}
