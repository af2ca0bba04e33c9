/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_workload.c - worker threads: request generation, submission, polled
 * completion, verify, latency histogram, bounded waits.
 */
#include "fb_workload.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "fb_pring.h"
#include "fb_time.h"
#include "fb_verify.h"

/*
 * The ring layout is a compile-time constant of each instance of the hot
 * loop (worker_loop() below): chosen once per worker, never per request.
 */
#define FB_HOT static inline __attribute__((always_inline))

#define POLL_BATCH 64
#define MAX_REPORTED 5 /* error lines printed per worker */
/*
 * Two sweeps of one worker more than this apart: the worker did not run in
 * between (descheduled on a loaded machine, or the machine itself stalled),
 * and that time does not count toward --timeout (see worker_clock()).
 */
#define PAUSE_NS 20000000ull

struct slot_meta {
	uint64_t start; /* TSC at submit */
	uint64_t sector;
	uint32_t len; /* 0 = slot free */
	uint32_t type;
};

struct wq {
	struct fb_vq *vq;
	struct slot_meta *meta; /* [vq->nslots] */
	uint16_t *free;		/* stack of free slots */
	unsigned nfree;
	unsigned inflight;
	uint64_t last_progress; /* worker clock of the last completion or first submit */
	/* pacing (--rate, --burst/--gap-us) */
	uint64_t next_tsc;   /* --rate: next submission due; --burst: end of the gap (0 = none) */
	unsigned burst_left; /* requests left in the current burst */
};

struct worker {
	pthread_t th;
	unsigned id;
	int cpu;
	const struct fb_run *run;
	struct wq q[FB_MAX_QUEUES];
	unsigned nq;
	uint64_t rng;
	uint64_t quota;	   /* requests left to submit */
	uint64_t t0;	   /* TSC when the run started (workers share it) */
	uint64_t t_meas;   /* TSC from which completions count (after --ramp) */
	uint64_t deadline; /* TSC; 0 = none */
	uint64_t tsc_per_s;
	bool seq, one_pass;
	bool read_only; /* read / randread: a verify map may settle what it finds */
	uint64_t seq_start, seq_end, cursor; /* bytes */
	uint64_t timeout_ticks;
	uint64_t pause_ticks; /* PAUSE_NS in TSC ticks */
	uint64_t prev_sweep;  /* TSC at the start of the previous sweep (0: none yet) */
	uint64_t paused;      /* TSC ticks between sweeps longer than pause_ticks, summed */
	uint64_t rate_ticks;  /* --rate: TSC ticks between two submissions on one queue */
	unsigned reported;
	/* results */
	struct fb_hist hist;
	uint64_t ios, reads, writes, bytes, io_errors, verify_errors;
	bool timed_out, failed;
	double cpu_s;
	uint64_t t_first, t_last;
	uint32_t per_s[FB_PER_S_MAX]; /* completions per second since t0 */
	uint64_t *progress;	      /* --progress: where this worker's count goes, or NULL */
	uint64_t completed;	      /* completions since t0 (--progress) */
};

void (*fb_workload_test_pause)(unsigned worker, unsigned queue);

static int g_stop;	/* any worker failed: everyone drains and stops */
static int g_interrupt; /* SIGINT/SIGTERM: stop submitting, drain, report */

static double thread_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void fail_worker(struct worker *w)
{
	w->failed = true;
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
}

static bool next_request(struct worker *w, uint64_t now, uint32_t *type, uint64_t *off,
			 uint32_t *len)
{
	const struct fb_opts *o = w->run->o;
	uint32_t bs;

	if (w->quota == 0 || (w->deadline && now >= w->deadline))
		return false;
	bs = o->nbs == 1 ? o->bs[0] : o->bs[fb_rand_below(&w->rng, o->nbs)];
	if (w->seq) {
		if (w->cursor >= w->seq_end) {
			if (w->one_pass)
				return false;
			w->cursor = w->seq_start;
		}
		*off = w->cursor;
		*len = (uint32_t)(w->seq_end - w->cursor < bs ? w->seq_end - w->cursor : bs);
		w->cursor += *len;
	} else {
		*off = w->run->start + fb_rand_below(&w->rng, w->run->len / bs) * bs;
		*len = bs;
	}
	switch (o->rw) {
	case FB_RW_RANDREAD:
	case FB_RW_READ:
		*type = VIRTIO_BLK_T_IN;
		break;
	case FB_RW_RANDWRITE:
	case FB_RW_WRITE:
		*type = VIRTIO_BLK_T_OUT;
		break;
	case FB_RW_RANDRW:
		*type = fb_rand_below(&w->rng, 100) < o->mix ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT;
		break;
	}
	w->quota--;
	return true;
}

