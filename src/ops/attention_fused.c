/*
 * attention_fused.c — vinci::FusedAttention: multi-head scaled dot-product
 * attention in one kernel that never writes the score matrix to memory
 * (flash attention), for the pattern pass_fuse_attention.c rewrites.
 *
 *   Q [B, S, H*D], K [B, T, H*D], V [B, T, H*Dv] (the projections' outputs),
 *   optional additive f32 mask broadcastable to [B, H, S, T] (exporters write
 *   [B, 1, 1, T], [B, 1, S, T] or [S, T]), attributes num_heads, scale
 *   (default 1 / sqrt(D)), causal (query i sees keys j <= i, ONNX Attention's
 *   rule without past keys)  ->  Y [B, S, H*Dv].
 *
 * One block = (batch, head, query tile of qt rows); it walks the keys in tiles
 * of kt (all of them when T <= 512: one plain softmax per row). The cube and the vector unit
 * co-operate through a per-block slice of the workspace, as Ascend's Cube and Vector cores do
 * through GM: cube:   S = Q_tile K_tile^T, fixpipe: S * scale + mask  -> workspace vector: online
 * softmax of S's rows (running max m and sum l; the output rows are rescaled by exp(m_old - m_new)
 * when the max grows) -> P cube:   P V_tile -> workspace;  vector: O += P V_tile and finally O / l
 * is stored. The scores of one tile (qt x kt) live in scratch and in a few KiB of the workspace,
 * never as a [B, H, S, T] tensor.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ops_internal.h"

enum {
    KT_MAX = 512,     /* keys per tile at most */
    MAX_BLOCKS = 256, /* blocks per launch: each owns a workspace slice; tiles are strided */
};

typedef struct fa_plan {
    int64_t B, S, T, H, D, Dv;
    int64_t mstride[4];     /* mask element strides for (b, h, i, j); 0 broadcasts */
    int64_t qt, qtiles, kt; /* query rows per block, query tiles, keys per tile */
    int64_t blocks;         /* launched blocks */
    int64_t ws_s, ws_o;     /* per block: workspace floats of S and of P V */
    double scale;
    bool has_mask, causal;
} fa_plan;

typedef struct fa_args {
    const fa_plan *p;
    vn_gm q, k, v, mask, y, ws;
} fa_args;

static bool present(const vn_op_ctx *ctx, int32_t i)
{
    return ctx->num_inputs > i && ctx->inputs[i].rank >= 0;
}

/* Mask strides aligned to [B, H, S, T] from the right; each dim is 1 or full. */
static vn_status mask_strides(const vn_tensor_desc *m, const fa_plan *p, const char *where,
                              int64_t st[4])
{
    const int64_t full[4] = {p->B, p->H, p->S, p->T};
    if (m->dtype != VN_F32) return vn_error(VN_ERR_DTYPE, where, "the mask must be f32");
    if (m->rank < 1 || m->rank > 4)
        return vn_error(VN_ERR_SHAPE, where, "the mask must have rank 1..4, not %d", (int)m->rank);
    int64_t stride = 1;
    for (int32_t d = 3; d >= 0; d--) {
        int32_t md = m->rank - 4 + d;
        int64_t n = md >= 0 ? m->dims[md] : 1;
        if (n != 1 && n != full[d])
            return vn_error(VN_ERR_SHAPE, where,
                            "mask dim %d is %lld: it must be 1 or %lld to broadcast to "
                            "[B, H, S, T]",
                            (int)md, (long long)n, (long long)full[d]);
        st[d] = n == 1 ? 0 : stride;
        stride *= n;
    }
    return VN_OK;
}

