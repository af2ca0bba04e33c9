/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vhost_stub.c - the rte_vhost stubs and fake pollers of vhost_stub.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmd/pmd_clock.h"
#include "pmd/poller.h"
#include "vhost_stub.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

int ut_vid = 3;
int ut_vid2 = -1;
char ut_last_log[512];
char ut_log[8192];
static size_t ut_log_len;

/* The fake connection, or the second one of the same frontend. */
static bool vid_known(int vid)
{
	return vid == ut_vid || (ut_vid2 >= 0 && vid == ut_vid2);
}
uint64_t ut_features;
struct rte_vhost_memory *ut_mem;
struct rte_vhost_memory *ut_mem2;
struct ut_vring ut_vrings[UT_VRINGS];
const struct rte_vhost_device_ops *ut_dev_ops;
const struct rte_vhost_user_extern_ops *ut_ext_ops;
char ut_inflight_op[UT_MAX_INFLIGHT_CALLS];
uint16_t ut_inflight_idx[UT_MAX_INFLIGHT_CALLS];
unsigned ut_ninflight;
struct pmd_vq *ut_attached[UT_VRINGS * 4];
unsigned ut_nattached;
unsigned ut_nabandoned;
unsigned ut_attach_fail;
static struct pmd_chain ut_scratch;

bool ut_dirty[UT_LOG_PAGES];
unsigned ut_log_calls;
uint64_t ut_log_base, ut_log_size;

void ut_stub_reset(void)
{
	memset(ut_dirty, 0, sizeof(ut_dirty));
	ut_log_calls = 0;
	ut_log_base = 0;
	ut_log_size = 0;
	ut_features = 0;
	ut_mem = NULL;
	ut_mem2 = NULL;
	memset(ut_vrings, 0, sizeof(ut_vrings));
	for (unsigned i = 0; i < UT_VRINGS; i++) {
		ut_vrings[i].vr.callfd = -1;
		ut_vrings[i].vr.kickfd = -1;
	}
	ut_ninflight = 0;
	ut_nattached = 0;
	ut_nabandoned = 0;
	ut_attach_fail = 0;
	ut_vid2 = -1;
	ut_log_len = 0;
	ut_log[0] = '\0';
}

/* ---- rte_log, rte_malloc: nothing to record ---- */

int pmd_logtype;

int rte_log(uint32_t level, uint32_t logtype, const char *format, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, format);
	vsnprintf(ut_last_log, sizeof(ut_last_log), format, ap);
	va_end(ap);
	n = strlen(ut_last_log);
	if (ut_log_len + n >= sizeof(ut_log))
		ut_log_len = 0; /* keep the newest lines */
	memcpy(ut_log + ut_log_len, ut_last_log, n + 1);
	ut_log_len += n;
	return 0;
}

DEFINE_STUB(rte_zmalloc_socket, void *, (const char *type, size_t size, unsigned align, int socket),
	    NULL) /* vq.c falls back to libc */
DEFINE_STUB_V(rte_free, (void *p))

/* ---- registration: results the test may set ---- */

DEFINE_STUB(rte_vhost_driver_register, int, (const char *path, uint64_t flags), 0)
DEFINE_STUB(rte_vhost_driver_unregister, int, (const char *path), 0)
DEFINE_STUB(rte_vhost_driver_set_features, int, (const char *path, uint64_t features), 0)
DEFINE_STUB(rte_vhost_driver_set_protocol_features, int, (const char *path, uint64_t features), 0)

/* Listening leaves a file at path, as rte_vhost's socket does (pmd_blk.c chmods it). */
int rte_vhost_driver_start(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	fclose(f);
	return 0;
}

int rte_vhost_driver_callback_register(const char *path, struct rte_vhost_device_ops const *ops)
{
	ut_dev_ops = ops;
	return 0;
}

/* The socket path of the one fake connection (set by the test through the device). */
char ut_ifname[108];

