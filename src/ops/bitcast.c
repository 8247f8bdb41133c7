/*
 * bitcast.c — BitCast (ONNX opset 26): the input's bytes reinterpreted as
 * the dtype named by `to` (an ONNX TensorProto code), same shape. ONNX
 * requires the two dtypes to have one bit width (bool is 8 bits); vinci's
 * tensors are little endian, as ONNX specifies, so the run is one copy.
 */
#include <string.h>

#include "ops/extra.h"

static vn_status bc_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t code;
    vn_status st = vn_so_attr_int(ctx, where, "to", -1, &code);
    if (st != VN_OK) return st;
    int32_t to = vn_cast_dtype_from_onnx(code);
    if (to < 0)
        return vn_error(VN_ERR_UNSUPPORTED, where, "'to' = %lld: no such vinci dtype",
                        (long long)code);
    vn_dtype from = ctx->inputs[0].dtype;
    if (vn_dtype_size((vn_dtype)to) != vn_dtype_size(from))
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "%s (%d bytes) cannot be reinterpreted as %s (%d bytes): the widths "
                        "must match",
                        vn_dtype_name(from), (int)vn_dtype_size(from), vn_dtype_name((vn_dtype)to),
                        (int)vn_dtype_size((vn_dtype)to));
    *out = ctx->inputs[0];
    out->dtype = (vn_dtype)to;
    return VN_OK;
}

static vn_status bc_run(const vn_op_run_ctx *ctx)
{
    const vn_tensor_desc *d = &ctx->outputs[0].desc;
    memcpy(ctx->outputs[0].data, ctx->inputs[0].data,
           (size_t)vn_desc_numel(d) * vn_dtype_size(d->dtype));
    return VN_OK;
}

const vn_op_def vn_bitcast_def = {"BitCast",     "",       1,    1,    1,
                                  VN_DTYPES_ALL, bc_infer, NULL, NULL, bc_run};
