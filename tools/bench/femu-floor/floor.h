/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * floor.h - what this machine allows any vhost-user-blk backend, measured
 * without one: the floor under femud's figures in tools/bench/sweep and
 * tools/bench/model.
 *
 *  - cross-CPU round trip: one cache line written on CPU A, seen on CPU B,
 *    answered through a second line (a request and its completion cannot
 *    take less);
 *  - DRAM: dependent random loads over a buffer the size of the backend;
 *  - a bare split-ring request at QD1: only the ring and request memory a
 *    split virtqueue request must move between the CPUs, plus the copy;
 *  - a bare split ring at high queue depth: the same with QD requests in
 *    flight, the backend taking every new avail entry at once;
 *  - a bare packed ring at QD1 and at high queue depth: the same requests in
 *    a packed virtqueue (virtio 1.2), each layout's own floor;
 *  - 4 KiB copy: a random 4 KiB block of that buffer copied into a small
 *    buffer, one at a time (what a QD1 read costs the backend) and
 *    overlapped with look-ahead prefetch (what bounds one core at high QD);
 *  - CPU availability: a busy loop's gaps (time the CPU was taken away,
 *    e.g. by a hypervisor).
 *
 * Units: ns, bytes, per-second rates.  Nothing here touches vhost.
 */
#ifndef FEMU_FLOOR_H
#define FEMU_FLOOR_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floor_buf {
	uint8_t *base;
	size_t len; /* bytes, a multiple of 4096 */
};

/* Map, fault in (THP when available, as femud's backend) and fill len bytes. */
int floor_buf_init(struct floor_buf *b, size_t len);
void floor_buf_fini(struct floor_buf *b);

/* Median round trip of a cache-line ping-pong between cpu_a and cpu_b (ns). */
int floor_rtt_ns(int cpu_a, int cpu_b, unsigned rounds, double *rtt_ns);

/*
 * The least a split-virtqueue request can cost at QD1 (ns, median of
 * batches), with the memory laid out as virtio's split ring and the Linux
 * driver lay it out: CPU b (the initiator) writes a request's header line,
 * an avail ring entry and the avail index; CPU a (a bare backend) sees the
 * index, reads the entry and the header, copies a random 4 KiB block of buf
 * (its lines asked for first, as femud copies: the faster of the two ways
 * floor_copy4k_ns() measures), writes the status byte, a used entry and the
 * used index; CPU b sees the
 * index, reads the entry and the status.  No descriptors (they stay cached
 * when unchanged), no validation, no model, no statistics.
 */
int floor_ring_qd1_ns(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned rounds,
		      double *ns);

/*
 * The same request with virtio-blk's layout as femu-bench and the Linux
 * driver build it (ns, median of batches): the backend reads the avail entry,
 * three descriptors, the header line (type, sector), copies the block into
 * the initiator's 4 KiB buffer, writes the status byte (a line of its own),
 * the used entry and index, then, after a full barrier, reads used_event as
 * EVENT_IDX's call decision needs; the initiator reads avail_event after
 * publishing (its kick decision) and writes used_event after each
 * completion, as a polling driver does.  No validation beyond the lengths,
 * no model, no statistics; avail_event is never written (a polling backend
 * need not).  What it costs beyond floor_ring_qd1_ns() is the request
 * layout's own, for any backend.
 */
int floor_ring_qd1_virtio_ns(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned rounds,
			     double *ns);

/*
 * The same virtio-blk request in a packed virtqueue (virtio 1.2, 2.8; ns,
 * median of batches): the initiator writes the chain's data and status
 * descriptors and then the head's (its flags last) in the descriptor ring,
 * reads the device event area after a full barrier (its kick decision),
 * waits for the used descriptor in place of the head and reads its id and
 * the status byte, and keeps the driver event (descriptor-event mode) a ring
 * ahead as femu-bench --packed does; the backend waits for the head's flags,
 * reads the three descriptors and the header, copies the block, writes the
 * status byte and the used descriptor (flags last), then reads the driver
 * event area after a full barrier (its call decision).  The packed layout's
 * floor next to floor_ring_qd1_virtio_ns().
 */
int floor_ring_qd1_packed_ns(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned rounds,
			     double *ns);

/* Which QD1 ring floor_ring_qd1_count() runs. */
enum floor_qd1 {
	FLOOR_QD1_BARE,	  /* floor_ring_qd1_ns() */
	FLOOR_QD1_VIRTIO, /* floor_ring_qd1_virtio_ns() */
	FLOOR_QD1_PACKED, /* floor_ring_qd1_packed_ns() */
};

