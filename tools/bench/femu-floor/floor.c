/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * floor.c - the machine measurements of floor.h: cache-line ping-pong,
 * dependent random loads, a bare split ring and a bare packed ring at QD1
 * and at high queue depth, random 4 KiB copies, busy-loop gaps.
 */
#include "floor.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>

#define LINE 64u
#define BLOCK 4096u
#define RTT_BATCHES 21u /* medians of this many batches */
#define SPIN_LIMIT_NS                                                                              \
	10000000000ull /* a partner silent this long (a loaded host can deschedule it for          \
			  seconds): give up */

/* Destination: 32 rotating 4 KiB buffers (a QD32 initiator's data slots). */
static uint8_t dst[32][BLOCK] __attribute__((aligned(BLOCK)));

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* xorshift64*: the random offsets are drawn before any timing starts. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* Stop the CPU from overlapping what follows with what came before. */
static inline void serialize_loads(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_lfence();
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* Prefetch len bytes at p into the first (l1) or the second level. */
static inline void floor_pf_lines(const uint8_t *p, unsigned len, bool l1)
{
	if (l1) {
		for (unsigned l = 0; l < len; l += LINE)
			__builtin_prefetch(p + l, 0, 3);
	} else {
		for (unsigned l = 0; l < len; l += LINE)
			__builtin_prefetch(p + l, 0, 2);
	}
}

/*
 * The copy of a 4 KiB block as femud makes it (ftl/fm_data.c): with
 * pf_first, every line of the source asked for into the second level
 * (prefetcht1) before memcpy, so that all its misses are in flight at once
 * instead of at the pace the hardware prefetcher ramps up to.
 */
static inline void floor_copy_block(void *dst, const uint8_t *src, bool pf_first)
{
	if (pf_first)
		floor_pf_lines(src, BLOCK, false);
	memcpy(dst, src, BLOCK);
}

int floor_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int floor_buf_init(struct floor_buf *b, size_t len)
{
	len &= ~(size_t)(BLOCK - 1);
	b->base = NULL;
	b->len = 0;
	if (len < 64 * BLOCK)
		return -EINVAL;
	b->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->base == MAP_FAILED) {
		b->base = NULL;
		return -errno;
	}
	madvise(b->base, len, MADV_HUGEPAGE); /* as femud's backend: THP when available */
	for (size_t off = 0; off < len; off += BLOCK)
		memset(b->base + off, (int)(off / BLOCK) & 0xff, BLOCK);
	b->len = len;
	return 0;
}

void floor_buf_fini(struct floor_buf *b)
{
	if (b->base != NULL)
		munmap(b->base, b->len);
	b->base = NULL;
	b->len = 0;
}

/* ---- cross-CPU round trip ---- */

struct pingpong {
	volatile uint64_t ping __attribute__((aligned(128)));
	volatile uint64_t pong __attribute__((aligned(128)));
	uint64_t rounds;
	int cpu;
	int err;
};

/*
 * The waiting thread's own CPU time: a wait is bounded by the time spent
 * spinning, so that a process stopped (tools/bench/turns SIGSTOPs its sides)
 * or descheduled in the middle of a wait does not time out when it resumes.
 */
static uint64_t spin_clock_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A bounded busy wait: the clock is read only every 2^20 spins. */
struct spin {
	unsigned k;
	uint64_t since; /* first clock reading, 0 before it */
};

/* One more spin; true once the wait has spun for SPIN_LIMIT_NS of its thread's CPU time. */
static bool spin_expired(struct spin *s)
{
	uint64_t t;

	if ((++s->k & 0xfffff) != 0)
		return false;
	t = spin_clock_ns();
	if (s->since == 0)
		s->since = t;
	return t - s->since > SPIN_LIMIT_NS;
}

/* Wait until *p == v; false after SPIN_LIMIT_NS. */
static int spin_until(const volatile uint64_t *p, uint64_t v)
{
	struct spin s = {0, 0};

	while (*p != v)
		if (spin_expired(&s))
			return 0;
	return 1;
}

