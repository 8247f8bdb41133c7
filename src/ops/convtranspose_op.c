/*
 * convtranspose_op.c — the ConvTranspose operator: inputs X, W, optional B;
 * the plan holds one GEMM plan (shared by the groups, whose operands are
 * offsets into X, W and the workspace) and the col2im tiling; the workspace
 * holds col = W_g^T x X_g for every image and group, N x M x kD*kH*kW x
 * D*H*W floats (1-D and 2-D: D, H and their kernel sizes are 1).
 *
 * GEMM per group g, batched over the N images:
 *   A = W_g^T  ([Mg*kk] x Cg, kk = kD*kH*kW; W_g is stored Cg x Mg*kk, so
 *              trans_a, and stride 0 between images: the same weights),
 *   B = X_g    (Cg x hw, hw = D*H*W, images C*hw apart),
 *   C = col_g  ([Mg*kk] x hw, images G*Mg*kk*hw apart).
 */
#include <stdlib.h>

#include "ops/convtranspose.h"

static bool has_bias(const vn_op_ctx *ctx)
{
    return ctx->num_inputs > 2 && ctx->inputs[2].rank >= 0;
}

static vn_status convt_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_convt_geom g;
    vn_status st = vn_convt_geom_make(where, ctx->attrs, &ctx->inputs[0], &ctx->inputs[1],
                                      has_bias(ctx) ? &ctx->inputs[2] : NULL, &g);
    if (st != VN_OK) return st;
    outputs[0] = ctx->inputs[0];
    outputs[0].dims[1] = g.M;
    for (int32_t i = 0; i < g.nsp; i++) outputs[0].dims[2 + i] = g.out[VN_CONVT_DIMS - g.nsp + i];
    return VN_OK;
}

static vn_status make_gemm(const char *where, vn_device *device, vn_convt_plan *p)
{
    const vn_convt_geom *g = &p->g;
    int64_t rows = g->Mg * p->kk;
    vn_gemm_desc d = vn_gemm_desc_default(rows, p->hw, g->Cg);
    d.trans_a = true;
    d.lda = rows;
    d.ldb = p->hw;
    d.ldc = p->hw;
    d.batch = g->N;
    d.stride_a = 0;
    d.stride_b = g->C * p->hw;
    d.stride_c = g->G * rows * p->hw;
    vn_status st = vn_gemm_plan_create(device, &d, &p->gemm);
    if (st != VN_OK)
        return vn_error(st, where, "the GEMM of %lld x %lld x %lld failed to plan", (long long)rows,
                        (long long)p->hw, (long long)g->Cg);
    return VN_OK;
}

static void convt_plan_free(void *data)
{
    vn_convt_plan *p = data;
    if (!p) return;
    vn_gemm_plan_destroy(p->gemm);
    free(p->iw_lo);
    free(p->iw_hi);
    free(p);
}

static vn_status convt_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                            size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_convt_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = vn_convt_geom_make(where, ctx->attrs, &ctx->inputs[0], &ctx->inputs[1],
                                      has_bias(ctx) ? &ctx->inputs[2] : NULL, &p->g);
    const vn_convt_geom *g = &p->g;
    p->has_bias = has_bias(ctx);
    p->kk = p->hw = 1;
    for (int32_t i = 0; i < VN_CONVT_DIMS; i++) {
        p->kk *= g->k[i];
        p->hw *= g->in[i];
    }
    bool empty = vn_desc_numel(&outputs[0]) == 0;
    bool no_product = g->N == 0 || g->Cg == 0 || p->hw == 0 || g->Mg == 0;
    if (st == VN_OK && !empty && !no_product) st = make_gemm(where, ctx->device, p);
    if (st == VN_OK && !empty) st = vn_convt_col2im_plan(where, ctx->device, p);
    if (st != VN_OK) {
        convt_plan_free(p);
        return st;
    }
    *data = p;
    *workspace = p->gemm ? (size_t)(g->N * g->M * p->kk * p->hw) * sizeof(float) : 0;
    return VN_OK;
}

static vn_status convt_run(const vn_op_run_ctx *ctx)
{
    const vn_convt_plan *p = ctx->plan;
    const vn_convt_geom *g = &p->g;
    const float *x = ctx->inputs[0].data, *w = ctx->inputs[1].data;
    const float *bias = p->has_bias ? ctx->inputs[2].data : NULL;
    float *col = ctx->workspace;
    /* no input element (C or H*W is 0): the output is the bias alone */
    if (!p->gemm)
        return vn_convt_col2im(ctx->device, p, NULL, bias, ctx->outputs[0].data, ctx->counters);
    int64_t rows = g->Mg * p->kk;
    for (int64_t grp = 0; grp < g->G; grp++) {
        vn_gemm_args a = {.a = w + grp * g->Cg * rows,
                          .b = x + grp * g->Cg * p->hw,
                          .c = col + grp * rows * p->hw};
        vn_status st = vn_gemm_run(p->gemm, &a);
        if (st != VN_OK) return st;
    }
    return vn_convt_col2im(ctx->device, p, col, bias, ctx->outputs[0].data, ctx->counters);
}

static const vn_op_def convt_def = {
    "ConvTranspose", "",        2, 3, 1, VN_DTYPE_BIT(VN_F32), convt_infer, convt_plan,
    convt_plan_free, convt_run,
};

const vn_op_def *const *vn_ops_convtranspose_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&convt_def};
    *count = 1;
    return ptrs;
}
