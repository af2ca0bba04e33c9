/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tools/femu-place/emit.c - femu-place's outputs: command
 * lines, text report, JSON, and the --apply shell commands.
 */
#include "tools/femu-place/emit.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

/* ------------------------------------------------------------ argv */

static int argv_add(struct place_argv *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int argv_add(struct place_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (a->n + 2 > a->cap) {
		unsigned cap = a->cap ? a->cap * 2 : 16;
		char **v = realloc(a->v, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		a->v = v;
		a->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL)
		return -1;
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
	return 0;
}

void place_argv_free(struct place_argv *a)
{
	unsigned i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* DPDK EAL lcore mapping: "0@main,1@poller1,...". */
static void lcores_string(const struct place_plan *p, char *buf, size_t len)
{
	size_t used = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; i < p->n_lcores && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u@%u", i ? "," : "", i,
					 p->lcore_cpus[i]);
}

int place_femud_argv(const struct place_request *rq, const struct place_plan *p,
		     struct place_argv *a)
{
	char lcores[1024];
	unsigned i;
	int r = 0;

	lcores_string(p, lcores, sizeof(lcores));
	r |= argv_add(a, "%s", rq->femud_path);
	r |= argv_add(a, "--lcores");
	r |= argv_add(a, "%s", lcores);
	r |= argv_add(a, "--mbe-node");
	r |= argv_add(a, "%d", p->mbe_node);
	for (i = 0; i < rq->devices; i++) {
		r |= argv_add(a, "--dev");
		r |= argv_add(a, "path=%s%u.sock,devsz_mb=%" PRIu64 ",queues=%u", rq->sock_prefix,
			      i, rq->devsz / MIB, p->queues);
	}
	return r;
}

/* QEMU's host-nodes list: repeated keys, e.g. "host-nodes=0,host-nodes=1". */
static void nodes_string(const struct place_plan *p, char *buf, size_t len)
{
	unsigned i;
	size_t used = 0;

	buf[0] = '\0';
	for (i = 0; i < p->n_guest_nodes && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%shost-nodes=%d", i ? "," : "",
					 p->guest_nodes[i]);
}

static const char *page_name(uint64_t size)
{
	return size == GIB ? "1G" : size == 2 * MIB ? "2M" : "4K";
}

int place_qemu_argv(const struct place_request *rq, const struct place_plan *p,
		    struct place_argv *a)
{
	char nodes[256], huge[64] = "";
	unsigned i;
	int r = 0;

	nodes_string(p, nodes, sizeof(nodes));
	if (p->guest_page > 4096)
		snprintf(huge, sizeof(huge), ",hugetlb=on,hugetlbsize=%s",
			 page_name(p->guest_page));
	r |= argv_add(a, "-smp");
	r |= argv_add(a, "%u", rq->vcpus);
	r |= argv_add(a, "-m");
	r |= argv_add(a, "%" PRIu64 "M", p->guest_mem / MIB);
	r |= argv_add(a, "-object");
	r |= argv_add(
	    a, "memory-backend-memfd,id=mem0,size=%" PRIu64 "M,share=on%s,prealloc=on,%s,policy=%s",
	    p->guest_mem / MIB, huge, nodes, p->n_guest_nodes > 1 ? "interleave" : "bind");
	r |= argv_add(a, "-numa");
	r |= argv_add(a, "node,memdev=mem0");
	for (i = 0; i < rq->devices; i++) {
		r |= argv_add(a, "-chardev");
		r |= argv_add(a, "socket,id=vub%u,path=%s%u.sock", i, rq->sock_prefix, i);
		r |= argv_add(a, "-device");
		r |= argv_add(a, "vhost-user-blk-pci,chardev=vub%u,num-queues=%u", i, p->queues);
	}
	return r;
}

int place_qemu_base_argv(struct place_argv *a)
{
	int r = 0;

	r |= argv_add(a, "-machine");
	r |= argv_add(a, "q35");
	r |= argv_add(a, "-accel");
	r |= argv_add(a, "kvm");
	r |= argv_add(a, "-cpu");
	r |= argv_add(a, "host");
	return r;
}

/* ------------------------------------------------------------ quoting */

static bool shell_safe(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "@%+=:,./-_",
			    *s))
			return false;
	return true;
}

