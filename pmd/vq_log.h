/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_log.h - dirty logging of what femud writes into guest memory, for a
 * frontend's live migration (VHOST_F_LOG_ALL with the log region of
 * VHOST_USER_PROTOCOL_F_LOG_SHMFD, both mapped and owned by rte_vhost).
 *
 * Owns: turning the host addresses a queue wrote into guest physical
 * addresses and marking their 4 KiB pages in the frontend's log
 * (rte_vhost_log_write), and marking a split queue's used ring through
 * the vring's log address (rte_vhost_log_used_vring).  Called only by a
 * queue that started with logging on (its poller, or the control path
 * before attach / after detach); nothing here is on the path of a queue
 * without logging.  Marks are made after the writes they cover: a page
 * synced between write and mark is marked again for the next pass.
 */
#ifndef PMD_VQ_LOG_H
#define PMD_VQ_LOG_H

#include <stdint.h>

#include <rte_vhost.h>

#include "ftl/fm_model.h"

/*
 * Mark [hva, hva + len) of guest memory (host addresses of mem's regions)
 * dirty in connection vid's log; bytes outside every region are skipped.
 */
void pmd_vq_log_hva(int vid, const struct rte_vhost_memory *mem, const void *hva, uint64_t len);

/* Mark the segments iov[0..n) (host addresses in mem) dirty. */
void pmd_vq_log_iov(int vid, const struct rte_vhost_memory *mem, const struct fm_iov *iov,
		    uint32_t n);

/*
 * Mark the whole used ring of split queue qid of vid (size entries: flags,
 * idx, the entries and avail_event) dirty: one call covers any number of
 * entries, the index and the notification fields written since the last.
 */
void pmd_vq_log_used_split(int vid, uint16_t qid, uint16_t size);

#endif /* PMD_VQ_LOG_H */
