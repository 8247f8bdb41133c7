/*
 * softmax.c — Softmax and LogSoftmax (ONNX opset 13: one axis, default -1; before 13:
 * flattened to 2-D at axis, default 1), and Hardmax on the same geometry,
 * planned and run by the softmax kernel over [outer, A, inner].
 */
#include <stdlib.h>

#include "ops/cast.h"
#include "ops/softmax.h"

typedef struct softmax_def {
    vn_op_def def;
    bool log;
    bool hard; /* Hardmax: the same geometry, a one-hot of the first maximum */
} softmax_def;

/* Before opset 13 the input is flattened to 2-D at `axis` (default 1) and
 * each row normalised; the graph passes the node's opset as "_opset". */
static bool old_semantics(const vn_op_ctx *ctx)
{
    int64_t opset = 13;
    vn_attrs_int(ctx->attrs, "_opset", 13, &opset);
    return opset > 0 && opset < 13;
}

static vn_status get_axis(const vn_op_ctx *ctx, const char *where, int32_t *axis)
{
    int32_t rank = ctx->inputs[0].rank;
    int64_t a;
    if (vn_attrs_int(ctx->attrs, "axis", old_semantics(ctx) ? 1 : -1, &a) != VN_OK)
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
    if (old_semantics(ctx)) { /* rows of dims[axis:] */
        p->A *= p->inner;
        p->inner = 1;
    }
    if (!((const softmax_def *)ctx->def)->hard) st = vn_softmax_plan_build(where, ctx->device, p);
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

/* Hardmax is rare and cheap next to what feeds it: a scalar loop. */
static void hardmax_run(const vn_softmax_plan *p, const void *x, void *y)
{
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t i = 0; i < p->inner; i++) {
            int64_t base = o * p->A * p->inner + i, best = 0;
            double top = 0.0;
            for (int64_t a = 0; a < p->A; a++) {
                double v = vn_cast_load_f64(p->dtype, x, base + a * p->inner);
                if (a == 0 || v > top) {
                    top = v;
                    best = a;
                }
            }
            for (int64_t a = 0; a < p->A; a++)
                vn_cast_store_f64(p->dtype, y, base + a * p->inner, a == best ? 1.0 : 0.0);
        }
}

static vn_status softmax_run(const vn_op_run_ctx *ctx)
{
    if (((const softmax_def *)ctx->def)->hard) {
        hardmax_run(ctx->plan, ctx->inputs[0].data, ctx->outputs[0].data);
        return VN_OK;
    }
    return vn_softmax_execute(ctx->device, ctx->plan, ctx->inputs[0].data, ctx->outputs[0].data,
                              ctx->counters);
}

#define SOFTMAX(name, log, hard)                                                                   \
    {                                                                                              \
        {name,       "", 1, 1, 1, VN_DTYPES_FLOAT, softmax_infer, softmax_plan, softmax_plan_free, \
         softmax_run},                                                                             \
            log, hard                                                                              \
    }

static const softmax_def defs[] = {SOFTMAX("Softmax", false, false),
                                   SOFTMAX("LogSoftmax", true, false),
                                   SOFTMAX("Hardmax", false, true)};

const vn_op_def *const *vn_ops_softmax_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0].def, &defs[1].def, &defs[2].def};
    *count = 3;
    return ptrs;
}
