/*
 * misc_cumsum.c — CumSum and CumProd (axis a constant scalar input;
 * exclusive, reverse). Each line along the axis is a running sum or product
 * in double (int64 for integer dtypes, wrapping); a tile is one line.
 */
#include <stdlib.h>

#include "kernel/core_internal.h"
#include "ops/misc.h"

typedef struct cumsum_plan {
    int64_t outer, A, inner, lines;
    bool exclusive, reverse, prod;
    vn_dtype dt;
    int32_t block_dim;
} cumsum_plan;

static vn_status cumsum_params(const vn_op_ctx *ctx, const char *where, cumsum_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t ax[1], ex, rev;
    int32_t n = 0, axis;
    vn_status st = vn_so_const_ints(ctx, where, 1, "axis", ax, 1, &n);
    if (st == VN_OK && n != 1) st = vn_error(VN_ERR_SHAPE, where, "'axis' must hold one value");
    if (st == VN_OK && x->rank < 1) st = vn_error(VN_ERR_SHAPE, where, "x must have rank >= 1");
    if (st == VN_OK) st = vn_so_axis(where, "axis", ax[0], x->rank, &axis);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "exclusive", 0, &ex);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "reverse", 0, &rev);
    if (st != VN_OK) return st;
    vn_misc_split3(x, axis, &p->outer, &p->A, &p->inner);
    p->lines = p->outer * p->inner;
    p->exclusive = ex != 0;
    p->reverse = rev != 0;
    p->prod = ctx->def->name[3] == 'P'; /* CumProd */
    p->dt = x->dtype;
    return VN_OK;
}

static vn_status cumsum_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    cumsum_plan p = {0};
    vn_status st = cumsum_params(ctx, where, &p);
    if (st == VN_OK) *out = ctx->inputs[0];
    return st;
}

static vn_status cumsum_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                                size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    cumsum_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = cumsum_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    p->block_dim = vn_ops_block_dim(ctx->device, p->lines, p->A);
    *plan = p;
    return VN_OK;
}

typedef struct cumsum_args {
    const cumsum_plan *p;
    const void *x;
    void *y;
} cumsum_args;

static inline void accumulate(bool prod, double *s, uint64_t *si, double v, int64_t vi)
{
    if (prod) {
        *s *= v;
        *si *= (uint64_t)vi;
    } else {
        *s += v;
        *si += (uint64_t)vi;
    }
}

static void cumsum_kernel(vn_core *core, const void *args)
{
    const cumsum_args *a = args;
    const cumsum_plan *p = a->p;
    bool flt = vn_cast_is_float(p->dt);
    for (int64_t l; vn_tile_next(core, &l);) {
        int64_t base = l / p->inner * p->A * p->inner + l % p->inner;
        double s = p->prod ? 1 : 0;
        uint64_t si = p->prod ? 1 : 0;
        for (int64_t j = 0; j < p->A; j++) {
            int64_t o = base + (p->reverse ? p->A - 1 - j : j) * p->inner;
            double v = flt ? vn_cast_load_f64(p->dt, a->x, o) : 0;
            int64_t vi = flt ? 0 : vn_cast_load_i64(p->dt, a->x, o);
            if (!p->exclusive) accumulate(p->prod, &s, &si, v, vi);
            if (flt)
                vn_cast_store_f64(p->dt, a->y, o, s);
            else
                vn_cast_store_i64(p->dt, a->y, o, (int64_t)si);
            if (p->exclusive) accumulate(p->prod, &s, &si, v, vi);
        }
        core->counters.vector_elem_ops += p->A;
    }
}

static vn_status cumsum_run(const vn_op_run_ctx *ctx)
{
    const cumsum_plan *p = ctx->plan;
    cumsum_args a = {p, ctx->inputs[0].data, ctx->outputs[0].data};
    vn_launch_desc d = {cumsum_kernel, "vn_cumsum", p->block_dim, &a, -1, p->lines};
    return p->lines ? vn_launch(ctx->device, &d, ctx->counters) : VN_OK;
}

/* computed in double / int64 through the cast.h loads */
#define DTYPES (VN_DTYPES_FLOAT | VN_DTYPES_F64 | VN_DTYPES_INT)

const vn_op_def vn_misc_cumsum_def = {"CumSum",       "",   2,         2, 1, DTYPES, cumsum_infer,
                                      cumsum_plan_fn, free, cumsum_run};
const vn_op_def vn_misc_cumprod_def = {"CumProd",      "",   2,         2, 1, DTYPES, cumsum_infer,
                                       cumsum_plan_fn, free, cumsum_run};