static vn_status geometry(const vn_op_ctx *ctx, const char *where, fa_plan *p)
{
    const vn_tensor_desc *q = &ctx->inputs[0], *k = &ctx->inputs[1], *v = &ctx->inputs[2];
    int64_t heads = 0, causal = 0;
    vn_attrs_int(ctx->attrs, "num_heads", 0, &heads);
    vn_attrs_int(ctx->attrs, "causal", 0, &causal);
    if (q->rank != 3 || k->rank != 3 || v->rank != 3)
        return vn_error(VN_ERR_SHAPE, where, "Q, K and V must be 3-D [B, S, heads * D]");
    if (q->dtype != VN_F32 || k->dtype != VN_F32 || v->dtype != VN_F32)
        return vn_error(VN_ERR_DTYPE, where, "Q, K and V must be f32");
    if (heads <= 0 || q->dims[2] % heads || v->dims[2] % heads)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "num_heads %lld must be positive and divide the hidden sizes",
                        (long long)heads);
    if (k->dims[0] != q->dims[0] || v->dims[0] != q->dims[0] || k->dims[1] != v->dims[1] ||
        k->dims[2] != q->dims[2])
        return vn_error(VN_ERR_SHAPE, where, "Q, K and V disagree on batch, keys or hidden size");
    *p = (fa_plan){.B = q->dims[0],
                   .S = q->dims[1],
                   .T = k->dims[1],
                   .H = heads,
                   .D = q->dims[2] / heads,
                   .Dv = v->dims[2] / heads,
                   .causal = causal != 0};
    vn_attrs_float(ctx->attrs, "scale", 1.0 / sqrt((double)(p->D > 0 ? p->D : 1)), &p->scale);
    p->has_mask = present(ctx, 3);
    if (p->has_mask) return mask_strides(&ctx->inputs[3], p, where, p->mstride);
    return VN_OK;
}

static vn_status fa_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    fa_plan p;
    vn_status st = geometry(ctx, where, &p);
    if (st != VN_OK) return st;
    out[0] = (vn_tensor_desc){VN_F32, 3, {p.B, p.S, p.H * p.Dv}};
    return VN_OK;
}

/* Whether what carve() takes for query tile qt and key tile KT fits each
 * arena (the 1 KiB of slack covers each buffer's rounding to 32 bytes). */
static bool fits(vn_device *dev, const fa_plan *p, int64_t qt, int64_t KT)
{
    int64_t dvp = vn_ops_round_up(p->Dv, 8), f = 4;
    int64_t l0a = vn_cube_a_elems(VN_F32, qt, p->D) * f;
    int64_t l1 = (vn_cube_a_elems(VN_F32, qt, KT) + vn_cube_b_elems(VN_F32, p->D, KT) +
                  vn_cube_b_elems(VN_F32, KT, p->Dv)) *
                     f +
                 1024;
    int64_t l0c = (vn_cube_c_elems(VN_F32, qt, KT) + vn_cube_c_elems(VN_F32, qt, p->Dv)) * f + 1024;
    int64_t ub = (qt * KT + 2 * qt * dvp + 8 + 2 * qt) * f + 1024;
    return l0a <= vn_device_arena_size(dev, VN_ARENA_L0A) &&
           l1 <= vn_device_arena_size(dev, VN_ARENA_L1) &&
           l0c <= vn_device_arena_size(dev, VN_ARENA_L0C) &&
           ub <= vn_device_arena_size(dev, VN_ARENA_UB);
}

/* Query rows per block: as many as fit (K and V are packed once per block, so
 * a taller tile packs them fewer times), but small enough that every worker
 * gets a block when there are enough rows; 0 when not even 8 rows fit. */
static int64_t query_tile(vn_device *dev, const fa_plan *p)
{
    int64_t workers = vn_device_num_workers(dev), best = 0;
    for (int64_t qt = 8; qt <= 128; qt *= 2) {
        if (!fits(dev, p, qt, p->kt)) break;
        if (best >= 32 && p->B * p->H * vn_ops_div_up(p->S, qt) < workers) break;
        best = qt;
        if (qt >= p->S) break;
    }
    return best;
}

static vn_status fa_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                            size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    fa_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = geometry(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    /* all keys in one tile when they fit (the softmax then needs no rescaling) */
    p->kt = vn_ops_round_up(vn_ops_max(1, vn_ops_min(p->T, KT_MAX)), 8);
    while (p->kt > 64 && !fits(ctx->device, p, 32, p->kt)) p->kt = vn_ops_round_up(p->kt / 2, 8);
    p->qt = query_tile(ctx->device, p);
    if (p->qt == 0) {
        long long d = (long long)p->D, dv = (long long)p->Dv;
        free(p);
        return vn_error(VN_ERR_UNSUPPORTED, where, "head sizes %lld / %lld do not fit the arenas",
                        d, dv);
    }
    p->qtiles = vn_ops_div_up(p->S, p->qt);
    p->ws_s = p->qt * p->kt;
    p->ws_o = p->qt * vn_ops_round_up(p->Dv, 8);
    p->blocks = vn_ops_max(1, vn_ops_min(p->B * p->H * p->qtiles, MAX_BLOCKS));
    *data = p;
    *workspace = (size_t)p->blocks * (size_t)(p->ws_s + p->ws_o) * sizeof(float);
    return VN_OK;
}

