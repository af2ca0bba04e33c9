/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vhost_stub.h - rte_vhost stubbed out for unit tests of pmd/'s control
 * path (pmd_blk.c), in the manner of SPDK's vhost_ut: every DPDK function
 * pmd_blk.c and vq.c call is defined here (DEFINE_STUB for the ones whose
 * result a test only sets, hand-written fakes for the ones that keep state),
 * and the pollers are a fake that holds the attached queues for the test to
 * sweep.  The test links pmd/'s sources directly, DPDK's headers only.
 *
 * One fake connection (vid ut_vid) with UT_VRINGS vrings over a fake_guest.
 */
#ifndef PMD_TEST_VHOST_STUB_H
#define PMD_TEST_VHOST_STUB_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_vhost.h>

#include "pmd/vq.h"

/*
 * DEFINE_STUB(fn, ret, args, value): fn returns ut_<fn>, a global the test
 * may change (value by default).  DEFINE_STUB_V: a function that does
 * nothing.
 */
#define DEFINE_STUB(fn, ret, args, value)                                                          \
	ret ut_##fn = (value);                                                                     \
	ret fn args                                                                                \
	{                                                                                          \
		return ut_##fn;                                                                    \
	}
#define DEFINE_STUB_V(fn, args)                                                                    \
	void fn args                                                                               \
	{                                                                                          \
	}

#define UT_VRINGS 4

/* What rte_vhost knows of one vring. */
struct ut_vring {
	struct rte_vhost_vring vr; /* desc/avail/used/size/callfd/kickfd */
	uint16_t last_avail;	   /* rte_vhost's vring base */
	uint16_t last_used;
	unsigned set_base_calls; /* rte_vhost_set_vring_base() calls */
	/* inflight region: present when inflight_split != NULL */
	struct rte_vhost_inflight_info_split *inflight_split;
	/* or a packed ring's (rte_vhost reads the vring base from it) */
	struct rte_vhost_inflight_info_packed *inflight_packed;
	struct rte_vhost_resubmit_info *resubmit;
};

extern int ut_vid;
/* A second connection of the same frontend (same memory, same vrings) when >= 0. */
extern int ut_vid2;
extern uint64_t ut_features; /* negotiated virtio features */
extern struct rte_vhost_memory *ut_mem;
/* ut_vid2's memory table when set (another frontend: other files, same host addresses). */
extern struct rte_vhost_memory *ut_mem2;
extern struct ut_vring ut_vrings[UT_VRINGS];
extern const struct rte_vhost_device_ops *ut_dev_ops;	   /* from callback_register */
extern const struct rte_vhost_user_extern_ops *ut_ext_ops; /* from extern_callback_register */

/* The last message pmd/ logged (rte_log), and the messages since ut_stub_reset(). */
extern char ut_last_log[512];
extern char ut_log[8192];

/* The socket path rte_vhost_get_ifname() answers for ut_vid. */
extern char ut_ifname[108];

/*
 * Inflight calls vq.c / vq_packed.c made, in order: 's' set, 'l' set_last,
 * 'c' clear; packed 'S', 'L', 'C' (the stub hands out the chain's first ring
 * position as its inflight entry).
 */
#define UT_MAX_INFLIGHT_CALLS 64
extern char ut_inflight_op[UT_MAX_INFLIGHT_CALLS];
extern uint16_t ut_inflight_idx[UT_MAX_INFLIGHT_CALLS];
extern unsigned ut_ninflight;

/* The fake pollers: queues attached now. */
extern struct pmd_vq *ut_attached[UT_VRINGS * 4];
extern unsigned ut_nattached;
extern unsigned ut_nabandoned;	/* queues taken back without posting their completions */
extern unsigned ut_attach_fail; /* the next this many pmd_poller_attach calls fail */

/*
 * The dirty log: pages (4 KiB, by guest physical address below
 * UT_LOG_PAGES * 4096) marked by rte_vhost_log_write /
 * rte_vhost_log_used_vring while ut_features has VHOST_F_LOG_ALL (as
 * rte_vhost does), and every call of either, logging on or not.
 */
#define UT_LOG_PAGES 256
extern bool ut_dirty[UT_LOG_PAGES];
extern unsigned ut_log_calls;
/* What rte_vhost_get_log_base answers (the SIGBUS net registers it). */
extern uint64_t ut_log_base, ut_log_size;

/* Reset every fake to an empty connection. */
void ut_stub_reset(void);

/* The attached queue of vring qid, or NULL. */
struct pmd_vq *ut_queue(uint16_t qid);

/* Sweep every attached queue once at time now_ns. */
void ut_sweep(uint64_t now_ns);

#endif /* PMD_TEST_VHOST_STUB_H */
