/*
 * misc_scatter.c — Scatter (opsets 9 and 10, deprecated): ScatterElements
 * under its old name. Every function forwards to the registered
 * ScatterElements, which reads the same inputs and "axis" attribute (its
 * messages name the node's own op, Scatter).
 */
#include "ops/misc.h"

static const vn_op_def *elements(void)
{
    return vn_op_find("ScatterElements", "");
}

static vn_status alias_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    const vn_op_def *d = elements();
    if (!d) return vn_error(VN_ERR_UNSUPPORTED, "Scatter", "ScatterElements is not registered");
    return d->infer(ctx, out);
}

static vn_status alias_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    const vn_op_def *d = elements();
    if (!d) return vn_error(VN_ERR_UNSUPPORTED, "Scatter", "ScatterElements is not registered");
    *plan = NULL;
    *workspace = 0;
    return d->plan ? d->plan(ctx, outputs, plan, workspace) : VN_OK;
}

static void alias_free(void *plan)
{
    const vn_op_def *d = elements();
    if (d && d->plan_free) d->plan_free(plan);
}

static vn_status alias_run(const vn_op_run_ctx *ctx)
{
    return elements()->run(ctx);
}

const vn_op_def vn_misc_scatter_def = {
    "Scatter", "", 3, 3, 1, VN_DTYPES_ALL, alias_infer, alias_plan, alias_free, alias_run};
