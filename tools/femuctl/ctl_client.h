/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl_client.h - femuctl's JSON-RPC 2.0 client: one connection to femud's
 * control socket, one request at a time (requests are JSON objects, each
 * response one JSON object followed by a newline; see daemon/rpc.h).
 */
#ifndef FEMUCTL_CLIENT_H
#define FEMUCTL_CLIENT_H

#include <jansson.h>

struct ctl_client {
	int fd;
	int timeout_ms; /* per response */
	json_int_t next_id;
	char buf[1 << 20]; /* bytes read past the last response */
	size_t len;
};

/* Connect to path: 0, or -errno with a message in err. */
int ctl_connect(struct ctl_client *c, const char *path, int timeout_ms, char *err, size_t errlen);

/*
 * Call method with params (borrowed; NULL: none).  Returns 0 with *result
 * (new reference), 1 with *code and msg filled from the RPC error, or -1
 * (transport failure, message in msg).
 */
int ctl_call(struct ctl_client *c, const char *method, json_t *params, json_t **result, int *code,
	     char *msg, size_t msglen);

void ctl_close(struct ctl_client *c);

#endif /* FEMUCTL_CLIENT_H */
