/*
 * misc_nonzero.c — NonZero: the output shape [rank, count] depends on the
 * input's values, so the input must be a constant known at plan time; the
 * plan computes the indices (row-major order) and the run copies them.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/misc.h"

typedef struct nonzero_plan {
    int64_t count, n;
    int64_t *idx; /* [rank, count] */
} nonzero_plan;

static vn_status count_nonzero(const vn_op_ctx *ctx, const char *where, int64_t *count)
{
    const void *p = vn_so_const(ctx, 0);
    if (!p)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "input 0 must be a constant known at plan time (its values decide the "
                        "output shape)");
    *count = 0;
    for (int64_t i = 0; i < vn_desc_numel(&ctx->inputs[0]); i++)
        *count += vn_cast_load_f64(ctx->inputs[0].dtype, p, i) != 0;
    return VN_OK;
}

static vn_status nonzero_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t count = 0, dims[2] = {ctx->inputs[0].rank, 0};
    vn_status st = count_nonzero(ctx, where, &count);
    dims[1] = count;
    if (st == VN_OK) *out = vn_so_desc(VN_I64, 2, dims);
    return st;
}

static void nonzero_free(void *plan)
{
    nonzero_plan *p = plan;
    if (p) free(p->idx);
    free(p);
}

static vn_status nonzero_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                                 size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const vn_tensor_desc *x = &ctx->inputs[0];
    nonzero_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = count_nonzero(ctx, where, &p->count);
    p->n = p->count * x->rank;
    p->idx = st == VN_OK ? malloc((size_t)vn_ops_max(1, p->n) * sizeof(int64_t)) : NULL;
    if (!p->idx) {
        nonzero_free(p);
        return st != VN_OK ? st : vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    }
    const void *data = vn_so_const(ctx, 0);
    for (int64_t i = 0, c = 0; i < vn_desc_numel(x); i++) {
        if (vn_cast_load_f64(x->dtype, data, i) == 0) continue;
        int64_t rem = i;
        for (int32_t d = x->rank - 1; d >= 0; d--) {
            p->idx[d * p->count + c] = rem % x->dims[d];
            rem /= x->dims[d];
        }
        c++;
    }
    *plan = p;
    return VN_OK;
}

static vn_status nonzero_run(const vn_op_run_ctx *ctx)
{
    const nonzero_plan *p = ctx->plan;
    memcpy(ctx->outputs[0].data, p->idx, (size_t)p->n * sizeof(int64_t));
    return VN_OK;
}

const vn_op_def vn_misc_nonzero_def = {
    "NonZero",       "",           1,          1, 1, VN_DTYPES_ALL, nonzero_infer,
    nonzero_plan_fn, nonzero_free, nonzero_run};
