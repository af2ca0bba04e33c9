/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_hostile.c - malformed virtio-blk requests and vhost-user messages
 * (see fb_hostile.h).  A request case passes when the backend does not
 * report success for it (an error status, a broken queue or a dropped
 * connection are all acceptable) and the backend still serves a correct
 * request on a fresh connection afterwards.
 */
#include "fb_hostile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pmd/virtio_blk_wire.h"

#include "fb_dev.h"
#include "fb_mem.h"
#include "fb_pring.h"
#include "fb_time.h"
#include "fb_verify.h"
#include "fb_vring.h"
#include "vu_client.h"

#define H_QSIZE 128u
#define H_SLOTS 8u
#define H_SLOT_BYTES 8192u
#define H_SCRATCH 32u /* first descriptor index free for hand-built chains */
#define H_CASE_WAIT_MS 500
#define H_GEN 0x486f7374696c65ull /* "Hostile" */

struct hctx {
	const struct fb_opts *o;
	struct fb_dev dev;
	struct fb_mem mem;
	struct fb_vq vq;
	bool have_mem, have_vq;
	uint64_t capacity; /* bytes */
	uint8_t *ind;	   /* scratch area for indirect tables (in shared memory) */
};

/* One hand-built 3-descriptor request (defaults: a valid 4 KiB read of sector 0). */
struct rq {
	uint32_t type;
	uint64_t sector;
	uint64_t hdr_gpa, data_gpa, st_gpa;
	uint32_t hdr_len, data_len, st_len;
	uint16_t hdr_flags, data_flags, st_flags;
	bool no_data;
};

static char why[256];
static bool g_null_backend; /* writes are discarded: read-back not checked */
static bool g_first_check;  /* the liveness check before any case */

static int failf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

