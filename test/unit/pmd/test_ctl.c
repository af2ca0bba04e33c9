/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_ctl.c - pmd_blk.c's control path over a stubbed rte_vhost
 * (vhost_stub.c): queues stopped around SET_MEM_TABLE and restarted where
 * they were, GET_VRING_BASE storing the indexes rte_vhost replies with
 * (completions still held are posted first), SET_VRING_BASE near the
 * 16-bit wrap, inflight requests replayed oldest first, a taken connection
 * id refused, GET_QUEUE_NUM answered; in the pre hook, a memory table whose
 * file is short refused before rte_vhost maps it, and the fds of messages
 * femud answers itself closed (the hooks get rte_vhost 22.11's message
 * context, pmd/vhu_ctx.h); a second connection of the same frontend that
 * starts a queue on the same ring takes it from the old connection;
 * GET_INFLIGHT_FD answered with a named file of femud's, and a packed queue
 * that starts on a new region taking its position from the file an earlier
 * femud left for the same ring.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fake_guest.h"
#include <fcntl.h>

#include "pmd/inflight_file.h"
#include "pmd/mem_fault.h"
#include "pmd/pmd.h"
#include "pmd/vhu_ctx.h"
#include "pmd/virtio_blk_wire.h"
#include "pmd/vq_guard.h"
#include "vhost_stub.h"

#define QSZ 16
#define STATUS(i) FG_REQ_STATUS(i)

static struct fake_guest g;
static struct fake_model m;
static struct pmd_blk *dev;
static char dir[64];
static struct vring_desc *desc;
static struct vring_avail *avail;
static struct vring_used *used;

static void setup(void)
{
	struct pmd_blk_params p = {
	    .queues = 2, .blk_size = 512, .capacity_bytes = 1ULL << 20, .sock_mode = 0600};
	struct pmd_blk_target unused;
	char err[256] = "";

	ut_stub_reset();
	fg_init(&g);
	fg_target(&unused, &m, 1ULL << 20); /* resets the recording model */
	m.base.ops = &fake_model_ops;
	snprintf(dir, sizeof(dir), "/tmp/test_ctl.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	pmd_set_inflight_dir(dir); /* femud's inflight files, beside the socket */
	snprintf(ut_ifname, sizeof(ut_ifname), "%s/blk.sock", dir);
	p.path = ut_ifname;
	cr_assert_eq(pmd_blk_create(&p, &fake_model_ops, &m.base, &dev, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_not_null(ut_dev_ops);
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
	cr_assert_not_null(ut_ext_ops);

	desc = (struct vring_desc *)g.b;
	avail = (struct vring_avail *)(g.b + 0x1000);
	used = (struct vring_used *)(g.b + 0x2000);
	/* memory table checks want a file behind each region, as long as the region */
	for (uint32_t i = 0; i < g.mem->nregions; i++) {
		int fd = memfd_create("test_ctl", MFD_CLOEXEC);

		cr_assert_geq(fd, 0);
		cr_assert_eq(ftruncate(fd, (off_t)g.mem->regions[i].size), 0);
		g.mem->regions[i].fd = fd;
		g.mem->regions[i].mmap_addr = (void *)(uintptr_t)g.mem->regions[i].host_user_addr;
		g.mem->regions[i].mmap_size = g.mem->regions[i].size;
	}
	ut_mem = g.mem;
	ut_vrings[0].vr.desc = desc;
	ut_vrings[0].vr.avail = avail;
	ut_vrings[0].vr.used = used;
	ut_vrings[0].vr.size = QSZ;
}

static void teardown(void)
{
	ut_dev_ops->destroy_connection(ut_vid);
	pmd_blk_destroy(dev);
	rmdir(dir);
	for (uint32_t i = 0; i < g.mem->nregions; i++)
		close(g.mem->regions[i].fd);
	fg_fini(&g);
}

TestSuite(ctl, .init = setup, .fini = teardown);

/* Put a 4 KiB read of sector `sector` as chain i (head 3i) in avail slot `slot`. */
static void post_read_at(unsigned i, uint64_t sector, uint16_t slot)
{
	avail->ring[slot % QSZ] = fg_read_chain(&g, desc, i, sector);
}

static void post_read(unsigned i, uint64_t sector)
{
	post_read_at(i, sector, avail->idx);
	avail->idx++;
}

/* A message context as rte_vhost hands it to the hooks: no fds (all -1). */
static void ctx_init(struct pmd_vhu_ctx *c, uint32_t request)
{
	memset(c, 0, sizeof(*c));
	c->m.msg.request = request;
	c->m.msg.flags = VHU_FLAG_VERSION;
	for (int i = 0; i < VHU_MAX_FDS; i++)
		c->fds[i] = -1;
}

/* Attach fd as the context's next fd. */
static void ctx_add_fd(struct pmd_vhu_ctx *c, int fd)
{
	c->fds[c->fd_num++] = fd;
}

/* A vring-state message through connection vid's pre or post hook. */
static enum rte_vhost_msg_result hook_of(int vid, bool pre, uint32_t request, uint32_t index)
{
	struct pmd_vhu_ctx c;

	ctx_init(&c, request);
	c.m.msg.payload.state.index = index;
	c.m.msg.size = sizeof(c.m.msg.payload.state);
	return pre ? ut_ext_ops->pre_msg_handle(vid, &c) : ut_ext_ops->post_msg_handle(vid, &c);
}

static enum rte_vhost_msg_result hook(bool pre, uint32_t request, uint32_t index)
{
	return hook_of(ut_vid, pre, request, index);
}

/* A SET_MEM_TABLE of one region of size bytes backed by fd. */
static void ctx_mem_table(struct pmd_vhu_ctx *c, int fd, uint64_t size)
{
	ctx_init(c, VHU_SET_MEM_TABLE);
	c->m.msg.size = 8 + sizeof(struct vhu_mem_region);
	c->m.msg.payload.mem.nregions = 1;
	c->m.msg.payload.mem.region[0].size = size;
	c->m.msg.payload.mem.region[0].uaddr = 0x10000;
	ctx_add_fd(c, fd);
}

static int memfd_of(uint64_t size)
{
	int fd = memfd_create("test_ctl", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)size), 0);
	return fd;
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static uint8_t status_of(unsigned i)
{
	return *(uint8_t *)fg_host(&g, STATUS(i));
}

Test(ctl, enable_starts_the_queue_from_the_vring_base)
{
	ut_vrings[0].last_avail = 5;
	ut_vrings[0].last_used = 5;
	avail->idx = 5;
	used->idx = 5;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_not_null(ut_queue(0));
	cr_assert_eq(ut_queue(0)->last_avail, 5);
	cr_assert_eq(ut_queue(0)->used_idx, 5);
	post_read(0, 8);
	ut_sweep(100);
	cr_assert_eq(m.calls, 1);
	cr_assert_eq(m.req[0].offset, 4096);
	cr_assert_eq(used->idx, 6);
	cr_assert_eq(used->ring[5].id, 0);
	/* an enable of a queue the device does not offer is ignored */
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 2, 1), 0);
	cr_assert_null(ut_queue(2));
}

