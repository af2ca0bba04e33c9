/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_vq_packed.c - serving a packed virtqueue against a fake packed
 * driver: data written and read back through a NoSSD model, completions out
 * of order matched by buffer id (the used position skips the completed
 * chain's descriptors), many laps of the ring with chains across its end,
 * indirect tables, kick suppression (device event area) and call decisions
 * (driver event area, descriptor mode), poll queues, inflight tracking and
 * replay, the wrap counters given back, and every hostile layout answered
 * with an error status or a stopped queue.  Suite vqp_race: the lost call
 * on this machine's own memory order, a driver thread racing a real poller
 * thread (ENABLE and descriptor-mode events, with and without the barrier
 * virtio asks of the driver); meson runs it apart, as test_vq.c's vq_race.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "chain_assert.h"
#include "fake_guest.h"
#include "ftl/fm_model_registry.h"
#include "pmd/vq.h"
#include "pmd/vq_impl.h"
#include "race_harness.h"
#include "vhost_stub.h"

#define QSZ 16
#define CAP (1u << 20)
/* The ring in region B: descriptors +0, driver event +0x1000, device event +0x1004. */
#define RING_GPA FG_B_GPA
#define IND_GPA (FG_B_GPA + 0x2000) /* indirect tables, 0x100 apart */

static struct fake_guest g;
static struct pmd_blk_target t;
static struct fake_model fm;
static uint8_t *backing;
static struct pmd_vq *q;
static struct pmd_chain scratch;
static int efd = -1;
static struct vring_packed_desc *ring;
static struct vring_packed_desc_event *drv_ev, *dev_ev;

/* The fake driver (virtio 1.2, 2.8.21). */
static struct {
	uint16_t avail; /* next position to make available */
	bool avail_wrap;
	uint16_t used; /* next position to read a used descriptor at */
	bool used_wrap;
	uint16_t num[QSZ]; /* descriptors of the buffer with each id */
} drv;

static void setup(void)
{
	fg_init(&g);
	fg_target(&t, &fm, CAP);
	ring = (struct vring_packed_desc *)g.b;
	drv_ev = (struct vring_packed_desc_event *)(g.b + 0x1000);
	dev_ev = (struct vring_packed_desc_event *)(g.b + 0x1004);
	memset(&drv, 0, sizeof(drv));
	drv.avail_wrap = drv.used_wrap = true;
	q = NULL;
	efd = -1;
	backing = NULL;
}

static void teardown(void)
{
	pmd_vq_free(q);
	if (efd >= 0)
		close(efd);
	if (backing != NULL) {
		fm_nossd_ops.destroy(t.model);
		free(backing);
	}
	fg_fini(&g);
}

TestSuite(vqp, .init = setup, .fini = teardown);

/* A NoSSD model instead of the recording one: data reads back. */
static void use_nossd(void)
{
	struct fm_model_config cfg = {.capacity_bytes = CAP, .capacity_set = true, .blk_size = 512};
	char err[256];

	backing = calloc(1, CAP);
	cr_assert_eq(fm_nossd_ops.configure(&cfg, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fm_nossd_ops.create(&cfg, backing, &t.model, err, sizeof(err)), 0, "%s", err);
	t.ops = &fm_nossd_ops;
}

/* The queue's setup over the fake ring at base positions (position | wrap << 15). */
static struct pmd_vq_setup setup_of(bool event_idx, int callfd, uint16_t base_avail,
				    uint16_t base_used)
{
	return (struct pmd_vq_setup){.desc_packed = ring,
				     .driver_event = drv_ev,
				     .device_event = dev_ev,
				     .size = QSZ,
				     .last_avail = base_avail,
				     .last_used = base_used,
				     .packed = true,
				     .callfd = callfd,
				     .kickfd = -1,
				     .event_idx = event_idx,
				     .indirect = true,
				     .mem = g.mem,
				     .target = &t};
}

static struct pmd_vq *make(bool event_idx, int callfd, uint16_t base_avail, uint16_t base_used)
{
	struct pmd_vq_setup s = setup_of(event_idx, callfd, base_avail, base_used);

	q = pmd_vq_create(&s);
	cr_assert_not_null(q);
	return q;
}

static void make_q(bool event_idx, int callfd)
{
	make(event_idx, callfd, 1u << 15, 1u << 15); /* a fresh ring: both wrap counters 1 */
}

static uint16_t avail_flags(bool wrap)
{
	return wrap ? PMD_PACKED_F_AVAIL : PMD_PACKED_F_USED;
}

/*
 * Make a chain of n descriptors available as buffer id (their flags as the
 * driver's wrap counter says, the first one's written last).
 */
static void post_descs(const struct vring_packed_desc *d, unsigned n, uint16_t id)
{
	uint16_t first = drv.avail, first_flags = 0;

	for (unsigned k = 0; k < n; k++) {
		struct vring_packed_desc x = d[k];

		x.id = id;
		x.flags = (uint16_t)(x.flags | avail_flags(drv.avail_wrap));
		if (k == 0) {
			first_flags = x.flags;
			x.flags = avail_flags(!drv.avail_wrap); /* not yet available */
		}
		ring[drv.avail] = x;
		if (++drv.avail == QSZ) {
			drv.avail = 0;
			drv.avail_wrap = !drv.avail_wrap;
		}
	}
	drv.num[id] = (uint16_t)n;
	__atomic_store_n(&ring[first].flags, first_flags, __ATOMIC_RELEASE);
}

static uint64_t hdr_gpa(uint16_t id)
{
	return FG_REQ_HDR(id);
}

static uint64_t status_gpa(uint16_t id)
{
	return FG_REQ_STATUS(id);
}

/* Request id: a type/sector header, len data bytes at data, status 0xff; the 3 descriptors. */
static void req_descs(struct vring_packed_desc *d, uint16_t id, uint32_t type, uint64_t sector,
		      uint64_t data, uint32_t len)
{
	struct virtio_blk_outhdr h = {.type = type, .sector = sector};

	memcpy(fg_host(&g, hdr_gpa(id)), &h, sizeof(h));
	*(uint8_t *)fg_host(&g, status_gpa(id)) = 0xff;
	d[0] =
	    (struct vring_packed_desc){.addr = hdr_gpa(id), .len = 16, .flags = VRING_DESC_F_NEXT};
	d[1] = (struct vring_packed_desc){
	    .addr = data,
	    .len = len,
	    .flags =
		(uint16_t)(VRING_DESC_F_NEXT | (type == VIRTIO_BLK_T_IN ? VRING_DESC_F_WRITE : 0))};
	d[2] = (struct vring_packed_desc){
	    .addr = status_gpa(id), .len = 1, .flags = VRING_DESC_F_WRITE};
}

static void post_rw(uint16_t id, uint32_t type, uint64_t sector)
{
	struct vring_packed_desc d[3];

	req_descs(d, id, type, sector, FG_REQ_DATA(id), 4096);
	post_descs(d, 3, id);
}

static uint8_t status_of(uint16_t id)
{
	return *(uint8_t *)fg_host(&g, status_gpa(id));
}

/* The next used descriptor, if the device wrote one: its id and length. */
static bool get_used(uint16_t *id, uint32_t *len)
{
	struct vring_packed_desc d;
	uint16_t f = __atomic_load_n(&ring[drv.used].flags, __ATOMIC_ACQUIRE);

	if (!!(f & PMD_PACKED_F_AVAIL) != drv.used_wrap ||
	    !!(f & PMD_PACKED_F_USED) != drv.used_wrap)
		return false;
	d = ring[drv.used];
	*id = d.id;
	*len = d.len;
	cr_assert_lt(d.id, QSZ);
	drv.used = (uint16_t)(drv.used + drv.num[d.id]);
	if (drv.used >= QSZ) {
		drv.used -= QSZ;
		drv.used_wrap = !drv.used_wrap;
	}
	return true;
}

static void expect_used(uint16_t want_id, uint32_t want_len)
{
	uint16_t id;
	uint32_t len;

	cr_assert(get_used(&id, &len), "no used descriptor for id %u", want_id);
	cr_assert_eq(id, want_id);
	cr_assert_eq(len, want_len);
}

static uint64_t calls_pending(void)
{
	uint64_t v = 0;

	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

Test(vqp, write_then_read_back_compares)
{
	uint8_t *w, *r;

	use_nossd();
	make_q(true, -1);
	w = fg_host(&g, FG_REQ_DATA(0));
	for (unsigned i = 0; i < 4096; i++)
		w[i] = (uint8_t)(i * 7 + 3);
	post_rw(0, VIRTIO_BLK_T_OUT, 16);
	cr_assert_eq(pmd_vq_sweep(q, 100, &scratch), 1);
	expect_used(0, 1);
	cr_assert_eq(status_of(0), VIRTIO_BLK_S_OK);
	r = fg_host(&g, FG_REQ_DATA(1));
	memset(r, 0, 4096);
	post_rw(1, VIRTIO_BLK_T_IN, 16);
	cr_assert_eq(pmd_vq_sweep(q, 200, &scratch), 1);
	expect_used(1, 4097);
	cr_assert_eq(status_of(1), VIRTIO_BLK_S_OK);
	cr_assert_eq(memcmp(w, r, 4096), 0, "data read back differs");
	cr_assert_eq(q->st.requests, 2);
}

Test(vqp, out_of_order_completion_by_id)
{
	make_q(true, -1);
	fm.due_delta = 5000;
	post_rw(4, VIRTIO_BLK_T_IN, 0);
	cr_assert_eq(pmd_vq_sweep(q, 100, &scratch), 1);
	fm.due_delta = 0;
	post_rw(9, VIRTIO_BLK_T_IN, 8);
	cr_assert_eq(pmd_vq_sweep(q, 200, &scratch), 1);
	/* the later request completes first, at used position 0, and skips its own 3 */
	expect_used(9, 4097);
	cr_assert_eq(status_of(9), VIRTIO_BLK_S_OK);
	cr_assert_eq(status_of(4), 0xff, "status written before its due time");
	cr_assert_eq(drv.used, 3);
	pmd_vq_sweep(q, 5099, &scratch);
	cr_assert_eq(ring[3].flags & PMD_PACKED_F_USED, 0, "posted before due");
	pmd_vq_sweep(q, 5100, &scratch);
	expect_used(4, 4097);
	cr_assert_eq(drv.used, 6);
	cr_assert_eq(status_of(4), VIRTIO_BLK_S_OK);
	cr_assert_eq(q->st.deferred, 1);
}

/*
 * Many laps of a 16-entry ring with 3-descriptor chains: chains cross the
 * ring's end, both wrap counters flip; every block written reads back.
 */
Test(vqp, wrap_around_many_laps)
{
	uint16_t id;
	uint32_t len;

	use_nossd();
	make_q(true, -1);
	for (unsigned lap = 0; lap < 200; lap++) {
		uint8_t *w = fg_host(&g, FG_REQ_DATA(0)), *r = fg_host(&g, FG_REQ_DATA(1));
		uint64_t sector = (lap % 64) * 8;

		memset(w, (int)(lap + 1), 4096);
		w[lap % 4096] = 0;
		memset(r, 0xee, 4096);
		post_rw(0, VIRTIO_BLK_T_OUT, sector);
		post_rw(1, VIRTIO_BLK_T_IN, sector);
		cr_assert_eq(pmd_vq_sweep(q, lap, &scratch), 2, "lap %u", lap);
		cr_assert(get_used(&id, &len));
		cr_assert_eq(id, 0);
		cr_assert(get_used(&id, &len));
		cr_assert_eq(id, 1);
		cr_assert_eq(len, 4097);
		cr_assert_eq(memcmp(w, r, 4096), 0, "lap %u: data differs", lap);
		cr_assert(!get_used(&id, &len));
	}
	cr_assert_eq(q->st.requests, 400);
	cr_assert(!q->broken);
	/* 1200 descriptors: 75 laps, both counters back where they started */
	cr_assert_eq(q->last_avail, 1200 % QSZ);
	cr_assert_eq(q->pk.avail_wrap, (1200 / QSZ) % 2 == 0);
	cr_assert_eq(q->pk.used_wrap, q->pk.avail_wrap);
}

Test(vqp, base_reports_wrap_counters)
{
	uint16_t la, lu;

	make(true, -1, 14, 14); /* position 14, wrap counters 0 */
	drv.avail = drv.used = 14;
	drv.avail_wrap = drv.used_wrap = false;
	post_rw(2, VIRTIO_BLK_T_IN, 0);
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 1);
	expect_used(2, 4097);
	pmd_vq_base(q, &la, &lu);
	cr_assert_eq(la, 1 | 1u << 15);
	cr_assert_eq(lu, 1 | 1u << 15);
}

Test(vqp, indirect_table)
{
	struct vring_packed_desc tbl[3], d;

	use_nossd();
	make_q(true, -1);
	memset(fg_host(&g, FG_REQ_DATA(5)), 0x5a, 4096);
	req_descs(tbl, 5, VIRTIO_BLK_T_OUT, 24, FG_REQ_DATA(5), 4096);
	tbl[1].flags = 0; /* NEXT is ignored in a packed table */
	memcpy(fg_host(&g, IND_GPA), tbl, sizeof(tbl));
	d = (struct vring_packed_desc){
	    .addr = IND_GPA, .len = sizeof(tbl), .flags = VRING_DESC_F_INDIRECT};
	post_descs(&d, 1, 5);
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 1);
	expect_used(5, 1);
	cr_assert_eq(drv.used, 1, "an indirect chain takes one ring descriptor");
	cr_assert_eq(status_of(5), VIRTIO_BLK_S_OK);
	cr_assert_eq(backing[24 * 512], 0x5a);
	cr_assert_eq(backing[24 * 512 + 4095], 0x5a);
}

Test(vqp, kicks_suppressed_and_rearmed)
{
	make_q(true, -1);
	cr_assert_eq(dev_ev->flags, VRING_PACKED_EVENT_FLAG_DISABLE);
	cr_assert_not(pmd_vq_notify_arm(q));
	cr_assert_eq(dev_ev->flags, VRING_PACKED_EVENT_FLAG_DESC);
	cr_assert_eq(dev_ev->off_wrap, 0 | 1u << 15);
	post_rw(0, VIRTIO_BLK_T_IN, 0);
	cr_assert(pmd_vq_notify_arm(q), "a chain made available before the re-arm");
	pmd_vq_notify_suppress(q);
	cr_assert_eq(dev_ev->flags, VRING_PACKED_EVENT_FLAG_DISABLE);
	pmd_vq_sweep(q, 1, &scratch);
	cr_assert_not(pmd_vq_notify_arm(q));
	cr_assert_eq(dev_ev->off_wrap, 3 | 1u << 15);
}

Test(vqp, kicks_rearmed_without_event_idx)
{
	make_q(false, -1);
	cr_assert_not(pmd_vq_notify_arm(q));
	cr_assert_eq(dev_ev->flags, VRING_PACKED_EVENT_FLAG_ENABLE);
}

Test(vqp, call_decisions_follow_driver_event_area)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	pmd_vq_notify_start(q);
	cr_assert_eq(calls_pending(), 1, "a queue start calls once");
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	post_rw(0, VIRTIO_BLK_T_IN, 0);
	pmd_vq_sweep(q, 1, &scratch);
	cr_assert_eq(calls_pending(), 0);
	cr_assert_eq(q->st.calls_saved, 1);
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_ENABLE;
	post_rw(1, VIRTIO_BLK_T_IN, 0);
	pmd_vq_sweep(q, 2, &scratch);
	cr_assert_eq(calls_pending(), 1);
	/* descriptor mode: a call once the used position passes position 9 of this lap */
	drv_ev->off_wrap = 9 | 1u << 15;
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_DESC;
	post_rw(2, VIRTIO_BLK_T_IN, 0); /* used 6 -> 9 */
	pmd_vq_sweep(q, 3, &scratch);
	cr_assert_eq(calls_pending(), 0);
	post_rw(3, VIRTIO_BLK_T_IN, 0); /* used 9 -> 12: crosses 9 */
	pmd_vq_sweep(q, 4, &scratch);
	cr_assert_eq(calls_pending(), 1);
	/* an event in the next lap (wrap 0) at position 1: not before the used position wraps */
	drv_ev->off_wrap = 1;
	post_rw(4, VIRTIO_BLK_T_IN, 0); /* 12 -> 15 */
	pmd_vq_sweep(q, 5, &scratch);
	cr_assert_eq(calls_pending(), 0);
	post_rw(5, VIRTIO_BLK_T_IN, 0); /* 15 -> 2 of the next lap: crosses 1 */
	pmd_vq_sweep(q, 6, &scratch);
	cr_assert_eq(calls_pending(), 1);
	cr_assert_eq(q->pk.used_wrap, false);
	/* a position outside the ring names no descriptor: a call rather than a wait */
	drv_ev->off_wrap = QSZ | 1u << 15;
	post_rw(0, VIRTIO_BLK_T_IN, 0); /* 2 -> 5 */
	pmd_vq_sweep(q, 7, &scratch);
	cr_assert_eq(calls_pending(), 1);
}