/* ---- kernel ------------------------------------------------------------------ */

typedef struct fa_block {
    vn_local qa, pa, kb, vb, sc, oc; /* cube: Q, P (A); K^T, V (B); S, P V (CO1) */
    vn_local s, o, pv, red;          /* vector: scores / P, output, P V, reduction */
    double *m, *l;                   /* running max and sum per row */
    int64_t b, h, i0, rows;
    vn_gm ws_s, ws_o;
} fa_block;

static void carve(vn_core *c, const fa_plan *p, fa_block *k)
{
    int64_t dvp = vn_ops_round_up(p->Dv, 8), QT = p->qt, KT = p->kt;
    k->qa = vn_buf_new(c, VN_A2, vn_cube_a_elems(VN_F32, QT, p->D), VN_F32);
    k->pa = vn_buf_new(c, VN_A1, vn_cube_a_elems(VN_F32, QT, KT), VN_F32);
    k->kb = vn_buf_new(c, VN_B1, vn_cube_b_elems(VN_F32, p->D, KT), VN_F32);
    k->vb = vn_buf_new(c, VN_B1, vn_cube_b_elems(VN_F32, KT, p->Dv), VN_F32);
    k->sc = vn_buf_new(c, VN_CO1, vn_cube_c_elems(VN_F32, QT, KT), VN_F32);
    k->oc = vn_buf_new(c, VN_CO1, vn_cube_c_elems(VN_F32, QT, p->Dv), VN_F32);
    k->s = vn_buf_new(c, VN_VECCALC, QT * KT, VN_F32);
    k->o = vn_buf_new(c, VN_VECCALC, QT * dvp, VN_F32);
    k->pv = vn_buf_new(c, VN_VECCALC, QT * dvp, VN_F32);
    k->red = vn_buf_new(c, VN_VECCALC, 8, VN_F32);
    vn_local stats = vn_buf_new(c, VN_VECCALC, 2 * QT, VN_I64);
    k->m = vn_ptr(double, stats);
    k->l = k->m + QT;
}

static double reduce(vn_core *c, const fa_block *k, vn_reduce kind, vn_local src, int64_t n)
{
    vn_reduce(c, kind, k->red, src, n);
    return vn_ptr(const float, k->red)[0];
}

/* Keys of tile [j0, j0 + n) that row r may not see under the causal rule. */
static void causal_cut(const fa_block *k, float *row, int64_t r, int64_t j0, int64_t n)
{
    int64_t first = k->i0 + r + 1 - j0; /* first masked column of this tile */
    for (int64_t j = first < 0 ? 0 : first; j < n; j++) row[j] = -INFINITY;
}

/* Cube: scores of key tile [j0, j0 + n) into the workspace (pitch np), scaled and masked. */
static void scores_ws(vn_core *c, const fa_args *a, const fa_block *k, int64_t j0, int64_t n,
                      int64_t np)
{
    const fa_plan *p = a->p;
    int64_t hk = p->H * p->D;
    vn_mat kt = vn_mat_make(a->k, (k->b * p->T + j0) * hk + k->h * p->D, 1, hk);
    vn_cube_load_b(c, k->kb, kt, p->D, n);
    vn_cube_mmad(c, k->sc, k->qa, k->kb, k->rows, n, p->D, true);
    vn_fixpipe fp = {.alpha = (float)p->scale};
    if (p->has_mask) {
        const int64_t *ms = p->mstride;
        fp.residual = vn_mat_make(a->mask, k->b * ms[0] + k->h * ms[1] + k->i0 * ms[2] + j0 * ms[3],
                                  ms[2], ms[3]);
    }
    vn_cube_fixpipe(c, vn_mat_make(k->ws_s, 0, np, 1), k->sc, k->rows, n, &fp);
}

/* The same scores in k->s, for the vector unit. */
static void scores(vn_core *c, const fa_args *a, const fa_block *k, int64_t j0, int64_t n,
                   int64_t np)
{
    scores_ws(c, a, k, j0, n, np);
    vn_copy_in(c, k->s, k->ws_s, 0, k->rows * np);
}