Test(ctl, set_mem_table_stops_and_restarts_where_it_was)
{
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	post_read(0, 0);
	post_read(1, 8);
	ut_sweep(100);
	cr_assert_eq(used->idx, 2);

	cr_assert_eq(hook(true, VHU_SET_MEM_TABLE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_null(ut_queue(0), "the poller must let go before rte_vhost unmaps");
	cr_assert_eq(ut_vrings[0].last_avail, 2);
	cr_assert_eq(ut_vrings[0].last_used, 2);
	post_read(2, 16); /* the guest goes on; nobody serves it while stopped */
	cr_assert_eq(m.calls, 2);

	cr_assert_eq(hook(false, VHU_SET_MEM_TABLE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_not_null(ut_queue(0), "restarted by the post hook");
	cr_assert_eq(ut_queue(0)->last_avail, 2);
	ut_sweep(200);
	cr_assert_eq(m.calls, 3);
	cr_assert_eq(m.req[2].offset, 16 * 512);
	cr_assert_eq(used->idx, 3);
	cr_assert_eq(used->ring[2].id, 6);
	cr_assert_eq(status_of(2), VIRTIO_BLK_S_OK);
}

/*
 * A frontend reconnects on the same memory and rings before femud saw the
 * old connection hang up: when the new connection's queue starts, the old
 * queue on the same ring is taken back without posting its pending
 * completion (nothing more is written to the ring by it), and the old
 * connection never starts a queue again.
 */
Test(ctl, a_new_connection_on_the_same_ring_takes_it_from_the_old_one)
{
	ut_vid2 = ut_vid + 1;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	post_read(0, 0);
	ut_sweep(100);
	cr_assert_eq(used->idx, 1);
	m.due_delta = 1000000000ull; /* the next one stays pending on the old queue */
	post_read(1, 8);
	ut_sweep(200);
	cr_assert_eq(used->idx, 1);
	cr_assert_eq(ut_queue(0)->vid, ut_vid);

	ut_vrings[0].last_avail = 2; /* the new connection continues at the ring's indexes */
	ut_vrings[0].last_used = 1;
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid2), 0);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid2, 0, 1), 0);
	cr_assert_eq(ut_nattached, 1, "one queue serves the ring");
	cr_assert_eq(ut_queue(0)->vid, ut_vid2);
	cr_assert_eq(ut_nabandoned, 1);
	cr_assert_not_null(strstr(ut_log, "older connection"), "%s", ut_log);
	ut_sweep(5000000000ull);
	cr_assert_eq(used->idx, 1, "the old queue's pending completion was not posted");
	cr_assert_eq(status_of(1), 0xff);

	/* the old connection's queue does not come back */
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_eq(ut_nattached, 1);
	cr_assert_eq(ut_queue(0)->vid, ut_vid2);
	/* the new one serves the ring */
	m.due_delta = 0;
	post_read(2, 16);
	ut_sweep(6000000000ull);
	cr_assert_eq(used->idx, 2);
	cr_assert_eq(status_of(2), VIRTIO_BLK_S_OK);
	ut_dev_ops->destroy_connection(ut_vid2);
}

/*
 * Connection ut_vid2 as another frontend: its own files behind the same host
 * addresses (its rings are not the first connection's).
 */
static void second_frontend(void)
{
	size_t sz = sizeof(*g.mem) + g.mem->nregions * sizeof(g.mem->regions[0]);

	ut_mem2 = malloc(sz);
	cr_assert_not_null(ut_mem2);
	memcpy(ut_mem2, g.mem, sz);
	for (uint32_t i = 0; i < ut_mem2->nregions; i++)
		ut_mem2->regions[i].fd = memfd_of(ut_mem2->regions[i].size);
	ut_vid2 = ut_vid + 1;
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid2), 0);
}

static void second_frontend_gone(void)
{
	ut_dev_ops->destroy_connection(ut_vid2);
	for (uint32_t i = 0; i < ut_mem2->nregions; i++)
		close(ut_mem2->regions[i].fd);
	free(ut_mem2);
	ut_mem2 = NULL;
}

/*
 * Two live frontends on one socket: a queue index is driven by one of them.
 * The second's start is refused (logged) and its requests wait; it starts
 * when the first gives the queue back with GET_VRING_BASE (QEMU's live
 * migration: the source stops before the destination starts), not when the
 * first merely disables it to replace an fd.
 */
Test(ctl, a_second_frontend_waits_until_the_first_gives_the_queue_back)
{
	second_frontend();
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid2, 0, 1), 0);
	cr_assert_eq(ut_nattached, 1);
	cr_assert_eq(ut_queue(0)->vid, ut_vid);
	cr_assert_not_null(strstr(ut_last_log, "drives this queue"), "%s", ut_last_log);
	/* another queue index is free for it */
	ut_vrings[1] = ut_vrings[0];
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid2, 1, 1), 0);
	cr_assert_eq(ut_nattached, 2);
	cr_assert_eq(ut_queue(1)->vid, ut_vid2);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid2, 1, 0), 0);

	/* the first connection disables and re-enables its queue (new call fd): it keeps it */
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 0), 0);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_eq(ut_queue(0)->vid, ut_vid);
	post_read(0, 0);
	ut_sweep(100);
	cr_assert_eq(used->idx, 1);
	cr_assert_eq(ut_queue(0)->vid, ut_vid);

	/* GET_VRING_BASE: the first gives queue 0 back, the waiting one starts at once */
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_eq(hook(false, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_not_null(ut_queue(0));
	cr_assert_eq(ut_queue(0)->vid, ut_vid2);
	cr_assert_eq(ut_queue(0)->last_avail, 1, "it continues at the index stored");
	post_read(1, 8);
	ut_sweep(200);
	cr_assert_eq(used->idx, 2);
	cr_assert_eq(status_of(1), VIRTIO_BLK_S_OK);
	/* the first connection cannot take it back while the second drives it */
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_eq(ut_queue(0)->vid, ut_vid2);
	second_frontend_gone();
}

/* The connect hook of the next connection: its accepted socket, its frontend's pid. */
static int next_sock = -1;
static pid_t next_pid;
static int sock_hook(const char *path, void *arg, struct pmd_peer *peer)
{
	(void)path;
	(void)arg;
	peer->sock_fd = next_sock;
	peer->pid = next_pid;
	return 0;
}

/*
 * A frontend hung up with a request pending, and before rte_vhost processed
 * it, another frontend (the same program's next connection, on memory the
 * first may have reused) starts a queue, another index even: the hung-up
 * connection's queues stop at that moment and write nothing more (its
 * pending completion is not posted), and never start again.
 */
Test(ctl, a_hung_up_connection_stops_when_another_starts_a_queue)
{
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ut_dev_ops->destroy_connection(ut_vid);
	pmd_set_connect_hook(sock_hook, NULL);
	next_sock = sv[0];
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
	next_sock = -1;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	m.due_delta = 1000000000ull;
	post_read(0, 0);
	ut_sweep(100);
	cr_assert_eq(used->idx, 0);
	second_frontend();
	ut_vrings[1] = ut_vrings[0];
	ut_vrings[1].last_avail = 1; /* nothing for it to take from this ring */
	/* still connected: its queue 0 is left alone */
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid2, 1, 1), 0);
	cr_assert_eq(ut_nattached, 2);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid2, 1, 0), 0);

	close(sv[1]); /* the frontend is gone; rte_vhost has not noticed yet */
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid2, 1, 1), 0);
	cr_assert_eq(ut_nattached, 1);
	cr_assert_eq(ut_queue(1)->vid, ut_vid2);
	cr_assert_null(ut_queue(0));
	cr_assert_eq(ut_nabandoned, 1);
	cr_assert_not_null(strstr(ut_log, "has hung up"), "%s", ut_log);
	ut_sweep(5000000000ull);
	cr_assert_eq(used->idx, 0, "nothing is written for the hung-up connection");
	cr_assert_eq(status_of(0), 0xff);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_null(ut_queue(0), "it never starts a queue again");
	pmd_set_connect_hook(NULL, NULL);
	close(sv[0]);
	second_frontend_gone();
}

