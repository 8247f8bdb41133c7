/*
 * shape_ops_slice.c — Slice (opset 1 attributes; opset 10+ inputs starts,
 * ends, axes, steps, all constants). A slice is an affine view: per axis a
 * start and a step (negative steps walk backwards).
 *
 * Clamping (ONNX): a negative start / end has the dim added; then for a
 * positive step start is clamped to [0, dim] and end to [0, dim], for a
 * negative step start to [0, dim-1] and end to [-1, dim-1].
 */
#include "ops/shape_ops.h"

typedef struct slice_box {
    int64_t start[VN_MAX_RANK], step[VN_MAX_RANK], len[VN_MAX_RANK];
} slice_box;

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, slice_box *b,
                       int32_t a)
{
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
        start = clamp(start, 0, dim);
        end = clamp(end, 0, dim);
        b->len[a] = end > start ? (end - start + step - 1) / step : 0;
    } else {
        start = clamp(start, 0, dim - 1);
        end = clamp(end, -1, dim - 1);
        b->len[a] = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    b->start[a] = b->len[a] > 0 ? start : 0;
    b->step[a] = step;
}

/* The parameters, from inputs (opset 10+) or attributes (opset 1). */
static vn_status get_params(const vn_op_ctx *ctx, const char *where, int64_t p[4][VN_MAX_RANK],
                            int32_t n[4], bool has[4])
{
    static const char *const names[4] = {"starts", "ends", "axes", "steps"};
    vn_status st = VN_OK;
    for (int32_t k = 0; k < 4 && st == VN_OK; k++) {
        has[k] = false;
        n[k] = 0;
        if (ctx->num_inputs == 1) {
            if (k < 3)
                st = vn_so_attr_ints(ctx, where, names[k], p[k], VN_MAX_RANK, &n[k], &has[k]);
        } else if (vn_so_present(ctx, 1 + k)) {
            has[k] = true;
            st = vn_so_const_ints(ctx, where, 1 + k, names[k], p[k], VN_MAX_RANK, &n[k]);
        }
    }
    if (st != VN_OK) return st;
    if (!has[0] || !has[1])
        return vn_error(VN_ERR_INVALID_ARG, where, "'starts' and 'ends' are required");
    for (int32_t k = 1; k < 4; k++)
        if (has[k] && n[k] != n[0])
            return vn_error(VN_ERR_INVALID_ARG, where, "'%s' has %d values, 'starts' has %d",
                            names[k], (int)n[k], (int)n[0]);
    return VN_OK;
}

static vn_status slice_box_of(const vn_op_ctx *ctx, const char *where, slice_box *b)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t p[4][VN_MAX_RANK];
    int32_t n[4];
    bool has[4], mask[VN_MAX_RANK];
    vn_status st = get_params(ctx, where, p, n, has);
    if (st != VN_OK) return st;
    for (int32_t k = 0; k < n[0]; k++) p[2][k] = has[2] ? p[2][k] : k;
    st = vn_so_axes(where, "axes", p[2], n[0], x->rank, mask);
    if (st != VN_OK) return st;
    for (int32_t d = 0; d < x->rank; d++) slice_axis(x->dims[d], 0, x->dims[d], 1, b, d);
    for (int32_t k = 0; k < n[0]; k++) {
        int64_t step = has[3] ? p[3][k] : 1;
        int32_t a = (int32_t)(p[2][k] < 0 ? p[2][k] + x->rank : p[2][k]);
        if (step == 0) return vn_error(VN_ERR_INVALID_ARG, where, "steps[%d] is 0", (int)k);
        slice_axis(x->dims[a], p[0][k], p[1][k], step, b, a);
    }
    return VN_OK;
}

static vn_status slice_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    slice_box b;
    vn_status st = slice_box_of(ctx, where, &b);
    if (st == VN_OK) *out = vn_so_desc(ctx->inputs[0].dtype, ctx->inputs[0].rank, b.len);
    return st;
}

static vn_status slice_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    slice_box b;
    int64_t strides[VN_MAX_RANK];
    *workspace = 0;
    vn_status st = slice_box_of(ctx, where, &b);
    if (st != VN_OK) return st;
    vn_so_strides(x, strides);
    vn_view *v = vn_view_new(where, x->rank, x->dtype);
    if (!v) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t d = 0; d < x->rank; d++) {
        v->d[d].size = b.len[d];
        v->d[d].stride = strides[d] * b.step[d];
        v->base += b.start[d] * strides[d];
    }
    st = vn_view_finish(where, ctx->device, v);
    if (st != VN_OK) {
        vn_view_free(v);
        return st;
    }
    *plan = v;
    return VN_OK;
}

const vn_op_def vn_so_slice_defs[] = {
    {"Slice", "", 1, 5, 1, VN_DTYPES_ALL, slice_infer, slice_plan, vn_view_free, vn_view_run},
};
const int32_t vn_so_slice_count = 1;
