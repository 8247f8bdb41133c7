/*
 * compress.c — Compress (ONNX 9, 11): the slices of `input` along `axis`
 * (of the flattened input when axis is absent) whose entry of the 1-D
 * `condition` is true; entries past the condition's end count as false.
 * The count of true entries is the output's shape, so the condition must be
 * a constant; the copy is a view-engine gather along that axis.
 */
#include <stdlib.h>

#include "ops/extra.h"

typedef struct cmp_spec {
    int32_t axis; /* -1: flattened */
    int64_t len, kept;
} cmp_spec;

static vn_status cmp_spec_of(const vn_op_ctx *ctx, const char *where, cmp_spec *s)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *c = &ctx->inputs[1];
    const void *cond = vn_so_const(ctx, 1);
    const vn_attr *a = vn_attrs_find(ctx->attrs, "axis");
    vn_status st = VN_OK;
    s->axis = -1;
    if (a) st = vn_so_axis(where, "axis", a->i, x->rank, &s->axis);
    if (st != VN_OK) return st;
    if (c->rank != 1)
        return vn_error(VN_ERR_SHAPE, where, "condition must be 1-D, not rank %d", (int)c->rank);
    if (!cond)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "input 'condition' must be a constant known at plan time (its values "
                        "decide the output shape)");
    s->len = s->axis < 0 ? vn_desc_numel(x) : x->dims[s->axis];
    if (c->dims[0] > s->len)
        return vn_error(VN_ERR_SHAPE, where, "condition has %lld entries, the axis %lld",
                        (long long)c->dims[0], (long long)s->len);
    s->kept = 0;
    for (int64_t i = 0; i < c->dims[0]; i++) s->kept += vn_cast_load_f64(c->dtype, cond, i) != 0;
    return VN_OK;
}

static vn_status cmp_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    cmp_spec s;
    vn_status st = cmp_spec_of(ctx, where, &s);
    if (st != VN_OK) return st;
    if (s.axis < 0) {
        *out = vn_so_vec(ctx->inputs[0].dtype, s.kept);
        return VN_OK;
    }
    *out = ctx->inputs[0];
    out->dims[s.axis] = s.kept;
    return VN_OK;
}

static vn_status cmp_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                          size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    cmp_spec s;
    int64_t strides[VN_MAX_RANK];
    *workspace = 0;
    vn_status st = cmp_spec_of(ctx, where, &s);
    if (st != VN_OK) return st;
    vn_tensor_desc flat = vn_so_vec(x->dtype, s.len);
    const vn_tensor_desc *src = s.axis < 0 ? &flat : x;
    int32_t axis = s.axis < 0 ? 0 : s.axis;
    vn_so_strides(src, strides);
    vn_view *v = vn_view_new(where, src->rank, x->dtype);
    if (!v) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t d = 0; d < src->rank; d++)
        v->d[d].size = outputs[0].dims[d], v->d[d].stride = strides[d];
    int64_t *t = vn_view_table(where, v, axis);
    const void *cond = vn_so_const(ctx, 1);
    for (int64_t i = 0, k = 0; t && i < ctx->inputs[1].dims[0]; i++)
        if (vn_cast_load_f64(ctx->inputs[1].dtype, cond, i) != 0) t[k++] = i * strides[axis];
    st = t ? vn_view_finish(where, ctx->device, v) : VN_ERR_OUT_OF_MEMORY;
    if (st != VN_OK) {
        vn_view_free(v);
        return st;
    }
    *plan = v;
    return VN_OK;
}

const vn_op_def vn_compress_def = {
    "Compress", "", 2, 2, 1, VN_DTYPES_ALL, cmp_infer, cmp_plan, vn_view_free, vn_view_run};