/* The driver of lap_sweep(): reaps what is published and makes that many chains available. */
static unsigned lap_posts_left;
static void reap_and_repost(struct fake_model *m, void *arg)
{
	uint16_t id;
	uint32_t len;

	(void)m;
	(void)arg;
	while (lap_posts_left > 0 && get_used(&id, &len)) {
		post_rw(id, VIRTIO_BLK_T_IN, 0);
		lap_posts_left--;
	}
}

/*
 * One sweep serving nchains 3-descriptor reads (4 in flight, the driver
 * reposting as they are published: on a 16-entry ring it goes whole laps),
 * the driver's event at (off, wrap); the used position must end at (end,
 * end_wrap).  Returns the calls sent.
 */
static uint64_t lap_sweep(unsigned nchains, uint16_t off, bool wrap, uint16_t end, bool end_wrap)
{
	uint16_t id;
	uint32_t len;

	drv_ev->off_wrap = (uint16_t)(off | (unsigned)wrap << 15);
	for (uint16_t k = 0; k < 4; k++)
		post_rw(k, VIRTIO_BLK_T_IN, 0);
	lap_posts_left = nchains - 4;
	fm.on_submit = reap_and_repost;
	cr_assert_eq(pmd_vq_sweep(q, 0, &scratch), nchains, "the sweep took all chains");
	fm.on_submit = NULL;
	cr_assert_eq(q->used_idx, end);
	cr_assert_eq(q->pk.used_wrap, end_wrap);
	while (get_used(&id, &len))
		;
	return calls_pending();
}

