/*
 * misc_det.c — Det: the determinant of each square matrix of [..., M, M],
 * by LU decomposition with partial pivoting in double (one matrix per tile).
 */
#include <math.h>
#include <stdlib.h>

#include "kernel/core_internal.h"
#include "ops/misc.h"

typedef struct det_plan {
    int64_t count, m;
    vn_dtype dt;
    int32_t block_dim;
} det_plan;

static vn_status det_params(const vn_op_ctx *ctx, const char *where, det_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2]) {
        char buf[96];
        return vn_error(VN_ERR_SHAPE, where, "input %s is not [..., M, M]",
                        vn_desc_format(x, buf, sizeof buf));
    }
    p->m = x->dims[x->rank - 1];
    p->count = 1;
    for (int32_t d = 0; d < x->rank - 2; d++) p->count *= x->dims[d];
    p->dt = x->dtype;
    return VN_OK;
}

static vn_status det_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    det_plan p;
    vn_status st = det_params(ctx, where, &p);
    if (st != VN_OK) return st;
    *out = ctx->inputs[0];
    out->rank -= 2;
    return VN_OK;
}

static vn_status det_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    (void)outputs;
    det_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = det_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    p->block_dim = vn_ops_block_dim(ctx->device, p->count, p->m * p->m * p->m);
    *workspace = (size_t)p->block_dim * (size_t)vn_ops_max(p->m * p->m, 1) * sizeof(double);
    *plan = p;
    return VN_OK;
}

/* det of the m x m matrix in a (destroyed). */
static double lu_det(double *a, int64_t m)
{
    double det = 1;
    for (int64_t k = 0; k < m; k++) {
        int64_t piv = k;
        for (int64_t r = k + 1; r < m; r++)
            if (fabs(a[r * m + k]) > fabs(a[piv * m + k])) piv = r;
        if (a[piv * m + k] == 0) return 0;
        if (piv != k) {
            for (int64_t c = 0; c < m; c++) {
                double t = a[k * m + c];
                a[k * m + c] = a[piv * m + c];
                a[piv * m + c] = t;
            }
            det = -det;
        }
        det *= a[k * m + k];
        for (int64_t r = k + 1; r < m; r++) {
            double f = a[r * m + k] / a[k * m + k];
            for (int64_t c = k + 1; c < m; c++) a[r * m + c] -= f * a[k * m + c];
        }
    }
    return det;
}

typedef struct det_args {
    const det_plan *p;
    const void *x;
    void *y;
    double *ws;
} det_args;

static void det_kernel(vn_core *core, const void *args)
{
    const det_args *a = args;
    const det_plan *p = a->p;
    int64_t mm = p->m * p->m;
    double *buf = a->ws + (int64_t)vn_block_idx(core) * vn_ops_max(mm, 1);
    for (int64_t i; vn_tile_next(core, &i);) {
        for (int64_t e = 0; e < mm; e++) buf[e] = vn_cast_load_f64(p->dt, a->x, i * mm + e);
        vn_cast_store_f64(p->dt, a->y, i, lu_det(buf, p->m));
        core->counters.vector_elem_ops += mm * p->m;
    }
}

static vn_status det_run(const vn_op_run_ctx *ctx)
{
    const det_plan *p = ctx->plan;
    det_args a = {p, ctx->inputs[0].data, ctx->outputs[0].data, ctx->workspace};
    vn_launch_desc d = {det_kernel, "vn_det", p->block_dim, &a, -1, p->count};
    return p->count > 0 ? vn_launch(ctx->device, &d, ctx->counters) : VN_OK;
}

const vn_op_def vn_misc_det_def = {
    "Det", "", 1, 1, 1, VN_DTYPES_FLOAT | VN_DTYPES_F64, det_infer, det_plan_fn, free, det_run};
