/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fm_model.h - the one interface between a transport (pmd/) and a device
 * model (ftl/).
 *
 * A transport validates a request against the device (sector range, data
 * length, direction), translates the guest buffers to host virtual addresses
 * and hands the model a struct fm_req.  The model copies the data at once and
 * says when the request would have finished on the modelled device.  The
 * transport posts the completion no earlier than that time.
 *
 * Nothing here knows about virtio, and nothing here knows about NAND.  This
 * header is the whole contract and needs no library: pmd/ includes it
 * without linking ftl/.  The models themselves are found through
 * fm_model_registry.h; the data movers models share are in fm_data.h.
 *
 * Units: offsets and lengths in bytes, times in nanoseconds of a monotonic
 * clock owned by the transport (it passes now_ns to every call).
 */
#ifndef FM_MODEL_H
#define FM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Request operations a model serves. */
enum fm_op {
	FM_OP_READ = 0,
	FM_OP_WRITE,
	FM_OP_FLUSH,
	FM_OP_DISCARD,
	FM_OP_WRITE_ZEROES,
};

/* FM_REQ_UNMAP: write-zeroes may deallocate (virtio-blk WRITE_ZEROES_FLAG_UNMAP). */
#define FM_REQ_UNMAP (1u << 0)
/*
 * FM_REQ_PREFETCHED (READ): the transport already handed this request's data
 * range to the model's prefetch op ahead of the call; a model may skip
 * prefetching it again.  A hint only: the data is read the same either way.
 */
#define FM_REQ_PREFETCHED (1u << 1)

/* One host-virtual data segment (already translated from guest memory). */
struct fm_iov {
	void *base;
	uint32_t len; /* bytes */
};

/* Maximum segments in one request handed to a model. */
#define FM_REQ_MAX_IOV 256

/*
 * A request, already validated by the transport:
 *  - offset + len lies inside the device (bytes);
 *  - for READ/WRITE the iov lengths add up to len exactly;
 *  - offset and len are multiples of 512.
 */
struct fm_req {
	enum fm_op op;
	uint32_t flags;		  /* FM_REQ_* */
	uint64_t offset;	  /* bytes from the start of the device */
	uint64_t len;		  /* bytes */
	const struct fm_iov *iov; /* READ/WRITE only */
	uint32_t iovcnt;
};

/* One "key=value" device option the daemon did not consume itself. */
struct fm_kv {
	const char *key;
	const char *val;
};

/*
 * What a model gets to configure itself.  The daemon fills every field it
 * knows; a model may derive capacity_bytes (e.g. from NAND geometry with
 * op_pcent) in configure() when capacity_set is false.
 */
struct fm_undo; /* ftl/fm_undo.h */

struct fm_model_config {
	uint64_t capacity_bytes; /* exposed capacity, bytes */
	bool capacity_set;	 /* the user gave devsz_mb */
	uint32_t blk_size;	 /* logical block size, bytes (512 or 4096) */
	int mbe_node;		 /* NUMA node for the model's tables, -1 = any */
	const struct fm_kv *kv;	 /* model-specific keys */
	unsigned nkv;
	void *priv; /* set by configure(): the model's parsed parameters */

	/*
	 * Persistent medium (mem_path); all NULL / false for a volatile device.
	 *  undo:  the medium's sector undo log; the model writes data through
	 *         fm_undo_write() / fm_undo_zero() so that a process killed
	 *         mid-copy leaves each sector old or new (ftl/fm_undo.h).
	 *  state: state_size() bytes inside the medium for the model's state
	 *         (tables, pointers, counters); it holds no pointers, only
	 *         indices, so it may be mapped anywhere.
	 *  state_fresh: the state area was never used: initialise it; else
	 *         adopt it, check it and repair it or refuse it (create()).
	 *  note:  create() may leave a one-line remark for the log (a repair).
	 */
	struct fm_undo *undo;
	void *state;
	bool state_fresh;
	char note[256];
};

/* Status a model returns from submit(). */
enum fm_status {
	FM_S_OK = 0,
	FM_S_IOERR = 1,
	FM_S_UNSUPP = 2,
};

/*
 * The base of every model instance, one per device.  A model embeds it in
 * its own struct and gets back to that struct with FM_MODEL_CONTAINER (as
 * SPDK's to_blk_dev); the transport only ever holds a struct fm_model *.
 */
struct fm_snap; /* ftl/fm_snap.h */

struct fm_model {
	const struct fm_model_ops *ops; /* set by create() */
	/*
	 * Non-NULL when every read of the model is a plain copy out of this
	 * region (device byte offset o at flat_read + o), complete at once, no
	 * model state read or written (NoSSD): the transport then copies every
	 * read itself (fm_data_read()) and hints it (fm_data_prefetch()), and
	 * submit() never gets FM_OP_READ (such a model may answer it
	 * FM_S_UNSUPP); one read path, the transport's.  NULL for any other
	 * model.  Set by create(), constant after.  Writes and every other
	 * operation still go through submit().
	 */
	const void *flat_read;
	/*
	 * An image snapshot in progress (ftl/fm_snap.h), NULL otherwise: the
	 * model calls fm_snap_before_write() before it changes data.  Set and
	 * cleared by the daemon only while every poller is parked.
	 */
	struct fm_snap *snap;
};

/* The model's own struct around its embedded base: FM_MODEL_CONTAINER(m, struct nossd, base). */
/*
 * The request path's functions (pollers, sweeps, chain walks, model
 * submits) go into one text section the linker places ahead of the rest,
 * together: their placement then does not move with control-path code.
 */
