/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * femuctl.c - command-line client of femud's JSON-RPC control socket:
 * create / delete / list devices, show and reset counters (once, or as
 * per-second rates with --watch), change model timings, save the running
 * configuration.  Tables for people, --json for scripts.
 *
 * Exit status: 0 done; 1 femud answered with another error; 2 usage;
 * 3 no such device; 4 socket path already a device's or in use; 5 a
 * frontend is connected; 6 a bad device option or parameter; 7 femud not
 * reachable (or the connection failed).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl_client.h"
#include "ftl/num_parse.h"

#define CTL_DEFAULT_SOCK "/var/tmp/femud.sock"
#define EXIT_USAGE 2
#define EXIT_TRANSPORT 7

struct ctl {
	const char *sock;
	bool json;
	double watch; /* seconds, 0: once */
	long count;   /* --watch iterations, 0: until Ctrl-C */
	bool force;
	bool queues; /* stats: a row per queue too */
	int timeout_ms;
	struct ctl_client cl;
};

static volatile sig_atomic_t g_stop;

static void on_sigint(int sig)
{
	(void)sig;
	g_stop = 1;
}

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: femuctl [-s RPC_SOCK] [--timeout SEC] COMMAND [ARGS]\n"
	    "\n"
	    "Commands:\n"
	    "  create 'path=SOCK,key=value,...'   new device (the keys of femud --dev)\n"
	    "  delete SOCK [--force]             remove a device (--force: even with a VM on it)\n"
	    "  list [SOCK] [--json]              devices, options, frontend, queue pollers\n"
	    "  stats [SOCK] [--json] [--watch SEC [--count N]]\n"
	    "                                    counters; --watch: per-second rates until Ctrl-C\n"
	    "  stats-reset [SOCK]                zero the counters\n"
	    "  set SOCK key=value...             change model timings (pg_rd_lat, ...) at runtime\n"
	    "  save-config FILE                  write the running configuration ('-': stdout)\n"
	    "                                    for femud --config FILE\n"
	    "  image-save [PATH]                 save the device's (every device's) image=FILE\n"
	    "  poll-mode [busy|adaptive] [idle_us=N] [poller=N]\n"
	    "                                    show the pollers' poll modes, or change them\n"
	    "                                    (every poller unless poller=N)\n"
	    "  call METHOD [PARAMS_JSON]         any RPC method, raw JSON result\n"
	    "  version                           femuctl's and the running femud's versions\n"
	    "  libvirt-xml SOCK [TARGET]         the <disk type='vhostuser'> element of a device\n"
	    "                                    (guest name TARGET, default vdb) for virsh\n"
	    "                                    attach-device or a domain, and in comments the\n"
	    "                                    lines the domain needs (shared memory, ACPI,\n"
	    "                                    vCPU and emulator pinning off femud's pollers)\n"
	    "\n"
	    "Options:\n"
	    "  -s, --socket RPC_SOCK   femud's control socket\n"
	    "  -t, --timeout SEC       give up on a call after SEC seconds (default 120)\n"
	    "  -j, --json              JSON output instead of tables\n"
	    "  -w, --watch SEC         stats: per-second rates every SEC seconds\n"
	    "  -n, --count N           --watch: stop after N reports\n"
	    "  -Q, --queues            stats: a row per queue too\n"
	    "  -f, --force             delete: even with a frontend connected\n"
	    "  -h, --help              this text\n"
	    "  -V, --version           femuctl's version (no femud needed)\n"
	    "\n"
	    "RPC_SOCK: -s, else $FEMUD_RPC, else " CTL_DEFAULT_SOCK ".\n"
	    "Exit status: 0 ok, 1 other RPC error, 2 usage, 3 no such device, 4 socket path in\n"
	    "use, 5 frontend connected, 6 bad option or parameter, 7 femud not reachable.\n");
}

/* RPC error code -> exit status (see the file comment). */
static int exit_of_code(int code)
{
	switch (code) {
	case -32001:
		return 3;
	case -32002:
		return 4;
	case -32003:
		return 5;
	case -32004:
	case -32602:
		return 6;
	default:
		return 1;
	}
}