/*
 * The QD1 ring of floor_ring_qd1_ns(), floor_ring_qd1_virtio_ns() or
 * floor_ring_qd1_packed_ns() (kind) without end: stores the number of requests completed so far in
 * *count after each one (a counter an outside sampler reads, e.g. in a shared file), until *stop is
 * set (a signal handler), then returns 0 once the backend thread ended, or -errno (-ETIMEDOUT: a
 * side silent for 10 s; -EINVAL: cpu_a == cpu_b).  Stopped and continued as a process
 * (SIGSTOP/SIGCONT), it resumes where it was: tools/bench/turns alternates it with a backend under
 * test.
 */
int floor_ring_qd1_count(int cpu_a, int cpu_b, const struct floor_buf *buf, enum floor_qd1 kind,
			 uint64_t *count, const volatile sig_atomic_t *stop);

/*
 * The most 4 KiB random reads per second any split-virtqueue backend on CPU a
 * can serve an initiator on CPU b that keeps qd requests in flight.  The
 * memory is a real split ring (1024 entries) and request memory laid out as
 * femu-bench lays it out: pre-built 3-descriptor chains (header, 4 KiB data,
 * status byte, as the Linux driver chains them), headers and status bytes
 * packed in arrays, the data buffers.  The initiator writes a header (random
 * block of buf), resets the status byte and writes an avail entry per
 * request, stores the avail index once per batch of completions it reaped,
 * and checks each completion's id and status.  The backend takes every new
 * avail entry at once; for each it reads the avail entry, the three
 * descriptors and the header, translates the three addresses (one region,
 * bounds-checked), checks the type and the sector range, copies the block
 * into the data buffer, writes the status byte and a used entry; it stores
 * the used index at the end of each batch and, when that is faster, every
 * 16 or 8 requests within it.  Requests are parsed `look` requests ahead of
 * their copy and their block hinted then (enum floor_pf, as
 * floor_copy4k_rate).  The best look-ahead (1, 2, 4, 8), publish interval
 * (batch, 16, 8), hint (first 512 B to L1, 4 KiB to L2 at once or in two
 * halves) and copy (memcpy alone, or the block's lines asked for first) in
 * short trials (ms / 8, 25..100 ms, two
 * rounds) is then measured for ms.  No notifications (both sides poll), no model, no statistics.
 * packed: the same in a packed virtqueue of 1024 descriptors: each request a
 * 3-descriptor chain written at the next avail position (the head's flags of
 * each reaped batch's first chain stored last, as femu-bench --packed
 * publishes), the backend finding the available chains by their head flags,
 * writing each used descriptor in place with the flags of each publish
 * group's first stored last (the packed ring's used index).
 * bs: the bytes each request reads, 4096 for the figures above; a smaller
 * multiple of 512 (512 B reads) makes each data buffer and descriptor that
 * long and hints each block whole (512 B to L1, to L2, or not at all).  0,
 * -EINVAL (same CPUs, qd not 1..FLOOR_RING_MAX_QD, bs not 512..4096 in steps
 * of 512, ms < 100), -ETIMEDOUT (a partner silent for 10 s) or another -errno.
 */
#define FLOOR_RING_MAX_QD 256u
/* How a 4 KiB block is prefetched ahead of its copy. */
enum floor_pf {
	FLOOR_PF_NONE,
	FLOOR_PF_L1_512, /* first 512 B, prefetcht0 (the hardware prefetcher streams the rest) */
	FLOOR_PF_L1_4K,	 /* all 64 lines, prefetcht0 */
	FLOOR_PF_L2_512, /* first 512 B, prefetcht1 */
	FLOOR_PF_L2_4K,	 /* all 64 lines, prefetcht1 */
	/* the first 2 KiB at the look-ahead, the rest at half of it, prefetcht1 (femud, pmd/vq.h)
	 */
	FLOOR_PF_L2_SPLIT,
	FLOOR_PF_COUNT
};
const char *floor_pf_name(enum floor_pf pf);
struct floor_ring_res {
	double rate;	  /* requests/s: median of 19 samples of ms / 20 each */
	unsigned look;	  /* requests parsed ahead of the copy */
	unsigned pub;	  /* used index stored every pub requests, 0: once per batch */
	enum floor_pf pf; /* how a block parsed ahead was hinted */
	bool pf_first;	  /* each copy first asks for its block's 64 lines into L2 */
};
int floor_ring_rate(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned qd, bool packed,
		    unsigned bs, unsigned ms, struct floor_ring_res *out);

