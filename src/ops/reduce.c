/*
 * reduce.c — ReduceSum / Mean / Max / Min / Prod / L1 / L2 / LogSumExp /
 * SumSquare (axes as the attribute before opset 18 — 13 for ReduceSum — or
 * the constant input 'axes' after; keepdims; noop_with_empty_axes) and
 * ArgMax / ArgMin (axis, keepdims, select_last_index; int64 output).
 * Every one is a vn_reduce_plan run by reduce_kernel.c.
 */
#include <stdlib.h>

#include "ops/reduce.h"

typedef struct reduce_def {
    vn_op_def def;
    vn_reduce_kind kind;
} reduce_def;

typedef struct reduce_spec {
    bool mask[VN_MAX_RANK];
    bool noop; /* empty axes with noop_with_empty_axes: an identity */
    vn_tensor_desc out;
} reduce_spec;

static bool is_arg(vn_reduce_kind k)
{
    return k == VN_RK_ARGMAX || k == VN_RK_ARGMIN;
}

static vn_status reduce_axes(const vn_op_ctx *ctx, const char *where, reduce_spec *s)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t axes[VN_MAX_RANK], noop;
    int32_t n = 0;
    bool given = false;
    vn_status st = vn_so_attr_int(ctx, where, "noop_with_empty_axes", 0, &noop);
    if (st == VN_OK && vn_so_present(ctx, 1)) {
        given = true;
        st = vn_so_const_ints(ctx, where, 1, "axes", axes, VN_MAX_RANK, &n);
    } else if (st == VN_OK) {
        st = vn_so_attr_ints(ctx, where, "axes", axes, VN_MAX_RANK, &n, &given);
    }
    if (st == VN_OK) st = vn_so_axes(where, "axes", axes, n, x->rank, s->mask);
    if (st != VN_OK) return st;
    s->noop = n == 0 && noop != 0;
    if (n == 0)
        for (int32_t d = 0; d < x->rank; d++) s->mask[d] = !s->noop;
    return VN_OK;
}

static vn_status arg_axis(const vn_op_ctx *ctx, const char *where, reduce_spec *s)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t a;
    int32_t axis;
    vn_status st = vn_so_attr_int(ctx, where, "axis", 0, &a);
    if (st == VN_OK) st = vn_so_axis(where, "axis", a, vn_ops_max(1, x->rank), &axis);
    if (st != VN_OK) return st;
    for (int32_t d = 0; d < x->rank; d++) s->mask[d] = d == axis;
    s->noop = false;
    if (x->rank > 0 && x->dims[axis] == 0)
        return vn_error(VN_ERR_SHAPE, where, "cannot take the arg of an empty axis %d", (int)axis);
    return VN_OK;
}

static vn_status spec_of(const vn_op_ctx *ctx, const char *where, reduce_spec *s)
{
    vn_reduce_kind kind = ((const reduce_def *)ctx->def)->kind;
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t keep;
    vn_status st = vn_so_attr_int(ctx, where, "keepdims", 1, &keep);
    if (st == VN_OK) st = is_arg(kind) ? arg_axis(ctx, where, s) : reduce_axes(ctx, where, s);
    if (st != VN_OK) return st;
    s->out = vn_so_desc(is_arg(kind) ? VN_I64 : x->dtype, 0, NULL);
    for (int32_t d = 0; d < x->rank; d++) {
        if (!s->mask[d])
            s->out.dims[s->out.rank++] = x->dims[d];
        else if (keep)
            s->out.dims[s->out.rank++] = 1;
    }
    return VN_OK;
}

static vn_status reduce_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    reduce_spec s;
    vn_status st = spec_of(ctx, where, &s);
    if (st == VN_OK) *out = s.out;
    return st;
}

static vn_status reduce_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const reduce_def *r = (const reduce_def *)ctx->def;
    reduce_spec s;
    int64_t last = 0;
    *workspace = 0;
    vn_status st = spec_of(ctx, where, &s);
    if (st == VN_OK && is_arg(r->kind))
        st = vn_so_attr_int(ctx, where, "select_last_index", 0, &last);
    if (st != VN_OK) return st;
    /* noop: reduce over nothing, i.e. copy (a Sum of one element each) */
    vn_reduce_plan *p = vn_reduce_plan_make(where, ctx->device, s.noop ? VN_RK_SUM : r->kind,
                                            &ctx->inputs[0], s.mask, outputs[0].dtype);
    if (!p) return VN_ERR_OUT_OF_MEMORY;
    p->last_index = last != 0;
    *plan = p;
    return VN_OK;
}

static vn_status reduce_run(const vn_op_run_ctx *ctx)
{
    return vn_reduce_execute(ctx->device, ctx->plan, ctx->inputs[0].data, ctx->outputs[0].data,
                             ctx->counters);
}

#define NUMERIC (VN_DTYPES_FLOAT | VN_DTYPES_F64 | VN_DTYPES_INT) /* computed in double */
/* Max / Min take bool too (opset 20): 0 and 1 in double, stored back as bool. */
#define ORDERED (NUMERIC | VN_DTYPE_BIT(VN_BOOL))
#define RED_T(name, kind, hi, dtypes)                                                              \
    {                                                                                              \
        {name, "", 1, hi, 1, dtypes, reduce_infer, reduce_plan, free, reduce_run}, kind            \
    }
#define RED(name, kind, hi) RED_T(name, kind, hi, NUMERIC)

static const reduce_def defs[] = {
    RED("ReduceSum", VN_RK_SUM, 2),
    RED("ReduceMean", VN_RK_MEAN, 2),
    RED_T("ReduceMax", VN_RK_MAX, 2, ORDERED),
    RED_T("ReduceMin", VN_RK_MIN, 2, ORDERED),
    RED("ReduceProd", VN_RK_PROD, 2),
    RED("ReduceL1", VN_RK_L1, 2),
    RED("ReduceL2", VN_RK_L2, 2),
    RED("ReduceLogSumExp", VN_RK_LOGSUMEXP, 2),
    RED("ReduceLogSum", VN_RK_LOGSUM, 2),
    RED("ReduceSumSquare", VN_RK_SUMSQUARE, 2),
    RED("ArgMax", VN_RK_ARGMAX, 1),
    RED("ArgMin", VN_RK_ARGMIN, 1),
};

#define NUM_DEFS ((int32_t)(sizeof defs / sizeof defs[0]))

const vn_op_def *const *vn_ops_reduce_table(int32_t *count)
{
    static const vn_op_def *ptrs[NUM_DEFS];
    /* Filled under the registry's pthread_once; the same values every time. */
    for (int32_t i = 0; i < NUM_DEFS; i++) ptrs[i] = &defs[i].def;
    *count = NUM_DEFS;
    return ptrs;
}
