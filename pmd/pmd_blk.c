/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd_blk.c - vhost-user-blk devices on rte_vhost: socket registration,
 * vhost-user control hooks, the queue lifecycle (pmd_blk_create,
 * pmd_blk_close) and reading a device's counters (pmd_blk_stats).
 *
 * Queues start from vring_state_changed(enable=1), never from new_device
 * (which rte_vhost fires only when every vring it has heard of is ready).
 * A queue is stopped, synchronously, before rte_vhost can invalidate what
 * the poller uses: GET_VRING_BASE (pre hook: the reply then carries the
 * index femud stored with rte_vhost_set_vring_base), SET_MEM_TABLE and
 * GET/SET_INFLIGHT_FD, SET_LOG_BASE and a SET_FEATURES that turns dirty
 * logging on or off (pre hook; restarted from the post hook), RESET_OWNER,
 * vring disable (callfd / kickfd replaced, SET_VRING_ENABLE 0) and
 * destroy_connection.  All of this runs under one control mutex; pollers
 * never take it.
 *
 * A socket accepts more than one frontend, but a queue index is driven by one
 * connection at a time (queue_claim): a second connection's queue waits
 * until the first gives it back, and the queues of a connection whose
 * frontend hung up stop, writing nothing more to its memory, as soon as
 * another connection starts a queue.
 *
 * A live migration on one host is two connections in turn: the source's
 * queues log their writes while the frontend logs (a queue reads LOG_ALL
 * when it starts, so a toggle restarts it), stop at its GET_VRING_BASE with
 * every completion posted and logged, and give the queue back; the
 * destination's queue, refused until then, starts from its SET_VRING_BASE.
 *
 * Every hook of rte_vhost's thread is timed by its watchdog (ctl_watch.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_log.h>
#include <rte_vhost.h>

#include "pmd/blk_config.h"
#include "pmd/ctl_watch.h"
#include "pmd/inflight_file.h"
#include "pmd/mem_fault.h"
#include "pmd/pmd.h"
#include "pmd/pmd_log.h"
#include "pmd/poller.h"
#include "pmd/vhu_ctx.h"
#include "pmd/vq.h"
#include "pmd/vq_guard.h"

#define PMD_MAX_DEVS 64
#define PMD_MAX_VID 1024 /* rte_vhost's RTE_MAX_VHOST_DEVICE */

_Static_assert(PMD_STATS_MAX_QUEUES == PMD_MAX_QUEUES, "snapshot holds every queue");
_Static_assert(PMD_STATS_PATH_LEN == sizeof(((struct sockaddr_un *)0)->sun_path), "path");

/* Control-owned counters of one device (written under ctl_lock only). */
struct pmd_blk_stats {
	uint64_t connections;		       /* accepted so far */
	unsigned live_conns;		       /* connected now */
	struct pmd_vq_stats q[PMD_MAX_QUEUES]; /* of queues already stopped */
	uint64_t kicks[PMD_MAX_QUEUES];	       /* drained from the kick eventfds */
};

struct pmd_blk {
	struct pmd_blk_params params;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct pmd_blk_target target;
	struct virtio_blk_config cfg;
	bool closing;
	bool registered;
	unsigned rr_base; /* first poller of the round robin */
	struct pmd_blk_stats stats;
	struct pmd_iff_orphans orphans; /* inflight files an earlier femud left */
};

/*
 * One frontend connection (rte_vhost vid) to a device.  A device accepts
 * more than one: a frontend that reconnects may be accepted before
 * rte_vhost has processed the previous connection's hang-up.
 */
struct pmd_conn {
	struct pmd_blk *dev;
	int vid;
	uint64_t restart_mask; /* queues stopped by a pre hook, restarted by the post hook */
	bool mem_refused;      /* the memory table failed pmd_guard_mem: no queue starts */
	bool mem_broken; /* its guest memory faulted (file shrank): closed at its next message */
	uint32_t inflight_qsize; /* entries per queue of the inflight region (SET_INFLIGHT_FD) */
	uint64_t inflight_size;	 /* its bytes (mmap_size) */
	size_t inflight_page;	 /* the page size rte_vhost maps its file in */
	bool inflight_made;	 /* made_dev/made_ino: the file GET_INFLIGHT_FD made on c */
	bool inflight_new;	 /* the mapped region is that file: no earlier backend used it */
	dev_t inflight_made_dev;
	ino_t inflight_made_ino;
	struct pmd_iff *iff_made; /* the named file femud made at GET_INFLIGHT_FD */
	struct pmd_iff *iff;	  /* the named file c's region is (femud's), or NULL */
	pid_t pid;		  /* its frontend process (SO_PEERCRED), 0: unknown */
	uint64_t adopted;	  /* queues whose area came from an orphan (inflight_file.h) */
	uint16_t set_base[PMD_MAX_QUEUES]; /* the frontend's last SET_VRING_BASE */
	uint64_t ring_gpa[PMD_MAX_QUEUES]; /* its last SET_VRING_ADDR log address */
	bool superseded;  /* a newer connection took over its rings: no queue starts again */
	int sock_fd;	  /* its accepted socket (from the connect hook), -1: unknown */
	uint64_t claimed; /* queues it drives: started, and not given back (queue_claim) */
	/*
	 * Per packed queue started with dirty logging from a region its
	 * frontend brought back: that queue's area as it was then (malloc'd,
	 * inflight_qsize entries), for a destination that starts the same ring
	 * while this connection still drives it (inflight_take_stale_source).
	 */
	void *back_area[PMD_MAX_QUEUES];
	uint64_t waiting; /* queues enabled while another connection drove them (queue_claim) */
	struct pmd_vq *vq[PMD_MAX_QUEUES];
	struct pmd_ring_id ring[PMD_MAX_QUEUES]; /* avail ring of each running queue */
	struct rte_vhost_memory *mem[PMD_MAX_QUEUES];
};

static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *iff_dir = PMD_IFF_DIR; /* inflight files (inflight_file.h) */
static struct pmd_blk *devs[PMD_MAX_DEVS];
static struct pmd_conn *by_vid[PMD_MAX_VID];
static unsigned rr_next;

static struct pmd_conn *conn_of_vid(int vid)
{
	if (vid < 0 || vid >= PMD_MAX_VID)
		return NULL;
	return by_vid[vid];
}

/*
 * The connections of dev other than skip, one per call from *vid on (start
 * at 0); NULL after the last.  Callers hold ctl_lock or run on rte_vhost's
 * thread, the only writers of by_vid.
 */
static struct pmd_conn *dev_conn_next(const struct pmd_blk *dev, const struct pmd_conn *skip,
				      int *vid)
{
	while (*vid < PMD_MAX_VID) {
		struct pmd_conn *o = by_vid[(*vid)++];

		if (o != NULL && o != skip && o->dev == dev)
			return o;
	}
	return NULL;
}

/*
 * Number of kicks the guest sent since the last call, read from the kick
 * eventfd (control path only; pollers never look at it).
 */
static uint64_t kicks_drain(int kickfd)
{
	return pmd_guard_eventfd_take(kickfd);
}

/* ---- queue lifecycle (ctl_lock held) ---- */

static unsigned queue_poller(const struct pmd_blk *dev, uint16_t qid)
{
	unsigned n = pmd_poller_count();

	if (dev->target.ops->single_writer)
		return dev->rr_base % n;
	return (dev->rr_base + qid) % n;
}

/*
 * Stop a running queue: take it from its poller (posting its pending
 * completions, unless abandon: its ring belongs to another connection now)
 * and store its indexes with rte_vhost.
 */
static void queue_halt(struct pmd_conn *c, uint16_t qid, bool abandon)
{
	uint16_t la, lu;
	struct pmd_vq *q;

	if (qid >= PMD_MAX_QUEUES || c->vq[qid] == NULL)
		return;
	q = c->vq[qid];
	if (abandon)
		pmd_poller_abandon(q);
	else
		pmd_poller_detach(q);
	c->dev->stats.kicks[qid] += kicks_drain(q->kickfd);
	if (PMD_CTR_READ(q->st.call_errors) > 0)
		PMD_LOG(WARNING,
			"%s queue %u: %" PRIu64 " calls could not be sent (call fd write failed)",
			c->dev->path, qid, PMD_CTR_READ(q->st.call_errors));
	pmd_vq_base(q, &la, &lu);
	rte_vhost_set_vring_base(c->vid, qid, la, lu);
	pmd_vq_stats_add(&c->dev->stats.q[qid], &q->st);
	c->vq[qid] = NULL;
	c->ring[qid].valid = false;
	pmd_vq_free(q);
	free(c->mem[qid]);
	c->mem[qid] = NULL;
}

static void queue_stop(struct pmd_conn *c, uint16_t qid)
{
	queue_halt(c, qid, false);
}

static void queue_stop_all(struct pmd_conn *c, uint64_t *stopped)
{
	uint16_t qid;

	for (qid = 0; qid < PMD_MAX_QUEUES; qid++) {
		if (c->vq[qid] == NULL)
			continue;
		if (stopped != NULL)
			*stopped |= 1ULL << qid;
		queue_stop(c, qid);
	}
}

/*
 * Set the used position of a packed queue's inflight area to pos (bit 15:
 * wrap counter): rte_vhost moves it by each completion from where it stands.
 */
static void inflight_packed_at(struct rte_vhost_inflight_info_packed *in, uint16_t pos)
{
	in->used_idx = pos & 0x7fff;
	in->old_used_idx = in->used_idx;
	in->used_wrap_counter = (uint8_t)(pos >> 15);
	in->old_used_wrap_counter = in->used_wrap_counter;
}

