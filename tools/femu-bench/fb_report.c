/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_report.c - text and JSON output of a femu-bench run.
 */
#include "fb_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

static double ticks_us(const struct fb_result *r, double ticks)
{
	return ticks * 1e6 / r->tsc_hz;
}

void fb_summarize(const struct fb_result *r, struct fb_summary *s)
{
	double el = r->elapsed_s > 0 ? r->elapsed_s : 1e-9;

	s->iops = (double)r->ios / el;
	s->mbps = (double)r->bytes / el / 1e6;
	s->cpu_pct = 100.0 * r->cpu_s / el;
	s->kicks_per_io = r->ios ? (double)r->kicks / (double)r->ios : 0;
	s->ios_per_cpu_s = r->cpu_s > 0 ? (double)r->ios / r->cpu_s : 0;
	s->mean_us = ticks_us(r, fb_hist_mean(&r->lat));
	s->p50_us = ticks_us(r, (double)fb_hist_percentile(&r->lat, 50));
	s->p99_us = ticks_us(r, (double)fb_hist_percentile(&r->lat, 99));
	s->p999_us = ticks_us(r, (double)fb_hist_percentile(&r->lat, 99.9));
	s->max_us = ticks_us(r, (double)r->lat.max);
	s->min_us = r->lat.count ? ticks_us(r, (double)r->lat.min) : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Median of the whole seconds after --ramp (0 when there are none). */
static double steady_iops(const struct fb_opts *o, const struct fb_result *r)
{
	unsigned first = (unsigned)ceil(o->ramp_s);
	uint32_t v[FB_PER_S_MAX];
	unsigned n = 0;

	for (unsigned i = first; i < r->nper_s; i++)
		v[n++] = r->per_s[i];
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(v[0]), cmp_u32);
	return n % 2 ? v[n / 2] : ((double)v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "lat_cdf_us":[[pct,us],...]: the latency distribution, for charts. */
static void lat_cdf_json(FILE *out, const struct fb_result *r)
{
	static const double pcts[] = {0.1, 1,  5,  10, 20, 30, 40,   50,   60,	  70,
				      80,  90, 95, 97, 98, 99, 99.5, 99.9, 99.99, 100};

	fprintf(out, "\"lat_cdf_us\":[");
	for (unsigned i = 0; r->lat.count && i < sizeof(pcts) / sizeof(pcts[0]); i++)
		fprintf(out, "%s[%g,%.3f]", i ? "," : "", pcts[i],
			ticks_us(r, (double)fb_hist_percentile(&r->lat, pcts[i])));
	fprintf(out, "],");
}

static void bs_list(FILE *out, const struct fb_opts *o)
{
	for (unsigned i = 0; i < o->nbs; i++)
		fprintf(out, "%s%u", i ? "," : "", o->bs[i]);
}

void fb_report_text(FILE *out, const struct fb_opts *o, const struct fb_result *r)
{
	struct fb_summary s;

	fb_summarize(r, &s);
	fprintf(out, "%s bs=", fb_rw_name(o->rw));
	bs_list(out, o);
	fprintf(out, " qd=%u queues=%u threads=%u%s%s\n", o->qd, o->queues, o->ncpus,
		o->packed ? " packed" : "", o->verify ? " verify" : "");
	fprintf(out, "  ios %" PRIu64 " (reads %" PRIu64 ", writes %" PRIu64 ") in %.3f s\n",
		r->ios, r->reads, r->writes, r->elapsed_s);
	fprintf(out, "  IOPS %.0f  MB/s %.1f\n", s.iops, s.mbps);
	fprintf(out, "  latency us: mean %.2f  p50 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n",
		s.mean_us, s.p50_us, s.p99_us, s.p999_us, s.max_us);
	fprintf(out, "  initiator CPU %.1f%% of one core (%.0f requests per CPU second)\n",
		s.cpu_pct, s.ios_per_cpu_s);
	fprintf(out, "  kicks %" PRIu64 " (%.4f per I/O)\n", r->kicks, s.kicks_per_io);
	if (r->nper_s > 1) {
		fprintf(out, "  IOPS per second%s:", o->ramp_s > 0 ? " (ramp included)" : "");
		for (unsigned i = 0; i < r->nper_s; i++)
			fprintf(out, " %" PRIu32, r->per_s[i]);
		fprintf(out, "\n  median of the seconds after the ramp: %.0f\n", steady_iops(o, r));
	}
	if (o->verify)
		fprintf(out, "  verify: %" PRIu64 " reads failed (generation %" PRIu64 ")\n",
			r->verify_errors, o->verify_gen);
	if (r->io_errors)
		fprintf(out, "  I/O errors: %" PRIu64 "\n", r->io_errors);
}

void fb_report_json(FILE *out, const struct fb_opts *o, const struct fb_result *r)
{
	struct fb_summary s;

	fb_summarize(r, &s);
	fprintf(out, "{\"rw\":\"%s\",\"bs\":[", fb_rw_name(o->rw));
	bs_list(out, o);
	fprintf(out, "],\"qd\":%u,\"queues\":%u,\"threads\":%u,\"layout\":\"%s\",", o->qd,
		o->queues, o->ncpus, o->packed ? "packed" : "split");
	fprintf(out,
		"\"ios\":%" PRIu64 ",\"reads\":%" PRIu64 ",\"writes\":%" PRIu64
		",\"bytes\":%" PRIu64 ",\"elapsed_s\":%.6f,",
		r->ios, r->reads, r->writes, r->bytes, r->elapsed_s);
	fprintf(out, "\"iops\":%.1f,\"mbps\":%.3f,", s.iops, s.mbps);
	fprintf(out, "\"ramp_s\":%.3f,\"iops_per_s\":[", o->ramp_s);
	for (unsigned i = 0; i < r->nper_s; i++)
		fprintf(out, "%s%" PRIu32, i ? "," : "", r->per_s[i]);
	fprintf(out, "],\"iops_per_s_median\":%.1f,", steady_iops(o, r));
	fprintf(out,
		"\"lat_us\":{\"mean\":%.3f,\"p50\":%.3f,\"p99\":%.3f,\"p999\":%.3f,"
		"\"max\":%.3f,\"min\":%.3f},",
		s.mean_us, s.p50_us, s.p99_us, s.p999_us, s.max_us, s.min_us);
	lat_cdf_json(out, r);
	fprintf(out, "\"ios_per_cpu_s\":%.1f,", s.ios_per_cpu_s);
	fprintf(out, "\"cpu_pct\":%.2f,\"kicks\":%" PRIu64 ",\"kicks_per_io\":%.6f,", s.cpu_pct,
		r->kicks, s.kicks_per_io);
	fprintf(out,
		"\"verify\":%s,\"verify_errors\":%" PRIu64 ",\"io_errors\":%" PRIu64
		",\"timed_out\":%s,\"ok\":%s}\n",
		o->verify ? "true" : "false", r->verify_errors, r->io_errors,
		r->timed_out ? "true" : "false", r->failed ? "false" : "true");
}
