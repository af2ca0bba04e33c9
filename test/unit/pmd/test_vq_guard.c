/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_vq_guard.c - the validators of frontend-supplied memory: rings that
 * end one byte past a region (each ring, event-index fields included),
 * misaligned rings, memory-table regions longer than their file (the
 * SIGBUS case), and the vring index / GET_CONFIG framing of messages.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pmd/vq_guard.h"

#define RSZ 0x10000u /* one region of 64 KiB */
#define QS 256u

static struct rte_vhost_memory *mem;
static uint8_t *base;

/* One region [base, base + RSZ) at guest address 0x100000. */
static void setup(void)
{
	mem = calloc(1, sizeof(*mem) + sizeof(mem->regions[0]));
	base = aligned_alloc(4096, RSZ);
	cr_assert(mem && base);
	mem->nregions = 1;
	mem->regions[0].guest_phys_addr = 0x100000;
	mem->regions[0].host_user_addr = (uintptr_t)base;
	mem->regions[0].mmap_addr = base;
	mem->regions[0].size = RSZ;
	mem->regions[0].mmap_size = RSZ;
	mem->regions[0].fd = -1;
}

static void teardown(void)
{
	free(mem);
	free(base);
}

TestSuite(vq_guard, .init = setup, .fini = teardown);

/* A queue of QS entries laid out as Linux does, starting at off. */
static struct pmd_ring_layout ring_at(size_t off, bool event_idx)
{
	struct pmd_ring_layout r = {.size = QS, .event_idx = event_idx};

	r.desc = base + off;
	r.avail = base + off + pmd_ring_desc_bytes(QS);
	r.used = base + off + 8192;
	return r;
}

Test(vq_guard, ring_sizes_follow_the_split_ring_layout)
{
	cr_assert_eq(pmd_ring_desc_bytes(256), 4096);
	cr_assert_eq(pmd_ring_avail_bytes(256, false), 4 + 512);
	cr_assert_eq(pmd_ring_avail_bytes(256, true), 4 + 512 + 2);
	cr_assert_eq(pmd_ring_used_bytes(256, false), 4 + 2048);
	cr_assert_eq(pmd_ring_used_bytes(256, true), 4 + 2048 + 2);
	cr_assert_eq(pmd_ring_used_bytes(32768, true), 4 + 8 * 32768ull + 2);
}

Test(vq_guard, ring_inside_memory_accepted)
{
	struct pmd_ring_layout r = ring_at(0, true);

	cr_assert_null(pmd_guard_rings(mem, &r));
}

/*
 * The used ring (8 * size + 6 bytes with EVENT_IDX) must end inside the
 * region: 2 bytes before the end (4-aligned) is accepted, 2 bytes past and
 * a ring starting 4 bytes before the end (the crash seen) are refused.
 */
Test(vq_guard, used_ring_ending_past_region_refused)
{
	struct pmd_ring_layout r = ring_at(0, true);

	r.used = base + RSZ - 8 * QS - 8;
	cr_assert_null(pmd_guard_rings(mem, &r));
	r.used = base + RSZ - 8 * QS - 4;
	cr_assert_not_null(pmd_guard_rings(mem, &r));
	cr_assert(strstr(pmd_guard_rings(mem, &r), "used ring"));
	r.used = base + RSZ - 4;
	cr_assert(strstr(pmd_guard_rings(mem, &r), "used ring"));
	/* without EVENT_IDX the 2-byte avail_event is not part of the ring */
	r.event_idx = false;
	r.used = base + RSZ - pmd_ring_used_bytes(QS, false);
	cr_assert_null(pmd_guard_rings(mem, &r));
	r.used = base + RSZ - pmd_ring_used_bytes(QS, false) + 4;
	cr_assert_not_null(pmd_guard_rings(mem, &r));
}

Test(vq_guard, avail_ring_used_event_past_region_refused)
{
	struct pmd_ring_layout r = ring_at(0, true);

	r.avail = base + RSZ - pmd_ring_avail_bytes(QS, false); /* used_event 2 bytes past */
	cr_assert_not_null(pmd_guard_rings(mem, &r));
	cr_assert(strstr(pmd_guard_rings(mem, &r), "avail ring"));
	r.event_idx = false;
	r.used = base + 8192;
	cr_assert_null(pmd_guard_rings(mem, &r));
}