/* SET_VRING_ADDR on a running queue (QEMU: dirty logging on): it moves to the new rings. */
Test(ctl, vring_addr_on_a_running_queue_restarts_it_on_the_new_rings)
{
	struct vring_used *old_used = used;

	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	post_read(0, 0);
	ut_sweep(100);
	cr_assert_eq(used->idx, 1);

	cr_assert_eq(hook(true, VHU_SET_VRING_ADDR, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_null(ut_queue(0), "stopped before rte_vhost re-translates");
	/* the frontend's new rings, as rte_vhost hands them out after translating */
	memcpy(g.b + 0x4000, desc, 16 * QSZ);
	desc = (struct vring_desc *)(g.b + 0x4000);
	avail = (struct vring_avail *)(g.b + 0x5000);
	used = (struct vring_used *)(g.b + 0x6000);
	avail->idx = 1;
	used->idx = 1;
	ut_vrings[0].vr.desc = desc;
	ut_vrings[0].vr.avail = avail;
	ut_vrings[0].vr.used = used;
	cr_assert_eq(hook(false, VHU_SET_VRING_ADDR, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_not_null(ut_queue(0), "restarted by the post hook");
	cr_assert_eq(ut_queue(0)->last_avail, 1, "at the same index");
	post_read(1, 8);
	ut_sweep(200);
	cr_assert_eq(m.calls, 2);
	cr_assert_eq(used->idx, 2, "served on the new rings");
	cr_assert_eq(old_used->idx, 1, "the old used ring is left alone");
	/* a vring address message for a queue that is not running stops nothing */
	cr_assert_eq(hook(true, VHU_SET_VRING_ADDR, 1), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_not_null(ut_queue(0));
}

Test(ctl, set_mem_table_leaves_a_stopped_queue_stopped)
{
	cr_assert_eq(hook(true, VHU_SET_MEM_TABLE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_eq(hook(false, VHU_SET_MEM_TABLE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_null(ut_queue(0));
	cr_assert_eq(ut_vrings[0].set_base_calls, 0);
}

Test(ctl, get_vring_base_posts_held_completions_and_stores_the_indexes)
{
	m.due_delta = 1000000000; /* the model holds the request for a second */
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	post_read(0, 0);
	post_read(1, 8);
	post_read(2, 16);
	ut_sweep(100);
	cr_assert_eq(m.calls, 3);
	cr_assert_eq(used->idx, 0, "completions wait for their due time");

	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_null(ut_queue(0));
	/* rte_vhost replies with last_avail: what femud stored, after posting all three */
	cr_assert_eq(ut_vrings[0].last_avail, 3);
	cr_assert_eq(ut_vrings[0].last_used, 3);
	cr_assert_eq(used->idx, 3);
	for (unsigned i = 0; i < 3; i++)
		cr_assert_eq(status_of(i), VIRTIO_BLK_S_OK);
}

/*
 * A packed ring through the control path: the queue starts at the position
 * and wrap counter of the vring base (bit 15), serves a chain across the
 * ring's end, and GET_VRING_BASE stores both positions with their wrap
 * counters after posting the held completion.
 */
Test(ctl, packed_ring_starts_and_stops_with_its_wrap_counters)
{
	struct vring_packed_desc *ring = (struct vring_packed_desc *)g.b;
	struct virtio_blk_outhdr h = {.type = VIRTIO_BLK_T_IN, .sector = 8};
	const uint16_t avail_w0 = 1u << VRING_PACKED_DESC_F_USED; /* available under wrap 0 */
	const uint16_t used_w1 =
	    (1u << VRING_PACKED_DESC_F_AVAIL) | (1u << VRING_PACKED_DESC_F_USED);

	ut_features = (1ULL << VIRTIO_F_RING_PACKED) | (1ULL << VIRTIO_RING_F_EVENT_IDX);
	ut_vrings[0].vr.desc_packed = ring;
	ut_vrings[0].vr.driver_event = (struct vring_packed_desc_event *)(g.b + 0x1000);
	ut_vrings[0].vr.device_event = (struct vring_packed_desc_event *)(g.b + 0x1004);
	ut_vrings[0].last_avail = 14; /* position 14, wrap counters 0 */
	ut_vrings[0].last_used = 14;
	m.due_delta = 1000000000;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_not_null(ut_queue(0));
	cr_assert(ut_queue(0)->packed);
	cr_assert_not_null(strstr(ut_log, "packed ring"), "%s", ut_log);
	cr_assert_eq(ut_queue(0)->last_avail, 14);
	cr_assert_not(ut_queue(0)->pk.avail_wrap);
	/* request 0's chain at positions 14, 15 and 0 (past the end: wrap 1) */
	memcpy(fg_host(&g, FG_REQ_HDR(0)), &h, sizeof(h));
	ring[14] = (struct vring_packed_desc){
	    .addr = FG_REQ_HDR(0), .len = 16, .id = 3, .flags = VRING_DESC_F_NEXT | avail_w0};
	ring[15] =
	    (struct vring_packed_desc){.addr = FG_REQ_DATA(0),
				       .len = 4096,
				       .id = 3,
				       .flags = VRING_DESC_F_NEXT | VRING_DESC_F_WRITE | avail_w0};
	ring[0] = (struct vring_packed_desc){.addr = FG_REQ_STATUS(0),
					     .len = 1,
					     .id = 3,
					     .flags = VRING_DESC_F_WRITE |
						      (1u << VRING_PACKED_DESC_F_AVAIL)};
	ut_sweep(100);
	cr_assert_eq(m.calls, 1);
	cr_assert_eq(m.req[0].offset, 4096);
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_null(ut_queue(0));
	cr_assert_eq(status_of(0), VIRTIO_BLK_S_OK);
	/* the used descriptor at position 14, under used wrap 0: flags both clear */
	cr_assert_eq(ring[14].id, 3);
	cr_assert_eq(ring[14].len, 4097);
	cr_assert_eq(ring[14].flags & used_w1, 0);
	cr_assert_eq(ut_vrings[0].last_avail, 1 | 1u << 15);
	cr_assert_eq(ut_vrings[0].last_used, 1 | 1u << 15);
}

Test(ctl, get_vring_base_of_an_unknown_queue_stops_nothing)
{
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 1), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 100000), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_not_null(ut_queue(0));
	cr_assert_eq(ut_vrings[0].set_base_calls, 0);
}

Test(ctl, vring_base_near_the_16_bit_wrap)
{
	ut_vrings[0].last_avail = 65535;
	ut_vrings[0].last_used = 65535;
	used->idx = 65535;
	avail->idx = 65535;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	post_read(0, 0); /* avail slot 65535 % 16 = 15 */
	post_read(1, 8); /* slot 0: the index wrapped to 0 */
	post_read(2, 16);
	cr_assert_eq(avail->idx, 2);
	ut_sweep(100);
	cr_assert_eq(m.calls, 3);
	cr_assert_eq(m.req[0].offset, 0);
	cr_assert_eq(m.req[1].offset, 4096);
	cr_assert_eq(m.req[2].offset, 8192);
	cr_assert_eq(used->idx, 2);
	cr_assert_eq(used->ring[15].id, 0);
	cr_assert_eq(used->ring[0].id, 3);
	cr_assert_eq(used->ring[1].id, 6);
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_eq(ut_vrings[0].last_avail, 2);
	cr_assert_eq(ut_vrings[0].last_used, 2);
}

/* The frontend's SET_INFLIGHT_FD of fd (bytes, 2 queues of qsize entries), through the pre hook. */
static void set_inflight_fd_of(int fd, uint64_t bytes, uint16_t qsize)
{
	struct pmd_vhu_ctx c;

	ctx_init(&c, VHU_SET_INFLIGHT_FD);
	c.m.msg.size = sizeof(c.m.msg.payload.inflight);
	c.m.msg.payload.inflight.mmap_size = bytes;
	c.m.msg.payload.inflight.num_queues = 2;
	c.m.msg.payload.inflight.queue_size = qsize;
	ctx_add_fd(&c, fd);
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
}

/* The same with a split region of the frontend's own. */
static void set_inflight_fd(uint16_t qsize)
{
	int fd = memfd_of(2 * pmd_inflight_queue_bytes(qsize));

	set_inflight_fd_of(fd, 2 * pmd_inflight_queue_bytes(qsize), qsize);
	close(fd); /* rte_vhost's, in real life */
}

/*
 * The state a restarted backend finds: the previous one took the first
 * taken avail entries (posted already) and left the requests of rs in
 * flight; the frontend shared the inflight region.
 */
static void previous_backend_left(struct rte_vhost_inflight_info_split *region,
				  struct rte_vhost_resubmit_info *rs, uint16_t taken)
{
	avail->idx = taken;
	ut_vrings[0].last_avail = taken;
	ut_vrings[0].inflight_split = region;
	ut_vrings[0].resubmit = rs;
	set_inflight_fd(QSZ);
}

/*
 * The inflight region is in the SIGBUS net from its first byte to its last
 * also when the frontend had set up only its second queue: rte_vhost's
 * pointer for queue 1 is one queue area past the mapping's start.
 */
Test(ctl, the_whole_inflight_region_is_in_the_sigbus_net)
{
	static uint8_t region[4096] __attribute__((aligned(4096)));
	size_t area = pmd_inflight_queue_bytes(QSZ);

	ut_vrings[1].inflight_split = (struct rte_vhost_inflight_info_split *)(region + area);
	set_inflight_fd(QSZ);
	cr_assert_eq(hook(false, VHU_SET_INFLIGHT_FD, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert(pmd_memfault_covers(region), "the region's first byte");
	cr_assert(pmd_memfault_covers(region + 2 * area - 1), "its last byte");
	cr_assert_not(pmd_memfault_covers(region + 2 * area), "not past its end");
	ut_dev_ops->destroy_connection(ut_vid);
	cr_assert_not(pmd_memfault_covers(region), "forgotten with its connection");
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
}

Test(ctl, queue_larger_than_its_inflight_area_not_started)
{
	struct rte_vhost_inflight_info_split region;

	ut_vrings[0].inflight_split = &region;
	set_inflight_fd(QSZ / 2);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_null(ut_queue(0));
	cr_assert_not_null(strstr(ut_last_log, "its inflight area holds 8 entries"), "%s",
			   ut_last_log);
}

Test(ctl, inflight_requests_are_replayed_oldest_first)
{
	struct rte_vhost_inflight_info_split region;
	/* rte_vhost lists them newest first (highest counter first) */
	struct rte_vhost_resubmit_desc list[3] = {{6, 30}, {0, 20}, {3, 10}};
	struct rte_vhost_resubmit_info rs = {.resubmit_list = list, .resubmit_num = 3};

	/* the previous backend took heads 3, 0 and 6, in that order, and completed none */
	post_read_at(1, 8, 0);
	post_read_at(0, 0, 1);
	post_read_at(2, 16, 2);
	previous_backend_left(&region, &rs, 3);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_eq(rs.resubmit_num, 0, "the list is consumed");
	ut_sweep(100);
	cr_assert_eq(m.calls, 3);
	cr_assert_eq(m.req[0].offset, 8 * 512, "oldest (head 3) first");
	cr_assert_eq(m.req[1].offset, 0);
	cr_assert_eq(m.req[2].offset, 16 * 512);
	cr_assert_eq(used->idx, 3);
	cr_assert_eq(used->ring[0].id, 3);
	cr_assert_eq(used->ring[1].id, 0);
	cr_assert_eq(used->ring[2].id, 6);
	/* each replayed completion is published, then its inflight entry cleared */
	cr_assert_eq(ut_ninflight, 6);
	for (unsigned k = 0; k < 3; k++) {
		cr_assert_eq(ut_inflight_op[2 * k], 'l');
		cr_assert_eq(ut_inflight_op[2 * k + 1], 'c');
		cr_assert_eq(ut_inflight_idx[2 * k + 1], used->ring[k].id);
	}
}

/*
 * A queue stopped before its poller replayed the previous backend's requests
 * (a vring message right after the start): rte_vhost lists them only once
 * per connection, so the stop serves them (the ring is still the
 * frontend's) and posts them with the rest; none is lost.
 */
Test(ctl, replays_left_at_a_stop_are_served_not_dropped)
{
	struct rte_vhost_inflight_info_split region;
	struct rte_vhost_resubmit_desc list[2] = {{3, 20}, {0, 10}};
	struct rte_vhost_resubmit_info rs = {.resubmit_list = list, .resubmit_num = 2};

	post_read_at(0, 0, 0);
	post_read_at(1, 8, 1);
	previous_backend_left(&region, &rs, 2);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	post_read(2, 16); /* a new request after the replays */

	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_null(ut_queue(0));
	cr_assert_eq(m.calls, 2, "both replays served at the stop, the new request not taken");
	cr_assert_eq(used->idx, 2);
	cr_assert_eq(used->ring[0].id, 0, "oldest first");
	cr_assert_eq(used->ring[1].id, 3);
	cr_assert_eq(status_of(0), VIRTIO_BLK_S_OK);
	cr_assert_eq(status_of(1), VIRTIO_BLK_S_OK);
	cr_assert_eq(ut_vrings[0].last_avail, 2, "the new request stays for the next start");
	cr_assert_eq(ut_vrings[0].last_used, 2);
}

/* A queue that could not start leaves the replays to its next start. */
Test(ctl, replays_wait_for_a_queue_that_starts)
{
	struct rte_vhost_inflight_info_split region;
	struct rte_vhost_resubmit_desc list[1] = {{3, 10}};
	struct rte_vhost_resubmit_info rs = {.resubmit_list = list, .resubmit_num = 1};

	post_read_at(1, 8, 0);
	previous_backend_left(&region, &rs, 1);
	ut_attach_fail = 1;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_null(ut_queue(0));
	cr_assert_eq(rs.resubmit_num, 1, "not consumed by a queue that never ran");
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_not_null(ut_queue(0));
	cr_assert_eq(rs.resubmit_num, 0);
	ut_sweep(100);
	cr_assert_eq(m.calls, 1);
	cr_assert_eq(used->idx, 1);
	cr_assert_eq(used->ring[0].id, 3);
}

Test(ctl, get_queue_num_is_answered_by_femud)
{
	struct pmd_vhu_ctx c;

	ctx_init(&c, VHU_GET_QUEUE_NUM);
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_REPLY);
	cr_assert_eq(c.m.msg.payload.u64, 2);
	cr_assert_eq(c.m.msg.size, sizeof(uint64_t));
}

Test(ctl, fds_of_messages_femud_answers_are_closed)
{
	static const uint32_t reqs[] = {VHU_GET_QUEUE_NUM, VHU_GET_CONFIG, VHU_SET_CONFIG};

	for (size_t k = 0; k < sizeof(reqs) / sizeof(reqs[0]); k++) {
		struct pmd_vhu_ctx c;
		int a = memfd_of(4096), b = memfd_of(4096);

		ctx_init(&c, reqs[k]);
		c.m.msg.size = 12 + 8; /* a config window of 8 bytes */
		c.m.msg.payload.config.size = 8;
		ctx_add_fd(&c, a);
		ctx_add_fd(&c, b);
		cr_assert_neq(ut_ext_ops->pre_msg_handle(ut_vid, &c),
			      RTE_VHOST_MSG_RESULT_NOT_HANDLED);
		cr_assert(!fd_open(a) && !fd_open(b), "request %u: fds left open", reqs[k]);
		/* rte_vhost must neither send nor close them again */
		cr_assert_eq(c.fd_num, 0);
		cr_assert_eq(c.fds[0], -1);
		cr_assert_eq(c.fds[1], -1);
	}
}

Test(ctl, fds_of_messages_rte_vhost_handles_are_left_to_it)
{
	struct pmd_vhu_ctx c;
	int a = eventfd(0, EFD_CLOEXEC);

	ctx_init(&c, VHU_SET_VRING_KICK);
	c.m.msg.size = 8;
	ctx_add_fd(&c, a);
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert(fd_open(a));
	cr_assert_eq(c.fd_num, 1);
	close(a);
}

/* SET_VRING_CALL / SET_VRING_KICK with a pipe, a memfd, no fd, an eventfd. */
Test(ctl, notifier_that_is_not_an_eventfd_is_refused_and_closed)
{
	static const uint32_t reqs[] = {VHU_SET_VRING_CALL, VHU_SET_VRING_KICK};

	for (unsigned k = 0; k < 2; k++) {
		struct pmd_vhu_ctx c;
		int p[2], m = memfd_of(4096), e = eventfd(0, EFD_CLOEXEC);

		cr_assert_eq(pipe(p), 0);
		for (int j = 0; j < 2; j++) {
			int fd = j == 0 ? p[1] : m;

			ctx_init(&c, reqs[k]);
			c.m.msg.size = 8;
			ctx_add_fd(&c, fd);
			cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c),
				     RTE_VHOST_MSG_RESULT_ERR, "request %u, fd %d", reqs[k], j);
			cr_assert_not_null(
			    strstr(ut_last_log, k == 0 ? "the call fd is not an eventfd"
						       : "the kick fd is not an eventfd"),
			    "%s", ut_last_log);
			cr_assert(!fd_open(fd), "the refused fd is closed");
			cr_assert_eq(c.fd_num, 0);
		}
		/* no fd: the queue is polled; rte_vhost takes it */
		ctx_init(&c, reqs[k]);
		c.m.msg.size = 8;
		c.m.msg.payload.u64 = VHU_VRING_NOFD;
		cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c),
			     RTE_VHOST_MSG_RESULT_NOT_HANDLED);
		/* an eventfd goes through untouched */
		ctx_init(&c, reqs[k]);
		c.m.msg.size = 8;
		ctx_add_fd(&c, e);
		cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c),
			     RTE_VHOST_MSG_RESULT_NOT_HANDLED);
		cr_assert(fd_open(e));
		cr_assert_eq(c.fd_num, 1);
		close(e);
		close(p[0]);
	}
}

Test(ctl, short_memfd_refused_before_rte_vhost_maps_it)
{
	struct pmd_vhu_ctx c;
	int fd = memfd_of(1 << 16);

	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_not_null(ut_queue(0));
	ctx_mem_table(&c, fd, (1 << 16) + 4096);
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_ERR);
	cr_assert_not_null(strstr(ut_last_log, "region 0: file has 65536 bytes"), "%s",
			   ut_last_log);
	cr_assert(!fd_open(fd), "the refused table's fd is closed");
	cr_assert_eq(c.fd_num, 0);
	/* rte_vhost keeps the old table: the running queue keeps running */
	cr_assert_not_null(ut_queue(0));

	/* a table its file backs goes through to rte_vhost (queues stopped first) */
	fd = memfd_of(1 << 16);
	ctx_mem_table(&c, fd, 1 << 16);
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert(fd_open(fd));
	cr_assert_eq(c.fd_num, 1);
	cr_assert_null(ut_queue(0));
	close(fd);
}

Test(ctl, mem_table_refused_when_the_fds_cannot_be_seen)
{
	struct pmd_vhu_ctx c;
	int fd = memfd_of(1 << 16);

	/* bytes after the message that are not rte_vhost 22.11's fd array */
	ctx_mem_table(&c, fd, 1 << 16);
	c.fds[5] = 0;
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_ERR);
	cr_assert_not_null(strstr(ut_last_log, "cannot see the fds"), "%s", ut_last_log);
	cr_assert(fd_open(fd), "fds femud cannot see are not touched");
	c.fd_num = 9;
	c.fds[5] = -1;
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_ERR);
	c.fd_num = 1;
	c.fds[0] = 1000; /* not open */
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_ERR);
	close(fd);
}

