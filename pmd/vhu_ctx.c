/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vhu_ctx.c - the fds beside a vhost-user message in rte_vhost's message
 * context (see vhu_ctx.h).
 */
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "pmd/vhu_ctx.h"

int pmd_vhu_fds(const void *ctx, int fds[VHU_MAX_FDS])
{
	const struct pmd_vhu_ctx *c = ctx;
	int n = c->fd_num;

	if (n < 0 || n > VHU_MAX_FDS)
		return -1;
	memcpy(fds, (const uint8_t *)c + offsetof(struct pmd_vhu_ctx, fds),
	       VHU_MAX_FDS * sizeof(int));
	for (int i = 0; i < VHU_MAX_FDS; i++) {
		if (i >= n ? fds[i] != -1 : (fds[i] < 0 || fcntl(fds[i], F_GETFD) < 0))
			return -1;
	}
	return n;
}

int pmd_vhu_fds_close(void *ctx)
{
	struct pmd_vhu_ctx *c = ctx;
	int fds[VHU_MAX_FDS];
	int n = pmd_vhu_fds(ctx, fds);

	for (int i = 0; i < n; i++) {
		close(fds[i]);
		fds[i] = -1;
	}
	if (n > 0) {
		memcpy((uint8_t *)c + offsetof(struct pmd_vhu_ctx, fds), fds, sizeof(fds));
		c->fd_num = 0;
	}
	return n;
}

int pmd_vhu_fd_reply(void *ctx, int fd)
{
	struct pmd_vhu_ctx *c = ctx;
	int fds[VHU_MAX_FDS];

	if (fd < 0 || pmd_vhu_fds(ctx, fds) != 0)
		return -1;
	fds[0] = fd;
	memcpy((uint8_t *)c + offsetof(struct pmd_vhu_ctx, fds), fds, sizeof(fds));
	c->fd_num = 1;
	return 0;
}
