/*
 * shape_ops_reshape.c — the operators that keep the bytes and change only
 * the shape: Reshape, Flatten, Squeeze, Unsqueeze, Identity, and Dropout in
 * inference (an identity, with an all-true mask when asked for).
 * Their run is one contiguous copy (none when the output is the input).
 */
#include <stdio.h>
#include <string.h>

#include "ops/shape_ops.h"

static vn_status copy_run(const vn_op_run_ctx *ctx)
{
    const vn_tensor *x = &ctx->inputs[0];
    int64_t bytes = vn_desc_numel(&x->desc) * (int64_t)vn_dtype_size(x->desc.dtype);
    return vn_so_copy(ctx->device, x->data, ctx->outputs[0].data, bytes, ctx->counters);
}

static vn_status shape_error(const char *where, const vn_tensor_desc *x, const char *fmt,
                             long long a)
{
    char buf[128], msg[160];
    snprintf(msg, sizeof msg, fmt, a);
    return vn_error(VN_ERR_SHAPE, where, "%s (input %s)", msg, vn_desc_format(x, buf, sizeof buf));
}

/* ---- Reshape ----------------------------------------------------------------------- */

/* Resolve 0 (copy the input dim, unless allowzero) and one -1 (inferred). */
static vn_status reshape_dims(const char *where, const vn_tensor_desc *x, const int64_t *shape,
                              int32_t n, bool allowzero, vn_tensor_desc *y)
{
    int32_t infer_at = -1;
    int64_t known = 1;
    *y = vn_so_desc(x->dtype, n, shape);
    for (int32_t d = 0; d < n; d++) {
        if (shape[d] == 0 && !allowzero) {
            if (d >= x->rank)
                return shape_error(where, x, "shape[%lld] is 0 past the input rank", d);
            y->dims[d] = x->dims[d];
        } else if (shape[d] == -1) {
            if (infer_at >= 0) return shape_error(where, x, "shape has two -1 (second at %lld)", d);
            infer_at = d;
            continue;
        } else if (shape[d] < -1) {
            return shape_error(where, x, "shape value %lld is negative", shape[d]);
        }
        known *= y->dims[d];
    }
    int64_t numel = vn_desc_numel(x);
    if (infer_at >= 0) {
        if (known == 0)
            return shape_error(where, x, "cannot infer the -1 dim: other dims hold %lld elements",
                               0);
        if (numel % known)
            return shape_error(where, x, "cannot infer the -1 dim from %lld known elements", known);
        y->dims[infer_at] = numel / known;
    } else if (known != numel) {
        return shape_error(where, x, "the new shape holds %lld elements", known);
    }
    return VN_OK;
}

static vn_status reshape_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t shape[VN_MAX_RANK + 1], allowzero;
    int32_t n = 0;
    vn_status st = vn_so_const_ints(ctx, where, 1, "shape", shape, VN_MAX_RANK, &n);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "allowzero", 0, &allowzero);
    if (st != VN_OK) return st;
    if (allowzero) {
        bool zero = false, minus = false;
        for (int32_t d = 0; d < n; d++) zero |= shape[d] == 0, minus |= shape[d] == -1;
        if (zero && minus)
            return vn_error(VN_ERR_INVALID_ARG, where, "allowzero=1 with both 0 and -1 in shape");
    }
    return reshape_dims(where, &ctx->inputs[0], shape, n, allowzero != 0, out);
}

/* ---- Flatten ----------------------------------------------------------------------- */

static vn_status flatten_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t axis, dims[2] = {1, 1};
    vn_status st = vn_so_attr_int(ctx, where, "axis", 1, &axis);
    if (st != VN_OK) return st;
    if (axis < -x->rank || axis > x->rank)
        return shape_error(where, x, "axis %lld is out of range [-rank, rank]", axis);
    if (axis < 0) axis += x->rank;
    for (int32_t d = 0; d < x->rank; d++) dims[d >= axis] *= x->dims[d];
    *out = vn_so_desc(x->dtype, 2, dims);
    return VN_OK;
}

/* ---- Squeeze / Unsqueeze ------------------------------------------------------------- */