Test(ctl, a_taken_connection_id_is_refused)
{
	cr_assert_neq(ut_dev_ops->new_connection(ut_vid), 0);
	cr_assert_not_null(strstr(ut_last_log, "connection id 3 is still in use"), "%s",
			   ut_last_log);
}

Test(ctl, device_slots_are_reclaimed_from_destroyed_devices)
{
	struct pmd_blk_params p = {
	    .queues = 1, .blk_size = 512, .capacity_bytes = 1ULL << 20, .sock_mode = 0600};
	char path[128], err[256] = "";
	struct pmd_dev_snap snap;
	struct pmd_blk *d;

	/* far more devices than there are slots, one after another */
	for (unsigned i = 0; i < 3 * 64; i++) {
		snprintf(path, sizeof(path), "%s/d%u.sock", dir, i);
		p.path = path;
		cr_assert_eq(pmd_blk_create(&p, &fake_model_ops, &m.base, &d, err, sizeof(err)), 0,
			     "device %u: %s", i, err);
		pmd_blk_destroy(d);
	}
	pmd_blk_stats(dev, &snap);
	cr_assert_eq(snap.connections, 1);
	cr_assert_eq(snap.live_conns, 1);
}

/* ---- dirty logging (live migration) ---- */

#define LOG_ALL (1ULL << VHU_F_LOG_ALL)
#define USED_GPA (FG_B_GPA + 0x2000)