Test(vq_guard, descriptor_table_past_region_refused)
{
	struct pmd_ring_layout r = ring_at(0, false);

	r.desc = base + RSZ - pmd_ring_desc_bytes(QS) + 16;
	cr_assert(strstr(pmd_guard_rings(mem, &r), "descriptor table"));
	r.desc = base - 16; /* starts below the region */
	cr_assert(strstr(pmd_guard_rings(mem, &r), "descriptor table"));
}

Test(vq_guard, ring_outside_every_region_or_null_refused)
{
	struct pmd_ring_layout r = ring_at(0, false);

	r.used = (const void *)(uintptr_t)0x1000;
	cr_assert_not_null(pmd_guard_rings(mem, &r));
	r = ring_at(0, false);
	r.avail = NULL;
	cr_assert_not_null(pmd_guard_rings(mem, &r));
	cr_assert_not_null(pmd_guard_rings(NULL, &r));
}

Test(vq_guard, ring_spanning_two_adjacent_regions_refused)
{
	struct rte_vhost_memory *m2 = calloc(1, sizeof(*m2) + 2 * sizeof(m2->regions[0]));
	struct pmd_ring_layout r = ring_at(0, false);

	/* the same buffer split in two regions: host-contiguous but two mappings */
	m2->nregions = 2;
	m2->regions[0] = mem->regions[0];
	m2->regions[0].size = RSZ / 2;
	m2->regions[1] = mem->regions[0];
	m2->regions[1].host_user_addr += RSZ / 2;
	m2->regions[1].guest_phys_addr += RSZ / 2;
	m2->regions[1].size = RSZ / 2;
	r.used = base + RSZ / 2 - 8;
	cr_assert_not_null(pmd_guard_rings(m2, &r));
	r.used = base + RSZ / 2;
	cr_assert_null(pmd_guard_rings(m2, &r));
	free(m2);
}

Test(vq_guard, misaligned_rings_refused)
{
	struct pmd_ring_layout r = ring_at(0, false);

	r.desc = base + 8;
	cr_assert(strstr(pmd_guard_rings(mem, &r), "aligned"));
	r = ring_at(0, false);
	r.avail = base + 4096 + 1;
	cr_assert_not_null(pmd_guard_rings(mem, &r));
	r = ring_at(0, false);
	r.used = base + 8192 + 2;
	cr_assert_not_null(pmd_guard_rings(mem, &r));
}

Test(vq_guard, bad_queue_sizes_refused)
{
	struct pmd_ring_layout r = ring_at(0, false);

	r.size = 0;
	cr_assert_not_null(pmd_guard_rings(mem, &r));
	r.size = 100;
	cr_assert_not_null(pmd_guard_rings(mem, &r));
	r.size = 65536;
	cr_assert_not_null(pmd_guard_rings(mem, &r));
}

Test(vq_guard, range_checks_do_not_overflow)
{
	cr_assert(pmd_guard_range(mem, base, RSZ));
	cr_assert_not(pmd_guard_range(mem, base, RSZ + 1));
	cr_assert_not(pmd_guard_range(mem, base + 1, UINT64_MAX));
	cr_assert_not(pmd_guard_range(mem, base + RSZ, 1));
	cr_assert_not(pmd_guard_range(mem, base, 0));
}

/* A memfd of file_len bytes behind the region; region = [off, off + RSZ) of the file. */
static int region_file(uint64_t file_len, uint64_t off)
{
	int fd = memfd_create("vq_guard", MFD_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, (off_t)file_len), 0);
	mem->regions[0].fd = fd;
	mem->regions[0].mmap_addr = base;
	mem->regions[0].host_user_addr = (uintptr_t)base + off;
	return fd;
}

Test(vq_guard, region_backed_by_its_file_accepted)
{
	char why[160];
	int fd = region_file(RSZ, 0);

	cr_assert_eq(pmd_guard_mem(mem, why, sizeof(why)), 0);
	close(fd);
	fd = region_file(RSZ + 4096, 4096); /* with an mmap_offset */
	cr_assert_eq(pmd_guard_mem(mem, why, sizeof(why)), 0);
	close(fd);
}

/* The SIGBUS case: a memfd shorter than the region (or than offset + size). */
Test(vq_guard, region_longer_than_its_file_refused)
{
	char why[160];
	int fd = region_file(RSZ - 4096, 0);

	cr_assert_eq(pmd_guard_mem(mem, why, sizeof(why)), -1);
	cr_assert(strstr(why, "shorter"), "%s", why);
	close(fd);
	fd = region_file(RSZ, 4096); /* long enough for size, not for offset + size */
	cr_assert_eq(pmd_guard_mem(mem, why, sizeof(why)), -1);
	close(fd);
	fd = region_file(0, 0);
	cr_assert_eq(pmd_guard_mem(mem, why, sizeof(why)), -1);
	close(fd);
}

