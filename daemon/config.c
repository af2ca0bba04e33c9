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
