/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_dirtylog.h - --dirty-log: femu-bench turns dirty logging on in a
 * running device as QEMU does when a live migration starts (LOG_SHMFD
 * protocol feature, SET_LOG_BASE with a memfd log, SET_FEATURES with
 * VHOST_F_LOG_ALL, SET_VRING_ADDR with the log flag and the used ring's
 * address), and after the run checks the log: every page the backend wrote
 * (used rings, status bytes, read buffers) is marked, and the descriptor
 * tables and avail rings it only reads are not.
 */
#ifndef FB_DIRTYLOG_H
#define FB_DIRTYLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fb_dev.h"
#include "fb_mem.h"
#include "fb_vring.h"

struct fb_dirtylog {
	int fd;
	uint8_t *bits; /* one bit per 4 KiB page of guest physical address space */
	size_t size;   /* bytes */
};

/* Start logging on the running device; 0 or -errno with a message in dev->err. */
int fb_dirtylog_start(struct fb_dirtylog *lg, struct fb_dev *dev, const struct fb_mem *mem,
		      const struct fb_vq *vqs, unsigned n);

/*
 * Check the log after the requests completed (reads: the run read data into
 * every slot).  0, or -1 with the first wrong page in err; *marked gets the
 * number of pages marked.
 */
int fb_dirtylog_check(const struct fb_dirtylog *lg, const struct fb_mem *mem,
		      const struct fb_vq *vqs, unsigned n, bool reads, uint64_t *marked, char *err,
		      size_t errlen);

void fb_dirtylog_fini(struct fb_dirtylog *lg);

#endif /* FB_DIRTYLOG_H */
