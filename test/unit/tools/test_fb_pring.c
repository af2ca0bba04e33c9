/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_fb_pring.c - femu-bench's packed virtqueue driver (fb_pring.h) as a
 * device following virtio 1.2 sees it: chains in the descriptor ring with
 * AVAIL/USED bits of their pass, the first head of a batch stored at
 * publish, chains across the ring end, used descriptors consumed by their
 * buffer id's chain length, the kick decision from the device event area
 * (ENABLE, DISABLE, descriptor events across a wrap), the driver event kept
 * out of the device's reach, SET_VRING_BASE's wrap counter, the feature
 * check of --packed, and workloads end to end on the in-process peer.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "fb_dev.h"
#include "fb_mem.h"
#include "fb_opts.h"
#include "fb_peer.h"
#include "fb_pring.h"
#include "fb_workload.h"

#define QSIZE 16u
#define SLOTS 5u /* 15 of the 16 descriptors in flight at most */

static struct fb_mem mem;
static struct fb_vq vq;

static void *gpa_ptr(uint64_t gpa)
{
	cr_assert_geq(gpa, mem.gpa_base);
	cr_assert_lt(gpa - mem.gpa_base, mem.size);
	return mem.base + (gpa - mem.gpa_base);
}

static void setup(bool event_idx)
{
	cr_assert_eq(fb_mem_create(&mem, fb_vq_mem_bytes(QSIZE, SLOTS, 4096), false), 0);
	cr_assert_eq(fb_vq_init_layout(&vq, &mem, 0, QSIZE, SLOTS, 4096, event_idx, true), 0);
	cr_assert(vq.packed);
}

static void teardown(void)
{
	fb_vq_fini(&vq);
	fb_mem_destroy(&mem);
}

