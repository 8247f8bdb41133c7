/*
 * shape_ops_util.c — attributes, constant inputs and axes for the ONNX
 * data-movement operators (see shape_ops.h).
 */
#include <string.h>

#include "ops/shape_ops.h"

vn_tensor_desc vn_so_desc(vn_dtype dtype, int32_t rank, const int64_t *dims)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dtype;
    d.rank = rank;
    for (int32_t i = 0; i < rank && dims; i++) d.dims[i] = dims[i];
    return d;
}

void vn_so_strides(const vn_tensor_desc *d, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t i = d->rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= d->dims[i];
    }
}

vn_status vn_so_check_int_vector(const vn_op_ctx *ctx, const char *where, int32_t i,
                                 const char *name)
{
    const vn_tensor_desc *t = &ctx->inputs[i];
    char buf[128];
    if (t->dtype != VN_I64 && t->dtype != VN_I32)
        return vn_error(VN_ERR_DTYPE, where, "input '%s' has dtype %s (int32 or int64 expected)",
                        name, vn_dtype_name(t->dtype));
    if (t->rank > 1)
        return vn_error(VN_ERR_SHAPE, where, "input '%s' %s must be a scalar or a 1-D tensor", name,
                        vn_desc_format(t, buf, sizeof buf));
    return VN_OK;
}

vn_status vn_so_const_ints(const vn_op_ctx *ctx, const char *where, int32_t i, const char *name,
                           int64_t *vals, int32_t max, int32_t *count)
{
    vn_status st = vn_so_check_int_vector(ctx, where, i, name);
    if (st != VN_OK) return st;
    const void *p = vn_so_const(ctx, i);
    if (!p)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "input %d '%s' must be a constant known at plan time (its values "
                        "decide the output shape)",
                        (int)i, name);
    int64_t n = vn_desc_numel(&ctx->inputs[i]);
    if (n > max)
        return vn_error(VN_ERR_SHAPE, where, "input '%s' has %lld values (at most %d)", name,
                        (long long)n, (int)max);
    for (int64_t k = 0; k < n; k++) vals[k] = vn_cast_load_i64(ctx->inputs[i].dtype, p, k);
    *count = (int32_t)n;
    return VN_OK;
}

vn_status vn_so_const_scalar(const vn_op_ctx *ctx, const char *where, int32_t i, const char *name,
                             double *out)
{
    char buf[128];
    const void *p = vn_so_const(ctx, i);
    if (vn_desc_numel(&ctx->inputs[i]) != 1)
        return vn_error(VN_ERR_SHAPE, where, "input '%s' %s must hold one value", name,
                        vn_desc_format(&ctx->inputs[i], buf, sizeof buf));
    if (!p)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "input %d '%s' must be a constant known at plan time", (int)i, name);
    *out = vn_cast_load_f64(ctx->inputs[i].dtype, p, 0);
    return VN_OK;
}

vn_status vn_so_attr_ints(const vn_op_ctx *ctx, const char *where, const char *name, int64_t *vals,
                          int32_t max, int32_t *count, bool *present)
{
    const vn_attr *a = vn_attrs_find(ctx->attrs, name);
    *count = 0;
    *present = a != NULL;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_INTS || (a->count > 0 && !a->ints))
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' must be a list of ints", name);
    if (a->count > max)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' has %d values (at most %d)",
                        name, (int)a->count, (int)max);
    for (int32_t k = 0; k < a->count; k++) vals[k] = a->ints[k];
    *count = a->count;
    return VN_OK;
}

vn_status vn_so_attr_int(const vn_op_ctx *ctx, const char *where, const char *name,
                         int64_t fallback, int64_t *out)
{
    if (vn_attrs_int(ctx->attrs, name, fallback, out) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' must be an int", name);
    return VN_OK;
}

vn_status vn_so_attr_string(const vn_op_ctx *ctx, const char *where, const char *name,
                            const char *fallback, const char **out)
{
    const vn_attr *a = vn_attrs_find(ctx->attrs, name);
    *out = fallback;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_STRING || !a->s)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' must be a string", name);
    *out = a->s;
    return VN_OK;
}

vn_status vn_so_axis(const char *where, const char *what, int64_t a, int32_t rank, int32_t *out)
{
    if (a < -rank || a >= rank)
        return vn_error(VN_ERR_INVALID_ARG, where, "%s %lld is out of range for rank %d", what,
                        (long long)a, (int)rank);
    *out = (int32_t)(a < 0 ? a + rank : a);
    return VN_OK;
}

vn_status vn_so_axes(const char *where, const char *what, const int64_t *axes, int32_t n,
                     int32_t rank, bool *mask)
{
    for (int32_t d = 0; d < rank; d++) mask[d] = false;
    for (int32_t k = 0; k < n; k++) {
        int32_t a;
        vn_status st = vn_so_axis(where, what, axes[k], rank, &a);
        if (st != VN_OK) return st;
        if (mask[a])
            return vn_error(VN_ERR_INVALID_ARG, where, "%s: axis %lld appears twice", what,
                            (long long)axes[k]);
        mask[a] = true;
    }
    return VN_OK;
}