int rte_vhost_get_ifname(int vid, char *buf, size_t len)
{
	if (!vid_known(vid))
		return -1;
	snprintf(buf, len, "%s", ut_ifname);
	return 0;
}

int rte_vhost_extern_callback_register(int vid, struct rte_vhost_user_extern_ops const *ops,
				       void *ctx)
{
	ut_ext_ops = ops;
	return 0;
}

/* ---- per-connection state ---- */

static struct ut_vring *vring_of(int vid, uint16_t qid)
{
	return vid_known(vid) && qid < UT_VRINGS ? &ut_vrings[qid] : NULL;
}

int rte_vhost_get_negotiated_features(int vid, uint64_t *features)
{
	*features = ut_features;
	return vid_known(vid) ? 0 : -1;
}

int rte_vhost_get_vhost_vring(int vid, uint16_t qid, struct rte_vhost_vring *vr)
{
	struct ut_vring *v = vring_of(vid, qid);

	if (v == NULL)
		return -1;
	*vr = v->vr;
	return 0;
}

int rte_vhost_get_vring_base(int vid, uint16_t qid, uint16_t *last_avail, uint16_t *last_used)
{
	struct ut_vring *v = vring_of(vid, qid);

	if (v == NULL)
		return -1;
	*last_avail = v->last_avail;
	*last_used = v->last_used;
	return 0;
}

int rte_vhost_set_vring_base(int vid, uint16_t qid, uint16_t last_avail, uint16_t last_used)
{
	struct ut_vring *v = vring_of(vid, qid);

	if (v == NULL)
		return -1;
	v->last_avail = last_avail;
	v->last_used = last_used;
	v->set_base_calls++;
	return 0;
}

int rte_vhost_get_mem_table(int vid, struct rte_vhost_memory **mem)
{
	const struct rte_vhost_memory *src = vid == ut_vid2 && ut_mem2 != NULL ? ut_mem2 : ut_mem;
	size_t sz;

	if (!vid_known(vid) || src == NULL)
		return -1;
	sz = sizeof(*src) + src->nregions * sizeof(src->regions[0]);
	*mem = malloc(sz); /* the caller frees it, as with rte_vhost */
	if (*mem == NULL)
		return -1;
	memcpy(*mem, src, sz);
	return 0;
}

int rte_vhost_get_vhost_ring_inflight(int vid, uint16_t qid, struct rte_vhost_ring_inflight *ri)
{
	struct ut_vring *v = vring_of(vid, qid);

	if (v == NULL || (v->inflight_split == NULL && v->inflight_packed == NULL))
		return -1;
	memset(ri, 0, sizeof(*ri));
	if (v->inflight_packed != NULL)
		ri->inflight_packed = v->inflight_packed;
	else
		ri->inflight_split = v->inflight_split;
	ri->resubmit_inflight = v->resubmit;
	return 0;
}

static int inflight_record(char op, uint16_t idx)
{
	if (ut_ninflight < UT_MAX_INFLIGHT_CALLS) {
		ut_inflight_op[ut_ninflight] = op;
		ut_inflight_idx[ut_ninflight] = idx;
	}
	ut_ninflight++;
	return 0;
}

int rte_vhost_set_inflight_desc_split(int vid, uint16_t qid, uint16_t idx)
{
	return inflight_record('s', idx);
}

int rte_vhost_set_last_inflight_io_split(int vid, uint16_t qid, uint16_t idx)
{
	return inflight_record('l', idx);
}

int rte_vhost_clr_inflight_desc_split(int vid, uint16_t qid, uint16_t last_used_idx, uint16_t idx)
{
	return inflight_record('c', idx);
}

/* ---- dirty log ---- */

static void log_mark(uint64_t gpa, uint64_t len)
{
	ut_log_calls++;
	if (!(ut_features & (1ULL << VHOST_F_LOG_ALL)) || len == 0)
		return;
	for (uint64_t pg = gpa / 4096; pg <= (gpa + len - 1) / 4096 && pg < UT_LOG_PAGES; pg++)
		ut_dirty[pg] = true;
}