/*
 * Did the driver ever write the descriptor slot just before pos (the used
 * position of an area taken from an inflight file)?  A ring in use up to pos
 * has; a new guest's ring (zeroed by its driver, nothing made available yet)
 * has not: a new guest that happens to reuse the ring's address and base
 * must not take a dead frontend's position.
 */
static bool ring_written_before(const struct vring_packed_desc *ring, uint16_t size, uint16_t pos)
{
	struct vring_packed_desc d;

	memcpy(&d, &ring[((pos & 0x7fff) + size - 1) & (size - 1)], sizeof(d));
	return d.addr != 0 || d.len != 0 || d.id != 0 || d.flags != 0;
}

/* A packed queue area as new (as rte_vhost makes it), at position pos. */
static void inflight_packed_reset(struct rte_vhost_inflight_info_packed *in, uint16_t size,
				  uint16_t pos)
{
	pmd_iff_packed_area_init(in, size);
	in->version = 1; /* rte_vhost marks a new area so when the queue's kick fd comes */
	inflight_packed_at(in, pos);
}

/*
 * A packed queue whose area came from an inflight file (inflight_file.h)
 * starts where that area says, unless the ring in guest memory was never
 * used up to there: then the area is made new at the frontend's base and
 * nothing is replayed.  False when refused.
 */
static bool inflight_adopted_ok(struct pmd_conn *c, uint16_t qid, const struct pmd_vq_setup *s,
				struct rte_vhost_inflight_info_packed *in)
{
	if (!(c->adopted & (1ULL << qid)) ||
	    ring_written_before(s->desc_packed, s->size, in->old_used_idx))
		return true;
	PMD_LOG(WARNING,
		"%s queue %u (connection %d): the ring in guest memory was never used up to the "
		"inflight file's position (a new guest on the same ring): starts at the "
		"frontend's base, nothing replayed",
		c->dev->path, qid, c->vid);
	c->adopted &= ~(1ULL << qid);
	inflight_packed_reset(in, s->size, s->last_used);
	return false;
}

static void back_area_forget(struct pmd_conn *c, uint16_t qid)
{
	free(c->back_area[qid]);
	c->back_area[qid] = NULL;
}

/*
 * Queue qid of c starts, with dirty logging, from a region its frontend
 * brought back (femud died while it ran): keep its area as it is now.  A
 * migration source does that when it reconnects after the switch-over,
 * with its guest stopped (QEMU restarts a started device's queues on
 * reconnect): what it then serves goes to memory the destination never
 * sees, so the destination must start from this area, not from the one
 * this queue goes on to write.  Only from femud's own files (a region of
 * the frontend's is not named); without memory or on a read error nothing
 * is kept (the destination then starts where this queue got to).
 */
static void back_area_keep(struct pmd_conn *c, uint16_t qid)
{
	uint64_t bytes = pmd_inflight_packed_queue_bytes(c->inflight_qsize);

	back_area_forget(c, qid);
	if (c->iff == NULL || (c->back_area[qid] = malloc(bytes)) == NULL)
		return;
	if (pmd_iff_get_area(c->iff, qid, c->back_area[qid], bytes) != 0)
		back_area_forget(c, qid);
}

/*
 * Inflight tracking: on when the frontend shared an inflight region for this
 * vring.  After a reconnect rte_vhost lists the requests the previous
 * backend took but never completed (newest first); they are handed to the
 * queue oldest first; *list is rte_vhost's list, marked consumed by
 * queue_replays_taken() once the queue runs.
 */
static bool queue_setup_inflight(struct pmd_conn *c, uint16_t qid, struct pmd_vq_setup *s,
				 uint16_t *heads, struct rte_vhost_resubmit_info **list)
{
	struct rte_vhost_ring_inflight ri;
	struct rte_vhost_resubmit_info *rs;
	uint16_t i, n = 0;

	memset(&ri, 0, sizeof(ri));
	if (rte_vhost_get_vhost_ring_inflight(c->vid, qid, &ri) != 0 || ri.inflight_split == NULL)
		return true;
	if (s->size > c->inflight_qsize) {
		/* rte_vhost would write descriptor entries past this queue's area */
		PMD_LOG(WARNING,
			"%s queue %u: not started: size %u, its inflight area holds %u entries",
			c->dev->path, qid, s->size, c->inflight_qsize);
		return false;
	}
	s->inflight = true;
	if (s->packed) {
		uint16_t la, lu;

		s->inflight_packed = ri.inflight_packed;
		if (!inflight_adopted_ok(c, qid, s, ri.inflight_packed)) {
			*list = ri.resubmit_inflight; /* of the refused area: consumed unplayed */
			return true;
		}
		if (c->inflight_new && !(c->adopted & (1ULL << qid))) {
			/*
			 * A region made on this connection (a first start, or a
			 * migration destination): the vring base is the ring's
			 * position; the region's used position counts from it.
			 */
			inflight_packed_at(ri.inflight_packed, s->last_used);
		} else if (rte_vhost_get_vring_base_from_inflight(c->vid, qid, &la, &lu) == 0) {
			/* the region knows where the previous backend's used position stood */
			s->last_avail = la;
			s->last_used = lu;
			if (s->log && !(c->adopted & (1ULL << qid)))
				back_area_keep(c, qid);
		}
	}
	rs = ri.resubmit_inflight;
	if (rs == NULL || rs->resubmit_list == NULL)
		return true;
	for (i = rs->resubmit_num; i-- > 0;) {
		if (rs->resubmit_list[i].index < s->size && n < PMD_VQ_MAX_SIZE)
			heads[n++] = rs->resubmit_list[i].index;
	}
	s->resubmit = heads;
	s->nresubmit = n;
	*list = rs;
	return true;
}

/*
 * The queue that holds s's replays runs: mark rte_vhost's list consumed (it
 * lists them once per connection; a queue that failed to start leaves them
 * to the next start).
 */
static void queue_replays_taken(struct pmd_conn *c, uint16_t qid, const struct pmd_vq_setup *s,
				struct rte_vhost_resubmit_info *list)
{
	if (list == NULL)
		return;
	list->resubmit_num = 0;
	if (s->nresubmit > 0)
		PMD_LOG(NOTICE, "%s queue %u: replaying %u in-flight requests", c->dev->path, qid,
			s->nresubmit);
}

/* Refuse rings that are not entirely inside guest memory (logged). */
static bool queue_rings_ok(struct pmd_conn *c, uint16_t qid, const struct pmd_vq_setup *s)
{
	const struct pmd_ring_layout r = {.desc = s->desc,
					  .avail = s->avail,
					  .used = s->used,
					  .size = s->size,
					  .event_idx = s->event_idx,
					  .packed = s->packed};
	const char *why = pmd_guard_rings(s->mem, &r);

	if (why == NULL)
		return true;
	PMD_LOG(WARNING, "%s queue %u: not started: %s", c->dev->path, qid, why);
	return false;
}

/* A notifier fd of queue qid made non-blocking (pmd_guard_notify_nonblock); false: unusable. */
static bool queue_notify_nonblock(struct pmd_conn *c, uint16_t qid, int fd, const char *which)
{
	int rc = pmd_guard_notify_nonblock(fd);

	if (rc == 1)
		PMD_LOG(
		    WARNING,
		    "%s queue %u (connection %d): its %s eventfd was blocking; made non-blocking "
		    "(a full counter must not block femud; the frontend shares the flag)",
		    c->dev->path, qid, c->vid, which);
	else if (rc < 0)
		PMD_LOG(ERR,
			"%s queue %u (connection %d): its %s fd cannot be made non-blocking: %s; "
			"queue not started",
			c->dev->path, qid, c->vid, which, strerror(-rc));
	return rc >= 0;
}

/*
 * Read the vring and features from rte_vhost and check the rings against
 * the guest memory map mem; false if not usable (yet).
 */
static bool queue_setup(struct pmd_conn *c, uint16_t qid, struct rte_vhost_memory *mem,
			struct pmd_vq_setup *s, uint16_t *heads,
			struct rte_vhost_resubmit_info **list)
{
	struct pmd_blk *dev = c->dev;
	struct rte_vhost_vring vr;
	uint64_t features = 0;
	uint16_t la = 0, lu = 0;
	const char *why;

	if (rte_vhost_get_negotiated_features(c->vid, &features) != 0 ||
	    rte_vhost_get_vhost_vring(c->vid, qid, &vr) != 0 ||
	    rte_vhost_get_vring_base(c->vid, qid, &la, &lu) != 0)
		return false;
	if (vr.desc == NULL || vr.avail == NULL || vr.used == NULL || vr.size == 0 ||
	    vr.size > PMD_VQ_MAX_SIZE || (vr.size & (vr.size - 1)) != 0) {
		PMD_LOG(WARNING, "%s queue %u: ring not usable (size %u)", dev->path, qid, vr.size);
		return false;
	}
	why = pmd_guard_notify_fds(vr.callfd, vr.kickfd);
	if (why != NULL) {
		PMD_LOG(WARNING, "%s queue %u (connection %d): %s; queue not started", dev->path,
			qid, c->vid, why);
		return false;
	}
	if (!queue_notify_nonblock(c, qid, vr.callfd, "call") ||
	    !queue_notify_nonblock(c, qid, vr.kickfd, "kick"))
		return false;
	memset(s, 0, sizeof(*s));
	s->desc = vr.desc;
	s->avail = vr.avail;
	s->used = vr.used;
	s->size = vr.size;
	s->last_avail = la;
	s->last_used = lu;
	s->callfd = vr.callfd;
	s->kickfd = vr.kickfd;
	s->event_idx = features & (1ULL << VIRTIO_RING_F_EVENT_IDX);
	s->indirect = features & (1ULL << VIRTIO_RING_F_INDIRECT_DESC);
	s->log = RTE_VHOST_NEED_LOG(features) != 0;
	s->packed = features & (1ULL << VIRTIO_F_RING_PACKED);
	s->target = &dev->target;
	s->vid = c->vid;
	s->qid = qid;
	s->mem = mem;
	if (!queue_rings_ok(c, qid, s))
		return false;
	return queue_setup_inflight(c, qid, s, heads, list);
}

