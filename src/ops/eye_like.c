/*
 * eye_like.c — EyeLike (ONNX 9, 22): a 2-D tensor of the input's shape with
 * ones on diagonal k (column = row + k) and zeros elsewhere. The output has
 * the input's dtype unless the `dtype` attribute (an ONNX TensorProto code,
 * read through Cast's map) names another.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

/* The output dtype: the input's, or the `dtype` attribute's. */
static vn_status ey_dtype(const vn_op_ctx *ctx, const char *where, vn_dtype *out)
{
    int64_t code;
    *out = ctx->inputs[0].dtype;
    vn_status st = vn_so_attr_int(ctx, where, "dtype", -1, &code);
    if (st != VN_OK || code < 0) return st;
    int32_t dt = vn_cast_dtype_from_onnx(code);
    if (dt < 0)
        return vn_error(VN_ERR_UNSUPPORTED, where, "'dtype' = %lld: no such vinci dtype",
                        (long long)code);
    *out = (vn_dtype)dt;
    return VN_OK;
}

static vn_status ey_check(const vn_op_ctx *ctx, const char *where, int64_t *k)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    if (x->rank != 2)
        return vn_error(VN_ERR_SHAPE, where, "input must be 2-D, not rank %d", (int)x->rank);
    return vn_so_attr_int(ctx, where, "k", 0, k);
}

static vn_status ey_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t k;
    *out = ctx->inputs[0];
    vn_status st = ey_check(ctx, where, &k);
    return st == VN_OK ? ey_dtype(ctx, where, &out->dtype) : st;
}

static vn_status ey_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                         size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t *k = malloc(sizeof *k);
    *workspace = 0;
    if (!k) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = ey_check(ctx, where, k);
    if (st != VN_OK) {
        free(k);
        return st;
    }
    *plan = k;
    return VN_OK;
}

static vn_status ey_run(const vn_op_run_ctx *ctx)
{
    int64_t k = *(const int64_t *)ctx->plan;
    const vn_tensor_desc *d = &ctx->outputs[0].desc;
    memset(ctx->outputs[0].data, 0, (size_t)vn_desc_numel(d) * vn_dtype_size(d->dtype));
    for (int64_t r = 0; r < d->dims[0]; r++)
        if (r + k >= 0 && r + k < d->dims[1])
            vn_cast_store_f64(d->dtype, ctx->outputs[0].data, r * d->dims[1] + r + k, 1.0);
    return VN_OK;
}

const vn_op_def vn_eye_like_def = {"EyeLike",     "",       1,       1,    1,
                                   VN_DTYPES_ALL, ey_infer, ey_plan, free, ey_run};
