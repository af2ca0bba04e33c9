/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.h - femud's command line: global options, one struct per --dev,
 * and the parser.  Parsing starts nothing and touches no device; every error
 * names the option (and for --dev the key and value).
 *
 * Units: sizes in bytes unless a name says MiB.
 */
#ifndef FEMUD_OPTIONS_H
#define FEMUD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "daemon/access.h"
#include "ftl/fm_model.h"

#define FEMUD_MAX_DEVS 64
#define FEMUD_MAX_QUEUES 64
#define FEMUD_MAX_KV 64
#define FEMUD_SERIAL_LEN 20
#define FEMUD_DEFAULT_DEVSZ_MB 1024
#define FEMUD_DEFAULT_QUEUES 8
#define FEMUD_DEFAULT_FEMU_MODE 2
#define FEMUD_DEFAULT_ADAPTIVE false /* --poll-mode busy (see README, Poll modes) */
#define FEMUD_DEFAULT_IDLE_US 50
#define FEMUD_MAX_IDLE_US 1000000
#define FEMUD_MAX_POLL_OPTS 128 /* values in a --poll-mode / --idle-us list */
#define FEMUD_RPC_DEFAULT "/var/tmp/femud.sock"

/* One --dev: the daemon's keys, and the model's keys kept for the model. */
struct femud_dev_opts {
	char *spec;	   /* owned copy of the --dev argument; strings below point into it */
	const char *path;  /* socket path (required) */
	uint64_t devsz_mb; /* MiB; valid when devsz_set */
	bool devsz_set;
	int femu_mode;	 /* FEMU numbering: 2 NoSSD, 1 BlackBox */
	unsigned queues; /* virtqueues offered */
	uint32_t secsz;	 /* logical block size, bytes */
	char serial[FEMUD_SERIAL_LEN + 1];
	bool readonly;
	unsigned sock_mode;	    /* permission bits */
	struct femud_access access; /* sock_owner, allow_uid */
	const char *mem_path;	    /* persistent medium file, NULL = volatile memory */
	bool format;		    /* format=1: make the mem_path medium anew */
	const char *image; /* image=FILE: loaded at start when it exists, saved on request */
	bool image_save;   /* image_save=1: also save it at a clean stop */
	struct fm_kv kv[FEMUD_MAX_KV]; /* keys for the model */
	unsigned nkv;
	const struct fm_model_ops *ops;
	struct fm_model_config mcfg; /* after femud_opts_parse: configured, capacity final */
};

struct femud_opts {
	const char *lcores; /* EAL lcore list, "auto", or NULL (default) */
	int mbe_node;	    /* -1: node of the first poller */
	const char *log_level;
	bool dry_run;	 /* parse, check, print the plan, exit 0 */
	bool no_huge;	 /* never use hugepages */
	pid_t qemu_pid;	 /* 0: unknown */
	const char *rpc; /* JSON-RPC socket path; NULL: FEMUD_RPC_DEFAULT; "none": off */
	bool rpc_set;	 /* --rpc was given */
	/*
	 * --poll-mode / --idle-us: one value per poller in lcore order, the last
	 * one for every further poller (femud_opts_poll_mode()); *_set: given
	 * on the command line (a --config file's pollers apply otherwise).
	 */
	bool adaptive[FEMUD_MAX_POLL_OPTS]; /* adaptive: pollers sleep when idle */
	unsigned nadaptive;
	bool adaptive_set;
	uint64_t idle_us[FEMUD_MAX_POLL_OPTS]; /* idle threshold of an adaptive poller, us */
	unsigned nidle_us;
	bool idle_us_set;
	const char *config; /* --config FILE, or NULL */
	bool help;
	bool version;
	struct femud_dev_opts devs[FEMUD_MAX_DEVS];
	unsigned ndevs;
};

/*
 * Parse argv into o.  Returns 0, or -EINVAL with a one-line message in err
 * that names the option (and key/value).  Model keys are checked by the
 * model's configure() here too, so a successful parse means every device can
 * be created as far as options go.
 */
int femud_opts_parse(int argc, char **argv, struct femud_opts *o, char *err, size_t errlen);

/* Poll mode and idle threshold (us) of poller i (0 = the first poller). */
void femud_opts_poll_mode(const struct femud_opts *o, unsigned i, bool *adaptive,
			  uint64_t *idle_us);

/*
 * Parse a --poll-mode ("busy|adaptive[,...]") or --idle-us ("N[,N...]")
 * list into o (replacing what was there): 0, or -EINVAL with a message
 * naming opt ("--poll-mode", or where a config file's value came from).
 */
int femud_opts_parse_poll_mode(struct femud_opts *o, const char *list, const char *opt, char *err,
			       size_t errlen);
int femud_opts_parse_idle_us(struct femud_opts *o, const char *list, const char *opt, char *err,
			     size_t errlen);

/* Parse one --dev argument (exposed for tests). */
int femud_dev_parse(const char *arg, struct femud_dev_opts *d, char *err, size_t errlen);

/* -EINVAL (message in err) when two devices of o have the same socket path. */
int femud_opts_check_paths(const struct femud_opts *o, char *err, size_t errlen);

/* The RPC socket path o asks for, NULL when --rpc none. */
const char *femud_opts_rpc_path(const struct femud_opts *o);

/* Free what femud_dev_parse() allocated in d (d may be empty). */
void femud_dev_opts_free(struct femud_dev_opts *d);

void femud_opts_free(struct femud_opts *o);

void femud_opts_usage(FILE *out);

#endif /* FEMUD_OPTIONS_H */
