/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - femu-bench: a poll-mode vhost-user-blk initiator without a VM.
 * Connects to a backend socket as the frontend, shares one memfd region,
 * sets up N split (or --packed: packed) virtqueues and runs a workload (or the --hostile cases,
 * the --connect-churn cycles, or the --selftest-peer measurement of the
 * initiator itself).
 *
 * Exit status: 0 success, 1 I/O error / verify mismatch / timeout / hostile
 * case failed, 2 bad command line, 3 cannot connect or set up the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fb_churn.h"
#include "fb_dev.h"
#include "fb_dirtylog.h"
#include "fb_hostile.h"
#include "fb_mem.h"
#include "fb_opts.h"
#include "fb_peer.h"
#include "fb_report.h"
#include "fb_vring.h"
#include "fb_workload.h"

#define PEER_CAPACITY (1ull << 30) /* bytes the self-test peer pretends to have */

struct bench {
	struct fb_opts o;
	struct fb_dev dev;
	struct fb_mem mem;
	struct fb_vq vqs[FB_MAX_QUEUES];
	unsigned nvq;
	struct fb_peer peer;
	bool peer_running;
	struct fb_dirtylog log; /* --dirty-log */
	uint64_t capacity;
	uint32_t blk_size;
};

static int setup_error(const char *msg)
{
	fprintf(stderr, "femu-bench: %s\n", msg);
	return 3;
}

/* Check the device against the options; 0 or an exit status. */
static int check_device(struct bench *b)
{
	const struct fb_opts *o = &b->o;
	char msg[256];

	if (o->queues > b->dev.queues_offered) {
		snprintf(msg, sizeof(msg), "the backend offers %u queue%s, --queues %u requested",
			 b->dev.queues_offered, b->dev.queues_offered == 1 ? "" : "s", o->queues);
		return setup_error(msg);
	}
	if (b->dev.readonly && o->rw != FB_RW_READ && o->rw != FB_RW_RANDREAD) {
		snprintf(msg, sizeof(msg),
			 "the device is read-only (VIRTIO_BLK_F_RO), --rw %s "
			 "writes",
			 fb_rw_name(o->rw));
		return setup_error(msg);
	}
	if (!b->capacity && !o->size)
		return setup_error("the backend has no config space (capacity unknown): give "
				   "--size");
	return 0;
}

static int check_range(struct bench *b, uint64_t *len)
{
	const struct fb_opts *o = &b->o;
	char msg[256];

	if (b->capacity && o->offset >= b->capacity) {
		snprintf(msg, sizeof(msg),
			 "--offset %" PRIu64 " is beyond the device (%" PRIu64 " bytes)", o->offset,
			 b->capacity);
		return setup_error(msg);
	}
	*len = o->size ? o->size : b->capacity - o->offset;
	if (b->capacity && o->offset + *len > b->capacity) {
		snprintf(msg, sizeof(msg),
			 "--offset + --size (%" PRIu64 ") is beyond the device "
			 "(%" PRIu64 " bytes)",
			 o->offset + *len, b->capacity);
		return setup_error(msg);
	}
	for (unsigned i = 0; i < o->nbs; i++)
		if (o->bs[i] % b->blk_size || o->offset % b->blk_size || *len % b->blk_size) {
			snprintf(msg, sizeof(msg),
				 "--bs/--offset/--size must be multiples of the "
				 "device block size %u",
				 b->blk_size);
			return setup_error(msg);
		}
	if (*len < fb_opts_max_bs(o))
		return setup_error("the range is smaller than --bs");
	return 0;
}

