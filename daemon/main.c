/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - the femud process: options, backend allocation, EAL start-up
 * (femud builds the EAL arguments itself), device registration, pollers,
 * the RPC control socket, signals and orderly shutdown.  Which lcores poll and which node holds the
 * backends is placement.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>

#include "daemon/access.h"
#include "daemon/config.h"
#include "daemon/devtab.h"
#include "daemon/log.h"
#include "daemon/options.h"
#include "daemon/placement.h"
#include "daemon/rpc.h"
#include "daemon/rpc_methods.h"
#include "daemon/stats.h"
#include "numa/mbe.h"
#include "pmd/pmd.h"
#include "pmd/pmd_measure.h"

#define FEMUD_EXIT_USAGE 2
/* A poller did not stop within FEMUD_STOP_WAIT_NS of SIGINT/SIGTERM (logged). */
#define FEMUD_EXIT_POLLER_STUCK 3
#define FEMUD_STOP_WAIT_NS (10ull * 1000000000ull)
#define FEMUD_EAL_NOHUGE_MB "256"
#define FEMUD_EAL_MIN_HUGE_MB 256

struct femud {
	struct femud_opts opts;
	struct femud_placement place; /* lcores, backend node */
	struct femud_devtab devs;
	bool eal_huge;
	sigset_t sigs;
	struct femud_rpc *rpc; /* NULL: --rpc none */
};

static struct femud g_femud;

/* "poller N (lcore L): poll-mode busy" or "... adaptive (idle N us)" of poller i, into buf. */
static void femud_poll_mode_line(const struct femud *f, unsigned i, unsigned lcore, char *buf,
				 size_t len)
{
	bool adaptive;
	uint64_t idle_us;

	femud_opts_poll_mode(&f->opts, i, &adaptive, &idle_us);
	if (adaptive)
		snprintf(buf, len, "poller %u (lcore %u): poll-mode adaptive (idle %llu us)", i,
			 lcore, (unsigned long long)idle_us);
	else
		snprintf(buf, len, "poller %u (lcore %u): poll-mode busy", i, lcore);
}