void rte_vhost_log_write(int vid, uint64_t addr, uint64_t len)
{
	if (vid_known(vid))
		log_mark(addr, len);
}

void rte_vhost_log_used_vring(int vid, uint16_t vring_idx, uint64_t offset, uint64_t len)
{
	if (vid_known(vid) && vring_idx < UT_VRINGS)
		log_mark(ut_vrings[vring_idx].vr.log_guest_addr + offset, len);
}

int rte_vhost_get_log_base(int vid, uint64_t *log_base, uint64_t *log_size)
{
	*log_base = ut_log_base;
	*log_size = ut_log_size;
	return vid_known(vid) ? 0 : -1;
}

/* Packed: the entry handed out is the chain's first ring position. */
int rte_vhost_set_inflight_desc_packed(int vid, uint16_t qid, uint16_t head, uint16_t last,
				       uint16_t *entry)
{
	(void)last;
	*entry = head;
	return inflight_record('S', head);
}

int rte_vhost_set_last_inflight_io_packed(int vid, uint16_t qid, uint16_t head)
{
	return inflight_record('L', head);
}

int rte_vhost_clr_inflight_desc_packed(int vid, uint16_t qid, uint16_t head)
{
	return inflight_record('C', head);
}

int rte_vhost_get_vring_base_from_inflight(int vid, uint16_t qid, uint16_t *last_avail,
					   uint16_t *last_used)
{
	struct ut_vring *v = vring_of(vid, qid);

	/* rte_vhost: a packed ring's position is its region's old used position */
	if (v != NULL && v->inflight_packed != NULL) {
		*last_avail = (uint16_t)(v->inflight_packed->old_used_idx |
					 v->inflight_packed->old_used_wrap_counter << 15);
		*last_used = *last_avail;
		return 0;
	}
	return rte_vhost_get_vring_base(vid, qid, last_avail, last_used);
}

/* ---- fake pollers ---- */

unsigned pmd_poller_count(void)
{
	return 1;
}

int pmd_poller_node(unsigned idx)
{
	return 0;
}

int pmd_poller_attach(unsigned idx, struct pmd_vq *q)
{
	if (ut_attach_fail > 0) {
		ut_attach_fail--;
		return -1;
	}
	if (ut_nattached == sizeof(ut_attached) / sizeof(ut_attached[0]))
		return -1;
	ut_attached[ut_nattached++] = q;
	return 0;
}

/* As the real poller does: flush the completions the queue still holds, then let go. */
static struct pmd_chain flush_chain; /* the poller's scratch chain */

void pmd_poller_detach(struct pmd_vq *q)
{
	for (unsigned i = 0; i < ut_nattached; i++) {
		if (ut_attached[i] != q)
			continue;
		pmd_vq_flush(q, pmd_now_ns(), &flush_chain);
		ut_attached[i] = ut_attached[--ut_nattached];
		return;
	}
	abort(); /* detach of a queue no poller holds */
}

/* As the real poller does: let go without posting the queue's pending completions. */
void pmd_poller_abandon(struct pmd_vq *q)
{
	for (unsigned i = 0; i < ut_nattached; i++) {
		if (ut_attached[i] != q)
			continue;
		ut_attached[i] = ut_attached[--ut_nattached];
		ut_nabandoned++;
		return;
	}
	abort(); /* abandon of a queue no poller holds */
}

/* Run fn as the (one, fake) poller would, between two sweeps. */
void pmd_poller_call(unsigned idx, void (*fn)(void *arg), void *arg)
{
	fn(arg);
}

struct pmd_vq *ut_queue(uint16_t qid)
{
	for (unsigned i = 0; i < ut_nattached; i++)
		if (ut_attached[i]->qid == qid)
			return ut_attached[i];
	return NULL;
}

void ut_sweep(uint64_t now_ns)
{
	for (unsigned i = 0; i < ut_nattached; i++)
		pmd_vq_sweep(ut_attached[i], now_ns, &ut_scratch);
}