static void print_shell_word(FILE *out, const char *s)
{
	if (shell_safe(s)) {
		fputs(s, out);
		return;
	}
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

static void print_cmdline(FILE *out, const struct place_argv *a)
{
	unsigned i;

	for (i = 0; i < a->n; i++) {
		if (i)
			fputc(' ', out);
		print_shell_word(out, a->v[i]);
	}
}

static void print_cpus(FILE *out, const unsigned *cpus, unsigned n)
{
	char buf[4096];

	fputs(place_format_cpulist(cpus, n, buf, sizeof(buf)), out);
}

/* ------------------------------------------------------------ text */

static const char *iso_name(enum place_isolation iso)
{
	return iso == PLACE_ISO_SOCKET ? "socket" : iso == PLACE_ISO_NODE ? "node" : "split";
}

static void text_topology(FILE *out, const struct place_topo *t)
{
	fprintf(out, "topology: %s: %u package%s, %u NUMA node%s, %u physical cores, %u CPUs%s\n",
		t->source, t->n_pkgs, t->n_pkgs > 1 ? "s" : "", t->n_nodes,
		t->n_nodes > 1 ? "s" : "", t->n_cores, t->n_cpus,
		place_has_smt(t) ? " (SMT)" : " (no SMT)");
}

static void text_hugepages(FILE *out, const struct place_plan *p)
{
	unsigned i;

	if (p->n_huge == 0) {
		fprintf(out, "hugepages: none (planned with normal pages)\n");
		return;
	}
	fprintf(out, "hugepages:\n");
	for (i = 0; i < p->n_huge; i++) {
		const struct place_huge *h = &p->huge[i];
		uint64_t need = place_huge_need(h);

		fprintf(out,
			"  node %d, %s pages: need %" PRIu64 " (guest %" PRIu64 " + femud %" PRIu64
			"), reserved %" PRIu64 ", free %" PRIu64 ": %s\n",
			h->node, page_name(h->page_size), need, h->need_guest, h->need_femud,
			h->reserved, h->free, h->free >= need ? "ok" : "NOT reserved yet");
	}
}

void place_emit_text(FILE *out, const struct place_topo *t, const struct place_request *rq,
		     const struct place_plan *p)
{
	struct place_argv fa = {0}, qa = {0}, qb = {0};
	unsigned i;

	text_topology(out, t);
	fprintf(out, "isolation: %s: %s\n\n", iso_name(p->isolation), p->isolation_note);
	fprintf(out, "guest: %s\n", p->guest_reason);
	for (i = 0; i < rq->vcpus; i++)
		fprintf(out, "  vCPU %u -> CPU %u\n", i, p->vcpu_cpus[i]);
	fprintf(out, "  QEMU's other threads -> CPUs ");
	print_cpus(out, p->emu_cpus, p->n_emu_cpus);
	fprintf(out, "\nfemud: %s\n", p->femud_reason);
	fprintf(out, "  main lcore -> CPU %u%s\n", p->lcore_cpus[0],
		p->n_lcores == 1 ? " (also polls)" : "");
	for (i = 1; i < p->n_lcores; i++)
		fprintf(out, "  poller %u -> CPU %u\n", i - 1, p->lcore_cpus[i]);
	text_hugepages(out, p);
	if (p->notes[0])
		fprintf(out, "notes:\n%s", p->notes);

	if (place_femud_argv(rq, p, &fa) == 0) {
		fprintf(out, "\nfemud command line:\n  ");
		print_cmdline(out, &fa);
	}
	if (place_qemu_base_argv(&qb) == 0 && place_qemu_argv(rq, p, &qa) == 0) {
		fprintf(out, "\nQEMU options:\n  %s ", rq->qemu_path);
		print_cmdline(out, &qb);
		fputc(' ', out);
		print_cmdline(out, &qa);
		fprintf(out, "\n  (add your disk/kernel; pin the process to CPUs ");
		print_cpus(out, p->emu_cpus, p->n_emu_cpus);
		fprintf(out, " and each vCPU thread as above: tools/femu-launch does both)\n");
	}
	place_argv_free(&fa);
	place_argv_free(&qa);
	place_argv_free(&qb);
}

/* ------------------------------------------------------------ JSON */

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_uints(FILE *out, const unsigned *v, unsigned n)
{
	unsigned i;

	fputc('[', out);
	for (i = 0; i < n; i++)
		fprintf(out, "%s%u", i ? "," : "", v[i]);
	fputc(']', out);
}

static void json_argv(FILE *out, const struct place_argv *a)
{
	unsigned i;

	fputc('[', out);
	for (i = 0; i < a->n; i++) {
		if (i)
			fputc(',', out);
		json_str(out, a->v[i]);
	}
	fputc(']', out);
}

/* Notes as an array of strings (one per line). */
static void json_lines(FILE *out, const char *text)
{
	const char *s = text;
	bool first = true;

	fputc('[', out);
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		char *line = strndup(s, n);

		if (line && n) {
			fputs(first ? "" : ",", out);
			json_str(out, line);
			first = false;
		}
		free(line);
		s += n + (e != NULL);
	}
	fputc(']', out);
}

