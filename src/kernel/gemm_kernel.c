/*
 * gemm_kernel.c — the matmul kernels the GEMM plan launches, written with the
 * cube instructions only (see gemm_internal.h for the tiling):
 *
 *   for each K chunk:            load B (kc x nb) -> L1           (B1)
 *     for each mc rows:          load A (mc x kc) -> L0A          (A2)
 *                                mmad -> L0C                      (CO1)
 *                                (a pre-packed B: no load, mmad_packed
 *                                reads its panels in place)
 *                                fixpipe -> partial sums, or C through the epilogue
 *
 * and the GEMV kernel (M = 1): B streamed from global memory row by row into
 * a row of accumulators in UB, then the same fixpipe row step.
 */
#include <string.h>

#include "kernel/gemm_internal.h"

/* The batch's view of an optional global tensor: data moved by `off` elements. */
static vn_mat view(vn_gm g, int64_t off, int64_t rs, int64_t cs)
{
    vn_mat m = {g, off, rs, cs};
    if (!g.data) memset(&m, 0, sizeof m);
    return m;
}

typedef struct tile_pos {
    int64_t batch, m0, ml, n0, nl;
    int64_t block; /* the launch block it came from */
} tile_pos;

static bool decode(const vn_gemm_plan *p, int64_t block, tile_pos *t)
{
    int64_t per = p->mt * p->nt;
    t->block = block;
    t->batch = block / per;
    int64_t r = block % per;
    t->m0 = (r / p->nt) * p->mb;
    t->n0 = (r % p->nt) * p->nb;
    t->ml = min64(p->mb, p->d.M - t->m0);
    t->nl = min64(p->nb, p->d.N - t->n0);
    return t->ml > 0 && t->nl > 0;
}

/* The epilogue views of one batch, tile-relative at (r0, c0). */
static void tile_views(const vn_gemm_kargs *g, const tile_pos *t, int64_t r0, int64_t c0,
                       vn_fixpipe *fp)
{
    const vn_gemm_plan *p = g->p;
    const vn_gemm_epilogue *e = &p->d.epi;
    int64_t ldr = e->ldr ? e->ldr : p->d.N;
    fp->row0 = r0, fp->col0 = c0;
    fp->c_in = view(g->c_in, t->batch * p->d.stride_c_in + r0 * e->c_in_rs + c0 * e->c_in_cs,
                    e->c_in_rs, e->c_in_cs);
    fp->residual = view(g->res, t->batch * p->d.stride_residual + r0 * ldr + c0, ldr, 1);
}

static void batch_vectors(const vn_gemm_kargs *g, const tile_pos *t, vn_fixpipe *fp)
{
    const vn_gemm_plan *p = g->p;
    fp->bias = g->bias;
    fp->col_scale = g->col_scale;
    fp->row_sum = g->row_sum;
    fp->col_sum = g->col_sum;
    if (g->row_sum.data)
        fp->row_sum.data = (int32_t *)g->row_sum.data + t->batch * p->d.M, fp->row_sum.len = p->d.M;
    if (g->col_sum.data && !g->b_packed)
        fp->col_sum.data = (int32_t *)g->col_sum.data + t->batch * p->d.N, fp->col_sum.len = p->d.N;
}

/* Column sums stored behind the panels of a packed int8 B. */
static vn_gm packed_b(const vn_gemm_kargs *g, int64_t batch, vn_gm *col_sum)
{
    const vn_gemm_plan *p = g->p;
    int64_t idx = p->d.stride_b ? batch : 0;
    uint8_t *base = (uint8_t *)g->b.data + idx * p->packed_bytes;
    if (col_sum && p->d.compute == VN_I32) {
        int64_t at = (p->packed_elems + 3) / 4 * 4;
        *col_sum = vn_gm_make(base + at, VN_I32, (p->d.N + p->s.nr - 1) / p->s.nr * p->s.nr);
    }
    return vn_gm_make(base, p->b_op, p->packed_elems);
}

/* Hint the A block loaded after rows r0 of chunk kc0: the next `step` rows,
 * or the first rows of the next chunk. */
