/*
 * gather_elements.c — GatherElements: output[i] = data[i with dim `axis`
 * replaced by indices[i]]; indices and output share a shape, of data's
 * rank, each dim at most data's off the axis. A tile is TILE output
 * elements, each unravelled over the index shape.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/gather.h"

#define TILE 8192

typedef struct ge_plan {
    int32_t rank, axis, esize;
    int64_t idims[VN_MAX_RANK], dstr[VN_MAX_RANK];
    int64_t n, tiles;
    vn_dtype idx_dt;
    int32_t block_dim;
} ge_plan;

static vn_status ge_check(const vn_op_ctx *ctx, const char *where, int32_t *axis)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *ix = &ctx->inputs[1];
    char a[128], b[128];
    int64_t ax;
    vn_status st = vn_so_attr_int(ctx, where, "axis", 0, &ax);
    if (st == VN_OK) st = vn_gather_check_indices(ctx, where, 1);
    if (st == VN_OK && x->rank < 1) st = vn_error(VN_ERR_SHAPE, where, "data must have rank >= 1");
    if (st == VN_OK) st = vn_so_axis(where, "axis", ax, x->rank, axis);
    if (st != VN_OK) return st;
    bool ok = ix->rank == x->rank;
    for (int32_t d = 0; ok && d < x->rank; d++) ok = d == *axis || ix->dims[d] <= x->dims[d];
    if (!ok)
        return vn_error(VN_ERR_SHAPE, where, "indices %s do not fit data %s",
                        vn_desc_format(ix, a, sizeof a), vn_desc_format(x, b, sizeof b));
    return VN_OK;
}

static vn_status ge_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int32_t axis;
    vn_status st = ge_check(ctx, where, &axis);
    if (st != VN_OK) return st;
    *out = ctx->inputs[1];
    out->dtype = ctx->inputs[0].dtype;
    return VN_OK;
}

static vn_status ge_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    ge_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = ge_check(ctx, where, &p->axis);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    const vn_tensor_desc *ix = &ctx->inputs[1];
    p->rank = ix->rank;
    memcpy(p->idims, ix->dims, sizeof p->idims);
    vn_so_strides(&ctx->inputs[0], p->dstr);
    p->esize = (int32_t)vn_dtype_size(ctx->inputs[0].dtype);
    p->idx_dt = ix->dtype;
    p->n = vn_desc_numel(ix);
    p->tiles = vn_ops_div_up(p->n, TILE);
    p->block_dim = vn_ops_block_dim(ctx->device, p->tiles, TILE);
    *plan = p;
    return VN_OK;
}

typedef struct ge_args {
    const ge_plan *p;
    const uint8_t *x;
    const void *idx;
    uint8_t *y;
    int64_t axis_dim;
} ge_args;

static void ge_kernel(vn_core *core, const void *args)
{
    const ge_args *a = args;
    const ge_plan *p = a->p;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t e1 = vn_ops_min(p->n, (t + 1) * TILE);
        for (int64_t e = t * TILE; e < e1; e++) {
            int64_t off = 0, r = e;
            for (int32_t d = p->rank - 1; d >= 0; d--) {
                int64_t i = r % p->idims[d];
                r /= p->idims[d];
                if (d == p->axis)
                    i = vn_gather_index(core, "GatherElements", p->idx_dt, a->idx, e, a->axis_dim);
                off += i * p->dstr[d];
            }
            memcpy(a->y + e * p->esize, a->x + off * p->esize, (size_t)p->esize);
        }
        core->counters.bytes_out += (e1 - t * TILE) * p->esize;
    }
}

static vn_status ge_run(const vn_op_run_ctx *ctx)
{
    const ge_plan *p = ctx->plan;
    if (p->tiles == 0) return VN_OK;
    ge_args a = {p, ctx->inputs[0].data, ctx->inputs[1].data, ctx->outputs[0].data,
                 ctx->inputs[0].desc.dims[p->axis]};
    vn_launch_desc d = {ge_kernel, "vn_gather_elements", p->block_dim, &a, -1, p->tiles};
    return vn_launch(ctx->device, &d, ctx->counters);
}

const vn_op_def vn_gather_elements_defs[] = {
    {"GatherElements", "", 2, 2, 1, VN_DTYPES_ALL, ge_infer, ge_plan_fn, free, ge_run},
};
