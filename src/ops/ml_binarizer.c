/*
 * ml_binarizer.c — ai.onnx.ml Binarizer (opset 1): y = x > threshold ? 1 : 0
 * element-wise, in x's dtype (NaN is not above any threshold, so 0).
 */
#include <stdlib.h>

#include "ops/extra.h"

static vn_status bin_threshold(const vn_op_ctx *ctx, double *t)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    if (vn_attrs_float(ctx->attrs, "threshold", 0.0, t) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'threshold' must be a float");
    return VN_OK;
}

static vn_status bin_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    double t;
    *out = ctx->inputs[0];
    return bin_threshold(ctx, &t);
}

static vn_status bin_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                          size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    double *t = malloc(sizeof *t);
    *workspace = 0;
    if (!t) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = bin_threshold(ctx, t);
    if (st != VN_OK) {
        free(t);
        return st;
    }
    *data = t;
    return VN_OK;
}

static vn_status bin_run(const vn_op_run_ctx *ctx)
{
    double t = *(const double *)ctx->plan;
    const vn_tensor *x = &ctx->inputs[0];
    vn_dtype dt = x->desc.dtype;
    for (int64_t i = 0, n = vn_desc_numel(&x->desc); i < n; i++)
        vn_cast_store_f64(dt, ctx->outputs[0].data, i, vn_cast_load_f64(dt, x->data, i) > t);
    return VN_OK;
}

const vn_op_def vn_binarizer_def = {
    "Binarizer", "ai.onnx.ml", 1,    1,      1, VN_DTYPES_FLOAT | VN_DTYPES_F64 | VN_DTYPES_INT,
    bin_infer,   bin_plan,     free, bin_run};
