/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq.h - one virtqueue as a poller serves it: split here (vq.c), packed
 * behind the same calls (vq_packed.c; each call tests the layout once).
 *
 * Owns: consuming the avail ring, handing requests to blk_req, posting
 * completions to the used ring (inline when due, else from a per-queue
 * min-heap ordered by due time), kick suppression and re-arming, call
 * decisions.
 * A struct pmd_vq is written only by the poller that owns it while it is
 * attached (control code touches it only before attach / after detach).
 * Units: times in ns of pmd_clock.
 */
#ifndef PMD_VQ_H
#define PMD_VQ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/virtio_ring.h>
#include <rte_common.h>
#include <rte_vhost.h>

#include "pmd/blk_req.h"
#include "pmd/pmd_stats.h"
#include "pmd/vq_chain.h"
#include "pmd/vq_tune.h"

/* A completion is "late" when posted more than this after its due time. */
#define PMD_LATE_NS 1000
/* Largest split virtqueue served (virtio 1.1 allows 32768). */
#define PMD_VQ_MAX_SIZE 32768
/*
 * Requests taken from one queue in one sweep, and the data bytes after which
 * a sweep stops early (~50 us of copying) so that due completions of this
 * and other queues are posted on time.  128 measured faster than 32, 64
 * and 96 at 4 KiB (a QD32 sweep grows past 64 by the requests refilled
 * meanwhile) and no slower at 512 B; at 4 KiB the byte bound ends a sweep
 * at 128 requests either way.
 */
#define PMD_VQ_BURST 128
#define PMD_VQ_BURST_BYTES (512u << 10)
/*
 * With a model that has a prefetch op, a sweep peeks this many requests
 * ahead of the one it serves and hands the model a hint for their data, so
 * that the memory latency of several requests overlaps.  3 measured
 * fastest of 3 to 6.
 */
#ifndef PMD_VQ_LOOKAHEAD
#define PMD_VQ_LOOKAHEAD 3
#endif
/*
 * A read's look-ahead hint for more than PMD_VQ_HINT_SPLIT_BYTES of data is
 * given in two parts: its first PMD_VQ_HINT_SPLIT_BYTES when the request is
 * PMD_VQ_LOOKAHEAD ahead, the rest when it is PMD_VQ_HINT_REST_AHEAD ahead.
 * A whole 4 KiB block asked for at once stalls the sweep until miss buffers
 * free up (64 prefetches behind the three blocks already on their way); in
 * two parts the misses of consecutive blocks interleave, and a small first
 * part holds the sweep least where the copy that follows needs it first.
 */
#ifndef PMD_VQ_HINT_SPLIT_BYTES
#define PMD_VQ_HINT_SPLIT_BYTES 1024u
#endif
#define PMD_VQ_HINT_REST_AHEAD 2
/*
 * The packed ring's rest goes out one request ahead: its ring lines, read
 * from the other CPU at the touch, hold miss buffers the split ring's
 * static descriptors do not, so the rest waits until the copy is closer.
 */
#define PMD_VQP_HINT_REST_AHEAD 1
/*
 * The near hint of large reads, the alternative of their hint trial
 * (vq_tune.h): a read's first PMD_VQ_HINT_NEAR_BYTES into the first-level
 * cache (fm_data_prefetch_near()) when it is PMD_VQ_LOOKAHEAD ahead, nothing
 * more: the hardware prefetcher streams the rest once the copy starts.  A
 * few lines only, because first-level hints stall the sweep once the
 * line-fill buffers run out.  fm_data_prefetch_near()'s own bound, so that
 * what a slot notes as hinted is what a flat read's hint covers.
 */
#define PMD_VQ_HINT_NEAR_BYTES ((uint32_t)FM_DATA_PREFETCH_NEAR_MAX)
/*
 * Near hints go out this many requests ahead (and the touch
 * PMD_VQ_TOUCH_PAST_LOOK beyond): they ask for a few lines of each block
 * only, so more blocks must be on their way to keep as many misses in
 * flight, and the copy of a block finds only its first lines close.
 */
#define PMD_VQ_LOOKAHEAD_NEAR 8
/*
 * The peek behind a data hint loads the request's header and data
 * descriptor, lines the driver wrote since femud last read them: at
 * PMD_VQ_LOOKAHEAD ahead those loads stall the sweep.  Requests this many
 * ahead get their header and data descriptor lines asked for, and where
 * they are is noted in their hint slot: the peek then reads the header and
 * the length there instead of walking the chain again.  6 measured best of
 * 5 to 14.
 */