static void prefetch_next_a(vn_core *core, const vn_gemm_kargs *g, const tile_pos *t, int64_t r0,
                            int64_t step, int64_t kc0)
{
    const vn_gemm_plan *p = g->p;
    int64_t r = r0 + step, k0 = kc0;
    if (r >= t->m0 + t->ml) r = t->m0, k0 = kc0 + p->kc;
    if (k0 >= p->d.K) return;
    int64_t rl = min64(step, t->m0 + t->ml - r), kl = min64(p->kc, p->d.K - k0);
    int64_t off = t->batch * p->d.stride_a + r * g->a_rs + k0 * p->a_cs;
    vn_prefetch_mat(core, vn_mat_make(g->a, off, g->a_rs, p->a_cs), rl, kl);
}

/* ---- B packed once per run (b_run_pack) ------------------------------------ */

/* Block i packs panels [q0, q0 + pk_np) of B matrix i / pk_nt. */
void vn_gemm_pack_kernel(vn_core *core, const void *args)
{
    const vn_gemm_kargs *g = args;
    const vn_gemm_plan *p = g->p;
    int64_t mats = p->d.stride_b ? p->d.batch : 1, nr = p->s.nr;
    for (int64_t i = vn_block_idx(core); i < mats * p->pk_nt; i += vn_block_num(core)) {
        int64_t n0 = (i % p->pk_nt) * p->pk_np * nr, n = min64(p->pk_np * nr, p->d.N - n0);
        if (n > 0) vn_gemm_pack_columns(p, g->b.data, g->b_src.data, i / p->pk_nt, n0, n);
    }
}

/* ---- A copied once per run (a_run_pad) ------------------------------------ */

/* Tile i copies row i of the caller's A to its padded place. */
void vn_gemm_pad_a_kernel(vn_core *core, const void *args)
{
    const vn_gemm_kargs *g = args;
    const vn_gemm_plan *p = g->p;
    for (int64_t i; vn_tile_next(core, &i);)
        memcpy((float *)g->a.data + i * g->a_rs, (const float *)g->a_src.data + i * p->a_rs,
               (size_t)p->d.K * sizeof(float));
}

/* Where the fixpipe of the rows from r writes: C after the last K chunk,
 * else the partial sums. */
static vn_mat rows_dst(const vn_gemm_kargs *g, const tile_pos *t, int64_t r, bool last)
{
    const vn_gemm_plan *p = g->p;
    if (last) return vn_mat_make(g->c, t->batch * p->d.stride_c + r * p->ldc + t->n0, p->ldc, 1);
    return vn_mat_make(g->part, t->batch * g->part_stride + r * g->ldp + t->n0, g->ldp, 1);
}

/* Request the lines the fixpipe of the rows from r will write. Stores that
 * miss drain one at a time, so without this the row step stalled on each
 * line of C: 7.5 % of a 1024^3 product (6 rows of C 4 KiB apart per mmad),
 * 5 % of BERT's 128 x 3072 x 768; requested one mmad ahead, half of that. */
static void prefetch_dst(vn_core *core, const vn_gemm_kargs *g, const tile_pos *t, int64_t r,
                         int64_t step, bool last)
{
    int64_t rl = min64(step, t->m0 + t->ml - r);
    if (rl > 0) vn_prefetch_mat_now(core, rows_dst(g, t, r, last), rl, t->nl);
}

/* Prefetch distance of a fresh B panel's own stream, in k groups. */
#define B_AHEAD 32

/* Queue the lines of the pre-packed B panels holding columns [n0, n0 + nl),
 * `elems` elements of each from k index k0 on. */
static void queue_packed_panels(vn_core *core, const vn_gemm_plan *p, vn_gm pb, int64_t n0,
                                int64_t nl, int64_t k0, int64_t elems)
{
    int64_t nr = p->s.nr, kp = p->s.kp, kpK = (p->d.K + kp - 1) / kp * kp;
    vn_mat panels = vn_mat_make(pb, (n0 / nr) * nr * kpK + k0 * nr, nr * kpK, 1);
    vn_prefetch_mat(core, panels, (nl + nr - 1) / nr, elems);
}

