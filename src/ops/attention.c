/*
 * attention.c — ONNX Attention (opset 23 / 24), following the ONNX reference:
 * Q, K, V as [B, S, heads * D] (q_num_heads / kv_num_heads given) or
 * [B, heads, S, D]; optional attn_mask (bool: true attends; float: added),
 * broadcast to [B, Hq, Sq, T] and padded past its last dim with -inf;
 * optional past_key / past_value [B, Hkv, P, D] concatenated before K / V
 * (T = P + Skv); optional nonpad_kv_seqlen [B]; is_causal (query i sees keys
 * up to P + i); scale (default 1 / sqrt(D)); softcap; grouped heads (Hq a
 * multiple of Hkv). Outputs Y, present_key, present_value and the
 * qk_matmul_output of qk_matmul_output_mode (0 / 1: scaled, soft-capped
 * QK^T; 2: plus the mask; 3: the softmax).
 *
 * A reference-grade scalar loop in double, one score row at a time in the
 * workspace: it makes models with the operator run; fused attention kernels
 * are a separate task.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cast.h"
#include "ops/ops_internal.h"

typedef struct att_geom {
    int64_t B, Hq, Hkv, Sq, Skv, P, T, Dk, Dv;
    int32_t rank;
} att_geom;

typedef struct att_plan {
    att_geom g;
    vn_dtype dt, mask_dt;
    int32_t mask_rank, mode;
    int64_t mask_dims[4]; /* aligned to [B, Hq, Sq, T] (1 = broadcast) */
    bool has_mask, has_past, has_nonpad, causal;
    double scale, softcap;
} att_plan;

static bool present(const vn_op_ctx *ctx, int32_t i)
{
    return ctx->num_inputs > i && ctx->inputs[i].rank >= 0;
}

static vn_status geometry(const vn_op_ctx *ctx, const char *where, att_geom *g)
{
    const vn_tensor_desc *q = &ctx->inputs[0], *k = &ctx->inputs[1], *v = &ctx->inputs[2];
    int64_t hq, hkv;
    vn_attrs_int(ctx->attrs, "q_num_heads", 0, &hq);
    vn_attrs_int(ctx->attrs, "kv_num_heads", 0, &hkv);
    g->rank = q->rank;
    if ((q->rank != 3 && q->rank != 4) || k->rank != q->rank || v->rank != q->rank)
        return vn_error(VN_ERR_SHAPE, where, "Q, K, V must all be 3-D or all 4-D");
    if (k->dtype != q->dtype || v->dtype != q->dtype)
        return vn_error(VN_ERR_DTYPE, where, "Q, K and V must share a dtype");
    g->B = q->dims[0];
    if (q->rank == 3) {
        if (hq <= 0 || hkv <= 0 || q->dims[2] % hq || k->dims[2] % hkv || v->dims[2] % hkv)
            return vn_error(VN_ERR_INVALID_ARG, where,
                            "3-D inputs need q_num_heads / kv_num_heads dividing the hidden sizes");
        g->Hq = hq, g->Hkv = hkv, g->Sq = q->dims[1], g->Skv = k->dims[1];
        g->Dk = k->dims[2] / hkv, g->Dv = v->dims[2] / hkv;
        if (q->dims[2] / hq != g->Dk)
            return vn_error(VN_ERR_SHAPE, where, "Q and K head sizes differ");
    } else {
        g->Hq = q->dims[1], g->Hkv = k->dims[1], g->Sq = q->dims[2], g->Skv = k->dims[2];
        g->Dk = k->dims[3], g->Dv = v->dims[3];
        if (q->dims[3] != g->Dk) return vn_error(VN_ERR_SHAPE, where, "Q and K head sizes differ");
    }
    if (g->Hkv <= 0 || g->Hq % g->Hkv)
        return vn_error(VN_ERR_SHAPE, where, "%lld query heads are not a multiple of %lld kv heads",
                        (long long)g->Hq, (long long)g->Hkv);
    g->P = present(ctx, 4) ? ctx->inputs[4].dims[2] : 0;
    g->T = g->P + g->Skv;
    return VN_OK;
}

