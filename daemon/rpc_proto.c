/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rpc_proto.c - the JSON-RPC 2.0 envelope (see rpc.h): splitting requests
 * off a byte stream, checking them, dispatching to a method table, building
 * responses, and the parameter helpers methods use.  No I/O here.
 */
#include <string.h>

#include "daemon/rpc.h"

static void rpc_err(struct femud_rpc_error *e, int code, const char *fmt, const char *a,
		    const char *b)
{
	e->code = code;
	snprintf(e->msg, sizeof(e->msg), fmt, a, b);
}

int femud_rpc_next(const char *buf, size_t len, json_t **req, size_t *used,
		   struct femud_rpc_error *e)
{
	size_t ws = 0;
	json_error_t je;
	json_t *j;

	while (ws < len && strchr(" \t\r\n", buf[ws]) != NULL && buf[ws] != '\0')
		ws++;
	*used = ws;
	*req = NULL;
	if (ws == len)
		return 0;
	j = json_loadb(buf + ws, len - ws, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &je);
	if (j != NULL) {
		*req = j;
		*used = ws + (size_t)je.position;
		return 1;
	}
	/* cut short, possibly inside a token: wait for more */
	if (json_error_code(&je) == json_error_premature_end_of_input ||
	    (size_t)je.position >= len - ws)
		return 0;
	rpc_err(e, FEMUD_RPC_PARSE_ERROR, "parse error: %s%s", je.text, "");
	return -1;
}

json_t *femud_rpc_error_response(json_t *id, int code, const char *msg)
{
	return json_pack("{s:s, s:{s:i, s:s}, s:O}", "jsonrpc", "2.0", "error", "code", code,
			 "message", msg, "id", id != NULL ? id : json_null());
}

static int envelope_check(json_t *req, json_t **id, const char **method, json_t **params,
			  struct femud_rpc_error *e)
{
	json_t *v;

	*id = NULL;
	if (json_is_array(req)) {
		rpc_err(e, FEMUD_RPC_INVALID_REQUEST,
			"invalid request: batches are not supported%s%s", "", "");
		return -1;
	}
	if (!json_is_object(req)) {
		rpc_err(e, FEMUD_RPC_INVALID_REQUEST, "invalid request: not an object%s%s", "", "");
		return -1;
	}
	v = json_object_get(req, "id");
	if (v != NULL && !json_is_string(v) && !json_is_integer(v) && !json_is_null(v)) {
		rpc_err(e, FEMUD_RPC_INVALID_REQUEST,
			"invalid request: 'id' must be a string, an integer or null%s%s", "", "");
		return -1;
	}
	*id = v;
	v = json_object_get(req, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0) {
		rpc_err(e, FEMUD_RPC_INVALID_REQUEST,
			"invalid request: 'jsonrpc' must be \"2.0\"%s%s", "", "");
		return -1;
	}
	v = json_object_get(req, "method");
	if (!json_is_string(v)) {
		rpc_err(e, FEMUD_RPC_INVALID_REQUEST,
			"invalid request: 'method' must be a string%s%s", "", "");
		return -1;
	}
	*method = json_string_value(v);
	*params = json_object_get(req, "params");
	if (*params != NULL && !json_is_object(*params)) {
		rpc_err(e, FEMUD_RPC_INVALID_PARAMS,
			"invalid params: 'params' must be an object (named parameters)%s%s", "",
			"");
		return -1;
	}
	return 0;
}

json_t *femud_rpc_handle(const struct femud_rpc_method *table, void *ctx, json_t *req)
{
	struct femud_rpc_error e = {0, ""};
	const char *method = NULL;
	json_t *id, *params, *result = NULL, *empty = NULL;
	const struct femud_rpc_method *m = NULL;

	if (envelope_check(req, &id, &method, &params, &e) == 0) {
		for (m = table; m->name != NULL && strcmp(m->name, method) != 0; m++)
			;
		if (m->name == NULL)
			rpc_err(&e, FEMUD_RPC_METHOD_NOT_FOUND, "method '%s' not found%s", method,
				"");
		else {
			if (params == NULL)
				params = empty = json_object();
			result = m->fn(ctx, params, &e);
			json_decref(empty);
		}
	}
	if (id == NULL && json_is_object(req) && e.code != FEMUD_RPC_INVALID_REQUEST) {
		json_decref(result); /* a notification: no response */
		return NULL;
	}
	if (result == NULL)
		return femud_rpc_error_response(id, e.code ? e.code : FEMUD_RPC_INTERNAL_ERROR,
						e.msg[0] ? e.msg : "internal error");
	return json_pack("{s:s, s:o, s:O}", "jsonrpc", "2.0", "result", result, "id", id);
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

int femud_rpc_param_str(json_t *params, const char *key, bool required, const char **out,
			struct femud_rpc_error *e)
{
	json_t *v = json_object_get(params, key);

	if (v == NULL) {
		if (!required)
			return 0;
		rpc_err(e, FEMUD_RPC_INVALID_PARAMS, "invalid params: '%s' is required%s", key, "");
		return -1;
	}
	if (!json_is_string(v)) {
		rpc_err(e, FEMUD_RPC_INVALID_PARAMS,
			"invalid params: '%s' must be a string, not %s", key, type_name(v));
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

int femud_rpc_param_bool(json_t *params, const char *key, bool *out, struct femud_rpc_error *e)
{
	json_t *v = json_object_get(params, key);

	if (v == NULL)
		return 0;
	if (!json_is_boolean(v)) {
		rpc_err(e, FEMUD_RPC_INVALID_PARAMS,
			"invalid params: '%s' must be a boolean, not %s", key, type_name(v));
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

int femud_rpc_params_only(json_t *params, const char *const *keys, struct femud_rpc_error *e)
{
	const char *key;
	json_t *v;

	json_object_foreach(params, key, v)
	{
		unsigned i;

		for (i = 0; keys[i] != NULL && strcmp(keys[i], key) != 0; i++)
			;
		if (keys[i] == NULL) {
			rpc_err(e, FEMUD_RPC_INVALID_PARAMS,
				"invalid params: unknown parameter '%s'%s", key, "");
			return -1;
		}
	}
	return 0;
}