Test(vq_guard, region_without_usable_file_refused)
{
	char why[160];
	int p[2];

	mem->regions[0].fd = -1;
	cr_assert_eq(pmd_guard_mem(mem, why, sizeof(why)), -1);
	cr_assert_eq(pipe(p), 0); /* not a regular file: its size says nothing */
	mem->regions[0].fd = p[0];
	cr_assert_eq(pmd_guard_mem(mem, why, sizeof(why)), -1);
	cr_assert(strstr(why, "regular"), "%s", why);
	close(p[0]);
	close(p[1]);
	cr_assert_eq(pmd_guard_mem(NULL, why, sizeof(why)), -1);
}

Test(vq_guard, second_region_checked_too)
{
	struct rte_vhost_memory *m2 = calloc(1, sizeof(*m2) + 2 * sizeof(m2->regions[0]));
	char why[160];
	int fd = region_file(RSZ, 0);
	int short_fd = memfd_create("short", MFD_CLOEXEC);

	cr_assert_eq(ftruncate(short_fd, 100), 0);
	m2->nregions = 2;
	m2->regions[0] = mem->regions[0];
	m2->regions[1] = mem->regions[0];
	m2->regions[1].fd = short_fd;
	cr_assert_eq(pmd_guard_mem(m2, why, sizeof(why)), -1);
	cr_assert(strstr(why, "region 1"), "%s", why);
	close(fd);
	close(short_fd);
	free(m2);
}

static struct vhu_msg msg;

/* What the pre hook checks before rte_vhost maps a table: each region against its fd. */
Test(vq_guard, mem_table_message_checked_against_its_fds)
{
	char why[160] = "";
	int fds[2] = {memfd_create("a", MFD_CLOEXEC), memfd_create("b", MFD_CLOEXEC)};

	cr_assert_eq(ftruncate(fds[0], RSZ), 0);
	cr_assert_eq(ftruncate(fds[1], 2 * RSZ), 0);
	memset(&msg, 0, sizeof(msg));
	msg.request = VHU_SET_MEM_TABLE;
	msg.size = 8 + 2 * sizeof(struct vhu_mem_region);
	msg.payload.mem.nregions = 2;
	msg.payload.mem.region[0].size = RSZ;
	msg.payload.mem.region[1].size = RSZ;
	msg.payload.mem.region[1].mmap_offset = RSZ;
	cr_assert_eq(pmd_guard_mem_msg(&msg, fds, 2, why, sizeof(why)), 0, "%s", why);
	/* region 1 one page past its file's end */
	msg.payload.mem.region[1].mmap_offset = RSZ + 4096;
	cr_assert_eq(pmd_guard_mem_msg(&msg, fds, 2, why, sizeof(why)), -1);
	cr_assert(strstr(why, "region 1: file has 131072 bytes"), "%s", why);
	/* offset + size wrapping around 2^64 */
	msg.payload.mem.region[1].mmap_offset = UINT64_MAX - 10;
	cr_assert_eq(pmd_guard_mem_msg(&msg, fds, 2, why, sizeof(why)), -1);
	cr_assert(strstr(why, "overflows"), "%s", why);
	/* tables rte_vhost refuses itself are left to it */
	cr_assert_eq(pmd_guard_mem_msg(&msg, fds, 1, why, sizeof(why)), 0);
	msg.payload.mem.nregions = 9;
	cr_assert_eq(pmd_guard_mem_msg(&msg, fds, 2, why, sizeof(why)), 0);
	/* ADD_MEM_REG: one region, one fd */
	memset(&msg, 0, sizeof(msg));
	msg.request = VHU_ADD_MEM_REG;
	msg.size = sizeof(msg.payload.memreg);
	msg.payload.memreg.region.size = RSZ + 1;
	cr_assert_eq(pmd_guard_mem_msg(&msg, fds, 1, why, sizeof(why)), -1);
	cr_assert(strstr(why, "region 0: file has 65536 bytes"), "%s", why);
	msg.payload.memreg.region.size = RSZ;
	cr_assert_eq(pmd_guard_mem_msg(&msg, fds, 1, why, sizeof(why)), 0);
	/* other messages pass */
	msg.request = VHU_SET_VRING_NUM;
	cr_assert_eq(pmd_guard_mem_msg(&msg, fds, 0, why, sizeof(why)), 0);
	close(fds[0]);
	close(fds[1]);
}