static vn_status att_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    att_geom g;
    vn_status st = geometry(ctx, where, &g);
    if (st != VN_OK) return st;
    vn_dtype dt = ctx->inputs[0].dtype;
    if (g.rank == 3)
        out[0] = (vn_tensor_desc){dt, 3, {g.B, g.Sq, g.Hq * g.Dv}};
    else
        out[0] = (vn_tensor_desc){dt, 4, {g.B, g.Hq, g.Sq, g.Dv}};
    out[1] = (vn_tensor_desc){dt, 4, {g.B, g.Hkv, g.T, g.Dk}};
    out[2] = (vn_tensor_desc){dt, 4, {g.B, g.Hkv, g.T, g.Dv}};
    out[3] = (vn_tensor_desc){dt, 4, {g.B, g.Hq, g.Sq, g.T}};
    return VN_OK;
}

static vn_status att_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                             size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    att_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = geometry(ctx, where, &p->g);
    p->dt = ctx->inputs[0].dtype;
    p->has_mask = present(ctx, 3);
    p->has_past = present(ctx, 4) && present(ctx, 5);
    p->has_nonpad = present(ctx, 6);
    if (p->has_mask) {
        const vn_tensor_desc *m = &ctx->inputs[3];
        p->mask_dt = m->dtype;
        p->mask_rank = m->rank;
        for (int32_t d = 0; d < 4; d++) {
            int32_t md = m->rank - 4 + d;
            p->mask_dims[d] = md >= 0 ? m->dims[md] : 1;
        }
    }
    int64_t causal = 0, mode = 0;
    vn_attrs_int(ctx->attrs, "is_causal", 0, &causal);
    vn_attrs_int(ctx->attrs, "qk_matmul_output_mode", 0, &mode);
    p->causal = causal != 0;
    p->mode = (int32_t)mode;
    vn_attrs_float(ctx->attrs, "scale", 1.0 / sqrt((double)p->g.Dk), &p->scale);
    vn_attrs_float(ctx->attrs, "softcap", 0.0, &p->softcap);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *data = p;
    *workspace = (size_t)(p->g.T > 0 ? p->g.T : 1) * 2 * sizeof(double);
    return VN_OK;
}

/* Element offset of (b, h, s, 0) in a Q / K / V / Y tensor of the given layout. */
static int64_t at(const att_geom *g, bool four_d, int64_t H, int64_t S, int64_t D, int64_t b,
                  int64_t h, int64_t s)
{
    return four_d ? ((b * H + h) * S + s) * D : ((b * S + s) * H + h) * D;
}

/* present = concat(past, new) along the sequence, [B, Hkv, T, D]. */
static void concat_present(const att_plan *p, const void *past, const void *x, int64_t D, void *out)
{
    const att_geom *g = &p->g;
    for (int64_t b = 0; b < g->B; b++)
        for (int64_t h = 0; h < g->Hkv; h++)
            for (int64_t t = 0; t < g->T; t++) {
                int64_t o = ((b * g->Hkv + h) * g->T + t) * D;
                int64_t src = t < g->P ? ((b * g->Hkv + h) * g->P + t) * D
                                       : at(g, g->rank == 4, g->Hkv, g->Skv, D, b, h, t - g->P);
                for (int64_t d = 0; d < D; d++)
                    vn_cast_store_f64(p->dt, out, o + d,
                                      vn_cast_load_f64(p->dt, t < g->P ? past : x, src + d));
            }
}

static double mask_bias(const att_plan *p, const void *mask, const void *nonpad, int64_t b,
                        int64_t h, int64_t i, int64_t j)
{
    const att_geom *g = &p->g;
    double bias = 0.0;
    if (p->has_mask) {
        const int64_t *md = p->mask_dims;
        if (j >= md[3]) return -INFINITY; /* padded */
        int64_t idx =
            (((md[0] > 1 ? b : 0) * md[1] + (md[1] > 1 ? h : 0)) * md[2] + (md[2] > 1 ? i : 0)) *
                md[3] +
            j;
        if (p->mask_dt == VN_BOOL)
            bias = ((const uint8_t *)mask)[idx] ? 0.0 : -INFINITY;
        else
            bias = vn_cast_load_f64(p->mask_dt, mask, idx);
    }
    if (p->causal && j >= g->P && j - g->P > i) bias = -INFINITY;
    if (p->has_nonpad && j >= vn_cast_load_i64(VN_I64, nonpad, b)) bias = -INFINITY;
    return bias;
}

