/*
 * gather_nd.c — GatherND with batch_dims b: indices [..., k] address the
 * first k dims after the batch dims of data; each index tuple selects a
 * slice data[batch, i0..ik-1, :] of S = prod(data.shape[b+k:]) elements.
 * Output shape: indices.shape[:-1] + data.shape[b+k:]. A tile is a run of
 * tuples, each one contiguous copy of S elements.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/gather.h"

#define TILE_ELEMS 16384

typedef struct gnd_plan {
    int32_t k, esize;
    int64_t dims[VN_MAX_RANK], str[VN_MAX_RANK]; /* the k indexed dims of data */
    int64_t S, per_batch, batch_stride, tuples, per_tile, tiles;
    vn_dtype idx_dt;
    int32_t block_dim;
} gnd_plan;

static vn_status gnd_shape(const vn_op_ctx *ctx, const char *where, int64_t *b, int64_t *k,
                           vn_tensor_desc *out)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *ix = &ctx->inputs[1];
    char a[128], c[128];
    vn_status st = vn_so_attr_int(ctx, where, "batch_dims", 0, b);
    if (st == VN_OK) st = vn_gather_check_indices(ctx, where, 1);
    if (st != VN_OK) return st;
    *k = ix->rank > 0 ? ix->dims[ix->rank - 1] : -1;
    bool ok = ix->rank >= 1 && x->rank >= 1 && *b >= 0 && *b < ix->rank && *b < x->rank &&
              *k >= 0 && *b + *k <= x->rank;
    for (int32_t d = 0; ok && d < *b; d++) ok = ix->dims[d] == x->dims[d];
    if (!ok || ix->rank - 1 + x->rank - *b - *k > VN_MAX_RANK)
        return vn_error(VN_ERR_SHAPE, where, "indices %s do not fit data %s with batch_dims %lld",
                        vn_desc_format(ix, a, sizeof a), vn_desc_format(x, c, sizeof c),
                        (long long)*b);
    *out = vn_so_desc(x->dtype, 0, NULL);
    for (int32_t d = 0; d < ix->rank - 1; d++) out->dims[out->rank++] = ix->dims[d];
    for (int64_t d = *b + *k; d < x->rank; d++) out->dims[out->rank++] = x->dims[d];
    return VN_OK;
}

static vn_status gnd_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t b, k;
    return gnd_shape(ctx, where, &b, &k, out);
}

static vn_status gnd_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0], *ix = &ctx->inputs[1];
    int64_t b, k, xstr[VN_MAX_RANK];
    vn_tensor_desc out;
    *workspace = 0;
    vn_status st = gnd_shape(ctx, where, &b, &k, &out);
    if (st != VN_OK) return st;
    gnd_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_so_strides(x, xstr);
    p->k = (int32_t)k;
    for (int32_t d = 0; d < k; d++) {
        p->dims[d] = x->dims[b + d];
        p->str[d] = xstr[b + d];
    }
    p->S = 1;
    for (int64_t d = b + k; d < x->rank; d++) p->S *= x->dims[d];
    p->batch_stride = b > 0 ? xstr[b - 1] : 0;
    p->per_batch = 1;
    for (int64_t d = b; d < ix->rank - 1; d++) p->per_batch *= ix->dims[d];
    p->tuples = 1; /* one index tuple per position of indices.shape[:-1] */
    for (int32_t d = 0; d < ix->rank - 1; d++) p->tuples *= ix->dims[d];
    p->esize = (int32_t)vn_dtype_size(x->dtype);
    p->idx_dt = ix->dtype;
    p->per_tile = vn_ops_max(1, TILE_ELEMS / vn_ops_max(1, p->S));
    p->tiles = p->S > 0 ? vn_ops_div_up(p->tuples, p->per_tile) : 0;
    p->block_dim = vn_ops_block_dim(ctx->device, p->tiles, p->per_tile * p->S);
    *plan = p;
    return VN_OK;
}

typedef struct gnd_args {
    const gnd_plan *p;
    const uint8_t *x;
    const void *idx;
    uint8_t *y;
} gnd_args;

static void gnd_kernel(vn_core *core, const void *args)
{
    const gnd_args *a = args;
    const gnd_plan *p = a->p;
    int64_t row = p->S * p->esize;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t q1 = vn_ops_min(p->tuples, (t + 1) * p->per_tile);
        for (int64_t q = t * p->per_tile; q < q1; q++) {
            int64_t off = q / p->per_batch * p->batch_stride;
            for (int32_t d = 0; d < p->k; d++)
                off +=
                    vn_gather_index(core, "GatherND", p->idx_dt, a->idx, q * p->k + d, p->dims[d]) *
                    p->str[d];
            memcpy(a->y + q * row, a->x + off * p->esize, (size_t)row);
        }
        core->counters.bytes_out += (q1 - t * p->per_tile) * row;
    }
}

static vn_status gnd_run(const vn_op_run_ctx *ctx)
{
    const gnd_plan *p = ctx->plan;
    if (p->tiles == 0) return VN_OK;
    gnd_args a = {p, ctx->inputs[0].data, ctx->inputs[1].data, ctx->outputs[0].data};
    vn_launch_desc d = {gnd_kernel, "vn_gather_nd", p->block_dim, &a, -1, p->tiles};
    return vn_launch(ctx->device, &d, ctx->counters);
}

const vn_op_def vn_gather_nd_defs[] = {
    {"GatherND", "", 2, 2, 1, VN_DTYPES_ALL, gnd_infer, gnd_plan_fn, free, gnd_run},
};