/* The first micro-panel of a tile's rows reads the tile's pre-packed B
 * block fresh from L3 or memory (it stays in L2 for the other rows), faster
 * than the hardware prefetcher brings it: hint each panel B_AHEAD k groups
 * ahead of the micro-kernel, only where a panel's k group is one line (f32
 * with NR 16). Queued last, so that each of that micro-panel's kernel calls
 * takes its own panel's lines. BERT's 128 x 3072 x 768, 1 thread: 1.2-1.6 %
 * faster, measured when the kernels requested a queued line every k group;
 * since they request one every VN_UKR_PF_EVERY groups the hints trail the
 * stream they lead (AVX2 cold B: 96 -> 104 and 94 -> 91 GFLOP/s overall). */
static void prefetch_fresh_b(vn_core *core, const vn_gemm_plan *p, const vn_gm *pb,
                             const tile_pos *t, int64_t kc0, int64_t kl)
{
    int64_t nr = p->s.nr, kp = p->s.kp, step = nr * kp, groups = (kl + kp - 1) / kp;
    if (step * (int64_t)vn_dtype_size(pb->dtype) != 64 || groups <= B_AHEAD) return;
    queue_packed_panels(core, p, *pb, t->n0, t->nl, kc0 + B_AHEAD * kp, (groups - B_AHEAD) * step);
}

/* A pre-packed B block comes from memory the first time a tile reads it (a
 * model's weights outgrow L3), and the tile's first micro-panel waits on it:
 * BERT's 128 x 3072 x 768 ran 25 % slower in the model than with its B warm
 * in L3. So a tile queues the B block this worker reads next -- the next K
 * chunk, or after the last chunk the first chunk of the tile `workers`
 * blocks on (workers claim blocks in order) -- and the micro-kernels request
 * its lines into L2 while this block computes, one every VN_UKR_PF_EVERY k
 * groups. Only where L2 holds both blocks and A (b_next_pf). */
static void prefetch_next_b(vn_core *core, const vn_gemm_kargs *g, const tile_pos *t, int64_t kc0)
{
    const vn_gemm_plan *p = g->p;
    tile_pos next = *t;
    int64_t k1 = kc0 + p->kc;
    if (k1 >= p->d.K) {
        int64_t block = t->block + vn_device_num_workers(p->device);
        if (block >= p->d.batch * p->mt * p->nt || !decode(p, block, &next)) return;
        k1 = 0;
    }
    int64_t kp = p->s.kp, kl = min64(p->kc, p->d.K - k1);
    queue_packed_panels(core, p, packed_b(g, next.batch, NULL), next.n0, next.nl, k1,
                        (kl + kp - 1) / kp * kp * p->s.nr);
}

/* One K chunk of one tile's operands and the chunk's place. */
typedef struct chunk {
    vn_local a2, b1, c0;
    const vn_gm *pb;
    int64_t kc0, kl;
} chunk;

/* Whether A's rows from r0 that the kernels of an rl-row mmad read (past
 * rl to the last panel's height) exist, so that A can be read in place. */
static bool rows_exist(const vn_gemm_plan *p, int64_t r0, int64_t rl)
{
    return r0 + vn_cube_rows_read(p->a_op, rl) <= p->d.M;
}

/* Rows [r0, r0 + rl) of the tile for one chunk: load A (unless a_direct:
 * read in place), mmad, fixpipe; the next group is `step` rows on. */
