/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_options.c - libFuzzer target: femud's command-line parser
 * (daemon/options.c) and, through it, every model's configure() with its
 * keys (NoSSD, BlackBox SSD parameters and derived geometry).
 *
 * Input: NUL-separated strings.  The first is parsed as one --dev argument
 * (femud_dev_parse); all of them together are parsed as femud's argv after
 * the program name (femud_opts_parse).  Whatever is accepted must describe a
 * device femud can create: a socket path, 1..64 queues, a block size of 512
 * or 4096 and a capacity that is a positive multiple of it.
 */
#include "daemon/options.h"
#include "fuzz_util.h"

#define MAX_ARGS 64

static void check_dev(const struct femud_dev_opts *d)
{
	FZ_CHECK(d->path != NULL && d->path[0] != '\0', "accepted without a path");
	FZ_CHECK(d->ops != NULL, "accepted without a model");
	FZ_CHECK(d->queues >= 1 && d->queues <= FEMUD_MAX_QUEUES, "queues %u", d->queues);
	FZ_CHECK(d->secsz == 512 || d->secsz == 4096, "secsz %u", d->secsz);
	FZ_CHECK(d->mcfg.capacity_bytes > 0 && d->mcfg.capacity_bytes % d->secsz == 0,
		 "capacity %llu with secsz %u", (unsigned long long)d->mcfg.capacity_bytes,
		 d->secsz);
	FZ_CHECK(strlen(d->serial) <= FEMUD_SERIAL_LEN, "serial of %zu bytes", strlen(d->serial));
	FZ_CHECK(d->sock_mode <= 0777, "sock_mode %o", d->sock_mode);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct femud_opts o;
	struct femud_dev_opts d;
	char *argv[MAX_ARGS + 2];
	char err[512] = "";
	char *buf;
	int argc = 1, rc;

	buf = malloc(size + 1);
	memcpy(buf, data, size);
	buf[size] = '\0';

	rc = femud_dev_parse(buf, &d, err, sizeof(err));
	if (rc == 0)
		check_dev(&d);
	else
		FZ_CHECK(err[0] != '\0', "rejected (%d) without a message", rc);
	if (d.ops != NULL && d.ops->release != NULL)
		d.ops->release(&d.mcfg);
	free(d.spec);

	argv[0] = "femud";
	for (size_t i = 0; i < size && argc <= MAX_ARGS; i++) {
		if (i == 0 || buf[i - 1] == '\0')
			argv[argc++] = &buf[i];
	}
	argv[argc] = NULL;
	err[0] = '\0';
	rc = femud_opts_parse(argc, argv, &o, err, sizeof(err));
	if (rc == 0 && !o.help && !o.version) {
		/* no device only for a daemon that starts empty (--rpc) or from --config */
		FZ_CHECK(o.ndevs >= 1 || o.rpc_set || o.config != NULL,
			 "accepted without a device");
		for (unsigned i = 0; i < o.ndevs; i++)
			check_dev(&o.devs[i]);
	} else if (rc != 0) {
		FZ_CHECK(err[0] != '\0', "rejected (%d) without a message", rc);
	}
	femud_opts_free(&o);
	free(buf);
	return 0;
}
