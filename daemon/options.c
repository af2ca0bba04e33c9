/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.c - parsing and checking of femud's command line.  Owns the
 * daemon's --dev keys (path, devsz_mb, femu_mode, queues, secsz, serial,
 * readonly, sock_mode, sock_owner, allow_uid, mem_path, format, image,
 * image_save); every other key is handed to the device model's configure()
 * so that model options are checked before anything starts.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/options.h"
#include "ftl/fm_model_registry.h"
#include "ftl/num_parse.h"

#define MB (1ull << 20)

static int dev_bad(char *err, size_t errlen, const char *key, const char *val, const char *why)
{
	snprintf(err, errlen, "--dev: bad value '%s' for key '%s': %s", val, key, why);
	return -EINVAL;
}

static int dev_uint(const char *key, const char *val, uint64_t lo, uint64_t hi, uint64_t *out,
		    char *err, size_t errlen)
{
	char why[96];

	if (num_parse(val, 0, lo, hi, out) != 0) {
		snprintf(why, sizeof(why), "expected an integer from %llu to %llu",
			 (unsigned long long)lo, (unsigned long long)hi);
		return dev_bad(err, errlen, key, val, why);
	}
	return 0;
}

static void dev_defaults(struct femud_dev_opts *d)
{
	d->devsz_mb = FEMUD_DEFAULT_DEVSZ_MB;
	d->femu_mode = FEMUD_DEFAULT_FEMU_MODE;
	d->queues = FEMUD_DEFAULT_QUEUES;
	d->secsz = 512;
	d->sock_mode = 0600;
	femud_access_init(&d->access);
	snprintf(d->serial, sizeof(d->serial), "femud");
}

/* One daemon key; returns 1 when the key is not the daemon's. */
static int dev_key(struct femud_dev_opts *d, const char *key, const char *val, char *err,
		   size_t errlen)
{
	uint64_t v;
	int rc;

	if (strcmp(key, "path") == 0) {
		if (*val == '\0')
			return dev_bad(err, errlen, key, val, "empty socket path");
		if (strlen(val) >= 108)
			return dev_bad(err, errlen, key, val,
				       "longer than a unix socket path (107)");
		d->path = val;
	} else if (strcmp(key, "devsz_mb") == 0) {
		rc = dev_uint(key, val, 1, 1ull << 24, &v, err, errlen);
		d->devsz_mb = v;
		d->devsz_set = true;
		return rc;
	} else if (strcmp(key, "femu_mode") == 0) {
		rc = dev_uint(key, val, 0, 3, &v, err, errlen);
		d->femu_mode = (int)v;
		return rc;
	} else if (strcmp(key, "queues") == 0) {
		rc = dev_uint(key, val, 1, FEMUD_MAX_QUEUES, &v, err, errlen);
		d->queues = (unsigned)v;
		return rc;
	} else if (strcmp(key, "secsz") == 0) {
		if (num_u64(val, &v) != 0 || (v != 512 && v != 4096))
			return dev_bad(err, errlen, key, val, "expected 512 or 4096");
		d->secsz = (uint32_t)v;
	} else if (strcmp(key, "serial") == 0) {
		if (strlen(val) > FEMUD_SERIAL_LEN)
			return dev_bad(err, errlen, key, val, "longer than 20 bytes");
		snprintf(d->serial, sizeof(d->serial), "%s", val);
	} else if (strcmp(key, "readonly") == 0) {
		rc = dev_uint(key, val, 0, 1, &v, err, errlen);
		d->readonly = v != 0;
		return rc;
	} else if (strcmp(key, "mem_path") == 0) {
		if (*val == '\0' || strlen(val) >= 4096)
			return dev_bad(err, errlen, key, val, "expected a file path");
		d->mem_path = val;
	} else if (strcmp(key, "image") == 0) {
		if (*val == '\0' || strlen(val) >= 4000)
			return dev_bad(err, errlen, key, val, "expected a file path");
		d->image = val;
	} else if (strcmp(key, "image_save") == 0) {
		rc = dev_uint(key, val, 0, 1, &v, err, errlen);
		d->image_save = v != 0;
		return rc;
	} else if (strcmp(key, "format") == 0) {
		rc = dev_uint(key, val, 0, 1, &v, err, errlen);
		d->format = v != 0;
		return rc;
	} else if (strcmp(key, "sock_mode") == 0) {
		if (num_parse(val, NUM_OCTAL, 0, 0777, &v) != 0)
			return dev_bad(err, errlen, key, val,
				       "expected octal permission bits, e.g. 0660");
		d->sock_mode = (unsigned)v;
	} else if (strcmp(key, "sock_owner") == 0) {
		return femud_access_parse_owner(&d->access, val, err, errlen);
	} else if (strcmp(key, "allow_uid") == 0) {
		return femud_access_parse_allow(&d->access, val, err, errlen);
	} else {
		return 1;
	}
	return 0;
}