#define PMD_VQ_TOUCH_AHEAD 6
/* The touch runs this many requests ahead of the hints, whatever their distance. */
#define PMD_VQ_TOUCH_PAST_LOOK (PMD_VQ_TOUCH_AHEAD - PMD_VQ_LOOKAHEAD)
/*
 * After a sweep whose requests moved fewer than PMD_VQ_SMALL_REQ_BYTES each
 * on average (data and status), the next sweep gives near hints
 * (fm_data_prefetch_near(): a 512 B read whole into the first-level cache)
 * PMD_VQ_LOOKAHEAD_SMALL requests ahead (and touches PMD_VQ_TOUCH_PAST_LOOK
 * beyond): a small read's copy starts on its first line, with no stream for
 * a second-level hint to feed, and as many requests must be on their way as
 * near hints of large reads keep.  Whether such sweeps hint at all, each
 * queue's hint trial decides (vq_tune.h): on some processors the hints of
 * small reads stall more than they save.
 */
#define PMD_VQ_SMALL_REQ_BYTES 1024u
#define PMD_VQ_LOOKAHEAD_SMALL PMD_VQ_LOOKAHEAD_NEAR
#define PMD_VQ_TOUCH_AHEAD_SMALL (PMD_VQ_LOOKAHEAD_SMALL + PMD_VQ_TOUCH_PAST_LOOK)
/*
 * A packed ring's small requests are hinted this many ahead instead: each
 * of them brings ring lines from the other CPU that take miss buffers of
 * their own, and data hints further ahead only make those lines wait.
 */
#define PMD_VQP_LOOKAHEAD_SMALL 2
/*
 * Hint state kept per avail position, by position % this (a power of two
 * above the longest touch distance, and the packed cursor's one past it).
 */
#define PMD_VQ_HINT_SLOTS 16
/*
 * A burst whose look-ahead reaches its end is extended by requests the driver
 * added meanwhile when its requests so far moved more than this many data
 * bytes each on average (bytes).
 */
#ifndef PMD_VQ_EXTEND_MIN_AVG_BYTES
#define PMD_VQ_EXTEND_MIN_AVG_BYTES 1024u
#endif
/*
 * 1: when the avail index moved, prefetch the descriptor and header lines of
 * the chain served last before reading the avail entry (a driver with a LIFO
 * free list reuses it: at QD1 its two transfers overlap instead of following
 * each other); 0: off, to measure without it.
 */
#ifndef PMD_VQ_GUESS
#define PMD_VQ_GUESS 1
#endif
/*
 * Within a sweep, the used index is stored each time this many data bytes
 * were moved since the last store (and at the sweep's end, with the call if
 * one is due), so that the driver refills the ring while the sweep goes on:
 * every 16 requests at 4 KiB, never within a sweep of 512 B requests (there
 * the extra used index transfers cost more than the wait).  0: only at the
 * sweep's end.
 */
#ifndef PMD_VQ_PUBLISH_BYTES
#define PMD_VQ_PUBLISH_BYTES (64u << 10)
#endif
/*
 * A sweep also publishes each time it took 1/PMD_VQ_PUBLISH_SHARE of the
 * requests the queue's previous sweep took (at least one): a driver that
 * keeps fewer than 32 requests of 4 KiB in flight reaches the byte bound
 * only at a sweep's end, and refills only after it.  Split rings only for
 * requests of PMD_VQ_SMALL_REQ_BYTES or more on average: each store moves the
 * used index's line to the driver, which small requests' sweeps cannot
 * afford.  Packed rings (PMD_VQP_PUBLISH_SHARE) publish by a flags store to
 * a line femud just wrote, at every size.
 */
#define PMD_VQ_PUBLISH_SHARE 2u
#define PMD_VQP_PUBLISH_SHARE 4u
/*
 * With EVENT_IDX, while a poller polls, avail_event is set one behind the
 * next avail index to serve and rewritten only once the queue has moved
 * this many entries past it (it sits in a cache line the driver reads at
 * every publish).  The driver's kick test stays false as long as its
 * publishes stay within 65536 - size entries of the value written; with a
 * take of at most PMD_VQ_BURST that holds while
 * slack + PMD_VQ_BURST + 2 * size <= 65536, so queues larger than
 * PMD_VQ_AVAIL_EVENT_MAX_SIZE have it rewritten at every sweep that took
 * something.  0: at every such sweep for every queue.
 */
