/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rpc.h - femud's JSON-RPC 2.0 control socket: the transport (a unix stream
 * socket served by one control thread with poll(), never by a poller) and
 * the request envelope (parse, check, dispatch to a method table, answer).
 *
 * Framing: requests are JSON objects sent back to back on the stream (any
 * whitespace between them); each gets one response object followed by a
 * newline.  Notifications (no "id") get none.  Batches are refused.
 *
 * Limits (a slow, silent or hostile client never delays the data path or
 * another client): at most FEMUD_RPC_MAX_MSG bytes per request (larger:
 * error and disconnect); a request begun must be complete within
 * FEMUD_RPC_MSG_TIMEOUT_MS, a response must be read within the same time
 * (else error / disconnect); an idle client is dropped after
 * FEMUD_RPC_IDLE_TIMEOUT_MS; at most FEMUD_RPC_MAX_CLIENTS at once (more:
 * an error response, then disconnect).  Sockets are non-blocking; a method
 * runs to its end before the next request is read (methods are short,
 * except device creation which allocates and pre-faults the backend).
 */
#ifndef FEMUD_RPC_H
#define FEMUD_RPC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#define FEMUD_RPC_MAX_MSG (64u << 10)
#define FEMUD_RPC_MSG_TIMEOUT_MS 5000
#define FEMUD_RPC_IDLE_TIMEOUT_MS 600000
#define FEMUD_RPC_MAX_CLIENTS 32

/* JSON-RPC 2.0 error codes, and femud's (server range -32000..-32099). */
#define FEMUD_RPC_PARSE_ERROR (-32700)
#define FEMUD_RPC_INVALID_REQUEST (-32600)
#define FEMUD_RPC_METHOD_NOT_FOUND (-32601)
#define FEMUD_RPC_INVALID_PARAMS (-32602)
#define FEMUD_RPC_INTERNAL_ERROR (-32603)
#define FEMUD_RPC_FAILED (-32000)     /* the operation failed (message says why) */
#define FEMUD_RPC_NO_DEVICE (-32001)  /* no device on that socket path */
#define FEMUD_RPC_EXISTS (-32002)     /* the socket path is already a device's / in use */
#define FEMUD_RPC_BUSY (-32003)	      /* a frontend is connected (delete without force) */
#define FEMUD_RPC_BAD_OPTION (-32004) /* a device option or parameter is not valid */
#define FEMUD_RPC_OVERLOADED (-32005) /* too many clients */

struct femud_rpc_error {
	int code;
	char msg[512];
};

/* A method: result (new reference) or NULL with e filled in. */
typedef json_t *(*femud_rpc_fn)(void *ctx, json_t *params, struct femud_rpc_error *e);

struct femud_rpc_method {
	const char *name;
	femud_rpc_fn fn;
	const char *help; /* one line: params and what it does */
};

/*
 * Split the next request off a byte stream: skips leading whitespace, then
 * returns 1 with *req and *used (bytes consumed) when a whole JSON value is
 * there, 0 when more bytes are needed (*used: whitespace skipped), -1 on a
 * parse error (message in e).
 */
int femud_rpc_next(const char *buf, size_t len, json_t **req, size_t *used,
		   struct femud_rpc_error *e);

/*
 * Handle one parsed request against a method table (ends with name NULL):
 * check the envelope (object, "jsonrpc": "2.0", string "method", params an
 * object or absent, id a string, number or null), run the method and
 * return the response object, or NULL for a notification.
 */
json_t *femud_rpc_handle(const struct femud_rpc_method *table, void *ctx, json_t *req);

/* An error response with id (borrowed; NULL = null). */
json_t *femud_rpc_error_response(json_t *id, int code, const char *msg);

/*
 * Parameter helpers for methods: 0, or -1 with e set to INVALID_PARAMS and
 * a message naming the parameter.  Optional ones leave *out when absent.
 */
int femud_rpc_param_str(json_t *params, const char *key, bool required, const char **out,
			struct femud_rpc_error *e);
int femud_rpc_param_bool(json_t *params, const char *key, bool *out, struct femud_rpc_error *e);
/* -1 (INVALID_PARAMS) when params has a member not named in keys (NULL-terminated). */
int femud_rpc_params_only(json_t *params, const char *const *keys, struct femud_rpc_error *e);

struct femud_rpc; /* a running server */

/*
 * Claim path (stale socket replaced, a live one refused with -EADDRINUSE,
 * as for device sockets), bind and listen with mode 0600.  No thread yet.
 */
int femud_rpc_open(struct femud_rpc **out, const char *path, char *err, size_t errlen);

/* Serve table on a control thread (not a poller's CPU when one is free). */
int femud_rpc_start(struct femud_rpc *r, const struct femud_rpc_method *table, void *ctx);

/* Stop the thread, close every client and the socket, remove the socket file. */
void femud_rpc_close(struct femud_rpc *r);

#endif /* FEMUD_RPC_H */
