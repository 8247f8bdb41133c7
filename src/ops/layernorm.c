/*
 * layernorm.c — LayerNormalization (ONNX opset 17) and vinci::RMSNormalization,
 * both run by the row-normalisation kernel (rownorm.c) with a mode flag.
 *
 * ONNX normalises over every dim from `axis` on, so any axis is the same
 * [rows, H] problem: rows = prod(dims[:axis]), H = prod(dims[axis:]).
 * Inputs: X, Scale (gamma), optional B (beta), all of X's dtype; Scale and
 * B have the normalised shape (leading 1s allowed). Output: Y only (the
 * optional Mean / InvStdDev outputs are not produced).
 */
#include <stdlib.h>

#include "ops/rownorm.h"

typedef struct norm_def {
    vn_op_def def;
    vn_rownorm_mode mode;
} norm_def;

static vn_status get_axis(const vn_op_ctx *ctx, const char *where, int32_t rank, int32_t *axis)
{
    int64_t a;
    vn_status st = vn_attrs_int(ctx->attrs, "axis", -1, &a);
    if (st != VN_OK) return vn_error(st, where, "attribute 'axis' must be an int");
    if (a < -rank || a >= rank)
        return vn_error(VN_ERR_INVALID_ARG, where, "axis %lld is out of range for rank %d",
                        (long long)a, (int)rank);
    *axis = (int32_t)(a < 0 ? a + rank : a);
    return VN_OK;
}

/* `p` (Scale or B) has X's dtype and the normalised shape dims[axis:]. */
static vn_status check_param(const char *where, const char *name, const vn_tensor_desc *x,
                             const vn_tensor_desc *p, int32_t axis)
{
    char a[128], b[128];
    if (p->dtype != x->dtype)
        return vn_error(VN_ERR_DTYPE, where, "%s has dtype %s, X has %s", name,
                        vn_dtype_name(p->dtype), vn_dtype_name(x->dtype));
    bool ok = true;
    for (int32_t k = 0; k < p->rank; k++) {
        int32_t d = x->rank - p->rank + k; /* aligned on the right */
        ok &= d >= axis ? p->dims[k] == x->dims[d] : p->dims[k] == 1;
    }
    for (int32_t d = axis; d < x->rank - p->rank; d++) ok &= x->dims[d] == 1; /* dims p lacks */
    if (!ok)
        return vn_error(VN_ERR_SHAPE, where,
                        "%s %s does not match the normalised shape (dims %d.. of X %s)", name,
                        vn_desc_format(p, a, sizeof a), (int)axis, vn_desc_format(x, b, sizeof b));
    return VN_OK;
}

static vn_status norm_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int32_t axis = 0;
    if (x->rank < 1) return vn_error(VN_ERR_SHAPE, where, "X must have rank >= 1 (got a scalar)");
    vn_status st = get_axis(ctx, where, x->rank, &axis);
    if (st == VN_OK) st = check_param(where, "Scale", x, &ctx->inputs[1], axis);
    if (st == VN_OK && ctx->num_inputs > 2 && ctx->inputs[2].rank >= 0)
        st = check_param(where, "B", x, &ctx->inputs[2], axis);
    if (st != VN_OK) return st;
    double eps;
    if (vn_attrs_float(ctx->attrs, "epsilon", 1e-5, &eps) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'epsilon' must be a float");
    if (!(eps >= 0.0)) return vn_error(VN_ERR_INVALID_ARG, where, "epsilon %g must be >= 0", eps);
    outputs[0] = *x;
    return VN_OK;
}

static vn_status norm_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                           size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int32_t axis = 0;
    vn_status st = get_axis(ctx, where, x->rank, &axis);
    if (st != VN_OK) return st;
    vn_rownorm_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    p->mode = ((const norm_def *)ctx->def)->mode;
    p->dtype = x->dtype;
    p->rows = 1;
    p->H = 1;
    for (int32_t d = 0; d < x->rank; d++) *(d < axis ? &p->rows : &p->H) *= x->dims[d];
    vn_attrs_float(ctx->attrs, "epsilon", 1e-5, &p->eps);
    p->has_bias = ctx->num_inputs > 2 && ctx->inputs[2].rank >= 0;
    st = vn_rownorm_plan_build(where, ctx->device, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *data = p;
    *workspace = 0;
    return VN_OK;
}

static void norm_plan_free(void *data)
{
    free(data);
}

static vn_status norm_run(const vn_op_run_ctx *ctx)
{
    const vn_rownorm_plan *p = ctx->plan;
    const void *bias = p->has_bias ? ctx->inputs[2].data : NULL;
    return vn_rownorm_execute(ctx->device, p, ctx->inputs[0].data, ctx->inputs[1].data, bias,
                              ctx->outputs[0].data, ctx->counters);
}

#define NORM(name, domain, mode)                                                                   \
    {                                                                                              \
        {name, domain, 2, 3, 1, VN_DTYPES_FLOAT, norm_infer, norm_plan, norm_plan_free, norm_run}, \
            mode                                                                                   \
    }

static const norm_def defs[] = {
    NORM("LayerNormalization", "", VN_ROWNORM_LAYER),
    NORM("RMSNormalization", "vinci", VN_ROWNORM_RMS),
};

const vn_op_def *const *vn_ops_norm_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0].def, &defs[1].def};
    *count = 2;
    return ptrs;
}
