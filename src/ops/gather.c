/*
 * gather.c — Gather along one axis: data [outer, A, inner] and indices of any
 * shape (i32 / i64, runtime values, negative ones count from the end) give
 * [outer, indices..., inner]. A tile is a run of (outer, index) pairs, each
 * one contiguous copy of `inner` elements. An index out of [-A, A) fails the
 * launch with the index and its position.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/gather.h"

#define TILE_ELEMS 16384

typedef struct gather_plan {
    int64_t outer, A, inner, nidx, pairs, pairs_per_tile, tiles;
    int32_t esize, block_dim;
    vn_dtype idx_dt;
} gather_plan;

static vn_status gather_axis(const vn_op_ctx *ctx, const char *where, int32_t *axis)
{
    int64_t a;
    vn_status st = vn_so_attr_int(ctx, where, "axis", 0, &a);
    if (st != VN_OK) return st;
    if (ctx->inputs[0].rank == 0) return vn_error(VN_ERR_SHAPE, where, "data must not be a scalar");
    return vn_so_axis(where, "axis", a, ctx->inputs[0].rank, axis);
}

static vn_status gather_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0], *idx = &ctx->inputs[1];
    int32_t axis;
    vn_status st = gather_axis(ctx, where, &axis);
    if (st != VN_OK) return st;
    if ((st = vn_gather_check_indices(ctx, where, 1)) != VN_OK) return st;
    if (x->rank - 1 + idx->rank > VN_MAX_RANK)
        return vn_error(VN_ERR_SHAPE, where, "the output would have rank %d",
                        (int)(x->rank - 1 + idx->rank));
    *out = vn_so_desc(x->dtype, 0, NULL);
    for (int32_t d = 0; d < axis; d++) out->dims[out->rank++] = x->dims[d];
    for (int32_t d = 0; d < idx->rank; d++) out->dims[out->rank++] = idx->dims[d];
    for (int32_t d = axis + 1; d < x->rank; d++) out->dims[out->rank++] = x->dims[d];
    return VN_OK;
}

static vn_status gather_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                                size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int32_t axis;
    *workspace = 0;
    vn_status st = gather_axis(ctx, where, &axis);
    if (st != VN_OK) return st;
    gather_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    p->outer = p->inner = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        if (d < axis) p->outer *= x->dims[d];
        if (d > axis) p->inner *= x->dims[d];
    }
    p->A = x->dims[axis];
    p->nidx = vn_desc_numel(&ctx->inputs[1]);
    p->esize = (int32_t)vn_dtype_size(x->dtype);
    p->idx_dt = ctx->inputs[1].dtype;
    p->pairs = p->outer * p->nidx;
    p->pairs_per_tile = vn_ops_max(1, TILE_ELEMS / vn_ops_max(1, p->inner));
    p->tiles = p->inner > 0 ? vn_ops_div_up(p->pairs, p->pairs_per_tile) : 0;
    p->block_dim = vn_ops_block_dim(ctx->device, p->tiles, p->pairs_per_tile * p->inner);
    *plan = p;
    return VN_OK;
}

typedef struct gather_args {
    const gather_plan *p;
    const uint8_t *x;
    const void *idx;
    uint8_t *y;
} gather_args;

static void gather_kernel(vn_core *core, const void *args)
{
    const gather_args *a = args;
    const gather_plan *p = a->p;
    int64_t row = p->inner * p->esize;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t q1 = vn_ops_min(p->pairs, (t + 1) * p->pairs_per_tile);
        for (int64_t q = t * p->pairs_per_tile; q < q1; q++) {
            int64_t o = q / p->nidx, j = q % p->nidx;
            int64_t i = vn_gather_index(core, "Gather", p->idx_dt, a->idx, j, p->A);
            memcpy(a->y + q * row, a->x + (o * p->A + i) * row, (size_t)row);
        }
        core->counters.bytes_in += (q1 - t * p->pairs_per_tile) * row;
        core->counters.bytes_out += (q1 - t * p->pairs_per_tile) * row;
    }
}

static vn_status gather_run(const vn_op_run_ctx *ctx)
{
    const gather_plan *p = ctx->plan;
    if (p->tiles == 0) return VN_OK;
    gather_args a = {p, ctx->inputs[0].data, ctx->inputs[1].data, ctx->outputs[0].data};
    vn_launch_desc d = {gather_kernel, "vn_gather", p->block_dim, &a, -1, p->tiles};
    return vn_launch(ctx->device, &d, ctx->counters);
}

static const vn_op_def defs[] = {
    {"Gather", "", 2, 2, 1, VN_DTYPES_ALL, gather_infer, gather_plan_fn, free, gather_run},
};

vn_status vn_gather_check_indices(const vn_op_ctx *ctx, const char *where, int32_t i)
{
    vn_dtype dt = ctx->inputs[i].dtype;
    if (dt != VN_I32 && dt != VN_I64)
        return vn_error(VN_ERR_DTYPE, where, "indices are %s (int32 or int64 expected)",
                        vn_dtype_name(dt));
    return VN_OK;
}

int64_t vn_gather_index(vn_core *core, const char *op, vn_dtype dt, const void *idx, int64_t j,
                        int64_t dim)
{
    int64_t i = vn_cast_load_i64(dt, idx, j);
    if (i < -dim || i >= dim)
        vn_kernel_fail(core, "%s: index %lld at position %lld is out of range [%lld, %lld)", op,
                       (long long)i, (long long)j, (long long)-dim, (long long)dim);
    return i < 0 ? i + dim : i;
}

const vn_op_def *const *vn_ops_gather_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0], &vn_gather_elements_defs[0],
                                            &vn_gather_nd_defs[0]};
    *count = 3;
    return ptrs;
}