/* Put a context in front of the failure already in why: "context: why".  Returns -1. */
static int fail_in(const char *fmt, ...)
{
	char ctx[128], prev[sizeof(why)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	snprintf(prev, sizeof(prev), "%s", why);
	return failf("%s: %s", ctx, prev);
}

static void hctx_close(struct hctx *h)
{
	vu_close(&h->dev.conn);
	if (h->have_vq)
		fb_vq_fini(&h->vq);
	if (h->have_mem)
		fb_mem_destroy(&h->mem);
	h->have_vq = h->have_mem = false;
}

/* Connect and negotiate; with start, also share memory and run queue 0. */
static int hctx_open(struct hctx *h, const struct fb_opts *o, bool start)
{
	int rc;

	memset(h, 0, sizeof(*h));
	h->o = o;
	h->dev.conn.fd = -1;
	rc = fb_dev_connect_retry(&h->dev, o->sock, o->timeout_ms, o->event_idx);
	if (rc == 0 && o->packed)
		rc = fb_dev_use_packed(&h->dev);
	if (rc < 0) {
		failf("%s", h->dev.err);
		hctx_close(h);
		return -1;
	}
	h->capacity = h->dev.capacity;
	rc = fb_mem_create(&h->mem, fb_vq_mem_bytes(H_QSIZE, H_SLOTS, H_SLOT_BYTES) + 65536, false);
	if (rc < 0) {
		hctx_close(h);
		return failf("shared memory: %s", strerror(-rc));
	}
	h->have_mem = true;
	rc = fb_vq_init_layout(&h->vq, &h->mem, 0, H_QSIZE, H_SLOTS, H_SLOT_BYTES,
			       h->dev.conn.features & (1ull << VIRTIO_RING_F_EVENT_IDX), o->packed);
	h->ind = fb_mem_alloc(&h->mem, 32768, 4096);
	if (rc < 0 || !h->ind) {
		hctx_close(h);
		return failf("queue setup failed");
	}
	h->have_vq = true;
	if (start && fb_dev_start(&h->dev, &h->mem, &h->vq, 1) < 0) {
		failf("%s", h->dev.err);
		hctx_close(h);
		return -1;
	}
	return 0;
}

/*
 * Wait for one used entry: spin briefly, then poll every 100 us.
 * 1: completed (id in *id), 0: none in ms, -1: connection closed.
 */
static int wait_used(struct hctx *h, unsigned ms, uint32_t *id)
{
	uint64_t end = fb_now_ns() + (uint64_t)ms * 1000000ull;
	unsigned spins = 0;

	for (;;) {
		if (fb_vq_poll_any(&h->vq, id, 1) == 1)
			return 1;
		if ((++spins & 1023) == 0) {
			if (fb_now_ns() > end)
				return 0;
			if (vu_peer_closed(&h->dev.conn))
				return fb_vq_poll_any(&h->vq, id, 1) == 1 ? 1 : -1;
			if (spins > 64 * 1024)
				usleep(100); /* not a benchmark: leave the CPU to the backend */
		}
	}
}

/* Is the queue's call eventfd signalled within ms?  It is read (cleared). */
static bool call_within(struct hctx *h, unsigned ms)
{
	struct pollfd p = {.fd = h->vq.call_fd, .events = POLLIN};
	uint64_t n;

	if (poll(&p, 1, (int)ms) != 1 || read(h->vq.call_fd, &n, sizeof(n)) != sizeof(n))
		return false;
	return n > 0;
}

/* A correct 4 KiB write + read-back of the device's last block. */
static int serve_check(struct hctx *h)
{
	uint64_t sector = h->capacity / 512 - 8;
	uint32_t types[2] = {VIRTIO_BLK_T_OUT, VIRTIO_BLK_T_IN};
	uint64_t flba, fgen;
	enum fb_vres r;
	uint32_t id;

	if (h->capacity < 4096)
		return failf("device too small for the liveness check");
	for (int i = 0; i < 2; i++) {
		void *buf = fb_vq_slot_data(&h->vq, 0);
		if (types[i] == VIRTIO_BLK_T_OUT && h->dev.readonly)
			continue;
		if (types[i] == VIRTIO_BLK_T_OUT)
			fb_verify_fill(buf, sector, 8, H_GEN);
		else
			memset(buf, 0, 4096);
		fb_vq_submit_any(&h->vq, 0, types[i], sector, 4096);
		fb_vq_kick(&h->vq);
		if (wait_used(h, h->o->timeout_ms, &id) != 1)
			return failf("no completion of a correct %s within %u ms",
				     i ? "read" : "write", h->o->timeout_ms);
		if (id != 0 || h->vq.status[0] != VIRTIO_BLK_S_OK)
			return failf("correct %s: id %u status %u", i ? "read" : "write", id,
				     h->vq.status[0]);
	}
	if (!h->dev.readonly && !g_null_backend &&
	    fb_verify_check(fb_vq_slot_data(&h->vq, 0), sector, 8, H_GEN, &r, &flba, &fgen) >= 0) {
		if (r == FB_V_ZERO && g_first_check) {
			g_null_backend = true; /* e.g. qemu-storage-daemon null-co */
			return 0;
		}
		return failf("read-back of the liveness block: %s", fb_verify_res_str(r));
	}
	return 0;
}

/* The liveness check after each case. */
static int alive(const struct fb_opts *o)
{
	struct hctx h;
	int rc;

	if (hctx_open(&h, o, true) < 0)
		return fail_in("backend not serving after the case");
	rc = serve_check(&h);
	if (rc == 0) {
		fb_dev_stop(&h.dev, &h.vq, 1);
		h.dev.conn.fd = -1;
	}
	hctx_close(&h);
	return rc;
}

/* ---- hand-built requests ---- */

static void rq_default(struct hctx *h, struct rq *q, uint32_t type, uint64_t sector, uint32_t len)
{
	memset(q, 0, sizeof(*q));
	q->type = type;
	q->sector = sector;
	q->hdr_gpa = fb_mem_gpa(&h->mem, &h->vq.hdr[0]);
	q->hdr_len = sizeof(struct virtio_blk_outhdr);
	q->data_gpa = fb_mem_gpa(&h->mem, fb_vq_slot_data(&h->vq, 0));
	q->data_len = len;
	q->data_flags = type == VIRTIO_BLK_T_OUT ? 0 : VRING_DESC_F_WRITE;
	q->st_gpa = fb_mem_gpa(&h->mem, &h->vq.status[0]);
	q->st_len = 1;
	q->st_flags = VRING_DESC_F_WRITE;
}

static void set_desc(struct vring_desc *d, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	d->addr = addr;
	d->len = len;
	d->flags = flags;
	d->next = next;
}

/* One descriptor of a hand-built packed chain; raw: flags as given (no AVAIL/USED bits added). */
struct pd {
	uint64_t addr;
	uint32_t len;
	uint16_t id;
	uint16_t flags;
	bool raw;
};

/*
 * Write a packed chain of n descriptors at the next avail position, the
 * head's flags last (by the kick), and kick.
 */
static void pk_post(struct hctx *h, const struct pd *d, unsigned n)
{
	struct fb_vq *vq = &h->vq;
	uint16_t head = vq->avail_idx;

	for (unsigned i = n; i-- > 1;) {
		uint16_t c = (uint16_t)(head + i);
		struct vring_packed_desc *p = &vq->pdesc[c & vq->mask];

		p->addr = d[i].addr;
		p->len = d[i].len;
		p->id = d[i].id;
		p->flags =
		    d[i].raw ? d[i].flags : (uint16_t)(d[i].flags | fb_pvq_avail_bits(vq, c));
	}
	vq->pdesc[head & vq->mask].addr = d[0].addr;
	vq->pdesc[head & vq->mask].len = d[0].len;
	vq->pdesc[head & vq->mask].id = d[0].id;
	vq->pk_head = head;
	vq->pk_head_flags =
	    d[0].raw ? d[0].flags : (uint16_t)(d[0].flags | fb_pvq_avail_bits(vq, head));
	vq->avail_idx = (uint16_t)(head + n);
	fb_vq_kick(vq);
}

/* q as a packed chain (buffer id 0) at the next avail position. */
static void rq_post_packed(struct hctx *h, const struct rq *q)
{
	struct pd d[3] = {
	    {q->hdr_gpa, q->hdr_len, 0, (uint16_t)(q->hdr_flags | VRING_DESC_F_NEXT), false},
	    {q->data_gpa, q->data_len, 0, (uint16_t)(q->data_flags | VRING_DESC_F_NEXT), false},
	    {q->st_gpa, q->st_len, 0, q->st_flags, false},
	};

	if (q->no_data) {
		d[1] = d[2];
		pk_post(h, d, 2);
	} else {
		pk_post(h, d, 3);
	}
}

/* Write q into the scratch descriptors (head H_SCRATCH) and make it available. */
static void rq_post(struct hctx *h, const struct rq *q)
{
	struct vring_desc *d = h->vq.vr.desc;
	unsigned i = H_SCRATCH;

	h->vq.hdr[0].type = q->type;
	h->vq.hdr[0].ioprio = 0;
	h->vq.hdr[0].sector = q->sector;
	h->vq.status[0] = FB_STATUS_UNSET;
	if (h->vq.packed) {
		rq_post_packed(h, q);
		return;
	}
	set_desc(&d[i], q->hdr_gpa, q->hdr_len, (uint16_t)(q->hdr_flags | VRING_DESC_F_NEXT),
		 (uint16_t)(i + 1));
	if (!q->no_data) {
		set_desc(&d[i + 1], q->data_gpa, q->data_len,
			 (uint16_t)(q->data_flags | VRING_DESC_F_NEXT), (uint16_t)(i + 2));
		set_desc(&d[i + 2], q->st_gpa, q->st_len, q->st_flags, 0);
	} else {
		set_desc(&d[i + 1], q->st_gpa, q->st_len, q->st_flags, 0);
	}
	fb_vq_push_head(&h->vq, (uint16_t)i);
	fb_vq_kick(&h->vq);
}

/* The request must not succeed: error status, no completion or a dropped connection. */
static int expect_no_success(struct hctx *h, bool must_be_unsupp)
{
	uint32_t id;
	int r = wait_used(h, H_CASE_WAIT_MS, &id);
	uint8_t st = h->vq.status[0];

	if (r <= 0)
		return 0;
	if (st == VIRTIO_BLK_S_OK)
		return failf("backend reported success (status 0) for a malformed request");
	if (must_be_unsupp && st != VIRTIO_BLK_S_UNSUPP && st != FB_STATUS_UNSET)
		return failf("status %u, expected VIRTIO_BLK_S_UNSUPP (2)", st);
	return 0;
}

/* The request must complete with exactly status want (virtio-blk's answer at the spec position). */
static int expect_status(struct hctx *h, uint8_t want)
{
	uint32_t id;
	int r = wait_used(h, H_CASE_WAIT_MS, &id);

	if (r <= 0)
		return failf("no completion (expected status %u)", want);
	if (h->vq.status[0] != want)
		return failf("status %u, expected %u", h->vq.status[0], want);
	return 0;
}

/* A READ/WRITE whose data descriptor has length 0 must be answered IOERR, not OK. */
static int zero_len_data(const struct fb_opts *o, uint32_t type)
{
	struct hctx h;
	struct rq q;
	int rc;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	rq_default(&h, &q, type, 0, 0);
	rq_post(&h, &q);
	rc = expect_status(&h, VIRTIO_BLK_S_IOERR);
	hctx_close(&h);
	return rc;
}

static int c_read_zero_len_data_desc(const struct fb_opts *o)
{
	return zero_len_data(o, VIRTIO_BLK_T_IN);
}

static int c_write_zero_len_data_desc(const struct fb_opts *o)
{
	return zero_len_data(o, VIRTIO_BLK_T_OUT);
}

/* Post q on a fresh started connection and expect no success. */
static int run_rq(const struct fb_opts *o, struct rq *q,
		  void (*tweak)(struct hctx *h, struct rq *q), bool must_be_unsupp)
{
	struct hctx h;
	int rc;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	rq_default(&h, q, q->type, q->sector, q->data_len);
	if (tweak)
		tweak(&h, q);
	rq_post(&h, q);
	rc = expect_no_success(&h, must_be_unsupp);
	hctx_close(&h);
	return rc;
}

static uint64_t cap_sectors(const struct fb_opts *o)
{
	struct hctx h;
	uint64_t s;

	if (hctx_open(&h, o, false) < 0)
		return 0;
	s = h.capacity / 512;
	hctx_close(&h);
	return s;
}

static uint64_t g_cap_sectors;

#define RQ_CASE(fn, type_, sector_, len_, tweak_, unsupp)                                          \
	static int fn(const struct fb_opts *o)                                                     \
	{                                                                                          \
		struct rq q = {.type = (type_), .sector = (sector_), .data_len = (len_)};          \
		return run_rq(o, &q, tweak_, unsupp);                                              \
	}

static void t_data_outside(struct hctx *h, struct rq *q)
{
	q->data_gpa = h->mem.gpa_base + h->mem.size + (1u << 20);
}
static void t_data_span_end(struct hctx *h, struct rq *q)
{
	q->data_gpa = h->mem.gpa_base + h->mem.size - 512;
}
static void t_data_wrap(struct hctx *h, struct rq *q)
{
	(void)h;
	q->data_gpa = UINT64_MAX - 1000;
}
static void t_data_below(struct hctx *h, struct rq *q)
{
	q->data_gpa = h->mem.gpa_base - 2048;
}
static void t_hdr_outside(struct hctx *h, struct rq *q)
{
	q->hdr_gpa = h->mem.gpa_base + h->mem.size + 4096;
}
static void t_hdr_short(struct hctx *h, struct rq *q)
{
	(void)h;
	q->hdr_len = 8;
}
static void t_hdr_writable(struct hctx *h, struct rq *q)
{
	(void)h;
	q->hdr_flags = VRING_DESC_F_WRITE;
}
static void t_st_readonly(struct hctx *h, struct rq *q)
{
	(void)h;
	q->st_flags = 0;
}
static void t_st_zero(struct hctx *h, struct rq *q)
{
	(void)h;
	q->st_len = 0;
}
static void t_st_outside(struct hctx *h, struct rq *q)
{
	q->st_gpa = h->mem.gpa_base + h->mem.size + 8192;
}
static void t_data_readonly(struct hctx *h, struct rq *q)
{
	(void)h;
	q->data_flags = 0;
}
static void t_data_writable(struct hctx *h, struct rq *q)
{
	(void)h;
	q->data_flags = VRING_DESC_F_WRITE;
}
static void t_no_status(struct hctx *h, struct rq *q)
{
	(void)h;
	q->no_data = true;
	q->st_gpa = q->data_gpa;
	q->st_len = 0;
	q->st_flags = 0;
}

RQ_CASE(c_read_past_end, VIRTIO_BLK_T_IN, g_cap_sectors, 4096, NULL, false)
RQ_CASE(c_read_straddle_end, VIRTIO_BLK_T_IN, g_cap_sectors - 1, 4096, NULL, false)
RQ_CASE(c_read_sector_overflow, VIRTIO_BLK_T_IN, UINT64_MAX - 3, 4096, NULL, false)
RQ_CASE(c_read_sector_wrap_bytes, VIRTIO_BLK_T_IN, (UINT64_MAX >> 9) + 1, 4096, NULL, false)
RQ_CASE(c_write_past_end, VIRTIO_BLK_T_OUT, g_cap_sectors + 8, 4096, NULL, false)
RQ_CASE(c_data_outside_mem, VIRTIO_BLK_T_IN, 0, 4096, t_data_outside, false)
RQ_CASE(c_data_spans_mem_end, VIRTIO_BLK_T_IN, 0, 4096, t_data_span_end, false)
RQ_CASE(c_data_addr_wraps, VIRTIO_BLK_T_IN, 0, 4096, t_data_wrap, false)
RQ_CASE(c_data_below_mem, VIRTIO_BLK_T_OUT, 0, 4096, t_data_below, false)
RQ_CASE(c_hdr_outside_mem, VIRTIO_BLK_T_IN, 0, 4096, t_hdr_outside, false)
RQ_CASE(c_hdr_too_short, VIRTIO_BLK_T_IN, 0, 4096, t_hdr_short, false)
RQ_CASE(c_hdr_device_writable, VIRTIO_BLK_T_IN, 0, 4096, t_hdr_writable, false)
RQ_CASE(c_status_read_only, VIRTIO_BLK_T_IN, 0, 4096, t_st_readonly, false)
RQ_CASE(c_status_len_zero, VIRTIO_BLK_T_IN, 0, 4096, t_st_zero, false)
RQ_CASE(c_status_outside_mem, VIRTIO_BLK_T_IN, 0, 4096, t_st_outside, false)
RQ_CASE(c_data_len_not_512, VIRTIO_BLK_T_IN, 0, 1000, NULL, false)
RQ_CASE(c_write_len_not_512, VIRTIO_BLK_T_OUT, 0, 700, NULL, false)
RQ_CASE(c_unknown_type, 0x7777, 0, 4096, NULL, true)
RQ_CASE(c_read_into_readonly_buf, VIRTIO_BLK_T_IN, 0, 4096, t_data_readonly, false)
RQ_CASE(c_write_from_writable_buf, VIRTIO_BLK_T_OUT, 0, 4096, t_data_writable, false)
RQ_CASE(c_header_only_chain, VIRTIO_BLK_T_IN, 0, 4096, t_no_status, false)

/* Chains built by hand beyond the 3-descriptor shape. */
static int chain_case(const struct fb_opts *o, void (*build)(struct hctx *h))
{
	struct hctx h;
	int rc;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	h.vq.hdr[0].type = VIRTIO_BLK_T_IN;
	h.vq.hdr[0].sector = 0;
	h.vq.status[0] = FB_STATUS_UNSET;
	build(&h);
	fb_vq_kick(&h.vq);
	rc = expect_no_success(&h, false);
	hctx_close(&h);
	return rc;
}

static void b_loop(struct hctx *h)
{
	struct vring_desc *d = h->vq.vr.desc;
	unsigned i = H_SCRATCH;

	set_desc(&d[i], fb_mem_gpa(&h->mem, &h->vq.hdr[0]), 16, VRING_DESC_F_NEXT, i + 1);
	set_desc(&d[i + 1], fb_mem_gpa(&h->mem, fb_vq_slot_data(&h->vq, 0)), 512,
		 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, i + 2);
	set_desc(&d[i + 2], fb_mem_gpa(&h->mem, fb_vq_slot_data(&h->vq, 1)), 512,
		 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, i + 1);
	fb_vq_push_head(&h->vq, (uint16_t)i);
}

static void b_self_loop(struct hctx *h)
{
	struct vring_desc *d = h->vq.vr.desc;
	unsigned i = H_SCRATCH;

	set_desc(&d[i], fb_mem_gpa(&h->mem, &h->vq.hdr[0]), 16, VRING_DESC_F_NEXT, i);
	fb_vq_push_head(&h->vq, (uint16_t)i);
}

static void b_next_out_of_range(struct hctx *h)
{
	struct vring_desc *d = h->vq.vr.desc;
	unsigned i = H_SCRATCH;

	set_desc(&d[i], fb_mem_gpa(&h->mem, &h->vq.hdr[0]), 16, VRING_DESC_F_NEXT, 5000);
	fb_vq_push_head(&h->vq, (uint16_t)i);
}

static void b_head_out_of_range(struct hctx *h)
{
	fb_vq_push_head(&h->vq, (uint16_t)(H_QSIZE + 7));
}

/* A chain that uses every descriptor of the ring and then one more (a loop). */
static void b_chain_longer_than_ring(struct hctx *h)
{
	struct vring_desc *d = h->vq.vr.desc;

	set_desc(&d[0], fb_mem_gpa(&h->mem, &h->vq.hdr[0]), 16, VRING_DESC_F_NEXT, 1);
	for (unsigned i = 1; i < H_QSIZE; i++)
		set_desc(&d[i], fb_mem_gpa(&h->mem, fb_vq_slot_data(&h->vq, 0)), 512,
			 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, (uint16_t)((i + 1) % H_QSIZE));
	fb_vq_push_head(&h->vq, 0);
}

/* An indirect table of n entries: header, n-2 data, status; last_next: where the last points. */
static void indirect(struct hctx *h, unsigned n, int last_next, uint64_t table_gpa,
		     uint32_t table_len)
{
	struct vring_desc *t = (struct vring_desc *)h->ind;
	struct vring_desc *d = h->vq.vr.desc;

	set_desc(&t[0], fb_mem_gpa(&h->mem, &h->vq.hdr[0]), 16, VRING_DESC_F_NEXT, 1);
	for (unsigned i = 1; i + 1 < n; i++)
		set_desc(&t[i], fb_mem_gpa(&h->mem, fb_vq_slot_data(&h->vq, 0)), 512,
			 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, (uint16_t)(i + 1));
	set_desc(&t[n - 1], fb_mem_gpa(&h->mem, &h->vq.status[0]), 1, VRING_DESC_F_WRITE, 0);
	if (last_next >= 0) {
		t[n - 1].flags |= VRING_DESC_F_NEXT;
		t[n - 1].next = (uint16_t)last_next;
	}
	set_desc(&d[H_SCRATCH], table_gpa ? table_gpa : fb_mem_gpa(&h->mem, t),
		 table_len ? table_len : n * 16u, VRING_DESC_F_INDIRECT, 0);
	fb_vq_push_head(&h->vq, H_SCRATCH);
}

static void b_ind_loop(struct hctx *h)
{
	indirect(h, 4, 1, 0, 0);
}
static void b_ind_too_long(struct hctx *h)
{
	indirect(h, H_QSIZE + 2, -1, 0, 0);
}
static void b_ind_outside(struct hctx *h)
{
	indirect(h, 3, -1, h->mem.gpa_base + h->mem.size + 65536, 48);
}
static void b_ind_bad_len(struct hctx *h)
{
	indirect(h, 3, -1, 0, 40);
}
static void b_ind_nested(struct hctx *h)
{
	struct vring_desc *t = (struct vring_desc *)h->ind;

	indirect(h, 3, -1, 0, 0);
	t[1].flags |= VRING_DESC_F_INDIRECT;
}
static void b_ind_next_out_of_table(struct hctx *h)
{
	struct vring_desc *t = (struct vring_desc *)h->ind;

	indirect(h, 3, -1, 0, 0);
	t[1].next = 77;
}

/* The avail index jumps ahead by more than the ring size. */
static int c_avail_idx_jump(const struct fb_opts *o)
{
	struct hctx h;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	h.vq.avail_idx = (uint16_t)(H_QSIZE * 3 + 5);
	fb_vq_kick(&h.vq);
	usleep(H_CASE_WAIT_MS * 1000);
	hctx_close(&h);
	return 0;
}

/* GET_ID into an 8-byte buffer: nothing past the buffer may be written. */
static int c_get_id_short_buffer(const struct fb_opts *o)
{
	struct hctx h;
	struct rq q;
	uint8_t *buf;
	uint32_t id;
	int rc = 0;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	buf = fb_vq_slot_data(&h.vq, 0);
	memset(buf, 0xcc, 64);
	rq_default(&h, &q, VIRTIO_BLK_T_GET_ID, 0, 8);
	rq_post(&h, &q);
	if (wait_used(&h, H_CASE_WAIT_MS, &id) == 1)
		for (int i = 8; i < 64; i++)
			if (buf[i] != 0xcc) {
				rc = failf("GET_ID wrote byte %d past an 8-byte buffer", i);
				break;
			}
	hctx_close(&h);
	return rc;
}

/* Many requests in flight, then the frontend vanishes. */
static int c_disconnect_in_flight(const struct fb_opts *o)
{
	struct hctx h;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	for (unsigned s = 0; s < H_SLOTS; s++)
		fb_vq_submit_any(&h.vq, s, VIRTIO_BLK_T_IN, s * 16, H_SLOT_BYTES);
	fb_vq_kick(&h.vq);
	hctx_close(&h);
	return 0;
}

/*
 * Reconnect overlap: a fresh frontend connects and starts its queue while
 * the previous one, with a request in flight, is still connected; only
 * then the previous one hangs up.  The fresh connection must serve a
 * verified write and read every time (femud: "2 frontends connected at
 * once"; its queue 0 must be judged against its own indexes only).
 */
#define H_OVERLAP_ROUNDS 150
static int c_reconnect_overlap(const struct fb_opts *o)
{
	static struct hctx hc[2]; /* the old and the new connection, alternating */
	unsigned cur = 0;

	if (hctx_open(&hc[cur], o, true) < 0)
		return -1;
	for (unsigned i = 0; i < H_OVERLAP_ROUNDS; i++) {
		struct hctx *a = &hc[cur], *b = &hc[cur ^ 1];
		int rc;

		fb_vq_submit(&a->vq, 1, VIRTIO_BLK_T_IN, 8 * i, 4096);
		fb_vq_kick(&a->vq);
		if (hctx_open(b, o, true) < 0) {
			hctx_close(a);
			return -1;
		}
		hctx_close(a);
		rc = serve_check(b);
		if (rc < 0) {
			hctx_close(b);
			return fail_in("round %u of %u", i + 1, H_OVERLAP_ROUNDS);
		}
		cur ^= 1;
	}
	hctx_close(&hc[cur]);
	return 0;
}

/*
 * A second connection that takes over a's memory and rings as they are, the
 * way QEMU reconnects (same guest memory, rings untouched, SET_VRING_BASE at
 * the index reached), while a is still connected.  b gets its own kick and
 * call eventfds; a keeps owning the memory.
 */
static int hctx_takeover(struct hctx *b, const struct fb_opts *o, const struct hctx *a)
{
	memset(b, 0, sizeof(*b));
	b->o = o;
	b->dev.conn.fd = -1;
	if (fb_dev_connect_retry(&b->dev, o->sock, o->timeout_ms, o->event_idx) < 0)
		return failf("second connection: %s", b->dev.err);
	b->capacity = b->dev.capacity;
	b->mem = a->mem;
	b->vq = a->vq;
	b->ind = a->ind;
	b->vq.kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	b->vq.call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	b->have_vq = true;
	if (b->vq.kick_fd < 0 || b->vq.call_fd < 0) {
		hctx_close(b);
		return failf("eventfd: %s", strerror(errno));
	}
	if (fb_dev_start(&b->dev, &b->mem, &b->vq, 1) < 0) {
		failf("second connection: %s", b->dev.err);
		hctx_close(b);
		return -1;
	}
	return 0;
}

/* Ask for a call at the next completion (used_event, or interrupts on). */
static void want_call(struct hctx *h)
{
	if (h->vq.event_idx)
		__atomic_store_n(&vring_used_event(&h->vq.vr), h->vq.last_used, __ATOMIC_RELEASE);
	else
		h->vq.vr.avail->flags = 0;
}

/*
 * A frontend reconnects on the same memory and rings (QEMU's reconnect)
 * before the backend has seen the old connection hang up ("2 frontends
 * connected at once").  From the moment the new connection's queue runs,
 * the old connection's queue must not touch the ring: served twice, every
 * request would be executed twice and completed through the old call fd
 * too (a guest then sees completions it did not expect).  The old call
 * eventfd must stay silent while the new connection serves H_TAKEOVER_ROUNDS
 * verified writes and reads with a call wanted for each.
 */
#define H_TAKEOVER_ROUNDS 8
static int c_reconnect_same_rings(const struct fb_opts *o)
{
	struct hctx a, b;
	uint64_t n;
	int rc;

	if (hctx_open(&a, o, true) < 0)
		return -1;
	rc = serve_check(&a);
	if (rc == 0 && hctx_takeover(&b, o, &a) < 0)
		rc = -1;
	if (rc < 0) {
		hctx_close(&a);
		return rc;
	}
	while (read(a.vq.call_fd, &n, sizeof(n)) == sizeof(n))
		; /* a's calls so far (its start, its own requests) */
	for (unsigned i = 0; rc == 0 && i < H_TAKEOVER_ROUNDS; i++) {
		want_call(&a);
		want_call(&b);
		rc = serve_check(&b);
		a.vq.last_used = b.vq.last_used;
	}
	if (rc == 0 && call_within(&a, 50))
		rc = failf("the old connection's queue still serves the ring the new connection "
			   "took over (a call on its call fd)");
	a.have_mem = false; /* b's rings live there: unmapped last */
	b.have_mem = true;
	hctx_close(&a);
	hctx_close(&b);
	return rc;
}

/* ---- protocol messages ---- */

/* Send one message on a negotiated connection, wait briefly (answer or close). */
static int send_then_close(const struct fb_opts *o, uint32_t req, const void *p, uint32_t size,
			   const int *fds, unsigned nfds)
{
	struct hctx h;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	vu_send(&h.dev.conn, req, 0, p, size, fds, nfds);
	vu_sync(&h.dev.conn); /* answered or not, bounded by the timeout */
	hctx_close(&h);
	return 0;
}

/* Payloads of the one-message cases (sent on a negotiated, not started connection). */
static const struct vhu_vring_state st_num_zero = {0, 0};
static const struct vhu_vring_state st_num_not_pow2 = {0, 1000};
static const struct vhu_vring_state st_num_huge = {0, 65536};
static const struct vhu_vring_state st_index_huge = {4000, 128};
static const struct vhu_vring_state st_base_index_huge = {1000000, 7};
static const struct vhu_vring_state st_enable_index_huge = {513, 1};
static const struct vhu_vring_state st_get_base_index_huge = {999, 0};
static const uint64_t u64_kick_index_huge = 300 | VHU_VRING_NOFD;
static const uint64_t u64_zero; /* index 0, no NOFD flag, and no fd attached */
static const uint64_t u64_all_ones = ~0ull;
static const uint32_t u32_short;
static const uint16_t u16_short = 0xffff;
static const struct vhu_config cfg_too_big = {.offset = 0, .size = 4096};
static const struct vhu_config cfg_offset_past_end = {.offset = 250, .size = 200};
static const struct vhu_config cfg_set_too_big = {.offset = 200, .size = 256};
static const struct vhu_mem_table mt_no_regions = {.nregions = 0};
static const struct vhu_mem_table mt_too_many_regions = {.nregions = 4096};
static const struct vhu_mem_table mt_without_fd = {
    .nregions = 1,
    .region = {{.gpa = 0, .size = 1 << 20, .uaddr = 0x7f0000000000ull}},
};
#define MT_ONE_REGION (8 + sizeof(struct vhu_mem_region))

static int c_mem_table_bad_offset(const struct fb_opts *o)
{
	struct vhu_mem_table t;
	struct fb_mem m;
	int rc;

	if (fb_mem_create(&m, 1 << 20, false) < 0)
		return failf("memfd");
	memset(&t, 0, sizeof(t));
	t.nregions = 1;
	t.region[0].gpa = 0;
	t.region[0].size = UINT64_MAX - 4096;
	t.region[0].uaddr = (uintptr_t)m.base;
	t.region[0].mmap_offset = UINT64_MAX - 10;
	rc = send_then_close(o, VHU_SET_MEM_TABLE, &t, 8 + sizeof(struct vhu_mem_region), &m.fd, 1);
	fb_mem_destroy(&m);
	return rc;
}

/*
 * A message the backend must refuse: a NACK (REPLY_ACK negotiated) or a
 * closed connection.  An acknowledged (or answered, then kept) message
 * fails the case; so does no answer at all.
 */
static int expect_refused(struct hctx *h, uint32_t req, const void *p, uint32_t size,
			  const int *fds, unsigned nfds)
{
	struct vu_conn *c = &h->dev.conn;
	struct vhu_msg r;
	int rc;

	if (req == VHU_GET_VRING_BASE || req == VHU_GET_CONFIG) {
		/* a GET may be answered, but then the connection must close */
		rc = vu_send(c, req, 0, p, size, fds, nfds);
		if (rc == 0)
			rc = vu_recv(c, req, &r);
		if (rc >= 0)
			rc = vu_sync(c);
	} else {
		rc = vu_set(c, req, p, size, fds, nfds);
		if (rc == 0)
			rc = vu_sync(c);
	}
	if (rc == -EPROTO && (c->proto_features & (1ull << VHU_PF_REPLY_ACK)))
		return 0; /* NACK */
	if (rc < 0 && vu_peer_closed(c))
		return 0;
	if (rc == 0)
		return failf("%s was accepted", vu_request_name(req));
	return failf("%s: neither refused nor answered (%s)", vu_request_name(req), c->err);
}

/* One message on a negotiated connection (features set), which must be refused. */
static int refused_msg(const struct fb_opts *o, uint32_t req, const void *p, uint32_t size,
		       bool with_fd)
{
	struct hctx h;
	int rc;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	vu_set_u64(&h.dev.conn, VHU_SET_FEATURES, h.dev.conn.features);
	rc = expect_refused(&h, req, p, size, with_fd ? &h.vq.kick_fd : NULL, with_fd);
	hctx_close(&h);
	return rc;
}

/* Every per-vring message naming queue 8 of a device with fewer queues is refused. */
static int c_vring_index_beyond_queues(const struct fb_opts *o)
{
	static const uint32_t state_reqs[] = {VHU_SET_VRING_NUM, VHU_SET_VRING_BASE,
					      VHU_SET_VRING_ENABLE, VHU_GET_VRING_BASE};
	static const uint32_t fd_reqs[] = {VHU_SET_VRING_KICK, VHU_SET_VRING_CALL,
					   VHU_SET_VRING_ERR};
	struct hctx h;
	unsigned idx;
	int rc = 0;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	idx = h.dev.queues_offered; /* the first index the device does not have */
	hctx_close(&h);
	for (size_t i = 0; rc == 0 && i < sizeof(state_reqs) / sizeof(state_reqs[0]); i++) {
		struct vhu_vring_state st = {.index = idx,
					     .num = state_reqs[i] == VHU_SET_VRING_NUM ? 128 : 0};

		rc = refused_msg(o, state_reqs[i], &st, sizeof(st), false);
	}
	if (rc == 0) {
		struct vhu_vring_addr a = {.index = idx};

		rc = refused_msg(o, VHU_SET_VRING_ADDR, &a, sizeof(a), false);
	}
	for (size_t i = 0; rc == 0 && i < sizeof(fd_reqs) / sizeof(fd_reqs[0]); i++) {
		uint64_t v = idx;

		rc = refused_msg(o, fd_reqs[i], &v, sizeof(v), true);
		if (rc == 0) {
			v |= VHU_VRING_NOFD;
			rc = refused_msg(o, fd_reqs[i], &v, sizeof(v), false);
		}
	}
	if (rc < 0)
		return fail_in("queue index %u (device offers %u)", idx, idx);
	return 0;
}

/* SET_VRING_NUM values a split ring cannot have are refused. */
static int c_vring_num_invalid_refused(const struct fb_opts *o)
{
	static const uint32_t nums[] = {0, 1000, 65536};
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof(nums) / sizeof(nums[0]); i++) {
		struct vhu_vring_state st = {.index = 0, .num = nums[i]};

		rc = refused_msg(o, VHU_SET_VRING_NUM, &st, sizeof(st), false);
		if (rc < 0)
			return fail_in("size %u", nums[i]);
	}
	return 0;
}