/*
 * A sweep that moves the used position over whole laps (a driver reaping
 * and reposting while it runs) decides on what it passed: the event's
 * position within the last lap gets the call, one ahead does not, whatever
 * the positions where the sweep started and ended say.
 */
Test(vqp, call_decision_after_a_sweep_of_several_laps)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_DESC;
	/* 4 chains: used 0 -> 12 of the first lap (wrap 1), and a publish after each next */
	cr_assert_eq(lap_sweep(4, 0, false, 12, true), 0);
	/* 36 descriptors: 12 (wrap 1) -> 0 (wrap 0), then two laps more; (4, wrap 0) is ahead */
	cr_assert_eq(lap_sweep(12, 4, false, 0, false), 0, "an event ahead of the used position");
	/* 0 (wrap 0) -> 4 (wrap 0) two laps on; (14, wrap 1) was passed 6 descriptors ago */
	cr_assert_eq(lap_sweep(12, 14, true, 4, false), 1, "an event passed in the last lap");
	cr_assert_eq(q->st.calls_late, 0);
}

#define RECHECK PMD_VQ_CALL_RECHECK_NS

/*
 * The lost wakeup on a packed ring (vq_impl.h): the driver event area said
 * DISABLE when femud decided, ENABLE once the driver's store was seen.  The
 * recheck calls once, PMD_VQ_CALL_RECHECK_NS after the start of the next
 * sweep and not before.
 */
Test(vqp, recheck_calls_a_driver_that_enabled_calls_late)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	post_rw(0, VIRTIO_BLK_T_IN, 0);
	pmd_vq_sweep(q, 1000, &scratch);
	cr_assert_eq(calls_pending(), 0);
	cr_assert_eq(q->st.calls_saved, 1);
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_ENABLE;
	pmd_vq_sweep(q, 2000, &scratch);
	cr_assert_eq(calls_pending(), 0, "the next sweep starts the delay");
	pmd_vq_sweep(q, 2000 + RECHECK - 1, &scratch);
	cr_assert_eq(calls_pending(), 0, "not before the recheck is due");
	pmd_vq_sweep(q, 2000 + RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 1);
	cr_assert_eq(q->st.calls_late, 1);
	pmd_vq_sweep(q, 2000 + 5 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 0, "one late call");
}

/* A sweep longer than the delay: the recheck still waits it out from the next sweep. */
Test(vqp, recheck_waits_after_a_sweep_longer_than_its_delay)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	post_rw(0, VIRTIO_BLK_T_IN, 0);
	pmd_vq_sweep(q, 0, &scratch);		/* its clock read at 0, its decision long after */
	pmd_vq_sweep(q, 3 * RECHECK, &scratch); /* the driver's store not visible yet */
	cr_assert_eq(calls_pending(), 0);
	cr_assert_neq(q->recheck_ns, 0, "the recheck is still to come");
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_ENABLE;
	pmd_vq_sweep(q, 4 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 1, "the late call");
	cr_assert_eq(q->st.calls_late, 1);
}

/*
 * Descriptor mode: a late off_wrap at a position published since the last
 * call gets the call, one at a position still ahead does not; both across
 * the wrap of the used position.
 */
Test(vqp, recheck_follows_a_late_descriptor_event)
{
	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_DESC;
	drv_ev->off_wrap = 0; /* next lap's position 0: not crossed yet */
	for (uint16_t id = 0; id < 5; id++) {
		post_rw(id, VIRTIO_BLK_T_IN, 0); /* 3 descriptors each: used 0 -> 15 */
		pmd_vq_sweep(q, 0, &scratch);
	}
	cr_assert_eq(calls_pending(), 0);
	cr_assert_eq(q->used_idx, 15);
	drv_ev->off_wrap = 1; /* next lap, still ahead */
	pmd_vq_sweep(q, RECHECK, &scratch);
	pmd_vq_sweep(q, 2 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 0, "an event not crossed yet");
	cr_assert_eq(q->recheck_ns, 0, "the recheck was made");
	post_rw(5, VIRTIO_BLK_T_IN, 0);	 /* 15 -> 2 of the next lap */
	drv_ev->off_wrap = 0 | 1u << 15; /* the publish reads an event of the lap behind */
	pmd_vq_sweep(q, 3 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 0);
	drv_ev->off_wrap = 15 | 1u << 15; /* late: the driver waits for position 15 of lap 1 */
	pmd_vq_sweep(q, 4 * RECHECK, &scratch);
	pmd_vq_sweep(q, 5 * RECHECK, &scratch);
	cr_assert_eq(calls_pending(), 1, "position 15 was crossed since the last call");
	cr_assert_eq(q->st.calls_late, 1);
}

