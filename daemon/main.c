/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - the femud process: options, backend allocation, EAL start-up
 * (femud builds the EAL arguments itself), device registration, pollers,
 * signals and orderly shutdown.  Which lcores poll and which node holds the
 * backends is placement.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "daemon/dev.h"
#include "daemon/log.h"
#include "daemon/options.h"
#include "daemon/placement.h"
#include "numa/mbe.h"
#include "pmd/pmd.h"

#define FEMUD_EXIT_USAGE 2
#define FEMUD_EAL_NOHUGE_MB "256"
#define FEMUD_EAL_MIN_HUGE_MB 256

struct femud {
	struct femud_opts opts;
	struct femud_placement place; /* lcores, backend node */
	struct femud_dev devs[FEMUD_MAX_DEVS];
	unsigned ndevs; /* created */
	bool eal_huge;
	sigset_t sigs;
};

static struct femud g_femud;

static void femud_print_plan(const struct femud *f, FILE *out)
{
	fprintf(out, "lcores %s (main lcore %u on CPU %d; %u poller%s)\n", f->place.lcores_str,
		f->place.lcores.l[0].id, f->place.lcores.l[0].cpu,
		f->place.lcores.n > 1 ? f->place.lcores.n - 1 : 1,
		f->place.lcores.n > 2 ? "s" : "");
	fprintf(out, "mbe-node %d\n", f->place.mbe_node);
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

static void femud_report_backend(const struct femud_dev *d)
{
	const struct mbe_region *m = &d->mem;
	int other;
	unsigned sampled;
	int on = mbe_check_placement(m, 64, &other, &sampled);

	char thp[64] = "";

	if (m->thp_bytes > 0)
		snprintf(thp, sizeof(thp), " (%zu MiB as transparent 2 MiB pages)",
			 m->thp_bytes >> 20);
	femud_log("dev %s: %zu MiB backend on node %d (%d of %u sampled pages verified there), %s "
		  "pages%s, pre-faulted in %.1f ms%s",
		  d->opts->path, m->len >> 20, m->node, on, sampled,
		  m->page_size >= (1u << 30)   ? "1 GiB"
		  : m->page_size >= (2u << 20) ? "2 MiB"
					       : "4 KiB",
		  thp, m->prefault_ns / 1e6, m->locked ? ", locked" : "");
	if (m->note[0] != '\0')
		femud_log("warning: dev %s: %s", d->opts->path, m->note);
	if (sampled > 0 && (unsigned)on < sampled)
		femud_log("warning: dev %s: %u of %u sampled backend pages are on node %d, not on "
			  "--mbe-node %d",
			  d->opts->path, sampled - (unsigned)on, sampled, other, m->node);
}

static int femud_create_backends(struct femud *f, char *err, size_t errlen)
{
	unsigned flags = f->opts.no_huge ? MBE_F_NO_HUGE : 0;

	for (unsigned i = 0; i < f->opts.ndevs; i++) {
		int rc = femud_dev_create(&f->devs[i], &f->opts.devs[i], f->place.mbe_node, flags,
					  err, errlen);

		if (rc != 0)
			return rc;
		f->ndevs++;
		femud_report_backend(&f->devs[i]);
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
	return rte_eal_init(n, eal_argv);
}

static int femud_start_pmd(struct femud *f, char *err, size_t errlen)
{
	unsigned ids[FEMUD_MAX_LCORES];
	bool main_polls;
	unsigned n = femud_placement_pollers(&f->place, ids, &main_polls);
	int rc;

	pmd_set_connect_hook(femud_placement_on_connect, &f->place);
	rc = pmd_init(ids, n, main_polls);
	if (rc != 0) {
		snprintf(err, errlen, "poller set-up failed: %s", strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < f->ndevs; i++) {
		rc = femud_dev_attach(&f->devs[i], err, errlen);
		if (rc != 0)
			return rc;
	}
	return pmd_pollers_start();
}

static void femud_print_stats(struct femud *f)
{
	for (unsigned i = 0; i < f->ndevs; i++)
		femud_dev_stats(&f->devs[i], stdout);
	pmd_stats(stdout);
	fflush(stdout);
}

/* Wait for SIGINT/SIGTERM; SIGUSR1 prints the counters and goes on waiting. */
static void femud_wait_for_stop(struct femud *f)
{
	int sig = 0;

	for (;;) {
		if (sigwait(&f->sigs, &sig) != 0)
			continue;
		if (sig != SIGUSR1)
			break;
		femud_print_stats(f);
	}
	femud_log("signal %d: stopping", sig);
	pmd_pollers_stop();
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
		femud_log("cannot start the signal thread: %s", strerror(rc));
		pmd_pollers_stop();
		return -rc;
	}
	pmd_poller_run_main();
	pthread_join(t, NULL);
	return 0;
}

static void femud_teardown(struct femud *f, bool eal_up)
{
	if (eal_up)
		femud_print_stats(f);
	for (unsigned i = 0; i < f->ndevs; i++)
		femud_dev_destroy(&f->devs[i]);
	if (eal_up)
		rte_eal_cleanup();
	fflush(stdout);
	femud_opts_free(&f->opts);
}

static int femud_parse(struct femud *f, int argc, char **argv)
{
	char err[512] = "";

	if (femud_opts_parse(argc, argv, &f->opts, err, sizeof(err)) != 0 ||
	    (!f->opts.help && !f->opts.version &&
	     femud_placement_resolve(&f->place, &f->opts, err, sizeof(err)) != 0)) {
		femud_log("%s", err);
		femud_opts_free(&f->opts);
		return FEMUD_EXIT_USAGE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct femud *f = &g_femud;
	char err[512] = "";
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
	sigemptyset(&f->sigs);
	sigaddset(&f->sigs, SIGINT);
	sigaddset(&f->sigs, SIGTERM);
	sigaddset(&f->sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &f->sigs, NULL);

	if (femud_create_backends(f, err, sizeof(err)) != 0) {
		femud_log("%s", err);
		femud_teardown(f, false);
		return 1;
	}
	if (femud_eal_init(f, argv[0]) < 0) {
		femud_log("--lcores '%s': DPDK EAL start-up failed (%s)", f->place.lcores_str,
			  rte_strerror(rte_errno));
		femud_teardown(f, false);
		return 1;
	}
	femud_log("EAL up: %s, lcores %s, %llu MiB of backends",
		  f->eal_huge ? "hugepages" : "no-huge", f->place.lcores_str,
		  (unsigned long long)(femud_total_backend_bytes(f) >> 20));
	rc = femud_start_pmd(f, err, sizeof(err));
	if (rc != 0) {
		femud_log("%s", err);
		femud_teardown(f, true);
		return rc == -EADDRINUSE ? FEMUD_EXIT_USAGE : 1;
	}
	for (unsigned i = 0; i < f->ndevs; i++)
		printf("femud: serving %s (%s, %llu bytes, %u queues)\n", f->devs[i].opts->path,
		       f->devs[i].opts->ops->name,
		       (unsigned long long)f->devs[i].opts->mcfg.capacity_bytes,
		       f->devs[i].opts->queues);
	printf("femud: ready\n");
	fflush(stdout);
	rc = femud_serve(f);
	femud_teardown(f, true);
	femud_log("stopped");
	return rc == 0 ? 0 : 1;
}