/*
 * The queue's ring does not fit its memory: a read posted at descriptors
 * 0..2 must never complete.  Only used->idx is watched (the rest of the
 * used ring may lie outside what the frontend mapped).
 */
static int expect_not_served(struct hctx *h, const char *what)
{
	struct vring_desc *d = h->vq.vr.desc;
	uint16_t idx0 = __atomic_load_n(&h->vq.vr.used->idx, __ATOMIC_ACQUIRE);
	uint64_t end = fb_now_ns() + (uint64_t)H_CASE_WAIT_MS * 1000000ull;

	h->vq.status[0] = FB_STATUS_UNSET;
	h->vq.hdr[0].type = VIRTIO_BLK_T_IN;
	h->vq.hdr[0].sector = 0;
	set_desc(&d[0], fb_mem_gpa(&h->mem, &h->vq.hdr[0]), 16, VRING_DESC_F_NEXT, 1);
	set_desc(&d[1], fb_mem_gpa(&h->mem, fb_vq_slot_data(&h->vq, 0)), 4096,
		 VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	set_desc(&d[2], fb_mem_gpa(&h->mem, &h->vq.status[0]), 1, VRING_DESC_F_WRITE, 0);
	fb_vq_push_head(&h->vq, 0);
	fb_vq_kick(&h->vq);
	while (fb_now_ns() < end) {
		if (__atomic_load_n(&h->vq.vr.used->idx, __ATOMIC_ACQUIRE) != idx0 ||
		    h->vq.status[0] != FB_STATUS_UNSET)
			return failf("a queue whose %s does not fit guest memory served a request",
				     what);
		usleep(1000);
	}
	return 0;
}

/*
 * One ring placed so that it starts inside the (single) memory region and
 * ends past its end; the queue must not start.  The frontend itself only
 * touches the in-bounds part (no event index on its side).
 */
static int ring_past_end(const struct fb_opts *o, int which)
{
	static const char *const names[] = {"descriptor table", "avail ring", "used ring"};
	struct hctx h;
	uint8_t *end;
	int rc = 0;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	end = h.mem.base + h.mem.size;
	h.vq.event_idx = false;
	if (which == 0) {
		h.vq.vr.desc = (struct vring_desc *)(end - 16 * (H_QSIZE / 2));
		memset(h.vq.vr.desc, 0, 16 * (H_QSIZE / 2));
	} else if (which == 1) {
		h.vq.vr.avail = (struct vring_avail *)(end - 2 * (H_QSIZE - 2));
		memset(h.vq.vr.avail, 0, 2 * (H_QSIZE - 2));
		h.vq.vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	} else {
		h.vq.vr.used = (struct vring_used *)(end - 4);
		memset(h.vq.vr.used, 0, 4);
	}
	/* a refusal while starting (NACK or closed connection) is a pass too */
	if (fb_dev_start(&h.dev, &h.mem, &h.vq, 1) == 0 && !vu_peer_closed(&h.dev.conn))
		rc = expect_not_served(&h, names[which]);
	hctx_close(&h);
	return rc;
}

static int c_desc_table_past_mem_end(const struct fb_opts *o)
{
	return ring_past_end(o, 0);
}

static int c_avail_ring_past_mem_end(const struct fb_opts *o)
{
	return ring_past_end(o, 1);
}

static int c_used_ring_past_mem_end(const struct fb_opts *o)
{
	return ring_past_end(o, 2);
}

/* SET_MEM_TABLE for this connection's memory, region cut to size bytes (or longer). */
static int set_mem_size(struct hctx *h, uint64_t size)
{
	struct vhu_mem_table t;

	memset(&t, 0, sizeof(t));
	t.nregions = 1;
	t.region[0].gpa = h->mem.gpa_base;
	t.region[0].size = size;
	t.region[0].uaddr = (uint64_t)(uintptr_t)h->mem.base;
	return vu_set(&h->dev.conn, VHU_SET_MEM_TABLE, &t, 8 + sizeof(struct vhu_mem_region),
		      &h->mem.fd, 1);
}

/*
 * A running queue; a new memory table then cuts the region in the middle
 * of the used ring: the queue must not be restarted on it.
 */
static int c_mem_table_cuts_running_ring(const struct fb_opts *o)
{
	uint64_t used_off;
	struct hctx h;
	int rc = 0;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	used_off = (uint64_t)((uint8_t *)h.vq.vr.used - h.mem.base);
	if (set_mem_size(&h, used_off + 8) == 0 && vu_sync(&h.dev.conn) == 0) {
		struct vring_desc *d = h.vq.vr.desc;
		uint16_t idx0 = h.vq.vr.used->idx;

		/* header and status in unused descriptor entries, inside the cut region */
		set_desc(&d[H_SCRATCH], fb_mem_gpa(&h.mem, &d[100]), 16, VRING_DESC_F_NEXT,
			 H_SCRATCH + 1);
		set_desc(&d[H_SCRATCH + 1], fb_mem_gpa(&h.mem, &d[101]), 1, VRING_DESC_F_WRITE, 0);
		memset(&d[100], 0, 32);
		fb_vq_push_head(&h.vq, H_SCRATCH);
		fb_vq_kick(&h.vq);
		usleep(H_CASE_WAIT_MS * 1000);
		if (__atomic_load_n(&h.vq.vr.used->idx, __ATOMIC_ACQUIRE) != idx0)
			rc = failf("queue restarted on a used ring cut by the new memory table");
	}
	hctx_close(&h);
	return rc;
}

/*
 * A memory-table region 1 MiB longer than the memfd behind it (access past
 * the file's end raises SIGBUS): SET_MEM_TABLE must be refused, and no
 * queue may start on it.
 */
static int region_longer_than_file(const struct fb_opts *o, bool used_past_file)
{
	struct hctx h;
	int rc = 0;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	vu_set_u64(&h.dev.conn, VHU_SET_FEATURES, h.dev.conn.features);
	if (set_mem_size(&h, h.mem.size + (1u << 20)) == 0 && vu_sync(&h.dev.conn) == 0)
		rc = failf("SET_MEM_TABLE with a region longer than its file was accepted");
	if (rc == 0 && !vu_peer_closed(&h.dev.conn)) {
		/* NACKed: the rings and a request must still not be served */
		if (used_past_file) /* only the frontend's address: it never touches it */
			h.vq.vr.used = (struct vring_used *)(h.mem.base + h.mem.size + 4096);
		fb_dev_setup_vq(&h.dev, &h.vq);
		vu_set_state(&h.dev.conn, VHU_SET_VRING_ENABLE, 0, 1);
		if (used_past_file)
			vu_sync(&h.dev.conn);
		else
			rc = expect_not_served(&h, "memory table");
	}
	hctx_close(&h);
	return rc;
}

static int c_mem_region_longer_than_file(const struct fb_opts *o)
{
	return region_longer_than_file(o, false);
}

/*
 * The same too-long region, with the used ring placed in its part past the
 * file's end.  rte_vhost itself reads used->idx when it translates the ring
 * (SET_VRING_KICK), before any femud hook: a memory table whose file is
 * short must be refused before rte_vhost maps it, or the backend dies of
 * SIGBUS.  Every later message must then be refused or ignored.
 */
static int c_mem_ring_past_file_end(const struct fb_opts *o)
{
	return region_longer_than_file(o, true);
}

/*
 * The frontend shrinks its memfd while the queue runs (ftruncate after the
 * backend checked and mapped it) to cut bytes off the end of the file, then
 * posts a read: the backend's first touch of the cut pages (the ring
 * when cut is 0, the data buffer otherwise) raises SIGBUS.  It must
 * survive; the request need not complete.
 */
static int memfd_shrunk(const struct fb_opts *o, bool keep_rings)
{
	struct hctx h;
	uint64_t cut;
	uint32_t id;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	cut = keep_rings ? (uint64_t)((uint8_t *)fb_vq_slot_data(&h.vq, 0) - h.mem.base) : 0;
	if (ftruncate(h.mem.fd, (off_t)cut) != 0) {
		hctx_close(&h);
		return failf("ftruncate: %s", strerror(errno));
	}
	if (keep_rings) { /* rings, header and status stay inside the file */
		fb_vq_submit(&h.vq, 0, VIRTIO_BLK_T_IN, 0, 4096);
		fb_vq_kick(&h.vq);
		wait_used(&h, H_CASE_WAIT_MS, &id); /* completed or not: either is fine */
	} else {
		uint64_t one = 1; /* a bare kick: our own mapping of the rings is gone too */

		if (write(h.vq.kick_fd, &one, sizeof(one)) != sizeof(one))
			failf("kick: %s", strerror(errno));
		usleep(H_CASE_WAIT_MS * 1000);
	}
	hctx_close(&h);
	return 0;
}

static int c_memfd_shrunk_under_data_buffer(const struct fb_opts *o)
{
	return memfd_shrunk(o, true);
}

static int c_memfd_truncated_under_running_rings(const struct fb_opts *o)
{
	return memfd_shrunk(o, false);
}

/* A memfd of len bytes (for fds sent with messages); -1 on error. */
static int memfd_of(const char *name, uint64_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd >= 0 && ftruncate(fd, (off_t)len) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * A connection with queue 0's vring allocated (SET_VRING_NUM), memory
 * shared and INFLIGHT_SHMFD negotiated.  1: ready, 0: the backend does not
 * offer inflight tracking, -1: error.
 */
static int inflight_open(struct hctx *h, const struct fb_opts *o)
{
	uint64_t pf = 1ull << VHU_PF_INFLIGHT_SHMFD;

	if (hctx_open(h, o, false) < 0)
		return -1;
	if (!(h->dev.proto_offered & pf)) {
		hctx_close(h);
		return 0;
	}
	vu_set_u64(&h->dev.conn, VHU_SET_FEATURES, h->dev.conn.features);
	vu_set_u64(&h->dev.conn, VHU_SET_PROTOCOL_FEATURES, h->dev.conn.proto_features | pf);
	h->dev.conn.proto_features |= pf;
	fb_dev_set_mem_table(&h->dev, &h->mem);
	vu_set_state(&h->dev.conn, VHU_SET_VRING_NUM, 0, H_QSIZE);
	return 1;
}

/*
 * SET_INFLIGHT_FD (in) with a memfd of file_len bytes whose inflight header
 * says version 1 (so that rte_vhost walks its descriptor entries at
 * SET_VRING_KICK).  It must be refused; the queue is then set up anyway and
 * must not crash the backend.
 */
static int inflight_refused(const struct fb_opts *o, struct vhu_inflight in, uint64_t file_len)
{
	const uint16_t version = 1;
	struct hctx h;
	int fd, rc = inflight_open(&h, o);

	if (rc <= 0)
		return rc;
	fd = memfd_of("inflight", file_len);
	if (fd < 0 || pwrite(fd, &version, sizeof(version), 8) != sizeof(version)) {
		hctx_close(&h);
		return failf("inflight memfd: %s", strerror(errno));
	}
	rc = expect_refused(&h, VHU_SET_INFLIGHT_FD, &in, sizeof(in), &fd, 1);
	close(fd);
	if (!vu_peer_closed(&h.dev.conn)) {
		fb_dev_setup_vq(&h.dev, &h.vq);
		vu_set_state(&h.dev.conn, VHU_SET_VRING_ENABLE, 0, 1);
		vu_sync(&h.dev.conn);
	}
	hctx_close(&h);
	return rc;
}

/* An inflight region longer than its file: rte_vhost reads past the end (SIGBUS). */
static int c_inflight_region_longer_than_file(const struct fb_opts *o)
{
	struct vhu_inflight in = {
	    .mmap_size = 1 << 20, .mmap_offset = 0, .num_queues = 1, .queue_size = 1024};

	return inflight_refused(o, in, 4096);
}

/* More inflight queues than the device has (rte_vhost indexes its vring array with it). */
static int c_inflight_queues_beyond_device(const struct fb_opts *o)
{
	struct vhu_inflight in = {.mmap_offset = 0, .num_queues = 300, .queue_size = 128};

	in.mmap_size = 300ull * 2112; /* 300 queue areas of 16 + 16 * 128 bytes, 64-aligned */
	return inflight_refused(o, in, in.mmap_size);
}

/* An inflight region too small for the queues it names. */
static int c_inflight_region_too_small(const struct fb_opts *o)
{
	struct vhu_inflight in = {
	    .mmap_size = 4096, .mmap_offset = 0, .num_queues = 1, .queue_size = 1024};

	return inflight_refused(o, in, 4096);
}

/*
 * An inflight region accepted for queues of 16 entries, then a queue of
 * 128: tracking its requests would write past the queue's area.  The queue
 * must not serve.
 */
static int c_inflight_queue_size_below_vring(const struct fb_opts *o)
{
	struct vhu_inflight in = {
	    .mmap_size = 4096, .mmap_offset = 0, .num_queues = 1, .queue_size = 16};
	struct hctx h;
	int fd, rc = inflight_open(&h, o);

	if (rc <= 0)
		return rc;
	fd = memfd_of("inflight", 4096);
	rc = vu_set(&h.dev.conn, VHU_SET_INFLIGHT_FD, &in, sizeof(in), &fd, 1);
	close(fd);
	if (rc == 0 && fb_dev_setup_vq(&h.dev, &h.vq) == 0 &&
	    vu_set_state(&h.dev.conn, VHU_SET_VRING_ENABLE, 0, 1) == 0 && vu_sync(&h.dev.conn) == 0)
		rc = expect_not_served(&h, "inflight area");
	else
		rc = 0; /* refused somewhere: fine */
	hctx_close(&h);
	return rc;
}

/* ---- a backend restarted under a running driver ---- */

/*
 * The inflight region of one split queue (vhost-user spec, "Inflight I/O
 * tracking": QueueRegionSplit and DescStateSplit).
 */
struct h_inflight_desc {
	uint8_t inflight;
	uint8_t padding[5];
	uint16_t next;
	uint64_t counter;
};
struct h_inflight_queue {
	uint64_t features;
	uint16_t version;
	uint16_t desc_num;
	uint16_t last_batch_head;
	uint16_t used_idx;
	struct h_inflight_desc desc[];
};
_Static_assert(sizeof(struct h_inflight_desc) == 16, "DescStateSplit");
_Static_assert(sizeof(struct h_inflight_queue) == 16, "QueueRegionSplit header");

#define H_RESTART_USED 13143u /* used index the previous backend reached */
#define H_RESTART_UNSEEN 9u   /* used entries it published without a call */

/* An inflight region (a memfd) of queue 0 with slots 0..n-1 marked in flight. */
static int restart_inflight_fd(unsigned n, struct vhu_inflight *in)
{
	struct h_inflight_queue *iq;
	int fd = memfd_of("inflight", 4096);

	*in = (struct vhu_inflight){
	    .mmap_size = 4096, .mmap_offset = 0, .num_queues = 1, .queue_size = H_QSIZE};
	if (fd < 0)
		return -1;
	iq = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (iq == MAP_FAILED) {
		close(fd);
		return -1;
	}
	iq->version = 1;
	iq->desc_num = H_QSIZE;
	iq->used_idx = H_RESTART_USED; /* as used->idx: the last completion was cleared */
	for (unsigned s = 0; s < n; s++) {
		iq->desc[s].inflight = 1;
		iq->desc[s].counter = s + 1; /* taken in slot order */
	}
	munmap(iq, 4096);
	return fd;
}

/*
 * The ring as a backend killed mid-run leaves it: it published used entries
 * up to H_RESTART_USED but died before its call (the driver still waits
 * for an interrupt at H_RESTART_USED - H_RESTART_UNSEEN), and had taken n
 * more requests (4 KiB reads in slots 0..n-1) that it never completed.
 */
static void restart_ring(struct hctx *h, unsigned n)
{
	struct fb_vq *vq = &h->vq;
	uint16_t seen = (uint16_t)(H_RESTART_USED - H_RESTART_UNSEEN);

	vq->avail_idx = (uint16_t)H_RESTART_USED;
	for (unsigned s = 0; s < n; s++)
		fb_vq_submit(vq, s, VIRTIO_BLK_T_IN, 8 * s, 4096);
	for (uint16_t i = seen; i != (uint16_t)H_RESTART_USED; i++)
		vq->vr.used->ring[i & vq->mask].id = H_SLOTS - 1; /* a request done before */
	vq->vr.avail->idx = vq->avail_idx;
	vq->kicked_idx = vq->avail_idx;
	vq->vr.used->idx = (uint16_t)H_RESTART_USED;
	vq->last_used = seen;
	if (vq->event_idx)
		vring_used_event(&vq->vr) = seen;
	else
		vq->vr.avail->flags = 0; /* interrupts wanted */
}

/*
 * A frontend reconnects to a restarted backend as QEMU does (inflight region
 * handed back, SET_VRING_BASE at the used index, queue enabled) with the
 * ring restart_ring() leaves.  The backend must replay the n requests from
 * the inflight region (all complete OK, used index H_RESTART_USED + n) and
 * send a call: without one the driver never looks at the used ring again
 * (with EVENT_IDX, its used_event lies before the entries the previous
 * backend published, so need_event() against the restart index says no).
 */
static int restarted_backend(const struct fb_opts *o, unsigned n)
{
	uint64_t end = fb_now_ns() + (uint64_t)o->timeout_ms * 1000000ull;
	uint16_t want = (uint16_t)(H_RESTART_USED + n), avail;
	struct vhu_inflight in;
	struct hctx h;
	int fd, rc = inflight_open(&h, o);

	if (rc <= 0)
		return rc;
	fd = restart_inflight_fd(n, &in);
	if (fd < 0) {
		hctx_close(&h);
		return failf("inflight memfd: %s", strerror(errno));
	}
	rc = vu_set(&h.dev.conn, VHU_SET_INFLIGHT_FD, &in, sizeof(in), &fd, 1);
	close(fd);
	restart_ring(&h, n);
	avail = h.vq.avail_idx;
	h.vq.avail_idx = (uint16_t)H_RESTART_USED; /* SET_VRING_BASE: QEMU's restored index */
	if (rc == 0)
		rc = fb_dev_setup_vq(&h.dev, &h.vq);
	h.vq.avail_idx = avail;
	if (rc == 0)
		rc = vu_set_state(&h.dev.conn, VHU_SET_VRING_ENABLE, 0, 1);
	if (rc == 0)
		rc = vu_sync(&h.dev.conn);
	if (rc < 0) {
		hctx_close(&h);
		return failf("reconnect with the inflight region: %s", h.dev.conn.err);
	}
	while (__atomic_load_n(&h.vq.vr.used->idx, __ATOMIC_ACQUIRE) != want && fb_now_ns() < end)
		usleep(1000);
	rc = 0;
	if (__atomic_load_n(&h.vq.vr.used->idx, __ATOMIC_ACQUIRE) != want)
		rc = failf("used index %u after the restart, %u expected (%u requests replayed)",
			   __atomic_load_n(&h.vq.vr.used->idx, __ATOMIC_ACQUIRE), want, n);
	for (unsigned s = 0; rc == 0 && s < n; s++)
		if (h.vq.status[s] != VIRTIO_BLK_S_OK)
			rc = failf("replayed request in slot %u: status %u", s, h.vq.status[s]);
	if (rc == 0 && !call_within(&h, H_CASE_WAIT_MS))
		rc = failf("no call within %u ms of the restart: %u used entries (%u replayed) "
			   "published, the driver was last told of %u",
			   H_CASE_WAIT_MS, H_RESTART_UNSEEN + n, n,
			   H_RESTART_USED - H_RESTART_UNSEEN);
	hctx_close(&h);
	return rc;
}

/* 7 requests in flight at the restart (guest_reconnect's hang: replayed, never told). */
static int c_restart_replay_after_lost_call(const struct fb_opts *o)
{
	return restarted_backend(o, 7);
}

/* Nothing in flight: the previous backend's last completions were never told. */
static int c_restart_after_lost_call(const struct fb_opts *o)
{
	return restarted_backend(o, 0);
}

/*
 * The inflight region's memfd shrinks (ftruncate to 0) after the backend
 * mapped it, while the queue runs with inflight tracking: the backend's
 * tracking of the next request touches a page past the file's end
 * (SIGBUS).  The backend must survive it (this connection may be closed).
 */
static int c_inflight_memfd_shrunk(const struct fb_opts *o)
{
	struct vhu_inflight in = {
	    .mmap_size = 4096, .mmap_offset = 0, .num_queues = 1, .queue_size = H_QSIZE};
	struct hctx h;
	uint32_t id;
	int fd, rc = inflight_open(&h, o);

	if (rc <= 0)
		return rc;
	fd = memfd_of("inflight", 4096);
	rc = fd < 0 ? failf("inflight memfd: %s", strerror(errno))
		    : vu_set(&h.dev.conn, VHU_SET_INFLIGHT_FD, &in, sizeof(in), &fd, 1);
	if (rc == 0)
		rc = fb_dev_setup_vq(&h.dev, &h.vq);
	if (rc == 0)
		rc = vu_set_state(&h.dev.conn, VHU_SET_VRING_ENABLE, 0, 1);
	if (rc == 0)
		rc = vu_sync(&h.dev.conn) < 0 ? failf("sync: %s", h.dev.conn.err) : serve_check(&h);
	if (rc == 0 && ftruncate(fd, 0) != 0)
		rc = failf("ftruncate: %s", strerror(errno));
	if (rc == 0) {
		fb_vq_submit(&h.vq, 0, VIRTIO_BLK_T_IN, 0, 4096);
		fb_vq_kick(&h.vq);
		wait_used(&h, H_CASE_WAIT_MS, &id); /* completed or not: either is fine */
		vu_sync(&h.dev.conn);		    /* answered, or the connection closed */
	}
	if (fd >= 0)
		close(fd);
	hctx_close(&h);
	return rc;
}

/*
 * Start h's queue with fd as its call fd instead of the eventfd h made;
 * returns that eventfd, to be put back before hctx_close().
 */
static int start_with_call_fd(struct hctx *h, int fd)
{
	int evfd = h->vq.call_fd;

	h->vq.call_fd = fd;
	vu_set_u64(&h->dev.conn, VHU_SET_FEATURES, h->dev.conn.features);
	fb_dev_set_mem_table(&h->dev, &h->mem);
	fb_dev_setup_vq(&h->dev, &h->vq);
	vu_set_state(&h->dev.conn, VHU_SET_VRING_ENABLE, 0, 1);
	vu_sync(&h->dev.conn);
	return evfd;
}

/* Four 4 KiB reads, each wanting a call, waited for ms each: how many completed OK. */
static unsigned reads_wanting_calls(struct hctx *h, unsigned ms)
{
	unsigned served = 0;
	uint32_t id;

	for (uint16_t i = 0; i < 4; i++) {
		want_call(h);
		fb_vq_submit(&h->vq, i, VIRTIO_BLK_T_IN, 8 * i, 4096);
		fb_vq_kick(&h->vq);
		if (wait_used(h, ms, &id) == 1 && h->vq.status[i] == VIRTIO_BLK_S_OK)
			served++;
	}
	return served;
}

/*
 * A pipe that is full as the queue's call fd (vhost-user wants an eventfd):
 * a backend that writes its calls into it blocks its poller for good, and
 * every queue on that poller with it (the liveness check after the case
 * finds that).  The backend must refuse the fd (the queue does not start)
 * or never block on it.
 */
static int c_call_fd_full_pipe(const struct fb_opts *o)
{
	struct hctx h;
	int p[2], evfd, fl;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	if (pipe(p) != 0) {
		hctx_close(&h);
		return failf("pipe: %s", strerror(errno));
	}
	fl = fcntl(p[1], F_GETFL);
	fcntl(p[1], F_SETFL, fl | O_NONBLOCK);
	while (write(p[1], &h, 1) == 1)
		;
	fcntl(p[1], F_SETFL, fl); /* blocking again, as the backend gets it */
	evfd = start_with_call_fd(&h, p[1]);
	reads_wanting_calls(&h, H_CASE_WAIT_MS); /* served or refused: either is fine */
	h.vq.call_fd = evfd;
	hctx_close(&h);
	close(p[0]);
	close(p[1]);
	return 0;
}

/*
 * A blocking eventfd whose counter the frontend filled to its maximum
 * (0xfffffffffffffffe) as the queue's call fd.  It is an eventfd, as
 * vhost-user wants, but a write of 1 into it blocks until someone reads
 * it: a backend that writes its calls there stops its poller for good (and
 * every queue on it, and a control thread that waits for it to take the
 * next queue).  The backend must serve the requests without blocking (the
 * calls are lost: the frontend's own doing); the liveness check after the
 * case finds a blocked poller.
 */
static int c_call_fd_counter_full(const struct fb_opts *o)
{
	const uint64_t max = 0xfffffffffffffffeull;
	struct hctx h;
	int fd, evfd;
	unsigned served;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	fd = eventfd(0, EFD_CLOEXEC); /* blocking */
	if (fd < 0 || write(fd, &max, sizeof(max)) != sizeof(max)) {
		if (fd >= 0)
			close(fd);
		hctx_close(&h);
		return failf("eventfd: %s", strerror(errno));
	}
	evfd = start_with_call_fd(&h, fd);
	served = reads_wanting_calls(&h, o->timeout_ms);
	h.vq.call_fd = evfd;
	hctx_close(&h);
	close(fd);
	if (served != 4)
		return failf("%u of 4 correct reads served with the call eventfd's counter full",
			     served);
	return 0;
}

/*
 * The call eventfd is a plain blocking one when the queue starts (a
 * backend may make it non-blocking: the flag belongs to the open file both
 * sides share).  Once four reads were served, the frontend makes it
 * blocking again and fills its counter (0xfffffffffffffffe), then asks for
 * more reads and calls: a backend that writes its next call there blocks
 * until someone reads the eventfd, and every queue it serves from that
 * thread with it.  It may stop this queue; the liveness check after the
 * case (a new connection, on the same poller when the backend has one)
 * finds a backend that stays blocked.
 */
static int c_call_fd_blocking_after_start(const struct fb_opts *o)
{
	const uint64_t max = 0xfffffffffffffffeull;
	struct hctx h;
	uint64_t v;
	int fd, evfd, fl, rc = 0;
	unsigned served;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	fd = eventfd(0, EFD_CLOEXEC); /* blocking */
	if (fd < 0) {
		hctx_close(&h);
		return failf("eventfd: %s", strerror(errno));
	}
	evfd = start_with_call_fd(&h, fd);
	served = reads_wanting_calls(&h, o->timeout_ms);
	if (served != 4)
		rc = failf("%u of 4 correct reads served before the call fd was made blocking",
			   served);
	/* drain what the backend wrote, fill the counter, blocking again */
	fl = fcntl(fd, F_GETFL);
	if (rc == 0 && (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
			(read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN) ||
			write(fd, &max, sizeof(max)) != sizeof(max) ||
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0))
		rc = failf("filling the call eventfd: %s", strerror(errno));
	if (rc == 0)
		reads_wanting_calls(&h, H_CASE_WAIT_MS); /* served or the queue stopped: either */
	h.vq.call_fd = evfd;
	hctx_close(&h);
	close(fd);
	return rc;
}

/*
 * A frontend that sends messages wanting a reply (GET_FEATURES) and never
 * reads the replies: once its socket's buffer is full, a backend that
 * writes replies with a blocking send waits for this frontend, and when one
 * thread serves every connection (DPDK's rte_vhost), no other frontend of
 * any device is answered.  The backend may close this connection; a second
 * one opened while this one still holds its unread replies must be served.
 */
static int c_replies_never_read(const struct fb_opts *o)
{
	const uint32_t msg[3] = {VHU_GET_FEATURES, VHU_FLAG_VERSION, 0};
	uint64_t end = fb_now_ns() + 2000000000ull;
	unsigned sent = 0;
	struct hctx h;
	int fd, fl, rc;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	fd = h.dev.conn.fd;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
		hctx_close(&h);
		return failf("O_NONBLOCK: %s", strerror(errno));
	}
	/* until the backend stops reading them (its replies fill our socket) or 2 s */
	while (sent < 200000 && fb_now_ns() < end) {
		if (send(fd, msg, sizeof(msg), MSG_NOSIGNAL) == (ssize_t)sizeof(msg))
			sent++;
		else if (errno == EAGAIN)
			usleep(1000);
		else
			break; /* closed by the backend: allowed */
	}
	rc = alive(o);
	if (rc != 0)
		fail_in("after %u unread GET_FEATURES on a connection still open", sent);
	hctx_close(&h);
	return rc;
}

/*
 * A frontend sends a message header announcing an 8-byte payload
 * (SET_FEATURES) and then neither the payload nor anything else, with the
 * connection left open.  A backend that reads the payload with a blocking
 * read waits for it for good, and when one thread serves every connection
 * (DPDK's rte_vhost), no other frontend of any device is answered.  A
 * second connection opened meanwhile must be served.
 */
static int c_payload_never_sent(const struct fb_opts *o)
{
	const uint32_t hdr[3] = {VHU_SET_FEATURES, VHU_FLAG_VERSION, 8};
	struct hctx h;
	int rc;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	if (send(h.dev.conn.fd, hdr, sizeof(hdr), MSG_NOSIGNAL) != (ssize_t)sizeof(hdr)) {
		hctx_close(&h);
		return failf("send: %s", strerror(errno));
	}
	usleep(100000); /* the backend is in its read of the payload by now */
	rc = alive(o);
	if (rc != 0)
		fail_in("a header without its payload on a connection still open");
	hctx_close(&h);
	return rc;
}

/* Open fds of the backend process on the other end of sock (same host); -1: unknown. */
static int backend_fd_count(int sock)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || cr.pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)cr.pid);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * Messages the backend answers itself (GET_QUEUE_NUM, GET_CONFIG,
 * SET_CONFIG), each sent with 4 fds it has no use for: it must close them.
 * Counted in /proc/PID/fd of the backend (skipped when that is not
 * readable, e.g. another user's backend).
 */
static int c_fds_of_answered_messages_closed(const struct fb_opts *o)
{
	const unsigned rounds = 40, nfds = 4;
	struct vhu_config cfg = {.offset = 0, .size = 8};
	struct vhu_msg r;
	struct hctx h;
	int fds[4], before, after, rc = 0;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	before = backend_fd_count(h.dev.conn.fd);
	fds[0] = memfd_of("leak", 4096);
	for (unsigned i = 1; i < nfds; i++)
		fds[i] = dup(fds[0]);
	for (unsigned i = 0; rc == 0 && i < rounds; i++) {
		if (vu_send(&h.dev.conn, VHU_GET_QUEUE_NUM, 0, NULL, 0, fds, nfds) < 0 ||
		    vu_recv(&h.dev.conn, VHU_GET_QUEUE_NUM, &r) < 0 ||
		    vu_send(&h.dev.conn, VHU_GET_CONFIG, 0, &cfg, 12 + 8, fds, nfds) < 0 ||
		    vu_recv(&h.dev.conn, VHU_GET_CONFIG, &r) < 0 ||
		    vu_set(&h.dev.conn, VHU_SET_CONFIG, &cfg, 12 + 8, fds, nfds) < 0)
			rc = failf("message %u with fds: %s", i, h.dev.conn.err);
	}
	if (rc == 0 && vu_sync(&h.dev.conn) < 0)
		rc = failf("sync: %s", h.dev.conn.err);
	after = backend_fd_count(h.dev.conn.fd);
	if (rc == 0 && before >= 0 && after >= 0 && after >= before + (int)rounds)
		rc = failf("backend holds %d fds after %u messages with %u fds each (%d before)",
			   after, 3 * rounds, nfds, before);
	for (unsigned i = 0; i < nfds; i++)
		close(fds[i]);
	hctx_close(&h);
	return rc;
}

/*
 * A running queue's rings move (SET_VRING_ADDR while it runs, as QEMU does
 * when it turns dirty logging on): requests on the new rings must be
 * served, at the same index, and the old used ring left alone.
 */
static int c_vring_addr_moved_on_running_queue(const struct fb_opts *o)
{
	struct vring old;
	struct hctx h;
	uint16_t old_used;
	void *ring;
	int rc;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	ring = fb_mem_alloc(&h.mem, vring_size(H_QSIZE, 4096), 4096);
	if (ring == NULL) {
		hctx_close(&h);
		return failf("no room for a second ring");
	}
	old = h.vq.vr;
	vring_init(&h.vq.vr, H_QSIZE, ring, 4096);
	memcpy(h.vq.vr.desc, old.desc, 16 * H_QSIZE);
	h.vq.vr.avail->flags = old.avail->flags;
	h.vq.vr.avail->idx = old.avail->idx;
	h.vq.vr.used->idx = old_used = old.used->idx;
	{
		struct vhu_vring_addr a = {.index = 0,
					   .desc = (uint64_t)(uintptr_t)h.vq.vr.desc,
					   .used = (uint64_t)(uintptr_t)h.vq.vr.used,
					   .avail = (uint64_t)(uintptr_t)h.vq.vr.avail};

		rc = vu_set(&h.dev.conn, VHU_SET_VRING_ADDR, &a, sizeof(a), NULL, 0);
	}
	if (rc < 0)
		rc = failf("SET_VRING_ADDR on a running queue: %s", h.dev.conn.err);
	else
		rc = serve_check(&h);
	if (rc == 0 && old.used->idx != old_used)
		rc = failf("the old used ring was written after the rings moved");
	hctx_close(&h);
	return rc;
}

/* GET_CONFIG in one framing; the reply must keep it and carry the window asked for. */
static int config_framing(const struct fb_opts *o, bool full_payload)
{
	uint8_t want[VHU_MAX_CONFIG], got[VHU_MAX_CONFIG];
	struct hctx h;
	int n, m, rc = 0;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	n = vu_get_config(&h.dev.conn, want, sizeof(struct virtio_blk_config));
	m = vu_get_config_framed(&h.dev.conn, got, 0, 20, full_payload);
	if (n < 20)
		rc = failf("GET_CONFIG (QEMU framing) answered %d bytes: %s", n, h.dev.conn.err);
	else if (m != 20)
		rc = failf("GET_CONFIG of 20 bytes framed with %s: %s",
			   full_payload ? "the full 256-byte payload" : "12 + 20 bytes",
			   m < 0 ? h.dev.conn.err : "wrong byte count");
	else if (memcmp(want, got, 20) != 0)
		rc = failf("the 20 bytes differ between the two framings");
	hctx_close(&h);
	return rc;
}

static int c_get_config_qemu_framing(const struct fb_opts *o)
{
	return config_framing(o, false);
}

static int c_get_config_spdk_framing(const struct fb_opts *o)
{
	return config_framing(o, true);
}

/* A GET_CONFIG asking for more bytes than its message carries is refused. */
static int c_get_config_window_past_payload(const struct fb_opts *o)
{
	struct vhu_config cfg = {.offset = 0, .size = 60};
	struct hctx h;
	int rc;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	rc = expect_refused(&h, VHU_GET_CONFIG, &cfg, 12 + 8, NULL, 0);
	hctx_close(&h);
	return rc;
}

/* Rings set up before any memory table, then kicked. */
static int c_vring_before_mem_table(const struct fb_opts *o)
{
	struct hctx h;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	vu_set_u64(&h.dev.conn, VHU_SET_FEATURES, h.dev.conn.features);
	fb_dev_setup_vq(&h.dev, &h.vq);
	vu_set_state(&h.dev.conn, VHU_SET_VRING_ENABLE, 0, 1);
	fb_vq_submit(&h.vq, 0, VIRTIO_BLK_T_IN, 0, 4096);
	fb_vq_kick(&h.vq);
	vu_sync(&h.dev.conn);
	hctx_close(&h);
	return 0;
}

/* Ring addresses that are not in the memory table, then kicked. */
static int c_vring_addr_unmapped(const struct fb_opts *o)
{
	struct vhu_vring_addr a = {.index = 0, .desc = 0x1000, .used = 0x2000, .avail = 0x3000};
	struct hctx h;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	vu_set_u64(&h.dev.conn, VHU_SET_FEATURES, h.dev.conn.features);
	fb_dev_set_mem_table(&h.dev, &h.mem);
	vu_set_state(&h.dev.conn, VHU_SET_VRING_NUM, 0, H_QSIZE);
	vu_set_state(&h.dev.conn, VHU_SET_VRING_BASE, 0, 0);
	vu_set(&h.dev.conn, VHU_SET_VRING_ADDR, &a, sizeof(a), NULL, 0);
	vu_set_vring_fd(&h.dev.conn, VHU_SET_VRING_KICK, 0, h.vq.kick_fd);
	vu_set_vring_fd(&h.dev.conn, VHU_SET_VRING_CALL, 0, h.vq.call_fd);
	vu_set_state(&h.dev.conn, VHU_SET_VRING_ENABLE, 0, 1);
	fb_vq_kick(&h.vq);
	vu_sync(&h.dev.conn);
	hctx_close(&h);
	return 0;
}

/* A header that announces more payload than it sends, then a hang-up. */
static int c_truncated_payload(const struct fb_opts *o)
{
	struct hctx h;
	uint32_t m[4] = {VHU_SET_VRING_NUM, VHU_FLAG_VERSION, 0x100000, 0};

	if (hctx_open(&h, o, false) < 0)
		return -1;
	vu_send_raw(&h.dev.conn, m, sizeof(m), NULL, 0);
	hctx_close(&h);
	return 0;
}

static int c_truncated_header(const struct fb_opts *o)
{
	struct hctx h;
	uint8_t m[5] = {VHU_SET_OWNER, 0, 0, 0, 1};

	if (hctx_open(&h, o, false) < 0)
		return -1;
	vu_send_raw(&h.dev.conn, m, sizeof(m), NULL, 0);
	hctx_close(&h);
	return 0;
}

static int c_oversized_message(const struct fb_opts *o)
{
	static uint8_t big[65536];
	struct hctx h;
	uint32_t *m = (uint32_t *)big;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	m[0] = VHU_SET_MEM_TABLE;
	m[1] = VHU_FLAG_VERSION;
	m[2] = sizeof(big) - 12;
	vu_send_raw(&h.dev.conn, big, sizeof(big), NULL, 0);
	vu_sync(&h.dev.conn);
	hctx_close(&h);
	return 0;
}

static int c_bad_version_flags(const struct fb_opts *o)
{
	struct hctx h;
	uint32_t m[3] = {VHU_GET_FEATURES, 0x7, 0};

	if (hctx_open(&h, o, false) < 0)
		return -1;
	vu_send_raw(&h.dev.conn, m, sizeof(m), NULL, 0);
	vu_sync(&h.dev.conn);
	hctx_close(&h);
	return 0;
}

static int c_fd_flood(const struct fb_opts *o)
{
	int fds[VHU_MAX_FDS];
	int rc;

	for (int i = 0; i < VHU_MAX_FDS; i++)
		fds[i] = STDERR_FILENO;
	rc = send_then_close(o, VHU_SET_OWNER, NULL, 0, fds, VHU_MAX_FDS);
	return rc;
}

/* The memory table is replaced by a smaller one while the queue runs. */
static int c_mem_table_shrunk_while_running(const struct fb_opts *o)
{
	struct hctx h;
	struct fb_mem small;
	int rc;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	if (fb_mem_create(&small, 1 << 16, false) < 0) {
		hctx_close(&h);
		return failf("memfd");
	}
	fb_dev_set_mem_table(&h.dev, &small);
	fb_vq_submit(&h.vq, 0, VIRTIO_BLK_T_IN, 0, 4096);
	fb_vq_kick(&h.vq);
	rc = expect_no_success(&h, false);
	if (rc < 0 && h.vq.status[0] == VIRTIO_BLK_S_OK)
		rc = 0; /* the old rings stayed valid for the backend: acceptable */
	hctx_close(&h);
	fb_mem_destroy(&small);
	return rc;
}

/* ---- packed virtqueues (--hostile --packed) ---- */

/* Guest addresses of slot 0's header, data and status byte. */
static uint64_t h_hdr(struct hctx *h)
{
	return fb_mem_gpa(&h->mem, &h->vq.hdr[0]);
}
static uint64_t h_data(struct hctx *h)
{
	return fb_mem_gpa(&h->mem, fb_vq_slot_data(&h->vq, 0));
}
static uint64_t h_st(struct hctx *h)
{
	return fb_mem_gpa(&h->mem, &h->vq.status[0]);
}

/* Slot 0's header (a read of sector 0) and a status byte not yet written. */
static void pk_hdr_read(struct hctx *h)
{
	h->vq.hdr[0].type = VIRTIO_BLK_T_IN;
	h->vq.hdr[0].ioprio = 0;
	h->vq.hdr[0].sector = 0;
	h->vq.status[0] = FB_STATUS_UNSET;
}

/* A valid 4 KiB read of sector 0 as 3 descriptors with buffer id. */
static void pk_read_desc(struct hctx *h, struct pd *d, uint16_t id)
{
	pk_hdr_read(h);
	d[0] = (struct pd){h_hdr(h), 16, id, VRING_DESC_F_NEXT, false};
	d[1] = (struct pd){h_data(h), 4096, id, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, false};
	d[2] = (struct pd){h_st(h), 1, id, VRING_DESC_F_WRITE, false};
}

/* Post chain d[0..n) on a fresh started packed queue and expect no success. */
static int pk_case(const struct fb_opts *o,
		   void (*build)(struct hctx *h, struct pd *d, unsigned *n))
{
	struct pd d[H_QSIZE + 1];
	struct hctx h;
	unsigned n = 0;
	int rc;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	build(&h, d, &n);
	if (n)
		pk_post(&h, d, n);
	rc = expect_no_success(&h, false);
	hctx_close(&h);
	return rc;
}

/* Every descriptor of the ring in one chain, the last one with NEXT too. */
static void p_chain_longer_than_ring(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_hdr_read(h);
	d[0] = (struct pd){h_hdr(h), 16, 0, VRING_DESC_F_NEXT, false};
	for (unsigned i = 1; i < H_QSIZE; i++)
		d[i] =
		    (struct pd){h_data(h), 512, 0, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, false};
	*n = H_QSIZE;
}

/* A valid read whose buffer id is beyond the queue size. */
static void p_id_beyond_queue(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_read_desc(h, d, H_QSIZE + 7);
	*n = 3;
}

static void p_id_max(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_read_desc(h, d, 0xffff);
	*n = 3;
}

/* The head looks used (AVAIL == USED == the wrap counter): not available, never served. */
static void p_head_flags_used(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_read_desc(h, d, 0);
	d[0].flags = VRING_DESC_F_NEXT | FB_PK_AVAIL | FB_PK_USED;
	d[0].raw = true;
	*n = 3;
}

/* The head is available only in the next pass (wrap counter 0 while the ring is on 1). */
static void p_head_wrap_next_pass(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_read_desc(h, d, 0);
	d[0].flags = VRING_DESC_F_NEXT | FB_PK_USED;
	d[0].raw = true;
	*n = 3;
}

/* AVAIL and USED both clear on the first pass: neither available nor used. */
static void p_head_flags_none(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_read_desc(h, d, 0);
	d[0].flags = VRING_DESC_F_NEXT;
	d[0].raw = true;
	*n = 3;
}

/* A valid chain made available 6 positions past the backend's next one. */
static void p_avail_skips_positions(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_read_desc(h, d, 0);
	h->vq.avail_idx = (uint16_t)(h->vq.avail_idx + 6);
	*n = 3;
}

/* An indirect descriptor in the ring (table of n entries, see indirect()). */
static void pk_indirect(struct hctx *h, struct pd *d, unsigned *n, unsigned entries,
			uint64_t table_gpa, uint32_t table_len)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)h->ind;

	pk_hdr_read(h);
	memset(t, 0, sizeof(*t) * entries);
	t[0] = (struct vring_packed_desc){h_hdr(h), 16, 0, 0};
	for (unsigned i = 1; i + 1 < entries; i++)
		t[i] = (struct vring_packed_desc){h_data(h), 512, 0, VRING_DESC_F_WRITE};
	t[entries - 1] = (struct vring_packed_desc){h_st(h), 1, 0, VRING_DESC_F_WRITE};
	d[0] = (struct pd){table_gpa ? table_gpa : fb_mem_gpa(&h->mem, t),
			   table_len ? table_len : entries * 16u, 0, VRING_DESC_F_INDIRECT, false};
	*n = 1;
}

