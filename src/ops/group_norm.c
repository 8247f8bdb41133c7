/*
 * group_norm.c — GroupNormalization (ONNX 18, 21) and InstanceNormalization
 * (ONNX 1 .. 22) on [N, C, ...] float tensors; one implementation, since
 * instance normalization is group normalization with C groups.
 *
 * Per (n, group) the channels of the group are one contiguous span; its
 * mean and population variance are taken in double (two passes, so at least
 * as accurate as any stash_type), then
 *   y = (x - mean) / sqrt(var + epsilon) * scale + bias
 * with scale and bias per channel (InstanceNormalization, GroupNormalization
 * 21: size C) or per group (GroupNormalization 18: size num_groups; a size
 * that is both is the same either way).
 */
#include <math.h>
#include <stdlib.h>

#include "ops/cast.h"
#include "ops/quant.h"

typedef struct gn_plan {
    vn_dtype dt;
    int64_t N, C, G, S; /* S: elements per channel */
    double eps;
    bool per_group; /* scale / bias indexed by group, not channel */
} gn_plan;

static vn_status gn_check(const vn_op_ctx *ctx, const char *where, gn_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    char a[128], b[128];
    bool instance = ctx->def->name[0] == 'I';
    if (x->rank < 2)
        return vn_error(VN_ERR_SHAPE, where, "x %s must have rank >= 2 (N, C, ...)",
                        vn_desc_format(x, a, sizeof a));
    p->dt = x->dtype, p->N = x->dims[0], p->C = x->dims[1], p->S = 1;
    for (int32_t d = 2; d < x->rank; d++) p->S *= x->dims[d];
    vn_attrs_float(ctx->attrs, "epsilon", 1e-5, &p->eps);
    p->G = p->C;
    if (!instance) {
        vn_status st = vn_so_attr_int(ctx, where, "num_groups", 0, &p->G);
        if (st != VN_OK) return st;
        if (p->G < 1 || p->C % p->G != 0)
            return vn_error(VN_ERR_INVALID_ARG, where,
                            "num_groups %lld must be >= 1 and divide C of x %s", (long long)p->G,
                            vn_desc_format(x, a, sizeof a));
    }
    for (int32_t i = 1; i < 3; i++) {
        const vn_tensor_desc *s = &ctx->inputs[i];
        int64_t n = s->rank == 1 ? s->dims[0] : -1;
        bool ok = s->dtype == x->dtype && (n == p->C || (!instance && n == p->G));
        if (!ok)
            return vn_error(VN_ERR_SHAPE, where, "%s %s must be %s[C]%s for x %s",
                            i == 1 ? "scale" : "bias", vn_desc_format(s, a, sizeof a),
                            vn_dtype_name(x->dtype), instance ? "" : " or [num_groups]",
                            vn_desc_format(x, b, sizeof b));
        if (i == 1)
            p->per_group = n != p->C;
        else if ((n != p->C) != p->per_group)
            return vn_error(VN_ERR_SHAPE, where, "scale and bias sizes differ");
    }
    return VN_OK;
}

static vn_status gn_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    gn_plan p;
    out[0] = ctx->inputs[0];
    return gn_check(ctx, where, &p);
}

static vn_status gn_plan_new(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    gn_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = gn_check(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

/* Mean and population variance of x[off, off + n), two passes in double. */
static void gn_stats(vn_dtype dt, const void *x, int64_t off, int64_t n, double *mean, double *var)
{
    double s = 0.0, q = 0.0;
    for (int64_t i = 0; i < n; i++) s += vn_cast_load_f64(dt, x, off + i);
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) {
        double d = vn_cast_load_f64(dt, x, off + i) - *mean;
        q += d * d;
    }
    *var = q / (double)n;
}

static vn_status gn_run(const vn_op_run_ctx *ctx)
{
    const gn_plan *p = ctx->plan;
    const void *x = ctx->inputs[0].data, *sc = ctx->inputs[1].data, *bi = ctx->inputs[2].data;
    void *y = ctx->outputs[0].data;
    int64_t cg = p->C / p->G, span = cg * p->S;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t g = 0; g < p->G; g++) {
            int64_t off = (n * p->C + g * cg) * p->S;
            double mean, var;
            gn_stats(p->dt, x, off, span, &mean, &var);
            double inv = 1.0 / sqrt(var + p->eps);
            for (int64_t c = 0; c < cg; c++) {
                int64_t si = p->per_group ? g : g * cg + c;
                double s = vn_cast_load_f64(p->dt, sc, si), b = vn_cast_load_f64(p->dt, bi, si);
                for (int64_t i = 0; i < p->S; i++) {
                    int64_t e = off + c * p->S + i;
                    double v = (vn_cast_load_f64(p->dt, x, e) - mean) * inv * s + b;
                    vn_cast_store_f64(p->dt, y, e, v);
                }
            }
        }
    return VN_OK;
}

const vn_op_def vn_instance_norm_def = {
    "InstanceNormalization", "", 3, 3, 1, VN_DTYPES_FLOAT, gn_infer, gn_plan_new, free, gn_run};
const vn_op_def vn_group_norm_def = {"GroupNormalization", "",       3,           3,    1,
                                     VN_DTYPES_FLOAT,      gn_infer, gn_plan_new, free, gn_run};