static bool dirty(uint64_t gpa)
{
	return ut_dirty[gpa / 4096];
}

/* A SET_FEATURES through both hooks, rte_vhost's handler (features stored) between them. */
static void set_features(uint64_t features)
{
	struct pmd_vhu_ctx c;

	ctx_init(&c, VHU_SET_FEATURES);
	c.m.msg.size = sizeof(c.m.msg.payload.u64);
	c.m.msg.payload.u64 = features;
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	ut_features = features;
	cr_assert_eq(ut_ext_ops->post_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
}

/*
 * With LOG_ALL every page femud writes is marked: a read's data, the status
 * byte, the used ring; the pages it only reads (descriptors, avail ring,
 * a write's data) are not.
 */
Test(ctl, logging_queue_marks_every_page_it_writes_and_no_other)
{
	ut_vrings[0].vr.log_guest_addr = USED_GPA;
	ut_features = LOG_ALL;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert(ut_queue(0)->log);
	memset(ut_dirty, 0, sizeof(ut_dirty)); /* the start wrote avail_event */
	post_read(0, 0);
	post_read(1, 8);
	ut_sweep(100);
	cr_assert_eq(used->idx, 2);
	cr_assert(dirty(FG_REQ_DATA(0)) && dirty(FG_REQ_DATA(1)), "read payloads");
	cr_assert(dirty(STATUS(0)), "status bytes");
	cr_assert(dirty(USED_GPA), "used ring");
	cr_assert(!dirty(FG_B_GPA) && !dirty(FG_B_GPA + 0x1000), "descriptors, avail ring");
	cr_assert(!dirty(FG_REQ_DATA(2)), "a buffer femud never wrote");
}

/* Without LOG_ALL the request path makes no logging call at all. */
Test(ctl, queue_without_logging_never_calls_the_log)
{
	ut_vrings[0].vr.log_guest_addr = USED_GPA;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert(!ut_queue(0)->log);
	post_read(0, 0);
	ut_sweep(100);
	cr_assert_eq(used->idx, 1);
	cr_assert_eq(ut_log_calls, 0);
}

/*
 * Migration starts and ends on a running queue: SET_FEATURES toggling
 * LOG_ALL restarts it where it was, logging on, then off again.
 */
Test(ctl, log_all_toggled_restarts_the_queue_logging_then_not)
{
	ut_vrings[0].vr.log_guest_addr = USED_GPA;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	post_read(0, 0);
	ut_sweep(100);
	set_features(LOG_ALL);
	cr_assert_not_null(ut_queue(0));
	cr_assert(ut_queue(0)->log);
	cr_assert_eq(ut_queue(0)->last_avail, 1);
	post_read(1, 8);
	ut_sweep(200);
	cr_assert_eq(used->idx, 2);
	cr_assert(dirty(FG_REQ_DATA(1)) && dirty(STATUS(1)) && dirty(USED_GPA));

	set_features(0);
	cr_assert(!ut_queue(0)->log);
	ut_log_calls = 0;
	post_read(2, 16);
	ut_sweep(300);
	cr_assert_eq(used->idx, 3);
	cr_assert_eq(ut_log_calls, 0);
	/* a SET_FEATURES that leaves LOG_ALL alone does not stop the queue */
	struct pmd_vq *q = ut_queue(0);
	set_features(0);
	cr_assert_eq(ut_queue(0), q);
}

/*
 * Switch-over: GET_VRING_BASE posts the completions the model still holds
 * and logs them before rte_vhost replies (QEMU's last log sync follows).
 */
Test(ctl, get_vring_base_flush_is_logged)
{
	ut_vrings[0].vr.log_guest_addr = USED_GPA;
	ut_features = LOG_ALL;
	m.due_delta = 1000000000;
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	post_read(0, 0);
	ut_sweep(100);
	cr_assert_eq(used->idx, 0);
	memset(ut_dirty, 0, sizeof(ut_dirty));
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_eq(used->idx, 1);
	cr_assert_eq(status_of(0), VIRTIO_BLK_S_OK);
	cr_assert(dirty(STATUS(0)) && dirty(USED_GPA));
}

/* A log its file does not back is refused before rte_vhost maps it; a good one stops queues. */
Test(ctl, short_dirty_log_refused_good_one_restarts_queues)
{
	struct pmd_vhu_ctx c;
	int fd = memfd_of(4096);

	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	ctx_init(&c, VHU_SET_LOG_BASE);
	c.m.msg.size = sizeof(c.m.msg.payload.log);
	c.m.msg.payload.log.mmap_size = 8192;
	ctx_add_fd(&c, fd);
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_ERR);
	cr_assert_not_null(strstr(ut_last_log, "dirty log: file has 4096 bytes"), "%s",
			   ut_last_log);
	cr_assert_not_null(ut_queue(0), "a refused log changes nothing");

	fd = memfd_of(8192);
	ctx_init(&c, VHU_SET_LOG_BASE);
	c.m.msg.size = sizeof(c.m.msg.payload.log);
	c.m.msg.payload.log.mmap_size = 8192;
	ctx_add_fd(&c, fd);
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_null(ut_queue(0), "stopped: rte_vhost unmaps the old log");
	cr_assert_eq(ut_ext_ops->post_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_not_null(ut_queue(0));
	close(fd);
}

/* ---- inflight regions femud makes (pmd/inflight_file.h) ---- */

#define PK_BASE (3 | 1u << 15) /* position 3, wrap counter 1 */
#define PK_GPA 0x2000ull

/* femud's inflight files in the test's directory. */
static unsigned iff_files(char *last, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, PMD_IFF_PREFIX, strlen(PMD_IFF_PREFIX)) != 0)
			continue;
		n++;
		if (last != NULL)
			snprintf(last, len, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	return n;
}

