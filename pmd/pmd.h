/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmd.h - public interface of the vhost-user-blk poll-mode driver.
 *
 * The daemon creates one pmd_blk per --dev.  The pmd registers the socket
 * with rte_vhost, answers the vhost-user control messages (features, config
 * space, vring state) and hands every enabled virtqueue to exactly one
 * poller.  Pollers run on EAL worker lcores (or on the main lcore when it is
 * the only one) and call the device model through struct fm_model_ops.
 *
 * Units: sizes in bytes unless a name says sectors (512 B); times in ns.
 */
#ifndef PMD_H
#define PMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ftl/fm_model.h"
#include "pmd/pmd_stats.h"

#define PMD_MAX_QUEUES 64
#define PMD_MAX_POLLERS 128
#define PMD_SERIAL_LEN 20 /* VIRTIO_BLK_ID_BYTES */

/* What a device offers to the frontend. */
struct pmd_blk_params {
	const char *path;	 /* unix socket path (server) */
	mode_t sock_mode;	 /* permission bits of the socket, e.g. 0600 */
	bool sock_chown;	 /* give the socket to sock_uid / sock_gid */
	uid_t sock_uid;		 /* owner of the socket (with sock_chown) */
	gid_t sock_gid;		 /* its group; (gid_t)-1: as created */
	unsigned queues;	 /* virtqueues offered, 1..PMD_MAX_QUEUES */
	uint32_t blk_size;	 /* logical block size, bytes: 512 or 4096 */
	uint64_t capacity_bytes; /* multiple of blk_size */
	char serial[PMD_SERIAL_LEN + 1];
	bool readonly;
};

struct pmd_blk; /* one vhost-user-blk device */

/*
 * How pollers wait for work.  BUSY: every poller spins on its queues all the
 * time (lowest latency, one core per poller).  ADAPTIVE: a poller that found
 * no new request on any of its queues for idle_ns re-arms guest
 * notifications and sleeps in io_uring until a kick, a control message or
 * its earliest pending completion wakes it (see pmd/poller_sleep.h).
 */
enum pmd_poll_mode { PMD_POLL_BUSY, PMD_POLL_ADAPTIVE };
#define PMD_IDLE_NS_DEFAULT 50000ull

/* Choose the poll mode of every poller; call before pmd_init() (-EALREADY after). */
int pmd_set_poll_mode(enum pmd_poll_mode mode, uint64_t idle_ns);

/*
 * Change poller idx's poll mode and idle threshold (ns) after pmd_init(),
 * while it runs or not: a running poller applies it between two sweeps (it
 * wakes up for it if asleep) and this returns once it has.  Not from a
 * poller.  -EINVAL for a bad idx or mode.
 */
int pmd_poller_set_mode(unsigned idx, enum pmd_poll_mode mode, uint64_t idle_ns);

/*
 * Set up the pollers: lcore ids of the EAL lcores that poll.  Call once after
 * rte_eal_init() and before pmd_blk_create().  When main_polls is true the
 * main lcore is the (only) poller and pmd_poller_run_main() must be called
 * from it.
 */
int pmd_init(const unsigned *lcores, unsigned n, bool main_polls);

/*
 * Create a device and start listening on params->path.  A path in use by a
 * live listener is refused (-EADDRINUSE); a stale socket file is replaced.
 * The socket gets params->sock_mode, and with sock_chown sock_uid / sock_gid.  Frontends may
 * reconnect at any time; with VHOST_USER_PROTOCOL_F_INFLIGHT_SHMFD requests a killed femud had
 * taken are replayed on reconnect.
 * The model's submit() is called from pollers; when ops->single_writer is
 * set all of the device's queues go to one poller.
 * On error returns a negative errno and writes a message to err.
 */
int pmd_blk_create(const struct pmd_blk_params *params, const struct fm_model_ops *ops,
		   struct fm_model *model, struct pmd_blk **out, char *err, size_t errlen);

/*
 * Stop accepting connections, let in-flight requests complete, detach every
 * queue from its poller and unregister the socket.  Safe while pollers run.
 * Same as pmd_blk_close(dev, true).
 */
void pmd_blk_destroy(struct pmd_blk *dev);

/* Launch pollers on the worker lcores (rte_eal_remote_launch). */
int pmd_pollers_start(void);

/*
 * Poll on the calling (main) lcore until pmd_pollers_stop() is called
 * (main_polls mode only).  Control work (signals) must then be done from
 * other threads; the pmd never blocks here.
 */
void pmd_poller_run_main(void);

/* Ask every poller to return, and wait for the worker lcores (without a bound). */
void pmd_pollers_stop(void);

/*
 * Ask every poller to return and wait at most timeout_ns (ns; UINT64_MAX:
 * no bound) for all of them together.  Returns 0 once every poller has
 * returned, else the number that did not; each of those is logged (lcore,
 * whether it still sweeps, its thread's state and run-queue wait, its
 * queues).  Such a poller still owns its queues: the caller must not detach
 * them, close their devices or snapshot state a poller writes; exiting the
 * process is what is left.
 */
