/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fake_vhost.h - a fake rte_vhost (and fake pollers) for fuzzing femud's
 * vhost-user message hooks (pmd/pmd_blk.c) without sockets or threads.
 *
 * The fake plays DPDK 22.11's vhost_user_msg_handler for one device: it
 * hands each message to femud's pre hook, handles what the hook leaves
 * (vring state, memory table, features) the way rte_vhost does, calls the
 * post hook, tells femud about vrings that became ready or stopped being
 * ready (vring_state_changed), and closes the connection on an error
 * without REPLY_ACK (destroy_connection; the next message arrives on a new
 * connection).  Where rte_vhost itself is lax the fake is too: a ring that
 * is only partly inside guest memory keeps its (short) mapping, as
 * translate_ring_addresses() leaves it, and a memory region larger than
 * its file is mapped anyway (accesses past the file's end raise SIGBUS).
 *
 * Guest memory lives in memfds the fuzzer chooses for each region; the
 * "guest" writes into them (fv_guest_write) between messages.  Queues femud
 * hands to a poller are swept once after every message (fv_sweep).
 */
#ifndef FUZZ_FAKE_VHOST_H
#define FUZZ_FAKE_VHOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmd/virtio_blk_wire.h" /* request codes, flags */

#define FV_MAX_FDS 8	   /* VHOST_MEMORY_MAX_NREGIONS */
#define FV_PAYLOAD_MAX 268 /* largest payload (config: 12 + 256) */
#define FV_NFILES 2	   /* guest memory files: 256 KiB and 64 KiB */
#define FV_FILE0_SIZE (256u << 10)
#define FV_FILE1_SIZE (64u << 10)
#define FV_FD_EVENT 2 /* fd selector: the kick/call eventfd */

/* One message as a frontend sends it; fds name guest files or eventfds. */
struct fv_msg {
	uint32_t request;
	uint32_t flags;
	uint32_t size;
	uint8_t payload[FV_PAYLOAD_MAX];
	unsigned nfds;
	uint8_t fd_sel[FV_MAX_FDS]; /* 0/1: guest file, FV_FD_EVENT: eventfd */
};

/* Outcome of one message, for the target's checks. */
struct fv_result {
	bool replied; /* a reply (or NACK) went back */
	bool nack;    /* REPLY_ACK answered failure */
	bool closed;  /* the connection was closed */
	uint64_t reply_u64;
	uint32_t reply_size;
};

/* Once per process: device with `queues` queues on the fake model. */
void fv_init(unsigned queues);
/* Start of an input: fresh guest memory, a fresh connection. */
void fv_begin(uint64_t model_due_delta_ns);
/* One frontend message. */
void fv_message(const struct fv_msg *m, struct fv_result *r);
/* The guest writes len bytes at offset off of guest file f (clipped to the file). */
void fv_guest_write(unsigned f, uint64_t off, const uint8_t *p, size_t len);
/* Every attached queue is swept once, as its poller would. */
void fv_sweep(void);
/* End of an input: the frontend hangs up; checks femud let go of every queue. */
void fv_end(void);

#endif /* FUZZ_FAKE_VHOST_H */
