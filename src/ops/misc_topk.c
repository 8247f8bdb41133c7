/*
 * misc_topk.c — TopK (K a constant input, or the opset 1 attribute 'k';
 * axis, largest, sorted). Outputs Values and Indices (int64). Ties keep
 * the lower index first (the ONNX rule), NaN counts as the largest value.
 * A tile is one line along the axis: its (value, index) pairs are sorted
 * in the block's slice of the workspace (A pairs per block).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/misc.h"

typedef struct pair {
    double v;
    int64_t i;
} pair;

typedef struct topk_plan {
    int32_t axis;
    bool largest;
    int64_t k, outer, A, inner, lines;
    vn_dtype dt;
    int32_t block_dim;
} topk_plan;

/* NaN above every number; equal values by ascending index. */
static int cmp_largest(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    bool xn = x->v != x->v, yn = y->v != y->v;
    if (xn != yn) return xn ? -1 : 1;
    if (!xn && x->v != y->v) return x->v > y->v ? -1 : 1;
    return x->i < y->i ? -1 : 1;
}

static int cmp_smallest(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    bool xn = x->v != x->v, yn = y->v != y->v;
    if (xn != yn) return xn ? 1 : -1;
    if (!xn && x->v != y->v) return x->v < y->v ? -1 : 1;
    return x->i < y->i ? -1 : 1;
}

static vn_status topk_params(const vn_op_ctx *ctx, const char *where, topk_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t axis, largest, k = 0, vals[1];
    int32_t n = 0;
    vn_status st = vn_so_attr_int(ctx, where, "axis", -1, &axis);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "largest", 1, &largest);
    if (st == VN_OK && x->rank < 1) st = vn_error(VN_ERR_SHAPE, where, "X must have rank >= 1");
    if (st == VN_OK) st = vn_so_axis(where, "axis", axis, x->rank, &p->axis);
    if (st == VN_OK && ctx->num_inputs > 1) {
        st = vn_so_const_ints(ctx, where, 1, "K", vals, 1, &n);
        k = n == 1 ? vals[0] : -1;
    } else if (st == VN_OK) {
        st = vn_so_attr_int(ctx, where, "k", -1, &k);
    }
    if (st != VN_OK) return st;
    if (k < 0 || k > x->dims[p->axis])
        return vn_error(VN_ERR_INVALID_ARG, where, "K = %lld is outside [0, %lld]", (long long)k,
                        (long long)x->dims[p->axis]);
    p->k = k;
    p->largest = largest != 0;
    p->dt = x->dtype;
    vn_misc_split3(x, p->axis, &p->outer, &p->A, &p->inner);
    p->lines = p->outer * p->inner;
    return VN_OK;
}

static vn_status topk_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    topk_plan p = {0};
    vn_status st = topk_params(ctx, where, &p);
    if (st != VN_OK) return st;
    out[0] = ctx->inputs[0];
    out[0].dims[p.axis] = p.k;
    out[1] = out[0];
    out[1].dtype = VN_I64;
    return VN_OK;
}

static vn_status topk_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                              size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    topk_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = topk_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    p->block_dim = vn_ops_block_dim(ctx->device, p->lines, p->A * 8);
    *workspace = (size_t)(vn_ops_max(1, p->block_dim) * vn_ops_max(1, p->A)) * sizeof(pair);
    *plan = p;
    return VN_OK;
}

typedef struct topk_args {
    const topk_plan *p;
    const void *x;
    void *vals;
    int64_t *idx;
    pair *ws;
} topk_args;

static void topk_kernel(vn_core *core, const void *args)
{
    const topk_args *a = args;
    const topk_plan *p = a->p;
    pair *buf = a->ws + vn_block_idx(core) * p->A;
    for (int64_t l; vn_tile_next(core, &l);) {
        int64_t o = l / p->inner, in = l % p->inner;
        for (int64_t i = 0; i < p->A; i++) {
            buf[i].v = vn_cast_load_f64(p->dt, a->x, (o * p->A + i) * p->inner + in);
            buf[i].i = i;
        }
        qsort(buf, (size_t)p->A, sizeof *buf, p->largest ? cmp_largest : cmp_smallest);
        for (int64_t j = 0; j < p->k; j++) {
            int64_t dst = (o * p->k + j) * p->inner + in,
                    src = (o * p->A + buf[j].i) * p->inner + in;
            size_t es = vn_dtype_size(p->dt);
            memcpy((uint8_t *)a->vals + dst * (int64_t)es,
                   (const uint8_t *)a->x + src * (int64_t)es, es);
            a->idx[dst] = buf[j].i;
        }
        core->counters.vector_elem_ops += p->A;
    }
}

static vn_status topk_run(const vn_op_run_ctx *ctx)
{
    const topk_plan *p = ctx->plan;
    if (p->lines == 0 || p->k == 0) return VN_OK;
    topk_args a = {p, ctx->inputs[0].data, ctx->outputs[0].data, ctx->outputs[1].data,
                   ctx->workspace};
    vn_launch_desc d = {topk_kernel, "vn_topk", p->block_dim, &a, -1, p->lines};
    return vn_launch(ctx->device, &d, ctx->counters);
}

/* compared in double (i64 beyond 2^53 inexactly; u64 refused) */
#define DTYPES (VN_DTYPES_FLOAT | VN_DTYPES_F64 | VN_DTYPES_INT)

const vn_op_def vn_misc_topk_def = {"TopK",     "",           1,    2,       2, DTYPES,
                                    topk_infer, topk_plan_fn, free, topk_run};
