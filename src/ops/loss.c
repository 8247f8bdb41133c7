/*
 * loss.c — NegativeLogLikelihoodLoss (ONNX 13 / 22) and
 * SoftmaxCrossEntropyLoss (ONNX 13): input [N, C, d1..dk], target [N, d1..dk]
 * (i32 / i64), optional weight [C]; reduction none / sum / mean (default),
 * optional ignore_index. SoftmaxCrossEntropyLoss takes scores, applies a
 * log-softmax over C and can also output it (log_prob, the input's shape).
 *
 * Losses are evaluation-side operators of small size in the tests and in
 * exported training graphs: one scalar loop over (n, d) in double, with the
 * log-softmax computed per (n, d) on the fly so no workspace is needed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cast.h"
#include "ops/ops_internal.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct loss_def {
    vn_op_def def;
    bool softmax; /* SoftmaxCrossEntropyLoss */
} loss_def;

typedef struct loss_plan {
    vn_dtype dtype, tdtype;
    int64_t N, C, D; /* D = d1 * ... * dk */
    int32_t reduction;
    bool has_ignore, has_weight, softmax;
    int64_t ignore;
} loss_plan;

static vn_status get_reduction(const vn_op_ctx *ctx, const char *where, int32_t *red)
{
    const vn_attr *a = vn_attrs_find(ctx->attrs, "reduction");
    const char *s = a && a->type == VN_ATTR_STRING && a->s ? a->s : "mean";
    *red = !strcmp(s, "none") ? RED_NONE : !strcmp(s, "sum") ? RED_SUM : RED_MEAN;
    if (*red == RED_MEAN && strcmp(s, "mean"))
        return vn_error(VN_ERR_INVALID_ARG, where, "reduction '%s' is not none, sum or mean", s);
    return VN_OK;
}

/* target is [N, d1..dk] of an integer dtype; weight, when given, is [C]. */
static vn_status check_shapes(const vn_op_ctx *ctx, const char *where)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *t = &ctx->inputs[1];
    char a[128], b[128];
    if (x->rank < 2) return vn_error(VN_ERR_SHAPE, where, "input must be [N, C, ...]");
    if (t->dtype != VN_I64 && t->dtype != VN_I32)
        return vn_error(VN_ERR_DTYPE, where, "target has dtype %s (int32 or int64 expected)",
                        vn_dtype_name(t->dtype));
    bool ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
    for (int32_t d = 1; ok && d < t->rank; d++) ok = t->dims[d] == x->dims[d + 1];
    if (!ok)
        return vn_error(VN_ERR_SHAPE, where, "target %s does not match input %s",
                        vn_desc_format(t, a, sizeof a), vn_desc_format(x, b, sizeof b));
    if (ctx->num_inputs > 2 && ctx->inputs[2].rank >= 0) {
        const vn_tensor_desc *w = &ctx->inputs[2];
        if (w->rank != 1 || w->dims[0] != x->dims[1] || w->dtype != x->dtype)
            return vn_error(VN_ERR_SHAPE, where, "weight %s must be [C] of the input's dtype",
                            vn_desc_format(w, a, sizeof a));
    }
    return VN_OK;
}

static vn_status loss_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int32_t red;
    vn_status st = check_shapes(ctx, where);
    if (st == VN_OK) st = get_reduction(ctx, where, &red);
    if (st != VN_OK) return st;
    out[0] = ctx->inputs[1];
    out[0].dtype = ctx->inputs[0].dtype;
    if (red != RED_NONE) out[0].rank = 0;
    if (ctx->def->num_outputs > 1) out[1] = ctx->inputs[0]; /* log_prob */
    return VN_OK;
}

static vn_status loss_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                              size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    loss_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    const vn_tensor_desc *x = &ctx->inputs[0];
    p->dtype = x->dtype;
    p->tdtype = ctx->inputs[1].dtype;
    p->N = x->dims[0];
    p->C = x->dims[1];
    p->D = 1;
    for (int32_t d = 2; d < x->rank; d++) p->D *= x->dims[d];
    p->has_weight = ctx->num_inputs > 2 && ctx->inputs[2].rank >= 0;
    p->softmax = ((const loss_def *)ctx->def)->softmax;
    p->has_ignore = vn_attrs_find(ctx->attrs, "ignore_index") != NULL;
    vn_attrs_int(ctx->attrs, "ignore_index", 0, &p->ignore);
    get_reduction(ctx, where, &p->reduction);
    *data = p;
    *workspace = 0;
    return VN_OK;
}

/* log-softmax over C at (n, d): returns log(sum exp(x - max)) + max, and
 * writes every log-probability to lp when it is not NULL. */
static double log_norm(const loss_plan *p, const void *x, int64_t base, void *lp)
{
    double mx = -INFINITY, sum = 0.0;
    for (int64_t c = 0; c < p->C; c++)
        mx = fmax(mx, vn_cast_load_f64(p->dtype, x, base + c * p->D));
    for (int64_t c = 0; c < p->C; c++)
        sum += exp(vn_cast_load_f64(p->dtype, x, base + c * p->D) - mx);
    double z = log(sum) + mx;
    for (int64_t c = 0; lp && c < p->C; c++)
        vn_cast_store_f64(p->dtype, lp, base + c * p->D,
                          vn_cast_load_f64(p->dtype, x, base + c * p->D) - z);
    return z;
}

static vn_status loss_run(const vn_op_run_ctx *ctx)
{
    const loss_plan *p = ctx->plan;
    const void *x = ctx->inputs[0].data, *t = ctx->inputs[1].data;
    const void *w = p->has_weight ? ctx->inputs[2].data : NULL;
    void *lp = p->softmax && ctx->num_outputs > 1 ? ctx->outputs[1].data : NULL;
    double total = 0.0, wsum = 0.0;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t d = 0; d < p->D; d++) {
            int64_t base = n * p->C * p->D + d, i = n * p->D + d;
            double z = p->softmax ? log_norm(p, x, base, lp) : 0.0;
            int64_t k = vn_cast_load_i64(p->tdtype, t, i);
            bool skip = (p->has_ignore && k == p->ignore) || k < 0 || k >= p->C;
            double wk = skip ? 0.0 : w ? vn_cast_load_f64(p->dtype, w, k) : 1.0;
            double l = skip ? 0.0 : -(vn_cast_load_f64(p->dtype, x, base + k * p->D) - z) * wk;
            if (p->reduction == RED_NONE) vn_cast_store_f64(p->dtype, ctx->outputs[0].data, i, l);
            total += l;
            wsum += wk;
        }
    if (p->reduction != RED_NONE)
        vn_cast_store_f64(p->dtype, ctx->outputs[0].data, 0,
                          p->reduction == RED_SUM ? total : total / wsum);
    return VN_OK;
}

static const loss_def defs[] = {
    {{"NegativeLogLikelihoodLoss", "", 2, 3, 1, VN_DTYPES_FLOAT, loss_infer, loss_plan_fn, free,
      loss_run},
     false},
    {{"SoftmaxCrossEntropyLoss", "", 2, 3, 2, VN_DTYPES_FLOAT, loss_infer, loss_plan_fn, free,
      loss_run},
     true},
};

const vn_op_def *const *vn_ops_loss_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0].def, &defs[1].def};
    *count = 2;
    return ptrs;
}