/* One query row: scores into s[0..T), probabilities in place, then Y. */
static void att_row(const att_plan *p, const vn_op_run_ctx *ctx, const void *K, const void *V,
                    double *s, int64_t b, int64_t h, int64_t i)
{
    const att_geom *g = &p->g;
    const void *Q = ctx->inputs[0].data;
    const void *mask = p->has_mask ? ctx->inputs[3].data : NULL;
    const void *nonpad = p->has_nonpad ? ctx->inputs[6].data : NULL;
    int64_t kh = h / (g->Hq / g->Hkv), qo = at(g, g->rank == 4, g->Hq, g->Sq, g->Dk, b, h, i);
    void *qk = ctx->num_outputs > 3 ? ctx->outputs[3].data : NULL;
    int64_t qko = ((b * g->Hq + h) * g->Sq + i) * g->T;
    double mx = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < g->T; j++) {
        int64_t ko = ((b * g->Hkv + kh) * g->T + j) * g->Dk;
        double dot = 0.0;
        for (int64_t d = 0; d < g->Dk; d++)
            dot += vn_cast_load_f64(p->dt, Q, qo + d) * vn_cast_load_f64(p->dt, K, ko + d);
        dot *= p->scale;
        if (p->softcap > 0) dot = p->softcap * tanh(dot / p->softcap);
        double biased = dot + mask_bias(p, mask, nonpad, b, h, i, j);
        if (qk && p->mode < 2) vn_cast_store_f64(p->dt, qk, qko + j, dot);
        if (qk && p->mode == 2) vn_cast_store_f64(p->dt, qk, qko + j, biased);
        s[j] = biased;
        mx = fmax(mx, biased);
    }
    for (int64_t j = 0; j < g->T; j++) sum += (s[j] = exp(s[j] - mx));
    for (int64_t j = 0; j < g->T; j++) {
        s[j] /= sum;
        if (qk && p->mode == 3) vn_cast_store_f64(p->dt, qk, qko + j, s[j]);
    }
    int64_t yo = at(g, g->rank == 4, g->Hq, g->Sq, g->Dv, b, h, i);
    for (int64_t d = 0; d < g->Dv; d++) {
        double acc = 0.0;
        for (int64_t j = 0; j < g->T; j++)
            acc += s[j] * vn_cast_load_f64(p->dt, V, ((b * g->Hkv + kh) * g->T + j) * g->Dv + d);
        vn_cast_store_f64(p->dt, ctx->outputs[0].data, yo + d, acc);
    }
}

static vn_status att_run(const vn_op_run_ctx *ctx)
{
    const att_plan *p = ctx->plan;
    const att_geom *g = &p->g;
    const void *pk = p->has_past ? ctx->inputs[4].data : NULL;
    const void *pv = p->has_past ? ctx->inputs[5].data : NULL;
    void *K = ctx->outputs[1].data, *V = ctx->outputs[2].data; /* present_key / value */
    concat_present(p, pk, ctx->inputs[1].data, g->Dk, K);
    concat_present(p, pv, ctx->inputs[2].data, g->Dv, V);
    for (int64_t b = 0; b < g->B; b++)
        for (int64_t h = 0; h < g->Hq; h++)
            for (int64_t i = 0; i < g->Sq; i++) att_row(p, ctx, K, V, ctx->workspace, b, h, i);
    return VN_OK;
}

static const vn_op_def def = {"Attention",     "",        3,           7,    4,
                              VN_DTYPES_FLOAT, att_infer, att_plan_fn, free, att_run};

const vn_op_def *const *vn_ops_attention_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&def};
    *count = 1;
    return ptrs;
}
