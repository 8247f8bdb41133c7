/*
 * ml_array_feature_extractor.c — ai.onnx.ml ArrayFeatureExtractor (opset 1):
 * Y[..., j] = X[..., idx[j]], the indices (i64, any shape, flattened) picked
 * on X's last axis. A 1-D X gives [1, n], as onnxruntime and the ONNX
 * reference do. Indices are read at run time; negative ones count from the
 * end, out-of-range ones are an error.
 */
#include <string.h>

#include "ops/extra.h"

static vn_status afe_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0], *y = &ctx->inputs[1];
    if (x->rank < 1) return vn_error(VN_ERR_SHAPE, where, "X must have rank >= 1 (a scalar)");
    if (y->dtype != VN_I64)
        return vn_error(VN_ERR_DTYPE, where, "the indices are %s, not i64",
                        vn_dtype_name(y->dtype));
    *out = *x;
    if (x->rank == 1) {
        out->rank = 2;
        out->dims[0] = 1;
    }
    out->dims[out->rank - 1] = vn_desc_numel(y);
    return VN_OK;
}

static vn_status afe_run(const vn_op_run_ctx *ctx)
{
    const vn_tensor *x = &ctx->inputs[0], *y = &ctx->inputs[1];
    int64_t last = x->desc.dims[x->desc.rank - 1], rows = 1;
    for (int32_t d = 0; d + 1 < x->desc.rank; d++) rows *= x->desc.dims[d];
    int64_t n = vn_desc_numel(&y->desc);
    size_t es = vn_dtype_size(x->desc.dtype);
    const int64_t *idx = y->data;
    for (int64_t j = 0; j < n; j++)
        if (idx[j] < -last || idx[j] >= last)
            return vn_error(VN_ERR_INVALID_ARG, "ArrayFeatureExtractor",
                            "index %lld (entry %lld) is outside X's last axis of %lld",
                            (long long)idx[j], (long long)j, (long long)last);
    const uint8_t *src = x->data;
    uint8_t *dst = ctx->outputs[0].data;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) {
            int64_t k = idx[j] < 0 ? idx[j] + last : idx[j];
            memcpy(dst + (size_t)(r * n + j) * es, src + (size_t)(r * last + k) * es, es);
        }
    return VN_OK;
}

const vn_op_def vn_array_feature_extractor_def = {
    "ArrayFeatureExtractor", "ai.onnx.ml", 2, 2, 1, VN_DTYPES_ALL, afe_infer, NULL, NULL, afe_run};
