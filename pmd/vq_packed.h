/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vq_packed.h - serving one packed virtqueue (virtio 1.2, 2.8) on a poller:
 * the calls vq.c (and vq.h's pmd_vq_sweep, with pmd_vqp_sweep) hand a queue
 * with VIRTIO_F_RING_PACKED to (each tests the layout once per call, never
 * per request).  Same contracts as the pmd_vq_* call of the same name.
 *
 * In a packed struct pmd_vq, last_avail and used_idx are ring positions
 * (0..size-1) with the wrap counters q->pk.avail_wrap / q->pk.used_wrap;
 * desc_packed is the one descriptor ring, driver_event the driver's event
 * suppression area (read for call decisions), device_event femud's (written
 * to suppress or re-arm kicks); a pending completion's head is its buffer id.
 */
#ifndef PMD_VQ_PACKED_H
#define PMD_VQ_PACKED_H

#include "pmd/vq.h"

/*
 * 1: a sweep's used descriptors are published together, by storing the
 * first one's flags last (each PMD_VQ_PUBLISH_BYTES of data or
 * q->publish_every requests, see PMD_VQ_PUBLISH_SHARE, and at the sweep's
 * end, as the split ring's used index); 0: each as it is written, to
 * measure without it.  Never with inflight tracking: there each
 * completion is published before its inflight entry is cleared.
 */
#ifndef PMD_VQP_BATCH
#define PMD_VQP_BATCH 1
#endif
/* The look-ahead walks chains of at most this many ring descriptors (longer ones end it). */
#define PMD_VQP_TOUCH_MAX_DESC 16

/*
 * At pmd_vq_create: indexes and wrap counters from s, and with replays the
 * ring position where the previous backend stopped taking (vq_packed.c).
 */
void pmd_vqp_setup(struct pmd_vq *q, const struct pmd_vq_setup *s);
void pmd_vqp_flush(struct pmd_vq *q, uint64_t now_ns, struct pmd_chain *scratch);
bool pmd_vqp_notify_arm(struct pmd_vq *q);
void pmd_vqp_notify_suppress(struct pmd_vq *q);

#endif /* PMD_VQ_PACKED_H */
