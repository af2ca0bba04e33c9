/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_dev.c - vhost-user-blk negotiation, memory table, vring setup.
 */
#include "fb_dev.h"
#include "fb_time.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int dev_err(struct fb_dev *dev, int rc, const char *what)
{
	snprintf(dev->err, sizeof(dev->err), "%s: %s", what,
		 dev->conn.err[0] ? dev->conn.err : strerror(-rc));
	return rc;
}

uint64_t fb_dev_wanted_features(const struct fb_dev *dev, bool event_idx)
{
	uint64_t want = VIRTIO_BLK_WIRE_FEATURES | (1ull << VIRTIO_BLK_F_RO);

	if (event_idx)
		want |= 1ull << VIRTIO_RING_F_EVENT_IDX;
	return want & dev->offered;
}

static int negotiate_protocol(struct fb_dev *dev)
{
	uint64_t want = VHU_BLK_PROTOCOL_FEATURES;
	int rc;

	if (!(dev->offered & (1ull << VHU_F_PROTOCOL_FEATURES)))
		return 0;
	rc = vu_get_u64(&dev->conn, VHU_GET_PROTOCOL_FEATURES, &dev->proto_offered);
	if (rc < 0)
		return dev_err(dev, rc, "GET_PROTOCOL_FEATURES");
	want &= dev->proto_offered;
	rc = vu_set_u64(&dev->conn, VHU_SET_PROTOCOL_FEATURES, want);
	if (rc < 0)
		return dev_err(dev, rc, "SET_PROTOCOL_FEATURES");
	dev->conn.proto_features = want; /* REPLY_ACK applies from now on */
	return 0;
}

static int read_queue_num(struct fb_dev *dev)
{
	uint64_t n;
	int rc;

	dev->queues_offered = 1;
	if (!(dev->conn.proto_features & (1ull << VHU_PF_MQ)))
		return 0;
	rc = vu_get_u64(&dev->conn, VHU_GET_QUEUE_NUM, &n);
	if (rc < 0)
		return dev_err(dev, rc, "GET_QUEUE_NUM");
	if (n == 0 || n > 0xffff) {
		snprintf(dev->err, sizeof(dev->err), "GET_QUEUE_NUM: backend answered %llu",
			 (unsigned long long)n);
		return -EPROTO;
	}
	dev->queues_offered = (unsigned)n;
	return 0;
}

static const uint32_t cfg_sizes[] = {
    sizeof(struct virtio_blk_config),
    offsetof(struct virtio_blk_config, write_zeroes_may_unmap) + 4, /* Linux <= 6.2 */
    offsetof(struct virtio_blk_config, max_discard_sectors),	    /* up to num_queues */
};

static int read_config(struct fb_dev *dev)
{
	int rc;

	dev->blk_size = 512;
	if (!(dev->conn.proto_features & (1ull << VHU_PF_CONFIG)))
		return 0;
	/*
	 * Ask for exactly sizeof(struct virtio_blk_config) of our headers; a
	 * backend built with an older (smaller) struct refuses that with an
	 * empty reply (qemu-storage-daemon 7.2 knows 60 bytes, these headers
	 * 72), so retry with the older sizes.
	 */
	for (unsigned i = 0; i < sizeof(cfg_sizes) / sizeof(cfg_sizes[0]); i++) {
		memset(&dev->cfg, 0, sizeof(dev->cfg));
		dev->conn.err[0] = '\0';
		rc = vu_get_config(&dev->conn, &dev->cfg, cfg_sizes[i]);
		if (rc != -EPROTO || vu_peer_closed(&dev->conn))
			break;
	}
	if (rc < 0)
		return dev_err(dev, rc, "GET_CONFIG");
	if (rc < (int)offsetof(struct virtio_blk_config, geometry)) {
		snprintf(dev->err, sizeof(dev->err), "GET_CONFIG: only %d bytes", rc);
		return -EPROTO;
	}
	dev->have_config = true;
	dev->capacity = dev->cfg.capacity * 512ull;
	if ((dev->offered & (1ull << VIRTIO_BLK_F_BLK_SIZE)) && dev->cfg.blk_size >= 512)
		dev->blk_size = dev->cfg.blk_size;
	if ((dev->offered & (1ull << VIRTIO_BLK_F_MQ)) && dev->cfg.num_queues &&
	    dev->cfg.num_queues < dev->queues_offered)
		dev->queues_offered = dev->cfg.num_queues;
	return 0;
}

int fb_dev_connect(struct fb_dev *dev, const char *sock, unsigned timeout_ms, bool event_idx)
{
	int rc;

	memset(dev, 0, sizeof(*dev));
	rc = vu_connect(&dev->conn, sock, timeout_ms);
	if (rc < 0) {
		snprintf(dev->err, sizeof(dev->err), "%s", dev->conn.err);
		return rc;
	}
	rc = vu_set(&dev->conn, VHU_SET_OWNER, NULL, 0, NULL, 0);
	if (rc < 0)
		return dev_err(dev, rc, "SET_OWNER");
	rc = vu_get_u64(&dev->conn, VHU_GET_FEATURES, &dev->offered);
	if (rc < 0)
		return dev_err(dev, rc, "GET_FEATURES");
	dev->conn.features = fb_dev_wanted_features(dev, event_idx);
	dev->readonly = dev->offered & (1ull << VIRTIO_BLK_F_RO);
	rc = negotiate_protocol(dev);
	if (rc == 0)
		rc = read_queue_num(dev);
	if (rc == 0)
		rc = read_config(dev);
	return rc;
}