static uint64_t kicks(void)
{
	uint64_t v = 0;

	if (read(vq.kick_fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* Is the descriptor at ring position pos available in the pass whose wrap counter is wrap? */
static bool avail_at(unsigned pos, unsigned wrap)
{
	uint16_t f = vq.pdesc[pos].flags;
	bool a = f & FB_PK_AVAIL, u = f & FB_PK_USED;

	return a == (bool)wrap && u != (bool)wrap;
}

/*
 * The device's side: walk the chain at ring position *pos (wrap counter
 * *wrap), check it is available and well formed, write the status byte OK
 * and a used descriptor at *used (*uwrap), advance all of them.  Returns
 * the chain's buffer id.
 */
static uint16_t device_complete(unsigned *pos, unsigned *wrap, unsigned *used, unsigned *uwrap)
{
	unsigned n = 0, p = *pos, w = *wrap;
	struct vring_packed_desc *d;
	uint16_t id;

	cr_assert(avail_at(p, w), "head at %u (wrap %u) not available: flags 0x%x", p, w,
		  vq.pdesc[p].flags);
	for (;;) {
		d = &vq.pdesc[p];
		cr_assert(avail_at(p, w), "chain descriptor at %u not of this pass", p);
		n++;
		if (++p == QSIZE) {
			p = 0;
			w ^= 1;
		}
		if (!(d->flags & VRING_DESC_F_NEXT))
			break;
		cr_assert_lt(n, QSIZE);
	}
	cr_assert(d->flags & VRING_DESC_F_WRITE);
	cr_assert_eq(d->len, 1);
	*(uint8_t *)gpa_ptr(d->addr) = VIRTIO_BLK_S_OK;
	id = d->id;
	vq.pdesc[*used].id = id;
	vq.pdesc[*used].len = 1;
	vq.pdesc[*used].flags =
	    (uint16_t)(*uwrap ? (FB_PK_AVAIL | FB_PK_USED) : 0); /* used: both equal the wrap */
	*used = (*used + n) % QSIZE;
	if (*used < n)
		*uwrap ^= 1;
	*pos = p;
	*wrap = w;
	return id;
}

/*
 * --indirect on a packed ring: each request is one ring descriptor (the
 * slot's buffer id) naming the slot's table of header, data and status in
 * order (a flush: header and status); the consumer moves by one per
 * completion.
 */
Test(fb_pring, indirect_one_descriptor_per_request, .fini = teardown)
{
	struct vring_packed_desc *t;
	struct virtio_blk_outhdr *h;
	uint32_t ids[4];

	setup(false);
	cr_assert_eq(fb_vq_use_indirect(&vq), 0);
	fb_pvq_submit(&vq, 3, VIRTIO_BLK_T_IN, 77, 4096);
	fb_pvq_submit(&vq, 1, VIRTIO_BLK_T_FLUSH, 0, 0);
	fb_pvq_publish(&vq);
	cr_assert(avail_at(0, 1) && avail_at(1, 1));
	cr_assert(!avail_at(2, 1), "two requests, two ring descriptors");
	cr_assert_eq(vq.pdesc[0].flags & ~(FB_PK_AVAIL | FB_PK_USED), VRING_DESC_F_INDIRECT);
	cr_assert_eq(vq.pdesc[0].id, 3);
	cr_assert_eq(vq.pdesc[0].len, 3 * sizeof(*t));
	t = gpa_ptr(vq.pdesc[0].addr);
	h = gpa_ptr(t[0].addr);
	cr_assert_eq(t[0].len, sizeof(*h));
	cr_assert_eq(t[0].flags & VRING_DESC_F_WRITE, 0);
	cr_assert_eq(h->sector, 77);
	cr_assert_eq(t[1].len, 4096);
	cr_assert_eq(t[1].flags, VRING_DESC_F_WRITE);
	cr_assert_eq(gpa_ptr(t[1].addr), fb_vq_slot_data(&vq, 3));
	cr_assert_eq(t[2].len, 1);
	cr_assert_eq(t[2].flags, VRING_DESC_F_WRITE);
	cr_assert_eq(gpa_ptr(t[2].addr), &vq.status[3]);
	cr_assert_eq(vq.pdesc[1].id, 1);
	cr_assert_eq(vq.pdesc[1].len, 2 * sizeof(*t), "a flush: header and status");
	t = gpa_ptr(vq.pdesc[1].addr);
	cr_assert_eq(gpa_ptr(t[1].addr), &vq.status[1]);
	cr_assert_eq(t[1].flags, VRING_DESC_F_WRITE);
	/* the device completes both, each one ring descriptor */
	vq.pdesc[0].flags = FB_PK_AVAIL | FB_PK_USED;
	vq.pdesc[1].id = 1;
	vq.pdesc[1].flags = FB_PK_AVAIL | FB_PK_USED;
	vq.pdesc[0].id = 3;
	cr_assert_eq(fb_pvq_poll(&vq, ids, 4), 2);
	cr_assert_eq(ids[0], 3);
	cr_assert_eq(ids[1], 1);
	cr_assert_eq(vq.last_used, 2);
}

Test(fb_pring, chain_layout_and_publish, .fini = teardown)
{
	struct virtio_blk_outhdr *h;

	setup(false);
	cr_assert_eq(vq.drv_ev->flags, VRING_PACKED_EVENT_FLAG_DISABLE, "polling: no calls");
	cr_assert_eq(fb_vq_base(&vq), 0x8000, "position 0, wrap counter 1");
	fb_pvq_submit(&vq, 3, VIRTIO_BLK_T_IN, 77, 4096);
	fb_pvq_submit(&vq, 1, VIRTIO_BLK_T_OUT, 99, 512);
	/* the batch's first head waits for publish; the rest of the batch is in place */
	cr_assert(!avail_at(0, 1), "first head made available before publish");
	cr_assert(avail_at(1, 1) && avail_at(2, 1) && avail_at(3, 1) && avail_at(4, 1) &&
		  avail_at(5, 1));
	fb_pvq_publish(&vq);
	cr_assert(avail_at(0, 1));
	h = gpa_ptr(vq.pdesc[0].addr);
	cr_assert_eq(vq.pdesc[0].len, sizeof(*h));
	cr_assert_eq(h->type, VIRTIO_BLK_T_IN);
	cr_assert_eq(h->sector, 77);
	cr_assert_eq(vq.pdesc[0].flags & ~(FB_PK_AVAIL | FB_PK_USED), VRING_DESC_F_NEXT);
	cr_assert_eq(vq.pdesc[1].len, 4096);
	cr_assert_eq(vq.pdesc[1].flags & ~(FB_PK_AVAIL | FB_PK_USED),
		     VRING_DESC_F_NEXT | VRING_DESC_F_WRITE);
	cr_assert_eq(gpa_ptr(vq.pdesc[1].addr), fb_vq_slot_data(&vq, 3));
	cr_assert_eq(vq.pdesc[2].flags & ~(FB_PK_AVAIL | FB_PK_USED), VRING_DESC_F_WRITE);
	cr_assert_eq(gpa_ptr(vq.pdesc[2].addr), &vq.status[3]);
	cr_assert_eq(vq.status[3], FB_STATUS_UNSET);
	/* every descriptor of a chain carries its buffer id */
	for (unsigned i = 0; i < 3; i++)
		cr_assert_eq(vq.pdesc[i].id, 3);
	for (unsigned i = 3; i < 6; i++)
		cr_assert_eq(vq.pdesc[i].id, 1);
	/* a write's data descriptor is device-readable */
	cr_assert_eq(vq.pdesc[4].flags & VRING_DESC_F_WRITE, 0);
	cr_assert_eq(vq.pdesc[4].len, 512);
	cr_assert_eq(vq.avail_idx, 6);
}

Test(fb_pring, zero_length_request_is_two_descriptors, .fini = teardown)
{
	unsigned pos = 0, wrap = 1, used = 0, uwrap = 1;
	uint32_t ids[4];

	setup(false);
	fb_pvq_submit(&vq, 2, VIRTIO_BLK_T_FLUSH, 0, 0);
	fb_pvq_publish(&vq);
	cr_assert_eq(vq.avail_idx, 2);
	cr_assert_eq(device_complete(&pos, &wrap, &used, &uwrap), 2);
	cr_assert_eq(fb_pvq_poll(&vq, ids, 4), 1);
	cr_assert_eq(ids[0], 2);
	cr_assert_eq(vq.last_used, 2, "the consumer moves by the chain's 2 descriptors");
}

/*
 * Many passes of a small ring with chains of 3 and 2 descriptors: chains
 * across the ring end carry each descriptor's own pass bits, completions out
 * of order are matched by id and the consumer follows each chain's length.
 */
Test(fb_pring, wraps_with_chains_across_the_end, .fini = teardown)
{
	unsigned pos = 0, wrap = 1, used = 0, uwrap = 1, done = 0;
	uint32_t ids[SLOTS];
	bool inflight[SLOTS] = {false};

	setup(true);
	for (unsigned round = 0; round < 200; round++) {
		unsigned nsub = 0;

		for (unsigned s = 0; s < SLOTS; s++)
			if (!inflight[s] && (s + round) % 3 != 0) {
				fb_pvq_submit(&vq, s, VIRTIO_BLK_T_IN, s, (s & 1) ? 0 : 4096);
				inflight[s] = true;
				nsub++;
			}
		fb_pvq_publish(&vq);
		/* the device completes what is available (in ring order) */
		while (nsub--)
			cr_assert_lt(device_complete(&pos, &wrap, &used, &uwrap), SLOTS);
		unsigned n = fb_pvq_poll(&vq, ids, SLOTS);
		for (unsigned i = 0; i < n; i++) {
			cr_assert(inflight[ids[i]], "id %u completed twice", ids[i]);
			cr_assert_eq(vq.status[ids[i]], VIRTIO_BLK_S_OK);
			inflight[ids[i]] = false;
			done++;
		}
		cr_assert_eq(vq.last_used, vq.avail_idx, "round %u: all consumed", round);
		cr_assert_eq(vq.last_used & vq.mask, used);
		/* the driver event stays beyond what the device can reach */
		cr_assert_geq((uint16_t)(vq.pk_event - vq.last_used), 3 * SLOTS);
		cr_assert_eq(vq.drv_ev->flags, VRING_PACKED_EVENT_FLAG_DESC);
		cr_assert_eq(vq.drv_ev->off_wrap, fb_pvq_off_wrap(&vq, vq.pk_event));
	}
	cr_assert_gt(vq.avail_idx, 0);
	cr_assert_gt(done, 400);
	/* SET_VRING_BASE's value: position and the wrap counter of the next avail count */
	cr_assert_eq(fb_vq_base(&vq), (vq.avail_idx & vq.mask) | (wrap << 15));
}

Test(fb_pring, used_id_not_a_slot_moves_one_descriptor, .fini = teardown)
{
	uint32_t ids[2];

	setup(false);
	vq.pdesc[0].id = 999;
	vq.pdesc[0].flags = FB_PK_AVAIL | FB_PK_USED;
	cr_assert_eq(fb_pvq_poll(&vq, ids, 2), 1);
	cr_assert_eq(ids[0], 999);
	cr_assert_eq(vq.last_used, 1);
	cr_assert_eq(fb_vq_id_slot(&vq, ids[0]), -1);
}

/* One request published with the device event area as given; the kicks it caused. */
static uint64_t publish_with(uint16_t flags, uint16_t off_wrap)
{
	vq.dev_ev->flags = flags;
	vq.dev_ev->off_wrap = off_wrap;
	fb_pvq_submit(&vq, 0, VIRTIO_BLK_T_IN, 0, 4096);
	fb_pvq_publish(&vq);
	/* complete it at once, so slot 0 can be reused */
	vq.pdesc[(uint16_t)(vq.avail_idx - 3) & vq.mask].flags =
	    fb_pvq_wrap(&vq, (uint16_t)(vq.avail_idx - 3)) ? (FB_PK_AVAIL | FB_PK_USED) : 0;
	vq.pdesc[(uint16_t)(vq.avail_idx - 3) & vq.mask].id = 0;
	uint32_t id;
	cr_assert_eq(fb_pvq_poll(&vq, &id, 1), 1);
	return kicks();
}

Test(fb_pring, kick_follows_the_device_event_area, .fini = teardown)
{
	setup(true);
	cr_assert_eq(publish_with(VRING_PACKED_EVENT_FLAG_ENABLE, 0), 1, "ENABLE: kick");
	cr_assert_eq(publish_with(VRING_PACKED_EVENT_FLAG_DISABLE, 0), 0, "DISABLE: none");
	/* counts 6..8 published now: an event at 7 (wrap 1) is crossed, one at 9 is not */
	cr_assert_eq(publish_with(VRING_PACKED_EVENT_FLAG_DESC, 7 | 0x8000), 1);
	cr_assert_eq(publish_with(VRING_PACKED_EVENT_FLAG_DESC, 12 | 0x8000), 0);
	/* counts 12..14: the event at 12 is crossed */
	cr_assert_eq(publish_with(VRING_PACKED_EVENT_FLAG_DESC, 12 | 0x8000), 1);
	/* counts 15..17 cross the ring end (positions 15, 0, 1; wrap 1 then 0) */
	cr_assert_eq(publish_with(VRING_PACKED_EVENT_FLAG_DESC, 0), 1,
		     "an event at position 0 of the next pass is crossed");
	/* counts 18..20 (positions 2..4, wrap 0): an event at position 4 of the first pass is old
	 */
	cr_assert_eq(publish_with(VRING_PACKED_EVENT_FLAG_DESC, 4 | 0x8000), 0);
	cr_assert_eq(publish_with(VRING_PACKED_EVENT_FLAG_DESC, 7), 1, "position 7, wrap 0");
	cr_assert_eq(vq.kicks, 5);
}

Test(fb_pring, dump_names_the_ring_state, .fini = teardown)
{
	char buf[512] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	setup(false);
	fb_pvq_submit(&vq, 0, VIRTIO_BLK_T_IN, 0, 4096);
	fb_pvq_publish(&vq);
	fb_vq_dump(&vq, f);
	fclose(f);
	cr_assert(strstr(buf, "packed ring: avail count 3 (position 3 wrap 1)") != NULL, "%s", buf);
}

Test(fb_pring, addresses_of_set_vring_addr, .fini = teardown)
{
	uint64_t d, a, u;

	setup(false);
	fb_vq_addrs(&vq, &d, &a, &u);
	cr_assert_eq(d, (uint64_t)(uintptr_t)vq.pdesc, "desc: the descriptor ring");
	cr_assert_eq(a, (uint64_t)(uintptr_t)vq.drv_ev, "avail: the driver event area");
	cr_assert_eq(u, (uint64_t)(uintptr_t)vq.dev_ev, "used: the device event area");
}

Test(fb_pring, packed_needs_the_feature_offered)
{
	struct fb_dev dev;

	memset(&dev, 0, sizeof(dev));
	dev.offered = 1ull << VIRTIO_F_VERSION_1;
	cr_assert_eq(fb_dev_use_packed(&dev), -ENOTSUP);
	cr_assert(strstr(dev.err, "VIRTIO_F_RING_PACKED") && strstr(dev.err, "34"), "%s", dev.err);
	cr_assert_eq(dev.conn.features & (1ull << VIRTIO_F_RING_PACKED), 0);
	dev.offered |= 1ull << VIRTIO_F_RING_PACKED;
	cr_assert_eq(fb_dev_use_packed(&dev), 0);
	cr_assert(dev.conn.features & (1ull << VIRTIO_F_RING_PACKED));
}

/* ---- workloads end to end on the in-process peer ---- */

static struct fb_vq vqs[4];
static struct fb_peer peer;
static struct fb_result res;

static int run_packed(struct fb_opts *o, uint64_t len)
{
	struct fb_run r = {.o = o, .vqs = vqs, .start = 0, .len = len, .blk_size = 512};
	size_t bytes = 0;
	int rc;

	for (unsigned i = 0; i < o->queues; i++)
		bytes += fb_vq_mem_bytes(o->qsize, o->qd, fb_opts_max_bs(o));
	cr_assert_eq(fb_mem_create(&mem, bytes, false), 0);
	for (unsigned i = 0; i < o->queues; i++)
		cr_assert_eq(fb_vq_init_layout(&vqs[i], &mem, i, o->qsize, o->qd, fb_opts_max_bs(o),
					       o->event_idx, true),
			     0);
	cr_assert_eq(fb_peer_start(&peer, vqs, o->queues, -1), 0);
	rc = fb_workload_run(&r, &res);
	fb_peer_stop(&peer);
	cr_assert_eq(peer.completed, res.ios, "the peer served every request once");
	for (unsigned i = 0; i < o->queues; i++)
		fb_vq_fini(&vqs[i]);
	fb_mem_destroy(&mem);
	return rc;
}

Test(fb_pring, workload_mix_several_queues)
{
	struct fb_opts o;

	fb_opts_defaults(&o);
	o.selftest_peer = true;
	o.packed = true;
	o.rw = FB_RW_RANDRW;
	o.ios = 60000;
	o.queues = 4;
	o.qsize = 128;
	o.qd = 42; /* 126 of 128 descriptors in flight: every pass wraps inside a chain */
	o.cpus[0] = -1;
	o.cpus[1] = -1;
	o.ncpus = 2;
	cr_assert_eq(run_packed(&o, 64 << 20), 0);
	cr_assert_eq(res.ios, 60000);
	cr_assert_eq(res.io_errors, 0);
	cr_assert_gt(res.reads, 20000);
	cr_assert_gt(res.writes, 20000);
}

Test(fb_pring, workload_qd1_tiny_ring_block_sizes_no_event_idx)
{
	struct fb_opts o;
	char err[128];
	char *argv[] = {"femu-bench", "--selftest-peer",
			"--packed",   "--no-event-idx",
			"--qsize",    "4",
			"--qd",	      "1",
			"--bs",	      "512,4k,64k",
			"--ios",      "20000",
			"--rw",	      "write",
			NULL};

	fb_opts_defaults(&o);
	cr_assert_eq(fb_opts_parse(&o, 14, argv, err, sizeof(err)), 0, "%s", err);
	cr_assert(o.packed && !o.event_idx);
	cr_assert_eq(run_packed(&o, 8 << 20), 0);
	cr_assert_eq(res.ios, 20000);
	cr_assert_eq(res.writes, 20000);
	cr_assert_eq(res.kicks, 0, "the peer never asks for a kick");
}
