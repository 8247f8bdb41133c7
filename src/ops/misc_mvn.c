/*
 * misc_mvn.c — MeanVarianceNormalization: y = (x - mean) / (std + 1e-9)
 * over the "axes" (default 0, 2, 3), mean and population standard
 * deviation per group of the other dims, in double. The plan maps each
 * element to its group; the run makes two passes (mean, then variance).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/misc.h"

typedef struct mvn_plan {
    int64_t numel, groups;
    int64_t *group; /* group of each element */
    vn_dtype dt;
} mvn_plan;

static void mvn_free(void *plan)
{
    mvn_plan *p = plan;
    if (p) free(p->group);
    free(p);
}

static vn_status mvn_axes(const vn_op_ctx *ctx, const char *where, bool *mask)
{
    int64_t axes[VN_MAX_RANK] = {0, 2, 3};
    int32_t n = 3;
    bool present = false;
    vn_status st = vn_so_attr_ints(ctx, where, "axes", axes, VN_MAX_RANK, &n, &present);
    if (st != VN_OK) return st;
    if (!present) n = 3;
    return vn_so_axes(where, "axes", axes, n, ctx->inputs[0].rank, mask);
}

static vn_status mvn_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    bool mask[VN_MAX_RANK] = {0};
    vn_status st = mvn_axes(ctx, where, mask);
    if (st == VN_OK) *out = ctx->inputs[0];
    return st;
}

static vn_status mvn_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    (void)outputs;
    const vn_tensor_desc *x = &ctx->inputs[0];
    bool mask[VN_MAX_RANK] = {0};
    *workspace = 0;
    vn_status st = mvn_axes(ctx, where, mask);
    if (st != VN_OK) return st;
    mvn_plan *p = calloc(1, sizeof *p);
    if (p) {
        p->numel = vn_desc_numel(x);
        p->group = malloc((size_t)vn_ops_max(p->numel, 1) * sizeof(int64_t));
    }
    if (!p || !p->group) {
        mvn_free(p);
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    }
    p->dt = x->dtype;
    p->groups = 1;
    for (int32_t d = 0; d < x->rank; d++)
        if (!mask[d]) p->groups *= x->dims[d];
    for (int64_t i = 0; i < p->numel; i++) {
        int64_t rem = i, g = 0, scale = 1;
        for (int32_t d = x->rank - 1; d >= 0; d--) {
            int64_t c = rem % x->dims[d];
            rem /= x->dims[d];
            if (mask[d]) continue;
            g += c * scale;
            scale *= x->dims[d];
        }
        p->group[i] = g;
    }
    *workspace = (size_t)vn_ops_max(3 * p->groups, 1) * sizeof(double);
    *plan = p;
    return VN_OK;
}

static vn_status mvn_run(const vn_op_run_ctx *ctx)
{
    const mvn_plan *p = ctx->plan;
    double *sum = ctx->workspace, *sq = sum + p->groups, *cnt = sq + p->groups;
    const void *x = ctx->inputs[0].data;
    memset(sum, 0, (size_t)(3 * p->groups) * sizeof(double));
    for (int64_t i = 0; i < p->numel; i++) {
        sum[p->group[i]] += vn_cast_load_f64(p->dt, x, i);
        cnt[p->group[i]] += 1;
    }
    for (int64_t g = 0; g < p->groups; g++) sum[g] /= cnt[g];
    for (int64_t i = 0; i < p->numel; i++) {
        double d = vn_cast_load_f64(p->dt, x, i) - sum[p->group[i]];
        sq[p->group[i]] += d * d;
    }
    for (int64_t g = 0; g < p->groups; g++) sq[g] = sqrt(sq[g] / cnt[g]) + 1e-9;
    for (int64_t i = 0; i < p->numel; i++) {
        int64_t g = p->group[i];
        double v = (vn_cast_load_f64(p->dt, x, i) - sum[g]) / sq[g];
        vn_cast_store_f64(p->dt, ctx->outputs[0].data, i, v);
    }
    return VN_OK;
}

const vn_op_def vn_misc_mvn_def = {
    "MeanVarianceNormalization",     "",        1,           1,        1,
    VN_DTYPES_FLOAT | VN_DTYPES_F64, mvn_infer, mvn_plan_fn, mvn_free, mvn_run};