#define FM_HOT_TEXT __attribute__((section(".text.hot.femud")))

#define FM_MODEL_CONTAINER(m, type, member) ((type *)((char *)(m)-offsetof(type, member)))

/*
 * Where a model reports its counters: one call per counter, in the order
 * they should be shown; key is a short lower_case name.
 */
struct fm_stats_sink {
	void (*u64)(void *arg, const char *key, uint64_t v);
	void (*f64)(void *arg, const char *key, double v);
	void *arg;
};

struct fm_model_ops {
	const char *name; /* "nossd", "bbssd" */
	int femu_mode;	  /* FEMU's femu_mode value */

	/*
	 * Parse and check the model's keys in cfg->kv and derive what the
	 * model decides (capacity when !capacity_set).  On error return a
	 * negative errno and write a message naming the key and the value to
	 * err.  Must not allocate device memory; may set cfg->priv, which
	 * create() takes over or release() frees.
	 */
	int (*configure)(struct fm_model_config *cfg, char *err, size_t errlen);

	/*
	 * Optional (NULL = configure() allocates nothing): free what
	 * configure() left in cfg->priv and set it to NULL.  The owner of
	 * cfg calls it when create() will not be called; harmless when
	 * cfg->priv is already NULL.
	 */
	void (*release)(struct fm_model_config *cfg);

	/*
	 * Create the model over the device's data region (capacity_bytes long,
	 * already allocated, pre-faulted and on the right node).  Takes
	 * ownership of cfg->priv (and leaves it NULL) whether it succeeds or
	 * fails.
	 */
	int (*create)(struct fm_model_config *cfg, void *data, struct fm_model **out, char *err,
		      size_t errlen);

	void (*destroy)(struct fm_model *m);

	/*
	 * Serve a request: move the data now, and return in *due_ns the
	 * absolute time (the now_ns clock) at which the request completes
	 * on the modelled device; a value <= now_ns means "complete now".
	 * Called concurrently from several threads unless single_writer.
	 */
	enum fm_status (*submit)(struct fm_model *m, const struct fm_req *req, uint64_t now_ns,
				 uint64_t *due_ns);

	/*
	 * Report the model's counters to sink.  For a single_writer model the
	 * transport calls it on the thread that calls submit() (so counters
	 * need no atomics); otherwise it must only read what is safe to read
	 * while submit() runs elsewhere.
	 */
	void (*stats)(struct fm_model *m, const struct fm_stats_sink *sink);

	/* Optional (NULL = none): zero the counters stats() reports; same thread rule. */
	void (*stats_reset)(struct fm_model *m);

	/*
	 * Optional (NULL = none): change parameters of a running model, e.g.
	 * timings, applied from the next request.  Called on the thread that
	 * calls submit() for a single_writer model (never concurrently with
	 * it).  All or nothing: every key is checked before anything changes;
	 * an unknown key, a key that cannot change at runtime or a value out
	 * of range gets a negative errno and a message naming key and value.
	 */
	int (*set)(struct fm_model *m, const struct fm_kv *kv, unsigned nkv, char *err,
		   size_t errlen);

	/*
	 * Optional (NULL = none): a hint that a request op (FM_OP_READ or
	 * FM_OP_WRITE) of [offset, offset + len) will be submitted soon, so
	 * that the model can start fetching the data it will touch (the
	 * transport calls it for requests queued behind the one it serves,
	 * to overlap their memory latency).  offset + len lies inside the
	 * device; len may be anything (the model bounds the work).  Must not
	 * change the model's state, take a lock or block: it may be called
	 * concurrently whatever single_writer says, and the request may never
	 * be submitted.
	 */
	void (*prefetch)(struct fm_model *m, enum fm_op op, uint64_t offset, uint64_t len);

	/*
	 * Optional (NULL = none), used only when single_writer is true: the
	 * transport calls it on the thread that calls submit(), whenever a
	 * sweep of one of the device's queues finds no new request, so that
	 * work the device does on its own (background GC) goes on while no
	 * request arrives.  It is called very often (every idle sweep of
	 * every queue): it must return at once when there is nothing to do
	 * and bound its work (a few us) when there is.  Returns true while
	 * such work is left (e.g. a background GC in progress): a transport
	 * that sleeps when idle must keep calling it instead of sleeping.
	 */
	bool (*idle)(struct fm_model *m, uint64_t now_ns);

	/*
	 * Optional (NULL = the model keeps no state that must persist): bytes
	 * of state the model keeps in a persistent medium, for a configured
	 * cfg (after configure()).
	 */
	size_t (*state_size)(const struct fm_model_config *cfg);

	/*
	 * Optional: the model's options that fix the layout of its state, as
	 * "key=value,key=value" (recorded in a persistent medium's header; a
	 * medium made with other values is refused, naming the key).
	 */
	void (*layout)(const struct fm_model_config *cfg, char *buf, size_t len);

	/*
	 * true: the transport calls submit() and idle() of one model from one
	 * thread at a time (it puts all of the device's queues on one
	 * poller), so the model may keep mutable state per request without a
	 * lock (the FTL does).  false: submit() may run on several pollers
	 * at once and must not change shared state (NoSSD).  prefetch() may
	 * run concurrently either way.
	 */
	bool single_writer;
};

#endif /* FM_MODEL_H */