static void *pong_thread(void *arg)
{
	struct pingpong *pp = arg;

	pp->err = floor_pin(pp->cpu);
	pp->pong = 0;
	for (uint64_t i = 1; i <= pp->rounds && pp->err == 0; i++) {
		if (!spin_until(&pp->ping, i)) {
			pp->err = -ETIMEDOUT;
			break;
		}
		pp->pong = i;
	}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of n figures (sorts them). */
static double median(double *x, unsigned n)
{
	qsort(x, n, sizeof(x[0]), cmp_double);
	return x[n / 2];
}

/* Median of RTT_BATCHES batch figures (sorts them). */
static double median_batch(double *batch)
{
	return median(batch, RTT_BATCHES);
}

int floor_rtt_ns(int cpu_a, int cpu_b, unsigned rounds, double *rtt_ns)
{
	static struct pingpong pp;
	double batch[RTT_BATCHES];
	unsigned per = rounds / RTT_BATCHES ? rounds / RTT_BATCHES : 1;
	pthread_t t;
	int rc;

	if (cpu_a == cpu_b)
		return -EINVAL;
	memset((void *)&pp, 0, sizeof(pp));
	pp.rounds = (uint64_t)per * RTT_BATCHES;
	pp.cpu = cpu_b;
	rc = floor_pin(cpu_a);
	if (rc != 0)
		return rc;
	if ((rc = pthread_create(&t, NULL, pong_thread, &pp)) != 0)
		return -rc;
	for (unsigned b = 0, i = 1; b < RTT_BATCHES; b++) {
		uint64_t t0 = now_ns();

		for (unsigned k = 0; k < per; k++, i++) {
			pp.ping = i;
			if (!spin_until(&pp.pong, i)) {
				pp.err = -ETIMEDOUT;
				pp.ping = UINT64_MAX;
				pthread_join(t, NULL);
				return -ETIMEDOUT;
			}
		}
		batch[b] = (double)(now_ns() - t0) / per;
	}
	pthread_join(t, NULL);
	if (pp.err != 0)
		return pp.err;
	*rtt_ns = median_batch(batch);
	return 0;
}

/* ---- bare split-ring request at QD1 ---- */

#define RING_SIZE 256u

/*
 * The memory a split virtqueue request touches, laid out as virtio 1.1
 * 2.7 and the Linux driver do: avail and used rings (index and entries, so
 * at QD1 the entry sits in another cache line than the index most of the
 * time), one header + status line per request, and the backend's data.
 */
struct ring_sim {
	struct {
		volatile uint16_t flags, idx;
		volatile uint16_t ring[RING_SIZE];
		volatile uint16_t used_event; /* EVENT_IDX: written by the initiator */
	} avail __attribute__((aligned(4096)));
	struct {
		volatile uint16_t flags, idx;
		struct {
			volatile uint32_t id, len;
		} ring[RING_SIZE];
		volatile uint16_t avail_event; /* EVENT_IDX: read by the initiator */
	} used __attribute__((aligned(4096)));
	struct {
		volatile uint64_t type_ioprio, sector;
		volatile uint8_t status;
	} req __attribute__((aligned(64)));
	/* virtio layout (floor_ring_qd1_virtio_ns): as femu-bench lays out slot 0 */
	struct vring_desc desc[3] __attribute__((aligned(64)));
	struct {
		volatile uint64_t type_ioprio, sector;
	} hdr[4] __attribute__((aligned(64)));
	volatile uint8_t status[64] __attribute__((aligned(64)));
	uint8_t data[BLOCK] __attribute__((aligned(BLOCK)));
	/* packed layout (FLOOR_QD1_PACKED): the descriptor ring and both event areas */
	struct vring_packed_desc pdesc[RING_SIZE] __attribute__((aligned(4096)));
	struct vring_packed_desc_event drv_ev __attribute__((aligned(64))); /* initiator writes */
	struct vring_packed_desc_event dev_ev __attribute__((aligned(64))); /* backend writes */
	uint16_t drv_event; /* initiator: the descriptor count its driver event names */
	const struct floor_buf *buf;
	uint64_t rounds;
	uint64_t calls; /* virtio, packed: completions the driver's event asked a call for */
	enum floor_qd1 kind;
	int cpu;
	int err;
};

/* ---- packed ring helpers (virtio 1.2, 2.8): counts of descriptors, free running ---- */

#define PK_AVAIL (1u << VRING_PACKED_DESC_F_AVAIL)
#define PK_USED (1u << VRING_PACKED_DESC_F_USED)

/* Wrap counter (1 on the first pass) of descriptor count c in a ring of size (a power of 2). */
static inline unsigned pk_wrap(uint16_t c, unsigned size)
{
	return (c & size) ? 0u : 1u;
}

/* The flags' AVAIL/USED bits of an available descriptor at count c. */
static inline uint16_t pk_avail_bits(uint16_t c, unsigned size)
{
	return pk_wrap(c, size) ? PK_AVAIL : PK_USED;
}

/* The flags' AVAIL/USED bits of a used descriptor at count c. */
static inline uint16_t pk_used_bits(uint16_t c, unsigned size)
{
	return pk_wrap(c, size) ? (PK_AVAIL | PK_USED) : 0;
}

/* off_wrap (event suppression) of descriptor count c. */
static inline uint16_t pk_off_wrap(uint16_t c, unsigned size)
{
	return (uint16_t)((c & (size - 1)) | (pk_wrap(c, size) << VRING_PACKED_EVENT_F_WRAP_CTR));
}

/*
 * Does an event area (flags, off_wrap) ask to be told of counts [old, now)?
 * The Linux driver's and DPDK's rule for descriptor-event mode.
 */
static inline bool pk_need_event(const volatile struct vring_packed_desc_event *ev, uint16_t old,
				 uint16_t now, unsigned size)
{
	uint16_t flags = ev->flags, ow = ev->off_wrap, event;

	if (flags != VRING_PACKED_EVENT_FLAG_DESC)
		return flags != VRING_PACKED_EVENT_FLAG_DISABLE;
	event = (uint16_t)((now & ~(size - 1)) | (ow & (size - 1)));
	if ((ow >> VRING_PACKED_EVENT_F_WRAP_CTR) != pk_wrap(now, size))
		event = (uint16_t)(event - size);
	return (uint16_t)(now - event - 1) < (uint16_t)(now - old);
}

/* Wait until the AVAIL/USED bits of *flags are want; false after SPIN_LIMIT_NS. */
static int spin_flags(const uint16_t *flags, uint16_t want)
{
	struct spin s = {0, 0};

	while ((__atomic_load_n(flags, __ATOMIC_ACQUIRE) & (PK_AVAIL | PK_USED)) != want)
		if (spin_expired(&s))
			return 0;
	return 1;
}

/* Wait until *p == v; false after SPIN_LIMIT_NS. */
static int spin_until16(const volatile uint16_t *p, uint16_t v)
{
	struct spin s = {0, 0};

	while (*p != v)
		if (spin_expired(&s))
			return 0;
	return 1;
}

/* The bare request: the header line holds the sector and the status byte. */
static void ring_serve_bare(struct ring_sim *r, uint64_t i, uint16_t slot, size_t blocks)
{
	uint16_t head = r->avail.ring[slot];
	uint64_t blk = (r->req.sector + head) % blocks;

	floor_copy_block(dst[i & 31], r->buf->base + blk * BLOCK, true);
	r->req.status = 0;
	r->used.ring[slot].id = head;
	r->used.ring[slot].len = BLOCK + 1;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	r->used.idx = (uint16_t)i;
}

/*
 * A request just seen: ask for the line of the last request's header, as
 * femud does (PMD_VQ_GUESS): a driver that reuses its buffers rewrote it,
 * and its transfer then overlaps the ring's instead of following it (the
 * header's address is known only once the ring entry and the descriptor
 * are read; in a packed ring the head descriptor shares the line its flags
 * were polled in, so there it saves little).  Here every request uses the
 * first header.
 */
static inline void ring_guess_hdr(const struct ring_sim *r)
{
	__builtin_prefetch((const void *)&r->hdr[0], 0, 3);
}

/*
 * The virtio-blk request as femu-bench (and the Linux driver) builds it:
 * three descriptors, the header in one line, the status byte in another, the
 * data into the initiator's buffer; after the used index, a full barrier and
 * the used_event read a call decision needs (EVENT_IDX).  avail_event is
 * not written (a polling backend need not).
 */
static void ring_serve_virtio(struct ring_sim *r, uint64_t i, uint16_t slot, size_t blocks)
{
	uint16_t head;
	struct vring_desc d0, d1, d2;
	uint64_t blk;

	/* the last request's header line, asked for at once (see ring_guess_hdr) */
	ring_guess_hdr(r);
	head = r->avail.ring[slot];
	d0 = r->desc[head % 3];
	d1 = r->desc[d0.next % 3];
	d2 = r->desc[d1.next % 3];
	if (d0.len != 16 || d1.len != BLOCK || d2.len != 1)
		r->err = -EPROTO;
	blk = *(const volatile uint64_t *)(uintptr_t)(d0.addr + 8) % blocks;
	floor_copy_block((void *)(uintptr_t)d1.addr, r->buf->base + blk * BLOCK, true);
	*(volatile uint8_t *)(uintptr_t)d2.addr = 0;
	r->used.ring[slot].id = head;
	r->used.ring[slot].len = BLOCK + 1;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	r->used.idx = (uint16_t)i;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if ((uint16_t)(i - r->avail.used_event - 1) < 1) /* vring_need_event(ue, i, i - 1) */
		r->calls++;
}

/*
 * The same request in a packed ring: request i's chain (header, data,
 * status) takes descriptor counts c = 3 (i - 1) .. c + 2.  The backend waits
 * for the head's flags, reads the three descriptors and the header, copies
 * the block into the data buffer, writes the status byte and the used
 * descriptor in place of the head (id, length, flags last), then, after a
 * full barrier, reads the driver event area as a call decision needs.
 */
static int ring_serve_packed(struct ring_sim *r, uint64_t i, size_t blocks)
{
	uint16_t c = (uint16_t)(3 * (i - 1)), m = RING_SIZE - 1;
	struct vring_packed_desc d0, d1, d2;
	uint64_t blk;

	if (!spin_flags(&r->pdesc[c & m].flags, pk_avail_bits(c, RING_SIZE)))
		return -ETIMEDOUT;
	ring_guess_hdr(r);
	d0 = r->pdesc[c & m];
	d1 = r->pdesc[(c + 1) & m];
	d2 = r->pdesc[(c + 2) & m];
	if (d0.len != 16 || d1.len != BLOCK || d2.len != 1 || !(d1.flags & VRING_DESC_F_NEXT) ||
	    (d2.flags & VRING_DESC_F_NEXT))
		return -EPROTO;
	blk = *(const volatile uint64_t *)(uintptr_t)(d0.addr + 8) % blocks;
	floor_copy_block((void *)(uintptr_t)d1.addr, r->buf->base + blk * BLOCK, true);
	*(volatile uint8_t *)(uintptr_t)d2.addr = 0;
	r->pdesc[c & m].id = d2.id;
	r->pdesc[c & m].len = BLOCK + 1;
	__atomic_store_n(&r->pdesc[c & m].flags, pk_used_bits(c, RING_SIZE), __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (pk_need_event(&r->drv_ev, c, (uint16_t)(c + 3), RING_SIZE))
		r->calls++;
	return 0;
}

static void *ring_backend(void *arg)
{
	struct ring_sim *r = arg;
	size_t blocks = r->buf->len / BLOCK;

	r->err = floor_pin(r->cpu);
	for (uint64_t i = 1; i <= __atomic_load_n(&r->rounds, __ATOMIC_RELAXED) && r->err == 0;
	     i++) {
		uint16_t slot = (uint16_t)((i - 1) % RING_SIZE);

		if (r->kind == FLOOR_QD1_PACKED) {
			r->err = ring_serve_packed(r, i, blocks);
			continue;
		}
		if (!spin_until16(&r->avail.idx, (uint16_t)i)) {
			r->err = -ETIMEDOUT;
			break;
		}
		if (r->kind == FLOOR_QD1_VIRTIO)
			ring_serve_virtio(r, i, slot, blocks);
		else
			ring_serve_bare(r, i, slot, blocks);
	}
	return NULL;
}

/* virtio layout: slot 0's chain header -> data -> status, as femu-bench builds it. */
static void ring_virtio_chain(struct ring_sim *r)
{
	r->desc[0] = (struct vring_desc){.addr = (uint64_t)(uintptr_t)&r->hdr[0],
					 .len = 16,
					 .flags = VRING_DESC_F_NEXT,
					 .next = 1};
	r->desc[1] = (struct vring_desc){.addr = (uint64_t)(uintptr_t)r->data,
					 .len = BLOCK,
					 .flags = VRING_DESC_F_NEXT | VRING_DESC_F_WRITE,
					 .next = 2};
	r->desc[2] = (struct vring_desc){
	    .addr = (uint64_t)(uintptr_t)&r->status[0], .len = 1, .flags = VRING_DESC_F_WRITE};
}

/*
 * The initiator's side of one QD1 packed request i: the header, the chain's
 * data and status descriptors, the head's flags last; after a full barrier
 * the device event area (the kick decision); then it waits for the used
 * descriptor, reads its id and the status byte, and keeps the driver event
 * (descriptor-event mode, EVENT_IDX) a ring ahead, rewritten only when the
 * backend could reach it, as femu-bench does.
 */
static bool ring_initiate_packed(struct ring_sim *r, uint64_t *s, unsigned i, uint64_t *sink)
{
	uint16_t c = (uint16_t)(3 * (i - 1)), m = RING_SIZE - 1;
	uint64_t hdr = (uint64_t)(uintptr_t)&r->hdr[0];

	r->hdr[0].type_ioprio = 0;
	r->hdr[0].sector = rnd(s);
	r->status[0] = 0xff;
	r->pdesc[(c + 1) & m] = (struct vring_packed_desc){
	    (uint64_t)(uintptr_t)r->data, BLOCK, 0,
	    (uint16_t)(VRING_DESC_F_NEXT | VRING_DESC_F_WRITE | pk_avail_bits(c + 1, RING_SIZE))};
	r->pdesc[(c + 2) & m] = (struct vring_packed_desc){
	    (uint64_t)(uintptr_t)&r->status[0], 1, 0,
	    (uint16_t)(VRING_DESC_F_WRITE | pk_avail_bits(c + 2, RING_SIZE))};
	r->pdesc[c & m].addr = hdr;
	r->pdesc[c & m].len = 16;
	r->pdesc[c & m].id = 0;
	__atomic_store_n(&r->pdesc[c & m].flags,
			 (uint16_t)(VRING_DESC_F_NEXT | pk_avail_bits(c, RING_SIZE)),
			 __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*sink += pk_need_event(&r->dev_ev, c, (uint16_t)(c + 3), RING_SIZE);
	if (!spin_flags(&r->pdesc[c & m].flags, pk_used_bits(c, RING_SIZE)))
		return false;
	*sink += r->pdesc[c & m].id + r->status[0];
	if ((uint16_t)(r->drv_event - (uint16_t)(c + 3)) <= 3) {
		r->drv_event = (uint16_t)(c + 3 + RING_SIZE - 1);
		r->drv_ev.off_wrap = pk_off_wrap(r->drv_event, RING_SIZE);
	}
	return true;
}

/* The initiator's side of one QD1 request i on slot; false on a timeout. */
static bool ring_initiate(struct ring_sim *r, uint64_t *s, unsigned i, uint64_t *sink)
{
	uint16_t slot = (uint16_t)((i - 1) % RING_SIZE);
	bool virtio = r->kind == FLOOR_QD1_VIRTIO;

	if (r->kind == FLOOR_QD1_PACKED)
		return ring_initiate_packed(r, s, i, sink);
	if (virtio) {
		r->hdr[0].type_ioprio = 0;
		r->hdr[0].sector = rnd(s);
		r->status[0] = 0xff;
	} else {
		r->req.type_ioprio = 0;
		r->req.sector = rnd(s);
		r->req.status = 0xff;
	}
	r->avail.ring[slot] = 0;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	r->avail.idx = (uint16_t)i;
	if (virtio) { /* the kick decision (EVENT_IDX) */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		*sink += r->used.avail_event;
	}
	if (!spin_until16(&r->used.idx, (uint16_t)i))
		return false;
	if (virtio) {
		*sink += r->used.ring[slot].id + r->status[0];
		/* polling: no call wanted; kept 16k-32k ahead as femu-bench does (fb_vring.h) */
		if ((uint16_t)(r->avail.used_event - i) < 0x4000)
			r->avail.used_event = (uint16_t)(i + 0x8000);
	} else {
		*sink += r->used.ring[slot].id + r->req.status;
	}
	return true;
}

/* Set up r for rounds requests (UINT64_MAX: until told), pin to cpu_b, start the backend. */
static int ring_qd1_start(struct ring_sim *r, int cpu_a, int cpu_b, const struct floor_buf *buf,
			  uint64_t rounds, enum floor_qd1 kind, pthread_t *t)
{
	int rc;

	if (cpu_a == cpu_b)
		return -EINVAL;
	memset((void *)r, 0, sizeof(*r));
	r->buf = buf;
	r->rounds = rounds;
	r->cpu = cpu_a;
	r->kind = kind;
	r->avail.used_event = 0x8000; /* no call wanted, from the first request on */
	/* packed: descriptor-event mode, a ring ahead (no call wanted); kicks not wanted */
	r->drv_event = RING_SIZE - 1;
	r->drv_ev.off_wrap = pk_off_wrap(r->drv_event, RING_SIZE);
	r->drv_ev.flags = VRING_PACKED_EVENT_FLAG_DESC;
	r->dev_ev.flags = VRING_PACKED_EVENT_FLAG_DISABLE;
	ring_virtio_chain(r);
	if ((rc = floor_pin(cpu_b)) != 0)
		return rc;
	return -pthread_create(t, NULL, ring_backend, r);
}

static int ring_qd1_run(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned rounds,
			enum floor_qd1 kind, double *ns)
{
	static struct ring_sim r;
	double batch[RTT_BATCHES];
	unsigned per = rounds / RTT_BATCHES ? rounds / RTT_BATCHES : 1;
	uint64_t s = 0x853c49e6748fea9bull, sink = 0;
	pthread_t t;
	int rc;

	if ((rc = ring_qd1_start(&r, cpu_a, cpu_b, buf, (uint64_t)per * RTT_BATCHES, kind, &t)) !=
	    0)
		return rc;
	for (unsigned b = 0, i = 1; b < RTT_BATCHES; b++) {
		uint64_t t0 = now_ns();

		for (unsigned k = 0; k < per; k++, i++) {
			if (!ring_initiate(&r, &s, i, &sink)) {
				pthread_join(t, NULL);
				return -ETIMEDOUT;
			}
		}
		batch[b] = (double)(now_ns() - t0) / per;
	}
	pthread_join(t, NULL);
	__asm__ volatile("" : : "r"(sink));
	if (r.err != 0)
		return r.err;
	if (r.calls != 0)
		return -EPROTO; /* the initiator never asked for a call */
	*ns = median_batch(batch);
	return 0;
}

int floor_ring_qd1_count(int cpu_a, int cpu_b, const struct floor_buf *buf, enum floor_qd1 kind,
			 uint64_t *count, const volatile sig_atomic_t *stop)
{
	static struct ring_sim r;
	uint64_t s = 0x853c49e6748fea9bull, sink = 0;
	pthread_t t;
	int rc;

	if ((rc = ring_qd1_start(&r, cpu_a, cpu_b, buf, UINT64_MAX, kind, &t)) != 0)
		return rc;
	for (uint64_t i = 1;; i++) {
		bool last = *stop != 0;

		if (last) /* the backend serves request i, then finds its rounds done */
			__atomic_store_n(&r.rounds, i, __ATOMIC_RELAXED);
		if (!ring_initiate(&r, &s, (unsigned)i, &sink)) {
			pthread_join(t, NULL);
			return -ETIMEDOUT;
		}
		__atomic_store_n(count, i, __ATOMIC_RELAXED);
		if (last)
			break;
	}
	pthread_join(t, NULL);
	__asm__ volatile("" : : "r"(sink));
	if (r.err == 0 && r.calls != 0)
		return -EPROTO;
	return r.err;
}

int floor_ring_qd1_ns(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned rounds,
		      double *ns)
{
	return ring_qd1_run(cpu_a, cpu_b, buf, rounds, FLOOR_QD1_BARE, ns);
}

int floor_ring_qd1_virtio_ns(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned rounds,
			     double *ns)
{
	return ring_qd1_run(cpu_a, cpu_b, buf, rounds, FLOOR_QD1_VIRTIO, ns);
}

int floor_ring_qd1_packed_ns(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned rounds,
			     double *ns)
{
	return ring_qd1_run(cpu_a, cpu_b, buf, rounds, FLOOR_QD1_PACKED, ns);
}

/*
 * Hint a 4 KiB block at p the way pf says (enum floor_pf).  Written as
 * separate calls: GCC 12 compiled a switch (and an if chain that chose the
 * length) over these loops to no code at all.
 */
static inline void floor_pf_block(const uint8_t *p, enum floor_pf pf)
{
	if (pf == FLOOR_PF_L1_512)
		floor_pf_lines(p, 512, true);
	else if (pf == FLOOR_PF_L1_4K)
		floor_pf_lines(p, BLOCK, true);
	else if (pf == FLOOR_PF_L2_512)
		floor_pf_lines(p, 512, false);
	else if (pf == FLOOR_PF_L2_4K)
		floor_pf_lines(p, BLOCK, false);
	else if (pf == FLOOR_PF_L2_SPLIT)
		floor_pf_lines(p, BLOCK / 2, false);
}

/* FLOOR_PF_L2_SPLIT: the second half of the block at p, at half the look-ahead. */
static inline void floor_pf_rest(const uint8_t *p)
{
	floor_pf_lines(p + BLOCK / 2, BLOCK / 2, false);
}

const char *floor_pf_name(enum floor_pf pf)
{
	static const char *const names[FLOOR_PF_COUNT] = {
	    "none",	   "first 512 B to L1",	       "4 KiB to L1", "first 512 B to L2",
	    "4 KiB to L2", "4 KiB to L2 in two halves"};

	return (unsigned)pf < FLOOR_PF_COUNT ? names[pf] : "?";
}

/* ---- bare split and packed rings at high queue depth ---- */

#define RQ_SIZE 1024u	       /* queue size (femu-bench's default) */
#define RQ_GPA0 0x100000000ull /* "guest physical" address of the shared region */
#define RQ_SAMPLES 20u	       /* rate samples per run (the first is a warm-up) */
#define RQ_STATUS_UNSET 0xffu  /* a status byte before the backend writes it */

/* The initiator's memory, shared with the backend: ring, headers, status bytes, data. */
struct rq_shm {
	uint8_t *base;
	size_t len;
	struct vring vr; /* split */
	/* packed: the descriptor ring, the driver and device event areas */
	struct vring_packed_desc *pdesc;
	struct vring_packed_desc_event *drv_ev, *dev_ev;
	struct virtio_blk_outhdr *hdr; /* qd headers, 16 B apart */
	uint8_t *status;	       /* qd status bytes, 1 B apart */
	uint8_t *data;		       /* qd buffers of the run's block size, bs apart */
};

/* One request as the backend parsed it. */
struct rq_req {
	const uint8_t *src; /* NULL: out of range, answer an error */
	uint8_t *dst;
	uint8_t *status; /* NULL: no status byte to write */
	uint32_t len;
	uint16_t head; /* split: the chain's head; packed: its buffer id */
};

struct rq_run {
	struct rq_shm m;
	const struct floor_buf *buf;
	unsigned qd, look;
	unsigned bs;	  /* bytes each request reads: 512..4096, a multiple of 512 */
	enum floor_pf pf; /* the hint for a block parsed ahead */
	bool pf_first;	  /* each copy asks for its block's lines first (floor_copy_block) */
	unsigned pub;	  /* store the used index after this many requests (0: once per batch) */
	bool packed; /* a packed ring (the used flags of a group's first held back as the index) */
	int cpu, err;
	struct rq_req q[RQ_SIZE]; /* the backend's parsed batch */
	volatile int stop __attribute__((aligned(64)));
};

static void *rq_xlate(const struct rq_shm *m, uint64_t gpa, uint64_t len)
{
	uint64_t off = gpa - RQ_GPA0;

	if (gpa < RQ_GPA0 || off > m->len || len > m->len - off)
		return NULL;
	return m->base + off;
}

static uint64_t rq_gpa(const struct rq_shm *m, const void *p)
{
	return RQ_GPA0 + (uint64_t)((const uint8_t *)p - m->base);
}

/*
 * Lay out the ring and the request memory as femu-bench does (headers and
 * status bytes packed in arrays, data buffers of bs bytes) with pre-built
 * chains: slot s is head descriptor s -> data descriptor qd + 2s -> status
 * descriptor qd + 2s + 1.
 */
static int rq_shm_init(struct rq_shm *m, unsigned qd, bool packed, unsigned bs)
{
	size_t ring = packed ? sizeof(*m->pdesc) * RQ_SIZE + 4096
			     : (vring_size(RQ_SIZE, 4096) + 4095) & ~(size_t)4095;
	size_t hdr = ((size_t)qd * sizeof(*m->hdr) + 63) & ~(size_t)63;
	size_t st = ((size_t)qd + 63) & ~(size_t)63;
	size_t data = (size_t)qd * bs;
	struct vring_desc *d;

	m->len = ring + ((hdr + st + 4095) & ~(size_t)4095) + data;
	m->base = aligned_alloc(4096, m->len);
	if (m->base == NULL)
		return -ENOMEM;
	memset(m->base, 0, m->len);
	m->hdr = (struct virtio_blk_outhdr *)(m->base + ring);
	m->status = (uint8_t *)m->hdr + hdr;
	m->data = m->base + ring + ((hdr + st + 4095) & ~(size_t)4095);
	if (packed) { /* pollers: no kicks, no calls */
		m->pdesc = (struct vring_packed_desc *)m->base;
		m->drv_ev =
		    (struct vring_packed_desc_event *)(m->base + sizeof(*m->pdesc) * RQ_SIZE);
		m->dev_ev = m->drv_ev + 16; /* the next line */
		m->drv_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
		m->dev_ev->flags = VRING_PACKED_EVENT_FLAG_DISABLE;
		return 0;
	}
	vring_init(&m->vr, RQ_SIZE, m->base, 4096);
	d = m->vr.desc;
	for (unsigned s = 0; s < qd; s++) {
		unsigned dd = qd + 2 * s;

		d[s] = (struct vring_desc){rq_gpa(m, &m->hdr[s]), sizeof(m->hdr[s]),
					   VRING_DESC_F_NEXT, (uint16_t)dd};
		d[dd] =
		    (struct vring_desc){rq_gpa(m, m->data + (size_t)s * bs), bs,
					VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, (uint16_t)(dd + 1)};
		d[dd + 1] = (struct vring_desc){rq_gpa(m, &m->status[s]), 1, VRING_DESC_F_WRITE, 0};
	}
	m->vr.used->flags = VRING_USED_F_NO_NOTIFY; /* a poller: no kicks */
	m->vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	return 0;
}

/*
 * Backend, either layout: a request's buffers from the guest addresses of its
 * header, data (len bytes) and status, and the block it reads (src NULL
 * when the request is not a read inside the buffer).
 */
static void rq_req_fill(const struct rq_run *r, struct rq_req *q, uint64_t hdr_addr,
			uint64_t data_addr, uint32_t len, uint64_t status_addr)
{
	const struct virtio_blk_outhdr *hdr;
	uint64_t sector;

	q->len = len;
	q->dst = rq_xlate(&r->m, data_addr, len);
	q->status = rq_xlate(&r->m, status_addr, 1);
	q->src = NULL;
	hdr = rq_xlate(&r->m, hdr_addr, sizeof(*hdr));
	if (hdr == NULL || q->dst == NULL || hdr->type != VIRTIO_BLK_T_IN)
		return;
	sector = hdr->sector;
	if (sector < r->buf->len / 512 && q->len <= r->buf->len - sector * 512)
		q->src = r->buf->base + sector * 512;
}

/* Backend: the chain of head, its header and buffers, the block it reads. */
static void rq_parse(const struct rq_run *r, uint16_t head, struct rq_req *q)
{
	const struct vring_desc *d = r->m.vr.desc, *h, *dd, *sd;

	h = &d[head & (RQ_SIZE - 1)];
	dd = &d[h->next & (RQ_SIZE - 1)];
	sd = &d[dd->next & (RQ_SIZE - 1)];
	q->head = head;
	rq_req_fill(r, q, h->addr, dd->addr, dd->len, sd->addr);
}

/* Backend: copy, status, used entry (the used index is stored once per batch). */
static void rq_serve(const struct rq_run *r, const struct rq_req *q, uint16_t used_idx)
{
	struct vring_used_elem *e = &r->m.vr.used->ring[used_idx & (RQ_SIZE - 1)];

	if (q->src != NULL && q->len == BLOCK)
		floor_copy_block(q->dst, q->src, r->pf_first);
	else if (q->src != NULL)
		memcpy(q->dst, q->src, q->len);
	if (q->status != NULL)
		*q->status = q->src != NULL ? VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR;
	e->id = q->head;
	e->len = q->src != NULL ? q->len + 1 : 1;
}

/*
 * Backend on CPU a: take every new avail entry, parse each r->look requests
 * ahead of its copy and prefetch its block as r->pf says, then
 * serve it; store the used index after every r->pub requests and at the end
 * of the batch (the initiator refills while the batch goes on).
 */
static void *rq_backend(void *arg)
{
	struct rq_run *r = arg;
	struct vring_avail *av = r->m.vr.avail;
	uint16_t last = 0, used = 0;
	struct spin s = {0, 0};

	r->err = floor_pin(r->cpu);
	while (r->err == 0 && !r->stop) {
		uint16_t n = (uint16_t)(__atomic_load_n(&av->idx, __ATOMIC_ACQUIRE) - last);
		unsigned parsed = 0;

		if (n > RQ_SIZE) /* a broken initiator: serve what the ring can hold */
			n = RQ_SIZE;
		if (n == 0) {
			if (spin_expired(&s))
				r->err = -ETIMEDOUT;
			continue;
		}
		s = (struct spin){0, 0};
		for (unsigned i = 0; i < n; i++) {
			unsigned want = i + 1 + r->look < n ? i + 1 + r->look : n;

			for (; parsed < want; parsed++) {
				struct rq_req *q = &r->q[parsed];

				rq_parse(r, av->ring[(uint16_t)(last + parsed) & (RQ_SIZE - 1)], q);
				if (r->look > 0 && q->src != NULL)
					floor_pf_block(q->src, r->pf);
			}
			if (r->look > 0 && r->pf == FLOOR_PF_L2_SPLIT && i + r->look / 2 < parsed &&
			    r->q[i + r->look / 2].src != NULL)
				floor_pf_rest(r->q[i + r->look / 2].src);
			rq_serve(r, &r->q[i], used++);
			if (r->pub != 0 && (i + 1) % r->pub == 0 && i + 1 < n)
				__atomic_store_n(&r->m.vr.used->idx, used, __ATOMIC_RELEASE);
		}
		__atomic_store_n(&r->m.vr.used->idx, used, __ATOMIC_RELEASE);
		last = (uint16_t)(last + n);
	}
	return NULL;
}

/* Initiator: a read of a random block (r->bs) on slot, queued (published by the caller). */
static void rq_submit(struct rq_run *r, unsigned slot, uint16_t *avail_idx, uint64_t *rs)
{
	struct rq_shm *m = &r->m;

	m->hdr[slot].type = VIRTIO_BLK_T_IN;
	m->hdr[slot].ioprio = 0;
	m->hdr[slot].sector = (rnd(rs) % (r->buf->len / r->bs)) * (r->bs / 512);
	m->status[slot] = RQ_STATUS_UNSET;
	m->vr.avail->ring[*avail_idx & (RQ_SIZE - 1)] = (uint16_t)slot;
	(*avail_idx)++;
}

/*
 * Initiator: wait for completions, check and re-post each, publish the new
 * avail index; the requests reaped into *n.  0, -EIO (a wrong id or status),
 * or the backend's error / -ETIMEDOUT after SPIN_LIMIT_NS without one.
 */
static int rq_reap(struct rq_run *r, uint16_t *last_used, uint16_t *avail_idx, uint64_t *rs,
		   uint64_t *n)
{
	struct rq_shm *m = &r->m;
	struct spin s = {0, 0};
	uint16_t used;

	while ((used = __atomic_load_n(&m->vr.used->idx, __ATOMIC_ACQUIRE)) == *last_used) {
		int err = __atomic_load_n(&r->err, __ATOMIC_RELAXED);

		if (spin_expired(&s) || err != 0)
			return err != 0 ? err : -ETIMEDOUT;
	}
	for (; *last_used != used; (*last_used)++, (*n)++) {
		uint32_t id = m->vr.used->ring[*last_used & (RQ_SIZE - 1)].id;

		if (id >= r->qd || m->status[id] != VIRTIO_BLK_S_OK)
			return -EIO;
		rq_submit(r, id, avail_idx, rs);
	}
	__atomic_store_n(&m->vr.avail->idx, *avail_idx, __ATOMIC_RELEASE);
	return 0;
}

/* Initiator: post r->qd requests, one per slot. */
static void rq_fill(struct rq_run *r, uint16_t *avail_idx, uint64_t *rs)
{
	for (unsigned slot = 0; slot < r->qd; slot++)
		rq_submit(r, slot, avail_idx, rs);
	__atomic_store_n(&r->m.vr.avail->idx, *avail_idx, __ATOMIC_RELEASE);
}

/*
 * Packed ring backend: the chain at descriptor count c (header, data,
 * status), its header and buffers, the block it reads, as rq_parse().
 */
static void pq_parse(const struct rq_run *r, uint16_t c, struct rq_req *q)
{
	const struct vring_packed_desc *h = &r->m.pdesc[c & (RQ_SIZE - 1)],
				       *dd = &r->m.pdesc[(c + 1) & (RQ_SIZE - 1)],
				       *sd = &r->m.pdesc[(c + 2) & (RQ_SIZE - 1)];

	q->head = sd->id;
	rq_req_fill(r, q, h->addr, dd->addr, dd->len, sd->addr);
}

/* Packed ring backend: copy, status, the used descriptor at count u but its flags (returned). */
static uint16_t pq_serve(const struct rq_run *r, const struct rq_req *q, uint16_t u)
{
	struct vring_packed_desc *d = &r->m.pdesc[u & (RQ_SIZE - 1)];

	if (q->src != NULL && q->len == BLOCK)
		floor_copy_block(q->dst, q->src, r->pf_first);
	else if (q->src != NULL)
		memcpy(q->dst, q->src, q->len);
	if (q->status != NULL)
		*q->status = q->src != NULL ? VIRTIO_BLK_S_OK : VIRTIO_BLK_S_IOERR;
	d->id = q->head;
	d->len = q->src != NULL ? q->len + 1 : 1;
	return pk_used_bits(u, RQ_SIZE);
}

/* Chains available at count c (3 descriptors each, at most a ring's worth). */
static unsigned pq_available(const struct rq_run *r, uint16_t c)
{
	unsigned n = 0;

	while (n < RQ_SIZE / 3 &&
	       (__atomic_load_n(&r->m.pdesc[c & (RQ_SIZE - 1)].flags, __ATOMIC_ACQUIRE) &
		(PK_AVAIL | PK_USED)) == pk_avail_bits(c, RQ_SIZE)) {
		n++;
		c = (uint16_t)(c + 3);
	}
	return n;
}

/*
 * Packed ring backend on CPU a: as rq_backend(), taking every available
 * chain at once; each used descriptor is written in place, the flags of
 * each group's first (r->pub requests, or the batch) stored last, so the
 * initiator sees the group at once as it sees a split ring's used index.
 */
static void *pq_backend(void *arg)
{
	struct rq_run *r = arg;
	uint16_t last = 0, used = 0;
	struct spin s = {0, 0};

	r->err = floor_pin(r->cpu);
	while (r->err == 0 && !r->stop) {
		unsigned n = pq_available(r, last), parsed = 0;
		uint16_t first = used, first_flags = 0;

		if (n == 0) {
			if (spin_expired(&s))
				r->err = -ETIMEDOUT;
			continue;
		}
		s = (struct spin){0, 0};
		for (unsigned i = 0; i < n; i++) {
			unsigned want = i + 1 + r->look < n ? i + 1 + r->look : n;
			uint16_t flags;

			for (; parsed < want; parsed++) {
				struct rq_req *q = &r->q[parsed];

				pq_parse(r, (uint16_t)(last + 3 * parsed), q);
				if (r->look > 0 && q->src != NULL)
					floor_pf_block(q->src, r->pf);
			}
			if (r->look > 0 && r->pf == FLOOR_PF_L2_SPLIT && i + r->look / 2 < parsed &&
			    r->q[i + r->look / 2].src != NULL)
				floor_pf_rest(r->q[i + r->look / 2].src);
			flags = pq_serve(r, &r->q[i], used);
			if (used == first)
				first_flags = flags;
			else
				__atomic_store_n(&r->m.pdesc[used & (RQ_SIZE - 1)].flags, flags,
						 __ATOMIC_RELEASE);
			used = (uint16_t)(used + 3);
			if ((r->pub != 0 && (i + 1) % r->pub == 0) || i + 1 == n) {
				__atomic_store_n(&r->m.pdesc[first & (RQ_SIZE - 1)].flags,
						 first_flags, __ATOMIC_RELEASE);
				first = used;
			}
		}
		last = (uint16_t)(last + 3 * n);
	}
	return NULL;
}

/*
 * Packed initiator: a read of a random block (r->bs) on slot as a chain at
 * count *avail; the head's flags of the batch's first chain (*head, *head_flags)
 * are left to the caller, the others stored now.
 */
static void pq_submit(struct rq_run *r, unsigned slot, uint16_t *avail, uint16_t batch0,
		      uint16_t *head_flags, uint64_t *rs)
{
	struct rq_shm *m = &r->m;
	uint16_t c = *avail, id = (uint16_t)slot, flags;
	struct vring_packed_desc *d = m->pdesc;

	m->hdr[slot].type = VIRTIO_BLK_T_IN;
	m->hdr[slot].ioprio = 0;
	m->hdr[slot].sector = (rnd(rs) % (r->buf->len / r->bs)) * (r->bs / 512);
	m->status[slot] = RQ_STATUS_UNSET;
	d[(c + 1) & (RQ_SIZE - 1)] = (struct vring_packed_desc){
	    rq_gpa(m, m->data + (size_t)slot * r->bs), r->bs, id,
	    (uint16_t)(VRING_DESC_F_NEXT | VRING_DESC_F_WRITE | pk_avail_bits(c + 1, RQ_SIZE))};
	d[(c + 2) & (RQ_SIZE - 1)] = (struct vring_packed_desc){
	    rq_gpa(m, &m->status[slot]), 1, id,
	    (uint16_t)(VRING_DESC_F_WRITE | pk_avail_bits(c + 2, RQ_SIZE))};
	d[c & (RQ_SIZE - 1)].addr = rq_gpa(m, &m->hdr[slot]);
	d[c & (RQ_SIZE - 1)].len = sizeof(m->hdr[slot]);
	d[c & (RQ_SIZE - 1)].id = id;
	flags = (uint16_t)(VRING_DESC_F_NEXT | pk_avail_bits(c, RQ_SIZE));
	if (c == batch0)
		*head_flags = flags;
	else
		__atomic_store_n(&d[c & (RQ_SIZE - 1)].flags, flags, __ATOMIC_RELEASE);
	*avail = (uint16_t)(c + 3);
}

/* Packed initiator: make the batch that began at count batch0 visible. */
static void pq_publish(struct rq_run *r, uint16_t batch0, uint16_t avail, uint16_t head_flags)
{
	if (avail != batch0)
		__atomic_store_n(&r->m.pdesc[batch0 & (RQ_SIZE - 1)].flags, head_flags,
				 __ATOMIC_RELEASE);
}

/* Packed initiator: as rq_reap(), the used descriptors read in place. */
static int pq_reap(struct rq_run *r, uint16_t *last_used, uint16_t *avail, uint64_t *rs,
		   uint64_t *n)
{
	struct rq_shm *m = &r->m;
	struct spin s = {0, 0};
	uint16_t batch0 = *avail, head_flags = 0;
	const struct vring_packed_desc *d;

	for (;;) {
		d = &m->pdesc[*last_used & (RQ_SIZE - 1)];
		if ((__atomic_load_n(&d->flags, __ATOMIC_ACQUIRE) & (PK_AVAIL | PK_USED)) ==
		    pk_used_bits(*last_used, RQ_SIZE))
			break;
		int err = __atomic_load_n(&r->err, __ATOMIC_RELAXED);

		if (spin_expired(&s) || err != 0)
			return err != 0 ? err : -ETIMEDOUT;
	}
	do {
		uint16_t id = d->id;

		if (id >= r->qd || m->status[id] != VIRTIO_BLK_S_OK)
			return -EIO;
		*last_used = (uint16_t)(*last_used + 3);
		(*n)++;
		pq_submit(r, id, avail, batch0, &head_flags, rs);
		d = &m->pdesc[*last_used & (RQ_SIZE - 1)];
	} while ((__atomic_load_n(&d->flags, __ATOMIC_ACQUIRE) & (PK_AVAIL | PK_USED)) ==
		 pk_used_bits(*last_used, RQ_SIZE));
	pq_publish(r, batch0, *avail, head_flags);
	return 0;
}

/* Packed initiator: post r->qd requests, one per slot. */
static void pq_fill(struct rq_run *r, uint16_t *avail, uint64_t *rs)
{
	uint16_t batch0 = *avail, head_flags = 0;

	for (unsigned slot = 0; slot < r->qd; slot++)
		pq_submit(r, slot, avail, batch0, &head_flags, rs);
	pq_publish(r, batch0, *avail, head_flags);
}

/* Either layout's reap and fill (the initiator's loops are shared). */
static int rq_reap_any(struct rq_run *r, uint16_t *last_used, uint16_t *avail, uint64_t *rs,
		       uint64_t *n)
{
	return r->packed ? pq_reap(r, last_used, avail, rs, n)
			 : rq_reap(r, last_used, avail, rs, n);
}

static void rq_fill_any(struct rq_run *r, uint16_t *avail, uint64_t *rs)
{
	if (r->packed)
		pq_fill(r, avail, rs);
	else
		rq_fill(r, avail, rs);
}

/*
 * Initiator on the calling CPU: keep r->qd requests in flight for ms, reap
 * and re-post; *rate: median of the per-sample completion rates (the first
 * sample is a warm-up).
 */
static int rq_initiate(struct rq_run *r, unsigned ms, double *rate)
{
	uint64_t rs = 0x6a09e667f3bcc909ull, n = 0, checked = 0;
	uint64_t step = (uint64_t)ms * 1000000ull / RQ_SAMPLES, t = now_ns();
	double samples[RQ_SAMPLES];
	uint16_t avail_idx = 0, last_used = 0;
	unsigned k = 0;
	int rc;

	rq_fill_any(r, &avail_idx, &rs);
	while (k < RQ_SAMPLES) {
		if ((rc = rq_reap_any(r, &last_used, &avail_idx, &rs, &n)) != 0)
			return rc;
		if (n - checked >= 256) {
			uint64_t now = now_ns();

			checked = n;
			if (now - t >= step) {
				samples[k++] = (double)n * 1e9 / (double)(now - t);
				n = checked = 0;
				t = now;
			}
		}
	}
	*rate = median(samples + 1, RQ_SAMPLES - 1);
	return 0;
}

/* Initiator: as rq_initiate() until *stop, the requests completed so far in *count. */
static int rq_initiate_count(struct rq_run *r, uint64_t *count, const volatile sig_atomic_t *stop)
{
	uint64_t rs = 0x6a09e667f3bcc909ull, n = 0;
	uint16_t avail_idx = 0, last_used = 0;
	int rc = 0;

	rq_fill_any(r, &avail_idx, &rs);
	while (!*stop && (rc = rq_reap_any(r, &last_used, &avail_idx, &rs, &n)) == 0)
		__atomic_store_n(count, n, __ATOMIC_RELAXED);
	return rc;
}

/*
 * One run: a fresh ring, the backend thread on r->cpu, the initiator here,
 * for ms (*rate) or, with count, until *stop.
 */
static int rq_run(struct rq_run *r, unsigned ms, double *rate, uint64_t *count,
		  const volatile sig_atomic_t *stop)
{
	pthread_t t;
	int rc;

	free(r->m.base);
	if ((rc = rq_shm_init(&r->m, r->qd, r->packed, r->bs)) != 0)
		return rc;
	r->stop = 0;
	r->err = 0;
	if ((rc = pthread_create(&t, NULL, r->packed ? pq_backend : rq_backend, r)) != 0)
		return -rc;
	rc = count != NULL ? rq_initiate_count(r, count, stop) : rq_initiate(r, ms, rate);
	r->stop = 1;
	pthread_join(t, NULL);
	return rc != 0 ? rc : r->err;
}

static int rq_run_once(struct rq_run *r, unsigned ms, double *rate)
{
	return rq_run(r, ms, rate, NULL, NULL);
}

/*
 * Short trials of every look-ahead and publish interval, two interleaved
 * rounds (a disturbance then hits one trial of a variant, not all); the
 * variant with the highest summed rate wins.  A block under 4 KiB is hinted
 * whole (512 B to either level) and copied without asking for its lines
 * first: the 4 KiB hints would fetch lines no request reads.
 */
static int rq_pick(struct rq_run *r, unsigned trial_ms, struct floor_ring_res *out)
{
	/* the best hint of each cache level in floor_copy4k_rate's trials */
	static const enum floor_pf pfs4k[] = {FLOOR_PF_L1_512, FLOOR_PF_L2_4K, FLOOR_PF_L2_SPLIT},
				   pfs512[] = {FLOOR_PF_L1_512, FLOOR_PF_L2_512, FLOOR_PF_NONE};
	static const unsigned looks[] = {1, 2, 4, 8}, pubs[] = {0, 16, 8};
	enum {
		NL = sizeof(looks) / sizeof(looks[0]),
		NP = sizeof(pubs) / sizeof(pubs[0]),
		NF = sizeof(pfs4k) / sizeof(pfs4k[0])
	};
	_Static_assert(sizeof(pfs512) == sizeof(pfs4k), "one hint list length");
	const enum floor_pf *pfs = r->bs == BLOCK ? pfs4k : pfs512;
	unsigned firsts = r->bs == BLOCK ? 2 : 1;
	double sum[NL][NP][NF][2] = {{{{0}}}}, best = -1, x;
	int rc;

	for (unsigned round = 0; round < 2; round++)
		for (unsigned i = 0; i < NL; i++)
			for (unsigned j = 0; j < NP; j++)
				for (unsigned f = 0; f < NF; f++)
					for (unsigned c = 0; c < firsts; c++) {
						r->look = looks[i];
						r->pub = pubs[j];
						r->pf = pfs[f];
						r->pf_first = c;
						if ((rc = rq_run_once(r, trial_ms, &x)) != 0)
							return rc;
						sum[i][j][f][c] += x;
					}
	for (unsigned i = 0; i < NL; i++)
		for (unsigned j = 0; j < NP; j++)
			for (unsigned f = 0; f < NF; f++)
				for (unsigned c = 0; c < firsts; c++)
					if (sum[i][j][f][c] > best) {
						best = sum[i][j][f][c];
						out->look = looks[i];
						out->pub = pubs[j];
						out->pf = pfs[f];
						out->pf_first = c;
					}
	return 0;
}

/*
 * A run's state for qd requests of bs bytes in flight, the initiator pinned
 * to cpu_b; NULL: *rc says why.
 */
static struct rq_run *rq_new(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned qd,
			     bool packed, unsigned bs, int *rc)
{
	struct rq_run *r;

	*rc = -EINVAL;
	if (cpu_a == cpu_b || qd == 0 || qd > FLOOR_RING_MAX_QD || buf->len < BLOCK || bs < 512 ||
	    bs > BLOCK || bs % 512 != 0)
		return NULL;
	if ((*rc = floor_pin(cpu_b)) != 0)
		return NULL;
	*rc = -ENOMEM;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	*rc = 0;
	r->buf = buf;
	r->qd = qd;
	r->bs = bs;
	r->cpu = cpu_a;
	r->packed = packed;
	return r;
}

/* Pick the backend's best variant in trials of trial_ms each and set it in r. */
static int rq_pick_set(struct rq_run *r, unsigned trial_ms, struct floor_ring_res *out)
{
	int rc = rq_pick(r, trial_ms, out);

	if (rc == 0) {
		r->look = out->look;
		r->pub = out->pub;
		r->pf = out->pf;
		r->pf_first = out->pf_first;
	}
	return rc;
}

static void rq_free(struct rq_run *r)
{
	free(r->m.base);
	free(r);
}

int floor_ring_rate(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned qd, bool packed,
		    unsigned bs, unsigned ms, struct floor_ring_res *out)
{
	unsigned trial_ms = ms / 8 < 25 ? 25 : ms / 8 > 100 ? 100 : ms / 8;
	struct rq_run *r;
	int rc;

	if (ms < 100)
		return -EINVAL;
	if ((r = rq_new(cpu_a, cpu_b, buf, qd, packed, bs, &rc)) == NULL)
		return rc;
	if ((rc = rq_pick_set(r, trial_ms, out)) == 0)
		rc = rq_run_once(r, ms, &out->rate);
	rq_free(r);
	return rc;
}

int floor_ring_count(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned qd, bool packed,
		     unsigned bs, struct floor_ring_res *picked, uint64_t *count,
		     const volatile sig_atomic_t *stop)
{
	struct rq_run *r;
	int rc;

	if ((r = rq_new(cpu_a, cpu_b, buf, qd, packed, bs, &rc)) == NULL)
		return rc;
	if ((rc = rq_pick_set(r, FLOOR_RING_LOOP_TRIAL_MS, picked)) == 0)
		rc = rq_run(r, 0, NULL, count, stop);
	picked->rate = 0;
	rq_free(r);
	return rc;
}

/* ---- memory ---- */

double floor_dram_ns(const struct floor_buf *b, unsigned n)
{
	size_t pages = b->len / BLOCK, cur;
	size_t *perm = malloc(pages * sizeof(*perm));
	uint64_t s = 0x9e3779b97f4a7c15ull, t0, t;

	if (perm == NULL || n == 0)
		return free(perm), 0.0;
	/* one random cycle through every page (Sattolo), a different line in each */
	for (size_t i = 0; i < pages; i++)
		perm[i] = i;
	for (size_t i = pages - 1; i > 0; i--) {
		size_t j = rnd(&s) % i, x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}
	for (size_t i = 0; i < pages; i++) {
		size_t from = perm[i] * BLOCK + (perm[i] % (BLOCK / LINE)) * LINE;
		size_t to =
		    perm[(i + 1) % pages] * BLOCK + (perm[(i + 1) % pages] % (BLOCK / LINE)) * LINE;

		memcpy(b->base + from, &to, sizeof(to));
	}
	cur = perm[0] * BLOCK + (perm[0] % (BLOCK / LINE)) * LINE;
	free(perm);
	t0 = now_ns();
	for (unsigned i = 0; i < n; i++)
		memcpy(&cur, b->base + cur, sizeof(cur));
	t = now_ns() - t0;
	__asm__ volatile("" : : "r"(cur));
	return (double)t / n;
}

static size_t *random_blocks(const struct floor_buf *b, unsigned n)
{
	size_t *off = malloc(n * sizeof(*off));
	uint64_t s = 0x2545f4914f6cdd1dull;

	for (unsigned i = 0; off != NULL && i < n; i++)
		off[i] = (size_t)(rnd(&s) % (b->len / BLOCK)) * BLOCK;
	return off;
}

double floor_copy4k_ns(const struct floor_buf *b, unsigned n, bool pf_first)
{
	size_t *off = random_blocks(b, n);
	double batch[RTT_BATCHES];
	unsigned per = n / RTT_BATCHES;

	if (off == NULL || per == 0)
		return free(off), 0.0;
	for (unsigned k = 0, i = 0; k < RTT_BATCHES; k++) {
		uint64_t t0 = now_ns();

		for (unsigned j = 0; j < per; j++, i++) {
			serialize_loads();
			floor_copy_block(dst[i & 31], b->base + off[i], pf_first);
		}
		serialize_loads();
		batch[k] = (double)(now_ns() - t0) / per;
	}
	free(off);
	return median_batch(batch);
}

static double copy_rate_lookahead(const struct floor_buf *b, const size_t *off, unsigned n,
				  unsigned look, enum floor_pf pf, bool pf_first)
{
	uint64_t t0 = now_ns();

	for (unsigned i = 0; i < n; i++) {
		if (look > 0 && i + look < n)
			floor_pf_block(b->base + off[i + look], pf);
		if (pf == FLOOR_PF_L2_SPLIT && i + look / 2 < n)
			floor_pf_rest(b->base + off[i + look / 2]);
		floor_copy_block(dst[i & 31], b->base + off[i], pf_first);
	}
	return (double)n * 1e9 / (double)(now_ns() - t0);
}

/* A copy loop's hints: look-ahead distance, hint kind, block asked for before its copy. */
struct copy_cfg {
	unsigned look;
	enum floor_pf pf;
	bool pf_first;
};

/* Copy-rate trials per variant in copy4k_pick(), each on the same copies. */
#define COPY_PICK_ROUNDS 2
/* Batches of the picked variant's measurement (floor_copy4k_rate: their median). */
#define COPY_RATE_BATCHES 9
/* floor_copy4k_rate(n): each trial of the pick copies n / this many blocks. */
#define COPY_PICK_SHARE 8

/* The look-ahead distances copy4k_pick() tries with each hint. */
static const unsigned copy_looks[] = {1, 2, 4};
#define COPY_NLOOKS (sizeof(copy_looks) / sizeof(copy_looks[0]))
/* With and without the block asked for first: no hint, or each hint at each distance. */
#define COPY_VARIANTS (2 * (1 + COPY_NLOOKS * (FLOOR_PF_COUNT - 1)))

/* Every variant copy4k_pick() tries (COPY_VARIANTS of them). */
static unsigned copy_variants(struct copy_cfg *v)
{
	unsigned nv = 0;

	for (int c = 0; c < 2; c++) {
		v[nv++] = (struct copy_cfg){0, FLOOR_PF_NONE, c};
		for (unsigned k = 0; k < COPY_NLOOKS; k++)
			for (int pf = FLOOR_PF_NONE + 1; pf < FLOOR_PF_COUNT; pf++)
				v[nv++] = (struct copy_cfg){copy_looks[k], pf, c};
	}
	return nv;
}

/*
 * Pick the copy's hints: every variant copies the same n blocks, in
 * COPY_PICK_ROUNDS interleaved rounds (a moment of the VM's slower mode then
 * hits one trial of a variant, not all of it); the highest summed rate wins.
 * Into the first level, the first 512 B one ahead is usually best (whole
 * blocks fill the line-fill buffers and stall the prefetch instructions);
 * into the second level, the whole block or its two halves.  *top_trial: the
 * fastest single trial, which is not a rate to report: as the largest of
 * COPY_VARIANTS * COPY_PICK_ROUNDS noisy samples it sits above what any
 * variant keeps (floor_copy4k_rate() measures the pick again).
 */
static struct copy_cfg copy4k_pick(const struct floor_buf *b, const size_t *off, unsigned n,
				   double *top_trial)
{
	struct copy_cfg v[COPY_VARIANTS];
	double sum[COPY_VARIANTS] = {0}, top = 0.0;
	unsigned nv = copy_variants(v), best = 0;

	for (unsigned round = 0; round < COPY_PICK_ROUNDS; round++)
		for (unsigned k = 0; k < nv; k++) {
			double r =
			    copy_rate_lookahead(b, off, n, v[k].look, v[k].pf, v[k].pf_first);

			sum[k] += r;
			if (r > top)
				top = r;
		}
	for (unsigned k = 1; k < nv; k++)
		if (sum[k] > sum[best])
			best = k;
	if (top_trial != NULL)
		*top_trial = top;
	return v[best];
}

double floor_copy4k_rate(const struct floor_buf *b, unsigned n, struct floor_copy_res *res)
{
	size_t *off = random_blocks(b, n);
	unsigned per = n / COPY_RATE_BATCHES;
	double batch[COPY_RATE_BATCHES];
	struct copy_cfg c;

	if (off == NULL || per < 64)
		return free(off), 0.0;
	c = copy4k_pick(b, off, n / COPY_PICK_SHARE, &res->top_trial);
	for (unsigned k = 0; k < COPY_RATE_BATCHES; k++)
		batch[k] =
		    copy_rate_lookahead(b, off + (size_t)k * per, per, c.look, c.pf, c.pf_first);
	free(off);
	res->look = c.look;
	res->pf = c.pf;
	res->pf_first = c.pf_first;
	res->rate = median(batch, COPY_RATE_BATCHES);
	return res->rate;
}

int floor_copy4k_loop(const struct floor_buf *b, uint64_t *count, const volatile sig_atomic_t *stop)
{
	enum { N = 1u << 20, TRIAL = 1u << 16, CHECK = 1024 };
	size_t *off = random_blocks(b, N);
	struct copy_cfg c = {0, FLOOR_PF_NONE, false};
	uint64_t done = 0;

	if (off == NULL)
		return -ENOMEM;
	c = copy4k_pick(b, off, TRIAL, NULL);
	fprintf(stderr, "femu-floor: copy loop: look-ahead %u, hint %d, block first %d\n", c.look,
		(int)c.pf, (int)c.pf_first);
	while (!*stop) {
		for (unsigned i = 0; i < N; i++) {
			if (c.look > 0)
				floor_pf_block(b->base + off[(i + c.look) % N], c.pf);
			if (c.pf == FLOOR_PF_L2_SPLIT)
				floor_pf_rest(b->base + off[(i + c.look / 2) % N]);
			floor_copy_block(dst[i & 31], b->base + off[i], c.pf_first);
			__atomic_store_n(count, ++done, __ATOMIC_RELAXED);
			if (i % CHECK == CHECK - 1 && *stop)
				break;
		}
	}
	free(off);
	return 0;
}

void floor_copy4k_soak(const struct floor_buf *b, unsigned secs, double *rates)
{
	enum { CHUNK = 4096 };
	uint64_t s = 0x9e3779b97f4a7c15ull;
	size_t nblk = b->len / BLOCK;
	size_t off[CHUNK];
	uint64_t start = now_ns();

	for (unsigned k = 0; k < secs; k++)
		rates[k] = 0;
	for (;;) {
		uint64_t t;
		unsigned sec;

		for (unsigned i = 0; i < CHUNK; i++)
			off[i] = (size_t)(rnd(&s) % nblk) * BLOCK;
		for (unsigned i = 0; i < CHUNK; i++) {
			if (i + 1 < CHUNK)
				for (unsigned l = 0; l < 512; l += LINE)
					__builtin_prefetch(b->base + off[i + 1] + l, 0, 3);
			memcpy(dst[i & 31], b->base + off[i], BLOCK);
		}
		t = now_ns();
		sec = (unsigned)((t - start) / 1000000000ull);
		if (sec >= secs)
			return;
		rates[sec] += CHUNK;
	}
}

/* ---- CPU availability ---- */

void floor_cpu_loss(unsigned ms, struct floor_loss *out)
{
	uint64_t start = now_ns(), prev = start, end = start + (uint64_t)ms * 1000000ull;
	uint64_t lost = 0, n1 = 0, n10 = 0, max = 0, t;
	double secs;

	do {
		uint64_t gap;

		t = now_ns();
		gap = t - prev;
		prev = t;
		if (gap > 1000) {
			n1++;
			lost += gap;
			n10 += gap > 10000;
			if (gap > max)
				max = gap;
		}
	} while (t < end);
	secs = (double)(t - start) / 1e9;
	out->lost_pct = 100.0 * (double)lost / (double)(t - start);
	out->gaps_per_s = (double)n1 / secs;
	out->gaps10_per_s = (double)n10 / secs;
	out->max_gap_us = (double)max / 1e3;
}