Test(vqp, poll_queue_arms_no_recheck)
{
	make_q(true, -1);
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	post_rw(0, VIRTIO_BLK_T_IN, 0);
	pmd_vq_sweep(q, 0, &scratch);
	cr_assert_eq(q->recheck_ns, 0);
}

Test(vqp, poll_queue_completes_without_calls)
{
	make_q(true, -1);
	pmd_vq_notify_start(q);
	drv_ev->flags = VRING_PACKED_EVENT_FLAG_ENABLE;
	post_rw(0, VIRTIO_BLK_T_IN, 0);
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 1);
	expect_used(0, 4097);
	cr_assert_eq(q->st.calls, 0);
	cr_assert_eq(q->st.call_errors, 0);
}

Test(vqp, flush_posts_pending_and_position)
{
	uint16_t a, u;
	uint32_t pending;

	make_q(true, -1);
	fm.due_delta = 1000000;
	post_rw(0, VIRTIO_BLK_T_IN, 0);
	post_rw(1, VIRTIO_BLK_T_IN, 8);
	pmd_vq_sweep(q, 1, &scratch);
	pmd_vq_position(q, &a, &u, &pending);
	cr_assert_eq(a, 6);
	cr_assert_eq(u, 0);
	cr_assert_eq(pending, 2);
	pmd_vq_flush(q, 2, &scratch);
	expect_used(0, 4097);
	expect_used(1, 4097);
	pmd_vq_position(q, &a, &u, &pending);
	cr_assert_eq(pending, 0);
	cr_assert_eq(u, 6);
}

/* A broken queue takes nothing more: its sweep returns at once. */
static void expect_broken(void)
{
	uint16_t id;
	uint32_t len;

	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 0);
	cr_assert(q->broken);
	cr_assert_eq(q->st.broken, 1);
	cr_assert(!get_used(&id, &len));
	cr_assert_eq(pmd_vq_sweep(q, 2, &scratch), 0);
	cr_assert_not(pmd_vq_notify_arm(q));
}

Test(vqp, hostile_chain_longer_than_ring)
{
	struct vring_packed_desc d[QSZ];

	make_q(true, -1);
	for (unsigned k = 0; k < QSZ; k++)
		d[k] = (struct vring_packed_desc){
		    .addr = hdr_gpa(0), .len = 16, .flags = VRING_DESC_F_NEXT};
	post_descs(d, QSZ, 0); /* every descriptor says NEXT: the walk comes round to its start */
	expect_broken();
}

Test(vqp, hostile_id_out_of_range)
{
	struct vring_packed_desc d[3];

	make_q(true, -1);
	req_descs(d, 0, VIRTIO_BLK_T_IN, 0, FG_REQ_DATA(0), 4096);
	post_descs(d, 3, 0);
	ring[2].id = QSZ; /* the id is the last descriptor's */
	expect_broken();
	cr_assert_eq(status_of(0), 0xff);
}

Test(vqp, hostile_wrap_counter_mismatch)
{
	struct vring_packed_desc d[3];

	make_q(true, -1);
	req_descs(d, 0, VIRTIO_BLK_T_IN, 0, FG_REQ_DATA(0), 4096);
	post_descs(d, 3, 0);
	ring[1].flags = (uint16_t)((ring[1].flags & ~PMD_PACKED_F_AVAIL) | PMD_PACKED_F_USED);
	expect_broken();
}

Test(vqp, hostile_nested_indirect)
{
	struct vring_packed_desc tbl[3], d;

	make_q(true, -1);
	req_descs(tbl, 1, VIRTIO_BLK_T_IN, 0, FG_REQ_DATA(1), 4096);
	tbl[1] = (struct vring_packed_desc){
	    .addr = IND_GPA + 0x100, .len = 16, .flags = VRING_DESC_F_INDIRECT};
	memcpy(fg_host(&g, IND_GPA), tbl, sizeof(tbl));
	d = (struct vring_packed_desc){
	    .addr = IND_GPA, .len = sizeof(tbl), .flags = VRING_DESC_F_INDIRECT};
	post_descs(&d, 1, 1);
	expect_broken();
}

Test(vqp, hostile_indirect_in_chain_and_bad_table)
{
	struct vring_packed_desc d[2] = {
	    {.addr = hdr_gpa(0), .len = 16, .flags = VRING_DESC_F_NEXT},
	    {.addr = IND_GPA, .len = 48, .flags = VRING_DESC_F_INDIRECT}};

	make_q(true, -1);
	post_descs(d, 2, 0);
	expect_broken();
}

Test(vqp, hostile_indirect_table_length)
{
	struct vring_packed_desc d = {.addr = IND_GPA, .len = 40, .flags = VRING_DESC_F_INDIRECT};

	make_q(true, -1);
	post_descs(&d, 1, 0);
	expect_broken();
}

Test(vqp, hostile_buffer_outside_memory_answers_ioerr)
{
	struct vring_packed_desc d[3];

	make_q(true, -1);
	req_descs(d, 3, VIRTIO_BLK_T_IN, 0, FG_HOLE_GPA, 4096);
	post_descs(d, 3, 3);
	post_rw(4, VIRTIO_BLK_T_IN, 8);
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 2);
	expect_used(3, 1);
	cr_assert_eq(status_of(3), VIRTIO_BLK_S_IOERR);
	expect_used(4, 4097);
	cr_assert_eq(status_of(4), VIRTIO_BLK_S_OK, "the queue serves on");
	cr_assert(!q->broken);
}

Test(vqp, hostile_short_header_answers_ioerr)
{
	struct vring_packed_desc d[3];

	make_q(true, -1);
	req_descs(d, 0, VIRTIO_BLK_T_IN, 0, FG_REQ_DATA(0), 4096);
	d[0].len = 8;
	post_descs(d, 3, 0);
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 1);
	expect_used(0, 1);
	cr_assert_eq(status_of(0), VIRTIO_BLK_S_IOERR);
}

Test(vqp, hostile_no_status_byte)
{
	struct vring_packed_desc d[3];

	make_q(true, -1);
	req_descs(d, 0, VIRTIO_BLK_T_OUT, 0, FG_REQ_DATA(0), 4096);
	d[1].flags = 0; /* no writable descriptor at all */
	post_descs(d, 2, 0);
	expect_broken();
}

Test(vqp, hostile_positions_outside_queue)
{
	make(true, -1, 40, 0); /* a base past the ring's end */
	cr_assert(q->broken);
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 0);
}

