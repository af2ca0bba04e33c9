/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fake_guest.c - fake guest memory and recording model for pmd unit tests. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_guest.h"
#include "pmd/virtio_blk_wire.h"

void fg_init(struct fake_guest *g)
{
	g->mem = calloc(1, sizeof(*g->mem) + 2 * sizeof(struct rte_vhost_mem_region));
	g->a = aligned_alloc(4096, FG_REGION_SIZE);
	g->b = aligned_alloc(4096, FG_REGION_SIZE);
	memset(g->a, 0, FG_REGION_SIZE);
	memset(g->b, 0, FG_REGION_SIZE);
	g->mem->nregions = 2;
	g->mem->regions[0].guest_phys_addr = FG_A_GPA;
	g->mem->regions[0].host_user_addr = (uint64_t)(uintptr_t)g->a;
	g->mem->regions[0].size = FG_REGION_SIZE;
	g->mem->regions[1].guest_phys_addr = FG_B_GPA;
	g->mem->regions[1].host_user_addr = (uint64_t)(uintptr_t)g->b;
	g->mem->regions[1].size = FG_REGION_SIZE;
}

void fg_fini(struct fake_guest *g)
{
	free(g->mem);
	free(g->a);
	free(g->b);
}

void *fg_host(struct fake_guest *g, uint64_t gpa)
{
	if (gpa >= FG_A_GPA && gpa < FG_A_GPA + FG_REGION_SIZE)
		return g->a + (gpa - FG_A_GPA);
	if (gpa >= FG_B_GPA && gpa < FG_B_GPA + FG_REGION_SIZE)
		return g->b + (gpa - FG_B_GPA);
	return NULL;
}

void fg_desc(struct vring_desc *d, uint64_t gpa, uint32_t len, uint16_t flags, uint16_t next)
{
	d->addr = gpa;
	d->len = len;
	d->flags = flags;
	d->next = next;
}

uint16_t fg_read_chain(struct fake_guest *g, struct vring_desc *desc, unsigned i, uint64_t sector)
{
	return fg_read_chain_len(g, desc, i, sector, 4096);
}

uint16_t fg_read_chain_len(struct fake_guest *g, struct vring_desc *desc, unsigned i,
			   uint64_t sector, uint32_t len)
{
	struct virtio_blk_outhdr h = {.type = VIRTIO_BLK_T_IN, .sector = sector};
	uint16_t d0 = (uint16_t)(3 * i);

	memcpy(fg_host(g, FG_REQ_HDR(i)), &h, sizeof(h));
	*(uint8_t *)fg_host(g, FG_REQ_STATUS(i)) = 0xff;
	fg_desc(&desc[d0], FG_REQ_HDR(i), 16, VRING_DESC_F_NEXT, d0 + 1);
	fg_desc(&desc[d0 + 1], FG_REQ_DATA(i), len, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, d0 + 2);
	fg_desc(&desc[d0 + 2], FG_REQ_STATUS(i), 1, VRING_DESC_F_WRITE, 0);
	return d0;
}

static struct fake_model *to_fake(struct fm_model *m)
{
	return FM_MODEL_CONTAINER(m, struct fake_model, base);
}

uint64_t fg_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fake_spin(uint64_t ns)
{
	const uint64_t end = fg_now_ns() + ns;

	while (ns != 0 && fg_now_ns() < end)
		;
}

/* Bytes of req's range the hints recorded so far cover (hints of one request do not overlap). */
static uint64_t fake_hinted(const struct fake_model *m, const struct fm_req *req)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < m->npf && i < FM_REC_MAX; i++)
		if (m->pf[i].offset >= req->offset && m->pf[i].offset < req->offset + req->len)
			sum += m->pf[i].len;
	return sum;
}

static enum fm_status fake_submit(struct fm_model *model, const struct fm_req *req, uint64_t now_ns,
				  uint64_t *due_ns)
{
	struct fake_model *m = to_fake(model);

	if (m->calls < FM_REC_MAX)
		m->req[m->calls] = *req;
	m->calls++;
	m->offset_sum += req->offset;
	if (req->op == FM_OP_READ && !(req->flags & FM_REQ_PREFETCHED))
		fake_spin(m->cold_spin_ns);
	else if (req->op == FM_OP_READ && fake_hinted(m, req) < req->len)
		fake_spin(m->part_spin_ns);
	*due_ns = now_ns + m->due_delta;
	if (m->on_submit != NULL)
		m->on_submit(m, m->on_submit_arg);
	return m->status;
}

const struct fm_model_ops fake_model_ops = {
    .name = "fake",
    .submit = fake_submit,
};

static void fake_prefetch(struct fm_model *model, enum fm_op op, uint64_t offset, uint64_t len)
{
	struct fake_model *m = to_fake(model);

	if (m->npf < FM_REC_MAX)
		m->pf[m->npf] = (struct fm_rec_pf){
		    .op = op, .offset = offset, .len = len, .before_submit = m->calls};
	m->npf++;
	fake_spin(m->pf_spin_ns);
}

const struct fm_model_ops fake_model_pf_ops = {
    .name = "fake-pf",
    .submit = fake_submit,
    .prefetch = fake_prefetch,
};

static bool fake_idle(struct fm_model *model, uint64_t now_ns)
{
	struct fake_model *m = to_fake(model);

	m->nidle++;
	m->idle_ns = now_ns;
	return m->idle_busy;
}

const struct fm_model_ops fake_model_idle_ops = {
    .name = "fake-idle",
    .submit = fake_submit,
    .idle = fake_idle,
    .single_writer = true,
};

const struct fm_model_ops fake_model_idle_mw_ops = {
    .name = "fake-idle-mw",
    .submit = fake_submit,
    .idle = fake_idle,
};

void fg_target(struct pmd_blk_target *t, struct fake_model *m, uint64_t capacity)
{
	memset(t, 0, sizeof(*t));
	memset(m, 0, sizeof(*m));
	m->base.ops = &fake_model_ops;
	t->capacity = capacity;
	t->blk_size = 512;
	memcpy(t->serial, "SERIAL-0123456789ABC", PMD_SERIAL_LEN);
	t->ops = &fake_model_ops;
	t->model = &m->base;
}

void fg_ring(struct fake_guest *g, struct fg_ring *r)
{
	r->desc = (struct vring_desc *)g->b;
	r->avail = (struct vring_avail *)(g->b + 0x1000);
	r->used = (struct vring_used *)(g->b + 0x2000);
}

void fg_env_init(struct fg_env *e, uint64_t capacity)
{
	fg_init(&e->g);
	fg_target(&e->t, &e->m, capacity);
	fg_ring(&e->g, &e->r);
}

void fg_env_fini(struct fg_env *e)
{
	fg_fini(&e->g);
}

uint16_t fg_env_post_read(struct fg_env *e, uint16_t qsize, unsigned i, uint64_t sector,
			  uint32_t len)
{
	struct vring_avail *avail = e->r.avail;
	uint16_t old = avail->idx;

	avail->ring[old % qsize] = fg_read_chain_len(&e->g, e->r.desc, i, sector, len);
	__atomic_store_n(&avail->idx, (uint16_t)(old + 1), __ATOMIC_RELEASE);
	return old;
}