/* SET/GET_INFLIGHT_FD: sizes against the device, the region against its file. */
Test(vq_guard, inflight_message_checked)
{
	char buf[160];
	int fd = memfd_create("inflight", MFD_CLOEXEC);

	cr_assert_eq(pmd_inflight_queue_bytes(128), 2112); /* 16 + 16 * 128, 64-aligned */
	cr_assert_eq(pmd_inflight_queue_bytes(1), 64);
	cr_assert_eq(ftruncate(fd, 2 * 2112), 0);
	memset(&msg, 0, sizeof(msg));
	msg.request = VHU_SET_INFLIGHT_FD;
	msg.size = sizeof(msg.payload.inflight);
	msg.payload.inflight.mmap_size = 2 * 2112;
	msg.payload.inflight.num_queues = 2;
	msg.payload.inflight.queue_size = 128;
	cr_assert_null(pmd_guard_inflight_msg(&msg, fd, 2, false, buf, sizeof(buf)));
	/* a packed ring's entries are twice as large: the same region holds half the queue */
	cr_assert_eq(pmd_inflight_packed_queue_bytes(128), 4160);
	cr_assert_not_null(pmd_guard_inflight_msg(&msg, fd, 2, true, buf, sizeof(buf)));
	cr_assert(strstr(buf, "need 8320"), "%s", buf);
	msg.payload.inflight.queue_size = 64;
	cr_assert_null(pmd_guard_inflight_msg(&msg, fd, 2, true, buf, sizeof(buf)));
	msg.payload.inflight.queue_size = 128;
	/* more queues than the device has */
	cr_assert_not_null(pmd_guard_inflight_msg(&msg, fd, 1, false, buf, sizeof(buf)));
	cr_assert(strstr(buf, "2 queues, the device has 1"), "%s", buf);
	/* the region cannot hold the queues it names */
	msg.payload.inflight.queue_size = 256;
	cr_assert_not_null(pmd_guard_inflight_msg(&msg, fd, 2, false, buf, sizeof(buf)));
	cr_assert(strstr(buf, "need 8320"), "%s", buf);
	msg.payload.inflight.queue_size = 100;
	cr_assert_not_null(pmd_guard_inflight_msg(&msg, fd, 2, false, buf, sizeof(buf)));
	/* the file is shorter than the region */
	msg.payload.inflight.queue_size = 128;
	msg.payload.inflight.mmap_offset = 64;
	cr_assert_not_null(pmd_guard_inflight_msg(&msg, fd, 2, false, buf, sizeof(buf)));
	cr_assert(strstr(buf, "inflight region: file has 4224 bytes"), "%s", buf);
	cr_assert_not_null(pmd_guard_inflight_msg(&msg, -1, 2, false, buf, sizeof(buf)));
	/* GET: no file yet, sizes only */
	msg.request = VHU_GET_INFLIGHT_FD;
	cr_assert_null(pmd_guard_inflight_msg(&msg, -1, 2, false, buf, sizeof(buf)));
	msg.payload.inflight.num_queues = 0;
	cr_assert_not_null(pmd_guard_inflight_msg(&msg, -1, 2, false, buf, sizeof(buf)));
	/* a wrong payload size is rte_vhost's to refuse */
	msg.size = 8;
	cr_assert_null(pmd_guard_inflight_msg(&msg, -1, 2, false, buf, sizeof(buf)));
	close(fd);
}

