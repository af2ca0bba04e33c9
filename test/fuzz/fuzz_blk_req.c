/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_blk_req.c - libFuzzer target: the virtio-blk request layer
 * (pmd/blk_req.c) on chains the walker could have produced, without going
 * through a descriptor table, so the fuzzer reaches every request type,
 * sector range and segment layout quickly.
 *
 * Input: layout (1 byte: bit 0 the chain is laid out in a packed ring of
 * the fake guest, bit 1 there through an indirect table, bits 2-7 an
 * eighth of the ring position it starts at; else every segment is its own heap allocation),
 * device (capacity in sectors: 4 bytes; flags: 1 byte, bit 0
 * readonly, bit 1 4096-byte blocks, bits 2-3 model status), the 16-byte
 * request header, the number of readable and writable segments (1 byte
 * each), one 4-byte length per segment (taken modulo 16 KiB, plus 1), then the
 * readable data (discard / write-zeroes segment lists).  Split: every
 * segment is its own heap allocation of exactly its length, so
 * AddressSanitizer reports any access past a segment.  Packed: header,
 * segments (as many as fit) and status byte lie one after the other in
 * guest memory, their descriptors in the ring (or a table), and the chain
 * goes through the packed walker (pmd/vq_chain.c) before the request layer.
 */
#include "fuzz_blk.h"

#define SEG_LEN_MAX 16384u
/* a packed ring longer than any chain (segments, header, status), at 0x10000 */
#define PK_QSZ 512u
#define PK_TABLE (FG_A_GPA + 0x2000) /* indirect table */
#define PK_DATA (FG_A_GPA + 0x4000)  /* header, segments, status from here */
#define PK_END (FG_B_GPA + FG_REGION_SIZE)

_Static_assert(PK_QSZ >= PMD_CHAIN_MAX_IOV + 2 &&
		   PK_TABLE + (PMD_CHAIN_MAX_IOV + 2) * 16 <= PK_DATA &&
		   PK_QSZ * 16 <= PK_TABLE - FG_A_GPA,
	       "a chain fits the ring, the table its room");

static struct fake_guest g;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fg_init(&g);
	return 0;
}

/* What the input asks for: the request and its segment lengths. */
struct fz_req {
	struct virtio_blk_outhdr hdr;
	uint32_t nrd, nwr;
	uint32_t len[PMD_CHAIN_MAX_IOV];
};

/* Check and answer c as the walker or the input described it. */
static void run(struct pmd_chain *c, const struct pmd_blk_target *t, struct fake_model *m,
		enum pmd_chain_result res)
{
	struct pmd_blk_done done;

	pmd_blk_req_exec(t, c, res, 1000, &done);
	fz_check_done(c, res, &done);
	fz_check_model_reqs(t, m, 0);
	if (done.status != VIRTIO_BLK_S_OK)
		FZ_CHECK(done.used_len == 1, "a failed request reports %u bytes written",
			 done.used_len);
	*c->status = done.status;
}

/* Split layout: every segment its own heap allocation. */
static void split_req(struct fz_in *in, const struct fz_req *r, const struct pmd_blk_target *t,
		      struct fake_model *m)
{
	static struct pmd_chain c;
	uint8_t status_byte = 0xff;

	memset(&c, 0, sizeof(c));
	c.hdr = r->hdr;
	c.nrd = r->nrd;
	c.nwr = r->nwr;
	c.status = &status_byte;
	for (uint32_t i = 0; i < c.nrd + c.nwr; i++) {
		uint32_t len = r->len[i];

		c.iov[i].len = len;
		c.iov[i].base = malloc(len);
		memset(c.iov[i].base, 0, len);
		if (i < c.nrd) {
			fz_take(in, c.iov[i].base, len > in->left ? in->left : len);
			c.rd_len += len;
		} else {
			c.wr_len += len;
		}
	}
	run(&c, t, m, PMD_CHAIN_OK);
	run(&c, t, m, PMD_CHAIN_IOERR);
	FZ_CHECK(status_byte == VIRTIO_BLK_S_IOERR, "a rejected chain was answered %u",
		 status_byte);
	for (uint32_t i = 0; i < c.nrd + c.nwr; i++)
		free(c.iov[i].base);
}

/*
 * Packed layout: the buffers one after the other from PK_DATA (segments that
 * do not fit are left out), their descriptors from ring position pos on, or
 * in one indirect table named by the descriptor at pos.
 */