/* The plan's poll-mode lines: one per poller, as femud logs them at start. */
static void femud_print_poll_modes(const struct femud *f, FILE *out)
{
	unsigned ids[FEMUD_MAX_LCORES];
	bool main_polls;
	unsigned n = femud_placement_pollers(&f->place, ids, &main_polls);
	char line[128];

	for (unsigned i = 0; i < n; i++) {
		femud_poll_mode_line(f, i, ids[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
}

static void femud_print_plan(const struct femud *f, FILE *out)
{
	fprintf(out, "lcores %s (main lcore %u on CPU %d; %u poller%s)\n", f->place.lcores_str,
		f->place.lcores.l[0].id, f->place.lcores.l[0].cpu,
		f->place.lcores.n > 1 ? f->place.lcores.n - 1 : 1,
		f->place.lcores.n > 2 ? "s" : "");
	fprintf(out, "mbe-node %d\n", f->place.mbe_node);
	femud_print_poll_modes(f, out);
	for (unsigned i = 0; i < f->opts.ndevs; i++) {
		const struct femud_dev_opts *d = &f->opts.devs[i];

		fprintf(out, "dev %s model=%s capacity=%llu bytes queues=%u secsz=%u%s\n", d->path,
			d->ops->name, (unsigned long long)d->mcfg.capacity_bytes, d->queues,
			d->secsz, d->readonly ? " readonly" : "");
	}
}

static uint64_t femud_total_backend_bytes(const struct femud *f)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < f->opts.ndevs; i++)
		sum += f->opts.devs[i].mcfg.capacity_bytes;
	return sum;
}

static int femud_create_backends(struct femud *f, char *err, size_t errlen)
{
	for (unsigned i = 0; i < f->opts.ndevs; i++) {
		int rc = femud_devtab_add(&f->devs, &f->opts.devs[i], err, errlen);

		if (rc != 0)
			return rc;
	}
	return 0;
}

/* EAL on hugepages only when enough are left after the backends took theirs. */
static bool femud_eal_can_use_hugepages(const struct femud *f)
{
	uint64_t free2m = mbe_free_hugepages(2u << 20, -1);

	if (f->opts.no_huge || access("/dev/hugepages", F_OK) != 0)
		return false;
	return free2m * 2 >= FEMUD_EAL_MIN_HUGE_MB;
}

/* DPDK's log stream under the journal: its level as the line's priority, no syslog copy. */
static ssize_t femud_dpdk_log_write(void *cookie, const char *buf, size_t len)
{
	int lvl = rte_log_cur_msg_loglevel(); /* RTE_LOG_EMERG (1) .. RTE_LOG_DEBUG (8) */

	(void)cookie;
	femud_log_raw(lvl >= 1 && lvl <= 8 ? lvl - 1 : LOG_INFO, buf, len);
	return (ssize_t)len;
}

static void femud_dpdk_log_to_journal(void)
{
	static const cookie_io_functions_t io = {.write = femud_dpdk_log_write};
	FILE *s;

	if (!femud_log_to_journal())
		return;
	s = fopencookie(NULL, "w", io);
	if (s != NULL)
		rte_openlog_stream(s);
}

static int femud_eal_init(struct femud *f, const char *argv0)
{
	char main_lcore[16];
	char *eal_argv[24];
	int n = 0;

	snprintf(main_lcore, sizeof(main_lcore), "%u", f->place.lcores.l[0].id);
	eal_argv[n++] = (char *)argv0;
	eal_argv[n++] = "--lcores";
	eal_argv[n++] = f->place.lcores_str;
	eal_argv[n++] = "--main-lcore";
	eal_argv[n++] = main_lcore;
	eal_argv[n++] = "--no-pci";
	eal_argv[n++] = "--no-telemetry";
	f->eal_huge = femud_eal_can_use_hugepages(f);
	if (f->eal_huge) {
		eal_argv[n++] = "--in-memory";
	} else {
		eal_argv[n++] = "--no-huge";
		eal_argv[n++] = "--no-shconf";
		eal_argv[n++] = "-m";
		eal_argv[n++] = FEMUD_EAL_NOHUGE_MB;
	}
	if (f->opts.log_level != NULL) {
		eal_argv[n++] = "--log-level";
		eal_argv[n++] = (char *)f->opts.log_level;
	} else {
		/* Quiet by default: EAL and rte_vhost chatter only at warning and above. */
		eal_argv[n++] = "--log-level";
		eal_argv[n++] = "lib.eal:warning";
		eal_argv[n++] = "--log-level";
		eal_argv[n++] = "lib.vhost.*:warning";
	}
	eal_argv[n] = NULL;
	femud_dpdk_log_to_journal();
	return rte_eal_init(n, eal_argv);
}

/*
 * pmd connect hook (rte_vhost's thread): attribute the connection to its
 * frontend process (pid, uid: logged), refuse it when the device's
 * allow_uid does not list the uid, remember it for list/stats, check where
 * it runs.  *peer: the connection's socket and frontend pid, when found.
 */
static int femud_on_connect(const char *path, void *arg, struct pmd_peer *peer)
{
	struct femud *f = arg;
	struct femud_access access;
	struct femud_dev *d;
	struct ucred cr;
	bool have;
	int rc;

	femud_access_init(&access);
	pthread_mutex_lock(&f->devs.lock);
	d = femud_devtab_find(&f->devs, path);
	have = femud_socket_peer_cred(path, d != NULL ? &d->peers : NULL, &cr, &peer->sock_fd);
	if (have)
		peer->pid = cr.pid;
	if (d != NULL) {
		access = d->opts->access;
		d->peer_pid = have ? cr.pid : 0;
	}
	pthread_mutex_unlock(&f->devs.lock);
	rc = femud_access_admit(&access, path, have ? &cr : NULL);
	if (rc == 0 && have)
		femud_placement_check_frontend(&f->place, path, cr.pid);
	return rc;
}

static int femud_start_pmd(struct femud *f, char *err, size_t errlen)
{
	unsigned ids[FEMUD_MAX_LCORES];
	bool main_polls;
	unsigned n = femud_placement_pollers(&f->place, ids, &main_polls);
	int rc;

	pmd_set_connect_hook(femud_on_connect, f);
	rc = pmd_init(ids, n, main_polls);
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		bool adaptive;
		uint64_t idle_us;

		femud_opts_poll_mode(&f->opts, i, &adaptive, &idle_us);
		rc = pmd_poller_set_mode(i, adaptive ? PMD_POLL_ADAPTIVE : PMD_POLL_BUSY,
					 idle_us * 1000);
		if (rc == 0) {
			char line[128];

			femud_poll_mode_line(f, i, ids[i], line, sizeof(line));
			femud_log("%s", line);
		}
	}
	if (rc != 0) {
		snprintf(err, errlen, "poller set-up failed: %s", strerror(-rc));
		return rc;
	}
	rc = femud_devtab_attach_all(&f->devs, err, errlen);
	if (rc != 0)
		return rc;
	rc = pmd_pollers_start();
	if (rc == 0 && f->rpc != NULL && femud_rpc_start(f->rpc, femud_rpc_methods, &f->devs) != 0)
		snprintf(err, errlen, "--rpc: cannot start the RPC thread");
	return rc;
}

