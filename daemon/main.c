/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c - the femud process: options, lcore and node choice, backend
 * allocation, EAL start-up (femud builds the EAL arguments itself), device
 * registration, pollers, signals and orderly shutdown.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "daemon/dev.h"
#include "daemon/lcores.h"
#include "daemon/options.h"
#include "daemon/peer.h"
#include "numa/mbe.h"
#include "numa/place.h"
#include "pmd/pmd.h"

#define FEMUD_EXIT_USAGE 2
#define FEMUD_EAL_NOHUGE_MB "256"
#define FEMUD_EAL_MIN_HUGE_MB 256

struct femud {
	struct femud_opts opts;
	struct femud_lcores lcores;
	char lcores_str[256];
	int mbe_node;
	struct femud_dev devs[FEMUD_MAX_DEVS];
	unsigned ndevs; /* created */
	bool eal_huge;
	sigset_t sigs;
	/* per --dev: connections already attributed (control thread only) */
	struct femud_peer_known peers[FEMUD_MAX_DEVS];
};

static struct femud g_femud;

static void femud_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void femud_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("femud: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Default lcore list: one lcore on the last CPU this process may use. */
static int femud_default_lcores(struct femud *f)
{
	cpu_set_t set;
	int last = -1;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -errno;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			last = c;
	if (last < 0)
		return -ENOENT;
	snprintf(f->lcores_str, sizeof(f->lcores_str), "0@%d", last);
	return 0;
}

static bool femud_cpu_listed(const unsigned *cpus, unsigned n, unsigned cpu)
{
	for (unsigned i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return true;
	return false;
}

/* lcore i on cpus[i]; with share_first the main lcore 0 also sits on cpus[0]. */
static void femud_format_lcores(struct femud *f, const unsigned *cpus, unsigned n, bool share_first)
{
	size_t len = 0;
	unsigned id = 0;

	if (share_first)
		len +=
		    (size_t)snprintf(f->lcores_str, sizeof(f->lcores_str), "%u@%u,", id++, cpus[0]);
	for (unsigned i = 0; i < n && len < sizeof(f->lcores_str); i++)
		len += (size_t)snprintf(f->lcores_str + len, sizeof(f->lcores_str) - len, "%s%u@%u",
					i ? "," : "", id++, cpus[i]);
}

/*
 * --lcores auto[:N]: N pollers (default 1) on the backend's node, one per
 * physical core, avoiding CPU 0's core when there is room (numa/place.c);
 * plus a main lcore on another core when the node has one to spare.
 */
static int femud_auto_lcores(struct femud *f, struct place_topo *t, char *err, size_t errlen)
{
	unsigned cpus[FEMUD_MAX_LCORES];
	unsigned pollers = 1;
	int node = f->opts.mbe_node >= 0 ? f->opts.mbe_node : 0;
	const char *colon = strchr(f->opts.lcores, ':');
	int n;

	if (colon != NULL && (sscanf(colon + 1, "%u", &pollers) != 1 || pollers == 0 ||
			      pollers >= FEMUD_MAX_LCORES)) {
		snprintf(err, errlen, "--lcores '%s': expected auto or auto:N (N pollers)",
			 f->opts.lcores);
		return -EINVAL;
	}
	n = place_auto_lcores(t, node, pollers + 1, cpus, err, errlen);
	if (n > 0 && femud_cpu_listed(cpus, (unsigned)n, 0))
		n = -1; /* no room for a separate main lcore away from CPU 0 */
	if (n > 0) {
		femud_format_lcores(f, cpus, (unsigned)n, false);
		return 0;
	}
	err[0] = '\0';
	n = place_auto_lcores(t, node, pollers, cpus, err, errlen);
	if (n < 0) {
		char why[256];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "--lcores %s: %s", f->opts.lcores, why);
		return -EINVAL;
	}
	/* One lcore polls on the main lcore; several: the idle main lcore shares the first CPU. */
	femud_format_lcores(f, cpus, (unsigned)n, n > 1);
	return 0;
}

/* Log each line of msgs with a prefix. */
static void femud_log_lines(const char *prefix, char *msgs)
{
	for (char *save = NULL, *line = strtok_r(msgs, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		femud_log("%s%s", prefix, line);
}

/* A frontend connected: warn when its process may run on a poller's CPU. */
static void femud_on_connect(const char *path, void *arg)
{
	struct femud *f = arg;
	unsigned cpus[FEMUD_MAX_LCORES];
	unsigned n = 0;
	char msgs[1024] = "", prefix[256];
	struct femud_peer_known *known = NULL;
	pid_t pid;

	for (unsigned i = 0; i < f->opts.ndevs; i++)
		if (strcmp(f->opts.devs[i].path, path) == 0)
			known = &f->peers[i];
	pid = femud_socket_peer_pid(path, known);

	if (pid <= 0 || pid == f->opts.qemu_pid)
		return; /* unknown, or already checked at start */
	for (unsigned i = f->lcores.n > 1 ? 1 : 0; i < f->lcores.n; i++)
		cpus[n++] = (unsigned)f->lcores.l[i].cpu;
	if (place_check_pid_overlap(cpus, n, pid, msgs, sizeof(msgs)) <= 0)
		return;
	snprintf(prefix, sizeof(prefix), "warning: placement: %s: frontend pid %d: ", path,
		 (int)pid);
	femud_log_lines(prefix, msgs);
}

/* Warnings about where the pollers are (hwloc), notes on their isolation: never fatal. */
static void femud_check_pollers(const struct femud *f, const struct place_topo *t)
{
	unsigned cpus[FEMUD_MAX_LCORES];
	unsigned n = 0;
	char msgs[2048] = "";

	for (unsigned i = f->lcores.n > 1 ? 1 : 0; i < f->lcores.n; i++)
		cpus[n++] = (unsigned)f->lcores.l[i].cpu;
	if (place_check_pollers(t, cpus, n, f->mbe_node, f->opts.qemu_pid, msgs, sizeof(msgs)) > 0)
		femud_log_lines("warning: placement: ", msgs);
	msgs[0] = '\0';
	if (place_check_isolation("/sys/devices/system/cpu", cpus, n, msgs, sizeof(msgs)) > 0)
		femud_log_lines("note: placement: ", msgs);
}

static int femud_check_lcore_cpus(const struct femud *f, char *err, size_t errlen)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	for (unsigned i = 0; i < f->lcores.n; i++) {
		int cpu = f->lcores.l[i].cpu;

		if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set)) {
			snprintf(err, errlen,
				 "--lcores '%s': CPU %d does not exist or is not allowed for this "
				 "process",
				 f->lcores_str, cpu);
			return -EINVAL;
		}
	}
	return 0;
}

