/*
 * center_crop_pad.c — CenterCropPad (ONNX 18): each listed axis cropped or
 * zero-padded to the given length around its centre (the odd element goes to
 * the end). A view-engine gather: output index i of an axis reads source
 * i + crop_start - pad_start, padding (zero) where that falls outside.
 */
#include <stdlib.h>

#include "ops/extra.h"

/* Output length per axis from the constant `shape` input and `axes`. */
static vn_status ccp_shape(const vn_op_ctx *ctx, const char *where, int64_t *out)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t shape[VN_MAX_RANK], raw[VN_MAX_RANK];
    int32_t n = 0, na = 0, axis;
    bool present = false, mask[VN_MAX_RANK] = {false};
    vn_status st = vn_so_const_ints(ctx, where, 1, "shape", shape, VN_MAX_RANK, &n);
    if (st == VN_OK) st = vn_so_attr_ints(ctx, where, "axes", raw, VN_MAX_RANK, &na, &present);
    if (st == VN_OK && present) st = vn_so_axes(where, "axes", raw, na, x->rank, mask);
    if (st != VN_OK) return st;
    if (!present) na = x->rank;
    if (n != na)
        return vn_error(VN_ERR_SHAPE, where, "'shape' has %d values for %d axes", (int)n, (int)na);
    for (int32_t d = 0; d < x->rank; d++) out[d] = x->dims[d];
    for (int32_t k = 0; k < na; k++) {
        axis = k;
        if (present) st = vn_so_axis(where, "axes", raw[k], x->rank, &axis);
        if (st == VN_OK && shape[k] < 0)
            st = vn_error(VN_ERR_INVALID_ARG, where, "negative length %lld", (long long)shape[k]);
        if (st != VN_OK) return st;
        out[axis] = shape[k];
    }
    return VN_OK;
}

static vn_status ccp_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    *out = ctx->inputs[0];
    return ccp_shape(ctx, where, out->dims);
}

static vn_status ccp_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                          size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t strides[VN_MAX_RANK];
    *workspace = 0;
    vn_so_strides(x, strides);
    vn_view *v = vn_view_new(where, x->rank, x->dtype);
    if (!v) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t d = 0; d < x->rank; d++) {
        int64_t in = x->dims[d], out = outputs[0].dims[d];
        int64_t shift = in > out ? (in - out) / 2 : -((out - in) / 2);
        v->d[d].size = out;
        int64_t *t = vn_view_table(where, v, d);
        if (!t) {
            vn_view_free(v);
            return VN_ERR_OUT_OF_MEMORY;
        }
        for (int64_t i = 0; i < out; i++) {
            int64_t s = i + shift;
            t[i] = s < 0 || s >= in ? -1 : s * strides[d];
        }
    }
    vn_status st = vn_view_finish(where, ctx->device, v);
    if (st != VN_OK) {
        vn_view_free(v);
        return st;
    }
    *plan = v;
    return VN_OK;
}

const vn_op_def vn_center_crop_pad_def = {
    "CenterCropPad", "", 2, 2, 1, VN_DTYPES_ALL, ccp_infer, ccp_plan, vn_view_free, vn_view_run};