static void femud_print_stats(struct femud *f)
{
	json_t *s = femud_stats_collect(&f->devs, NULL);

	if (s != NULL)
		femud_stats_print(s, stdout);
	json_decref(s);
	fflush(stdout);
}

/* SIGUSR2: every device with image=FILE starts saving it (helper threads). */
static void femud_image_save_one(struct femud_dev *d, void *arg)
{
	(void)arg;
	femud_dev_image_save_start(d);
}

static void femud_image_save_all(struct femud *f)
{
	femud_devtab_each(&f->devs, NULL, femud_image_save_one, NULL);
}

/* A stuck stop: what one device loses by it (devtab lock held). */
static void femud_log_skipped(const struct femud_dev *d)
{
	if (d->opts->image != NULL && d->opts->image_save)
		femud_log_warn(
		    "dev %s: image save at stop (image_save=1) skipped: a poller may still "
		    "write the device; %s keeps its previous content",
		    d->opts->path, d->opts->image);
	if (d->opts->image != NULL && __atomic_load_n(&d->saving, __ATOMIC_ACQUIRE) == 1)
		femud_log_warn(
		    "dev %s: the image save in progress is abandoned (%s keeps its previous "
		    "content; a temporary file beside it may be left)",
		    d->opts->path, d->opts->image);
}

/*
 * Stop the pollers, at most FEMUD_STOP_WAIT_NS.  A poller that did not
 * return still owns its queues and may write its devices at any moment:
 * detaching them, an image save or freeing the backends would wait for it
 * forever or race with it.  femud then exits at once, without the
 * clean-stop steps: what was written to a mem_path medium is in its shared
 * file mapping (the page cache keeps it); stale sockets are replaced at
 * the next start.
 */
static void femud_stop_pollers(struct femud *f)
{
	unsigned stuck = pmd_pollers_stop_within(FEMUD_STOP_WAIT_NS);

	if (stuck == 0)
		return;
	/* a control thread waiting for the poller may hold the table: no waiting for it */
	if (pthread_mutex_trylock(&f->devs.lock) == 0) {
		for (unsigned i = 0; i < FEMUD_MAX_DEVS; i++) {
			if (f->devs.devs[i] != NULL)
				femud_log_skipped(f->devs.devs[i]);
		}
		pthread_mutex_unlock(&f->devs.lock);
	} else {
		femud_log_warn(
		    "device table busy (a control thread waits for a poller): image saves "
		    "at stop (image_save=1) skipped for every device");
	}
	femud_log_err(
	    "%u poller%s did not stop within %llu s: exiting with status %d without a clean "
	    "stop (in-flight requests not completed, no image save, counters not printed, "
	    "sockets left for the next start to replace)",
	    stuck, stuck == 1 ? "" : "s", (unsigned long long)(FEMUD_STOP_WAIT_NS / 1000000000ull),
	    FEMUD_EXIT_POLLER_STUCK);
	fflush(stdout);
	fflush(stderr);
	_exit(FEMUD_EXIT_POLLER_STUCK);
}