unsigned pmd_pollers_stop_within(uint64_t timeout_ns);

/*
 * Park every running poller between two sweeps and return once all are
 * parked: no request is being served anywhere until pmd_pollers_unpark().
 * For a short exclusive moment of a control thread (an image snapshot);
 * queue attach / detach wait meanwhile.  Not nestable; pollers that are not
 * running are not waited for.
 */
void pmd_pollers_park(void);
void pmd_pollers_unpark(void);

/* Who is on a new connection, as far as the connect hook can tell. */
struct pmd_peer {
	int sock_fd; /* its accepted socket, -1: unknown */
	pid_t pid;   /* the frontend process (SO_PEERCRED), 0: unknown */
};

/*
 * Called on rte_vhost's control thread each time a frontend connects to the
 * device at `path`, before the connection is accepted (never on the I/O
 * path; may block briefly).  Returns 0 to accept it, negative to refuse it
 * (rte_vhost then closes it).  NULL: every connection is accepted.  The
 * hook fills *peer when it can tell (rte_vhost does not say; it comes
 * unknown): with the socket femud refuses the messages of a frontend that
 * leaves its replies unread, with the pid it tells a frontend's own
 * inflight file from another's (pmd_blk.c).
 */
typedef int (*pmd_connect_hook_t)(const char *path, void *arg, struct pmd_peer *peer);
void pmd_set_connect_hook(pmd_connect_hook_t fn, void *arg);

/*
 * Stop dev: with force, or when no frontend is connected (else -EBUSY and
 * nothing changes): refuse new connections, stop every queue (completions
 * still pending are posted), close the connections, unregister and remove
 * the socket, free dev.  Control threads only, never from an rte_vhost
 * callback.  Returns 0 or -EBUSY.
 */
int pmd_blk_close(struct pmd_blk *dev, bool force);

/*
 * Read dev's counters: those of stopped queues plus the running ones (relaxed
 * loads of counters only their pollers write), kicks drained here, and the
 * poller each running queue is on.  Never writes a poller's counters.
 * Counters (pmd_stats.h):
 *   requests, read_bytes, write_bytes, errors; kicks: notifications the
 *   guest sent anyway (kicks are suppressed while polling); calls:
 *   interrupts sent; calls_saved: used-ring updates the guest asked no
 *   interrupt for; calls_late: of the calls, those a recheck of such a
 *   decision sent (vq_impl.h); deferred: completions posted from the timer
 *   heap; late: of those, posted > PMD_LATE_NS after due (late_ns_sum,
 *   late_ns_max); broken: queue stops for an unanswerable chain;
 *   resubmitted: requests replayed from the inflight region after a
 *   reconnect; hint_trials: trials of whether small requests' data hints
 *   pay (vq_tune.h), hint_trials_off: those that turned them off;
 *   near_trials: trials of whether large reads' near hints beat their
 *   second-level ones, near_trials_near: those that took the near hints.
 */
void pmd_blk_stats(struct pmd_blk *dev, struct pmd_dev_snap *out);

/* Zero dev's counters (each poller zeroes its own queues'). */
void pmd_blk_stats_reset(struct pmd_blk *dev);

/*
 * Read the pollers' counters into out[0..max); returns how many.  Besides
 * sweeps and busy_sweeps, adaptive pollers count (pmd_stats.h): sleeps
 * (waits in io_uring), sleeps_aborted (a request came in while re-arming),
 * wake-ups by cause (wake_kick: a guest kick, wake_timer: a pending
 * completion nearly due, wake_ctl: attach, detach or stop), asleep_ns, and
 * sleeping (1 while it waits).
 */
unsigned pmd_pollers_stats(struct pmd_poller_snap *out, unsigned max);

/* Zero every poller's own counters (done by each poller). */
void pmd_pollers_stats_reset(void);

/*
 * Run fn(arg) where it may touch dev's model state: on the poller that calls
 * its submit() when the model is single_writer (between two sweeps; the
 * call returns once fn has run), else here.  For reading model counters and
 * changing model parameters from control code.  Not from a poller.
 */
void pmd_blk_model_call(struct pmd_blk *dev, void (*fn)(void *arg), void *arg);

/*
 * Make path usable for a listening socket (pmd_blk_create() calls it):
 * 0 when it does not exist or held a stale socket (removed); -EADDRINUSE
 * when a live process accepts connections on it; -EEXIST when it is not a
 * socket; another negative errno otherwise.  Writes a message to err.
 */
int pmd_sock_path_claim(const char *path, char *err, size_t errlen);

/*
 * The directory of the inflight regions femud makes (pmd/inflight_file.h;
 * default /dev/shm, a tmpfs that outlives femud): set before devices are
 * created; dir must outlive them.
 */
void pmd_set_inflight_dir(const char *dir);

#endif /* PMD_H */