static int dev_keep_for_model(struct femud_dev_opts *d, const char *key, const char *val, char *err,
			      size_t errlen)
{
	for (unsigned i = 0; i < d->nkv; i++)
		if (strcmp(d->kv[i].key, key) == 0)
			return dev_bad(err, errlen, key, val, "key given twice");
	if (d->nkv == FEMUD_MAX_KV) {
		snprintf(err, errlen, "--dev: more than %d keys", FEMUD_MAX_KV);
		return -EINVAL;
	}
	d->kv[d->nkv].key = key;
	d->kv[d->nkv].val = val;
	d->nkv++;
	return 0;
}

/* Split "k=v,k=v" in place and apply each pair. */
static int dev_split(struct femud_dev_opts *d, char *s, char *err, size_t errlen)
{
	char *save = NULL;

	for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int rc;

		if (eq == NULL || eq == tok) {
			snprintf(err, errlen, "--dev: '%s' is not key=value", tok);
			return -EINVAL;
		}
		*eq = '\0';
		rc = dev_key(d, tok, eq + 1, err, errlen);
		if (rc == 1)
			rc = dev_keep_for_model(d, tok, eq + 1, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int dev_configure_model(struct femud_dev_opts *d, char *err, size_t errlen)
{
	char merr[200] = "";
	char mode[16];
	int rc;

	snprintf(mode, sizeof(mode), "%d", d->femu_mode);
	d->ops = fm_model_find(d->femu_mode);
	if (d->ops == NULL)
		return dev_bad(err, errlen, "femu_mode", mode,
			       "not supported yet (supported: 2 = NoSSD, 1 = BlackBox SSD)");
	memset(&d->mcfg, 0, sizeof(d->mcfg));
	d->mcfg.capacity_set = d->devsz_set || d->femu_mode == 2;
	d->mcfg.capacity_bytes = d->devsz_mb * MB;
	d->mcfg.blk_size = d->secsz;
	d->mcfg.mbe_node = -1;
	d->mcfg.kv = d->kv;
	d->mcfg.nkv = d->nkv;
	rc = d->ops->configure(&d->mcfg, merr, sizeof(merr));
	if (rc != 0) {
		snprintf(err, errlen, "--dev path=%s: %s", d->path, merr);
		return -EINVAL;
	}
	if (d->mcfg.capacity_bytes == 0 || d->mcfg.capacity_bytes % d->secsz != 0) {
		snprintf(mode, sizeof(mode), "%u", d->secsz);
		return dev_bad(err, errlen, "secsz", mode,
			       "the device size is not a multiple of the block size");
	}
	return 0;
}

int femud_dev_parse(const char *arg, struct femud_dev_opts *d, char *err, size_t errlen)
{
	int rc;

	memset(d, 0, sizeof(*d));
	dev_defaults(d);
	d->spec = strdup(arg);
	if (d->spec == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = dev_split(d, d->spec, err, errlen);
	if (rc != 0)
		return rc;
	if (d->path == NULL) {
		snprintf(err, errlen, "--dev '%s': the key 'path' (socket path) is required", arg);
		return -EINVAL;
	}
	if (d->image_save && d->image == NULL)
		return dev_bad(err, errlen, "image_save", "1", "only with image=FILE");
	if (d->format && d->mem_path == NULL)
		return dev_bad(err, errlen, "format", "1", "only with mem_path=FILE");
	return dev_configure_model(d, err, errlen);
}

void femud_dev_opts_free(struct femud_dev_opts *d)
{
	if (d->ops != NULL && d->ops->release != NULL)
		d->ops->release(&d->mcfg); /* the model's parameters, never created */
	free(d->spec);
	d->spec = NULL;
}

void femud_opts_free(struct femud_opts *o)
{
	for (unsigned i = 0; i < o->ndevs; i++)
		femud_dev_opts_free(&o->devs[i]);
	o->ndevs = 0;
}

int femud_opts_check_paths(const struct femud_opts *o, char *err, size_t errlen)
{
	for (unsigned i = 0; i < o->ndevs; i++)
		for (unsigned j = i + 1; j < o->ndevs; j++)
			if (strcmp(o->devs[i].path, o->devs[j].path) == 0) {
				snprintf(err, errlen, "--dev: socket path '%s' is given twice",
					 o->devs[i].path);
				return -EINVAL;
			} else if (o->devs[i].mem_path && o->devs[j].mem_path &&
				   strcmp(o->devs[i].mem_path, o->devs[j].mem_path) == 0) {
				snprintf(err, errlen,
					 "--dev: mem_path '%s' is given to two devices",
					 o->devs[i].mem_path);
				return -EINVAL;
			}
	return 0;
}

enum {
	OPT_DRY_RUN = 256,
	OPT_NO_HUGE,
	OPT_QEMU_PID,
	OPT_LOG_LEVEL,
	OPT_MBE_NODE,
	OPT_RPC,
	OPT_CONFIG,
	OPT_POLL_MODE,
	OPT_IDLE_US
};

static const struct option opts_long[] = {
    {"lcores", required_argument, NULL, 'l'},
    {"mbe-node", required_argument, NULL, OPT_MBE_NODE},
    {"dev", required_argument, NULL, 'd'},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"no-huge", no_argument, NULL, OPT_NO_HUGE},
    {"qemu-pid", required_argument, NULL, OPT_QEMU_PID},
    {"rpc", required_argument, NULL, OPT_RPC},
    {"config", required_argument, NULL, OPT_CONFIG},
    {"poll-mode", required_argument, NULL, OPT_POLL_MODE},
    {"idle-us", required_argument, NULL, OPT_IDLE_US},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* A DPDK log level: a name or 1-8, optionally after "pattern:" (e.g. lib.vhost.*:debug). */
static bool opts_log_level_ok(const char *s)
{
	static const char *const names[] = {"emergency", "alert",  "critical", "error",
					    "warning",	 "notice", "info",     "debug"};
	const char *lvl = strrchr(s, ':');
	uint64_t v;

	lvl = lvl ? lvl + 1 : s;
	if (num_u64(lvl, &v) == 0)
		return v >= 1 && v <= 8;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(lvl, names[i]) == 0)
			return true;
	return false;
}

static int opts_one(struct femud_opts *o, int c, char *err, size_t errlen)
{
	uint64_t v;

	switch (c) {
	case 'l':
		o->lcores = optarg;
		return 0;
	case OPT_MBE_NODE:
		if (num_parse(optarg, 0, 0, 1023, &v) != 0) {
			snprintf(err, errlen, "--mbe-node: '%s' is not a NUMA node number", optarg);
			return -EINVAL;
		}
		o->mbe_node = (int)v;
		return 0;
	case 'd':
		if (o->ndevs == FEMUD_MAX_DEVS) {
			snprintf(err, errlen, "--dev: more than %d devices", FEMUD_MAX_DEVS);
			return -EINVAL;
		}
		o->ndevs++;
		return femud_dev_parse(optarg, &o->devs[o->ndevs - 1], err, errlen);
	case OPT_LOG_LEVEL:
		if (!opts_log_level_ok(optarg)) {
			snprintf(
			    err, errlen,
			    "--log-level: '%s' is not a level (emergency, alert, critical, error, "
			    "warning, notice, info, debug or 1-8, optionally after 'pattern:')",
			    optarg);
			return -EINVAL;
		}
		o->log_level = optarg;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = true;
		return 0;
	case OPT_NO_HUGE:
		o->no_huge = true;
		return 0;
	case OPT_QEMU_PID:
		if (num_parse(optarg, 0, 1, INT_MAX, &v) != 0) {
			snprintf(err, errlen, "--qemu-pid: '%s' is not a process id", optarg);
			return -EINVAL;
		}
		o->qemu_pid = (pid_t)v;
		return 0;
	case OPT_RPC:
		if (*optarg == '\0' || strlen(optarg) >= 108) {
			snprintf(err, errlen,
				 "--rpc: '%s' is not a socket path (1-107 bytes) or 'none'",
				 optarg);
			return -EINVAL;
		}
		o->rpc = optarg;
		o->rpc_set = true;
		return 0;
	case OPT_CONFIG:
		o->config = optarg;
		return 0;
	case OPT_POLL_MODE:
		o->adaptive_set = true;
		return femud_opts_parse_poll_mode(o, optarg, "--poll-mode", err, errlen);
	case OPT_IDLE_US:
		o->idle_us_set = true;
		return femud_opts_parse_idle_us(o, optarg, "--idle-us", err, errlen);
	case 'h':
		o->help = true;
		return 0;
	case 'V':
		o->version = true;
		return 0;
	default:
		snprintf(err, errlen, "unknown option (see femud --help)");
		return -EINVAL;
	}
}

void femud_opts_poll_mode(const struct femud_opts *o, unsigned i, bool *adaptive, uint64_t *idle_us)
{
	/* n == 0: an options struct that femud_opts_parse() did not fill */
	*adaptive = o->nadaptive == 0 ? FEMUD_DEFAULT_ADAPTIVE
				      : o->adaptive[i < o->nadaptive ? i : o->nadaptive - 1];
	*idle_us = o->nidle_us == 0 ? FEMUD_DEFAULT_IDLE_US
				    : o->idle_us[i < o->nidle_us ? i : o->nidle_us - 1];
}

/*
 * Split a comma-separated list into at most FEMUD_MAX_POLL_OPTS items and
 * call one(vals, i, item) for each: the count, or -EINVAL (err written).
 */
static int poll_list_each(const char *list, const char *opt, void *vals,
			  int (*one)(void *vals, unsigned i, const char *item), const char *what,
			  char *err, size_t errlen)
{
	char buf[1024], *save = NULL, *item;
	unsigned n = 0;

	if (*list == '\0' || snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf) ||
	    list[strlen(list) - 1] == ',' || list[0] == ',' || strstr(list, ",,") != NULL) {
		snprintf(err, errlen, "%s: '%s' is not a comma-separated list of %s", opt, list,
			 what);
		return -EINVAL;
	}
	for (item = strtok_r(buf, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		if (n == FEMUD_MAX_POLL_OPTS) {
			snprintf(err, errlen, "%s: more than %d values", opt, FEMUD_MAX_POLL_OPTS);
			return -EINVAL;
		}
		if (one(vals, n, item) != 0) {
			snprintf(err, errlen, "%s: '%s' is not %s", opt, item, what);
			return -EINVAL;
		}
		n++;
	}
	return (int)n;
}

static int poll_mode_one(void *vals, unsigned i, const char *item)
{
	if (strcmp(item, "busy") != 0 && strcmp(item, "adaptive") != 0)
		return -EINVAL;
	((bool *)vals)[i] = strcmp(item, "adaptive") == 0;
	return 0;
}

static int idle_us_one(void *vals, unsigned i, const char *item)
{
	return num_parse(item, 0, 0, FEMUD_MAX_IDLE_US, &((uint64_t *)vals)[i]) != 0 ? -EINVAL : 0;
}

int femud_opts_parse_poll_mode(struct femud_opts *o, const char *list, const char *opt, char *err,
			       size_t errlen)
{
	bool vals[FEMUD_MAX_POLL_OPTS];
	int n = poll_list_each(list, opt, vals, poll_mode_one, "busy or adaptive", err, errlen);

	if (n < 0)
		return n;
	memcpy(o->adaptive, vals, (size_t)n * sizeof(vals[0]));
	o->nadaptive = (unsigned)n;
	return 0;
}

int femud_opts_parse_idle_us(struct femud_opts *o, const char *list, const char *opt, char *err,
			     size_t errlen)
{
	uint64_t vals[FEMUD_MAX_POLL_OPTS];
	char what[64];
	int n;

	snprintf(what, sizeof(what), "a number of us from 0 to %d", FEMUD_MAX_IDLE_US);
	n = poll_list_each(list, opt, vals, idle_us_one, what, err, errlen);
	if (n < 0)
		return n;
	memcpy(o->idle_us, vals, (size_t)n * sizeof(vals[0]));
	o->nidle_us = (unsigned)n;
	return 0;
}

int femud_opts_parse(int argc, char **argv, struct femud_opts *o, char *err, size_t errlen)
{
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->mbe_node = -1;
	o->adaptive[0] = FEMUD_DEFAULT_ADAPTIVE;
	o->nadaptive = 1;
	o->idle_us[0] = FEMUD_DEFAULT_IDLE_US;
	o->nidle_us = 1;
	/*
	 * 0, not 1: glibc then forgets the position inside a previous argv's
	 * grouped short options (a second parse would read freed strings).
	 */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "l:d:hV", opts_long, NULL)) != -1) {
		if (c == '?' || c == ':') {
			snprintf(err, errlen,
				 "unknown option or missing value: '%s' (see femud --help)",
				 argv[optind - 1]);
			return -EINVAL;
		}
		rc = opts_one(o, c, err, errlen);
		if (rc != 0)
			return rc;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see femud --help)", argv[optind]);
		return -EINVAL;
	}
	if (o->help || o->version)
		return 0;
	if (o->ndevs == 0 && !o->rpc_set && o->config == NULL) {
		snprintf(err, errlen,
			 "--dev: at least one device is required, or --rpc SOCK to start empty "
			 "(see femud --help)");
		return -EINVAL;
	}
	return femud_opts_check_paths(o, err, errlen);
}

