/*
 * optional.c — OptionalHasElement and OptionalGetElement (ONNX opset 18) on
 * what vinci has, plain tensors (optional and sequence values are not
 * vinci values; the loader refuses them before any operator runs):
 *   OptionalHasElement: a bool scalar, true when the input is given, false
 *     when it is absent (no input, or the empty name);
 *   OptionalGetElement: a tensor is its own element, so the input unchanged.
 */
#include <string.h>

#include "ops/extra.h"

static vn_status has_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    (void)ctx;
    *out = vn_so_desc(VN_BOOL, 0, NULL);
    return VN_OK;
}

static vn_status has_run(const vn_op_run_ctx *ctx)
{
    *(uint8_t *)ctx->outputs[0].data = ctx->num_inputs > 0 && ctx->inputs[0].desc.rank >= 0;
    return VN_OK;
}

static vn_status get_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    if (!vn_so_present(ctx, 0))
        return vn_error(VN_ERR_INVALID_ARG, where, "the input is empty: it has no element");
    *out = ctx->inputs[0];
    return VN_OK;
}

static vn_status get_run(const vn_op_run_ctx *ctx)
{
    const vn_tensor_desc *d = &ctx->outputs[0].desc;
    memcpy(ctx->outputs[0].data, ctx->inputs[0].data,
           (size_t)vn_desc_numel(d) * vn_dtype_size(d->dtype));
    return VN_OK;
}

const vn_op_def vn_optional_has_element_def = {
    "OptionalHasElement", "", 0, 1, 1, VN_DTYPES_ALL, has_infer, NULL, NULL, has_run};
const vn_op_def vn_optional_get_element_def = {
    "OptionalGetElement", "", 1, 1, 1, VN_DTYPES_ALL, get_infer, NULL, NULL, get_run};
