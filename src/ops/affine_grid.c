/*
 * affine_grid.c — AffineGrid (ONNX 20): the sampling grid of GridSample for
 * a batch of affine matrices. theta [N, 2, 3] with size (N, C, H, W) gives
 * [N, H, W, 2]; theta [N, 3, 4] with (N, C, D, H, W) gives [N, D, H, W, 3].
 * Each output point is theta[n] applied to the homogeneous normalised
 * coordinates (x, y[, z], 1) of its pixel: -1 + 2i / (n - 1) with
 * align_corners, else the pixel centres -1 + (2i + 1) / n. size is a
 * constant input.
 */
#include <stdlib.h>

#include "ops/extra.h"

typedef struct ag_plan {
    int32_t k; /* spatial dims: 2 or 3 */
    int64_t N, sp[3], points;
    bool align;
    vn_dtype dt;
} ag_plan;

static vn_status ag_params(const vn_op_ctx *ctx, const char *where, ag_plan *p)
{
    const vn_tensor_desc *t = &ctx->inputs[0];
    int64_t size[5], align;
    int32_t n = 0;
    vn_status st = vn_so_const_ints(ctx, where, 1, "size", size, 5, &n);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "align_corners", 0, &align);
    if (st != VN_OK) return st;
    p->k = n - 2;
    if ((n != 4 && n != 5) || t->rank != 3 || t->dims[0] != size[0] || t->dims[1] != p->k ||
        t->dims[2] != p->k + 1)
        return vn_error(VN_ERR_SHAPE, where,
                        "needs theta [N, 2, 3] with size (N, C, H, W) or [N, 3, 4] with "
                        "(N, C, D, H, W)");
    p->N = size[0], p->points = 1, p->align = align != 0, p->dt = t->dtype;
    for (int32_t d = 0; d < p->k; d++) {
        p->sp[d] = size[2 + d];
        if (p->sp[d] < 0) return vn_error(VN_ERR_SHAPE, where, "negative size");
        p->points *= p->sp[d];
    }
    return VN_OK;
}

static vn_status ag_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    ag_plan p = {0};
    vn_status st = ag_params(ctx, where, &p);
    if (st != VN_OK) return st;
    int64_t dims[5] = {p.N};
    for (int32_t d = 0; d < p.k; d++) dims[1 + d] = p.sp[d];
    dims[1 + p.k] = p.k;
    *out = vn_so_desc(ctx->inputs[0].dtype, p.k + 2, dims);
    return VN_OK;
}

static vn_status ag_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    ag_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = ag_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

static double coord(const ag_plan *p, int64_t i, int64_t n)
{
    if (p->align) return n > 1 ? -1.0 + 2.0 * (double)i / (double)(n - 1) : -1.0;
    return -1.0 + (2.0 * (double)i + 1.0) / (double)n;
}

static vn_status ag_run(const vn_op_run_ctx *ctx)
{
    const ag_plan *p = ctx->plan;
    const void *theta = ctx->inputs[0].data;
    int32_t k = p->k;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t pt = 0; pt < p->points; pt++) {
            double h[4] = {0, 0, 0, 1}; /* x, y[, z], 1: the last dim first */
            int64_t rem = pt;
            for (int32_t d = k - 1; d >= 0; d--) {
                h[k - 1 - d] = coord(p, rem % p->sp[d], p->sp[d]);
                rem /= p->sp[d];
            }
            h[k] = 1.0;
            for (int32_t r = 0; r < k; r++) {
                double acc = 0.0;
                for (int32_t c = 0; c <= k; c++)
                    acc += vn_cast_load_f64(p->dt, theta, (n * k + r) * (k + 1) + c) * h[c];
                vn_cast_store_f64(p->dt, ctx->outputs[0].data, (n * p->points + pt) * k + r, acc);
            }
        }
    return VN_OK;
}

const vn_op_def vn_affine_grid_def = {"AffineGrid",    "",       2,          2,    1,
                                      VN_DTYPES_FLOAT, ag_infer, ag_plan_fn, free, ag_run};