/*
 * c gives back the queues of qmask (queue_claim): another connection may
 * drive them now, and c no longer waits for them (ctl_lock held).
 */
static void conn_release(struct pmd_conn *c, uint64_t qmask)
{
	c->claimed &= ~qmask;
	c->waiting &= ~qmask;
}

/*
 * c's rings belong to another connection now: its queues stop without
 * writing anything more to them, and it never starts a queue again
 * (ctl_lock held).
 */
static void conn_supersede(struct pmd_conn *c)
{
	c->superseded = true;
	c->restart_mask = 0;
	conn_release(c, UINT64_MAX);
	for (uint16_t k = 0; k < PMD_MAX_QUEUES; k++)
		queue_halt(c, k, true);
}

/*
 * A queue of c starts on the ring id: a queue of another live connection
 * that serves the same ring belongs to a frontend that reconnected on the
 * same memory before its hang-up reached femud ("frontends connected at
 * once").  Served by both, every request would run twice (a write repeated
 * after the driver reused its buffer) and the old queue would judge the new
 * connection's indexes as its own.  The old queue is abandoned (nothing
 * more is written to the ring) and its connection never starts a queue
 * again (ctl_lock held).
 */
static void queue_take_over_ring(struct pmd_conn *c, uint16_t qid, const struct pmd_ring_id *id)
{
	for (int vid = 0; vid < PMD_MAX_VID; vid++) {
		struct pmd_conn *o = by_vid[vid];

		for (uint16_t j = 0; o != NULL && o != c && j < PMD_MAX_QUEUES; j++) {
			if (o->vq[j] == NULL || !pmd_ring_id_same(&o->ring[j], id))
				continue;
			PMD_LOG(WARNING,
				"%s queue %u (connection %d): its ring is served by queue %u of "
				"the older connection %d (%s), whose frontend reconnected on the "
				"same memory; that connection's queues are stopped for good",
				c->dev->path, qid, c->vid, j, o->vid, o->dev->path);
			conn_supersede(o);
		}
	}
}

/*
 * Has c's frontend hung up (its socket reads end of file, or is gone) before
 * rte_vhost processed it?  Unknown sockets count as live.
 */
static bool conn_hung_up(const struct pmd_conn *c)
{
	struct pollfd p = {.fd = c->sock_fd, .events = POLLRDHUP};

	if (c->sock_fd < 0 || poll(&p, 1, 0) != 1)
		return false;
	return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/*
 * c's frontend has hung up while another connection of its device starts a
 * queue: its queues stop without writing to its memory (the frontend may
 * have handed that memory to its new connection already), and it never
 * starts a queue again (ctl_lock held).
 */
static void conn_retire_hung_up(struct pmd_conn *c, const struct pmd_conn *by, uint16_t qid)
{
	bool running = false;

	for (uint16_t k = 0; k < PMD_MAX_QUEUES; k++)
		running |= c->vq[k] != NULL;
	if (running)
		PMD_LOG(WARNING,
			"%s queue %u (connection %d): connection %d has hung up but still had "
			"queues running; stopped without writing to its memory",
			by->dev->path, qid, by->vid, c->vid);
	conn_supersede(c);
}

/*
 * One connection drives a queue index of a device at a time.  Before queue
 * qid of c starts, the device's other connections are looked at: one whose
 * frontend hung up is retired; a live one that runs queue qid keeps it, and
 * c's start is refused (false) until that connection gives the queue back
 * (GET_VRING_BASE, RESET_OWNER, its hang-up; queues_start_waiting), not at a
 * mere disable: a frontend disables a queue to replace its fds.
 * An accidental second frontend on a socket can then never have requests of
 * two guests served on one queue, and a live migration's destination (whose
 * queues start after the source stopped its own) is not held up.
 */
static bool queue_claim(struct pmd_conn *c, uint16_t qid)
{
	const struct pmd_conn *owner = NULL;
	struct pmd_conn *o;

	for (int vid = 0; (o = dev_conn_next(c->dev, c, &vid)) != NULL;) {
		if (conn_hung_up(o))
			conn_retire_hung_up(o, c, qid);
		else if (o->claimed & (1ULL << qid))
			owner = o;
	}
	if (owner == NULL)
		return true;
	if (!(c->waiting & (1ULL << qid)))
		PMD_LOG(WARNING,
			"%s queue %u (connection %d): not started: connection %d drives this queue "
			"(one frontend per queue; its requests wait until that connection gives "
			"the queue back)",
			c->dev->path, qid, c->vid, owner->vid);
	c->waiting |= 1ULL << qid;
	return false;
}

static void queue_start(struct pmd_conn *c, uint16_t qid)
{
	static uint16_t heads[PMD_VQ_MAX_SIZE]; /* ctl_lock held */
	struct pmd_blk *dev = c->dev;
	struct rte_vhost_memory *mem = NULL;
	struct rte_vhost_resubmit_info *list = NULL;
	struct pmd_vq_setup s;
	struct pmd_ring_id id;
	struct pmd_vq *q;

	if (dev->closing || c->vq[qid] != NULL)
		return;
	if (qid >= dev->params.queues) {
		PMD_LOG(WARNING, "%s: queue %u enabled but only %u offered; ignored", dev->path,
			qid, dev->params.queues);
		return;
	}
	if (c->superseded) {
		PMD_LOG(WARNING, "%s queue %u: not started: a newer connection serves its rings",
			dev->path, qid);
		return;
	}
	if (c->mem_refused || c->mem_broken) {
		PMD_LOG(WARNING, "%s queue %u: not started: its guest memory table was %s",
			dev->path, qid, c->mem_refused ? "refused" : "broken (SIGBUS)");
		return;
	}
	if (rte_vhost_get_mem_table(c->vid, &mem) != 0 || mem == NULL) {
		PMD_LOG(WARNING, "%s queue %u: no guest memory table", dev->path, qid);
		return;
	}
	if (!queue_setup(c, qid, mem, &s, heads, &list)) {
		free(mem);
		return;
	}
	id = pmd_ring_id_of(mem, s.avail);
	queue_take_over_ring(c, qid, &id);
	if (!queue_claim(c, qid)) {
		free(mem);
		return;
	}
	c->waiting &= ~(1ULL << qid);
	s.on_node = true;
	s.node = pmd_poller_node(queue_poller(dev, qid));
	q = pmd_vq_create(&s);
	if (q == NULL) {
		PMD_LOG(ERR, "%s queue %u: out of memory", dev->path, qid);
		free(mem);
		return;
	}
	q->name = dev->path;
	kicks_drain(q->kickfd); /* count from the start of this queue */
	PMD_LOG(INFO,
		"%s queue %u: started, size %u, avail %u, used %u, event_idx %d, %s ring, "
		"call %s%s%s, connection %d",
		dev->path, qid, s.size, s.last_avail, s.last_used, s.event_idx,
		s.packed ? "packed" : "split", s.callfd >= 0 ? "on" : "off (poll queue)",
		s.inflight ? ", inflight tracked" : "", s.log ? ", dirty logging" : "", c->vid);
	c->ring[qid] = id;
	c->vq[qid] = q;
	c->mem[qid] = mem;
	if (pmd_poller_attach(queue_poller(dev, qid), q) != 0) {
		PMD_LOG(ERR, "%s queue %u: cannot hand to a poller", dev->path, qid);
		c->vq[qid] = NULL;
		c->mem[qid] = NULL;
		pmd_vq_free(q);
		free(mem);
		return;
	}
	c->claimed |= 1ULL << qid;
	if (s.inflight && c->iff != NULL)
		pmd_iff_queue_started(c->iff, qid, c->set_base[qid], c->ring_gpa[qid]);
	queue_replays_taken(c, qid, &s, list);
}

/*
 * Start the queues that waited for another connection's queue to stop
 * (rte_vhost's thread only: a start reads its state).
 */
static void queues_start_waiting(void)
{
	for (int vid = 0; vid < PMD_MAX_VID; vid++) {
		struct pmd_conn *c = by_vid[vid];

		for (uint16_t qid = 0; c != NULL && c->waiting != 0 && qid < PMD_MAX_QUEUES; qid++)
			if (c->waiting & (1ULL << qid))
				queue_start(c, qid);
	}
}

/* ---- guest memory faults (pmd/mem_fault.h) ---- */

/* c's guest memory, inflight region or log faulted: stop it, close it at its next message. */
static void conn_mem_broken(struct pmd_conn *c)
{
	c->mem_broken = true;
	c->restart_mask = 0;
	conn_release(c, UINT64_MAX);
	queue_stop_all(c, NULL);
}

/* c's guest memory raised SIGBUS (its file shrank): stop its queues (ctl_lock held). */
static void memfault_handle(const struct pmd_memfault *f)
{
	struct pmd_conn *c = conn_of_vid(f->owner);

	if (c == NULL || c->mem_broken)
		return;
	char what[48];

	if (f->tag == PMD_MEMFAULT_TAG_INFLIGHT)
		snprintf(what, sizeof(what), "the inflight region");
	else if (f->tag == PMD_MEMFAULT_TAG_LOG)
		snprintf(what, sizeof(what), "the dirty log");
	else
		snprintf(what, sizeof(what), "guest memory region %u", f->tag);
	PMD_LOG(WARNING,
		"%s: %s faulted (SIGBUS) at offset %" PRIu64
		": its file shrank under femud; queues stopped, connection closed at its next "
		"message",
		c->dev->path, what, f->offset);
	conn_mem_broken(c);
}

/*
 * SET_INFLIGHT_FD: rte_vhost maps the region and writes into it before
 * femud learns where (the post hook registers it), so a file shrunk after
 * femud's size check would fault inside rte_vhost; a SIGBUS window on its
 * thread covers that stretch (mem_fault.h).  The connection it was opened
 * for, -1: none.
 */
static int inflight_window_vid = -1;

static void inflight_window_open(struct pmd_conn *c)
{
	inflight_window_vid = c->vid;
	pmd_memfault_window_open(c->inflight_page);
}

/* Close the window (at the post hook, or at the next message if rte_vhost failed the message). */
static void inflight_window_close(void)
{
	struct pmd_conn *c;
	unsigned n;

	if (inflight_window_vid < 0)
		return;
	n = pmd_memfault_window_close();
	c = conn_of_vid(inflight_window_vid);
	inflight_window_vid = -1;
	if (n == 0 || c == NULL || c->mem_broken)
		return;
	PMD_LOG(WARNING,
		"%s: the inflight region faulted (SIGBUS) while rte_vhost mapped it: its file "
		"shrank under femud; queues stopped, connection closed at its next message",
		c->dev->path);
	conn_mem_broken(c);
}

/*
 * Act on every fault the SIGBUS handler caught and the watch thread has not
 * taken yet (ctl_lock held): before a connection's mappings leave the net,
 * so that a fault in its last sweep is still logged with its device (the
 * watch thread would find the connection gone) and not left in a slot.
 */
static void memfault_report_pending(void)
{
	struct pmd_memfault f;

	while (pmd_memfault_take(&f))
		memfault_handle(&f);
}

/* The thread that acts on faults the SIGBUS handler caught. */
static void *memfault_watch(void *arg)
{
	uint64_t n;

	RTE_SET_USED(arg);
	for (;;) {
		if (read(pmd_memfault_fd(), &n, sizeof(n)) != sizeof(n)) {
			if (errno == EINTR)
				continue;
			PMD_LOG(ERR, "guest memory fault watch stopped: %s", strerror(errno));
			return NULL;
		}
		pthread_mutex_lock(&ctl_lock);
		memfault_report_pending();
		pthread_mutex_unlock(&ctl_lock);
	}
}

static pthread_once_t memfault_once = PTHREAD_ONCE_INIT;

static void memfault_start(void)
{
	pthread_t th;
	int rc = pmd_memfault_init();

	if (rc == 0)
		rc = -pthread_create(&th, NULL, memfault_watch, NULL);
	if (rc != 0) {
		PMD_LOG(WARNING, "no SIGBUS net for guest memory: %s", strerror(-rc));
		return;
	}
	pthread_setname_np(th, "femud-memfault");
	pthread_detach(th);
}

/* ---- rte_vhost callbacks ---- */

/*
 * Refuse a message: rte_vhost then answers a NACK when the frontend asked
 * for a reply (REPLY_ACK) and otherwise closes the connection.
 */
static enum rte_vhost_msg_result msg_refuse(struct pmd_conn *c, const struct vhu_msg *msg,
					    const char *why)
{
	PMD_LOG(WARNING, "%s: vhost-user request %u refused: %s", c->dev->path, msg->request, why);
	return RTE_VHOST_MSG_RESULT_ERR;
}

/* Is a request that changes the guest memory map? */
static bool msg_changes_mem(uint32_t request)
{
	return request == VHU_SET_MEM_TABLE || request == VHU_ADD_MEM_REG ||
	       request == VHU_REM_MEM_REG;
}

/*
 * Register the host mappings of c's guest memory with the SIGBUS net
 * (pmd/mem_fault.h), replacing what was registered before.
 */
/* The page size a mapping of fd has: rte_vhost maps in units of the file's block size. */
static size_t map_page_of(int fd)
{
	long sys_page = sysconf(_SC_PAGESIZE);
	size_t page = sys_page > 0 ? (size_t)sys_page : 4096;
	struct stat st;

	/* huge pages on hugetlbfs */
	if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_blksize > page &&
	    (st.st_blksize & (st.st_blksize - 1)) == 0)
		page = (size_t)st.st_blksize;
	return page;
}

