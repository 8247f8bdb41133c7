/*
 * layernorm.c — LayerNormalization (ONNX opset 17), RMSNormalization (ONNX opset
 * 23) and vinci::RMSNormalization, all run by the row-normalisation kernel
 * (rownorm.c) with a mode flag.
 *
 * ONNX normalises over every dim from `axis` on, so any axis is the same
 * [rows, H] problem: rows = prod(dims[:axis]), H = prod(dims[axis:]).
 * Inputs: X, Scale (gamma), optional B (beta), all of X's dtype; Scale and
 * B have the normalised shape (leading 1s allowed). Outputs: Y, and for
 * LayerNormalization the optional Mean and InvStdDev (f32, X's shape with
 * the normalised dims 1). The kernel does not produce those two, so when the
 * node names them (the graph's internal "_num_outputs" attribute, ir_attrs.c)
 * a second, scalar pass computes them; nodes with Y alone do not pay for it.
 */
#include <math.h>
#include <stdlib.h>

#include "ops/cast.h"
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
    for (int32_t k = 1; k < ctx->def->num_outputs; k++) { /* Mean, InvStdDev */
        outputs[k] = *x;
        outputs[k].dtype = VN_F32;
        for (int32_t d = axis; d < x->rank; d++) outputs[k].dims[d] = 1;
    }
    return VN_OK;
}

/* The plan: the kernel's, and whether Mean / InvStdDev are wanted. */
typedef struct norm_plan_data {
    vn_rownorm_plan k; /* first: norm_run passes it to the kernel */
    bool stats;
} norm_plan_data;

static vn_status norm_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                           size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int32_t axis = 0;
    vn_status st = get_axis(ctx, where, x->rank, &axis);
    if (st != VN_OK) return st;
    norm_plan_data *np = calloc(1, sizeof *np);
    if (!np) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    int64_t named = 1;
    vn_attrs_int(ctx->attrs, "_num_outputs", 1, &named);
    np->stats = named > 1 && ctx->def->num_outputs > 1;
    vn_rownorm_plan *p = &np->k;
    p->mode = ((const norm_def *)ctx->def)->mode;
    p->dtype = x->dtype;
    p->rows = 1;
    p->H = 1;
    for (int32_t d = 0; d < x->rank; d++) *(d < axis ? &p->rows : &p->H) *= x->dims[d];
    vn_attrs_float(ctx->attrs, "epsilon", 1e-5, &p->eps);
    p->has_bias = ctx->num_inputs > 2 && ctx->inputs[2].rank >= 0;
    st = vn_rownorm_plan_build(where, ctx->device, p);
    if (st != VN_OK) {
        free(np);
        return st;
    }
    *data = np;
    *workspace = 0;
    return VN_OK;
}

static void norm_plan_free(void *data)
{
    free(data);
}

/* Mean and 1 / sqrt(var + eps) of every row, in double (ONNX's stash type
 * is at least f32). */
static void row_stats(const vn_rownorm_plan *p, const void *x, float *mean, float *inv_std)
{
    for (int64_t r = 0; r < p->rows; r++) {
        double sum = 0.0, sq = 0.0;
        for (int64_t i = r * p->H; i < (r + 1) * p->H; i++) {
            double v = vn_cast_load_f64(p->dtype, x, i);
            sum += v;
            sq += v * v;
        }
        double m = sum / (double)p->H, var = sq / (double)p->H - m * m;
        if (mean) mean[r] = (float)m;
        if (inv_std) inv_std[r] = (float)(1.0 / sqrt((var > 0.0 ? var : 0.0) + p->eps));
    }
}

static vn_status norm_run(const vn_op_run_ctx *ctx)
{
    const vn_rownorm_plan *p = ctx->plan;
    if (((const norm_plan_data *)ctx->plan)->stats && ctx->num_outputs >= 3)
        row_stats(p, ctx->inputs[0].data, ctx->outputs[1].data, ctx->outputs[2].data);
    const void *bias = p->has_bias ? ctx->inputs[2].data : NULL;
    return vn_rownorm_execute(ctx->device, p, ctx->inputs[0].data, ctx->inputs[1].data, bias,
                              ctx->outputs[0].data, ctx->counters);
}

#define NORM(name, domain, max_in, nout, mode)                                                     \
    {                                                                                              \
        {name,      domain,         2,       max_in, nout, VN_DTYPES_FLOAT, norm_infer,            \
         norm_plan, norm_plan_free, norm_run},                                                     \
            mode                                                                                   \
    }

static const norm_def defs[] = {
    NORM("LayerNormalization", "", 3, 3, VN_ROWNORM_LAYER),
    NORM("RMSNormalization", "vinci", 3, 1, VN_ROWNORM_RMS),
    /* ONNX 23 (X, scale; axis, epsilon); takes vinci's optional bias too, so the name
     * alone (vn_op_plan_create) still finds an operator that accepts it */
    NORM("RMSNormalization", "", 3, 1, VN_ROWNORM_RMS),
};

const vn_op_def *const *vn_ops_norm_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0].def, &defs[1].def, &defs[2].def};
    *count = 3;
    return ptrs;
}