static void p_ind_nested(struct hctx *h, struct pd *d, unsigned *n)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)h->ind;

	pk_indirect(h, d, n, 3, 0, 0);
	t[1].flags |= VRING_DESC_F_INDIRECT;
}
static void p_ind_longer_than_ring(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_indirect(h, d, n, H_QSIZE + 2, 0, 0);
}
static void p_ind_len_not_16(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_indirect(h, d, n, 3, 0, 40);
}
static void p_ind_len_zero(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_indirect(h, d, n, 3, 0, 0);
	d[0].len = 0;
}
static void p_ind_outside_mem(struct hctx *h, struct pd *d, unsigned *n)
{
	pk_indirect(h, d, n, 3, h->mem.gpa_base + h->mem.size + 65536, 48);
}
/* An indirect table whose status entry is read-only (the request cannot be answered). */
static void p_ind_status_read_only(struct hctx *h, struct pd *d, unsigned *n)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)h->ind;

	pk_indirect(h, d, n, 3, 0, 0);
	t[2].flags = 0;
}
/*
 * A table entry with NEXT: a packed indirect table is sequential and WRITE
 * is its entries' only valid flag, the others to be ignored (virtio 1.2,
 * 2.8.19).  Any answer will do; the backend must survive.
 */
static int c_packed_indirect_entry_next(const struct fb_opts *o)
{
	struct vring_packed_desc *t;
	struct pd d[1];
	struct hctx h;
	unsigned n;
	uint32_t id;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	t = (struct vring_packed_desc *)h.ind;
	pk_indirect(&h, d, &n, 3, 0, 0);
	t[1].flags |= VRING_DESC_F_NEXT;
	t[2].flags |= VRING_DESC_F_NEXT;
	pk_post(&h, d, n);
	wait_used(&h, H_CASE_WAIT_MS, &id);
	hctx_close(&h);
	return 0;
}

