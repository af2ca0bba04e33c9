/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rpc_methods.h - femud's JSON-RPC method table (rpc_methods.c); the
 * context passed to femud_rpc_start() with it is a struct femud_devtab *.
 */
#ifndef FEMUD_RPC_METHODS_H
#define FEMUD_RPC_METHODS_H

#include "daemon/rpc.h"

extern const struct femud_rpc_method femud_rpc_methods[];

#endif /* FEMUD_RPC_METHODS_H */