/* Forget c's guest memory regions in the SIGBUS net (before rte_vhost unmaps them). */
static void mem_unwatch(struct pmd_conn *c)
{
	memfault_report_pending();
	pmd_memfault_unregister_tags(c->vid, 0, PMD_MEMFAULT_TAG_INFLIGHT);
}

static void mem_watch(struct pmd_conn *c, const struct rte_vhost_memory *mem)
{
	mem_unwatch(c);
	for (uint32_t i = 0; i < mem->nregions; i++) {
		const struct rte_vhost_mem_region *r = &mem->regions[i];
		size_t page = map_page_of(r->fd);

		if (pmd_memfault_register(r->mmap_addr, r->mmap_size, page, c->vid, i) != 0)
			PMD_LOG(WARNING,
				"%s: guest memory region %u not covered by the SIGBUS net "
				"(table full)",
				c->dev->path, i);
	}
}

/*
 * The inflight region rte_vhost mapped for SET_INFLIGHT_FD, in the SIGBUS
 * net too (the frontend may shrink its memfd later).  rte_vhost hands out
 * only per-queue pointers into it, queue qid's qid areas past the mapping's
 * start (it skips the areas of queues it has not heard of, not their room).
 */
/* Has c's frontend negotiated packed rings (rte_vhost lays out inflight areas by it)? */
static bool conn_packed(const struct pmd_conn *c)
{
	uint64_t features = 0;

	return rte_vhost_get_negotiated_features(c->vid, &features) == 0 &&
	       (features & (1ULL << VIRTIO_F_RING_PACKED));
}

static void inflight_watch(struct pmd_conn *c)
{
	uint64_t qbytes = conn_packed(c) ? pmd_inflight_packed_queue_bytes(c->inflight_qsize)
					 : pmd_inflight_queue_bytes(c->inflight_qsize);

	for (uint16_t qid = 0; qid < c->dev->params.queues; qid++) {
		struct rte_vhost_ring_inflight ri;
		const uint8_t *start;

		memset(&ri, 0, sizeof(ri));
		if (rte_vhost_get_vhost_ring_inflight(c->vid, qid, &ri) != 0 ||
		    ri.inflight_split == NULL)
			continue;
		start = (const uint8_t *)ri.inflight_split - (size_t)qid * qbytes;
		if (pmd_memfault_register(start, c->inflight_size, c->inflight_page, c->vid,
					  PMD_MEMFAULT_TAG_INFLIGHT) != 0)
			PMD_LOG(WARNING,
				"%s: inflight region not covered by the SIGBUS net (table full)",
				c->dev->path);
		return;
	}
}

static void inflight_unwatch(struct pmd_conn *c)
{
	memfault_report_pending();
	pmd_memfault_unregister_tags(c->vid, PMD_MEMFAULT_TAG_INFLIGHT,
				     PMD_MEMFAULT_TAG_INFLIGHT + 1);
}

/* The dirty log rte_vhost mapped for SET_LOG_BASE, in the SIGBUS net too. */
static void log_watch(struct pmd_conn *c)
{
	uint64_t base = 0, size = 0;

	if (rte_vhost_get_log_base(c->vid, &base, &size) != 0 || base == 0 || size == 0)
		return;
	if (pmd_memfault_register((const void *)(uintptr_t)base, size, 4096, c->vid,
				  PMD_MEMFAULT_TAG_LOG) != 0)
		PMD_LOG(WARNING, "%s: dirty log not covered by the SIGBUS net (table full)",
			c->dev->path);
}

static void log_unwatch(struct pmd_conn *c)
{
	memfault_report_pending();
	pmd_memfault_unregister_tags(c->vid, PMD_MEMFAULT_TAG_LOG, PMD_MEMFAULT_TAG_LOG + 1);
}

/*
 * Does SET_FEATURES turn dirty logging on or off?  A queue reads LOG_ALL
 * when it starts (its sweep is built with or without logging), so its
 * queues are restarted around the message.
 */
static bool log_toggles(const struct pmd_conn *c, const struct vhu_msg *msg)
{
	uint64_t now = 0;

	if (msg->size < sizeof(msg->payload.u64) ||
	    rte_vhost_get_negotiated_features(c->vid, &now) != 0)
		return false;
	return ((now ^ msg->payload.u64) & (1ULL << VHU_F_LOG_ALL)) != 0;
}

/* SET_LOG_BASE before rte_vhost maps the log: a file that backs it. */
static enum rte_vhost_msg_result log_msg_check(struct pmd_conn *c, void *ctx)
{
	int fds[VHU_MAX_FDS];
	char buf[160];
	const char *why = pmd_guard_log_msg(ctx, fds, pmd_vhu_fds(ctx, fds), buf, sizeof(buf));

	return why == NULL ? RTE_VHOST_MSG_RESULT_NOT_HANDLED : msg_refuse(c, ctx, why);
}

/*
 * After the guest memory map changed: refuse a table with a region its file
 * does not back (SIGBUS on access); queues then stay stopped until a
 * usable table arrives.
 */
static enum rte_vhost_msg_result mem_check(struct pmd_conn *c, const struct vhu_msg *msg)
{
	struct rte_vhost_memory *mem = NULL;
	char why[160] = "no guest memory table";
	int rc = -1;