/* Inflight tracking: set at take (entry), last-inflight and clear at completion. */
Test(vqp, inflight_calls_per_request)
{
	struct pmd_vq_setup s = setup_of(true, -1, 1u << 15, 1u << 15);

	s.inflight = true;
	q = pmd_vq_create(&s);
	cr_assert_not_null(q);
	ut_ninflight = 0;
	post_rw(7, VIRTIO_BLK_T_IN, 0);
	pmd_vq_sweep(q, 1, &scratch);
	expect_used(7, 4097);
	cr_assert_eq(ut_ninflight, 3);
	cr_assert_eq(ut_inflight_op[0], 'S');
	cr_assert_eq(ut_inflight_idx[0], 0, "the chain's first ring position");
	cr_assert_eq(ut_inflight_op[1], 'L');
	cr_assert_eq(ut_inflight_op[2], 'C');
	/* the stub hands out the first position as the entry: the same on completion */
	cr_assert_eq(ut_inflight_idx[1], 0);
	cr_assert_eq(ut_inflight_idx[2], 0);
}

/*
 * Replay after a restart: the region lists an entry whose chain the
 * previous backend took (its descriptors in the ring were overwritten since);
 * new chains start that chain's length past the used position.
 */
Test(vqp, inflight_replay_from_region)
{
	size_t sz = sizeof(struct rte_vhost_inflight_info_packed) +
		    QSZ * sizeof(struct rte_vhost_inflight_desc_packed);
	struct rte_vhost_inflight_info_packed *in = calloc(1, sz);
	struct vring_packed_desc d[3];
	uint16_t entry = 5, replay[1] = {5};
	/* the region's used position 3, wrap counters 1 */
	struct pmd_vq_setup s = setup_of(true, -1, 3 | 1u << 15, 3 | 1u << 15);

	s.inflight = true;
	s.resubmit = replay;
	s.nresubmit = 1;
	s.inflight_packed = in;
	req_descs(d, 6, VIRTIO_BLK_T_IN, 8, FG_REQ_DATA(6), 4096);
	in->desc[entry].num = 3;
	for (unsigned k = 0, e = entry; k < 3; k++) {
		unsigned next = k == 2 ? 0 : (e + 3) % QSZ;

		in->desc[e].addr = d[k].addr;
		in->desc[e].len = d[k].len;
		in->desc[e].flags = d[k].flags;
		in->desc[e].id = 6;
		in->desc[e].next = (uint16_t)next;
		e = next;
	}
	q = pmd_vq_create(&s);
	cr_assert_not_null(q);
	cr_assert_eq(q->last_avail, 6, "new chains start past the replayed one");
	drv.used = 3;
	drv.num[6] = 3;
	drv.avail = 6;
	post_rw(1, VIRTIO_BLK_T_IN, 0);
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 2);
	expect_used(6, 4097);
	cr_assert_eq(status_of(6), VIRTIO_BLK_S_OK);
	expect_used(1, 4097);
	cr_assert_eq(q->st.resubmitted, 1);
	/* a corrupt entry (its chain ends early) stops the queue, never reads past it */
	pmd_vq_free(q);
	in->desc[entry].num = 4;
	q = pmd_vq_create(&s);
	cr_assert_eq(pmd_vq_sweep(q, 2, &scratch), 0);
	cr_assert(q->broken);
	free(in);
}

/* The fast path describes the common chain (across the ring's end) as the walk does. */
Test(vqp, fast_path_matches_the_walk)
{
	const struct pmd_chain_pring pr = {
	    .desc = ring, .size = QSZ, .indirect_ok = true, .check_wrap = true};
	static struct pmd_chain f, w;
	struct vring_packed_desc d[3];
	uint16_t fid = 0, fn = 0, wid = 0, wn = 0;

	drv.avail = QSZ - 1;
	req_descs(d, 7, VIRTIO_BLK_T_OUT, 8, FG_REQ_DATA(7), 2048);
	post_descs(d, 3, 7);
	cr_assert(pmd_chain_parse_packed_fast3(g.mem, &pr, QSZ - 1, true, &f, &fid, &fn));
	cr_assert_eq(pmd_chain_parse_packed_walk(g.mem, &pr, QSZ - 1, true, &w, &wid, &wn),
		     PMD_CHAIN_OK);
	cr_assert_eq(fid, 7);
	cr_assert_eq(wid, 7);
	cr_assert_eq(fn, 3);
	cr_assert_eq(wn, 3);
	cr_assert_eq(f.status, w.status);
	cr_assert_eq(f.hdr_at, w.hdr_at);
	cr_assert_eq(memcmp(&f.hdr, &w.hdr, sizeof(f.hdr)), 0);
	cr_assert_eq(f.rd_len, 2048);
	cr_assert_eq(w.rd_len, 2048);
	cr_assert_eq(f.nrd, w.nrd);
	cr_assert_eq(f.nwr, w.nwr);
	cr_assert_eq(f.ndesc, w.ndesc);
	cr_assert_eq(f.iov[0].base, w.iov[0].base);
	cr_assert_eq(f.iov[0].len, w.iov[0].len);
	/* a later descriptor not available: the fast path leaves it to the walk */
	ring[0].flags ^= PMD_PACKED_F_AVAIL;
	cr_assert_not(pmd_chain_parse_packed_fast3(g.mem, &pr, QSZ - 1, true, &f, &fid, &fn));
	cr_assert_eq(pmd_chain_parse_packed(g.mem, &pr, QSZ - 1, true, &f, &fid, &fn),
		     PMD_CHAIN_BROKEN);
}

/* Request id as Linux sends it with indirect descriptors: one descriptor naming its table. */
static void post_rw_indirect(uint16_t id, uint32_t type, uint64_t sector, uint32_t len)
{
	struct vring_packed_desc tbl[3], d;
	uint64_t at = IND_GPA + 0x100 * (uint64_t)id;

	req_descs(tbl, id, type, sector, FG_REQ_DATA(id), len);
	memcpy(fg_host(&g, at), tbl, sizeof(tbl));
	d = (struct vring_packed_desc){
	    .addr = at, .len = sizeof(tbl), .flags = VRING_DESC_F_INDIRECT};
	post_descs(&d, 1, id);
}

/* pmd_chain_parse_packed() (its indirect fast path first) and the walk agree on the chain at 0. */
static void assert_packed_same_as_walk(const struct pmd_chain_pring *pr)
{
	static struct pmd_chain f, w;
	uint16_t fid = 0, fn = 0, wid = 0, wn = 0;
	enum pmd_chain_result rf = pmd_chain_parse_packed(g.mem, pr, 0, true, &f, &fid, &fn);
	enum pmd_chain_result rw = pmd_chain_parse_packed_walk(g.mem, pr, 0, true, &w, &wid, &wn);

	cr_assert_eq(rf, rw);
	assert_chain_same(rf, &f, &w);
	if (rf != PMD_CHAIN_BROKEN) {
		cr_assert_eq(fid, wid);
		cr_assert_eq(fn, wn);
	}
}

/* A 512 B read as buffer id 6 at ring position 0 (again), indirect. */
static void repost_6(void)
{
	drv.avail = 0;
	post_rw_indirect(6, VIRTIO_BLK_T_IN, 16, 512);
}

/*
 * The indirect fast path takes Linux's chain (one descriptor, a table of
 * header, data, status) and describes it as the walk does; every variant it
 * does not take the walk judges: the two always agree.
 */