static void poison_headers(void *buf, uint32_t len)
{
	for (uint32_t o = 0; o < len; o += FB_VERIFY_SECTOR)
		memset((uint8_t *)buf + o, 0xa5, sizeof(struct fb_vsec_hdr));
}

/*
 * The worker clock: the TSC less the time the worker itself was not running.
 * --timeout means "no completion for that long while femu-bench was
 * watching": a worker descheduled between taking a queue's completions and
 * publishing its next requests (or a machine that stalled) otherwise found,
 * on its next poll, the backend not done with requests it had published
 * microseconds before, and called that a timeout of the full length.  A
 * backend that stalls while the worker runs still times out as before.
 * Called at the start of every sweep with its TSC; returns the worker clock
 * of that sweep, which never goes back (a gap leaves it where the previous
 * sweep's was), and which clock_now() returns until the next sweep.
 */
static uint64_t worker_clock(struct worker *w, uint64_t now)
{
	if (w->prev_sweep != 0 && now - w->prev_sweep > w->pause_ticks)
		w->paused += now - w->prev_sweep;
	w->prev_sweep = now;
	return now - w->paused;
}

static uint64_t clock_now(const struct worker *w)
{
	return w->prev_sweep - w->paused;
}

FB_HOT void submit_one(struct worker *w, struct wq *q, uint64_t now, uint32_t type, uint64_t off,
		       uint32_t len, const bool packed)
{
	unsigned slot = q->free[--q->nfree];
	struct slot_meta *m = &q->meta[slot];

	m->start = now;
	m->sector = off / 512;
	m->len = len;
	m->type = type;
	if (w->run->o->verify) {
		void *buf = fb_vq_slot_data(q->vq, slot);
		if (type == VIRTIO_BLK_T_OUT) {
			fb_verify_fill(buf, m->sector, len / 512, w->run->o->verify_gen);
			if (w->run->vmap)
				fb_vmap_submitted(w->run->vmap, m->sector, len / 512,
						  w->run->o->verify_gen);
		} else
			poison_headers(buf, len);
	}
	if (q->inflight++ == 0)
		q->last_progress = clock_now(w);
	if (packed)
		fb_pvq_submit(q->vq, slot, type, m->sector, len);
	else
		fb_vq_submit(q->vq, slot, type, m->sector, len);
}

static void check_read(struct worker *w, struct wq *q, unsigned slot)
{
	const struct slot_meta *m = &q->meta[slot];
	uint64_t flba, fgen;
	enum fb_vres r;
	int bad;

	uint64_t want = w->run->o->verify_gen;

	if (w->run->vmap)
		bad = fb_vmap_check(w->run->vmap, fb_vq_slot_data(q->vq, slot), m->sector,
				    m->len / 512, w->read_only, &r, &want, &flba, &fgen);
	else
		bad = fb_verify_check(fb_vq_slot_data(q->vq, slot), m->sector, m->len / 512, want,
				      &r, &flba, &fgen);
	if (bad < 0)
		return;
	w->verify_errors++;
	if (w->reported++ < MAX_REPORTED)
		fprintf(stderr,
			"femu-bench: verify FAILED at LBA %" PRIu64 " (512 B sector; read of %u B "
			"at sector %" PRIu64 ", queue %u): %s; expected gen %" PRIu64
			", found lba %" PRIu64 " gen %" PRIu64 "\n",
			m->sector + (uint64_t)bad, m->len, m->sector, q->vq->index,
			fb_verify_res_str(r), want, flba, fgen);
	fail_worker(w);
}