	if (rte_vhost_get_mem_table(c->vid, &mem) == 0 && mem != NULL)
		rc = pmd_guard_mem(mem, why, sizeof(why));
	if (rc == 0)
		mem_watch(c, mem);
	free(mem);
	c->mem_refused = rc != 0;
	if (rc == 0)
		return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
	c->restart_mask = 0;
	return msg_refuse(c, msg, why);
}

/*
 * Before rte_vhost maps a new memory table (SET_MEM_TABLE, ADD_MEM_REG):
 * every region's file must be long enough.  rte_vhost itself reads the
 * rings of a running vring in the new table (and later at SET_VRING_KICK)
 * before any post hook runs, so a short file would raise SIGBUS inside
 * rte_vhost; the table is refused here, and the old one stays in use.
 */
static enum rte_vhost_msg_result mem_msg_check(struct pmd_conn *c, void *ctx)
{
	const struct vhu_msg *msg = ctx;
	int fds[VHU_MAX_FDS];
	int n = pmd_vhu_fds(ctx, fds);
	char why[160];

	if (n < 0)
		snprintf(why, sizeof(why),
			 "cannot see the fds rte_vhost received with it (message layout is not "
			 "DPDK 22.11's)");
	else if (pmd_guard_mem_msg(msg, fds, n, why, sizeof(why)) == 0)
		return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
	return msg_refuse(c, msg, why);
}

/*
 * GET_INFLIGHT_FD answered: remember the file rte_vhost made, so that
 * SET_INFLIGHT_FD can tell a new region (positions from the vring base)
 * from one an earlier backend used (positions from the region).
 */
static void inflight_made(struct pmd_conn *c, void *ctx)
{
	int fds[VHU_MAX_FDS];
	struct stat st;

	c->inflight_made = pmd_vhu_fds(ctx, fds) > 0 && fstat(fds[0], &st) == 0;
	if (c->inflight_made) {
		c->inflight_made_dev = st.st_dev;
		c->inflight_made_ino = st.st_ino;
	}
}

/*
 * The named file fd is of another connection of c's device that femud has
 * not dropped yet (its frontend reconnected before its hang-up was seen):
 * that file is c's from now on (NULL: none is).
 */
static struct pmd_iff *inflight_file_of_other(struct pmd_conn *c, int fd)
{
	struct pmd_conn *o;

	for (int vid = 0; (o = dev_conn_next(c->dev, c, &vid)) != NULL;) {
		struct pmd_iff *f;

		if (!pmd_iff_is(o->iff, fd))
			continue;
		f = o->iff;
		o->iff = NULL;
		if (o->iff_made == f)
			o->iff_made = NULL;
		return f;
	}
	return NULL;
}

/*
 * SET_INFLIGHT_FD of fd: the named file c's region is from now on: the one
 * femud made for it, one an earlier femud made (its frontend brought it back
 * after femud's restart; it keeps its name), or none (a file of the
 * frontend's own).  Files c no longer uses go.
 */
static void inflight_file_bind(struct pmd_conn *c, int fd)
{
	struct pmd_iff *f = NULL;

	if (pmd_iff_is(c->iff, fd))
		return;
	if (pmd_iff_is(c->iff_made, fd)) {
		f = c->iff_made;
	} else {
		f = pmd_iff_orphan_reclaim(&c->dev->orphans, fd);
		if (f == NULL)
			f = inflight_file_of_other(c, fd);
		if (f != NULL) {
			pmd_iff_set_frontend(f, c->pid);
			PMD_LOG(INFO, "%s (connection %d): its frontend brought back %s",
				c->dev->path, c->vid, pmd_iff_name(f));
		}
	}
	if (c->iff != NULL && c->iff != c->iff_made)
		pmd_iff_close(c->iff, true);
	if (c->iff_made != NULL && c->iff_made != f) {
		pmd_iff_close(c->iff_made, true);
		c->iff_made = NULL;
	}
	c->iff = f;
	c->adopted = 0;
}

/*
 * GET_INFLIGHT_FD answered by femud (once inflight_msg_check passed it): the
 * region is a named file (inflight_file.h), so that a femud started after
 * this one dies finds a packed ring's position there.  When the file cannot
 * be made, rte_vhost makes its own (an unnamed memfd).
 */
static enum rte_vhost_msg_result inflight_get(struct pmd_conn *c, void *ctx, int *reply_fd)
{
	struct vhu_msg *msg = ctx;
	int fds[VHU_MAX_FDS];
	struct pmd_iff *f = NULL;
	uint64_t size = 0;
	int fd = -1, rc;

	if (pmd_vhu_fds(ctx, fds) != 0)
		return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
	rc = pmd_iff_make(iff_dir, c->dev->path, c->pid, conn_packed(c),
			  msg->payload.inflight.num_queues, msg->payload.inflight.queue_size, &f,
			  &fd, &size);
	if (rc != 0) {
		PMD_LOG(WARNING,
			"%s: inflight region not made in %s (%s); rte_vhost makes one, which a "
			"femud restarted during a live migration cannot find",
			c->dev->path, iff_dir, strerror(-rc));
		return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
	}
	if (c->iff_made != c->iff)
		pmd_iff_close(c->iff_made, true);
	c->iff_made = f;
	msg->payload.inflight.mmap_size = size;
	msg->payload.inflight.mmap_offset = 0;
	msg->size = sizeof(msg->payload.inflight);
	*reply_fd = fd;
	return RTE_VHOST_MSG_RESULT_REPLY;
}

/*
 * Queue qid of c starting: the file of another live connection of c's device
 * whose queue qid is not started there but whose frontend never learned its
 * position, when it is the same ring: its frontend reconnected after femud's
 * restart and brought its file back without starting the queue (a live
 * migration's source just before the switch-over; the destination starts the
 * ring).  1 when taken (*from names it), 0 when none, -errno.
 */
static int inflight_take_live(struct pmd_conn *c, uint16_t qid, char *from, size_t fromlen)
{
	struct pmd_conn *o;

	for (int vid = 0; (o = dev_conn_next(c->dev, c, &vid)) != NULL;) {
		int rc;

		if (o->iff == NULL || o->vq[qid] != NULL || (o->claimed & (1ULL << qid)))
			continue;
		rc = pmd_iff_take(o->iff, c->iff, qid, c->pid, c->set_base[qid], c->ring_gpa[qid]);
		if (rc != 0) {
			snprintf(from, fromlen, "%s (connection %d's)", pmd_iff_name(o->iff),
				 o->vid);
			return rc;
		}
	}
	return 0;
}

/*
 * c starts queue qid on a new region while another connection of the
 * device drives the same ring from a region its frontend brought back,
 * with dirty logging (back_area_keep): that is a migration's source that
 * reconnected after the switch-over, its guest stopped, since at the
 * switch-over a source gives its queues back (GET_VRING_BASE) before the
 * destination starts them.  Its connection stops for good, without writing
 * to its memory (its requests went to a guest that runs elsewhere now), and
 * c takes the area it brought back: 1; 0 when there is no such connection,
 * -errno when the copy failed.
 */
static int inflight_take_stale_source(struct pmd_conn *c, uint16_t qid, char *from, size_t fromlen)
{
	struct pmd_conn *o;

	for (int vid = 0; (o = dev_conn_next(c->dev, c, &vid)) != NULL;) {
		int rc;

		/* o's file holds what its queue started with (pmd_iff_queue_started) */
		if (o->back_area[qid] == NULL || o->vq[qid] == NULL ||
		    !pmd_iff_same_ring(o->iff, c->iff, qid, c->pid, c->set_base[qid],
				       c->ring_gpa[qid]))
			continue;
		rc = pmd_iff_put_area(c->iff, qid, o->back_area[qid],
				      pmd_inflight_packed_queue_bytes(o->inflight_qsize));
		snprintf(from, fromlen, "the area connection %d brought back", o->vid);
		if (rc != 0)
			return rc;
		PMD_LOG(WARNING,
			"%s queue %u (connection %d): connection %d drives the same ring from the "
			"area its frontend brought back, with dirty logging (a migration's source "
			"started again after the switch-over); its queues stop for good, without "
			"writing to its memory",
			c->dev->path, qid, c->vid, o->vid);
		if (o->iff != NULL)
			pmd_iff_queue_returned(o->iff, qid);
		conn_supersede(o);
		return 1;
	}
	return 0;
}

/*
 * Before rte_vhost reads queue qid's inflight area (SET_VRING_KICK): a
 * packed queue that starts on a new region of femud's takes over the area
 * an earlier femud left for the same ring, whose frontend never learned
 * the position (inflight_file.h): an orphan's, or one a frontend brought
 * back to this femud without starting the queue.
 */
static void inflight_adopt(struct pmd_conn *c, uint16_t qid)
{
	char from[PATH_MAX + 32] = "";
	int rc;

	if (qid >= PMD_MAX_QUEUES || c->vq[qid] != NULL || c->iff == NULL || !c->inflight_new ||
	    (c->adopted & (1ULL << qid)) || !conn_packed(c))
		return;
	rc = pmd_iff_adopt(&c->dev->orphans, c->iff, qid, c->pid, c->set_base[qid],
			   c->ring_gpa[qid], from, sizeof(from));
	if (rc == 0)
		rc = inflight_take_live(c, qid, from, sizeof(from));
	if (rc == 0)
		rc = inflight_take_stale_source(c, qid, from, sizeof(from));
	if (rc == 1) {
		c->adopted |= 1ULL << qid;
		PMD_LOG(NOTICE,
			"%s queue %u (connection %d): takes the ring's position and its requests "
			"in flight from %s (its frontend never learned them)",
			c->dev->path, qid, c->vid, from);
	} else if (rc < 0) {
		PMD_LOG(WARNING, "%s queue %u (connection %d): cannot read %s: %s", c->dev->path,
			qid, c->vid, from, strerror(-rc));
	}
}

