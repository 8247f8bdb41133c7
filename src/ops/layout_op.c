/*
 * layout_op.c — the reorder operators the graph engine inserts between
 * plain and blocked operators: vinci::ToNC1HWC0 (X [N, C, spatial...] ->
 * [N, C1, spatial..., 16]) and vinci::FromNC1HWC0 (the inverse; the channel
 * count C, which C1 cannot give back, is the required int attribute
 * "channels"). f32 only; any number of spatial dims (0 included).
 */
#include <stdlib.h>

#include "kernel/conv_kernels.h"
#include "ops/layout.h"

typedef struct layout_plan {
    int64_t N, C, S;
} layout_plan;

static vn_status to_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX], a[128];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    if (x->rank < 2 || x->rank >= VN_MAX_RANK)
        return vn_error(VN_ERR_SHAPE, where, "X %s must have rank 2..%d (N, C, spatial...)",
                        vn_desc_format(x, a, sizeof a), VN_MAX_RANK - 1);
    outputs[0] = *x;
    outputs[0].dims[1] = vn_ops_div_up(x->dims[1], VN_C0);
    outputs[0].dims[x->rank] = VN_C0;
    outputs[0].rank = x->rank + 1;
    return VN_OK;
}

static vn_status get_channels(const vn_op_ctx *ctx, const char *where, int64_t *c)
{
    char a[128];
    const vn_tensor_desc *x = &ctx->inputs[0];
    if (vn_attrs_int(ctx->attrs, "channels", -1, c) != VN_OK || *c < 0)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "the int attribute 'channels' (C of the plain tensor) is required");
    if (x->rank < 3 || x->dims[x->rank - 1] != VN_C0)
        return vn_error(VN_ERR_SHAPE, where, "X %s is not NC1HWC0 (rank >= 3, last dim %d)",
                        vn_desc_format(x, a, sizeof a), VN_C0);
    if (vn_ops_div_up(*c, VN_C0) != x->dims[1])
        return vn_error(VN_ERR_SHAPE, where, "channels %lld do not fill the %lld blocks of X %s",
                        (long long)*c, (long long)x->dims[1], vn_desc_format(x, a, sizeof a));
    return VN_OK;
}

static vn_status from_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t c;
    vn_status st = get_channels(ctx, where, &c);
    if (st != VN_OK) return st;
    outputs[0] = ctx->inputs[0];
    outputs[0].rank--;
    outputs[0].dims[1] = c;
    outputs[0].dims[outputs[0].rank] = 0;
    return VN_OK;
}

static vn_status layout_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                                size_t *workspace)
{
    const vn_tensor_desc *plain = ctx->def->name[0] == 'T' ? &ctx->inputs[0] : &outputs[0];
    layout_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_op_plan_create", "no memory for the plan");
    p->N = plain->dims[0];
    p->C = plain->dims[1];
    p->S = 1;
    for (int32_t d = 2; d < plain->rank; d++) p->S *= plain->dims[d];
    *data = p;
    *workspace = 0;
    return VN_OK;
}

static void layout_plan_free(void *data)
{
    free(data);
}

static vn_status to_run(const vn_op_run_ctx *ctx)
{
    const layout_plan *p = ctx->plan;
    return vn_layout_to_nc1hwc0(ctx->device, ctx->inputs[0].data, ctx->outputs[0].data, p->N, p->C,
                                p->S, ctx->counters);
}

static vn_status from_run(const vn_op_run_ctx *ctx)
{
    const layout_plan *p = ctx->plan;
    return vn_layout_from_nc1hwc0(ctx->device, ctx->inputs[0].data, ctx->outputs[0].data, p->N,
                                  p->C, p->S, ctx->counters);
}

static const vn_op_def defs[] = {
    {"ToNC1HWC0", "vinci", 1, 1, 1, VN_DTYPE_BIT(VN_F32), to_infer, layout_plan_fn,
     layout_plan_free, to_run},
    {"FromNC1HWC0", "vinci", 1, 1, 1, VN_DTYPE_BIT(VN_F32), from_infer, layout_plan_fn,
     layout_plan_free, from_run},
};

const vn_op_def *const *vn_ops_layout_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0], &defs[1]};
    *count = 2;
    return ptrs;
}
