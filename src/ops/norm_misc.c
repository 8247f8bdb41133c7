/*
 * norm_misc.c — LRN (across channels of [N, C, ...]) and LpNormalization
 * (p 1 or 2 along one axis). Both appear in older CNNs (AlexNet, GoogLeNet)
 * outside the hot path of current models: scalar loops in double over the
 * [outer, A, inner] view, like Hardmax.
 */
#include <math.h>
#include <stdlib.h>

#include "ops/cast.h"
#include "ops/ops_internal.h"

typedef struct axis_plan {
    vn_dtype dt;
    int64_t outer, A, inner;
    /* LRN */
    int64_t size;
    double alpha, beta, bias;
    /* LpNormalization */
    int64_t p;
} axis_plan;

static vn_status same_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int32_t min_rank = ctx->def->name[0] == 'L' && ctx->def->name[1] == 'R' ? 2 : 1; /* LRN: N, C */
    if (ctx->inputs[0].rank < min_rank)
        return vn_error(VN_ERR_SHAPE, where, "input must have rank >= %d", (int)min_rank);
    out[0] = ctx->inputs[0];
    return VN_OK;
}

/* [outer, A, inner] around `axis`. */
static axis_plan *new_plan(const vn_op_ctx *ctx, int64_t axis)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    axis_plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (axis < 0) axis += x->rank;
    p->dt = x->dtype;
    p->outer = p->A = p->inner = 1;
    for (int32_t d = 0; d < x->rank; d++)
        *(d < axis ? &p->outer : d == axis ? &p->A : &p->inner) *= x->dims[d];
    return p;
}

static vn_status lrn_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                          size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    axis_plan *p = new_plan(ctx, 1);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_attrs_int(ctx->attrs, "size", 0, &p->size);
    vn_attrs_float(ctx->attrs, "alpha", 1e-4, &p->alpha);
    vn_attrs_float(ctx->attrs, "beta", 0.75, &p->beta);
    vn_attrs_float(ctx->attrs, "bias", 1.0, &p->bias);
    if (p->size < 1) {
        free(p);
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'size' must be >= 1");
    }
    *data = p;
    *workspace = 0;
    return VN_OK;
}

static vn_status lrn_run(const vn_op_run_ctx *ctx)
{
    const axis_plan *p = ctx->plan;
    const void *x = ctx->inputs[0].data;
    int64_t lo = (p->size - 1) / 2, hi = p->size - 1 - lo; /* floor / ceil of (size-1)/2 */
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t c = 0; c < p->A; c++)
            for (int64_t i = 0; i < p->inner; i++) {
                double sq = 0.0;
                for (int64_t k = c - lo; k <= c + hi; k++) {
                    if (k < 0 || k >= p->A) continue;
                    double v = vn_cast_load_f64(p->dt, x, (o * p->A + k) * p->inner + i);
                    sq += v * v;
                }
                int64_t e = (o * p->A + c) * p->inner + i;
                double den = pow(p->bias + p->alpha / (double)p->size * sq, p->beta);
                vn_cast_store_f64(p->dt, ctx->outputs[0].data, e,
                                  vn_cast_load_f64(p->dt, x, e) / den);
            }
    return VN_OK;
}

static vn_status lp_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                         size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t axis, pw;
    vn_attrs_int(ctx->attrs, "axis", -1, &axis);
    vn_attrs_int(ctx->attrs, "p", 2, &pw);
    int32_t rank = ctx->inputs[0].rank;
    if (axis < -rank || axis >= rank || (pw != 1 && pw != 2))
        return vn_error(VN_ERR_INVALID_ARG, where, "axis %lld / p %lld: p must be 1 or 2",
                        (long long)axis, (long long)pw);
    axis_plan *p = new_plan(ctx, axis);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    p->p = pw;
    *data = p;
    *workspace = 0;
    return VN_OK;
}

static vn_status lp_run(const vn_op_run_ctx *ctx)
{
    const axis_plan *p = ctx->plan;
    const void *x = ctx->inputs[0].data;
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t i = 0; i < p->inner; i++) {
            double norm = 0.0;
            for (int64_t a = 0; a < p->A; a++) {
                double v = vn_cast_load_f64(p->dt, x, (o * p->A + a) * p->inner + i);
                norm += p->p == 1 ? fabs(v) : v * v;
            }
            if (p->p == 2) norm = sqrt(norm);
            for (int64_t a = 0; a < p->A; a++) {
                int64_t e = (o * p->A + a) * p->inner + i;
                double v = vn_cast_load_f64(p->dt, x, e);
                vn_cast_store_f64(p->dt, ctx->outputs[0].data, e, norm > 0 ? v / norm : 0.0);
            }
        }
    return VN_OK;
}

static const vn_op_def defs[] = {
    {"LRN", "", 1, 1, 1, VN_DTYPES_FLOAT, same_infer, lrn_plan, free, lrn_run},
    {"LpNormalization", "", 1, 1, 1, VN_DTYPES_FLOAT, same_infer, lp_plan, free, lp_run},
};

const vn_op_def *const *vn_ops_norm_misc_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0], &defs[1]};
    *count = 2;
    return ptrs;
}