/*
 * GET/SET_INFLIGHT_FD before rte_vhost allocates or maps the region: sizes
 * the device can have, and for SET a file that backs every queue's area
 * (rte_vhost writes into them at once, and reads them at SET_VRING_KICK).
 */
static enum rte_vhost_msg_result inflight_msg_check(struct pmd_conn *c, void *ctx)
{
	const struct vhu_msg *msg = ctx;
	int fds[VHU_MAX_FDS];
	int n = pmd_vhu_fds(ctx, fds);
	char buf[160];
	const char *why;

	if (msg->request == VHU_SET_INFLIGHT_FD && n < 0)
		return msg_refuse(c, msg, "cannot see the fds rte_vhost received with it");
	why = pmd_guard_inflight_msg(msg, n > 0 ? fds[0] : -1, c->dev->params.queues,
				     conn_packed(c), buf, sizeof(buf));
	if (why != NULL)
		return msg_refuse(c, msg, why);
	if (msg->request == VHU_SET_INFLIGHT_FD) {
		struct stat st;

		c->inflight_new = c->inflight_made && n > 0 && fstat(fds[0], &st) == 0 &&
				  st.st_dev == c->inflight_made_dev &&
				  st.st_ino == c->inflight_made_ino;
		inflight_file_bind(c, n > 0 ? fds[0] : -1);
		c->inflight_qsize = msg->payload.inflight.queue_size;
		c->inflight_size = msg->payload.inflight.mmap_size;
		c->inflight_page = map_page_of(n > 0 ? fds[0] : -1);
	}
	return RTE_VHOST_MSG_RESULT_NOT_HANDLED;
}

/*
 * A vring message naming a queue the device does not offer, or a ring size
 * a split ring cannot have, is refused.  Done after rte_vhost's handler
 * ran, so that any fd the message carried is owned (and eventually closed)
 * by rte_vhost rather than leaked; femud never starts such a queue.
 */
static enum rte_vhost_msg_result vring_msg_check(struct pmd_conn *c, const struct vhu_msg *msg)
{
	char buf[96];
	const char *why = pmd_guard_vring_msg(msg, c->dev->params.queues, buf, sizeof(buf));

	return why == NULL ? RTE_VHOST_MSG_RESULT_NOT_HANDLED : msg_refuse(c, msg, why);
}

/*
 * SET_VRING_CALL / SET_VRING_KICK: a poller writes calls without waiting
 * and polls kicks, so only an eventfd will do (a full pipe would block it);
 * refused here, the fd is closed and the frontend gets a NACK (or, without
 * REPLY_ACK, a closed connection).  Queue start checks again.
 */
static enum rte_vhost_msg_result notify_msg_check(struct pmd_conn *c, void *ctx)
{
	const struct vhu_msg *msg = ctx;
	int fds[VHU_MAX_FDS];
	const char *why = pmd_guard_notify_msg(msg, fds, pmd_vhu_fds(ctx, fds));

	return why == NULL ? RTE_VHOST_MSG_RESULT_NOT_HANDLED : msg_refuse(c, msg, why);
}

/* A hook of rte_vhost's thread starts: the watchdog (ctl_watch.h) times it. */
static void hook_enter(const char *hook, int vid, uint32_t request)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)] = "?";

	rte_vhost_get_ifname(vid, path, sizeof(path));
	pmd_ctl_watch_enter(hook, path, vid, request);
}

static enum rte_vhost_msg_result pre_msg_run(int vid, void *arg)
{
	struct vhu_msg *msg = arg;
	enum rte_vhost_msg_result r = RTE_VHOST_MSG_RESULT_NOT_HANDLED;
	const char *why_close = NULL; /* the connection must go: why */
	int reply_fd = -1;	      /* sent with femud's reply (stays femud's) */
	struct pmd_conn *c;
	struct pmd_blk *dev;

	pthread_mutex_lock(&ctl_lock);
	inflight_window_close();
	c = conn_of_vid(vid);
	if (c == NULL) {
		pthread_mutex_unlock(&ctl_lock);
		return r;
	}
	dev = c->dev;
	/* rte_vhost would block on its next reply */
	if (pmd_guard_replies_unread(c->sock_fd) > PMD_GUARD_UNREAD_MAX)
		why_close = "its frontend leaves its replies unread (more than " RTE_STR(
		    PMD_GUARD_UNREAD_MAX) " bytes); closing the connection";
	else if (c->mem_broken)
		why_close = "its guest memory or inflight region faulted (SIGBUS); closing the "
			    "connection";
	if (why_close != NULL) {
		/* no NACK: rte_vhost closes the connection */
		msg->flags &= ~VHU_FLAG_NEED_REPLY;
		r = msg_refuse(c, msg, why_close);
		pmd_vhu_fds_close(arg);
		pthread_mutex_unlock(&ctl_lock);
		return r;
	}
	switch (msg->request) {
	case VHU_GET_CONFIG:
		r = RTE_VHOST_MSG_RESULT_REPLY;
		if (pmd_blk_config_get(&dev->cfg, msg) != 0)
			r = msg_refuse(c, msg, pmd_guard_config_msg(msg));
		break;
	case VHU_SET_CONFIG:
		r = RTE_VHOST_MSG_RESULT_OK;
		if (pmd_guard_config_msg(msg) != NULL)
			r = msg_refuse(c, msg, pmd_guard_config_msg(msg));
		else
			pmd_blk_config_set(&dev->cfg, msg);
		break;
	case VHU_GET_QUEUE_NUM:
		msg->payload.u64 = dev->params.queues;
		msg->size = sizeof(msg->payload.u64);
		r = RTE_VHOST_MSG_RESULT_REPLY;
		break;
	case VHU_GET_VRING_BASE:
		if (msg->payload.state.index < PMD_MAX_QUEUES) {
			queue_stop(c, (uint16_t)msg->payload.state.index);
			/* the reply tells the frontend the position */
			if (c->iff != NULL)
				pmd_iff_queue_returned(c->iff, (uint16_t)msg->payload.state.index);
			c->adopted &= ~(1ULL << msg->payload.state.index);
			back_area_forget(c, (uint16_t)msg->payload.state.index);
			/* the frontend took the queue's index: another one may drive it now */
			conn_release(c, 1ULL << msg->payload.state.index);
		}
		break;
	/*
	 * rte_vhost unmaps the guest memory (SET_MEM_TABLE, ADD/REM_MEM_REG) or
	 * the inflight region (GET/SET_INFLIGHT_FD) that running queues use:
	 * stop them first (once the message passed femud's checks), restart
	 * them from the post hook.
	 */
	case VHU_SET_MEM_TABLE:
	case VHU_ADD_MEM_REG:
		r = mem_msg_check(c, arg);
		/* fall through */
	case VHU_REM_MEM_REG:
		if (r == RTE_VHOST_MSG_RESULT_NOT_HANDLED) {
			queue_stop_all(c, &c->restart_mask);
			mem_unwatch(c);
		}
		break;
	case VHU_GET_INFLIGHT_FD:
	case VHU_SET_INFLIGHT_FD:
		/* rte_vhost unmaps the previous inflight region for both */
		r = inflight_msg_check(c, arg);
		if (r == RTE_VHOST_MSG_RESULT_NOT_HANDLED && msg->request == VHU_GET_INFLIGHT_FD)
			r = inflight_get(c, arg, &reply_fd);
		if (r == RTE_VHOST_MSG_RESULT_NOT_HANDLED) {
			queue_stop_all(c, &c->restart_mask);
			inflight_unwatch(c);
			if (msg->request == VHU_SET_INFLIGHT_FD)
				inflight_window_open(c);
		}
		break;
	case VHU_SET_VRING_CALL:
	case VHU_SET_VRING_KICK:
		r = notify_msg_check(c, arg);
		if (r == RTE_VHOST_MSG_RESULT_NOT_HANDLED && msg->request == VHU_SET_VRING_KICK)
			inflight_adopt(c, (uint16_t)(msg->payload.u64 & VHU_VRING_IDX_MASK));
		break;
	case VHU_SET_VRING_BASE:
		if (msg->payload.state.index < PMD_MAX_QUEUES)
			c->set_base[msg->payload.state.index] = (uint16_t)msg->payload.state.num;
		break;
	case VHU_SET_LOG_BASE:
		/* rte_vhost unmaps the previous log, which logging queues write */
		r = log_msg_check(c, arg);
		if (r == RTE_VHOST_MSG_RESULT_NOT_HANDLED) {
			queue_stop_all(c, &c->restart_mask);
			log_unwatch(c);
		}
		break;
	case VHU_SET_FEATURES:
		if (log_toggles(c, msg))
			queue_stop_all(c, &c->restart_mask);
		break;
	case VHU_SET_VRING_ADDR:
		if (msg->payload.addr.index < PMD_MAX_QUEUES)
			c->ring_gpa[msg->payload.addr.index] = msg->payload.addr.log;
		/*
		 * rte_vhost re-translates a running ring's addresses without a
		 * vring disable: stop the queue here, restart it on the new
		 * rings from the post hook (at the same index).
		 */
		if (msg->payload.addr.index < PMD_MAX_QUEUES && c->vq[msg->payload.addr.index]) {
			queue_stop(c, (uint16_t)msg->payload.addr.index);
			c->restart_mask |= 1ull << msg->payload.addr.index;
		}
		break;
	case VHU_RESET_OWNER:
		conn_release(c, UINT64_MAX);
		queue_stop_all(c, NULL);
		memfault_report_pending();
		pmd_memfault_unregister(c->vid);
		break;
	default:
		break;
	}
	/* rte_vhost closes the fds of a message only when nobody handled it */
	if (r != RTE_VHOST_MSG_RESULT_NOT_HANDLED)
		pmd_vhu_fds_close(arg);
	if (reply_fd >= 0)
		pmd_vhu_fd_reply(arg, reply_fd);
	pthread_mutex_unlock(&ctl_lock);
	return r;
}

