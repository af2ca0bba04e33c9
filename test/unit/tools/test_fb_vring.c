/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fb_vring.c - femu-bench's split virtqueue driver: ring layout and
 * pre-built chains as a backend reads them, completion polling against the
 * in-process peer, kick suppression (NO_NOTIFY and EVENT_IDX), used-id
 * validation, and a workload run end to end on the peer.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fb_mem.h"
#include "fb_peer.h"
#include "fb_vring.h"
#include "fb_workload.h"

static struct fb_mem mem;
static struct fb_vq vq;

static void *gpa_ptr(uint64_t gpa)
{
	cr_assert_geq(gpa, mem.gpa_base);
	cr_assert_lt(gpa - mem.gpa_base, mem.size);
	return mem.base + (gpa - mem.gpa_base);
}

static void setup_vq(bool event_idx)
{
	cr_assert_eq(fb_mem_create(&mem, fb_vq_mem_bytes(64, 8, 8192), false), 0);
	cr_assert_eq(fb_vq_init(&vq, &mem, 0, 64, 8, 8192, event_idx), 0);
}

static void teardown_vq(void)
{
	fb_vq_fini(&vq);
	fb_mem_destroy(&mem);
}

static uint64_t kick_count(void)
{
	uint64_t v = 0;
	if (read(vq.kick_fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

Test(fb_vring, init_rejects_bad_sizes)
{
	cr_assert_eq(fb_mem_create(&mem, 1 << 20, false), 0);
	cr_assert_lt(fb_vq_init(&vq, &mem, 0, 100, 8, 4096, false), 0);
	cr_assert_lt(fb_vq_init(&vq, &mem, 0, 64, 22, 4096, false), 0);	      /* > 64 / 3 */
	cr_assert_lt(fb_vq_init(&vq, &mem, 0, 1024, 300, 1 << 20, false), 0); /* no room */
	fb_mem_destroy(&mem);
}

Test(fb_vring, chain_layout_as_a_backend_sees_it, .fini = teardown_vq)
{
	setup_vq(false);
	fb_vq_submit(&vq, 3, VIRTIO_BLK_T_IN, 77, 4096);
	fb_vq_submit(&vq, 5, VIRTIO_BLK_T_OUT, 99, 512);
	/* heads are the slot numbers: small, whatever the queue size */
	cr_assert_eq(vq.vr.avail->ring[0], 3);
	cr_assert_eq(vq.vr.avail->ring[1], 5);
	cr_assert_eq(vq.vr.avail->idx, 0, "not published before fb_vq_publish");
	fb_vq_publish(&vq);
	cr_assert_eq(vq.vr.avail->idx, 2);
	cr_assert_eq(vq.vr.avail->flags, VRING_AVAIL_F_NO_INTERRUPT);

	struct vring_desc *d = vq.vr.desc;
	struct virtio_blk_outhdr *h = gpa_ptr(d[3].addr);
	cr_assert_eq(d[3].len, sizeof(*h));
	cr_assert_eq(d[3].flags, VRING_DESC_F_NEXT);
	cr_assert_eq(h->type, VIRTIO_BLK_T_IN);
	cr_assert_eq(h->sector, 77);
	cr_assert_eq(d[3].next, 8 + 2 * 3);
	cr_assert_eq(d[d[3].next].len, 4096);
	cr_assert_eq(d[d[3].next].flags, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE);
	cr_assert_eq(gpa_ptr(d[d[3].next].addr), fb_vq_slot_data(&vq, 3));
	struct vring_desc *st = &d[d[d[3].next].next];
	cr_assert_eq(st->len, 1);
	cr_assert_eq(st->flags, VRING_DESC_F_WRITE);
	cr_assert_eq(*(uint8_t *)gpa_ptr(st->addr), FB_STATUS_UNSET);
	/* the write's data descriptor is device-readable */
	cr_assert_eq(d[8 + 2 * 5].flags, VRING_DESC_F_NEXT);
	cr_assert_eq(d[8 + 2 * 5].len, 512);
	/* a request without data (flush) skips the data descriptor */
	fb_vq_submit(&vq, 1, VIRTIO_BLK_T_FLUSH, 0, 0);
	cr_assert_eq(d[1].next, 8 + 2 * 1 + 1);
	cr_assert_eq(d[d[1].next].flags, VRING_DESC_F_WRITE);
}

/*
 * --indirect: each head is a lone INDIRECT descriptor naming its slot's
 * table (the same for every request of the slot), whose entries chain
 * header, data and status as the direct chain's; only a length or direction
 * that changed is written.
 */
Test(fb_vring, indirect_tables_as_a_backend_sees_them, .fini = teardown_vq)
{
	struct vring_desc *d, *t;
	struct virtio_blk_outhdr *h;

	setup_vq(false);
	cr_assert_eq(fb_vq_use_indirect(&vq), 0);
	fb_vq_submit(&vq, 3, VIRTIO_BLK_T_IN, 77, 4096);
	fb_vq_submit(&vq, 5, VIRTIO_BLK_T_OUT, 99, 512);
	fb_vq_submit(&vq, 1, VIRTIO_BLK_T_FLUSH, 0, 0);
	fb_vq_publish(&vq);
	cr_assert_eq(vq.vr.avail->ring[0], 3);
	cr_assert_eq(vq.vr.avail->ring[1], 5);
	cr_assert_eq(vq.vr.avail->ring[2], 1);
	d = vq.vr.desc;
	for (unsigned s = 0; s < 8; s++) {
		cr_assert_eq(d[s].flags, VRING_DESC_F_INDIRECT, "head %u", s);
		cr_assert_eq(d[s].len, 3 * sizeof(struct vring_desc));
		cr_assert_eq(d[s].addr % 64, 0, "a table a line of its own");
		cr_assert_eq(d[s].addr % 4096 == 0, s == 0, "the tables start a page");
	}
	t = gpa_ptr(d[3].addr);
	h = gpa_ptr(t[0].addr);
	cr_assert_eq(t[0].len, sizeof(*h));
	cr_assert_eq(t[0].flags, VRING_DESC_F_NEXT);
	cr_assert_eq(h->type, VIRTIO_BLK_T_IN);
	cr_assert_eq(h->sector, 77);
	cr_assert_eq(t[0].next, 1);
	cr_assert_eq(t[1].len, 4096);
	cr_assert_eq(t[1].flags, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE);
	cr_assert_eq(gpa_ptr(t[1].addr), fb_vq_slot_data(&vq, 3));
	cr_assert_eq(t[1].next, 2);
	cr_assert_eq(t[2].len, 1);
	cr_assert_eq(t[2].flags, VRING_DESC_F_WRITE);
	cr_assert_eq(gpa_ptr(t[2].addr), &vq.status[3]);
	t = gpa_ptr(d[5].addr);
	cr_assert_eq(t[1].flags, VRING_DESC_F_NEXT, "a write's data is device-readable");
	cr_assert_eq(t[1].len, 512);
	t = gpa_ptr(d[1].addr);
	cr_assert_eq(t[0].next, 2, "a flush skips the data entry");
	/* the table does not move: the next request on slot 3 reuses it */
	fb_vq_submit(&vq, 3, VIRTIO_BLK_T_IN, 8, 1024);
	t = gpa_ptr(d[3].addr);
	cr_assert_eq(t[1].len, 1024);
	cr_assert_eq(vq.vr.avail->ring[3], 3);
}

Test(fb_vring, kick_follows_no_notify, .fini = teardown_vq)
{
	setup_vq(false);
	fb_vq_submit(&vq, 0, VIRTIO_BLK_T_IN, 0, 512);
	fb_vq_publish(&vq);
	cr_assert_eq(kick_count(), 1);
	vq.vr.used->flags = VRING_USED_F_NO_NOTIFY;
	fb_vq_submit(&vq, 1, VIRTIO_BLK_T_IN, 0, 512);
	fb_vq_publish(&vq);
	cr_assert_eq(kick_count(), 0);
	fb_vq_publish(&vq); /* nothing new: no kick either way */
	vq.vr.used->flags = 0;
	fb_vq_publish(&vq);
	cr_assert_eq(kick_count(), 0);
	cr_assert_eq(vq.kicks, 1);
}

Test(fb_vring, kick_follows_avail_event, .fini = teardown_vq)
{
	setup_vq(true);
	cr_assert_eq(vq.vr.avail->flags, 0);
	vring_avail_event(&vq.vr) = 0; /* backend wants a kick when idx passes 0 */
	fb_vq_submit(&vq, 0, VIRTIO_BLK_T_IN, 0, 512);
	fb_vq_publish(&vq);
	cr_assert_eq(kick_count(), 1);
	vring_avail_event(&vq.vr) = 0x8000; /* far ahead: polling, no kicks */
	fb_vq_submit(&vq, 1, VIRTIO_BLK_T_IN, 0, 512);
	fb_vq_submit(&vq, 2, VIRTIO_BLK_T_IN, 0, 512);
	fb_vq_publish(&vq);
	cr_assert_eq(kick_count(), 0);
	vring_avail_event(&vq.vr) = 3; /* one behind what will be published */
	fb_vq_submit(&vq, 3, VIRTIO_BLK_T_IN, 0, 512);
	fb_vq_publish(&vq);
	cr_assert_eq(kick_count(), 1);
}

Test(fb_vring, poll_and_id_validation, .fini = teardown_vq)
{
	uint32_t ids[8];

	setup_vq(true);
	cr_assert_eq(fb_vq_poll(&vq, ids, 8), 0);
	vq.vr.used->ring[0].id = 6;
	vq.vr.used->ring[1].id = 27;
	vq.vr.used->idx = 2;
	cr_assert_eq(fb_vq_poll(&vq, ids, 8), 2);
	cr_assert_eq(fb_vq_id_slot(&vq, ids[0]), 6);
	cr_assert_eq(ids[1], 27);
	cr_assert_eq(fb_vq_id_slot(&vq, ids[1]), -1); /* a data/status descriptor */
	cr_assert_eq(fb_vq_id_slot(&vq, 7), 7);
	cr_assert_eq(fb_vq_id_slot(&vq, 8), -1);   /* not a chain head */
	cr_assert_eq(fb_vq_id_slot(&vq, 100), -1); /* beyond the ring */
	/* used_event left where it was, far ahead: the backend needs no call */
	cr_assert_eq(vring_used_event(&vq.vr), 0x8000);
	cr_assert(!vring_need_event(vring_used_event(&vq.vr), 2, 0));
}

/* Serve n entries as a backend would, each with id 0 (a valid head). */
static void backend_serves(uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		vq.vr.used->ring[(uint16_t)(vq.vr.used->idx + i) & vq.mask].id = 0;
	vq.vr.used->idx = (uint16_t)(vq.vr.used->idx + n);
}

static void poll_all(void)
{
	uint32_t ids[64];

	while (fb_vq_poll(&vq, ids, 64) > 0)
		;
}

Test(fb_vring, used_event_is_rewritten_only_when_completions_come_close, .fini = teardown_vq)
{
	uint16_t old;

	setup_vq(true);
	/* 0x4000 completions: still at least 0x4000 ahead, untouched */
	for (int k = 0; k < 0x4000 / 64; k++) {
		old = vq.vr.used->idx;
		backend_serves(64);
		cr_assert(!vring_need_event(vring_used_event(&vq.vr), vq.vr.used->idx, old));
		poll_all();
	}
	cr_assert_eq(vq.last_used, 0x4000);
	cr_assert_eq(vring_used_event(&vq.vr), 0x8000);
	/* one more: moved 0x8000 ahead of what was consumed */
	backend_serves(1);
	poll_all();
	cr_assert_eq(vring_used_event(&vq.vr), (uint16_t)(0x4001 + 0x8000));
	/* a 65536-completion wrap never passes it */
	for (int k = 0; k < 0x10000 / 64; k++) {
		old = vq.vr.used->idx;
		backend_serves(64);
		cr_assert(!vring_need_event(vring_used_event(&vq.vr), vq.vr.used->idx, old),
			  "a call asked for at used idx %u", vq.vr.used->idx);
		poll_all();
	}
	/* someone asked for a call at the next completion: the next poll puts it back */
	vring_used_event(&vq.vr) = vq.last_used;
	backend_serves(1);
	poll_all();
	cr_assert_eq(vring_used_event(&vq.vr), (uint16_t)(vq.last_used + 0x8000));
}

Test(fb_vring, round_trip_with_peer, .fini = teardown_vq)
{
	struct fb_peer p;
	uint32_t ids[8];
	unsigned got = 0;

	setup_vq(false);
	cr_assert_eq(fb_peer_start(&p, &vq, 1, -1), 0);
	for (int round = 0; round < 1000; round++) {
		for (unsigned s = 0; s < 8; s++)
			fb_vq_submit(&vq, s, VIRTIO_BLK_T_IN, s, 512);
		fb_vq_publish(&vq);
		for (unsigned n = 0; n < 8;) {
			unsigned k = fb_vq_poll(&vq, ids, 8);
			for (unsigned i = 0; i < k; i++) {
				int s = fb_vq_id_slot(&vq, ids[i]);
				cr_assert_geq(s, 0);
				cr_assert_eq(vq.status[s], VIRTIO_BLK_S_OK);
			}
			n += k;
			got += k;
		}
	}
	fb_peer_stop(&p);
	cr_assert_eq(got, 8000);
	cr_assert_eq(p.completed, 8000);
}

Test(fb_vring, rand_below_is_in_range_and_spread)
{
	uint64_t s = 12345, hist[10] = {0};
	for (int i = 0; i < 100000; i++) {
		uint64_t v = fb_rand_below(&s, 10);
		cr_assert_lt(v, 10);
		hist[v]++;
	}
	for (int i = 0; i < 10; i++)
		cr_assert(hist[i] > 9000 && hist[i] < 11000, "bucket %d: %llu", i,
			  (unsigned long long)hist[i]);
}