static void json_topology(FILE *out, const struct place_topo *t)
{
	fprintf(out, "\"topology\":{\"source\":");
	json_str(out, t->source);
	fprintf(out, ",\"packages\":%u,\"nodes\":%u,\"cores\":%u,\"cpus\":%u,\"smt\":%s}",
		t->n_pkgs, t->n_nodes, t->n_cores, t->n_cpus, place_has_smt(t) ? "true" : "false");
}

static void json_request(FILE *out, const struct place_request *rq)
{
	fprintf(out,
		"\"request\":{\"vcpus\":%u,\"mem\":%" PRIu64 ",\"pollers\":%u,\"devsz\":%" PRIu64
		",\"devices\":%u,\"eal_mem\":%" PRIu64 "}",
		rq->vcpus, rq->mem, rq->pollers, rq->devsz, rq->devices, rq->eal_mem);
}

static void json_guest(FILE *out, const struct place_request *rq, const struct place_plan *p)
{
	unsigned nodes[PLACE_PLAN_MAX_NODES], i;

	for (i = 0; i < p->n_guest_nodes; i++)
		nodes[i] = (unsigned)p->guest_nodes[i];
	fprintf(out, "\"guest\":{\"node\":%d,\"nodes\":", p->guest_nodes[0]);
	json_uints(out, nodes, p->n_guest_nodes);
	fprintf(out, ",\"package\":%u,\"cpus\":", p->guest_pkg);
	json_uints(out, p->vcpu_cpus, rq->vcpus);
	fprintf(out, ",\"emulator_cpus\":");
	json_uints(out, p->emu_cpus, p->n_emu_cpus);
	fprintf(out, ",\"mem\":%" PRIu64 ",\"page_size\":%" PRIu64 ",\"reason\":", p->guest_mem,
		p->guest_page);
	json_str(out, p->guest_reason);
	fputc('}', out);
}

static void json_femud(FILE *out, const struct place_request *rq, const struct place_plan *p)
{
	char lcores[1024];
	unsigned i;

	lcores_string(p, lcores, sizeof(lcores));
	fprintf(out, "\"femud\":{\"node\":%d,\"mbe_node\":%d,\"package\":%u,\"cpus\":", p->mbe_node,
		p->mbe_node, p->femud_pkg);
	json_uints(out, p->lcore_cpus, p->n_lcores);
	fprintf(out, ",\"main_cpu\":%u,\"poller_cpus\":", p->lcore_cpus[0]);
	if (p->n_lcores == 1)
		json_uints(out, p->lcore_cpus, 1);
	else
		json_uints(out, p->lcore_cpus + 1, p->n_lcores - 1);
	fprintf(out, ",\"lcores\":");
	json_str(out, lcores);
	fprintf(out, ",\"page_size\":%" PRIu64 ",\"queues\":%u,\"sockets\":[", p->femud_page,
		p->queues);
	for (i = 0; i < rq->devices; i++)
		fprintf(out, "%s\"%s%u.sock\"", i ? "," : "", rq->sock_prefix, i);
	fprintf(out, "],\"reason\":");
	json_str(out, p->femud_reason);
	fputc('}', out);
}