/*
 * Wait for SIGINT/SIGTERM; SIGUSR1 prints the counters, SIGUSR2 saves images,
 * and it goes on waiting.
 */
static void femud_wait_for_stop(struct femud *f)
{
	int sig = 0;

	for (;;) {
		if (sigwait(&f->sigs, &sig) != 0)
			continue;
		if (sig == SIGUSR2) {
			femud_image_save_all(f);
			continue;
		}
		if (sig != SIGUSR1)
			break;
		femud_print_stats(f);
	}
	sd_notify(0, "STOPPING=1"); /* systemd: a stop in progress, not a crash */
	femud_log_notice("signal %d: stopping", sig);
	femud_stop_pollers(f);
}

static void *femud_signal_thread(void *arg)
{
	femud_wait_for_stop(arg);
	return NULL;
}

/* Serve until SIGINT/SIGTERM.  Returns 0, or a negative errno when serving could not start. */
static int femud_serve(struct femud *f)
{
	pthread_t t;
	int rc;

	if (f->place.lcores.n > 1) {
		femud_wait_for_stop(f);
		return 0;
	}
	/* The main lcore polls; a plain thread waits for the signals. */
	rc = pthread_create(&t, NULL, femud_signal_thread, f);
	if (rc != 0) {
		femud_log_err("cannot start the signal thread: %s", strerror(rc));
		pmd_pollers_stop();
		return -rc;
	}
	pmd_poller_run_main();
	pthread_join(t, NULL);
	return 0;
}

/* A clean stop: a save in progress finishes; image_save=1 saves once more. */
static void femud_image_save_at_stop(struct femud_dev *d, void *arg)
{
	femud_dev_image_save_wait(d, *(bool *)arg && d->opts->image_save);
}

static void femud_teardown(struct femud *f, bool eal_up)
{
	femud_rpc_close(f->rpc); /* no RPC from here on */
	f->rpc = NULL;
	femud_devtab_each(&f->devs, NULL, femud_image_save_at_stop, &eal_up);
	if (eal_up) {
		femud_print_stats(f);
		PMD_AB_REPORT(stdout); /* -Dab_phase builds only */
	}
	femud_devtab_destroy_all(&f->devs);
	if (eal_up)
		rte_eal_cleanup();
	fflush(stdout);
	femud_opts_free(&f->opts);
}

/* Claim the RPC socket before anything is allocated: a second femud stops here. */
static int femud_open_rpc(struct femud *f)
{
	const char *path = femud_opts_rpc_path(&f->opts);
	char err[512] = "";
	int rc;

	femud_devtab_init(&f->devs, f->place.mbe_node, f->opts.no_huge ? MBE_F_NO_HUGE : 0);
	if (path == NULL)
		return 0;
	rc = femud_rpc_open(&f->rpc, path, err, sizeof(err));
	if (rc == 0)
		return 0;
	femud_log_err("--rpc %s: %s%s", path, err,
		      rc == -EADDRINUSE ? " (give each femud its own --rpc PATH, or --rpc none)"
					: "");
	femud_opts_free(&f->opts);
	return rc == -EADDRINUSE || rc == -EEXIST ? FEMUD_EXIT_USAGE : 1;
}