/* A completion taken off its slot: what the accounting after the next submit needs. */
struct reaped {
	struct slot_meta m;
	uint8_t st; /* the status byte the backend wrote */
};

/*
 * Take completion id off its slot: check the id, keep the request's
 * description and status byte in r, check a read's data (--verify) or note
 * a write (--verify-map) while the slot's buffer still holds it, and free the
 * slot.  The rest (latency, counters, error report) waits for
 * account_one(), after the sweep published its next requests: at QD1 it was
 * on the path from one completion to the next submission.  false when the
 * id was not in flight.
 */
static bool reap_one(struct worker *w, struct wq *q, uint32_t id, struct reaped *r)
{
	int slot = fb_vq_id_slot(q->vq, id);
	struct slot_meta *m;

	if (slot < 0 || q->meta[slot].len == 0) {
		if (w->reported++ < MAX_REPORTED)
			fprintf(stderr,
				"femu-bench: queue %u: backend completed id %u which is "
				"not in flight\n",
				q->vq->index, id);
		fail_worker(w);
		return false;
	}
	m = &q->meta[slot];
	r->m = *m;
	r->st = q->vq->status[slot];
	if (r->st == VIRTIO_BLK_S_OK) {
		if (m->type == VIRTIO_BLK_T_IN && w->run->o->verify)
			check_read(w, q, (unsigned)slot);
		else if (m->type == VIRTIO_BLK_T_OUT && w->run->vmap)
			fb_vmap_acked(w->run->vmap, m->sector, m->len / 512, w->run->o->verify_gen);
	}
	m->len = 0;
	q->inflight--;
	q->free[q->nfree++] = (uint16_t)slot;
	return true;
}

/* Count a reaped request completed at now (TSC): latency, totals, a failed status. */
static void account_one(struct worker *w, struct wq *q, const struct reaped *r, uint64_t now)
{
	const struct slot_meta *m = &r->m;

	if (r->st != VIRTIO_BLK_S_OK) {
		w->io_errors++;
		if (w->reported++ < MAX_REPORTED)
			fprintf(stderr,
				"femu-bench: queue %u: %s of %u B at sector %" PRIu64
				" failed with status %u%s\n",
				q->vq->index, m->type == VIRTIO_BLK_T_IN ? "read" : "write", m->len,
				m->sector, r->st,
				r->st == FB_STATUS_UNSET ? " (status byte not written)" : "");
		fail_worker(w);
	}
	if (now < w->t_meas)
		return;
	fb_hist_add(&w->hist, now - m->start);
	w->ios++;
	w->bytes += m->len;
	if (m->type == VIRTIO_BLK_T_IN)
		w->reads++;
	else
		w->writes++;
}

/* Account the n requests reaped at now and note the queue's progress. */
static void account_reaped(struct worker *w, struct wq *q, const struct reaped *done, unsigned n,
			   uint64_t now)
{
	uint64_t sec;

	for (unsigned i = 0; i < n; i++)
		account_one(w, q, &done[i], now);
	q->last_progress = clock_now(w);
	if (now >= w->t_meas)
		w->t_last = now;
	sec = (now - w->t0) / w->tsc_per_s;
	if (sec < FB_PER_S_MAX)
		w->per_s[sec] += n;
	if (w->progress != NULL) {
		w->completed += n;
		__atomic_store_n(w->progress, w->completed, __ATOMIC_RELAXED);
	}
}

/*
 * Pacing: may queue q take another request now?  --rate: when its next
 * submission is due.  --burst: while the burst lasts; once it completed, after
 * a random gap of --gap-us.
 */
static bool pace_ready(struct worker *w, struct wq *q, uint64_t now)
{
	const struct fb_opts *o = w->run->o;

	if (w->rate_ticks)
		return now >= q->next_tsc;
	if (!o->burst || q->burst_left)
		return true;
	if (q->inflight)
		return false;
	if (q->next_tsc == 0) {
		uint64_t gap =
		    o->gap_us_lo + fb_rand_below(&w->rng, o->gap_us_hi - o->gap_us_lo + 1ull);

		q->next_tsc = now + (uint64_t)((double)gap * 1e-6 * fb_tsc_hz());
	}
	if (now < q->next_tsc)
		return false;
	q->next_tsc = 0;
	q->burst_left = o->burst;
	return true;
}