static void gemm_group(vn_core *core, const vn_gemm_kargs *g, const tile_pos *t, const chunk *ch,
                       int64_t r0, int64_t rl, int64_t step, bool a_direct, vn_fixpipe *fp)
{
    const vn_gemm_plan *p = g->p;
    const vn_gemm_desc *d = &p->d;
    int64_t kc0 = ch->kc0, kl = ch->kl;
    bool first = kc0 == 0, last = kc0 + kl >= d->K;
    vn_set_loop(core, kc0 / p->kc);
    vn_mat am =
        vn_mat_make(g->a, t->batch * d->stride_a + r0 * g->a_rs + kc0 * p->a_cs, g->a_rs, p->a_cs);
    if (kl > 0) {
        if (!a_direct) vn_cube_load_a(core, ch->a2, am, rl, kl);
        prefetch_next_a(core, g, t, r0, step, kc0);
    }
    if (r0 == t->m0) {
        if (g->b_packed) prefetch_fresh_b(core, p, ch->pb, t, kc0, kl);
        prefetch_dst(core, g, t, r0, step, last);
    }
    if (a_direct && g->b_packed)
        vn_cube_mmad_packed_direct(core, ch->c0, am, *ch->pb, d->K, rl, kc0, kl, t->n0, t->nl,
                                   true);
    else if (a_direct)
        vn_cube_mmad_a_gm(core, ch->c0, am, ch->b1, rl, t->nl, kl, true);
    else if (g->b_packed)
        vn_cube_mmad_packed(core, ch->c0, ch->a2, *ch->pb, d->K, rl, kc0, kl, t->n0, t->nl, true);
    else if (p->b_direct)
        vn_cube_mmad_gm(
            core, ch->c0, ch->a2,
            vn_mat_make(g->b, t->batch * d->stride_b + kc0 * p->b_rs + t->n0, p->b_rs, 1), rl,
            t->nl, kl, true);
    else
        vn_cube_mmad(core, ch->c0, ch->a2, ch->b1, rl, t->nl, kl, true);
    prefetch_dst(core, g, t, r0 + rl, step, last);
    tile_views(g, t, r0, t->n0, fp);
    fp->raw = !last;
    fp->partial = first ? view((vn_gm){0}, 0, 0, 0) : rows_dst(g, t, r0, false);
    vn_cube_fixpipe(core, rows_dst(g, t, r0, last), ch->c0, rl, t->nl, fp);
}

/* Rows of one tile for one chunk, in groups of mc_direct rows where A is
 * read in place (in_place), else of mc rows (the A block L0A holds); a
 * group that cannot read A in place after all (its last panel's kernel
 * would read rows past M) runs as groups of mc. */
static void gemm_rows(vn_core *core, const vn_gemm_kargs *g, const tile_pos *t, const chunk *ch,
                      vn_fixpipe *fp)
{
    const vn_gemm_plan *p = g->p;
    bool direct = vn_gemm_reads_a_in_place(g);
    int64_t end = t->m0 + t->ml, step = direct ? p->mc_direct : p->mc;
    for (int64_t r0 = t->m0; r0 < end; r0 += step) {
        int64_t rl = min64(step, end - r0);
        bool a_direct = direct && rows_exist(p, r0, rl);
        if (a_direct || rl <= p->mc) {
            gemm_group(core, g, t, ch, r0, rl, step, a_direct, fp);
            continue;
        }
        for (int64_t r = r0; r < r0 + rl; r += p->mc) {
            int64_t sl = min64(p->mc, r0 + rl - r);
            gemm_group(core, g, t, ch, r, sl, p->mc, rows_exist(p, r, sl), fp);
        }
    }
}

static void gemm_tile(vn_core *core, const vn_gemm_kargs *g, const tile_pos *tp, vn_local a2,
                      vn_local b1, vn_local c0);

void vn_gemm_kernel(vn_core *core, const void *args)
{
    const vn_gemm_kargs *g = args;
    const vn_gemm_plan *p = g->p;
    const vn_gemm_desc *d = &p->d;
    vn_local a2 = vn_buf_new(core, VN_A2, vn_cube_a_elems(p->a_op, p->mc, p->kc), p->a_op);
    vn_local b1 = {0}; /* a pre-packed B is read in place */
    if (!g->b_packed && !p->b_direct)
        b1 = vn_buf_new(core, VN_B1, vn_cube_b_elems(p->b_op, p->kc, p->nb), p->b_op);
    /* mc_direct >= mc (gemm_internal.h): the accumulators of either group */
    vn_local c0 = vn_buf_new(core, VN_CO1, vn_cube_c_elems(p->a_op, p->mc_direct, p->nb), p->acc);
    int64_t tiles = d->batch * p->mt * p->nt;
    for (int64_t i = vn_block_idx(core); i < tiles; i += vn_block_num(core)) {
        tile_pos t;
        if (decode(p, i, &t)) gemm_tile(core, g, &t, a2, b1, c0);
    }
}