/* GET_INFLIGHT_FD for 2 packed queues of QSZ: femud's answer (its file's fd, still femud's). */
static int get_inflight_fd(void)
{
	struct pmd_vhu_ctx c;

	ctx_init(&c, VHU_GET_INFLIGHT_FD);
	c.m.msg.size = sizeof(c.m.msg.payload.inflight);
	c.m.msg.payload.inflight.num_queues = 2;
	c.m.msg.payload.inflight.queue_size = QSZ;
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_REPLY);
	cr_assert_eq(c.fd_num, 1);
	cr_assert(fd_open(c.fds[0]));
	cr_assert_eq(c.m.msg.payload.inflight.mmap_size, 2 * pmd_inflight_packed_queue_bytes(QSZ));
	cr_assert_eq(c.m.msg.payload.inflight.mmap_offset, 0);
	cr_assert_eq(ut_ext_ops->post_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	return c.fds[0];
}

static void packed_queue0_starts_at(uint16_t base);

/*
 * A packed frontend's queue 0 starts as QEMU starts it: GET/SET_INFLIGHT_FD
 * (the region mapped as rte_vhost would), SET_VRING_BASE base, SET_VRING_ADDR
 * with the ring at PK_GPA, SET_VRING_KICK, enable.  Returns the mapping.
 */
static struct rte_vhost_inflight_info_packed *packed_queue_starts(uint16_t base)
{
	uint64_t bytes = 2 * pmd_inflight_packed_queue_bytes(QSZ);
	struct rte_vhost_inflight_info_packed *region;
	int fd, dup;

	/* negotiated before the region is asked for: its layout follows them */
	ut_features = (1ULL << VIRTIO_F_RING_PACKED) | (1ULL << VIRTIO_RING_F_EVENT_IDX);
	fd = get_inflight_fd();
	ut_vrings[0].vr.desc_packed = (struct vring_packed_desc *)g.b;
	ut_vrings[0].vr.driver_event = (struct vring_packed_desc_event *)(g.b + 0x1000);
	ut_vrings[0].vr.device_event = (struct vring_packed_desc_event *)(g.b + 0x1004);
	dup = fcntl(fd, F_DUPFD_CLOEXEC, 0); /* the frontend's copy */
	set_inflight_fd_of(dup, bytes, QSZ);
	region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, dup, 0);
	cr_assert_neq(region, MAP_FAILED);
	close(dup);
	ut_vrings[0].inflight_packed = region;
	packed_queue0_starts_at(base);
	return region;
}

/*
 * Queue 0 of ut_vid starts on the region already mapped as rte_vhost's:
 * SET_VRING_BASE base, SET_VRING_ADDR with the ring at PK_GPA,
 * SET_VRING_KICK, enable.
 */