/* A request was submitted on q at now: schedule the next one. */
static void pace_submitted(struct worker *w, struct wq *q, uint64_t now)
{
	if (w->rate_ticks) {
		/* keep the schedule, but never owe more than one request */
		if (q->next_tsc + w->rate_ticks < now)
			q->next_tsc = now;
		q->next_tsc += w->rate_ticks;
	} else if (q->burst_left) {
		q->burst_left--;
	}
}

/*
 * After a timeout: every queue of this worker, with its requests in flight and
 * how long ago it last completed one, so that a report tells one stuck queue
 * from a backend (or one of its pollers) that served none of them.
 */
static void timeout_summary(const struct worker *w, uint64_t clock)
{
	fprintf(stderr,
		"femu-bench: worker %u: %.1f ms of the run in gaps of > %llu ms between its sweeps "
		"(descheduled, or paced), not counted\n",
		w->id, (double)w->paused * 1e3 / fb_tsc_hz(), PAUSE_NS / 1000000ull);
	for (unsigned i = 0; i < w->nq; i++) {
		const struct wq *q = &w->q[i];

		if (q->inflight == 0)
			fprintf(stderr, "femu-bench: worker %u queue %u: none in flight\n", w->id,
				q->vq->index);
		else
			fprintf(stderr,
				"femu-bench: worker %u queue %u: %u in flight, no completion for "
				"%.1f ms\n",
				w->id, q->vq->index, q->inflight,
				(double)(clock - q->last_progress) * 1e3 / fb_tsc_hz());
	}
}

/*
 * One sweep over a queue: reap, refill, publish, then account what was
 * reaped (after the publish: the backend already has the next requests).
 * Returns requests in flight.
 */
FB_HOT unsigned sweep(struct worker *w, struct wq *q, bool submit, const bool packed)
{
	uint32_t ids[POLL_BATCH];
	struct reaped done[POLL_BATCH];
	unsigned n = packed ? fb_pvq_poll(q->vq, ids, POLL_BATCH)
			    : fb_vq_poll(q->vq, ids, POLL_BATCH),
		 nd = 0;
	uint64_t now = fb_tsc(); /* after the poll: the completions' time */
	uint64_t clock = worker_clock(w, now);
	uint32_t type = VIRTIO_BLK_T_IN, len = 0;
	uint64_t off = 0;
	unsigned queued = 0;

	if (n) {
		for (unsigned i = 0; i < n; i++)
			nd += reap_one(w, q, ids[i], &done[nd]);
	} else if (q->inflight && clock - q->last_progress > w->timeout_ticks) {
		fprintf(stderr,
			"femu-bench: timeout: queue %u has %u requests in flight and no "
			"completion for %u ms\n",
			q->vq->index, q->inflight, w->run->o->timeout_ms);
		fb_vq_dump(q->vq, stderr);
		timeout_summary(w, clock);
		w->timed_out = true;
		fail_worker(w);
		return 0;
	}
	while (submit && q->nfree && pace_ready(w, q, now) &&
	       next_request(w, now, &type, &off, &len)) {
		submit_one(w, q, now, type, off, len, packed);
		pace_submitted(w, q, now);
		queued++;
	}
	if (queued && fb_workload_test_pause)
		fb_workload_test_pause(w->id, q->vq->index);
	if (packed)
		fb_pvq_publish(q->vq);
	else
		fb_vq_publish(q->vq);
	if (n)
		account_reaped(w, q, done, nd, now);
	return q->inflight;
}