static void gemm_tile(vn_core *core, const vn_gemm_kargs *g, const tile_pos *tp, vn_local a2,
                      vn_local b1, vn_local c0)
{
    const vn_gemm_plan *p = g->p;
    const vn_gemm_desc *d = &p->d;
    tile_pos t = *tp;
    vn_fixpipe fp = vn_gemm_fixpipe_base(p);
    batch_vectors(g, &t, &fp);
    vn_gm pb = {0};
    if (g->b_packed) pb = packed_b(g, t.batch, &fp.col_sum);
    int64_t boff = t.batch * d->stride_b;
    for (int64_t kc0 = 0;; kc0 += p->kc) {
        int64_t kl = min64(p->kc, d->K - kc0);
        vn_mat bv = vn_mat_make(g->b, boff + kc0 * p->b_rs + t.n0 * p->b_cs, p->b_rs, p->b_cs);
        if (kl > 0 && !g->b_packed && !p->b_direct) vn_cube_load_b(core, b1, bv, kl, t.nl);
        int64_t k1 = kc0 + p->kc; /* the next chunk streams in during this one */
        if (k1 < d->K && !g->b_packed) {
            bv.off += p->kc * p->b_rs;
            vn_prefetch_mat(core, bv, min64(p->kc, d->K - k1), t.nl);
        }
        if (g->b_packed && p->b_next_pf) prefetch_next_b(core, g, &t, kc0);
        chunk ch = {a2, b1, c0, &pb, kc0, kl};
        gemm_rows(core, g, &t, &ch, &fp);
        if (kc0 + kl >= d->K) break;
    }
}

/* ---- GEMV ----------------------------------------------------------------- */

static void gemv_tile(vn_core *core, const vn_gemm_kargs *g, int64_t block, vn_local acc);

void vn_gemv_kernel(vn_core *core, const void *args)
{
    const vn_gemm_kargs *g = args;
    const vn_gemm_plan *p = g->p;
    vn_local acc = vn_buf_new(core, VN_VECCALC, p->gv_nb, VN_F32);
    int64_t tiles = p->d.batch * p->gv_nt;
    for (int64_t i = vn_block_idx(core); i < tiles; i += vn_block_num(core))
        gemv_tile(core, g, i, acc);
}

static void gemv_tile(vn_core *core, const vn_gemm_kargs *g, int64_t block, vn_local acc)
{
    const vn_gemm_plan *p = g->p;
    const vn_gemm_desc *d = &p->d;
    tile_pos t = {block / p->gv_nt, 0, 1, (block % p->gv_nt) * p->gv_nb, 0, block};
    t.nl = min64(p->gv_nb, d->N - t.n0);
    if (t.nl <= 0) return;
    int64_t nr = p->s.nr, width = (t.nl + nr - 1) / nr * nr;
    float *c = vn_ptr(float, acc);
    const float *a = (const float *)g->a.data + t.batch * d->stride_a;
    const vn_cube_table *tab = vn_cube_table_get();
    if (g->b_packed) { /* f32: KP = 1, panel q at q * NR * K */
        const float *pb = (const float *)packed_b(g, t.batch, NULL).data;
        tab->gemv_panels(d->K, width / nr, nr, a, pb + t.n0 * d->K, c);
    } else if (d->trans_b) { /* column j at b + j * b_cs */
        const float *b = (const float *)g->b.data + t.batch * d->stride_b + t.n0 * p->b_cs;
        tab->gemv_trans(d->K, t.nl, a, b, p->b_cs, c);
    } else {
        const float *b = (const float *)g->b.data + t.batch * d->stride_b + t.n0;
        tab->gemv_rows(d->K, t.nl, a, b, p->b_rs, c);
    }
    vn_shadow_mark(core, c, t.nl * 4);
    vn_core_count_macs(core, VN_F32, d->K * t.nl);
    core->counters.bytes_in += d->K * t.nl * 4;
    vn_fixpipe fp = vn_gemm_fixpipe_base(p);
    batch_vectors(g, &t, &fp);
    tile_views(g, &t, 0, t.n0, &fp);
    vn_mat out = vn_mat_make(g->c, t.batch * d->stride_c + t.n0, p->ldc, 1);
    float tmp[2 * VN_FIXPIPE_CHUNK];
    for (int64_t j = 0; j < t.nl; j += VN_FIXPIPE_CHUNK) {
        int64_t w = min64(VN_FIXPIPE_CHUNK, t.nl - j);
        vn_fixpipe_row(&fp, VN_F32, c + j, 0, j, w, &out, tmp);
    }
    core->counters.bytes_out += t.nl * (int64_t)vn_dtype_size(d->c_dtype);
}