/* Submit a request on slot 0 and wait for its completion with status OK. */
static int pk_serve_one(struct hctx *h, uint32_t type, uint64_t sector, uint32_t len)
{
	uint32_t id;

	fb_vq_submit_any(&h->vq, 0, type, sector, len);
	fb_vq_kick(&h->vq);
	if (wait_used(h, h->o->timeout_ms, &id) != 1)
		return failf("no completion at descriptor count %u", h->vq.avail_idx);
	if (id != 0 || h->vq.status[0] != VIRTIO_BLK_S_OK)
		return failf("id %u status %u at descriptor count %u", id, h->vq.status[0],
			     h->vq.avail_idx);
	return 0;
}

/*
 * Valid chains across the end of the ring, with the wrap counter flipping
 * inside them (header at the last position; then data at the last position):
 * they must be served, and the data written across the wrap read back.
 */
static int c_packed_chain_across_ring_end(const struct fb_opts *o)
{
	uint64_t sector = 64, flba, fgen;
	enum fb_vres r;
	struct hctx h;
	int rc = 0;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	/* 42 reads end at count 126: the next chain has its status at the ring's start */
	for (unsigned i = 0; i < H_QSIZE / 3 && rc == 0; i++)
		rc = pk_serve_one(&h, VIRTIO_BLK_T_IN, 8 * i, 4096);
	if (rc == 0 && !h.dev.readonly) {
		fb_verify_fill(fb_vq_slot_data(&h.vq, 0), sector, 8, H_GEN);
		rc = pk_serve_one(&h, VIRTIO_BLK_T_OUT, sector, 4096);
	}
	/* count 129; 42 reads more end at 255: header at the last position, data wraps */
	for (unsigned i = 0; i < H_QSIZE / 3 && rc == 0; i++)
		rc = pk_serve_one(&h, VIRTIO_BLK_T_IN, 8 * i, 4096);
	if (rc == 0) {
		memset(fb_vq_slot_data(&h.vq, 0), 0, 4096);
		rc = pk_serve_one(&h, VIRTIO_BLK_T_IN, sector, 4096);
	}
	if (rc == 0 && !h.dev.readonly && !g_null_backend &&
	    fb_verify_check(fb_vq_slot_data(&h.vq, 0), sector, 8, H_GEN, &r, &flba, &fgen) >= 0)
		rc = failf("data written by a chain across the ring end read back as: %s",
			   fb_verify_res_str(r));
	hctx_close(&h);
	return rc;
}