Test(vqp, indirect_fast_path_matches_the_walk)
{
	struct pmd_chain_pring pr = {
	    .desc = ring, .size = QSZ, .indirect_ok = true, .check_wrap = true};
	struct vring_packed_desc *tbl = fg_host(&g, IND_GPA + 0x100 * 6);
	static struct pmd_chain f;
	uint16_t id = 0, n = 0;

	post_rw_indirect(6, VIRTIO_BLK_T_IN, 16, 512);
	cr_assert(pmd_chain_parse_packed_indirect3(g.mem, &pr, 0, &f, &id, &n));
	cr_assert_eq(id, 6);
	cr_assert_eq(n, 1);
	cr_assert_eq(f.wr_len, 512);
	cr_assert_eq(f.iov[0].base, fg_host(&g, FG_REQ_DATA(6)));
	cr_assert_eq(f.status, fg_host(&g, FG_REQ_STATUS(6)));
	cr_assert_eq(f.hdr.sector, 16);
	assert_packed_same_as_walk(&pr);
	tbl[1].flags = 0; /* a write */
	assert_packed_same_as_walk(&pr);
	for (unsigned e = 0; e < 3; e++) {
		static const uint16_t flags[] = {VRING_DESC_F_INDIRECT, VRING_DESC_F_WRITE,
						 VRING_DESC_F_NEXT, 0};
		static const uint32_t lens[] = {0, 1, 8, 16, 4096};

		for (unsigned k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
			repost_6();
			tbl[e].flags = flags[k];
			assert_packed_same_as_walk(&pr);
		}
		for (unsigned k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			repost_6();
			tbl[e].len = lens[k];
			assert_packed_same_as_walk(&pr);
		}
		repost_6();
		tbl[e].addr = FG_HOLE_GPA;
		assert_packed_same_as_walk(&pr);
	}
	for (uint32_t len = 0; len <= 64; len += 8) { /* the table's length */
		repost_6();
		ring[0].len = len;
		assert_packed_same_as_walk(&pr);
	}
	repost_6();
	ring[0].flags |= VRING_DESC_F_NEXT;
	assert_packed_same_as_walk(&pr);
	ring[0].flags &= (uint16_t)~VRING_DESC_F_NEXT;
	ring[0].id = QSZ;
	assert_packed_same_as_walk(&pr);
	ring[0].id = 6;
	ring[0].addr = FG_B_GPA + FG_REGION_SIZE - 16; /* the table runs out of its region */
	assert_packed_same_as_walk(&pr);
	ring[0].addr = IND_GPA + 0x100 * 6;
	pr.indirect_ok = false;
	cr_assert_not(pmd_chain_parse_packed_indirect3(g.mem, &pr, 0, &f, &id, &n));
	assert_packed_same_as_walk(&pr);
}

/* A recording model with a prefetch op (the look-ahead runs). */
static void use_pf_model(void)
{
	t.ops = &fake_model_pf_ops;
}

/* The hint numbered h: a read of len bytes at byte offset off, given after `before` submits. */
static void expect_hint(unsigned h, uint64_t off, uint64_t len, unsigned before)
{
	cr_assert_lt(h, fm.npf, "hint %u missing (%u given)", h, fm.npf);
	cr_assert_eq(fm.pf[h].op, FM_OP_READ, "hint %u", h);
	cr_assert_eq(fm.pf[h].offset, off, "hint %u: offset %lu", h,
		     (unsigned long)fm.pf[h].offset);
	cr_assert_eq(fm.pf[h].len, len, "hint %u: len %lu", h, (unsigned long)fm.pf[h].len);
	cr_assert_eq(fm.pf[h].before_submit, before, "hint %u: after %u submits", h,
		     fm.pf[h].before_submit);
}

/* Read k (k < 5) of 4 KiB at sector 8 (k + 1) posted as buffer id k. */
typedef void (*post_read_fn)(uint16_t k);

static void post_read_direct(uint16_t k)
{
	post_rw(k, VIRTIO_BLK_T_IN, 8 * (k + 1));
}

static void post_read_through_table(uint16_t k)
{
	post_rw_indirect(k, VIRTIO_BLK_T_IN, 8 * (k + 1), 4096);
}

/*
 * Four laps of five reads posted by post, each lap served by one sweep:
 * the two after the first hinted whole before the first is served, later
 * ones in two parts (PMD_VQ_LOOKAHEAD, then PMD_VQP_HINT_REST_AHEAD ahead),
 * every read but the first handed to the model as prefetched.
 */
static void expect_laps_hinted_ahead(post_read_fn post)
{
	const unsigned n = 5;
	uint16_t k;

	use_pf_model();
	make_q(true, -1);
	for (unsigned lap = 0; lap < 4; lap++) {
		fm.calls = fm.npf = 0;
		for (k = 0; k < n; k++)
			post(k);
		cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), n);
		for (k = 0; k < n; k++) {
			expect_used(k, 4097);
			cr_assert_eq(fm.req[k].offset, 4096u * (k + 1), "lap %u submit %u", lap, k);
			cr_assert_eq(fm.req[k].flags, k == 0 ? 0 : FM_REQ_PREFETCHED,
				     "lap %u submit %u: flags %#x", lap, k, fm.req[k].flags);
		}
		expect_hint(0, 4096 * 2, 4096, 0);
		expect_hint(1, 4096 * 3, 4096, 0);
		expect_hint(2, 4096 * 4, PMD_VQ_HINT_SPLIT_BYTES, 0);
		expect_hint(3, 4096 * 5, PMD_VQ_HINT_SPLIT_BYTES, 1);
		expect_hint(4, 4096 * 4 + PMD_VQ_HINT_SPLIT_BYTES, 4096 - PMD_VQ_HINT_SPLIT_BYTES,
			    3 - PMD_VQP_HINT_REST_AHEAD);
		expect_hint(5, 4096 * 5 + PMD_VQ_HINT_SPLIT_BYTES, 4096 - PMD_VQ_HINT_SPLIT_BYTES,
			    4 - PMD_VQP_HINT_REST_AHEAD);
		cr_assert_eq(fm.npf, 6, "lap %u: %u hints", lap, fm.npf);
	}
	cr_assert_not(q->broken);
}

/* The look-ahead walks the chains of the ring, across its end too. */
Test(vqp, look_ahead_hints_chains_ahead_of_their_turn)
{
	expect_laps_hinted_ahead(post_read_direct);
}

/*
 * Chains sent as Linux sends them with indirect descriptors (one ring
 * descriptor naming a table) are looked ahead into as direct ones are.
 */
Test(vqp, look_ahead_hints_indirect_chains)
{
	expect_laps_hinted_ahead(post_read_through_table);
}

/* n reads of len bytes served by one sweep; the hints it gave before its first submit. */
static unsigned sweep_reads(unsigned n, uint32_t len)
{
	struct vring_packed_desc d[3];
	unsigned k, first = 0;

	fm.calls = fm.npf = 0;
	for (k = 0; k < n; k++) {
		req_descs(d, (uint16_t)k, VIRTIO_BLK_T_IN, 8 * (k + 1), FG_REQ_DATA(k), len);
		post_descs(d, 3, (uint16_t)k);
	}
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), n);
	for (k = 0; k < n; k++) {
		expect_used((uint16_t)k, len + 1);
		cr_assert_eq(fm.req[k].flags, k == 0 ? 0 : FM_REQ_PREFETCHED, "submit %u", k);
	}
	for (k = 0; k < fm.npf; k++)
		first += fm.pf[k].before_submit == 0;
	return first;
}

/*
 * After a sweep of 512 B reads a packed ring's look-ahead gives near hints
 * PMD_VQP_LOOKAHEAD_SMALL chains ahead (here two hinted before the first is
 * served, then one more before each), not the split ring's
 * PMD_VQ_LOOKAHEAD_SMALL; after a sweep of 4 KiB reads the usual hints
 * PMD_VQ_LOOKAHEAD ahead again.
 */
