/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fb_report.h - print a run's result as text or as one JSON object with
 * keys iops, mbps (10^6 bytes/s), lat_us {mean,p50,p99,p999,max}, cpu_pct
 * (initiator CPU, percent of one core), ios_per_cpu_s (requests per second of
 * initiator CPU time), kicks, kicks_per_io, ios, ...
 */
#ifndef FB_REPORT_H
#define FB_REPORT_H

#include <stdio.h>

#include "fb_opts.h"
#include "fb_workload.h"

struct fb_summary {
	double iops, mbps, cpu_pct, kicks_per_io;
	double ios_per_cpu_s; /* requests per second of initiator CPU time */
	double mean_us, p50_us, p99_us, p999_us, max_us, min_us;
};

void fb_summarize(const struct fb_result *r, struct fb_summary *s);

void fb_report_text(FILE *out, const struct fb_opts *o, const struct fb_result *r);

void fb_report_json(FILE *out, const struct fb_opts *o, const struct fb_result *r);

#endif /* FB_REPORT_H */