const char *femud_opts_rpc_path(const struct femud_opts *o)
{
	if (o->rpc == NULL)
		return FEMUD_RPC_DEFAULT;
	return strcmp(o->rpc, "none") == 0 ? NULL : o->rpc;
}

void femud_opts_usage(FILE *out)
{
	fprintf(
	    out,
	    "Usage: femud [--lcores LIST] [--mbe-node N] [--rpc PATH|none] [--config FILE]\n"
	    "             --dev path=SOCK[,key=value...] [--dev ...]\n"
	    "\n"
	    "Options:\n"
	    "  --lcores LIST    DPDK lcore list (2-3, 0@2,1@3, auto). The first lcore is the main\n"
	    "                   (control) lcore; every further lcore runs one poller. With one\n"
	    "                   lcore the main lcore polls. Default: one lcore on the last CPU\n"
	    "                   this process may use.\n"
	    "  --mbe-node N     NUMA node of every device's backend memory (default: the node of\n"
	    "                   the first poller)\n"
	    "  --dev SPEC       one vhost-user-blk device (repeat for more), FEMU-style keys:\n"
	    "      path=SOCK          unix socket to listen on (required)\n"
	    "      devsz_mb=N         capacity in MiB (default 1024; BlackBox: derived from NAND\n"
	    "                         geometry when op_pcent is given)\n"
	    "      femu_mode=M        2 = NoSSD (default), 1 = BlackBox SSD\n"
	    "      queues=N           virtqueues offered (default 8, max 64)\n"
	    "      secsz=512|4096     logical block size in bytes (default 512)\n"
	    "      serial=STR         GET_ID string, at most 20 bytes (default femud)\n"
	    "      readonly=0|1       read-only device (default 0)\n"
	    "      sock_mode=0600     socket permission bits (octal, default 0600)\n"
	    "      sock_owner=USER[:GROUP]  owner (and group) of the socket, e.g. for a QEMU\n"
	    "                         running as another user with sock_mode=0660\n"
	    "      allow_uid=UID[:UID..]  only these peer uids (numbers or user names) may\n"
	    "                         connect; others are closed with a log line\n"
	    "      mem_path=FILE      keep the data (and BlackBox state) in FILE, mapped shared:\n"
	    "                         made on first use, reused after a restart or a crash\n"
	    "                         (hugetlbfs, tmpfs or any file system)\n"
	    "      format=0|1         1: make the mem_path medium anew (erases it)\n"
	    "      image=FILE         load the device (data and model state) from FILE at start\n"
	    "                         when it exists; SIGUSR2 saves it there (io_uring, sparse,\n"
	    "                         checksummed, written aside and renamed)\n"
	    "      image_save=0|1     1: also save the image at a clean stop\n"
	    "      BlackBox keys: nchs luns_per_ch pls_per_lun blks_per_pl pgs_per_blk\n"
	    "                     secs_per_pg op_pcent gc_thres_pcent gc_thres_pcent_high\n"
	    "                     pg_rd_lat pg_wr_lat blk_er_lat nand_cell_type pg_xfer_lat\n"
	    "                     pcie_bandwidth_mbps pcie_prop_delay_ns fw_cpu_ns (ns, FEMU's\n"
	    "                     names and defaults)\n"
	    "  --rpc PATH       JSON-RPC control socket (default " FEMUD_RPC_DEFAULT
	    ", mode 0600;\n"
	    "                   'none': no control socket). See femuctl. With --rpc and no --dev\n"
	    "                   femud starts empty and waits for devices.\n"
	    "  --config FILE    start the devices of a file written by 'femuctl save-config'\n"
	    "                   (combines with --dev)\n"
	    "  --poll-mode M[,M..]  busy: pollers spin all the time (the model's exact timing);\n"
	    "                   adaptive: a poller idle for --idle-us sleeps until a guest kick,\n"
	    "                   a control message or a pending completion wakes it (default %s).\n"
	    "                   One value per poller in lcore order, the last for the rest;\n"
	    "                   femuctl poll-mode changes it at runtime\n"
	    "  --idle-us N[,N..]  idle time before an adaptive poller sleeps, us (default %d;\n"
	    "                   a list: per poller, as --poll-mode)\n"
	    "  --log-level L    DPDK/femud log level (error, warning, notice, info, debug)\n"
	    "  --no-huge        never use hugepages (backend and EAL on normal pages)\n"
	    "  --qemu-pid PID   QEMU process to check poller placement against\n"
	    "  --dry-run        check every option, print the plan and exit\n"
	    "  --help           this text\n"
	    "  --version        print the version\n"
	    "\n"
	    "Exit status: 0 on a clean stop (SIGINT/SIGTERM), 2 for bad options, 1 for other "
	    "errors.\n",
	    FEMUD_DEFAULT_ADAPTIVE ? "adaptive" : "busy", FEMUD_DEFAULT_IDLE_US);
}