static void packed_req(struct fz_in *in, const struct fz_req *r, uint8_t layout,
		       const struct pmd_blk_target *t, struct fake_model *m)
{
	static struct vring_packed_desc d[PMD_CHAIN_MAX_IOV + 2];
	static struct pmd_chain c;
	struct vring_packed_desc *ring = (struct vring_packed_desc *)g.a;
	const struct pmd_chain_pring pr = {
	    .desc = ring, .size = PK_QSZ, .indirect_ok = true, .check_wrap = true};
	bool indirect = layout & 2;
	uint16_t pos = (uint16_t)((layout >> 2) * 8u), id = 0, nring = 0, n = 0, k;
	uint64_t at = PK_DATA + PMD_BLK_HDR_SIZE;
	enum pmd_chain_result res;
	uint32_t nseg;

	memset(g.a, 0, FG_REGION_SIZE);
	memset(g.b, 0, FG_REGION_SIZE);
	memcpy(fg_host(&g, PK_DATA), &r->hdr, sizeof(r->hdr));
	d[n++] = (struct vring_packed_desc){.addr = PK_DATA, .len = PMD_BLK_HDR_SIZE};
	for (uint32_t i = 0; i < r->nrd + r->nwr && at + r->len[i] + 1 <= PK_END; i++) {
		bool wr = i >= r->nrd;

		if (!wr && at < FG_B_GPA) { /* readable data from the input (region A part) */
			uint64_t room = FG_B_GPA - at;

			fz_take(in, fg_host(&g, at), r->len[i] < room ? r->len[i] : room);
		}
		d[n++] = (struct vring_packed_desc){
		    .addr = at, .len = r->len[i], .flags = wr ? VRING_DESC_F_WRITE : 0};
		at += r->len[i];
	}
	nseg = n - 1u;
	d[n++] = (struct vring_packed_desc){.addr = at, .len = 1, .flags = VRING_DESC_F_WRITE};
	for (k = 0; k < n; k++) {
		d[k].id = PK_QSZ - 1;
		if (!indirect && k + 1 < n)
			d[k].flags |= VRING_DESC_F_NEXT;
	}
	if (indirect) {
		memcpy(fg_host(&g, PK_TABLE), d, n * sizeof(d[0]));
		d[0] = (struct vring_packed_desc){.addr = PK_TABLE,
						  .len = (uint32_t)(n * sizeof(d[0])),
						  .id = PK_QSZ - 1,
						  .flags = VRING_DESC_F_INDIRECT};
		n = 1;
	}
	for (k = 0; k < n; k++) { /* wrap counter 1, flipping at the ring's end */
		uint16_t p = (uint16_t)((pos + k) % PK_QSZ);
		bool wrap = pos + k < PK_QSZ;

		ring[p] = d[k];
		ring[p].flags |= wrap ? PMD_PACKED_F_AVAIL : PMD_PACKED_F_USED;
	}
	res = pmd_chain_parse_packed(g.mem, &pr, pos, true, &c, &id, &nring);
	/* a segment across regions A and B is two, and the status byte takes a slot while walked */
	FZ_CHECK(res == PMD_CHAIN_OK || (res == PMD_CHAIN_IOERR && nseg + 2 > PMD_CHAIN_MAX_IOV),
		 "a well-formed packed chain was refused: %s", c.why != NULL ? c.why : "");
	FZ_CHECK(id == PK_QSZ - 1 && nring == n, "id %u, %u ring descriptors (%u laid out)", id,
		 nring, n);
	FZ_CHECK(memcmp(&c.hdr, &r->hdr, sizeof(r->hdr)) == 0, "header differs");
	FZ_CHECK(c.status == fg_host(&g, at), "status byte not the chain's last");
	run(&c, t, m, res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	struct pmd_blk_target t;
	struct fake_model m;
	struct fz_req r;
	uint64_t sectors;
	uint8_t layout, flags;

	layout = fz_u8(&in);
	sectors = fz_u32(&in);
	flags = fz_u8(&in);
	fg_target(&t, &m, 0);
	t.blk_size = (flags & 2) ? 4096 : 512;
	t.capacity = sectors * 512 / t.blk_size * t.blk_size;
	t.readonly = flags & 1;
	m.status = (enum fm_status)((flags >> 2) % 3);

	fz_take(&in, &r.hdr, sizeof(r.hdr));
	r.nrd = fz_u8(&in) % (PMD_CHAIN_MAX_IOV / 2 + 1);
	r.nwr = fz_u8(&in) % (PMD_CHAIN_MAX_IOV / 2 + 1);
	for (uint32_t i = 0; i < r.nrd + r.nwr; i++)
		r.len[i] = fz_u32(&in) % SEG_LEN_MAX + 1;
	if (layout & 1)
		packed_req(&in, &r, layout, &t, &m);
	else
		split_req(&in, &r, &t, &m);
	return 0;
}