/* Call and report: 0 with *res, else the exit status (message printed). */
static int call(struct ctl *c, const char *method, json_t *params, json_t **res)
{
	char msg[1024];
	int code = 0;
	int rc = ctl_call(&c->cl, method, params, res, &code, msg, sizeof(msg));

	json_decref(params);
	if (rc == 0)
		return 0;
	if (rc < 0) {
		fprintf(stderr, "femuctl: %s\n", msg);
		return EXIT_TRANSPORT;
	}
	fprintf(stderr, "femuctl: %s: %s (error %d)\n", method, msg, code);
	return exit_of_code(code);
}

static void print_json(const json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(2));
	fputc('\n', stdout);
}

static int64_t iget(const json_t *o, const char *key)
{
	return (int64_t)json_integer_value(json_object_get(o, key));
}

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static const char *sget(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "-";
}

/* ---- list ---- */

static void list_row(const json_t *d)
{
	char pollers[256] = "", pid[16] = "-";
	const json_t *p;
	size_t i, len = 0;

	json_array_foreach(json_object_get(d, "queue_pollers"), i, p)
	{
		if (len < sizeof(pollers))
			len += (size_t)snprintf(pollers + len, sizeof(pollers) - len, "%s%s",
						i ? "," : "", json_integer_value(p) < 0 ? "-" : "");
		if (json_integer_value(p) >= 0 && len < sizeof(pollers))
			len += (size_t)snprintf(pollers + len, sizeof(pollers) - len,
						"%" JSON_INTEGER_FORMAT, json_integer_value(p));
	}
	if (iget(d, "frontend_pid") > 0)
		snprintf(pid, sizeof(pid), "%" PRId64, iget(d, "frontend_pid"));
	printf("%-40s %-6s %10.1f %6" PRId64 " %6" PRId64 " %-9s %-8s %s\n", sget(d, "path"),
	       sget(d, "model"), num(d, "capacity_bytes") / 1048576.0, iget(d, "queues"),
	       iget(d, "backend_node"), iget(d, "connected") > 0 ? "yes" : "no", pid, pollers);
}

static int cmd_list(struct ctl *c, const char *path)
{
	json_t *res, *d;
	size_t i;
	int rc = call(c, "list", path ? json_pack("{s:s}", "path", path) : NULL, &res);

	if (rc != 0)
		return rc;
	if (c->json) {
		print_json(res);
	} else {
		printf("%-40s %-6s %10s %6s %6s %-9s %-8s %s\n", "SOCKET", "MODEL", "SIZE_MB",
		       "QUEUES", "NODE", "CONNECTED", "PID", "POLLERS");
		json_array_foreach(res, i, d) list_row(d);
	}
	json_decref(res);
	return 0;
}

/* ---- stats ---- */

/* A row per queue of a device (under its device row): same columns, then poller and calls. */
static void stats_queue_rows(const json_t *d)
{
	const json_t *q;
	size_t i;

	json_array_foreach(json_object_get(d, "queues"), i, q)
	{
		char name[32], poller[16] = "-";

		snprintf(name, sizeof(name), "  q%" PRId64, iget(q, "id"));
		if (iget(q, "poller") >= 0)
			snprintf(poller, sizeof(poller), "%" PRId64, iget(q, "poller"));
		printf("%-40s %12" PRId64 " %10.1f %10.1f %7" PRId64 " %7" PRId64 " %10" PRId64
		       " %9" PRId64 " %12.1f %12.1f  poller %s calls %" PRId64 " saved %" PRId64
		       " late %" PRId64 "\n",
		       name, iget(q, "requests"), num(q, "read_bytes") / 1048576.0,
		       num(q, "write_bytes") / 1048576.0, iget(q, "errors"), iget(q, "kicks"),
		       iget(q, "deferred"), iget(q, "late"), num(q, "late_ns_avg") / 1000.0,
		       num(q, "late_ns_max") / 1000.0, poller, iget(q, "calls"),
		       iget(q, "calls_saved"), iget(q, "calls_late"));
		if (iget(q, "poller") >= 0)
			printf("%-40s avail_next %" PRId64 " used_next %" PRId64 " pending %" PRId64
			       "\n",
			       "", iget(q, "avail_next"), iget(q, "used_next"), iget(q, "pending"));
	}
}