/* Advance a started packed queue to descriptor count c with served reads (c = 3 k). */
static int pk_advance(struct hctx *h, uint16_t c)
{
	int rc = 0;

	while (rc == 0 && h->vq.avail_idx + 3u <= c)
		rc = pk_serve_one(h, VIRTIO_BLK_T_IN, 0, 4096);
	return rc;
}

/*
 * A chain whose NEXT runs past the ring end into a stale descriptor: header
 * at count 126, data at 127 with NEXT, and at position 0 the used
 * descriptor of the first pass (not made available again; a read-only
 * 16-byte header buffer).  No success.
 */
static int c_packed_next_past_ring_end(const struct fb_opts *o)
{
	struct pd d[2];
	struct hctx h;
	int rc;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	rc = pk_advance(&h, H_QSIZE - 2);
	if (rc == 0) {
		pk_hdr_read(&h);
		d[0] = (struct pd){h_hdr(&h), 16, 0, VRING_DESC_F_NEXT, false};
		d[1] =
		    (struct pd){h_data(&h), 4096, 0, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, false};
		pk_post(&h, d, 2);
		rc = expect_no_success(&h, false);
	}
	hctx_close(&h);
	return rc;
}

/*
 * The chain's later descriptors carry the previous pass's flags (only the
 * head is available in this pass), at the ring end where that is what a
 * stale ring holds.  The backend may refuse or serve it; it must survive.
 */