Test(vq_guard, file_check)
{
	char why[160] = "";
	int p[2];
	int fd = memfd_create("f", MFD_CLOEXEC);

	cr_assert_eq(ftruncate(fd, 8192), 0);
	cr_assert_eq(pmd_guard_file(fd, 4096, 4096, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(pmd_guard_file(fd, 4096, 4097, why, sizeof(why)), -1);
	cr_assert_eq(pmd_guard_file(fd, 0, 0, why, sizeof(why)), -1);
	cr_assert_eq(pmd_guard_file(fd, UINT64_MAX, 2, why, sizeof(why)), -1);
	cr_assert_eq(pmd_guard_file(-1, 0, 1, why, sizeof(why)), -1);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(pmd_guard_file(p[0], 0, 1, why, sizeof(why)), -1);
	cr_assert(strstr(why, "regular"), "%s", why);
	close(p[0]);
	close(p[1]);
	close(fd);
}

Test(vq_guard, vring_index_of_each_vring_message)
{
	const uint32_t state_reqs[] = {VHU_SET_VRING_NUM, VHU_SET_VRING_ADDR, VHU_SET_VRING_BASE,
				       VHU_GET_VRING_BASE, VHU_SET_VRING_ENABLE};
	const uint32_t fd_reqs[] = {VHU_SET_VRING_KICK, VHU_SET_VRING_CALL, VHU_SET_VRING_ERR};
	uint32_t idx = 0;

	for (unsigned i = 0; i < sizeof(state_reqs) / sizeof(state_reqs[0]); i++) {
		memset(&msg, 0, sizeof(msg));
		msg.request = state_reqs[i];
		msg.payload.state.index = 4000;
		cr_assert(pmd_guard_vring_index(&msg, &idx));
		cr_assert_eq(idx, 4000, "request %u", state_reqs[i]);
	}
	for (unsigned i = 0; i < sizeof(fd_reqs) / sizeof(fd_reqs[0]); i++) {
		memset(&msg, 0, sizeof(msg));
		msg.request = fd_reqs[i];
		msg.payload.u64 = 0x100 | 77; /* NOFD flag + index 77 */
		cr_assert(pmd_guard_vring_index(&msg, &idx));
		cr_assert_eq(idx, 77, "request %u", fd_reqs[i]);
	}
	msg.request = VHU_SET_MEM_TABLE;
	cr_assert_not(pmd_guard_vring_index(&msg, &idx));
	msg.request = VHU_GET_CONFIG;
	cr_assert_not(pmd_guard_vring_index(&msg, &idx));
}

Test(vq_guard, config_framing)
{
	memset(&msg, 0, sizeof(msg));
	msg.request = VHU_GET_CONFIG;
	msg.size = 12 + 60; /* QEMU */
	msg.payload.config.size = 60;
	cr_assert_null(pmd_guard_config_msg(&msg));
	msg.size = 12 + 256; /* SPDK */
	cr_assert_null(pmd_guard_config_msg(&msg));
	msg.payload.config.size = 257;
	cr_assert_not_null(pmd_guard_config_msg(&msg));
	msg.payload.config.size = 60;
	msg.size = 12 + 59;
	cr_assert_not_null(pmd_guard_config_msg(&msg));
	msg.size = 11;
	msg.payload.config.size = 0;
	cr_assert_not_null(pmd_guard_config_msg(&msg));
	msg.size = 12 + 257;
	cr_assert_not_null(pmd_guard_config_msg(&msg));
}

Test(vq_guard, vring_messages_checked_against_the_device)
{
	char buf[96];

	memset(&msg, 0, sizeof(msg));
	msg.request = VHU_SET_VRING_NUM;
	msg.payload.state.index = 1;
	msg.payload.state.num = 256;
	cr_assert_null(pmd_guard_vring_msg(&msg, 2, buf, sizeof(buf)));
	cr_assert_not_null(pmd_guard_vring_msg(&msg, 1, buf, sizeof(buf)));
	cr_assert(strstr(buf, "queue index 1"), "%s", buf);
	for (unsigned i = 0; i < 4; i++) {
		const uint32_t bad[] = {0, 100, 65536, 0xffffffffu};

		msg.payload.state.num = bad[i];
		cr_assert_not_null(pmd_guard_vring_msg(&msg, 2, buf, sizeof(buf)), "%u", bad[i]);
	}
	msg.payload.state.num = 32768;
	cr_assert_null(pmd_guard_vring_msg(&msg, 2, buf, sizeof(buf)));
	msg.request = VHU_SET_VRING_BASE; /* num is the avail index here, any value */
	msg.payload.state.num = 100;
	cr_assert_null(pmd_guard_vring_msg(&msg, 2, buf, sizeof(buf)));
	msg.request = VHU_SET_VRING_CALL;
	msg.payload.u64 = 0x100 | 2;
	cr_assert_not_null(pmd_guard_vring_msg(&msg, 2, buf, sizeof(buf)));
	msg.request = VHU_SET_MEM_TABLE;
	cr_assert_null(pmd_guard_vring_msg(&msg, 0, buf, sizeof(buf)));
}

/*
 * The kick counter is read without waiting on an eventfd the frontend made
 * blocking (a plain read of an empty one would never return: the timeout
 * fails the test), and the frontend's flag is left as it was.
 */
Test(vq_guard, eventfd_taken_without_waiting_whatever_its_flag, .timeout = 10)
{
	const uint64_t three = 3;
	int fd = eventfd(0, EFD_CLOEXEC); /* blocking */

	cr_assert_geq(fd, 0);
	cr_assert_eq(pmd_guard_eventfd_take(fd), 0);
	cr_assert_eq(write(fd, &three, sizeof(three)), sizeof(three));
	cr_assert_eq(write(fd, &three, sizeof(three)), sizeof(three));
	cr_assert_eq(pmd_guard_eventfd_take(fd), 6);
	cr_assert_eq(pmd_guard_eventfd_take(fd), 0);
	cr_assert_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0, "the frontend's flag is untouched");
	cr_assert_eq(pmd_guard_eventfd_take(-1), 0);
	close(fd);
}

/*
 * Unread replies are counted on the sender's side and fall to 0 once the
 * frontend reads them; with 20-byte replies (GET_FEATURES) the limit is
 * passed while sends still go through, i.e. before rte_vhost's blocking
 * send would wait.
 */
Test(vq_guard, unread_replies_counted_and_limit_below_a_full_socket)
{
	const uint8_t reply[20] = {1};
	uint8_t buf[4096];
	int sv[2], most = 0, sent = 0;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	cr_assert_eq(pmd_guard_replies_unread(sv[0]), 0);
	cr_assert_eq(send(sv[0], reply, sizeof(reply), 0), sizeof(reply));
	cr_assert_gt(pmd_guard_replies_unread(sv[0]), 0);
	cr_assert_eq(read(sv[1], buf, sizeof(buf)), sizeof(reply));
	cr_assert_eq(pmd_guard_replies_unread(sv[0]), 0, "read: nothing unread");
	/* the frontend never reads: fill until the socket is full */
	while (send(sv[0], reply, sizeof(reply), 0) == sizeof(reply)) {
		int n = pmd_guard_replies_unread(sv[0]);

		sent++;
		if (n > most)
			most = n;
		cr_assert_lt(sent, 1000000);
	}
	cr_assert_eq(errno, EAGAIN);
	cr_assert_gt(most, PMD_GUARD_UNREAD_MAX, "full at %d unread bytes (%d replies)", most,
		     sent);
	while (read(sv[1], buf, sizeof(buf)) > 0)
		;
	cr_assert_eq(pmd_guard_replies_unread(sv[0]), 0);
	cr_assert_eq(pmd_guard_replies_unread(-1), 0);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A read on a frontend's socket that gets no data returns (EAGAIN) after
 * the bound instead of waiting for good (the test's timeout); data that
 * is there is read at once.
 */
Test(vq_guard, socket_reads_bounded, .timeout = 10)
{
	uint8_t buf[8];
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0); /* blocking */
	cr_assert_eq(pmd_guard_sock_bound_reads(sv[0]), 0);
	cr_assert_eq(write(sv[1], "abcd", 4), 4);
	cr_assert_eq(read(sv[0], buf, sizeof(buf)), 4);
	cr_assert_eq(read(sv[0], buf, sizeof(buf)), -1, "no payload: the read gives up");
	cr_assert(errno == EAGAIN || errno == EWOULDBLOCK, "errno %d", errno);
	cr_assert_eq(pmd_guard_sock_bound_reads(-1), -EBADF);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A packed ring: the descriptor ring (16 * size bytes, 16-aligned) and the
 * two 4-byte event suppression areas (4-aligned) each inside one region.
 */
Test(vq_guard, packed_ring_layout_checked)
{
	struct pmd_ring_layout r = {.size = QS, .event_idx = true, .packed = true};

	r.desc = base;
	r.avail = base + 16 * QS;
	r.used = base + 16 * QS + 4;
	cr_assert_null(pmd_guard_rings(mem, &r));
	r.used = base + 16 * QS + 2;
	cr_assert(strstr(pmd_guard_rings(mem, &r), "packed ring not aligned"));
	r.used = base + RSZ - 4;
	cr_assert_null(pmd_guard_rings(mem, &r), "an event area in the region's last 4 bytes");
	r.avail = base + RSZ;
	cr_assert(strstr(pmd_guard_rings(mem, &r), "driver event area"));
	r.avail = base + 16 * QS;
	r.desc = base + RSZ - 16 * QS + 16;
	cr_assert(strstr(pmd_guard_rings(mem, &r), "descriptor ring"));
}