static int setup_queues(struct bench *b)
{
	const struct fb_opts *o = &b->o;
	size_t bytes = 4096;
	int rc;

	for (unsigned i = 0; i < o->queues; i++)
		bytes += fb_vq_mem_bytes(o->qsize, o->qd, fb_opts_max_bs(o));
	rc = fb_mem_create(&b->mem, bytes, o->hugepages);
	if (rc < 0) {
		fprintf(stderr, "femu-bench: cannot create %zu bytes of shared memory%s: %s\n",
			bytes, o->hugepages ? " (hugetlb)" : "", strerror(-rc));
		return 3;
	}
	for (unsigned i = 0; i < o->queues; i++) {
		rc = fb_vq_init_layout(
		    &b->vqs[i], &b->mem, i, o->qsize, o->qd, fb_opts_max_bs(o),
		    o->event_idx && (o->selftest_peer ||
				     (b->dev.conn.features & (1ull << VIRTIO_RING_F_EVENT_IDX))),
		    o->packed);
		if (rc == 0 && o->indirect)
			rc = fb_vq_use_indirect(&b->vqs[i]);
		if (rc < 0) {
			fprintf(stderr, "femu-bench: queue %u setup: %s\n", i, strerror(-rc));
			return 3;
		}
		b->nvq++;
	}
	return 0;
}

static int start_backend(struct bench *b)
{
	int rc;

	if (b->o.selftest_peer) {
		rc = fb_peer_start(&b->peer, b->vqs, b->nvq, b->o.peer_cpu);
		if (rc < 0)
			return setup_error("cannot start the self-test peer thread");
		b->peer_running = true;
		return 0;
	}
	rc = fb_dev_start(&b->dev, &b->mem, b->vqs, b->nvq);
	if (rc == 0 && b->o.dirty_log)
		rc = fb_dirtylog_start(&b->log, &b->dev, &b->mem, b->vqs, b->nvq);
	return rc < 0 ? setup_error(b->dev.err) : 0;
}

/* --dirty-log: every page the backend wrote is marked, no page it only read (1: not so). */
static int dirty_log_check(struct bench *b)
{
	bool reads = b->o.rw != FB_RW_RANDWRITE && b->o.rw != FB_RW_WRITE;
	uint64_t marked;
	char err[200];

	if (fb_dirtylog_check(&b->log, &b->mem, b->vqs, b->nvq, reads, &marked, err, sizeof(err)) !=
	    0) {
		fprintf(stderr, "femu-bench: dirty log: %s (%llu pages marked)\n", err,
			(unsigned long long)marked);
		return 1;
	}
	fprintf(stderr, "femu-bench: dirty log: %llu pages marked; %s, status bytes%s marked%s%s\n",
		(unsigned long long)marked, b->o.packed ? "used descriptors" : "used rings",
		reads ? ", read buffers" : "",
		b->o.packed ? "" : ", descriptor tables and avail rings not",
		b->o.indirect ? "; indirect tables not" : "");
	return 0;
}

static void teardown(struct bench *b)
{
	if (b->peer_running) {
		fb_peer_stop(&b->peer);
		if (!b->o.quiet)
			fprintf(stderr,
				"femu-bench: self-test peer completed %" PRIu64 " requests\n",
				b->peer.completed);
	}
	if (!b->o.selftest_peer)
		fb_dev_stop(&b->dev, b->vqs, b->nvq);
	for (unsigned i = 0; i < b->nvq; i++)
		fb_vq_fini(&b->vqs[i]);
	fb_dirtylog_fini(&b->log);
	fb_mem_destroy(&b->mem);
}

