/*
 * shape_ops_expand.c — Expand (broadcast to a shape, both ways, as NumPy)
 * and Tile (repeat along each dim). Both are views: Expand is affine with
 * stride 0 on broadcast dims; Tile maps index i of a dim of size d to
 * source index i mod d (a table).
 */
#include "ops/broadcast.h"
#include "ops/shape_ops.h"

static vn_status finish(const char *where, vn_device *device, vn_view *v, void **plan)
{
    vn_status st = vn_view_finish(where, device, v);
    if (st != VN_OK) {
        vn_view_free(v);
        return st;
    }
    *plan = v;
    return VN_OK;
}

/* ---- Expand ---------------------------------------------------------------------------- */

static vn_status expand_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t shape[VN_MAX_RANK];
    int32_t n = 0;
    vn_status st = vn_so_const_ints(ctx, where, 1, "shape", shape, VN_MAX_RANK, &n);
    if (st != VN_OK) return st;
    for (int32_t d = 0; d < n; d++)
        if (shape[d] < 0)
            return vn_error(VN_ERR_SHAPE, where, "shape[%d] = %lld is negative", (int)d,
                            (long long)shape[d]);
    vn_tensor_desc both[2] = {ctx->inputs[0], vn_so_desc(ctx->inputs[0].dtype, n, shape)};
    return vn_broadcast_shape(where, both, 2, out);
}

static vn_status expand_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0], *y = &outputs[0];
    int64_t strides[VN_MAX_RANK];
    *workspace = 0;
    vn_so_strides(x, strides);
    vn_view *v = vn_view_new(where, y->rank, x->dtype);
    if (!v) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t d = 0; d < y->rank; d++) {
        int32_t k = d - (y->rank - x->rank);
        v->d[d].size = y->dims[d];
        v->d[d].stride = k >= 0 && x->dims[k] != 1 ? strides[k] : 0;
    }
    return finish(where, ctx->device, v, plan);
}

/* ---- Tile ------------------------------------------------------------------------------- */

static vn_status get_repeats(const vn_op_ctx *ctx, const char *where, int64_t *rep)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int32_t n = 0;
    vn_status st = vn_so_const_ints(ctx, where, 1, "repeats", rep, VN_MAX_RANK, &n);
    if (st != VN_OK) return st;
    if (n != x->rank)
        return vn_error(VN_ERR_SHAPE, where, "'repeats' has %d values for an input of rank %d",
                        (int)n, (int)x->rank);
    for (int32_t d = 0; d < n; d++)
        if (rep[d] < 0)
            return vn_error(VN_ERR_INVALID_ARG, where, "repeats[%d] = %lld is negative", (int)d,
                            (long long)rep[d]);
    return VN_OK;
}

static vn_status tile_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t rep[VN_MAX_RANK];
    vn_status st = get_repeats(ctx, where, rep);
    if (st != VN_OK) return st;
    *out = ctx->inputs[0];
    for (int32_t d = 0; d < out->rank; d++) out->dims[d] *= rep[d];
    return VN_OK;
}

static vn_status tile_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
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
        v->d[d].size = outputs[0].dims[d];
        v->d[d].stride = strides[d];
        if (outputs[0].dims[d] == x->dims[d] || x->dims[d] == 0) continue;
        int64_t *t = vn_view_table(where, v, d);
        if (!t) {
            vn_view_free(v);
            return VN_ERR_OUT_OF_MEMORY;
        }
        for (int64_t i = 0; i < v->d[d].size; i++) t[i] = i % x->dims[d] * strides[d];
    }
    return finish(where, ctx->device, v, plan);
}

const vn_op_def vn_so_expand_defs[] = {
    {"Expand", "", 2, 2, 1, VN_DTYPES_ALL, expand_infer, expand_plan, vn_view_free, vn_view_run},
    {"Tile", "", 2, 2, 1, VN_DTYPES_ALL, tile_infer, tile_plan, vn_view_free, vn_view_run},
};
const int32_t vn_so_expand_count = 2;