static int c_packed_tail_stale_wrap(const struct fb_opts *o)
{
	struct pd d[3];
	struct hctx h;
	uint32_t id;
	int rc;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	rc = pk_advance(&h, H_QSIZE - 1);
	if (rc == 0) {
		pk_read_desc(&h, d, 0);
		d[1].flags = VRING_DESC_F_NEXT | VRING_DESC_F_WRITE | FB_PK_AVAIL | FB_PK_USED;
		d[1].raw = true;
		d[2].flags = VRING_DESC_F_WRITE | FB_PK_AVAIL;
		d[2].raw = true;
		pk_post(&h, d, 3);
		wait_used(&h, H_CASE_WAIT_MS, &id);
	}
	hctx_close(&h);
	return rc;
}

/* Two requests in flight with the same buffer id (the driver must not): survive. */
static int c_packed_duplicate_ids(const struct fb_opts *o)
{
	struct pd d[3];
	struct hctx h;
	uint32_t id;

	if (hctx_open(&h, o, true) < 0)
		return -1;
	pk_read_desc(&h, d, 0);
	pk_post(&h, d, 3);
	pk_post(&h, d, 3);
	wait_used(&h, H_CASE_WAIT_MS, &id);
	wait_used(&h, H_CASE_WAIT_MS, &id);
	hctx_close(&h);
	return 0;
}