Test(vqp, small_reads_keep_the_look_ahead_near)
{
	_Static_assert(PMD_VQP_LOOKAHEAD_SMALL < PMD_VQ_LOOKAHEAD && PMD_VQ_LOOKAHEAD < 4,
		       "five chains fill the ring: the distances must differ within four");
	use_pf_model();
	make_q(true, -1);
	cr_assert_eq(sweep_reads(5, 512), PMD_VQ_LOOKAHEAD, "a queue's first sweep");
	cr_assert_eq(sweep_reads(5, 512), PMD_VQP_LOOKAHEAD_SMALL);
	for (unsigned k = 0; k < 4; k++) {
		const unsigned at =
		    k < PMD_VQP_LOOKAHEAD_SMALL ? 0 : k + 1 - PMD_VQP_LOOKAHEAD_SMALL;

		expect_hint(k, 4096u * (k + 2), 512, at);
	}
	cr_assert_eq(fm.npf, 4);
	cr_assert(q->hint_near, "small reads' hints are near ones");
	cr_assert_eq(sweep_reads(5, 4096), PMD_VQP_LOOKAHEAD_SMALL,
		     "still the small reads' distance");
	for (unsigned k = 0; k < fm.npf; k++)
		cr_assert_eq(fm.pf[k].len, PMD_VQ_HINT_NEAR_BYTES, "hint %u: not a near one", k);
	cr_assert_eq(sweep_reads(5, 4096), PMD_VQ_LOOKAHEAD);
	cr_assert_not(q->hint_near);
	cr_assert_not(q->broken);
}

/* Five reads of len bytes posted and swept: used in order with their length; their offsets' sum. */
static uint64_t sweep_five(uint32_t len)
{
	struct vring_packed_desc d[3];

	for (uint16_t k = 0; k < 5; k++) {
		req_descs(d, k, VIRTIO_BLK_T_IN, 8 * (k + 1), FG_REQ_DATA(k), len);
		post_descs(d, 3, k);
	}
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 5);
	for (uint16_t k = 0; k < 5; k++)
		expect_used(k, len + 1);
	return 4096 * (1 + 2 + 3 + 4 + 5);
}

static uint64_t sweep_five_small(void)
{
	return sweep_five(512);
}

/*
 * The hint trial on a packed ring (fg_run_hint_trial()), the model's costs
 * as given: the look-ahead's cursor starts over each time hints come back.
 */
static bool run_hint_trial(uint64_t pf_spin_ns, uint64_t cold_spin_ns)
{
	use_pf_model();
	fm.pf_spin_ns = pf_spin_ns;
	fm.cold_spin_ns = cold_spin_ns;
	make_q(true, -1);
	return fg_run_hint_trial(q, &fm, sweep_five_small);
}

/* Hints that cost more than they save (the model's prefetch is slow): the trial turns them off. */
Test(vqp, hint_trial_turns_hints_off_where_they_cost)
{
	cr_assert(run_hint_trial(100000, 0));
}

/* Copies that wait without hints (unhinted reads are slow): the trial keeps them on. */
Test(vqp, hint_trial_keeps_hints_where_they_pay)
{
	cr_assert_not(run_hint_trial(0, 100000));
}

static uint64_t sweep_five_large(void)
{
	return sweep_five(4096);
}

/* The near-hint trial on a packed ring (fg_run_near_trial()), the model's costs as given. */
static bool run_near_trial(uint64_t pf_spin_ns, uint64_t part_spin_ns)
{
	use_pf_model();
	fm.pf_spin_ns = pf_spin_ns;
	fm.part_spin_ns = part_spin_ns;
	make_q(true, -1);
	return fg_run_near_trial(q, &fm, sweep_five_large);
}

/* Each hint call costs (the usual hints make two per read): the trial takes the near hints. */
Test(vqp, near_trial_takes_near_hints_where_they_cost_less)
{
	cr_assert(run_near_trial(20000, 0));
}

/* Copies wait for what a near hint leaves out: the trial keeps the usual hints. */
Test(vqp, near_trial_keeps_usual_hints_where_near_ones_leave_copies_waiting)
{
	cr_assert_not(run_near_trial(0, 20000));
}

/*
 * The usual hints cost time between sweeps (a driver that refills later,
 * say), more than the near hints' copies wait in them: the trial, timing
 * each sweep from the end of the one before, takes the near hints.
 */
Test(vqp, near_trial_counts_the_time_between_sweeps)
{
	fm.usual_gap_ns = 40000;
	cr_assert(run_near_trial(0, 2000));
}

/* Chain 1 rewritten while chain 0 is served (a driver breaking the rules). */
static void rewrite_chain_1(struct fake_model *m, void *arg)
{
	struct vring_packed_desc tbl[3];
	uint16_t f = avail_flags(true);

	(void)arg;
	if (m->calls != 1)
		return;
	/* positions 3..5: a 2-descriptor flush (id 1), then an indirect read (id 5) */
	*(struct virtio_blk_outhdr *)fg_host(&g, hdr_gpa(1)) =
	    (struct virtio_blk_outhdr){.type = VIRTIO_BLK_T_FLUSH};
	ring[4] = (struct vring_packed_desc){
	    .addr = status_gpa(1), .len = 1, .id = 1, .flags = (uint16_t)(VRING_DESC_F_WRITE | f)};
	req_descs(tbl, 5, VIRTIO_BLK_T_IN, 96, FG_REQ_DATA(5), 4096);
	tbl[1].flags = VRING_DESC_F_WRITE;
	memcpy(fg_host(&g, IND_GPA), tbl, sizeof(tbl));
	ring[5] = (struct vring_packed_desc){.addr = IND_GPA,
					     .len = sizeof(tbl),
					     .id = 5,
					     .flags = (uint16_t)(VRING_DESC_F_INDIRECT | f)};
	drv.num[1] = 2;
	drv.num[5] = 1;
}

/*
 * Chains rewritten after the look-ahead walked them: only hints go wrong;
 * every chain is served as it is when its turn comes, in ring order, and
 * the look-ahead starts over where the ring really is.
 */
Test(vqp, look_ahead_survives_chains_rewritten_behind_it)
{
	static const uint16_t order[] = {0, 1, 5, 2, 3, 4};
	static const uint64_t offs[] = {4096, 0, 96 * 512, 4096 * 3, 4096 * 4, 4096 * 5};

	use_pf_model();
	make_q(true, -1);
	for (uint16_t k = 0; k < 5; k++)
		post_rw(k, VIRTIO_BLK_T_IN, 8 * (k + 1));
	fm.on_submit = rewrite_chain_1;
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 6);
	cr_assert_not(q->broken);
	for (unsigned k = 0; k < 6; k++) {
		expect_used(order[k], order[k] == 1 ? 1 : 4097);
		cr_assert_eq(status_of(order[k]), VIRTIO_BLK_S_OK, "id %u", order[k]);
		if (order[k] != 1)
			cr_assert_eq(fm.req[k].offset, offs[k], "submit %u", k);
	}
	cr_assert_eq(fm.req[1].op, FM_OP_FLUSH);
	cr_assert_eq(q->last_avail, 15);
	/* a read after the rewrite that the look-ahead walked afresh was hinted whole */
	cr_assert_eq(fm.req[5].flags, FM_REQ_PREFETCHED);
}

/* Records, at the third submit, which used descriptors the driver could see. */
static bool seen_at_third[2];
static void look_at_used(struct fake_model *m, void *arg)
{
	(void)arg;
	if (m->calls != 3)
		return;
	seen_at_third[0] = pmd_packed_desc_avail(ring[0].flags, true) == false &&
			   !!(ring[0].flags & PMD_PACKED_F_USED);
	seen_at_third[1] = !!(ring[3].flags & PMD_PACKED_F_USED);
}