#ifndef PMD_VQ_AVAIL_EVENT_SLACK
#define PMD_VQ_AVAIL_EVENT_SLACK 0x4000u
#endif
#define PMD_VQ_AVAIL_EVENT_MAX_SIZE 16384u

/* A completion waiting for its due time. */
struct pmd_vq_pending {
	uint64_t due_ns;
	uint8_t *status;
	uint32_t used_len;
	uint16_t head;
	uint8_t st;
};

/* How a queue is set up (from rte_vhost at queue start). */
struct pmd_vq_setup {
	union {
		struct vring_desc *desc;
		struct vring_packed_desc *desc_packed; /* packed: the descriptor ring */
	};
	union {
		struct vring_avail *avail;
		struct vring_packed_desc_event *driver_event; /* packed */
	};
	union {
		struct vring_used *used;
		struct vring_packed_desc_event *device_event; /* packed */
	};
	uint16_t size;	     /* entries, power of two */
	uint16_t last_avail; /* next avail entry to serve (packed: position | wrap << 15) */
	uint16_t last_used;  /* used->idx to continue from (packed: position | wrap << 15) */
	bool packed;	     /* VIRTIO_F_RING_PACKED negotiated (vq_packed.h) */
	int callfd;	     /* < 0: no interrupts (poll queue) */
	int kickfd;	     /* never read by the poller; < 0: none */
	bool event_idx;
	bool indirect;
	struct rte_vhost_memory *mem; /* guest memory map, owned by the caller */
	const struct pmd_blk_target *target;
	bool on_node; /* allocate the queue's state with rte_malloc on node */
	int node;
	/* inflight tracking (VHOST_USER_PROTOCOL_F_INFLIGHT_SHMFD) */
	bool inflight;		  /* track every request in the frontend's region */
	bool log;		  /* VHOST_F_LOG_ALL: mark every write into guest memory */
	int vid;		  /* rte_vhost device, for the inflight calls */
	uint16_t qid;		  /* its vring index */
	const uint16_t *resubmit; /* heads (packed: inflight entries) to replay, oldest first */
	struct rte_vhost_inflight_info_packed *inflight_packed; /* packed: the region's queue */
	uint16_t nresubmit;
};