static void pin(struct worker *w)
{
	cpu_set_t set;

	if (w->cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
		fprintf(stderr, "femu-bench: warning: cannot pin worker %u to CPU %d\n", w->id,
			w->cpu);
}

/*
 * Paced runs: when nothing is in flight and every queue waits for its next
 * burst or rate slot, sleep until shortly before the earliest one (as an
 * application thinks), so that an idle gap costs no CPU.  Latency is
 * measured from submission, so the sleep does not count.
 */
#define PACE_SLEEP_MIN_NS 200000
#define PACE_SLEEP_EARLY_NS 100000

static void pace_sleep(struct worker *w)
{
	uint64_t now = fb_tsc(), first = UINT64_MAX;
	double ns;

	if (!w->run->o->burst && !w->rate_ticks)
		return;
	for (unsigned i = 0; i < w->nq; i++) {
		const struct wq *q = &w->q[i];

		if (q->inflight || q->next_tsc == 0 || q->burst_left)
			return;
		if (q->next_tsc < first)
			first = q->next_tsc;
	}
	if (first <= now)
		return;
	ns = (double)(first - now) * 1e9 / fb_tsc_hz();
	if (ns >= PACE_SLEEP_MIN_NS)
		usleep((useconds_t)((ns - PACE_SLEEP_EARLY_NS) / 1000));
}

/* Sweep the worker's queues until it is done: one instance per ring layout. */
FB_HOT void worker_loop(struct worker *w, const bool packed)
{
	bool submitting = true;

	for (;;) {
		unsigned inflight = 0;
		for (unsigned i = 0; i < w->nq && !w->timed_out; i++)
			inflight += sweep(w, &w->q[i], submitting, packed);
		if (w->timed_out)
			break;
		if (submitting && (__atomic_load_n(&g_stop, __ATOMIC_RELAXED) ||
				   __atomic_load_n(&g_interrupt, __ATOMIC_RELAXED) ||
				   w->quota == 0 || (w->deadline && w->prev_sweep >= w->deadline) ||
				   (w->one_pass && w->cursor >= w->seq_end)))
			submitting = false;
		if (!submitting && inflight == 0)
			break;
		if (submitting && inflight == 0)
			pace_sleep(w);
	}
}

__attribute__((noinline)) static void worker_loop_split(struct worker *w)
{
	worker_loop(w, false);
}

__attribute__((noinline)) static void worker_loop_packed(struct worker *w)
{
	worker_loop(w, true);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	double cpu0;

	pin(w);
	cpu0 = thread_cpu_s();
	w->t_first = w->t_last = w->t_meas;
	if (w->run->o->time_s > 0)
		w->deadline = w->t_meas + (uint64_t)(w->run->o->time_s * fb_tsc_hz());
	if (w->run->vqs[0].packed)
		worker_loop_packed(w);
	else
		worker_loop_split(w);
	w->cpu_s = thread_cpu_s() - cpu0;
	return NULL;
}

static int worker_setup(struct worker *w, const struct fb_run *run, unsigned id, unsigned nw,
			uint64_t t0)
{
	const struct fb_opts *o = run->o;
	uint64_t chunk;

	memset(w, 0, sizeof(*w));
	w->id = id;
	w->run = run;
	w->t0 = t0;
	w->tsc_per_s = (uint64_t)fb_tsc_hz();
	w->t_meas = t0 + (uint64_t)(o->ramp_s * fb_tsc_hz());
	w->cpu = o->cpus[id];
	w->rng = (o->seed + 1) * 0x9e3779b97f4a7c15ull + id * 0x632be59bd9b4e019ull + 1;
	w->timeout_ticks = (uint64_t)(o->timeout_ms * 1e-3 * fb_tsc_hz());
	w->pause_ticks = (uint64_t)((double)PAUSE_NS * 1e-9 * fb_tsc_hz());
	if (o->rate > 0)
		w->rate_ticks = (uint64_t)((double)o->queues / o->rate * fb_tsc_hz()) + 1;
	fb_hist_init(&w->hist);
	w->seq = o->rw == FB_RW_READ || o->rw == FB_RW_WRITE;
	w->one_pass = w->seq && o->time_s <= 0 && o->ios == 0;
	w->read_only = o->rw == FB_RW_READ || o->rw == FB_RW_RANDREAD;
	if (o->ios)
		w->quota = o->ios / nw + (id < o->ios % nw ? 1 : 0);
	else
		w->quota = UINT64_MAX;
	chunk = run->len / nw / fb_opts_max_bs(o) * fb_opts_max_bs(o);
	w->seq_start = run->start + chunk * id;
	w->seq_end = id == nw - 1 ? run->start + run->len : w->seq_start + chunk;
	w->cursor = w->seq_start;
	w->progress = run->progress != NULL ? run->progress + 8 * id : NULL;
	for (unsigned q = id; q < o->queues; q += nw) {
		struct wq *wq = &w->q[w->nq++];
		wq->vq = &run->vqs[q];
		wq->meta = calloc(wq->vq->nslots, sizeof(*wq->meta));
		wq->free = calloc(wq->vq->nslots, sizeof(*wq->free));
		if (!wq->meta || !wq->free)
			return -ENOMEM;
		for (unsigned s = 0; s < wq->vq->nslots; s++)
			wq->free[wq->nfree++] = (uint16_t)(wq->vq->nslots - 1 - s);
	}
	return 0;
}

static void worker_free(struct worker *w)
{
	for (unsigned i = 0; i < w->nq; i++) {
		free(w->q[i].meta);
		free(w->q[i].free);
	}
}

static void collect(struct fb_result *res, struct worker *ws, unsigned nw)
{
	uint64_t t0 = UINT64_MAX, t1 = 0;

	memset(res, 0, sizeof(*res));
	fb_hist_init(&res->lat);
	res->tsc_hz = fb_tsc_hz();
	for (unsigned i = 0; i < nw; i++) {
		struct worker *w = &ws[i];
		fb_hist_merge(&res->lat, &w->hist);
		res->ios += w->ios;
		res->reads += w->reads;
		res->writes += w->writes;
		res->bytes += w->bytes;
		res->io_errors += w->io_errors;
		res->verify_errors += w->verify_errors;
		res->cpu_s += w->cpu_s;
		res->timed_out |= w->timed_out;
		res->failed |= w->failed;
		for (unsigned q = 0; q < w->nq; q++)
			res->kicks += w->q[q].vq->kicks;
		if (w->t_first < t0)
			t0 = w->t_first;
		if (w->t_last > t1)
			t1 = w->t_last;
		for (unsigned s = 0; s < FB_PER_S_MAX; s++)
			res->per_s[s] += w->per_s[s];
	}
	res->elapsed_s = t1 > t0 ? (double)(t1 - t0) / res->tsc_hz : 0;
	/* whole seconds from the shared start to the last completion */
	res->nper_s = nw ? (unsigned)((double)(t1 - ws[0].t0) / res->tsc_hz) : 0;
	if (res->nper_s > FB_PER_S_MAX)
		res->nper_s = FB_PER_S_MAX;
}

void fb_workload_interrupt(void)
{
	__atomic_store_n(&g_interrupt, 1, __ATOMIC_RELAXED);
}

int fb_workload_run(const struct fb_run *run, struct fb_result *res)
{
	unsigned nw = run->o->ncpus;
	struct worker *ws = calloc(nw, sizeof(*ws));
	uint64_t t0;
	int rc = 0;

	if (!ws)
		return -1;
	fb_tsc_hz();
	__atomic_store_n(&g_stop, 0, __ATOMIC_RELAXED);
	t0 = fb_tsc();
	for (unsigned i = 0; i < nw && rc == 0; i++)
		rc = worker_setup(&ws[i], run, i, nw, t0);
	for (unsigned i = 0; i < nw && rc == 0; i++)
		if (pthread_create(&ws[i].th, NULL, worker_main, &ws[i]) != 0) {
			fprintf(stderr, "femu-bench: cannot start worker thread\n");
			__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
			for (unsigned j = 0; j < i; j++)
				pthread_join(ws[j].th, NULL);
			rc = -1;
			nw = 0;
		}
	for (unsigned i = 0; i < nw && rc == 0; i++)
		pthread_join(ws[i].th, NULL);
	if (rc == 0)
		collect(res, ws, nw);
	for (unsigned i = 0; i < run->o->ncpus; i++)
		worker_free(&ws[i]);
	free(ws);
	if (rc < 0)
		return -1;
	return res->failed ? -1 : 0;
}