/* Each trial of floor_ring_count()'s pick, ms (144 trials: about 4 s). */
#define FLOOR_RING_LOOP_TRIAL_MS 25u

/*
 * floor_ring_rate()'s split (or packed) ring at queue depth qd (requests of bs
 * bytes) without end: the
 * backend's variant picked in short trials (FLOOR_RING_LOOP_TRIAL_MS each,
 * what it picked in *picked; rate left 0), then the initiator on the calling
 * thread (pinned to cpu_b) stores the number of requests completed so far in
 * *count after each batch it reaps, until *stop is set (a signal handler).
 * Stopped and continued as a process (SIGSTOP/SIGCONT), it resumes where it
 * was: tools/bench/turns alternates it with femud at the same queue depth.
 * 0, -EINVAL (same CPUs, qd not 1..FLOOR_RING_MAX_QD), -ETIMEDOUT (a side
 * silent for 10 s), -EIO (a wrong completion) or another -errno.
 */
int floor_ring_count(int cpu_a, int cpu_b, const struct floor_buf *buf, unsigned qd, bool packed,
		     unsigned bs, struct floor_ring_res *picked, uint64_t *count,
		     const volatile sig_atomic_t *stop);

/* Mean latency of n dependent loads at random lines of b (ns). */
double floor_dram_ns(const struct floor_buf *b, unsigned n);

/*
 * Time of one random 4 KiB copy out of b, copies not overlapped (ns, median
 * of batches): memcpy alone, or (pf_first) with the block's 64 lines asked
 * for into the second level first, as femud copies (ftl/fm_data.c).
 */
double floor_copy4k_ns(const struct floor_buf *b, unsigned n, bool pf_first);

/* What floor_copy4k_rate() picked and measured. */
struct floor_copy_res {
	double rate;	  /* copies/s: the picked hints, median of 9 batches of n / 9 copies */
	double top_trial; /* copies/s: the fastest single trial of the pick (biased high) */
	unsigned look;	  /* copies hinted ahead, 0: none */
	enum floor_pf pf; /* the hint */
	bool pf_first;	  /* each copy first asks for its block's 64 lines into L2 */
};

/*
 * Random 4 KiB copies per second with look-ahead prefetch: the look-ahead
 * distances and hints (each copy with and without its block asked for
 * first) tried in two interleaved rounds of n / 8 copies each, the best sum
 * picked, then measured again: the median of 9 batches of n / 9 copies.
 * Not the fastest trial: as the largest of 64 noisy samples it reads high
 * (on the 2-CPU VMs the speed swings within seconds).  Returns res->rate
 * (0 when n < 576 or out of memory).
 */
double floor_copy4k_rate(const struct floor_buf *b, unsigned n, struct floor_copy_res *res);

/*
 * floor_copy4k_rate()'s copy without end, on the calling thread: short trials
 * pick the best hints, then random 4 KiB copies (a cycle of 2^20 random
 * blocks) store the number done so far in *count after each one, until
 * *stop is set (a signal handler).  0, or -ENOMEM.  Stopped and continued as
 * a process, it resumes where it was: tools/bench/turns alternates it with
 * femud at high queue depth.
 */
int floor_copy4k_loop(const struct floor_buf *b, uint64_t *count,
		      const volatile sig_atomic_t *stop);

/*
 * Random 4 KiB copies with the first 512 B prefetched one copy ahead, for
 * secs whole seconds: the copies done in each second into rates[0..secs).
 * Shows whether the rate out of a freshly faulted buffer changes with time.
 */
void floor_copy4k_soak(const struct floor_buf *b, unsigned secs, double *rates);

/* Busy loop for ms milliseconds on the calling CPU. */
struct floor_loss {
	double lost_pct;     /* time in gaps > 1 us, percent */
	double gaps_per_s;   /* gaps > 1 us */
	double gaps10_per_s; /* gaps > 10 us */
	double max_gap_us;
};
void floor_cpu_loss(unsigned ms, struct floor_loss *out);

/* Pin the calling thread to cpu; 0 or -errno. */
int floor_pin(int cpu);

#endif /* FEMU_FLOOR_H */