struct pmd_vq {
	/* hot: poller-owned */
	union {
		struct vring_desc *desc;
		struct vring_packed_desc *desc_packed; /* packed */
	};
	union {
		struct vring_avail *avail;
		struct vring_packed_desc_event *driver_event; /* packed */
	};
	union {
		struct vring_used *used;
		struct vring_packed_desc_event *device_event; /* packed */
	};
	struct rte_vhost_memory *mem;
	const struct pmd_blk_target *target;
	struct pmd_vq_pending *heap; /* min-heap by due_ns, size entries */
	uint32_t nheap;
	uint16_t size;
	uint16_t mask;
	uint16_t last_avail;
	uint16_t used_idx;	    /* shadow of used->idx */
	uint16_t signalled_used;    /* split: used_idx when the last call decision was made */
	uint16_t called_used;	    /* split: used_idx the last call (or recheck) covered */
	uint16_t avail_event;	    /* value last written to avail_event */
	uint16_t avail_event_slack; /* rewrite it once this far behind (0: when it moved) */
	int callfd;
	int kickfd; /* drained by control code to count kicks; an adaptive poller polls it */
	uint64_t recheck_ns; /* when to look at the driver's event again (0: no need; vq_impl.h) */
	uint64_t near_trial_tsc; /* end of the near trial's last measured sweep (0: none yet) */
	bool event_idx;
	bool indirect;
	bool broken;
	bool inflight;
	bool prefetch;	/* the model has a prefetch op: peek ahead */
	bool hinting;	/* this sweep peeks ahead (prefetch, and the hint trial's say) */
	uint8_t look;	/* hint distance of this sweep (PMD_VQ_LOOKAHEAD, _SMALL, _NEAR or
			   PMD_VQP_LOOKAHEAD_SMALL) */
	bool hint_near; /* this sweep's read hints are near ones (PMD_VQ_HINT_NEAR_BYTES) */
	bool small;	/* this sweep follows one of small requests (PMD_VQ_SMALL_REQ_BYTES) */
	uint16_t publish_every; /* a sweep publishes after that many (PMD_VQ_PUBLISH_SHARE) */
	bool idle;		/* the model has an idle op: call it on empty sweeps */
	bool rte_mem;		/* state allocated with rte_malloc */
	bool model_busy;	/* the model's idle op has work of its own left */
	uint16_t nresubmit;	/* heads in resubmit[] */
	uint16_t resubmit_pos;	/* next one to replay */
	uint16_t *resubmit;
	/*
	 * what the look-ahead hinted of the read at each avail position (by
	 * position % PMD_VQ_HINT_SLOTS): its first part with the rest still to
	 * hint, or all of it (then it is handed over with FM_REQ_PREFETCHED)
	 */
	struct pmd_vq_hint_slot {
		union {
			struct pmd_chain_hint rest;	  /* VQ_HINT_FIRST: the second part */
			struct pmd_chain_touched touched; /* VQ_HINT_TOUCHED */
		};
		uint16_t idx;  /* avail position of the request (packed: its ring position) */
		uint8_t state; /* enum pmd_vq_hint_state (vq_impl.h) */
	} hint[PMD_VQ_HINT_SLOTS];
	/* the chain served last: the likely next one (PMD_VQ_GUESS) */
	uint16_t guess_head;
	const void *guess_hdr; /* host address of its header */
	int vid;
	uint16_t qid;
	bool log;	   /* the frontend logs dirty pages: sweeps mark their writes (vq_log.h) */
	bool packed;	   /* a packed ring: vq_packed.c serves it (tested once per call) */
	uint64_t kick_tag; /* adaptive polling: the poller's poll on kickfd, 0 = none */
	struct pmd_vq_tune tune;      /* whether small requests' sweeps hint (vq_tune.h) */
	struct pmd_vq_tune tune_near; /* whether large requests' sweeps hint near (vq_tune.h) */
	struct pmd_vq_stats st;	      /* written by the owning poller only (pmd_stats.h) */
	/* control-owned identity */
	unsigned poller;
	const char *name; /* device socket path, for log lines */
	/*
	 * packed only (vq_packed.c): last_avail and used_idx are ring positions
	 * (0..size-1) there, with these wrap counters
	 */
	struct pmd_vq_packed {
		bool avail_wrap;
		bool used_wrap;
		/*
		 * ring descriptors the used position moved past, wrapping, and
		 * their count at the last call decision and at the last call (or
		 * recheck): a sweep can move it whole laps on a small ring
		 */
		uint32_t used_descs;
		uint32_t signalled_descs;
		uint32_t called_descs;
		uint16_t *num;	 /* ring descriptors of the buffer with each id */
		uint16_t *entry; /* inflight entry of the buffer with each id */
		struct vring_packed_desc
		    *replay; /* a replayed chain copied out of the inflight region */
		struct rte_vhost_inflight_info_packed *inflight;
		/*
		 * the look-ahead (vq_packed.c): its cursor is la_ahead chains
		 * (la_desc ring descriptors) past last_avail, at ring position
		 * la_pos under la_wrap; the chain at last_avail is the seq-th
		 * taken, and the one k ahead has hint slot (seq + k) % slots
		 */
		uint16_t la_pos;
		bool la_wrap;
		uint16_t la_ahead;
		uint16_t la_desc;
		uint16_t seq;
		uint32_t completed; /* used descriptors written, wrapping */
		/* a used descriptor whose flags are stored at the next publish */
		bool pub_pending;
		uint16_t pub_pos;
		uint16_t pub_flags;
	} pk;
};

/* Allocate a queue (not on the hot path); NULL on allocation failure. */
struct pmd_vq *pmd_vq_create(const struct pmd_vq_setup *s);
void pmd_vq_free(struct pmd_vq *q);

/*
 * Serve a queue once: post due completions, take up to PMD_VQ_BURST new
 * requests, publish the used index, keep kicks suppressed and send at most
 * one call; when no request was taken and the model has an idle op, call it.
 * Returns the number of requests taken plus completions posted.
 * scratch is a per-poller chain buffer.
 */