static void packed_queue0_starts_at(uint16_t base)
{
	struct pmd_vhu_ctx c;
	int kick = eventfd(0, EFD_CLOEXEC);

	ut_vrings[0].last_avail = ut_vrings[0].last_used = base;
	cr_assert_eq(hook(true, VHU_SET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	ctx_init(&c, VHU_SET_VRING_BASE);
	c.m.msg.size = sizeof(c.m.msg.payload.state);
	c.m.msg.payload.state.num = base;
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	ctx_init(&c, VHU_SET_VRING_ADDR);
	c.m.msg.size = sizeof(c.m.msg.payload.addr);
	c.m.msg.payload.addr.log = PK_GPA;
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	ctx_init(&c, VHU_SET_VRING_KICK);
	c.m.msg.size = sizeof(c.m.msg.payload.u64);
	ctx_add_fd(&c, kick);
	cr_assert_eq(ut_ext_ops->pre_msg_handle(ut_vid, &c), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	close(kick);
	cr_assert_eq(ut_dev_ops->vring_state_changed(ut_vid, 0, 1), 0);
	cr_assert_not_null(ut_queue(0));
	cr_assert(ut_queue(0)->packed);
}

static void region_unmap(struct rte_vhost_inflight_info_packed *region)
{
	ut_vrings[0].inflight_packed = NULL;
	munmap(region, 2 * pmd_inflight_packed_queue_bytes(QSZ));
}

Test(ctl, get_inflight_fd_is_a_named_file_gone_with_its_connection)
{
	struct rte_vhost_inflight_info_packed *region = packed_queue_starts(PK_BASE);

	cr_assert_eq(iff_files(NULL, 0), 1);
	/* a new region: the queue starts at the frontend's base */
	cr_assert_eq(ut_queue(0)->last_avail, 3);
	cr_assert(ut_queue(0)->pk.avail_wrap);
	cr_assert_eq(region->old_used_idx, 3, "the region's used position counts from there");
	cr_assert_eq(region->old_used_wrap_counter, 1);
	/* the frontend learns the position (it stops the queue), then leaves */
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	ut_dev_ops->destroy_connection(ut_vid);
	cr_assert_eq(iff_files(NULL, 0), 0, "the frontend left: its file is removed");
	region_unmap(region);
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
}

/*
 * A frontend leaves while its packed queue runs (killed, or a migration's
 * source quit with its queue never stopped): its file stays with the device,
 * and a frontend that starts the same ring on a new region (the migration's
 * destination, with the stale base the source migrated) starts at the
 * position the file holds.
 */
Test(ctl, a_frontend_gone_with_a_running_queue_leaves_its_position_to_the_same_ring)
{
	struct rte_vhost_inflight_info_packed *region;
	int first = ut_vid;

	ut_dev_ops->destroy_connection(ut_vid);
	pmd_set_connect_hook(sock_hook, NULL);
	next_pid = 100;
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
	region = packed_queue_starts(PK_BASE);
	((struct vring_packed_desc *)g.b)[4] =
	    (struct vring_packed_desc){.addr = FG_REQ_DATA(0), .len = 1, .id = 4, .flags = 0};
	ut_dev_ops->destroy_connection(ut_vid);
	/* where its 18 requests left it: position 3 + 18 = 21 = 5 under wrap 0 */
	region->old_used_idx = region->used_idx = 21 % QSZ;
	region->old_used_wrap_counter = region->used_wrap_counter = 0;
	cr_assert_not_null(strstr(ut_log, "kept for a frontend that starts the same ring"), "%s",
			   ut_log);
	cr_assert_eq(iff_files(NULL, 0), 1);
	region_unmap(region);

	/* the same process again (it reset the device): its base stands */
	cr_assert_eq(ut_dev_ops->new_connection(++ut_vid), 0);
	ut_vrings[0].vr.callfd = ut_vrings[0].vr.kickfd = -1;
	region = packed_queue_starts(PK_BASE);
	cr_assert_null(strstr(ut_log, "takes the ring's position"), "%s", ut_log);
	cr_assert_eq(ut_queue(0)->last_avail, 3);
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	region_unmap(region);
	ut_dev_ops->destroy_connection(ut_vid);
	cr_assert_eq(iff_files(NULL, 0), 1, "its own file went, the kept one stays");

	/* another process (a migration's destination) starts the ring */
	next_pid = 200;
	cr_assert_eq(ut_dev_ops->new_connection(++ut_vid), 0);
	ut_vrings[0].vr.callfd = ut_vrings[0].vr.kickfd = -1;
	region = packed_queue_starts(PK_BASE);
	cr_assert_not_null(strstr(ut_log, "takes the ring's position"), "%s", ut_log);
	cr_assert_eq(ut_queue(0)->last_avail, 21 % QSZ);
	cr_assert_not(ut_queue(0)->pk.avail_wrap);
	cr_assert_eq(iff_files(NULL, 0), 1, "the kept file consumed");
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	region_unmap(region);
	ut_dev_ops->destroy_connection(ut_vid);
	cr_assert_eq(iff_files(NULL, 0), 0);
	pmd_set_connect_hook(NULL, NULL);
	ut_vid = first;
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
}

/* How often what appears in the log. */
static unsigned log_count(const char *what)
{
	unsigned n = 0;

	for (const char *at = strstr(ut_log, what); at != NULL; at = strstr(at + 1, what))
		n++;
	return n;
}

/*
 * A packed frontend's queue 0 ran on an earlier femud that served 43
 * descriptors (position 46) and was killed; its file carries another
 * process's name (its path in name) and this femud's device is made anew
 * (it finds the file as an orphan).
 */
static void earlier_femud_served_43(char *name, size_t len)
{
	struct pmd_blk_params p = {.queues = 2,
				   .blk_size = 512,
				   .capacity_bytes = 1ULL << 20,
				   .sock_mode = 0600,
				   .path = ut_ifname};
	struct rte_vhost_inflight_info_packed *region = packed_queue_starts(PK_BASE);
	char mine[PATH_MAX], err[256] = "";
	const char *pid;

	/* position 46 = 3 + 43, under wrap 1; the ring shows the last one used */
	((struct vring_packed_desc *)g.b)[45 % QSZ] =
	    (struct vring_packed_desc){.addr = FG_REQ_DATA(0), .len = 1, .id = 2, .flags = 0x8080};
	region->old_used_idx = region->used_idx = 46 % QSZ;
	region->desc[5].inflight = 1; /* one request in flight */
	region->desc[5].addr = FG_REQ_HDR(0);
	region->old_used_wrap_counter = region->used_wrap_counter = (46 / QSZ) % 2 ? 0 : 1;
	cr_assert_eq(iff_files(mine, sizeof(mine)), 1);
	/* SIGKILL: nothing is stopped or removed; then another process's file */
	region_unmap(region);
	pid = strrchr(mine, '-');
	while (pid > mine && pid[-1] != '-')
		pid--;
	snprintf(name, len, "%.*s1%s", (int)(pid - mine), mine, strrchr(mine, '-'));
	cr_assert_eq(rename(mine, name), 0);
	{
		int fd = open(name, O_RDWR);
		struct rte_vhost_inflight_info_packed a;

		cr_assert_geq(fd, 0);
		cr_assert_eq(pread(fd, &a, sizeof(a), 0), (ssize_t)sizeof(a));
		cr_assert_eq(a.old_used_idx, 46 % QSZ);
		close(fd);
	}
	ut_dev_ops->destroy_connection(ut_vid);
	cr_assert_eq(iff_files(NULL, 0), 1, "renamed: not this connection's any more");
	pmd_blk_destroy(dev);
	cr_assert_eq(pmd_blk_create(&p, &fake_model_ops, &m.base, &dev, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_not_null(strstr(ut_log, "left by an earlier femud"), "%s", ut_log);
}

/*
 * femud dies while queue 0 runs (its frontend never learns the position)
 * and is started again; a destination frontend of the same guest (its
 * process unknown here, as the source's) starts queue 0 on a new region
 * with the stale base the source last set: it starts where the earlier
 * femud stood, and the earlier femud's file is consumed.
 */
Test(ctl, a_packed_queue_takes_its_position_from_an_earlier_femuds_file)
{
	struct rte_vhost_inflight_info_packed *region;
	char other[PATH_MAX];

	earlier_femud_served_43(other, sizeof(other));
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
	ut_vrings[0].vr.callfd = ut_vrings[0].vr.kickfd = -1;
	region = packed_queue_starts(PK_BASE);
	cr_assert_not_null(strstr(ut_log, "takes the ring's position"), "%s", ut_log);
	cr_assert_eq(ut_queue(0)->last_avail, 46 % QSZ);
	cr_assert_eq(ut_queue(0)->pk.avail_wrap, (46 / QSZ) % 2 ? 0 : 1);
	cr_assert_eq(region->desc[5].inflight, 1, "its request in flight came along");
	cr_assert_eq(region->desc[5].addr, FG_REQ_HDR(0));
	cr_assert_eq(iff_files(NULL, 0), 1, "the earlier file consumed, this connection's made");
	/* the position handed back: a later femud has nothing to take */
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	cr_assert_null(ut_queue(0));
	region_unmap(region);
}

/*
 * femud died while a guest's queue 0 ran, and that QEMU was killed too; a new
 * guest boots on the socket with its ring at the same address and the same
 * base (a new ring's): its ring in guest memory was never used up to the
 * file's position, so it starts at its own base and replays nothing.
 */
Test(ctl, a_new_guest_on_the_same_ring_does_not_take_a_dead_frontends_position)
{
	struct rte_vhost_inflight_info_packed *region;
	char other[PATH_MAX];

	earlier_femud_served_43(other, sizeof(other));
	memset(g.b, 0, 16 * QSZ); /* the new guest's driver zeroed its ring */
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
	ut_vrings[0].vr.callfd = ut_vrings[0].vr.kickfd = -1;
	region = packed_queue_starts(PK_BASE);
	cr_assert_not_null(strstr(ut_log, "never used up to the inflight file's position"), "%s",
			   ut_log);
	cr_assert_eq(ut_queue(0)->last_avail, 3);
	cr_assert(ut_queue(0)->pk.avail_wrap);
	cr_assert_eq(region->old_used_idx, 3, "the area made new at the frontend's base");
	cr_assert_eq(region->old_used_wrap_counter, 1);
	for (uint16_t j = 0; j < QSZ; j++)
		cr_assert_eq(region->desc[j].inflight, 0,
			     "nothing of the dead frontend's replayed");
	region_unmap(region);
}

/*
 * The race of a live migration with femud restarted just before the
 * switch-over: the source QEMU reconnects first and brings its file back
 * (SET_INFLIGHT_FD) but never starts its queue again; the destination then
 * starts the ring on a new region.  It takes the position and the requests
 * in flight from the source connection's file, not QEMU's stale base.
 */
Test(ctl, a_packed_queue_takes_its_position_from_a_file_brought_back_unstarted)
{
	struct rte_vhost_inflight_info_packed *region;
	char other[PATH_MAX], src[32];
	int fd;

	earlier_femud_served_43(other, sizeof(other));
	/* the source's connection: its file back, its queue not started */
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
	fd = open(other, O_RDWR);
	cr_assert_geq(fd, 0);
	set_inflight_fd_of(fd, 2 * pmd_inflight_packed_queue_bytes(QSZ), QSZ);
	close(fd);
	cr_assert_not_null(strstr(ut_log, "brought back"), "%s", ut_log);
	/* the destination's connection starts the ring on a new region */
	ut_vid2 = ut_vid;
	ut_vid = ut_vid2 + 1;
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
	ut_vrings[0].vr.callfd = ut_vrings[0].vr.kickfd = -1;
	region = packed_queue_starts(PK_BASE);
	snprintf(src, sizeof(src), "(connection %d's)", ut_vid2);
	cr_assert_not_null(strstr(ut_log, src), "%s", ut_log);
	cr_assert_eq(ut_queue(0)->vid, ut_vid);
	cr_assert_eq(ut_queue(0)->last_avail, 46 % QSZ);
	cr_assert_eq(ut_queue(0)->pk.avail_wrap, (46 / QSZ) % 2 ? 0 : 1);
	cr_assert_eq(region->old_used_idx, 46 % QSZ, "the area is the source's");
	/* given once: the queue restarting on the destination takes nothing more */
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	region_unmap(region);
	region = packed_queue_starts(PK_BASE);
	cr_assert_eq(log_count("takes the ring's position"), 1, "%s", ut_log);
	cr_assert_eq(ut_queue(0)->last_avail, 3, "the base the frontend set");
	region_unmap(region);
	ut_dev_ops->destroy_connection(ut_vid);
	ut_dev_ops->destroy_connection(ut_vid2);
	ut_vid = ut_vid2;
	ut_vid2 = -1;
}

/*
 * The same race when the source reconnects after the switch-over, its guest
 * stopped, and starts its queue again from its file with dirty logging still
 * on (as QEMU restarts a started device on reconnect), serving what its stale
 * ring holds; the destination then starts the ring on a new region.  The
 * source's queue stops for good, and the destination starts from the area as
 * the source brought it back: the earlier femud's position and the request
 * in flight there, not the position the source went on to.
 */
Test(ctl, a_destination_takes_the_area_a_restarted_stale_source_brought_back)
{
	uint64_t bytes = 2 * pmd_inflight_packed_queue_bytes(QSZ);
	struct rte_vhost_inflight_info_packed *region, *back;
	char other[PATH_MAX];
	unsigned abandoned, kept;
	int fd;

	earlier_femud_served_43(other, sizeof(other));
	/* the source: its file back, its queue started again, logging */
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
	fd = open(other, O_RDWR);
	cr_assert_geq(fd, 0);
	set_inflight_fd_of(fd, bytes, QSZ);
	back = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert_neq(back, MAP_FAILED);
	close(fd);
	ut_vrings[0].inflight_packed = back;
	ut_vrings[0].vr.callfd = ut_vrings[0].vr.kickfd = -1;
	ut_features |= LOG_ALL;
	packed_queue0_starts_at(PK_BASE);
	cr_assert(ut_queue(0)->log);
	cr_assert_eq(ut_queue(0)->last_avail, 46 % QSZ, "from the file it brought back");
	/* it serves its stale ring: its area moves on, its request completed */
	back->old_used_idx = back->used_idx = 50 % QSZ;
	back->desc[5].inflight = 0;
	abandoned = ut_nabandoned;

	/* the destination starts the ring on a new region */
	ut_vid2 = ut_vid;
	ut_vid = ut_vid2 + 1;
	cr_assert_eq(ut_dev_ops->new_connection(ut_vid), 0);
	ut_vrings[0].vr.callfd = ut_vrings[0].vr.kickfd = -1;
	region = packed_queue_starts(PK_BASE);
	cr_assert_not_null(strstr(ut_log, "started again after the switch-over"), "%s", ut_log);
	cr_assert_eq(ut_nabandoned, abandoned + 1, "the source's queue stopped, nothing posted");
	cr_assert_eq(ut_queue(0)->vid, ut_vid);
	cr_assert_eq(ut_queue(0)->last_avail, 46 % QSZ, "where the earlier femud stood");
	cr_assert_eq(ut_queue(0)->pk.avail_wrap, (46 / QSZ) % 2 ? 0 : 1);
	cr_assert_eq(region->old_used_idx, 46 % QSZ);
	cr_assert_eq(region->desc[5].inflight, 1, "the request in flight comes along");
	cr_assert_eq(region->desc[5].addr, FG_REQ_HDR(0));
	cr_assert_eq(hook(true, VHU_GET_VRING_BASE, 0), RTE_VHOST_MSG_RESULT_NOT_HANDLED);
	region_unmap(region);
	munmap(back, bytes);
	/* the source, superseded, never drives the ring again, and leaves nothing behind */
	kept = log_count("kept for a frontend");
	ut_dev_ops->destroy_connection(ut_vid2);
	cr_assert_eq(log_count("kept for a frontend"), kept, "%s", ut_log);
	cr_assert_eq(iff_files(NULL, 0), 1, "the destination's file only");
	ut_dev_ops->destroy_connection(ut_vid);
	cr_assert_eq(iff_files(NULL, 0), 0);
	ut_vid = ut_vid2;
	ut_vid2 = -1;
}