static enum rte_vhost_msg_result post_msg_run(int vid, void *arg)
{
	struct vhu_msg *msg = arg;
	enum rte_vhost_msg_result r = RTE_VHOST_MSG_RESULT_NOT_HANDLED;
	struct pmd_conn *c;
	uint16_t qid;

	pthread_mutex_lock(&ctl_lock);
	inflight_window_close();
	c = conn_of_vid(vid);
	if (c == NULL) {
		pthread_mutex_unlock(&ctl_lock);
		return r;
	}
	r = vring_msg_check(c, msg);
	if (msg_changes_mem(msg->request))
		r = mem_check(c, msg);
	if (msg->request == VHU_SET_INFLIGHT_FD)
		inflight_watch(c);
	if (msg->request == VHU_GET_INFLIGHT_FD)
		inflight_made(c, arg);
	if (msg->request == VHU_SET_LOG_BASE)
		log_watch(c);
	if (msg_changes_mem(msg->request) || msg->request == VHU_GET_INFLIGHT_FD ||
	    msg->request == VHU_SET_INFLIGHT_FD || msg->request == VHU_SET_VRING_ADDR ||
	    msg->request == VHU_SET_LOG_BASE || msg->request == VHU_SET_FEATURES) {
		for (qid = 0; qid < PMD_MAX_QUEUES; qid++) {
			if (c->restart_mask & (1ULL << qid))
				queue_start(c, qid);
		}
		c->restart_mask = 0;
	}
	queues_start_waiting();
	pthread_mutex_unlock(&ctl_lock);
	return r;
}

/* A message hook, timed by the watchdog of rte_vhost's thread (ctl_watch.h). */
static enum rte_vhost_msg_result msg_hook(bool pre, int vid, void *arg)
{
	enum rte_vhost_msg_result r;

	hook_enter(pre ? "pre_msg hook" : "post_msg hook", vid, ((struct vhu_msg *)arg)->request);
	r = pre ? pre_msg_run(vid, arg) : post_msg_run(vid, arg);
	pmd_ctl_watch_leave();
	return r;
}

static enum rte_vhost_msg_result pre_msg(int vid, void *arg)
{
	return msg_hook(true, vid, arg);
}

static enum rte_vhost_msg_result post_msg(int vid, void *arg)
{
	return msg_hook(false, vid, arg);
}

static const struct rte_vhost_user_extern_ops extern_ops = {
    .pre_msg_handle = pre_msg,
    .post_msg_handle = post_msg,
};

static struct pmd_blk *dev_of_path(const char *path)
{
	unsigned i;

	for (i = 0; i < PMD_MAX_DEVS; i++) {
		if (devs[i] != NULL && strcmp(devs[i]->path, path) == 0)
			return devs[i];
	}
	return NULL;
}

static pmd_connect_hook_t connect_hook;
static void *connect_hook_arg;

void pmd_set_connect_hook(pmd_connect_hook_t fn, void *arg)
{
	connect_hook_arg = arg;
	connect_hook = fn;
}

static int on_new_connection_run(int vid)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct pmd_conn *c = NULL;
	struct pmd_blk *dev;
	struct pmd_peer peer = {.sock_fd = -1, .pid = 0};
	int rc = -1;

	if (vid < 0 || vid >= PMD_MAX_VID || rte_vhost_get_ifname(vid, path, sizeof(path)) != 0)
		return -1;
	if (connect_hook != NULL && connect_hook(path, connect_hook_arg, &peer) < 0)
		return -1; /* refused; the hook logged why */
	pthread_mutex_lock(&ctl_lock);
	dev = dev_of_path(path);
	if (dev == NULL || dev->closing) {
		PMD_LOG(NOTICE, "%s: connection refused, device is going away", path);
	} else if (by_vid[vid] != NULL) {
		PMD_LOG(ERR, "%s: connection refused, connection id %d is still in use", path, vid);
	} else if ((c = calloc(1, sizeof(*c))) == NULL) {
		PMD_LOG(ERR, "%s: connection refused, out of memory", path);
	} else if (rte_vhost_extern_callback_register(vid, &extern_ops, NULL) != 0) {
		PMD_LOG(ERR, "%s: cannot register message hooks", path);
		free(c);
	} else {
		c->dev = dev;
		c->vid = vid;
		c->sock_fd = peer.sock_fd;
		c->pid = peer.pid;
		if (peer.sock_fd >= 0 && pmd_guard_sock_bound_reads(peer.sock_fd) != 0)
			PMD_LOG(WARNING, "%s: cannot bound the wait for a message's payload: %s",
				path, strerror(errno));
		by_vid[vid] = c;
		if (dev->stats.live_conns++ > 0)
			PMD_LOG(WARNING, "%s: %u frontends connected at once", path,
				dev->stats.live_conns);
		dev->stats.connections++;
		rc = 0;
	}
	pthread_mutex_unlock(&ctl_lock);
	return rc;
}

static int on_new_connection(int vid)
{
	int r;

	hook_enter("new_connection", vid, 0);
	r = on_new_connection_run(vid);
	pmd_ctl_watch_leave();
	return r;
}

/*
 * Stop every queue of a connection and forget it (ctl_lock held).  Its
 * named inflight file goes too, unless a queue's position is known to femud
 * only: when femud closes, a later femud may need it; when the frontend
 * left, a frontend starting the same ring may (a migration's destination
 * whose source quit without stopping its queue): it joins the orphans.
 */
static void conn_drop(struct pmd_conn *c, bool frontend_gone)
{
	queue_stop_all(c, NULL);
	if (c->iff_made != c->iff)
		pmd_iff_close(c->iff_made, true);
	if (frontend_gone && pmd_iff_running(c->iff) && !c->dev->closing) {
		PMD_LOG(NOTICE,
			"%s (connection %d): its frontend left without learning a packed queue's "
			"position; %s kept for a frontend that starts the same ring",
			c->dev->path, c->vid, pmd_iff_name(c->iff));
		pmd_iff_orphan_keep(&c->dev->orphans, c->iff);
	} else {
		pmd_iff_close(c->iff, frontend_gone || !pmd_iff_running(c->iff));
	}
	for (uint16_t k = 0; k < PMD_MAX_QUEUES; k++)
		back_area_forget(c, k);
	memfault_report_pending();	 /* a fault of its last sweep, logged while c is known */
	pmd_memfault_unregister(c->vid); /* rte_vhost unmaps guest memory after this */
	c->dev->stats.live_conns--;
	by_vid[c->vid] = NULL;
	free(c);
}

static void on_destroy_connection_run(int vid)
{
	struct pmd_conn *c;

	pthread_mutex_lock(&ctl_lock);
	c = conn_of_vid(vid);
	if (c != NULL)
		conn_drop(c, true);
	queues_start_waiting();
	pthread_mutex_unlock(&ctl_lock);
}

static void on_destroy_connection(int vid)
{
	hook_enter("destroy_connection", vid, 0);
	on_destroy_connection_run(vid);
	pmd_ctl_watch_leave();
}

static int on_vring_state_changed_run(int vid, uint16_t qid, int enable)
{
	struct pmd_conn *c;

	pthread_mutex_lock(&ctl_lock);
	c = conn_of_vid(vid);
	if (c != NULL && qid < PMD_MAX_QUEUES) {
		if (enable) {
			queue_start(c, qid);
		} else {
			c->waiting &= ~(1ULL << qid);
			queue_stop(c, qid);
		}
	}
	queues_start_waiting();
	pthread_mutex_unlock(&ctl_lock);
	return 0;
}

static int on_vring_state_changed(int vid, uint16_t qid, int enable)
{
	int r;

	hook_enter("vring_state_changed", vid, 0);
	r = on_vring_state_changed_run(vid, qid, enable);
	pmd_ctl_watch_leave();
	return r;
}

static int on_new_device(int vid)
{
	RTE_SET_USED(vid);
	return 0;
}

static void on_destroy_device(int vid)
{
	RTE_SET_USED(vid);
}

/*
 * rte_vhost calls this only for a device it counts as running (every vring
 * it heard of ready), so femud does not rely on it: the SET_FEATURES hooks
 * restart the queues when LOG_ALL toggles (log_toggles).
 */
static int on_features_changed(int vid, uint64_t features)
{
	RTE_SET_USED(vid);
	RTE_SET_USED(features);
	return 0;
}

static const struct rte_vhost_device_ops device_ops = {
    .new_device = on_new_device,
    .destroy_device = on_destroy_device,
    .vring_state_changed = on_vring_state_changed,
    .features_changed = on_features_changed,
    .new_connection = on_new_connection,
    .destroy_connection = on_destroy_connection,
};

/* ---- create / destroy ---- */

