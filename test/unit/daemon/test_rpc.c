/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_rpc.c - the JSON-RPC envelope (daemon/rpc_proto.c): splitting
 * requests off a stream, every envelope error with its code, notifications,
 * dispatch, and the parameter helpers' errors.  A fake method table stands
 * in for femud's methods.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "daemon/rpc.h"

static int calls;

/* echo {"x": string}: returns {"x": x}; "boom" fails with BAD_OPTION. */
static json_t *m_echo(void *ctx, json_t *params, struct femud_rpc_error *e)
{
	static const char *const keys[] = {"x", "flag", NULL};
	const char *x = NULL;
	bool flag = false;

	(void)ctx;
	calls++;
	if (femud_rpc_params_only(params, keys, e) ||
	    femud_rpc_param_str(params, "x", true, &x, e) ||
	    femud_rpc_param_bool(params, "flag", &flag, e))
		return NULL;
	if (strcmp(x, "boom") == 0) {
		e->code = FEMUD_RPC_BAD_OPTION;
		snprintf(e->msg, sizeof(e->msg), "x=boom: out of range");
		return NULL;
	}
	return json_pack("{s:s, s:b}", "x", x, "flag", flag);
}

static const struct femud_rpc_method table[] = {
    {"echo", m_echo, "test"},
    {NULL, NULL, NULL},
};

/* Handle one request text; returns the response (or NULL). */
static json_t *handle(const char *text)
{
	struct femud_rpc_error e;
	json_t *req, *resp;
	size_t used;

	cr_assert_eq(femud_rpc_next(text, strlen(text), &req, &used, &e), 1, "%s", text);
	resp = femud_rpc_handle(table, NULL, req);
	json_decref(req);
	return resp;
}

static int error_code(json_t *resp)
{
	return (int)json_integer_value(json_object_get(json_object_get(resp, "error"), "code"));
}

static const char *error_msg(json_t *resp)
{
	return json_string_value(json_object_get(json_object_get(resp, "error"), "message"));
}

Test(rpc, a_request_gets_its_result_and_id)
{
	json_t *r =
	    handle("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\",\"params\":{\"x\":\"hi\"}}");

	cr_assert_not_null(r);
	cr_assert_eq(json_integer_value(json_object_get(r, "id")), 7);
	cr_assert_str_eq(json_string_value(json_object_get(r, "jsonrpc")), "2.0");
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "result"), "x")),
			 "hi");
	cr_assert_null(json_object_get(r, "error"));
	json_decref(r);
}

Test(rpc, string_ids_are_echoed)
{
	json_t *r = handle(
	    "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"echo\",\"params\":{\"x\":\"1\"}}");

	cr_assert_str_eq(json_string_value(json_object_get(r, "id")), "abc");
	json_decref(r);
}

struct env_case {
	const char *req;
	int code;
	const char *msg; /* substring */
};

Test(rpc, every_envelope_error_has_its_code)
{
	static const struct env_case cases[] = {
	    {"[1,2]", FEMUD_RPC_INVALID_REQUEST, "batch"},
	    {"{\"id\":1,\"method\":\"echo\"}", FEMUD_RPC_INVALID_REQUEST, "jsonrpc"},
	    {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"echo\"}", FEMUD_RPC_INVALID_REQUEST,
	     "jsonrpc"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1}", FEMUD_RPC_INVALID_REQUEST, "method"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", FEMUD_RPC_INVALID_REQUEST, "method"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"echo\"}", FEMUD_RPC_INVALID_REQUEST,
	     "id"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}", FEMUD_RPC_METHOD_NOT_FOUND,
	     "nope"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}",
	     FEMUD_RPC_INVALID_PARAMS, "object"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{}}",
	     FEMUD_RPC_INVALID_PARAMS, "'x' is required"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"x\":3}}",
	     FEMUD_RPC_INVALID_PARAMS, "'x' must be a string, not a number"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"x\":\"a\",\"flag\":1}"
	     "}",
	     FEMUD_RPC_INVALID_PARAMS, "'flag' must be a boolean"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"x\":\"a\",\"y\":1}}",
	     FEMUD_RPC_INVALID_PARAMS, "unknown parameter 'y'"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"x\":\"boom\"}}",
	     FEMUD_RPC_BAD_OPTION, "x=boom"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *r = handle(cases[i].req);

		cr_assert_not_null(r, "%s", cases[i].req);
		cr_expect_eq(error_code(r), cases[i].code, "%s: code %d", cases[i].req,
			     error_code(r));
		cr_expect_not_null(strstr(error_msg(r), cases[i].msg), "%s: '%s'", cases[i].req,
				   error_msg(r));
		cr_assert_null(json_object_get(r, "result"));
		json_decref(r);
	}
}

Test(rpc, a_notification_runs_and_gets_no_response)
{
	calls = 0;
	cr_assert_null(
	    handle("{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":{\"x\":\"a\"}}"));
	cr_assert_eq(calls, 1);
	/* its errors are not answered either */
	cr_assert_null(handle("{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}"));
}

Test(rpc, requests_back_to_back_are_split)
{
	const char *s = " \n{\"a\":1}{\"b\":{\"c\":[1,2]}}\n {\"d\"";
	struct femud_rpc_error e;
	size_t len = strlen(s), used, off = 0;
	json_t *req;

	cr_assert_eq(femud_rpc_next(s, len, &req, &used, &e), 1);
	cr_assert_not_null(json_object_get(req, "a"));
	json_decref(req);
	off += used;
	cr_assert_eq(femud_rpc_next(s + off, len - off, &req, &used, &e), 1);
	cr_assert_not_null(json_object_get(req, "b"));
	json_decref(req);
	off += used;
	/* half a request: wait for more, consume only the whitespace */
	cr_assert_eq(femud_rpc_next(s + off, len - off, &req, &used, &e), 0);
	cr_assert_null(req);
	cr_assert_eq(used, 2);
}

Test(rpc, a_request_cut_inside_a_token_waits_for_more)
{
	const char *cuts[] = {"{\"a\":\"\\u00", "{\"a\":tr", "{\"a\":12", "{", "   "};
	struct femud_rpc_error e;
	json_t *req;
	size_t used;

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		cr_expect_eq(femud_rpc_next(cuts[i], strlen(cuts[i]), &req, &used, &e), 0, "%s",
			     cuts[i]);
}

Test(rpc, malformed_json_is_a_parse_error)
{
	const char *bad[] = {"{x}", "{\"a\" 1}", "nulx }", "{\"a\":1,\"a\":2}", "\"str\" "};
	struct femud_rpc_error e;
	json_t *req;
	size_t used;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.code = 0;
		cr_expect_eq(femud_rpc_next(bad[i], strlen(bad[i]), &req, &used, &e), -1, "%s",
			     bad[i]);
		cr_expect_eq(e.code, FEMUD_RPC_PARSE_ERROR, "%s", bad[i]);
		cr_expect_not_null(strstr(e.msg, "parse error"), "%s", e.msg);
	}
}

Test(rpc, error_response_has_null_id_when_unknown)
{
	json_t *r = femud_rpc_error_response(NULL, FEMUD_RPC_PARSE_ERROR, "x");

	cr_assert(json_is_null(json_object_get(r, "id")));
	cr_assert_eq(error_code(r), FEMUD_RPC_PARSE_ERROR);
	json_decref(r);
}