/* systemd (Type=notify): every device socket listens now. */
static void femud_notify_ready(const struct femud *f)
{
	unsigned n = 0;

	for (unsigned i = 0; i < FEMUD_MAX_DEVS; i++)
		n += f->devs.devs[i] != NULL;
	sd_notifyf(0, "READY=1\nSTATUS=serving %u device%s%s%s\nMAINPID=%d", n, n == 1 ? "" : "s",
		   f->rpc != NULL ? ", rpc on " : "",
		   f->rpc != NULL ? femud_opts_rpc_path(&f->opts) : "", (int)getpid());
}

static int femud_parse(struct femud *f, int argc, char **argv)
{
	char err[512] = "";

	if (femud_opts_parse(argc, argv, &f->opts, err, sizeof(err)) != 0 ||
	    (f->opts.config != NULL && !f->opts.help && !f->opts.version &&
	     (femud_config_load(f->opts.config, &f->opts, err, sizeof(err)) != 0 ||
	      femud_opts_check_paths(&f->opts, err, sizeof(err)) != 0)) ||
	    (!f->opts.help && !f->opts.version &&
	     femud_placement_resolve(&f->place, &f->opts, err, sizeof(err)) != 0)) {
		femud_log_err("%s", err);
		femud_opts_free(&f->opts);
		return FEMUD_EXIT_USAGE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct femud *f = &g_femud;
	char err[512] = "";
	uint64_t backend_bytes;
	int rc;

	rc = femud_parse(f, argc, argv);
	if (rc != 0)
		return rc;
	if (f->opts.help || f->opts.version) {
		if (f->opts.help)
			femud_opts_usage(stdout);
		else
			printf("femud %s\n", FEMUD_VERSION);
		return 0;
	}
	if (f->opts.dry_run) {
		femud_print_plan(f, stdout);
		femud_opts_free(&f->opts);
		return 0;
	}
	rc = femud_open_rpc(f);
	if (rc != 0)
		return rc;
	sigemptyset(&f->sigs);
	sigaddset(&f->sigs, SIGINT);
	sigaddset(&f->sigs, SIGTERM);
	sigaddset(&f->sigs, SIGUSR1);
	sigaddset(&f->sigs, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &f->sigs, NULL);

	backend_bytes = femud_total_backend_bytes(f); /* before the devices take the options */
	rc = femud_create_backends(f, err, sizeof(err));
	if (rc != 0) {
		femud_log_err("%s", err);
		femud_teardown(f, false);
		return rc == -EINVAL ? FEMUD_EXIT_USAGE : 1;
	}
	if (femud_eal_init(f, argv[0]) < 0) {
		femud_log_err("--lcores '%s': DPDK EAL start-up failed (%s)", f->place.lcores_str,
			      rte_strerror(rte_errno));
		femud_teardown(f, false);
		return 1;
	}
	femud_log("EAL up: %s, lcores %s, %llu MiB of backends",
		  f->eal_huge ? "hugepages" : "no-huge", f->place.lcores_str,
		  (unsigned long long)(backend_bytes >> 20));
	rc = femud_start_pmd(f, err, sizeof(err));
	if (rc != 0) {
		femud_log_err("%s", err);
		femud_teardown(f, true);
		return rc == -EADDRINUSE ? FEMUD_EXIT_USAGE : 1;
	}
	for (unsigned i = 0; i < FEMUD_MAX_DEVS; i++) {
		const struct femud_dev *d = f->devs.devs[i];

		if (d != NULL)
			printf("femud: serving %s (%s, %llu bytes, %u queues)\n", d->opts->path,
			       d->opts->ops->name, (unsigned long long)d->opts->mcfg.capacity_bytes,
			       d->opts->queues);
	}
	if (f->rpc != NULL)
		printf("femud: rpc on %s\n", femud_opts_rpc_path(&f->opts));
	printf("femud: ready\n");
	fflush(stdout);
	femud_notify_ready(f);
	rc = femud_serve(f);
	femud_teardown(f, true);
	femud_log_notice("stopped");
	return rc == 0 ? 0 : 1;
}
