/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.h - femud's configuration file: what `femuctl save-config` writes
 * (the running devices, runtime changes included) and `femud --config FILE`
 * starts from.  Format (JSON):
 *   {"femud_config": 1,
 *    "devices": [{"path": "/run/vm1.sock", "devsz_mb": "1024", ...}, ...],
 *    "pollers": [{"poll_mode": "adaptive", "idle_us": 50}, ...]}
 * Each device object holds --dev keys; values are strings or integers.
 * "pollers" (optional) holds each poller's poll mode in lcore order, as
 * --poll-mode / --idle-us lists; the command line's options win.
 * A device is built as the --dev spec "key=value,..." and parsed by the
 * same parser, so it takes the same keys and gets the same errors.
 */
#ifndef FEMUD_CONFIG_H
#define FEMUD_CONFIG_H

#include <stddef.h>

#include <jansson.h>

#include "daemon/options.h"

#define FEMUD_CONFIG_VERSION 1

/*
 * The --dev spec of one device object of a config file into spec[len]:
 * 0, or -EINVAL with a message naming the member.
 */
int femud_config_dev_spec(json_t *dev, char *spec, size_t len, char *err, size_t errlen);

/*
 * Append the devices of a config file to o->devs (parsed as --dev would
 * be) and take its pollers' modes where the command line gave none.  -EINVAL with a message naming
 * the file and what is wrong.
 */
int femud_config_load(const char *file, struct femud_opts *o, char *err, size_t errlen);

#endif /* FEMUD_CONFIG_H */
