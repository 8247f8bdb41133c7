/*
 * batchnorm.c — BatchNormalization (inference): y = x * a[c] + b[c] with
 * a = scale / sqrt(var + eps) and b = B - mean * a, per channel c (dim 1).
 *
 * The per-channel factors are computed in double at run time (the statistics
 * are ordinary inputs; for constant ones the graph engine's O2 pass folds the
 * whole node into the preceding Conv instead), written to the workspace as
 * [1, C, 1, ...] tensors, and the fused element-wise kernel does the rest in
 * one pass over x: {MUL r3 = r0, r1; ADD r4 = r3, r2} with broadcasting.
 *
 * Training mode (training_mode = 1, or the running-statistics outputs) is not
 * inference and is refused; so is opset < 7's spatial = 0.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/fused.h"

enum { BN_X = 0, BN_SCALE, BN_B, BN_MEAN, BN_VAR, BN_INPUTS };

typedef struct bn_plan {
    vn_fused_plan *fused;
    vn_tensor_desc param; /* [1, C, 1, ...]: the shape of a and b */
    double eps;
} bn_plan;

static vn_status check_attrs(const vn_op_ctx *ctx, const char *where, double *eps)
{
    int64_t training = 0, spatial = 1;
    vn_status st = vn_attrs_float(ctx->attrs, "epsilon", 1e-5, eps);
    if (st == VN_OK) st = vn_attrs_int(ctx->attrs, "training_mode", 0, &training);
    if (st == VN_OK) st = vn_attrs_int(ctx->attrs, "spatial", 1, &spatial);
    if (st != VN_OK) return st;
    if (training) return vn_error(VN_ERR_UNSUPPORTED, where, "training_mode = 1 is not inference");
    if (!spatial)
        return vn_error(VN_ERR_UNSUPPORTED, where, "spatial = 0 (per-element statistics)");
    return VN_OK;
}

static vn_status bn_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    double eps;
    vn_status st = check_attrs(ctx, where, &eps);
    if (st != VN_OK) return st;
    const vn_tensor_desc *x = &ctx->inputs[BN_X];
    if (x->rank < 2)
        return vn_error(VN_ERR_SHAPE, where, "X has rank %d; it needs [N, C, ...]", (int)x->rank);
    for (int32_t i = BN_SCALE; i < BN_INPUTS; i++) {
        const vn_tensor_desc *p = &ctx->inputs[i];
        if (p->rank != 1 || p->dims[0] != x->dims[1]) {
            char a[96], b[96];
            return vn_error(VN_ERR_SHAPE, where, "input %d is %s; X %s needs [%lld]", (int)i,
                            vn_desc_format(p, a, sizeof a), vn_desc_format(x, b, sizeof b),
                            (long long)x->dims[1]);
        }
        if (!(VN_DTYPES_FLOAT & VN_DTYPE_BIT(p->dtype)))
            return vn_error(VN_ERR_DTYPE, where, "input %d is %s (a float dtype is needed)", (int)i,
                            vn_dtype_name(p->dtype));
    }
    *out = *x;
    return VN_OK;
}

static vn_status bn_plan_make(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                              size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    bn_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "cannot allocate the plan");
    vn_status st = check_attrs(ctx, where, &p->eps);
    const vn_tensor_desc *x = &ctx->inputs[BN_X];
    p->param = *x;
    p->param.dims[0] = 1;
    for (int32_t d = 2; d < x->rank; d++) p->param.dims[d] = 1;
    vn_fused_program prog = {3, 2, {{VN_VOP_MUL, 0, 1, 0.0}, {VN_VOP_ADD, 3, 2, 0.0}}};
    vn_tensor_desc in[3] = {*x, p->param, p->param};
    if (st == VN_OK)
        st = vn_fused_plan_build(where, ctx->device, &prog, in, 3, &outputs[0], &p->fused);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *workspace = 2 * (size_t)x->dims[1] * vn_dtype_size(x->dtype) + 64;
    *data = p;
    return VN_OK;
}

static void bn_plan_free(void *data)
{
    bn_plan *p = data;
    if (!p) return;
    vn_fused_plan_free(p->fused);
    free(p);
}

static double load(const vn_tensor *t, int64_t i)
{
    switch (t->desc.dtype) {
    case VN_F16:
        return vn_f16_to_f32(((const uint16_t *)t->data)[i]);
    case VN_BF16:
        return vn_bf16_to_f32(((const uint16_t *)t->data)[i]);
    default:
        return ((const float *)t->data)[i];
    }
}

static void store(vn_dtype dt, void *p, int64_t i, double v)
{
    if (dt == VN_F16)
        ((uint16_t *)p)[i] = vn_f32_to_f16((float)v);
    else if (dt == VN_BF16)
        ((uint16_t *)p)[i] = vn_f32_to_bf16((float)v);
    else
        ((float *)p)[i] = (float)v;
}

static vn_status bn_run(const vn_op_run_ctx *ctx)
{
    const bn_plan *p = ctx->plan;
    const vn_tensor *in = ctx->inputs;
    vn_dtype dt = in[BN_X].desc.dtype;
    int64_t channels = p->param.dims[1];
    uint8_t *ws = (uint8_t *)(((uintptr_t)ctx->workspace + 63) & ~(uintptr_t)63);
    void *a = ws, *b = ws + channels * (int64_t)vn_dtype_size(dt);
    for (int64_t c = 0; c < channels; c++) {
        double k = load(&in[BN_SCALE], c) / sqrt(load(&in[BN_VAR], c) + p->eps);
        store(dt, a, c, k);
        store(dt, b, c, load(&in[BN_B], c) - load(&in[BN_MEAN], c) * k);
    }
    vn_tensor fused_in[3] = {in[BN_X], {p->param, a}, {p->param, b}};
    return vn_fused_execute(ctx->device, p->fused, fused_in, &ctx->outputs[0], ctx->counters);
}

static const vn_op_def batchnorm = {
    "BatchNormalization", "",       BN_INPUTS,    BN_INPUTS,    1,
    VN_DTYPES_FLOAT,      bn_infer, bn_plan_make, bn_plan_free, bn_run,
};

const vn_op_def *const *vn_ops_batchnorm_table(int32_t *count)
{
    static const vn_op_def *const table[] = {&batchnorm};
    *count = 1;
    return table;
}
