/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.c - writing and reading femud's configuration file (see config.h).
 */
#include <errno.h>
#include <string.h>

#include "daemon/config.h"

/* "key=value" of one member, appended to spec; -EINVAL for a bad member. */
static int spec_append(char *spec, size_t len, const char *key, json_t *v, char *err, size_t errlen)
{
	char val[256];
	size_t used = strlen(spec);

	if (json_is_string(v))
		snprintf(val, sizeof(val), "%s", json_string_value(v));
	else if (json_is_integer(v) && json_integer_value(v) >= 0)
		snprintf(val, sizeof(val), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else {
		snprintf(err, errlen, "device key '%s': value must be a string or an integer >= 0",
			 key);
		return -EINVAL;
	}
	if (strpbrk(key, ",=") != NULL || strchr(val, ',') != NULL || *key == '\0') {
		snprintf(err, errlen,
			 "device key '%s': ',' and '=' cannot be part of a key or value", key);
		return -EINVAL;
	}
	if (snprintf(spec + used, len - used, "%s%s=%s", used ? "," : "", key, val) >=
	    (int)(len - used)) {
		snprintf(err, errlen, "device key '%s': the device's keys are too long", key);
		return -EINVAL;
	}
	return 0;
}

int femud_config_dev_spec(json_t *dev, char *spec, size_t len, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	spec[0] = '\0';
	if (!json_is_object(dev)) {
		snprintf(err, errlen, "a device must be an object of --dev keys");
		return -EINVAL;
	}
	json_object_foreach(dev, key, v)
	{
		int rc = spec_append(spec, len, key, v, err, errlen);

		if (rc != 0)
			return rc;
	}
	return 0;
}

static int config_devices(const char *file, json_t *root, json_t **devs, char *err, size_t errlen)
{
	json_t *ver = json_object_get(root, "femud_config");

	if (!json_is_object(root) || !json_is_integer(ver) ||
	    json_integer_value(ver) != FEMUD_CONFIG_VERSION) {
		snprintf(err, errlen,
			 "--config %s: not a femud configuration (\"femud_config\": %d)", file,
			 FEMUD_CONFIG_VERSION);
		return -EINVAL;
	}
	*devs = json_object_get(root, "devices");
	if (!json_is_array(*devs)) {
		snprintf(err, errlen, "--config %s: \"devices\" must be an array", file);
		return -EINVAL;
	}
	return 0;
}

/* Append one poller's member to a list "v1,v2,...": 0, or -EINVAL (err). */
static int poller_value(json_t *p, size_t i, const char *key, char *list, size_t len, char *err,
			size_t errlen)
{
	json_t *v = json_object_get(p, key);
	size_t at = strlen(list);
	int n;

	if (json_is_string(v))
		n = snprintf(list + at, len - at, "%s%s", at ? "," : "", json_string_value(v));
	else if (json_is_integer(v) && json_integer_value(v) >= 0)
		n = snprintf(list + at, len - at, "%s%" JSON_INTEGER_FORMAT, at ? "," : "",
			     json_integer_value(v));
	else {
		snprintf(err, errlen, "poller %zu: \"%s\" must be a string or a number", i, key);
		return -EINVAL;
	}
	if (n < 0 || (size_t)n >= len - at) {
		snprintf(err, errlen, "poller %zu: too many pollers", i);
		return -EINVAL;
	}
	return 0;
}

/*
 * "pollers": [{"poll_mode": "adaptive", "idle_us": 50}, ...] (optional):
 * into o where the command line gave no --poll-mode / --idle-us.
 */
static int config_pollers(const char *file, json_t *root, struct femud_opts *o, char *err,
			  size_t errlen)
{
	json_t *ps = json_object_get(root, "pollers"), *p;
	char modes[1024] = "", idle[2048] = "", why[300], opt[300];
	size_t i;
	int rc = 0;

	if (ps == NULL)
		return 0;
	if (!json_is_array(ps) || json_array_size(ps) == 0) {
		snprintf(err, errlen, "--config %s: \"pollers\" must be a non-empty array", file);
		return -EINVAL;
	}
	json_array_foreach(ps, i, p)
	{
		if (!json_is_object(p) || json_object_size(p) != 2) {
			snprintf(
			    err, errlen,
			    "--config %s: poller %zu must be {\"poll_mode\": .., \"idle_us\": ..}",
			    file, i);
			return -EINVAL;
		}
		if (poller_value(p, i, "poll_mode", modes, sizeof(modes), why, sizeof(why)) != 0 ||
		    poller_value(p, i, "idle_us", idle, sizeof(idle), why, sizeof(why)) != 0) {
			snprintf(err, errlen, "--config %s: %s", file, why);
			return -EINVAL;
		}
	}
	snprintf(opt, sizeof(opt), "--config %s: pollers: poll_mode", file);
	if (!o->adaptive_set)
		rc = femud_opts_parse_poll_mode(o, modes, opt, err, errlen);
	snprintf(opt, sizeof(opt), "--config %s: pollers: idle_us", file);
	if (rc == 0 && !o->idle_us_set)
		rc = femud_opts_parse_idle_us(o, idle, opt, err, errlen);
	return rc;
}

int femud_config_load(const char *file, struct femud_opts *o, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &je), *devs, *dev;
	char spec[4096], why[400];
	size_t i;
	int rc;

	if (root == NULL) {
		snprintf(err, errlen, "--config %s: line %d: %s", file, je.line, je.text);
		return -EINVAL;
	}
	rc = config_devices(file, root, &devs, err, errlen);
	if (rc == 0)
		rc = config_pollers(file, root, o, err, errlen);
	json_array_foreach(devs, i, dev)
	{
		if (rc != 0)
			break;
		if (o->ndevs == FEMUD_MAX_DEVS) {
			snprintf(err, errlen, "--config %s: more than %d devices", file,
				 FEMUD_MAX_DEVS);
			rc = -EINVAL;
			break;
		}
		rc = femud_config_dev_spec(dev, spec, sizeof(spec), why, sizeof(why));
		if (rc == 0) {
			o->ndevs++;
			rc = femud_dev_parse(spec, &o->devs[o->ndevs - 1], why, sizeof(why));
		}
		if (rc != 0)
			snprintf(err, errlen, "--config %s: device %zu: %s", file, i, why);
	}
	json_decref(root);
	return rc;
}
