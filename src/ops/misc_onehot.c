/*
 * misc_onehot.c — OneHot(indices, depth, values): depth a constant scalar;
 * values [off, on] read at run time; axis (default -1) is where the new
 * dim of size depth goes. Negative indices count from depth; indices out
 * of [-depth, depth) give an all-off line. Output dtype: values'.
 * A tile is one (outer, inner) line of depth elements.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/misc.h"

typedef struct onehot_plan {
    int64_t depth, outer, inner, lines;
    vn_dtype idt, vdt;
    int32_t block_dim;
} onehot_plan;

static vn_status onehot_params(const vn_op_ctx *ctx, const char *where, onehot_plan *p,
                               int32_t *axis)
{
    const vn_tensor_desc *ix = &ctx->inputs[0];
    double depth;
    int64_t ax;
    char buf[128];
    vn_status st = vn_so_const_scalar(ctx, where, 1, "depth", &depth);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "axis", -1, &ax);
    if (st == VN_OK) st = vn_so_axis(where, "axis", ax, ix->rank + 1, axis);
    if (st != VN_OK) return st;
    if (vn_desc_numel(&ctx->inputs[2]) != 2)
        return vn_error(VN_ERR_SHAPE, where, "values %s must hold [off, on]",
                        vn_desc_format(&ctx->inputs[2], buf, sizeof buf));
    if (!(depth >= 1) || ix->rank + 1 > VN_MAX_RANK || ix->dtype == VN_BOOL)
        return vn_error(VN_ERR_INVALID_ARG, where, "depth %g (>= 1) or indices %s unusable", depth,
                        vn_desc_format(ix, buf, sizeof buf));
    p->depth = (int64_t)depth;
    p->idt = ix->dtype;
    p->vdt = ctx->inputs[2].dtype;
    p->outer = p->inner = 1;
    for (int32_t d = 0; d < ix->rank; d++) *(d < *axis ? &p->outer : &p->inner) *= ix->dims[d];
    p->lines = p->outer * p->inner;
    return VN_OK;
}

static vn_status onehot_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    onehot_plan p = {0};
    int32_t axis = 0;
    vn_status st = onehot_params(ctx, where, &p, &axis);
    if (st != VN_OK) return st;
    const vn_tensor_desc *ix = &ctx->inputs[0];
    *out = vn_so_desc(p.vdt, ix->rank + 1, NULL);
    for (int32_t d = 0, k = 0; d <= ix->rank; d++)
        out->dims[d] = d == axis ? p.depth : ix->dims[k++];
    return VN_OK;
}

static vn_status onehot_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                                size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    onehot_plan *p = calloc(1, sizeof *p);
    int32_t axis = 0;
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = onehot_params(ctx, where, p, &axis);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    p->block_dim = vn_ops_block_dim(ctx->device, p->lines, p->depth);
    *plan = p;
    return VN_OK;
}

typedef struct onehot_args {
    const onehot_plan *p;
    const void *idx, *values;
    uint8_t *y;
} onehot_args;

static void onehot_kernel(vn_core *core, const void *args)
{
    const onehot_args *a = args;
    const onehot_plan *p = a->p;
    size_t es = vn_dtype_size(p->vdt);
    const uint8_t *off = a->values, *on = off + es;
    for (int64_t l; vn_tile_next(core, &l);) {
        int64_t o = l / p->inner, in = l % p->inner;
        int64_t i = (int64_t)vn_cast_load_f64(p->idt, a->idx, l); /* float indices truncate */
        if (i < 0) i += p->depth;
        for (int64_t d = 0; d < p->depth; d++)
            memcpy(a->y + ((o * p->depth + d) * p->inner + in) * (int64_t)es, d == i ? on : off,
                   es);
    }
}

static vn_status onehot_run(const vn_op_run_ctx *ctx)
{
    const onehot_plan *p = ctx->plan;
    onehot_args a = {p, ctx->inputs[0].data, ctx->inputs[2].data, ctx->outputs[0].data};
    vn_launch_desc d = {onehot_kernel, "vn_onehot", p->block_dim, &a, -1, p->lines};
    return p->lines ? vn_launch(ctx->device, &d, ctx->counters) : VN_OK;
}

const vn_op_def vn_misc_onehot_def = {
    "OneHot",       "",   3,         3, 1, VN_DTYPES_FLOAT | VN_DTYPES_INT, onehot_infer,
    onehot_plan_fn, free, onehot_run};