/* axes from input 1 (opset 13+) or the attribute (earlier opsets). */
static vn_status get_axes(const vn_op_ctx *ctx, const char *where, int64_t *axes, int32_t *n,
                          bool *given)
{
    if (vn_so_present(ctx, 1)) {
        *given = true;
        return vn_so_const_ints(ctx, where, 1, "axes", axes, 2 * VN_MAX_RANK, n);
    }
    return vn_so_attr_ints(ctx, where, "axes", axes, 2 * VN_MAX_RANK, n, given);
}

static vn_status squeeze_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t axes[2 * VN_MAX_RANK];
    int32_t n = 0;
    bool given = false, mask[VN_MAX_RANK];
    vn_status st = get_axes(ctx, where, axes, &n, &given);
    if (st == VN_OK) st = vn_so_axes(where, "axes", axes, n, x->rank, mask);
    if (st != VN_OK) return st;
    *out = vn_so_desc(x->dtype, 0, NULL);
    for (int32_t d = 0; d < x->rank; d++) {
        bool drop = given && n > 0 ? mask[d] : x->dims[d] == 1;
        if (drop && x->dims[d] != 1)
            return shape_error(where, x, "cannot squeeze dim %lld: its size is not 1", d);
        if (!drop) out->dims[out->rank++] = x->dims[d];
    }
    return VN_OK;
}

static vn_status unsqueeze_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t axes[2 * VN_MAX_RANK];
    int32_t n = 0;
    bool given = false, mask[2 * VN_MAX_RANK];
    vn_status st = get_axes(ctx, where, axes, &n, &given);
    if (st != VN_OK) return st;
    if (!given || n == 0) return vn_error(VN_ERR_INVALID_ARG, where, "'axes' is required");
    int32_t rank = x->rank + n;
    if (rank > VN_MAX_RANK) return shape_error(where, x, "the output would have rank %lld", rank);
    st = vn_so_axes(where, "axes", axes, n, rank, mask);
    if (st != VN_OK) return st;
    *out = vn_so_desc(x->dtype, rank, NULL);
    for (int32_t d = 0, k = 0; d < rank; d++) out->dims[d] = mask[d] ? 1 : x->dims[k++];
    return VN_OK;
}

/* ---- Identity / Dropout -------------------------------------------------------------- */

static vn_status identity_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    out[0] = ctx->inputs[0];
    return VN_OK;
}

/* Inference only: training_mode, when given, must be a constant false
 * (or the ratio a constant 0, which is an identity too). */
static vn_status dropout_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    if (vn_so_present(ctx, 2)) {
        double training = 0, ratio = 0.5;
        vn_status st = vn_so_const_scalar(ctx, where, 2, "training_mode", &training);
        if (st != VN_OK) return st;
        if (training != 0 && vn_so_present(ctx, 1))
            st = vn_so_const_scalar(ctx, where, 1, "ratio", &ratio);
        if (st != VN_OK) return st;
        if (training != 0 && ratio != 0)
            return vn_error(VN_ERR_UNSUPPORTED, where,
                            "training mode (random dropout) is not supported");
    }
    out[0] = ctx->inputs[0];
    out[1] = ctx->inputs[0];
    out[1].dtype = VN_BOOL;
    return VN_OK;
}

static vn_status dropout_run(const vn_op_run_ctx *ctx)
{
    if (ctx->num_outputs > 1 && ctx->outputs[1].data)
        memset(ctx->outputs[1].data, 1, (size_t)vn_desc_numel(&ctx->outputs[1].desc));
    return copy_run(ctx);
}

#define COPY_OP(name, lo, hi, nout, infer, run)                                                    \
    {                                                                                              \
        name, "", lo, hi, nout, VN_DTYPES_ALL, infer, NULL, NULL, run                              \
    }

const vn_op_def vn_so_reshape_defs[] = {
    COPY_OP("Reshape", 2, 2, 1, reshape_infer, copy_run),
    COPY_OP("Flatten", 1, 1, 1, flatten_infer, copy_run),
    COPY_OP("Squeeze", 1, 2, 1, squeeze_infer, copy_run),
    COPY_OP("Unsqueeze", 1, 2, 1, unsqueeze_infer, copy_run),
    COPY_OP("Identity", 1, 1, 1, identity_infer, copy_run),
    COPY_OP("Dropout", 1, 3, 2, dropout_infer, dropout_run),
};
const int32_t vn_so_reshape_count = sizeof vn_so_reshape_defs / sizeof vn_so_reshape_defs[0];