static int params_check(const struct pmd_blk_params *p, char *err, size_t errlen)
{
	if (p->path == NULL || p->path[0] == '\0' ||
	    strlen(p->path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		snprintf(err, errlen, "socket path missing or longer than %zu bytes",
			 sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return -EINVAL;
	}
	if (p->queues < 1 || p->queues > PMD_MAX_QUEUES) {
		snprintf(err, errlen, "queues=%u: must be 1..%u", p->queues, PMD_MAX_QUEUES);
		return -EINVAL;
	}
	if (p->blk_size != 512 && p->blk_size != 4096) {
		snprintf(err, errlen, "secsz=%u: must be 512 or 4096", p->blk_size);
		return -EINVAL;
	}
	if (p->capacity_bytes == 0 || p->capacity_bytes % p->blk_size != 0) {
		snprintf(err, errlen, "capacity %" PRIu64 " B: not a positive multiple of %u",
			 p->capacity_bytes, p->blk_size);
		return -EINVAL;
	}
	return 0;
}

void pmd_set_inflight_dir(const char *dir)
{
	iff_dir = dir;
}

int pmd_sock_path_claim(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket; not replaced", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc == 0) {
		close(fd);
		snprintf(err, errlen, "%s is in use by a live process (another femud?)", path);
		return -EADDRINUSE;
	}
	rc = errno;
	close(fd);
	if (rc != ECONNREFUSED) {
		snprintf(err, errlen, "%s: cannot probe socket: %s", path, strerror(rc));
		return -rc;
	}
	if (unlink(path) != 0 && errno != ENOENT) {
		rc = errno;
		snprintf(err, errlen, "%s: stale socket cannot be removed: %s", path, strerror(rc));
		return -rc;
	}
	PMD_LOG(NOTICE, "%s: stale socket replaced", path);
	return 0;
}

static int dev_register(struct pmd_blk *dev, char *err, size_t errlen)
{
	const char *path = dev->path;
	int rc;

	rc = rte_vhost_driver_register(path, 0);
	if (rc != 0) {
		snprintf(err, errlen, "%s: rte_vhost_driver_register failed", path);
		return -EIO;
	}
	dev->registered = true;
	if (rte_vhost_driver_set_features(path, pmd_blk_features(dev->params.readonly)) != 0 ||
	    rte_vhost_driver_set_protocol_features(path, pmd_blk_protocol_features()) != 0 ||
	    rte_vhost_driver_callback_register(path, &device_ops) != 0) {
		snprintf(err, errlen, "%s: cannot configure rte_vhost", path);
		return -EIO;
	}
	if (rte_vhost_driver_start(path) != 0) {
		snprintf(err, errlen, "%s: cannot listen on the socket", path);
		return -EIO;
	}
	if (chmod(path, dev->params.sock_mode) != 0) {
		rc = errno;
		snprintf(err, errlen, "%s: chmod %o: %s", path, (unsigned)dev->params.sock_mode,
			 strerror(rc));
		return -rc;
	}
	if (dev->params.sock_chown &&
	    chown(path, dev->params.sock_uid, dev->params.sock_gid) != 0) {
		rc = errno;
		snprintf(err, errlen, "%s: sock_owner: chown to %d:%d: %s", path,
			 (int)dev->params.sock_uid, (int)dev->params.sock_gid, strerror(rc));
		return -rc;
	}
	return 0;
}

static int dev_slot(void)
{
	int i;

	for (i = 0; i < PMD_MAX_DEVS; i++) {
		if (devs[i] == NULL)
			return i;
	}
	return -1;
}

static void dev_unregister(struct pmd_blk *dev)
{
	if (dev->registered && rte_vhost_driver_unregister(dev->path) != 0)
		PMD_LOG(ERR, "%s: rte_vhost_driver_unregister failed", dev->path);
	dev->registered = false;
}

int pmd_blk_create(const struct pmd_blk_params *params, const struct fm_model_ops *ops,
		   struct fm_model *model, struct pmd_blk **out, char *err, size_t errlen)
{
	struct pmd_blk *dev;
	int slot, rc;

	rc = params_check(params, err, errlen);
	if (rc != 0)
		return rc;
	pthread_once(&memfault_once, memfault_start);
	pmd_ctl_watch_start(); /* without it femud still serves (it said why) */
	if (pmd_poller_count() == 0) {
		snprintf(err, errlen, "pmd_init() was not called");
		return -EINVAL;
	}
	rc = pmd_sock_path_claim(params->path, err, errlen);
	if (rc != 0)
		return rc;
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL)
		return -ENOMEM;
	dev->params = *params;
	snprintf(dev->path, sizeof(dev->path), "%s", params->path);
	dev->params.path = dev->path;
	dev->target.capacity = params->capacity_bytes;
	dev->target.blk_size = params->blk_size;
	dev->target.readonly = params->readonly;
	memcpy(dev->target.serial, params->serial, PMD_SERIAL_LEN);
	dev->target.ops = ops;
	dev->target.model = model;
	pmd_blk_config_init(&dev->cfg, params);
	if (pmd_iff_orphans_scan(iff_dir, dev->path, &dev->orphans) > 0)
		PMD_LOG(NOTICE,
			"%s: %u inflight region(s) left by an earlier femud with queues whose "
			"frontend never learned their position; a queue that starts on the same "
			"ring takes its position from them",
			dev->path, dev->orphans.n);

	pthread_mutex_lock(&ctl_lock);
	slot = dev_slot();
	if (slot < 0) {
		pthread_mutex_unlock(&ctl_lock);
		free(dev);
		snprintf(err, errlen, "more than %d devices", PMD_MAX_DEVS);
		return -ENOSPC;
	}
	dev->rr_base = rr_next;
	rr_next += ops->single_writer ? 1 : params->queues;
	devs[slot] = dev;
	pthread_mutex_unlock(&ctl_lock);

	rc = dev_register(dev, err, errlen);
	if (rc != 0) {
		pmd_blk_close(dev, true);
		return rc;
	}
	*out = dev;
	return 0;
}

/* Stop the queues of every connection of dev; drop the connections too. */
static void dev_conns_stop(struct pmd_blk *dev, bool drop)
{
	struct pmd_conn *c;

	for (int vid = 0; (c = dev_conn_next(dev, NULL, &vid)) != NULL;) {
		if (drop)
			conn_drop(c, false);
		else
			queue_stop_all(c, NULL);
	}
}

int pmd_blk_close(struct pmd_blk *dev, bool force)
{
	unsigned i;

	if (dev == NULL)
		return 0;
	pthread_mutex_lock(&ctl_lock);
	if (!force && dev->stats.live_conns > 0) {
		pthread_mutex_unlock(&ctl_lock);
		return -EBUSY;
	}
	dev->closing = true; /* no new connection from here on */
	dev_conns_stop(dev, false);
	pthread_mutex_unlock(&ctl_lock);
	/*
	 * never with ctl_lock held: rte_vhost waits for its callbacks to
	 * return; it closes the connections without destroy_connection.
	 */
	dev_unregister(dev);
	pthread_mutex_lock(&ctl_lock);
	dev_conns_stop(dev, true);
	for (i = 0; i < PMD_MAX_DEVS; i++) {
		if (devs[i] == dev)
			devs[i] = NULL;
	}
	pmd_iff_orphans_close(&dev->orphans);
	pthread_mutex_unlock(&ctl_lock);
	unlink(dev->path);
	free(dev);
	return 0;
}

void pmd_blk_destroy(struct pmd_blk *dev)
{
	pmd_blk_close(dev, true);
}

/* Add the running queue qid of every connection of dev to q (ctl_lock held). */
static void stats_of_live_queue(struct pmd_blk *dev, uint16_t qid, struct pmd_queue_snap *q)
{
	struct pmd_conn *c;

	for (int vid = 0; (c = dev_conn_next(dev, NULL, &vid)) != NULL;) {
		if (c->vq[qid] == NULL)
			continue;
		dev->stats.kicks[qid] += kicks_drain(c->vq[qid]->kickfd);
		pmd_vq_stats_add(&q->st, &c->vq[qid]->st);
		q->poller = (int)c->vq[qid]->poller;
		pmd_vq_position(c->vq[qid], &q->avail_next, &q->used_next, &q->pending);
	}
}

void pmd_blk_stats(struct pmd_blk *dev, struct pmd_dev_snap *out)
{
	uint16_t qid;

	memset(out, 0, sizeof(*out));
	snprintf(out->path, sizeof(out->path), "%s", dev->path);
	out->queues = dev->params.queues;
	pthread_mutex_lock(&ctl_lock);
	out->connections = dev->stats.connections;
	out->live_conns = dev->stats.live_conns;
	for (qid = 0; qid < dev->params.queues; qid++) {
		struct pmd_queue_snap *q = &out->q[qid];

		q->st = dev->stats.q[qid];
		q->poller = -1;
		stats_of_live_queue(dev, qid, q);
		q->kicks = dev->stats.kicks[qid];
	}
	pthread_mutex_unlock(&ctl_lock);
}

static void stats_zero_on_poller(void *arg)
{
	pmd_vq_stats_zero(&((struct pmd_vq *)arg)->st);
}

void pmd_blk_stats_reset(struct pmd_blk *dev)
{
	struct pmd_conn *c;

	pthread_mutex_lock(&ctl_lock);
	for (int vid = 0; (c = dev_conn_next(dev, NULL, &vid)) != NULL;) {
		for (uint16_t qid = 0; qid < PMD_MAX_QUEUES; qid++) {
			if (c->vq[qid] == NULL)
				continue;
			kicks_drain(c->vq[qid]->kickfd);
			pmd_poller_call(c->vq[qid]->poller, stats_zero_on_poller, c->vq[qid]);
		}
	}
	memset(dev->stats.q, 0, sizeof(dev->stats.q));
	memset(dev->stats.kicks, 0, sizeof(dev->stats.kicks));
	dev->stats.connections = dev->stats.live_conns;
	pthread_mutex_unlock(&ctl_lock);
}

void pmd_blk_model_call(struct pmd_blk *dev, void (*fn)(void *arg), void *arg)
{
	if (dev->target.ops->single_writer)
		pmd_poller_call(queue_poller(dev, 0), fn, arg);
	else
		fn(arg);
}