/* Vector: online softmax of the tile's rows; rescales O where the max grew. */
static void softmax_tile(vn_core *c, const fa_args *a, const fa_block *k, int64_t j0, int64_t n,
                         int64_t np)
{
    int64_t dvp = vn_ops_round_up(a->p->Dv, 8);
    for (int64_t r = 0; r < k->rows; r++) {
        vn_local row = vn_local_at(c, k->s, r * np);
        if (a->p->causal) causal_cut(k, vn_ptr(float, row), r, j0, n);
        double mx = fmax(k->m[r], reduce(c, k, VN_REDUCE_MAX, row, n));
        if (mx == -INFINITY) { /* every key so far masked out: contributes nothing */
            vn_duplicate(c, row, 0.0, n);
            continue;
        }
        vn_adds(c, row, row, -mx, n);
        vn_exp(c, row, row, n);
        double corr = exp(k->m[r] - mx);
        k->l[r] = k->l[r] * corr + reduce(c, k, VN_REDUCE_SUM, row, n);
        if (corr != 1.0)
            vn_muls(c, vn_local_at(c, k->o, r * dvp), vn_local_at(c, k->o, r * dvp), corr,
                    a->p->Dv);
        k->m[r] = mx;
    }
}

/* Cube: C (oc) = P (pa, rows x n) times keys [j0, j0 + n) of V, read in
 * place when the head is whole micro-panels wide (loaded into vb else). */
static void times_v(vn_core *c, const fa_args *a, const fa_block *k, int64_t j0, int64_t n)
{
    const fa_plan *p = a->p;
    int64_t hv = p->H * p->Dv;
    vn_mat vt = vn_mat_make(a->v, (k->b * p->T + j0) * hv + k->h * p->Dv, hv, 1);
    if (p->Dv % vn_cube_shape_of(VN_F32).nr == 0) {
        vn_cube_mmad_gm(c, k->oc, k->pa, vt, k->rows, p->Dv, n, true);
        return;
    }
    vn_cube_load_b(c, k->vb, vt, n, p->Dv);
    vn_cube_mmad(c, k->oc, k->pa, k->vb, k->rows, p->Dv, n, true);
}

/* Cube: O += P V_tile. */
static void accumulate(vn_core *c, const fa_args *a, const fa_block *k, int64_t j0, int64_t n,
                       int64_t np)
{
    const fa_plan *p = a->p;
    int64_t dvp = vn_ops_round_up(p->Dv, 8);
    vn_copy_out(c, k->ws_s, 0, k->s, k->rows * np);
    vn_cube_load_a(c, k->pa, vn_mat_make(k->ws_s, 0, np, 1), k->rows, n);
    times_v(c, a, k, j0, n);
    vn_cube_fixpipe(c, vn_mat_make(k->ws_o, 0, dvp, 1), k->oc, k->rows, p->Dv, NULL);
    vn_copy_in(c, k->pv, k->ws_o, 0, k->rows * dvp);
    vn_add(c, k->o, k->o, k->pv, k->rows * dvp);
}

static void store(vn_core *c, const fa_args *a, const fa_block *k)
{
    const fa_plan *p = a->p;
    int64_t hv = p->H * p->Dv, dvp = vn_ops_round_up(p->Dv, 8);
    for (int64_t r = 0; r < k->rows; r++) {
        vn_local row = vn_local_at(c, k->o, r * dvp);
        vn_muls(c, row, row, k->l[r] > 0 ? 1.0 / k->l[r] : 0.0, p->Dv);
    }
    vn_copy_pad_params rows = {(uint16_t)k->rows, (uint32_t)(p->Dv * 4), (hv - p->Dv) * 4, 0};
    vn_copy_out_pad(c, a->y, (k->b * p->S + k->i0) * hv + k->h * p->Dv, k->o, rows);
}

/* All keys in one tile: a plain softmax of each row, and P V goes straight to
 * Y through the fixpipe. Without the causal cut the softmax runs on the
 * scores where the fixpipe left them (the workspace slice, in L2), and V is
 * read in place when its head is whole micro-panels wide: P is the only
 * operand copied. */
static void one_tile(vn_core *c, const fa_args *a, const fa_block *k, int64_t n)
{
    const fa_plan *p = a->p;
    int64_t np = vn_ops_round_up(n, 8), hv = p->H * p->Dv;
    if (p->causal) { /* the cut writes the rows: they come into UB */
        scores(c, a, k, 0, n, np);
        for (int64_t r = 0; r < k->rows; r++)
            causal_cut(k, vn_ptr(float, vn_local_at(c, k->s, r * np)), r, 0, n);
        vn_softmax_rows(c, k->s, k->s, k->rows, n, np, false);
        vn_copy_out(c, k->ws_s, 0, k->s, k->rows * np);
    } else {
        scores_ws(c, a, k, 0, n, np);
        vn_softmax_rows_gm(c, k->ws_s, 0, k->ws_s, 0, k->s, k->rows, n, np, false);
    }
    vn_cube_load_a(c, k->pa, vn_mat_make(k->ws_s, 0, np, 1), k->rows, n);
    times_v(c, a, k, 0, n);
    vn_mat y = vn_mat_make(a->y, (k->b * p->S + k->i0) * hv + k->h * p->Dv, hv, 1);
    vn_cube_fixpipe(c, y, k->oc, k->rows, p->Dv, NULL);
}