static void stats_table(const json_t *res, bool queues)
{
	const json_t *d, *p;
	size_t i;

	printf("%-40s %12s %10s %10s %7s %7s %10s %9s %12s %12s %7s %7s %6s\n", "SOCKET",
	       "REQUESTS", "READ_MB", "WRITE_MB", "ERRORS", "KICKS", "DEFERRED", "LATE",
	       "LATE_AVG_US", "LATE_MAX_US", "WA", "GC", "FREE");
	json_array_foreach(json_object_get(res, "devices"), i, d)
	{
		const json_t *t = json_object_get(d, "totals"),
			     *m = json_object_get(d, "model_stats");
		bool bb = json_object_get(m, "gc_runs") != NULL;

		printf("%-40s %12" PRId64 " %10.1f %10.1f %7" PRId64 " %7" PRId64 " %10" PRId64
		       " %9" PRId64 " %12.1f %12.1f",
		       sget(d, "path"), iget(t, "requests"), num(t, "read_bytes") / 1048576.0,
		       num(t, "write_bytes") / 1048576.0, iget(t, "errors"), iget(t, "kicks"),
		       iget(t, "deferred"), iget(t, "late"), num(t, "late_ns_avg") / 1000.0,
		       num(t, "late_ns_max") / 1000.0);
		if (bb)
			printf(" %7.3f %7" PRId64 " %6" PRId64 "\n", num(m, "write_amplification"),
			       iget(m, "gc_runs"), iget(m, "lines_free"));
		else
			printf(" %7s %7s %6s\n", "-", "-", "-");
		if (queues)
			stats_queue_rows(d);
	}
	printf("\n%-6s %5s %6s %-9s %14s %6s %10s\n", "POLLER", "LCORE", "QUEUES", "MODE", "SWEEPS",
	       "BUSY%", "SLEEPS");
	json_array_foreach(json_object_get(res, "pollers"), i, p)
	{
		double sw = num(p, "sweeps");

		printf("%-6" PRId64 " %5" PRId64 " %6" PRId64 " %-9s %14.0f %6.1f %10.0f\n",
		       iget(p, "id"), iget(p, "lcore"), iget(p, "queues"),
		       json_string_value(json_object_get(p, "poll_mode")), sw,
		       sw > 0 ? 100.0 * num(p, "busy_sweeps") / sw : 0.0, num(p, "sleeps"));
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The device named path in a stats result, or NULL. */
static const json_t *dev_in(const json_t *res, const char *path)
{
	const json_t *d;
	size_t i;

	json_array_foreach(json_object_get(res, "devices"), i,
			   d) if (strcmp(sget(d, "path"), path) == 0) return d;
	return NULL;
}

static double delta(const json_t *a, const json_t *b, const char *key)
{
	return num(b, key) - num(a, key);
}

/* One line per device: rates between two stats results dt seconds apart. */
static void watch_rows(const json_t *prev, const json_t *cur, double dt, bool json)
{
	const json_t *d;
	size_t i;

	json_array_foreach(json_object_get(cur, "devices"), i, d)
	{
		const json_t *p = dev_in(prev, sget(d, "path"));
		const json_t *t = json_object_get(d, "totals"),
			     *m = json_object_get(d, "model_stats");
		const json_t *pt = p ? json_object_get(p, "totals") : NULL;
		const json_t *pm = p ? json_object_get(p, "model_stats") : NULL;
		double iops = pt ? delta(pt, t, "requests") / dt : 0;
		double rd = pt ? delta(pt, t, "read_bytes") / dt / 1e6 : 0;
		double wr = pt ? delta(pt, t, "write_bytes") / dt / 1e6 : 0;
		double late = pt ? delta(pt, t, "late") / dt : 0;
		double hw = pm ? delta(pm, m, "host_write_pages") : 0;
		double nw = pm ? delta(pm, m, "nand_write_pages") : 0;
		double wa = hw > 0 ? nw / hw : 0;

		if (json)
			printf(
			    "{\"path\":\"%s\",\"iops\":%.1f,\"read_mbps\":%.2f,\"write_mbps\":%.2f,"
			    "\"late_per_s\":%.1f,\"wa\":%.3f}\n",
			    sget(d, "path"), iops, rd, wr, late, wa);
		else
			printf("%-40s %10.0f %9.1f %9.1f %9.1f %6.3f\n", sget(d, "path"), iops, rd,
			       wr, late, wa);
	}
	fflush(stdout);
}

/* Sleep until the absolute CLOCK_MONOTONIC time t (s); false when Ctrl-C came. */
static bool sleep_until(double t)
{
	struct timespec ts = {(time_t)t, (long)((t - (double)(time_t)t) * 1e9)};

	while (!g_stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
	return !g_stop;
}

/* A stats request every c->watch seconds on one connection (deadlines do not drift). */
static int stats_watch(struct ctl *c, const char *path)
{
	json_t *prev = NULL, *cur;
	double t0 = now_s(), t1, next = t0;
	int rc = call(c, "stats", path ? json_pack("{s:s}", "path", path) : NULL, &prev);

	for (long n = 0; rc == 0 && (c->count == 0 || n < c->count); n++) {
		next += c->watch;
		if (next < now_s())
			next = now_s(); /* femud answered late: go on without catching up */
		if (!sleep_until(next))
			break;
		rc = call(c, "stats", path ? json_pack("{s:s}", "path", path) : NULL, &cur);
		if (rc != 0)
			break;
		t1 = now_s();
		if (!c->json)
			printf("%-40s %10s %9s %9s %9s %6s\n", "SOCKET", "IOPS", "RD_MB/s",
			       "WR_MB/s", "LATE/s", "WA");
		watch_rows(prev, cur, t1 - t0, c->json);
		json_decref(prev);
		prev = cur;
		t0 = t1;
	}
	json_decref(prev);
	return rc;
}

static int cmd_stats(struct ctl *c, const char *path)
{
	json_t *res;
	int rc;

	if (c->watch > 0)
		return stats_watch(c, path);
	rc = call(c, "stats", path ? json_pack("{s:s}", "path", path) : NULL, &res);
	if (rc != 0)
		return rc;
	if (c->json)
		print_json(res);
	else
		stats_table(res, c->queues);
	json_decref(res);
	return 0;
}

/* ---- create, delete, set, save-config, call ---- */

static int cmd_simple(struct ctl *c, const char *method, json_t *params)
{
	json_t *res;
	int rc = call(c, method, params, &res);

	if (rc != 0)
		return rc;
	if (c->json)
		print_json(res);
	json_decref(res);
	return 0;
}

static int cmd_set(struct ctl *c, const char *path, char **kvs, int n)
{
	json_t *params = json_object();

	for (int i = 0; i < n; i++) {
		char *eq = strchr(kvs[i], '=');

		if (eq == NULL || eq == kvs[i]) {
			fprintf(stderr, "femuctl: set: '%s' is not key=value\n", kvs[i]);
			json_decref(params);
			return EXIT_USAGE;
		}
		*eq = '\0';
		json_object_set_new(params, kvs[i], json_string(eq + 1));
	}
	return cmd_simple(c, "set", json_pack("{s:s, s:o}", "path", path, "params", params));
}

/* poll-mode's words: busy|adaptive, idle_us=N, poller=N into params; 0 or -1. */
static int poll_mode_params(json_t *params, char **words, int n)
{
	for (int i = 0; i < n; i++) {
		const char *w = words[i];
		uint64_t v;

		if (strcmp(w, "busy") == 0 || strcmp(w, "adaptive") == 0)
			json_object_set_new(params, "mode", json_string(w));
		else if (strncmp(w, "idle_us=", 8) == 0 &&
			 num_parse(w + 8, 0, 0, INT64_MAX, &v) == 0)
			json_object_set_new(params, "idle_us", json_integer((json_int_t)v));
		else if (strncmp(w, "poller=", 7) == 0 &&
			 num_parse(w + 7, 0, 0, INT64_MAX, &v) == 0)
			json_object_set_new(params, "poller", json_integer((json_int_t)v));
		else {
			fprintf(stderr,
				"femuctl: poll-mode: '%s' is not busy, adaptive, idle_us=N or "
				"poller=N\n",
				w);
			return -1;
		}
	}
	return 0;
}

static int cmd_poll_mode(struct ctl *c, char **words, int n)
{
	json_t *params = json_object(), *res, *p;
	size_t i;
	int rc;

	if (poll_mode_params(params, words, n) != 0) {
		json_decref(params);
		return EXIT_USAGE;
	}
	rc = call(c, "poll_mode", params, &res);
	if (rc != 0)
		return rc;
	if (c->json) {
		print_json(res);
	} else {
		printf("%-6s %5s %-9s %8s\n", "POLLER", "LCORE", "MODE", "IDLE_US");
		json_array_foreach(json_object_get(res, "pollers"), i, p)
		    printf("%-6" PRId64 " %5" PRId64 " %-9s %8" PRId64 "\n", iget(p, "id"),
			   iget(p, "lcore"), json_string_value(json_object_get(p, "poll_mode")),
			   iget(p, "idle_us"));
	}
	json_decref(res);
	return 0;
}

/* res as indented JSON and a newline into file; 0 or -1 (errno). */
static int save_file(const json_t *res, const char *file)
{
	FILE *f = fopen(file, "w");
	int rc;

	if (f == NULL)
		return -1;
	rc = json_dumpf(res, f, JSON_INDENT(2));
	fputc('\n', f);
	return fclose(f) != 0 || rc != 0 ? -1 : 0;
}

static int cmd_save(struct ctl *c, const char *file)
{
	json_t *res;
	int rc = call(c, "save_config", NULL, &res);

	if (rc != 0)
		return rc;
	if (strcmp(file, "-") == 0)
		print_json(res);
	else if (save_file(res, file) != 0) {
		fprintf(stderr, "femuctl: save-config: cannot write %s: %s\n", file,
			strerror(errno));
		rc = 1;
	}
	json_decref(res);
	return rc;
}

static int cmd_version(struct ctl *c)
{
	json_t *res;
	int rc = call(c, "version", NULL, &res);

	if (rc != 0)
		return rc;
	if (c->json)
		print_json(res);
	else
		printf("femuctl %s\nfemud %s\n", FEMUD_VERSION, sget(res, "version"));
	json_decref(res);
	return 0;
}

/* s with XML's five special characters escaped, into out. */
static void xml_escape(const char *s, char *out, size_t len)
{
	size_t used = 0;

	for (; *s != '\0' && used + 7 < len; s++) {
		const char *rep = *s == '&'    ? "&amp;"
				  : *s == '<'  ? "&lt;"
				  : *s == '>'  ? "&gt;"
				  : *s == '\'' ? "&apos;"
				  : *s == '"'  ? "&quot;"
					       : NULL;

		used += (size_t)snprintf(out + used, len - used, "%s", rep ? rep : (char[]){*s, 0});
	}
	out[used] = '\0';
}

/* Append CPU range lo-hi (or lo) to a cpuset list. */
static void cpuset_add(char *list, size_t len, long lo, long hi)
{
	size_t used = strlen(list);

	if (lo == hi)
		snprintf(list + used, len - used, "%s%ld", used ? "," : "", lo);
	else
		snprintf(list + used, len - used, "%s%ld-%ld", used ? "," : "", lo, hi);
}

/* The CPUs 0..ncpus-1 that are (want = true) or are not in cpus, as a cpuset list. */
static void cpuset_of(const json_t *cpus, long ncpus, bool want, char *list, size_t len)
{
	long lo = -1;

	list[0] = '\0';
	for (long c = 0; c <= ncpus; c++) {
		bool in = false;
		size_t i;
		json_t *v;

		json_array_foreach(cpus, i, v) in |= json_integer_value(v) == c;
		if (c < ncpus && in == want) {
			if (lo < 0)
				lo = c;
		} else if (lo >= 0) {
			cpuset_add(list, len, lo, c - 1);
			lo = -1;
		}
	}
}

/* The domain lines a femud disk needs, as one XML comment. */
static void libvirt_domain_notes(const json_t *place)
{
	const json_t *pcpus = json_object_get(place, "poller_cpus");
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	char pollers[512], others[512];

	cpuset_of(pcpus, ncpus, true, pollers, sizeof(pollers));
	cpuset_of(pcpus, ncpus, false, others, sizeof(others));
	printf("<!-- The domain needs:\n"
	       "  guest RAM shared with femud (vhost-user):\n"
	       "    <memoryBacking><source type='memfd'/><access mode='shared'/></memoryBacking>\n"
	       "  ACPI, or a hot-plugged disk (virsh attach-device) breaks the guest silently:\n"
	       "    <features><acpi/></features>\n"
	       "  QEMU's vCPU and emulator threads off femud's poller CPUs (%s), on %s:\n"
	       "    <cputune><vcpupin vcpu='0' cpuset='%s'/> (one per vCPU)\n"
	       "             <emulatorpin cpuset='%s'/></cputune>\n"
	       "  With <reconnect>, 'virsh start' waits without a message while femud is not\n"
	       "  running: start femud first.\n"
	       "  Hot-plugged (virsh attach-device), the disk is not reconnected after a femud\n"
	       "  restart (libvirt adds its socket without QEMU's reconnect): plug it again\n"
	       "  (virsh detach-device, attach-device), and keep a femuctl-created device in\n"
	       "  femud's configuration (femuctl save-config) so that it comes back. -->\n",
	       pollers[0] ? pollers : "none", others[0] ? others : "any CPU", others, others);
}

/*
 * The disk element.  No <serial> or <readonly/>: libvirt refuses both on a
 * vhostuser disk; femud's serial= and readonly= keys give the guest those.
 */
static void libvirt_disk(const json_t *dev, const char *target)
{
	char path[512], tgt[128];

	xml_escape(sget(dev, "path"), path, sizeof(path));
	xml_escape(target, tgt, sizeof(tgt));
	printf("<disk type='vhostuser' device='disk'>\n"
	       "  <driver name='qemu' type='raw' queues='%" PRId64 "'/>\n"
	       "  <source type='unix' path='%s'>\n"
	       "    <reconnect enabled='yes' timeout='10'/>\n"
	       "  </source>\n"
	       "  <target dev='%s' bus='virtio'/>\n"
	       "</disk>\n",
	       iget(dev, "queues"), path, tgt);
}

static int cmd_libvirt_xml(struct ctl *c, const char *sock, const char *target)
{
	json_t *devs, *place;
	int rc = call(c, "list", json_pack("{s:s}", "path", sock), &devs);

	if (rc != 0)
		return rc;
	rc = call(c, "placement", NULL, &place);
	if (rc == 0) {
		const json_t *d = json_array_get(devs, 0);

		printf("<!-- femud device %s: %s, %" PRId64 " bytes, %" PRId64
		       " queues, serial %s%s\n"
		       "  (serial and read-only come from femud's serial= and readonly= keys:\n"
		       "  libvirt refuses <serial> and <readonly/> on a vhostuser disk) -->\n",
		       sget(d, "path"), sget(d, "model"), iget(d, "capacity_bytes"),
		       iget(d, "queues"), sget(d, "serial"),
		       json_is_true(json_object_get(d, "readonly")) ? ", read-only" : "");
		libvirt_domain_notes(place);
		libvirt_disk(json_array_get(devs, 0), target != NULL ? target : "vdb");
		json_decref(place);
	}
	json_decref(devs);
	return rc;
}

static int cmd_call(struct ctl *c, const char *method, const char *params)
{
	json_error_t je;
	json_t *p = NULL, *res;
	int rc;

	if (params != NULL && (p = json_loads(params, 0, &je)) == NULL) {
		fprintf(stderr, "femuctl: call: params are not JSON: %s\n", je.text);
		return EXIT_USAGE;
	}
	rc = call(c, method, p, &res);
	if (rc == 0) {
		print_json(res);
		json_decref(res);
	}
	return rc;
}

/* ---- command line ---- */

static int bad_args(const char *cmd)
{
	fprintf(stderr, "femuctl: %s: wrong arguments (see femuctl --help)\n", cmd);
	return EXIT_USAGE;
}

static int run(struct ctl *c, int argc, char **argv)
{
	const char *cmd = argv[0];
	const char *a1 = argc > 1 ? argv[1] : NULL;

	if (strcmp(cmd, "create") == 0)
		return argc == 2 ? cmd_simple(c, "create", json_pack("{s:s}", "spec", a1))
				 : bad_args(cmd);
	if (strcmp(cmd, "delete") == 0)
		return argc == 2
			   ? cmd_simple(c, "delete",
					json_pack("{s:s, s:b}", "path", a1, "force", c->force))
			   : bad_args(cmd);
	if (strcmp(cmd, "list") == 0)
		return argc <= 2 ? cmd_list(c, a1) : bad_args(cmd);
	if (strcmp(cmd, "stats") == 0)
		return argc <= 2 ? cmd_stats(c, a1) : bad_args(cmd);
	if (strcmp(cmd, "stats-reset") == 0)
		return argc <= 2 ? cmd_simple(c, "stats_reset",
					      a1 ? json_pack("{s:s}", "path", a1) : NULL)
				 : bad_args(cmd);
	if (strcmp(cmd, "set") == 0)
		return argc >= 3 ? cmd_set(c, a1, argv + 2, argc - 2) : bad_args(cmd);
	if (strcmp(cmd, "image-save") == 0)
		return argc <= 2
			   ? cmd_simple(c, "image_save", a1 ? json_pack("{s:s}", "path", a1) : NULL)
			   : bad_args(cmd);
	if (strcmp(cmd, "poll-mode") == 0)
		return argc <= 4 ? cmd_poll_mode(c, argv + 1, argc - 1) : bad_args(cmd);
	if (strcmp(cmd, "save-config") == 0)
		return argc == 2 ? cmd_save(c, a1) : bad_args(cmd);
	if (strcmp(cmd, "call") == 0)
		return argc == 2 || argc == 3 ? cmd_call(c, a1, argc == 3 ? argv[2] : NULL)
					      : bad_args(cmd);
	if (strcmp(cmd, "version") == 0)
		return argc == 1 ? cmd_version(c) : bad_args(cmd);
	if (strcmp(cmd, "libvirt-xml") == 0)
		return argc == 2 || argc == 3 ? cmd_libvirt_xml(c, a1, argc == 3 ? argv[2] : NULL)
					      : bad_args(cmd);
	fprintf(stderr, "femuctl: unknown command '%s' (see femuctl --help)\n", cmd);
	return EXIT_USAGE;
}

static const struct option long_opts[] = {
    {"socket", required_argument, NULL, 's'},  {"json", no_argument, NULL, 'j'},
    {"watch", required_argument, NULL, 'w'},   {"count", required_argument, NULL, 'n'},
    {"force", no_argument, NULL, 'f'},	       {"queues", no_argument, NULL, 'Q'},
    {"timeout", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},       {NULL, 0, NULL, 0},
};

/* Options anywhere on the line; the rest (command and arguments) compacted to argv[optind..]. */
static int parse_opts(struct ctl *c, int argc, char **argv)
{
	uint64_t v;
	double secs;
	int o;

	while ((o = getopt_long(argc, argv, "+s:jw:n:fQt:hV", long_opts, NULL)) != -1) {
		switch (o) {
		case 's':
			c->sock = optarg;
			break;
		case 'j':
			c->json = true;
			break;
		case 'w':
			if (num_double(optarg, 0, 3600, &c->watch) != 0 || c->watch < 0.01) {
				fprintf(stderr,
					"femuctl: --watch '%s': seconds from 0.01 to 3600\n",
					optarg);
				return -1;
			}
			break;
		case 'n':
			if (num_parse(optarg, 0, 1, LONG_MAX, &v) != 0) {
				fprintf(stderr, "femuctl: --count '%s': a positive integer\n",
					optarg);
				return -1;
			}
			c->count = (long)v;
			break;
		case 'f':
			c->force = true;
			break;
		case 'Q':
			c->queues = true;
			break;
		case 't':
			if (num_double(optarg, 0, INT_MAX / 1000, &secs) != 0 || secs * 1000 < 1) {
				fprintf(stderr, "femuctl: --timeout '%s': seconds > 0\n", optarg);
				return -1;
			}
			c->timeout_ms = (int)(secs * 1000);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("femuctl %s\n", FEMUD_VERSION);
			exit(0);
		default:
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct ctl c = {.timeout_ms = 120000};
	char *args[64];
	int nargs = 0, rc;
	char err[512];

	c.sock = getenv("FEMUD_RPC") ? getenv("FEMUD_RPC") : CTL_DEFAULT_SOCK;
	/* options may follow the command: collect non-options, parse the rest */
	while (optind < argc && nargs < 64) {
		if (parse_opts(&c, argc, argv) != 0) {
			usage(stderr);
			return EXIT_USAGE;
		}
		if (optind < argc)
			args[nargs++] = argv[optind++];
	}
	if (nargs == 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (ctl_connect(&c.cl, c.sock, c.timeout_ms, err, sizeof(err)) != 0) {
		fprintf(stderr, "femuctl: %s\n", err);
		return EXIT_TRANSPORT;
	}
	signal(SIGINT, on_sigint);
	signal(SIGPIPE, SIG_IGN);
	rc = run(&c, nargs, args);
	ctl_close(&c.cl);
	return rc;
}