/*
 * A sweep's used descriptors are published together: the first one's flags
 * are stored last, so the driver (which reads used descriptors in ring
 * order) sees none of them before the batch is whole; at the sweep's end
 * all are there.  With inflight tracking each is published at once.
 */
Test(vqp, used_descriptors_published_as_one_batch)
{
	post_rw(0, VIRTIO_BLK_T_IN, 0);
	post_rw(1, VIRTIO_BLK_T_IN, 8);
	post_rw(2, VIRTIO_BLK_T_IN, 16);
	make_q(true, -1);
	fm.on_submit = look_at_used;
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 3);
	cr_assert_not(seen_at_third[0], "the batch's first used descriptor was published early");
	cr_assert(seen_at_third[1], "later used descriptors are written in place at once");
	expect_used(0, 4097);
	expect_used(1, 4097);
	expect_used(2, 4097);
}

/* Was the used descriptor at ring position 12 published at the sixth submit? */
static bool seen_at_sixth;
static void look_at_used_12(struct fake_model *m, void *arg)
{
	(void)arg;
	if (m->calls == 6)
		seen_at_sixth = !!(ring[12].flags & PMD_PACKED_F_USED);
}

/*
 * After a sweep of four, a sweep publishes every request (a quarter of the
 * last sweep's take, PMD_VQP_PUBLISH_SHARE): the driver sees the first one
 * of the second sweep before the second is served, not at the sweep's end.
 */
Test(vqp, few_requests_published_within_a_sweep)
{
	make_q(true, -1);
	for (uint16_t k = 0; k < 4; k++)
		post_rw(k, VIRTIO_BLK_T_IN, 8 * k);
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 4);
	for (uint16_t k = 0; k < 4; k++)
		expect_used(k, 4097);
	fm.on_submit = look_at_used_12;
	for (uint16_t k = 0; k < 4; k++)
		post_rw(k, VIRTIO_BLK_T_IN, 8 * k);
	cr_assert_eq(pmd_vq_sweep(q, 1, &scratch), 4);
	cr_assert(seen_at_sixth, "the second sweep's first completion waited for its end");
	for (uint16_t k = 0; k < 4; k++)
		expect_used(k, 4097);
}

/* ---- suite vqp_race (see the header) ---- */

TestSuite(vqp_race, .init = setup, .fini = teardown);

/* How the driver asks for calls: the flags alone, or a position (EVENT_IDX). */
enum race_mode { RACE_ENABLE, RACE_DESC };

/* Has the device written the used descriptor the driver reads next? (no barrier) */
static bool used_ready(void)
{
	uint16_t f = __atomic_load_n(&ring[drv.used].flags, __ATOMIC_RELAXED);

	return !!(f & PMD_PACKED_F_AVAIL) == drv.used_wrap &&
	       !!(f & PMD_PACKED_F_USED) == drv.used_wrap;
}

/* Ask for a call at the next used descriptor (virtio 1.2, 2.8.10): one store. */
static void race_enable(enum race_mode m)
{
	if (m == RACE_DESC)
		__atomic_store_n(&drv_ev->off_wrap, (uint16_t)(drv.used | drv.used_wrap << 15),
				 __ATOMIC_RELAXED);
	else
		__atomic_store_n(&drv_ev->flags, VRING_PACKED_EVENT_FLAG_ENABLE, __ATOMIC_RELAXED);
}

/* race_wait_call()'s look: the used descriptor the driver reads next is there. */
static bool used_published(void *arg)
{
	(void)arg;
	return used_ready();
}

/*
 * A driver keeping 4 reads in flight that re-enables calls as Linux's does
 * (the event area, then a look at the next descriptor) and, with nothing
 * used, waits for the call; fence false leaves out the barrier between that
 * store and that load, as QEMU 7.2's single-threaded TCG does.  In ENABLE
 * mode it turns calls off while it reaps (DISABLE); in DESC mode the
 * position it named goes stale instead.  Calls left over are read before
 * each enable, so that a wait is answered only by a call made after it.
 * Stops at the first lost call, after max_reads, or once the poller sent
 * enough_late late calls (and min_reads completed), or after run_ns.
 */
static struct race_result race_drive(enum race_mode m, bool fence, unsigned min_reads,
				     unsigned max_reads, uint64_t enough_late, uint64_t run_ns)
{
	struct race_result r = {0, 0};
	unsigned done = 0;
	uint64_t end = fg_now_ns() + run_ns;

	for (uint16_t id = 0; id < 4; id++)
		post_rw(id, VIRTIO_BLK_T_IN, id);
	while (done < max_reads && fg_now_ns() < end && r.lost == 0 &&
	       (done < min_reads ||
		__atomic_load_n(&q->st.calls_late, __ATOMIC_RELAXED) < enough_late)) {
		uint16_t id;
		uint32_t len;

		if (get_used(&id, &len)) {
			cr_assert_eq(len, 4097);
			post_rw(id, VIRTIO_BLK_T_IN, id);
			done++;
			continue;
		}
		calls_pending();
		race_enable(m);
		if (fence)
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!used_ready()) {
			r.waits++;
			if (!race_wait_call(efd, used_published, NULL))
				r.lost++;
		}
		if (m == RACE_ENABLE)
			__atomic_store_n(&drv_ev->flags, VRING_PACKED_EVENT_FLAG_DISABLE,
					 __ATOMIC_RELAXED);
	}
	return r;
}

static struct race_result race_run(enum race_mode m, bool fence, unsigned min_reads,
				   unsigned max_reads, uint64_t enough_late, uint64_t run_ns)
{
	struct race_result r;

	efd = eventfd(0, EFD_NONBLOCK);
	make_q(true, efd);
	drv_ev->flags =
	    m == RACE_DESC ? VRING_PACKED_EVENT_FLAG_DESC : VRING_PACKED_EVENT_FLAG_DISABLE;
	race_poller_start(q, &scratch);
	r = race_drive(m, fence, min_reads, max_reads, enough_late, run_ns);
	race_poller_stop();
	cr_log_info("mode %d fence %d: %u waits, %u lost, calls %lu (late %lu), saved %lu", m,
		    fence, r.waits, r.lost, (unsigned long)q->st.calls,
		    (unsigned long)q->st.calls_late, (unsigned long)q->st.calls_saved);
	return r;
}

/* Every call comes, and the race happened (late calls sent) for the test to say so. */
static void expect_race_survived(enum race_mode m)
{
	struct race_result r = race_run(m, false, 20000, UINT32_MAX, 10, 30000000000ull);

	cr_assert_gt(r.waits, 0);
	cr_assert_eq(r.lost, 0, "%u calls never came", r.lost);
	cr_assert_geq(q->st.calls_late, 10, "the race did not happen in 30 s: nothing shown");
}

/*
 * The lost wakeup on this machine's own memory order, on a packed ring: a
 * driver without its barrier, racing a real poller, reads the old used flags
 * while femud reads its old event area; the recheck must call.
 */
Test(vqp_race, driver_without_barrier_enable_mode_gets_every_call, .timeout = 60)
{
	expect_race_survived(RACE_ENABLE);
}

Test(vqp_race, driver_without_barrier_desc_mode_gets_every_call, .timeout = 60)
{
	expect_race_survived(RACE_DESC);
}

/* The same driver with its barrier: every call comes from the ordinary decision. */
Test(vqp_race, driver_with_barrier_gets_every_call, .timeout = 60)
{
	struct race_result r = race_run(RACE_DESC, true, 200000, 200000, 0, 30000000000ull);

	cr_assert_gt(r.waits, 0);
	cr_assert_eq(r.lost, 0, "%u calls never came", r.lost);
}