static void one_block(vn_core *c, const fa_args *a, fa_block *k, int64_t t)
{
    const fa_plan *p = a->p;
    int64_t bh = t / p->qtiles, hq = p->H * p->D;
    k->b = bh / p->H, k->h = bh % p->H, k->i0 = t % p->qtiles * p->qt;
    k->rows = vn_ops_min(p->qt, p->S - k->i0);
    float *ws = (float *)a->ws.data + vn_block_idx(c) * (p->ws_s + p->ws_o);
    k->ws_s = vn_gm_make(ws, VN_F32, p->ws_s);
    k->ws_o = vn_gm_make(ws + p->ws_s, VN_F32, p->ws_o);
    vn_mat q = vn_mat_make(a->q, (k->b * p->S + k->i0) * hq + k->h * p->D, hq, 1);
    vn_cube_load_a(c, k->qa, q, k->rows, p->D);
    vn_duplicate(c, k->o, 0.0, k->rows * vn_ops_round_up(p->Dv, 8));
    for (int64_t r = 0; r < k->rows; r++) k->m[r] = -INFINITY, k->l[r] = 0.0;
    /* causal: the last row of the tile sees keys up to i0 + rows - 1 */
    int64_t keys = p->causal ? vn_ops_min(p->T, k->i0 + k->rows) : p->T;
    if (keys <= p->kt) {
        one_tile(c, a, k, keys);
        return;
    }
    for (int64_t j0 = 0; j0 < keys; j0 += p->kt) {
        int64_t n = vn_ops_min(p->kt, keys - j0), np = vn_ops_round_up(n, 8);
        scores(c, a, k, j0, n, np);
        softmax_tile(c, a, k, j0, n, np);
        accumulate(c, a, k, j0, n, np);
    }
    store(c, a, k);
}

static void fa_kernel(vn_core *c, const void *args)
{
    const fa_args *a = args;
    const fa_plan *p = a->p;
    fa_block k;
    carve(c, p, &k);
    int64_t tiles = p->B * p->H * p->qtiles;
    for (int64_t t = vn_block_idx(c); t < tiles; t += vn_block_num(c)) {
        vn_set_loop(c, t);
        one_block(c, a, &k, t);
    }
}

static vn_status fa_run(const vn_op_run_ctx *ctx)
{
    const fa_plan *p = ctx->plan;
    int64_t tiles = p->B * p->H * p->qtiles;
    if (tiles == 0 || p->Dv == 0) return VN_OK;
    if (p->T == 0) { /* no keys: an empty sum */
        memset(ctx->outputs[0].data, 0, (size_t)vn_desc_numel(&ctx->outputs[0].desc) * 4);
        return VN_OK;
    }
    const vn_tensor *in = ctx->inputs;
    fa_args a = {p,
                 vn_gm_make(in[0].data, VN_F32, vn_desc_numel(&in[0].desc)),
                 vn_gm_make(in[1].data, VN_F32, vn_desc_numel(&in[1].desc)),
                 vn_gm_make(in[2].data, VN_F32, vn_desc_numel(&in[2].desc)),
                 {0},
                 vn_gm_make(ctx->outputs[0].data, VN_F32, vn_desc_numel(&ctx->outputs[0].desc)),
                 vn_gm_make(ctx->workspace, VN_F32, p->blocks * (p->ws_s + p->ws_o))};
    if (p->has_mask) a.mask = vn_gm_make(in[3].data, VN_F32, vn_desc_numel(&in[3].desc));
    vn_launch_desc d = {fa_kernel, "vn_fused_attention", (int32_t)p->blocks, &a, -1, 0};
    return vn_launch(ctx->device, &d, ctx->counters);
}

static const vn_op_def def = {"FusedAttention",     "vinci",  3,          4,    1,
                              VN_DTYPE_BIT(VN_F32), fa_infer, fa_plan_fn, free, fa_run};

const vn_op_def *const *vn_ops_attention_fused_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&def};
    *count = 1;
    return ptrs;
}
