/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_opts.h - femu-bench command line: the option struct, its parser and the
 * size / list parsers it uses (exported for unit tests).
 *
 * Units: sizes in bytes, times in seconds unless a name says otherwise.
 */
#ifndef FB_OPTS_H
#define FB_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ftl/num_parse.h"

#define FB_MAX_BS 8	     /* block sizes in one --bs list */
#define FB_MAX_CPUS 64	     /* entries in --cpus */
#define FB_MAX_QUEUES 64     /* virtqueues one run may use */
#define FB_MAX_QSIZE 1024    /* split virtqueue size limit */
#define FB_MAX_IO (1u << 20) /* largest single request, bytes */
#define FB_MAX_CPU_NUM 4095  /* largest CPU number in --cpus, --peer-cpu */

enum fb_rw { FB_RW_RANDREAD, FB_RW_RANDWRITE, FB_RW_READ, FB_RW_WRITE, FB_RW_RANDRW };

struct fb_opts {
	const char *sock;	/* -s: backend socket path */
	enum fb_rw rw;		/* --rw */
	unsigned mix;		/* --mix: percent reads for randrw (default 50) */
	uint32_t bs[FB_MAX_BS]; /* --bs: one or more sizes, multiples of 512 */
	unsigned nbs;
	unsigned qd;	       /* --qd: requests in flight per queue */
	unsigned queues;       /* --queues */
	unsigned qsize;	       /* --qsize: virtqueue size (power of two <= 1024) */
	double time_s;	       /* --time (0 = not time based) */
	double ramp_s;	       /* --ramp: seconds of I/O before --time starts counting */
	uint64_t ios;	       /* --ios (0 = not count based) */
	uint64_t size;	       /* --size: byte range (0 = whole device from offset) */
	uint64_t offset;       /* --offset: first byte of the range */
	int cpus[FB_MAX_CPUS]; /* --cpus: one worker thread per entry (-1 = not pinned) */
	unsigned ncpus;
	bool verify;		  /* --verify */
	uint64_t verify_gen;	  /* --verify-gen */
	const char *verify_map;	  /* --verify-map FILE: expectations kept across runs */
	const char *progress;	  /* --progress FILE: each worker's completions so far */
	bool json;		  /* --json */
	bool hostile;		  /* --hostile */
	uint64_t connect_churn;	  /* --connect-churn N: N connections, one request per queue each */
	bool churn_overlap;	  /* --churn-overlap: odd connections stay open into the next */
	const char *hostile_case; /* --case: only hostile cases whose name contains this */
	bool selftest_peer;	  /* --selftest-peer: in-process completing backend */
	int peer_cpu;		  /* --peer-cpu */
	bool event_idx;		  /* negotiate VIRTIO_RING_F_EVENT_IDX when offered */
	bool dirty_log;		  /* --dirty-log: log the backend's writes, check the log */
	bool packed;		  /* --packed: VIRTIO_F_RING_PACKED, packed virtqueues */
	bool indirect;		  /* --indirect: each request one descriptor naming a table */
	bool hugepages;		  /* back shared memory with hugetlb memfd */
	unsigned timeout_ms;	  /* --timeout: bound on every wait */
	uint64_t seed;		  /* --seed: random offsets */
	bool quiet;		  /* --quiet: no progress lines */
	/* pacing (sparse traffic); at most one of rate and burst */
	double rate;	/* --rate: requests per second in total, spread over the queues (0 = closed
			   loop) */
	unsigned burst; /* --burst: requests per burst on each queue (0 = no bursts) */
	uint32_t gap_us_lo; /* --gap-us LO[-HI]: idle time after each burst completed, */
	uint32_t gap_us_hi; /*   uniform in [LO, HI] us */
};

/* Fill o with defaults. */
void fb_opts_defaults(struct fb_opts *o);

/*
 * Parse argv into o (after fb_opts_defaults).  Returns 0 on success, 1 when
 * --help was printed, -1 on error with a message in err naming the option.
 */
int fb_opts_parse(struct fb_opts *o, int argc, char **argv, char *err, size_t errlen);

/* Sizes in femu-bench's options: decimal or 0x hex, binary k/m/g/t suffixes (num_parse.h). */
#define FB_SIZE_FLAGS (NUM_HEX | NUM_SUFFIX)

/* "4096", "4k", "4KiB", "1m", "2G", "0x1000" -> bytes.  Returns -1 on junk or overflow. */
int fb_parse_size(const char *s, uint64_t *out);

/* "512,4k,64k" -> sizes (each a multiple of 512, 512..FB_MAX_IO). */
int fb_parse_bs_list(const char *s, uint32_t *out, unsigned max, unsigned *n);

/* "50" or "30-80" -> [lo, hi] (lo <= hi <= max).  Returns -1 on junk. */
int fb_parse_range(const char *s, uint32_t max, uint32_t *lo, uint32_t *hi);

/* "1", "0,2", "1-3" -> CPU numbers. */
int fb_parse_cpu_list(const char *s, int *out, unsigned max, unsigned *n);

/* Name of an --rw value ("randread", ...). */
const char *fb_rw_name(enum fb_rw rw);

/* Largest size in the --bs list. */
uint32_t fb_opts_max_bs(const struct fb_opts *o);

void fb_opts_usage(FILE *out);

#endif /* FB_OPTS_H */