/* The first poller: lcore 1 of the list, or the main lcore when it is alone. */
static int femud_first_poller_cpu(const struct femud *f)
{
	return f->lcores.l[f->lcores.n > 1 ? 1 : 0].cpu;
}

static int femud_resolve_lcores(struct femud *f, struct place_topo *topo, char *err, size_t errlen)
{
	int rc;

	if (f->opts.lcores == NULL)
		rc = femud_default_lcores(f);
	else if (strncmp(f->opts.lcores, "auto", 4) == 0)
		rc = femud_auto_lcores(f, topo, err, errlen);
	else
		rc = snprintf(f->lcores_str, sizeof(f->lcores_str), "%s", f->opts.lcores) >=
			     (int)sizeof(f->lcores_str)
			 ? -EINVAL
			 : 0;
	if (rc != 0) {
		if (*err == '\0')
			snprintf(err, errlen, "--lcores: cannot choose lcores (%s)", strerror(-rc));
		return -EINVAL;
	}
	rc = femud_lcores_parse(f->lcores_str, &f->lcores, err, errlen);
	if (rc == 0)
		rc = femud_check_lcore_cpus(f, err, errlen);
	if (rc != 0)
		return rc;
	f->mbe_node = f->opts.mbe_node;
	if (f->mbe_node < 0) {
		f->mbe_node = mbe_node_of_cpu((unsigned)femud_first_poller_cpu(f));
		if (f->mbe_node < 0)
			f->mbe_node = 0;
	}
	return 0;
}

/* Choose lcores and the backend node, check them against the host topology. */
static int femud_resolve_placement(struct femud *f, char *err, size_t errlen)
{
	struct place_topo *topo = NULL;
	int rc;

	if (f->opts.mbe_node >= 0 && !mbe_node_exists(f->opts.mbe_node)) {
		snprintf(err, errlen,
			 "--mbe-node %d: NUMA node does not exist (this host has nodes 0-%d)",
			 f->opts.mbe_node, mbe_max_node());
		return -EINVAL;
	}
	if (place_topology_load(&topo, NULL, err, errlen) != 0)
		return -EINVAL;
	rc = femud_resolve_lcores(f, topo, err, errlen);
	if (rc == 0)
		femud_check_pollers(f, topo);
	place_topology_free(topo);
	return rc;
}

static void femud_print_plan(const struct femud *f, FILE *out)
{
	fprintf(out, "lcores %s (main lcore %u on CPU %d; %u poller%s)\n", f->lcores_str,
		f->lcores.l[0].id, f->lcores.l[0].cpu, f->lcores.n > 1 ? f->lcores.n - 1 : 1,
		f->lcores.n > 2 ? "s" : "");
	fprintf(out, "mbe-node %d\n", f->mbe_node);
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
		int rc = femud_dev_create(&f->devs[i], &f->opts.devs[i], f->mbe_node, flags, err,
					  errlen);

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

	snprintf(main_lcore, sizeof(main_lcore), "%u", f->lcores.l[0].id);
	eal_argv[n++] = (char *)argv0;
	eal_argv[n++] = "--lcores";
	eal_argv[n++] = f->lcores_str;
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
	unsigned n = 0;
	bool main_polls = f->lcores.n == 1;
	int rc;

	if (main_polls)
		ids[n++] = f->lcores.l[0].id;
	else
		for (unsigned i = 1; i < f->lcores.n; i++)
			ids[n++] = f->lcores.l[i].id;
	pmd_set_connect_hook(femud_on_connect, f);
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

/* Serve until SIGINT/SIGTERM. */
static void femud_serve(struct femud *f)
{
	pthread_t t;

	if (f->lcores.n == 1) {
		/* The main lcore polls; a plain thread waits for the signals. */
		pthread_create(&t, NULL, femud_signal_thread, f);
		pmd_poller_run_main();
		pthread_join(t, NULL);
		return;
	}
	femud_wait_for_stop(f);
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
	     femud_resolve_placement(f, err, sizeof(err)) != 0)) {
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
		femud_log("--lcores '%s': DPDK EAL start-up failed (%s)", f->lcores_str,
			  rte_strerror(rte_errno));
		femud_teardown(f, false);
		return 1;
	}
	femud_log("EAL up: %s, lcores %s, %llu MiB of backends",
		  f->eal_huge ? "hugepages" : "no-huge", f->lcores_str,
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
	femud_serve(f);
	femud_teardown(f, true);
	femud_log("stopped");
	return 0;
}