static void json_hugepages(FILE *out, const struct place_plan *p)
{
	unsigned i;

	fprintf(out, "\"hugepages\":[");
	for (i = 0; i < p->n_huge; i++) {
		const struct place_huge *h = &p->huge[i];
		uint64_t need = place_huge_need(h);

		fprintf(out,
			"%s{\"node\":%d,\"page_size\":%" PRIu64 ",\"need\":%" PRIu64
			",\"need_guest\":%" PRIu64 ",\"need_femud\":%" PRIu64
			",\"reserved\":%" PRIu64 ",\"free\":%" PRIu64
			",\"ok\":%s,\"sysfs\":\"/sys/devices/system/node/node%d/"
			"hugepages/hugepages-%" PRIu64 "kB\"}",
			i ? "," : "", h->node, h->page_size, need, h->need_guest, h->need_femud,
			h->reserved, h->free, h->free >= need ? "true" : "false", h->node,
			h->page_size / 1024);
	}
	fputc(']', out);
}

/* The --apply commands, captured as a string for JSON. */
static char *apply_text(const struct place_request *rq, const struct place_plan *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	place_emit_apply(f, rq, p);
	fclose(f);
	return buf;
}

void place_emit_json(FILE *out, const struct place_topo *t, const struct place_request *rq,
		     const struct place_plan *p)
{
	struct place_argv fa = {0}, qa = {0}, qb = {0};
	char *apply = apply_text(rq, p);

	place_femud_argv(rq, p, &fa);
	place_qemu_argv(rq, p, &qa);
	place_qemu_base_argv(&qb);
	fputc('{', out);
	json_topology(out, t);
	fputc(',', out);
	json_request(out, rq);
	fprintf(out, ",\"isolation\":\"%s\",\"isolation_note\":", iso_name(p->isolation));
	json_str(out, p->isolation_note);
	fputc(',', out);
	json_guest(out, rq, p);
	fputc(',', out);
	json_femud(out, rq, p);
	fprintf(out, ",\"femud_argv\":");
	json_argv(out, &fa);
	fprintf(out, ",\"femud_cmdline\":");
	{
		char *line = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&line, &len);

		if (f) {
			print_cmdline(f, &fa);
			fclose(f);
		}
		json_str(out, line ? line : "");
		free(line);
	}
	fprintf(out, ",\"qemu\":");
	json_str(out, rq->qemu_path);
	fprintf(out, ",\"qemu_base_args\":");
	json_argv(out, &qb);
	fprintf(out, ",\"qemu_args\":");
	json_argv(out, &qa);
	fputc(',', out);
	json_hugepages(out, p);
	fprintf(out, ",\"apply\":");
	json_lines(out, apply ? apply : "");
	fprintf(out, ",\"notes\":");
	json_lines(out, p->notes);
	fprintf(out, "}\n");
	free(apply);
	place_argv_free(&fa);
	place_argv_free(&qa);
	place_argv_free(&qb);
}

/* ------------------------------------------------------------ apply */

static void apply_hugepages(FILE *out, const struct place_plan *p)
{
	unsigned i;

	for (i = 0; i < p->n_huge; i++) {
		const struct place_huge *h = &p->huge[i];
		uint64_t need = place_huge_need(h);
		const char *dir = "/sys/devices/system/node";

		if (h->free >= need) {
			fprintf(out,
				"# node %d: %" PRIu64 " free %s hugepages already, %" PRIu64
				" needed\n",
				h->node, h->free, page_name(h->page_size), need);
			continue;
		}
		fprintf(out,
			"echo %" PRIu64 " > %s/node%d/hugepages/hugepages-%" PRIu64
			"kB/nr_hugepages\n",
			h->reserved + (need - h->free), dir, h->node, h->page_size / 1024);
		fprintf(out,
			"[ \"$(cat %s/node%d/hugepages/hugepages-%" PRIu64 "kB/free_hugepages)\" "
			"-ge %" PRIu64 " ] || echo 'femu-place: node %d did not get %" PRIu64
			" free %s hugepages' >&2\n",
			dir, h->node, h->page_size / 1024, need, h->node, need,
			page_name(h->page_size));
	}
}

void place_emit_apply(FILE *out, const struct place_request *rq, const struct place_plan *p)
{
	struct place_argv fa = {0};

	fprintf(out, "# femu-place plan: run as root\n");
	apply_hugepages(out, p);
	if (place_femud_argv(rq, p, &fa) != 0) {
		place_argv_free(&fa);
		return;
	}
	fprintf(out, "taskset -c ");
	print_cpus(out, p->lcore_cpus, p->n_lcores);
	fputc(' ', out);
	print_cmdline(out, &fa);
	fprintf(out, " &\n");
	place_argv_free(&fa);
}