unsigned pmd_vq_sweep_split(struct pmd_vq *q, uint64_t now_ns, struct pmd_chain *scratch);
unsigned pmd_vqp_sweep(struct pmd_vq *q, uint64_t now_ns, struct pmd_chain *scratch); /* packed */

/* The layout is tested here, once per sweep: the split sweep's code stays the split ring's only. */
static inline unsigned pmd_vq_sweep(struct pmd_vq *q, uint64_t now_ns, struct pmd_chain *scratch)
{
	if (unlikely(q->packed))
		return pmd_vqp_sweep(q, now_ns, scratch);
	return pmd_vq_sweep_split(q, now_ns, scratch);
}

/*
 * A queue starts serving (its poller has just taken it): send the driver one
 * call, whatever the notification fields say.  A queue starts at indexes
 * another backend reached (a femud killed and restarted, a reconnect, a
 * restart after a vring message), and that backend may have published used
 * entries and gone before its call: the driver would wait for it forever,
 * and with EVENT_IDX every later call decision would be judged against a
 * used_event the driver wrote before those entries.  The call tells the
 * driver of every used entry up to the start index, so signalled_used is
 * true from here on; a spurious call costs the driver one look at the used
 * index (virtio 1.2, 2.7.10: the driver must handle spurious notifications).
 * Poll queues (no call fd) get nothing.
 */
void pmd_vq_notify_start(struct pmd_vq *q);

/*
 * Queue stop: serve the replays of a previous backend's requests not taken
 * yet (rte_vhost lists them once per connection: a restart of this queue
 * would not get them again, and the driver would wait for them forever),
 * post every pending completion now and notify the guest.  scratch is a
 * chain buffer (the poller's).
 */
void pmd_vq_flush(struct pmd_vq *q, uint64_t now_ns, struct pmd_chain *scratch);

/*
 * Notifications for adaptive polling (poller_sleep.c).  While a poller polls,
 * kicks stay suppressed (pmd_vq_notify_suppress; pmd_vq_create starts so).
 * Before it sleeps it re-arms them with pmd_vq_notify_arm: without
 * EVENT_IDX VRING_USED_F_NO_NOTIFY is cleared, with it avail_event is set to
 * the next avail index to serve (the driver's next publish then kicks), and a
 * full barrier orders that store before the avail index is read again.  It
 * returns true when requests are already waiting (published before the
 * driver could see the re-armed flag): the poller must not sleep then.
 */
bool pmd_vq_notify_arm(struct pmd_vq *q);
void pmd_vq_notify_suppress(struct pmd_vq *q);

/*
 * Where q stands, read from another thread while its poller runs (atomic
 * loads of poller-owned fields: a consistent value each, not a consistent
 * set; the used index before the avail index, so their difference never
 * reads below zero): the next avail and used ring indexes (packed: ring
 * positions, without their wrap counters) and the requests taken and not
 * completed (pending completions plus replays not yet taken).
 */
void pmd_vq_position(const struct pmd_vq *q, uint16_t *avail_next, uint16_t *used_next,
		     uint32_t *pending);

/*
 * The indexes to give back with rte_vhost_set_vring_base() at queue stop:
 * split the avail and used indexes, packed each position with its wrap
 * counter in bit 15 (what GET_VRING_BASE reports).
 */
void pmd_vq_base(const struct pmd_vq *q, uint16_t *last_avail, uint16_t *last_used);

/* Due time (ns) of the earliest pending completion; UINT64_MAX when none. */
static inline uint64_t pmd_vq_next_due(const struct pmd_vq *q)
{
	return q->nheap > 0 ? q->heap[0].due_ns : UINT64_MAX;
}

/*
 * May the poller sleep as far as this queue goes: no call decision waits for
 * its recheck, a kick will wake it (the frontend set a kick fd), no replay
 * of in-flight requests is left and the model has no work of its own
 * pending.  A broken queue takes no request.
 */
static inline bool pmd_vq_may_sleep(const struct pmd_vq *q)
{
	if (q->recheck_ns != 0)
		return false; /* a call decision to look at again first (vq_impl.h) */
	if (q->broken)
		return !q->model_busy;
	return q->kickfd >= 0 && q->resubmit_pos >= q->nresubmit && !q->model_busy;
}

#endif /* PMD_VQ_H */
