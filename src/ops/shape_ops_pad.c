/*
 * shape_ops_pad.c — Pad (opset 2 attributes; opset 11+ inputs pads,
 * constant_value, axes (18+)); modes constant, reflect, edge, wrap.
 * Negative pads crop. A pad is a view with one table per dim: output index
 * i reads source index i - pad_begin, mapped back into [0, dim) by the
 * mode, or padding (-1) in constant mode.
 *
 * The constant value may be a runtime input: the run then copies the view
 * (its tables are shared, read-only) with the value read from the input.
 */
#include <string.h>

#include "ops/shape_ops.h"

typedef enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP } pad_mode;

typedef struct pad_spec {
    int64_t begin[VN_MAX_RANK], end[VN_MAX_RANK];
    pad_mode mode;
} pad_spec;

static vn_status get_mode(const vn_op_ctx *ctx, const char *where, pad_mode *mode)
{
    static const char *const names[] = {"constant", "reflect", "edge", "wrap"};
    const char *s;
    vn_status st = vn_so_attr_string(ctx, where, "mode", "constant", &s);
    if (st != VN_OK) return st;
    for (int32_t m = 0; m < 4; m++)
        if (strcmp(s, names[m]) == 0) {
            *mode = (pad_mode)m;
            return VN_OK;
        }
    return vn_error(VN_ERR_INVALID_ARG, where, "mode \"%s\" (constant, reflect, edge or wrap)", s);
}

static vn_status get_spec(const vn_op_ctx *ctx, const char *where, pad_spec *s)
{
    int32_t rank = ctx->inputs[0].rank, n = 0, na = 0;
    int64_t pads[2 * VN_MAX_RANK], axes[VN_MAX_RANK];
    bool given = true, mask[VN_MAX_RANK];
    vn_status st = get_mode(ctx, where, &s->mode);
    if (st != VN_OK) return st;
    if (ctx->num_inputs == 1)
        st = vn_so_attr_ints(ctx, where, "pads", pads, 2 * VN_MAX_RANK, &n, &given);
    else
        st = vn_so_const_ints(ctx, where, 1, "pads", pads, 2 * VN_MAX_RANK, &n);
    if (st == VN_OK && vn_so_present(ctx, 3))
        st = vn_so_const_ints(ctx, where, 3, "axes", axes, VN_MAX_RANK, &na);
    else
        for (na = 0; na < rank; na++) axes[na] = na;
    if (st == VN_OK) st = vn_so_axes(where, "axes", axes, na, rank, mask);
    if (st != VN_OK) return st;
    if (!given || n != 2 * na)
        return vn_error(VN_ERR_INVALID_ARG, where, "'pads' has %d values, %d expected", (int)n,
                        (int)(2 * na));
    memset(s->begin, 0, sizeof s->begin);
    memset(s->end, 0, sizeof s->end);
    for (int32_t k = 0; k < na; k++) {
        int32_t a = (int32_t)(axes[k] < 0 ? axes[k] + rank : axes[k]);
        s->begin[a] = pads[k];
        s->end[a] = pads[na + k];
    }
    return VN_OK;
}

static vn_status pad_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX], buf[128];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    pad_spec s;
    vn_status st = get_spec(ctx, where, &s);
    if (st != VN_OK) return st;
    if (vn_so_present(ctx, 2) && ctx->inputs[2].dtype != x->dtype)
        return vn_error(VN_ERR_DTYPE, where, "constant_value is %s, data is %s",
                        vn_dtype_name(ctx->inputs[2].dtype), vn_dtype_name(x->dtype));
    *out = *x;
    for (int32_t d = 0; d < x->rank; d++) {
        out->dims[d] = x->dims[d] + s.begin[d] + s.end[d];
        if (out->dims[d] < 0)
            return vn_error(VN_ERR_SHAPE, where, "pads crop dim %d of %s below 0", (int)d,
                            vn_desc_format(x, buf, sizeof buf));
        if (s.mode != PAD_CONSTANT && x->dims[d] == 0 && out->dims[d] > 0)
            return vn_error(VN_ERR_SHAPE, where, "cannot pad the empty dim %d of %s in this mode",
                            (int)d, vn_desc_format(x, buf, sizeof buf));
    }
    return VN_OK;
}

/* Source index of output index j - begin, or -1 (constant padding). */
static int64_t map_index(pad_mode mode, int64_t j, int64_t dim)
{
    if (j >= 0 && j < dim) return j;
    switch (mode) {
    case PAD_EDGE:
        return j < 0 ? 0 : dim - 1;
    case PAD_WRAP:
        return (j % dim + dim) % dim;
    case PAD_REFLECT: {
        if (dim == 1) return 0;
        int64_t p = 2 * (dim - 1);
        j = (j % p + p) % p;
        return j < dim ? j : p - j;
    }
    default:
        return -1;
    }
}

static void store_pad(vn_view *v, vn_dtype dtype, double value)
{
    vn_cast_store_f64(dtype, v->pad, 0, value);
}

static vn_status pad_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                          size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    pad_spec s;
    int64_t strides[VN_MAX_RANK];
    double value = 0;
    *workspace = 0;
    vn_status st = get_spec(ctx, where, &s);
    if (st == VN_OK && ctx->num_inputs == 1) st = vn_attrs_float(ctx->attrs, "value", 0.0, &value);
    if (st != VN_OK) return st;
    vn_so_strides(x, strides);
    vn_view *v = vn_view_new(where, x->rank, x->dtype);
    if (!v) return VN_ERR_OUT_OF_MEMORY;
    store_pad(v, x->dtype, value);
    for (int32_t d = 0; d < x->rank; d++) {
        v->d[d].size = outputs[0].dims[d];
        int64_t *t = vn_view_table(where, v, d);
        if (!t) {
            vn_view_free(v);
            return VN_ERR_OUT_OF_MEMORY;
        }
        for (int64_t i = 0; i < v->d[d].size; i++) {
            int64_t j = map_index(s.mode, i - s.begin[d], x->dims[d]);
            t[i] = j < 0 ? -1 : j * strides[d];
        }
    }
    st = vn_view_finish(where, ctx->device, v);
    if (st != VN_OK) {
        vn_view_free(v);
        return st;
    }
    *plan = v;
    return VN_OK;
}

static vn_status pad_run(const vn_op_run_ctx *ctx)
{
    vn_view v = *(const vn_view *)ctx->plan; /* tables shared, read-only */
    if (ctx->num_inputs > 2 && ctx->inputs[2].data && vn_desc_numel(&ctx->inputs[2].desc) > 0)
        memcpy(v.pad, ctx->inputs[2].data, (size_t)v.esize);
    return vn_view_execute(ctx->device, &v, ctx->inputs[0].data, ctx->outputs[0].data,
                           ctx->counters);
}

const vn_op_def vn_so_pad_defs[] = {
    {"Pad", "", 1, 4, 1, VN_DTYPES_ALL, pad_infer, pad_plan, vn_view_free, pad_run},
};
const int32_t vn_so_pad_count = 1;
