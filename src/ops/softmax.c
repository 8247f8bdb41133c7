/*
 * softmax.c — Softmax and LogSoftmax (ONNX opset 13: one axis, default -1),
 * planned and run by the softmax kernel over [outer, A, inner].
 */
#include <stdlib.h>

#include "ops/softmax.h"

typedef struct softmax_def {
    vn_op_def def;
    bool log;
} softmax_def;

static vn_status get_axis(const vn_op_ctx *ctx, const char *where, int32_t *axis)
{
    int32_t rank = ctx->inputs[0].rank;
    int64_t a;
    if (vn_attrs_int(ctx->attrs, "axis", -1, &a) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'axis' must be an int");
    if (rank < 1) return vn_error(VN_ERR_SHAPE, where, "input must have rank >= 1 (got a scalar)");
    if (a < -rank || a >= rank)
        return vn_error(VN_ERR_INVALID_ARG, where, "axis %lld is out of range for rank %d",
                        (long long)a, (int)rank);
    *axis = (int32_t)(a < 0 ? a + rank : a);
    return VN_OK;
}

static vn_status softmax_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    int32_t axis = 0;
    vn_status st = get_axis(ctx, vn_ops_where(ctx, where, sizeof where), &axis);
    if (st == VN_OK) outputs[0] = ctx->inputs[0];
    return st;
}

static vn_status softmax_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                              size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    int32_t axis = 0;
    vn_status st = get_axis(ctx, vn_ops_where(ctx, where, sizeof where), &axis);
    if (st != VN_OK) return st;
    vn_softmax_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    const vn_tensor_desc *x = &ctx->inputs[0];
    p->log = ((const softmax_def *)ctx->def)->log;
    p->dtype = x->dtype;
    p->outer = p->inner = 1;
    p->A = x->dims[axis];
    for (int32_t d = 0; d < x->rank; d++)
        if (d != axis) *(d < axis ? &p->outer : &p->inner) *= x->dims[d];
    st = vn_softmax_plan_build(where, ctx->device, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *data = p;
    *workspace = 0;
    return VN_OK;
}

static void softmax_plan_free(void *data)
{
    free(data);
}

static vn_status softmax_run(const vn_op_run_ctx *ctx)
{
    return vn_softmax_execute(ctx->device, ctx->plan, ctx->inputs[0].data, ctx->outputs[0].data,
                              ctx->counters);
}

#define SOFTMAX(name, log)                                                                         \
    {                                                                                              \
        {name,       "", 1, 1, 1, VN_DTYPES_FLOAT, softmax_infer, softmax_plan, softmax_plan_free, \
         softmax_run},                                                                             \
            log                                                                                    \
    }

static const softmax_def defs[] = {SOFTMAX("Softmax", false), SOFTMAX("LogSoftmax", true)};

const vn_op_def *const *vn_ops_softmax_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0].def, &defs[1].def};
    *count = 2;
    return ptrs;
}