int fb_dev_connect_retry(struct fb_dev *dev, const char *sock, unsigned timeout_ms, bool event_idx)
{
	uint64_t end = fb_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	int rc;

	for (;;) {
		rc = fb_dev_connect(dev, sock, timeout_ms, event_idx);
		if (rc != -ECONNRESET && rc != -EPIPE)
			return rc;
		vu_close(&dev->conn);
		if (fb_now_ns() >= end)
			return rc;
		usleep(10000);
	}
}

int fb_dev_use_packed(struct fb_dev *dev)
{
	if (!(dev->offered & (1ull << VIRTIO_F_RING_PACKED))) {
		snprintf(dev->err, sizeof(dev->err),
			 "--packed: the backend does not offer packed virtqueues "
			 "(VIRTIO_F_RING_PACKED, feature bit %d; offered 0x%llx)",
			 VIRTIO_F_RING_PACKED, (unsigned long long)dev->offered);
		return -ENOTSUP;
	}
	dev->conn.features |= 1ull << VIRTIO_F_RING_PACKED;
	return 0;
}

int fb_dev_set_mem_table(struct fb_dev *dev, struct fb_mem *mem)
{
	struct vhu_mem_table t;
	int rc;

	memset(&t, 0, sizeof(t));
	t.nregions = 1;
	t.region[0].gpa = mem->gpa_base;
	t.region[0].size = mem->size;
	t.region[0].uaddr = (uint64_t)(uintptr_t)mem->base;
	t.region[0].mmap_offset = 0;
	rc = vu_set(&dev->conn, VHU_SET_MEM_TABLE, &t, 8 + sizeof(struct vhu_mem_region), &mem->fd,
		    1);
	if (rc < 0)
		return dev_err(dev, rc, "SET_MEM_TABLE");
	return 0;
}

int fb_dev_setup_vq(struct fb_dev *dev, struct fb_vq *vq)
{
	struct vhu_vring_addr a = {.index = vq->index};
	char what[64];
	int rc;

	fb_vq_addrs(vq, &a.desc, &a.avail, &a.used);
	snprintf(what, sizeof(what), "queue %u SET_VRING_NUM", vq->index);
	rc = vu_set_state(&dev->conn, VHU_SET_VRING_NUM, vq->index, vq->size);
	if (rc == 0) {
		snprintf(what, sizeof(what), "queue %u SET_VRING_BASE", vq->index);
		rc = vu_set_state(&dev->conn, VHU_SET_VRING_BASE, vq->index, fb_vq_base(vq));
	}
	if (rc == 0) {
		snprintf(what, sizeof(what), "queue %u SET_VRING_ADDR", vq->index);
		rc = vu_set(&dev->conn, VHU_SET_VRING_ADDR, &a, sizeof(a), NULL, 0);
	}
	if (rc == 0) {
		snprintf(what, sizeof(what), "queue %u SET_VRING_KICK", vq->index);
		rc = vu_set_vring_fd(&dev->conn, VHU_SET_VRING_KICK, vq->index, vq->kick_fd);
	}
	if (rc == 0) {
		snprintf(what, sizeof(what), "queue %u SET_VRING_CALL", vq->index);
		rc = vu_set_vring_fd(&dev->conn, VHU_SET_VRING_CALL, vq->index, vq->call_fd);
	}
	return rc < 0 ? dev_err(dev, rc, what) : 0;
}

int fb_dev_start(struct fb_dev *dev, struct fb_mem *mem, struct fb_vq *vqs, unsigned n)
{
	int rc = vu_set_u64(&dev->conn, VHU_SET_FEATURES, dev->conn.features);

	if (rc < 0)
		return dev_err(dev, rc, "SET_FEATURES");
	rc = fb_dev_set_mem_table(dev, mem);
	for (unsigned i = 0; rc == 0 && i < n; i++)
		rc = fb_dev_setup_vq(dev, &vqs[i]);
	if (rc < 0)
		return rc;
	if (dev->conn.features & (1ull << VHU_F_PROTOCOL_FEATURES))
		for (unsigned i = 0; i < n; i++) {
			rc = vu_set_state(&dev->conn, VHU_SET_VRING_ENABLE, vqs[i].index, 1);
			if (rc < 0)
				return dev_err(dev, rc, "SET_VRING_ENABLE");
		}
	rc = vu_sync(&dev->conn);
	return rc < 0 ? dev_err(dev, rc, "sync after start") : 0;
}

int fb_dev_stop_queues(struct fb_dev *dev, struct fb_vq *vqs, unsigned n)
{
	struct vhu_vring_state s;
	struct vhu_msg r;

	if (dev->conn.fd < 0)
		return -EBADF;
	for (unsigned i = 0; i < n; i++) {
		if (dev->conn.features & (1ull << VHU_F_PROTOCOL_FEATURES))
			if (vu_set_state(&dev->conn, VHU_SET_VRING_ENABLE, vqs[i].index, 0) < 0)
				return -EIO;
		s.index = vqs[i].index;
		s.num = 0;
		if (vu_send(&dev->conn, VHU_GET_VRING_BASE, 0, &s, sizeof(s), NULL, 0) < 0 ||
		    vu_recv(&dev->conn, VHU_GET_VRING_BASE, &r) < 0)
			return -EIO;
	}
	return 0;
}

void fb_dev_stop(struct fb_dev *dev, struct fb_vq *vqs, unsigned n)
{
	fb_dev_stop_queues(dev, vqs, n);
	vu_close(&dev->conn);
}