/*
 * Start queue 0 with a vring base of num (SET_VRING_BASE's position and wrap
 * counter, bit 15) instead of the ring's own, then post a valid read at the
 * ring's real position 0 (wrap counter 1): the backend looks elsewhere or for
 * the other wrap counter, so the request must not be served.
 */
static int pk_base_mismatch(const struct fb_opts *o, uint32_t num)
{
	struct pd d[3];
	struct hctx h;
	int rc;

	if (hctx_open(&h, o, false) < 0)
		return -1;
	if (vu_set_u64(&h.dev.conn, VHU_SET_FEATURES, h.dev.conn.features) < 0 ||
	    fb_dev_set_mem_table(&h.dev, &h.mem) < 0 || fb_dev_setup_vq(&h.dev, &h.vq) < 0) {
		hctx_close(&h);
		return failf("queue setup: %s", h.dev.err);
	}
	rc = vu_set_state(&h.dev.conn, VHU_SET_VRING_BASE, 0, num);
	if (rc == 0)
		rc = vu_set_state(&h.dev.conn, VHU_SET_VRING_ENABLE, 0, 1);
	if (rc == 0 && vu_sync(&h.dev.conn) == 0) {
		pk_read_desc(&h, d, 0);
		pk_post(&h, d, 3);
		rc = expect_no_success(&h, false);
	} else {
		rc = 0; /* refused: fine */
	}
	hctx_close(&h);
	return rc;
}

/* Wrap counter 0 at position 0 while the ring is on its first pass (1). */
static int c_packed_base_wrap_mismatch(const struct fb_opts *o)
{
	return pk_base_mismatch(o, 0);
}

/* A position beyond the ring size (with wrap counter 1). */
static int c_packed_base_past_ring(const struct fb_opts *o)
{
	return pk_base_mismatch(o, 0x8000u | (H_QSIZE + 5));
}

/* Position 0x7fff (all position bits) and wrap counter 1. */
static int c_packed_base_all_bits(const struct fb_opts *o)
{
	return pk_base_mismatch(o, 0xffffu);
}

/*
 * One case: a function with its own logic, or a chain built on a started
 * queue (build), or one message (request, msg, size) on a negotiated
 * connection.
 */
struct hcase {
	const char *name;
	int (*fn)(const struct fb_opts *o);
	void (*build)(struct hctx *h);
	void (*pbuild)(struct hctx *h, struct pd *d, unsigned *n); /* a packed chain */
	bool both; /* in cases[], also run with --packed (requests posted in either layout) */
	uint32_t request;
	const void *msg;
	uint32_t size;
};

#define FN(x)                                                                                      \
	{                                                                                          \
		.name = #x, .fn = c_##x                                                            \
	}
#define FNB(x)                                                                                     \
	{                                                                                          \
		.name = #x, .fn = c_##x, .both = true                                              \
	}
#define CHAIN(x, b)                                                                                \
	{                                                                                          \
		.name = #x, .build = b                                                             \
	}
#define PCHAIN(x, b)                                                                               \
	{                                                                                          \
		.name = #x, .pbuild = b                                                            \
	}
#define MSG(x, req, p, sz)                                                                         \
	{                                                                                          \
		.name = #x, .request = req, .msg = p, .size = sz                                   \
	}
static const struct hcase cases[] = {
    FNB(read_past_end),
    FNB(read_straddle_end),
    FNB(read_sector_overflow),
    FNB(read_sector_wrap_bytes),
    FNB(write_past_end),
    FNB(data_outside_mem),
    FNB(data_spans_mem_end),
    FNB(data_addr_wraps),
    FNB(data_below_mem),
    FNB(hdr_outside_mem),
    FNB(hdr_too_short),
    FNB(hdr_device_writable),
    FNB(status_read_only),
    FNB(status_len_zero),
    FNB(status_outside_mem),
    FNB(data_len_not_512),
    FNB(write_len_not_512),
    FNB(unknown_type),
    FNB(read_into_readonly_buf),
    FNB(write_from_writable_buf),
    FNB(header_only_chain),
    FNB(read_zero_len_data_desc),
    FNB(write_zero_len_data_desc),
    CHAIN(chain_loop, b_loop),
    CHAIN(chain_self_loop, b_self_loop),
    CHAIN(next_out_of_range, b_next_out_of_range),
    CHAIN(head_out_of_range, b_head_out_of_range),
    CHAIN(chain_longer_than_ring, b_chain_longer_than_ring),
    CHAIN(indirect_loop, b_ind_loop),
    CHAIN(indirect_longer_than_ring, b_ind_too_long),
    CHAIN(indirect_outside_mem, b_ind_outside),
    CHAIN(indirect_len_not_16, b_ind_bad_len),
    CHAIN(indirect_nested, b_ind_nested),
    CHAIN(indirect_next_outside_table, b_ind_next_out_of_table),
    FN(avail_idx_jump),
    FNB(get_id_short_buffer),
    FNB(disconnect_in_flight),
    FN(reconnect_overlap),
    FN(reconnect_same_rings),
    MSG(vring_num_zero, VHU_SET_VRING_NUM, &st_num_zero, sizeof(st_num_zero)),
    MSG(vring_num_not_pow2, VHU_SET_VRING_NUM, &st_num_not_pow2, sizeof(st_num_not_pow2)),
    MSG(vring_num_huge, VHU_SET_VRING_NUM, &st_num_huge, sizeof(st_num_huge)),
    MSG(vring_index_out_of_range, VHU_SET_VRING_NUM, &st_index_huge, sizeof(st_index_huge)),
    MSG(vring_base_out_of_range, VHU_SET_VRING_BASE, &st_base_index_huge,
	sizeof(st_base_index_huge)),
    MSG(vring_enable_out_of_range, VHU_SET_VRING_ENABLE, &st_enable_index_huge,
	sizeof(st_enable_index_huge)),
    MSG(get_vring_base_out_of_range, VHU_GET_VRING_BASE, &st_get_base_index_huge,
	sizeof(st_get_base_index_huge)),
    MSG(vring_kick_index_out_of_range, VHU_SET_VRING_KICK, &u64_kick_index_huge, 8),
    MSG(vring_kick_missing_fd, VHU_SET_VRING_KICK, &u64_zero, 8),
    MSG(vring_call_missing_fd, VHU_SET_VRING_CALL, &u64_zero, 8),
    MSG(unknown_request, 9999, &u64_zero, 8),
    MSG(short_payload, VHU_SET_VRING_NUM, &u32_short, 4),
    MSG(features_short_payload, VHU_SET_FEATURES, &u16_short, 2),
    MSG(features_all_bits, VHU_SET_FEATURES, &u64_all_ones, 8),
    MSG(get_config_too_big, VHU_GET_CONFIG, &cfg_too_big, sizeof(cfg_too_big)),
    MSG(get_config_offset_past_end, VHU_GET_CONFIG, &cfg_offset_past_end,
	sizeof(cfg_offset_past_end)),
    MSG(set_config_too_big, VHU_SET_CONFIG, &cfg_set_too_big, sizeof(cfg_set_too_big)),
    MSG(mem_table_no_regions, VHU_SET_MEM_TABLE, &mt_no_regions, MT_ONE_REGION),
    MSG(mem_table_too_many_regions, VHU_SET_MEM_TABLE, &mt_too_many_regions,
	sizeof(mt_too_many_regions)),
    MSG(mem_table_without_fd, VHU_SET_MEM_TABLE, &mt_without_fd, MT_ONE_REGION),
    FN(mem_table_bad_offset),
    FN(vring_before_mem_table),
    FN(vring_addr_unmapped),
    FN(truncated_payload),
    FN(truncated_header),
    FN(oversized_message),
    FN(bad_version_flags),
    FN(fd_flood),
    FN(mem_table_shrunk_while_running),
    FN(vring_index_beyond_queues),
    FN(vring_num_invalid_refused),
    FN(desc_table_past_mem_end),
    FN(avail_ring_past_mem_end),
    FN(used_ring_past_mem_end),
    FN(mem_table_cuts_running_ring),
    FN(mem_region_longer_than_file),
    FN(mem_ring_past_file_end),
    FN(memfd_shrunk_under_data_buffer),
    FN(memfd_truncated_under_running_rings),
    FN(inflight_region_longer_than_file),
    FN(inflight_queues_beyond_device),
    FN(inflight_region_too_small),
    FN(inflight_queue_size_below_vring),
    FN(inflight_memfd_shrunk),
    FN(call_fd_full_pipe),
    FN(call_fd_counter_full),
    FN(call_fd_blocking_after_start),
    FN(replies_never_read),
    FN(payload_never_sent),
    FN(restart_replay_after_lost_call),
    FN(restart_after_lost_call),
    FN(fds_of_answered_messages_closed),
    FN(vring_addr_moved_on_running_queue),
    FN(get_config_qemu_framing),
    FN(get_config_spdk_framing),
    FN(get_config_window_past_payload),
};

/*
 * With --packed: the cases marked both in cases[] (requests posted as packed
 * chains), then the packed ring's own (chains, ids, flags and wrap counters, indirect tables,
 * the vring base).
 */
static const struct hcase packed_cases[] = {
    PCHAIN(packed_chain_longer_than_ring, p_chain_longer_than_ring),
    PCHAIN(packed_id_beyond_queue_size, p_id_beyond_queue),
    PCHAIN(packed_id_0xffff, p_id_max),
    PCHAIN(packed_head_flags_used, p_head_flags_used),
    PCHAIN(packed_head_wrap_next_pass, p_head_wrap_next_pass),
    PCHAIN(packed_head_flags_neither, p_head_flags_none),
    PCHAIN(packed_avail_skips_positions, p_avail_skips_positions),
    PCHAIN(packed_indirect_nested, p_ind_nested),
    PCHAIN(packed_indirect_longer_than_ring, p_ind_longer_than_ring),
    PCHAIN(packed_indirect_len_not_16, p_ind_len_not_16),
    PCHAIN(packed_indirect_len_zero, p_ind_len_zero),
    PCHAIN(packed_indirect_outside_mem, p_ind_outside_mem),
    PCHAIN(packed_indirect_status_read_only, p_ind_status_read_only),
    FN(packed_indirect_entry_next),
    FN(packed_chain_across_ring_end),
    FN(packed_next_past_ring_end),
    FN(packed_tail_stale_wrap),
    FN(packed_duplicate_ids),
    FN(packed_base_wrap_mismatch),
    FN(packed_base_past_ring),
    FN(packed_base_all_bits),
};

static int run_case(const struct hcase *c, const struct fb_opts *o)
{
	if (c->fn)
		return c->fn(o);
	if (c->pbuild)
		return pk_case(o, c->pbuild);
	if (c->build)
		return chain_case(o, c->build);
	return send_then_close(o, c->request, c->msg, c->size, NULL, 0);
}

/* One case (unless --case leaves it out) and the liveness check after it: PASS or FAIL. */
static void run_counted(const struct hcase *c, const struct fb_opts *o, unsigned *passed,
			unsigned *failed)
{
	int rc;

	if (o->hostile_case && !strstr(c->name, o->hostile_case))
		return;
	why[0] = '\0';
	rc = run_case(c, o);
	if (rc == 0)
		rc = alive(o);
	if (rc == 0) {
		(*passed)++;
		printf("PASS %s\n", c->name);
	} else {
		(*failed)++;
		printf("FAIL %s: %s\n", c->name, why);
	}
	fflush(stdout);
}

int fb_hostile_run(const struct fb_opts *o)
{
	unsigned passed = 0, failed = 0;
	int rc;

	if (!o->sock) {
		fprintf(stderr, "femu-bench: --hostile needs -s SOCK\n");
		return 2;
	}
	g_first_check = true;
	rc = alive(o);
	g_first_check = false;
	if (g_null_backend)
		printf("note: the backend discards writes (reads return zeros): liveness checks "
		       "do not compare read-back data\n");
	if (rc < 0) {
		fprintf(stderr,
			"femu-bench: backend does not serve a correct request before any "
			"case: %s\n",
			why);
		return 3;
	}
	g_cap_sectors = cap_sectors(o);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!o->packed || cases[i].both)
			run_counted(&cases[i], o, &passed, &failed);
	for (size_t i = 0; o->packed && i < sizeof(packed_cases) / sizeof(packed_cases[0]); i++)
		run_counted(&packed_cases[i], o, &passed, &failed);
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