static int connect_device(struct bench *b)
{
	int rc;

	if (b->o.selftest_peer) {
		b->capacity = b->o.size ? b->o.offset + b->o.size : PEER_CAPACITY;
		b->blk_size = 512;
		b->dev.conn.fd = -1;
		return 0;
	}
	rc = fb_dev_connect_retry(&b->dev, b->o.sock, b->o.timeout_ms, b->o.event_idx);
	if (rc < 0) {
		vu_close(&b->dev.conn);
		return setup_error(b->dev.err);
	}
	if (b->o.packed && fb_dev_use_packed(&b->dev) < 0) {
		vu_close(&b->dev.conn);
		return setup_error(b->dev.err);
	}
	if (b->o.indirect && !(b->dev.conn.features & (1ull << VIRTIO_RING_F_INDIRECT_DESC))) {
		vu_close(&b->dev.conn);
		return setup_error("--indirect: the backend does not offer indirect descriptors "
				   "(VIRTIO_RING_F_INDIRECT_DESC, feature bit 28)");
	}
	b->capacity = b->dev.capacity;
	b->blk_size = b->dev.blk_size;
	if (!b->o.quiet)
		fprintf(stderr,
			"femu-bench: %s: %" PRIu64 " bytes, block %u, %u queues offered, "
			"features 0x%" PRIx64 "\n",
			b->o.sock, b->capacity, b->blk_size, b->dev.queues_offered,
			b->dev.conn.features);
	rc = check_device(b);
	if (rc)
		vu_close(&b->dev.conn);
	return rc;
}

/*
 * --progress FILE: a shared mapping with a 64-byte line per worker (the
 * workers share no cache line through it).  NULL after printing why.
 */
static uint64_t *progress_map(const char *path, unsigned workers, size_t *len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	void *p = MAP_FAILED;

	*len = ((size_t)workers * 64 + 4095) & ~(size_t)4095;
	if (fd >= 0 && ftruncate(fd, (off_t)*len) == 0)
		p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		fprintf(stderr, "femu-bench: --progress '%s': %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static int run_bench(struct bench *b)
{
	struct fb_run run = {.o = &b->o, .vqs = b->vqs};
	struct fb_vmap vmap;
	struct fb_result *res;
	size_t progress_len = 0;
	int rc;

	rc = connect_device(b);
	if (rc)
		return rc;
	b->blk_size = b->blk_size ? b->blk_size : 512;
	rc = check_range(b, &run.len);
	if (rc == 0)
		rc = setup_queues(b);
	if (rc == 0)
		rc = start_backend(b);
	if (rc) {
		teardown(b);
		return rc;
	}
	run.start = b->o.offset;
	run.blk_size = b->blk_size;
	if (b->o.verify_map) {
		char err[300];

		if (fb_vmap_open(&vmap, b->o.verify_map, b->capacity, err, sizeof(err)) != 0) {
			fprintf(stderr, "femu-bench: %s\n", err);
			teardown(b);
			return 2;
		}
		run.vmap = &vmap;
	}
	if (b->o.progress) {
		run.progress = progress_map(b->o.progress, b->o.ncpus, &progress_len);
		if (run.progress == NULL) {
			if (run.vmap)
				fb_vmap_close(run.vmap);
			teardown(b);
			return 2;
		}
	}
	res = malloc(sizeof(*res));
	if (!res) {
		teardown(b);
		return 3;
	}
	rc = fb_workload_run(&run, res) == 0 ? 0 : 1;
	if (b->o.dirty_log && dirty_log_check(b) != 0)
		rc = 1;
	teardown(b);
	if (run.progress)
		munmap(run.progress, progress_len);
	if (run.vmap)
		fb_vmap_close(run.vmap);
	if (b->o.json)
		fb_report_json(stdout, &b->o, res);
	else
		fb_report_text(stdout, &b->o, res);
	if (rc)
		fprintf(stderr, "femu-bench: FAILED\n");
	free(res);
	return rc;
}

static void on_signal(int sig)
{
	(void)sig;
	fb_workload_interrupt();
}

/* SIGINT/SIGTERM end a run early but still print its result. */
static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int main(int argc, char **argv)
{
	static struct bench b;
	char err[256];
	int rc;

	fb_opts_defaults(&b.o);
	rc = fb_opts_parse(&b.o, argc, argv, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc < 0) {
		fprintf(stderr, "femu-bench: %s (see --help)\n", err);
		return 2;
	}
	if (b.o.hostile)
		return fb_hostile_run(&b.o);
	if (b.o.connect_churn)
		return fb_churn_run(&b.o);
	catch_signals();
	return run_bench(&b);
}
