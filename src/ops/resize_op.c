/*
 * resize_op.c — the Resize and Upsample operators (see resize.h).
 *
 * The plan is built once from the constant scales / sizes / roi: nearest
 * (and a resize that changes no axis) becomes a view-engine gather, exact
 * for every dtype, with the extrapolation value as the padding element;
 * linear and cubic become one separable f32 pass per resized axis with its
 * tap table precomputed, in the order of least estimated work (shrinking
 * axes first, the last axis's gather pass where the tensor is smallest).
 * f16 / bf16 are widened to f32 in the workspace and narrowed at the end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/resize.h"

typedef struct rz_plan {
    vn_view *view; /* nearest or identity: one gather */
    vn_dtype dt;
    float extrapolation;
    int32_t npass;
    rz_pass pass[VN_MAX_RANK];
    int64_t in_numel, out_numel, buf_elems; /* buf_elems: each of the two ping-pong buffers */
} rz_plan;

static vn_status rz_infer_common(const vn_op_ctx *ctx, vn_tensor_desc *out, bool upsample)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    rz_params p;
    vn_status st = vn_rz_params(ctx, where, upsample, &p);
    if (st != VN_OK) return st;
    if (p.mode != RZ_NEAREST && !vn_cast_is_float(ctx->inputs[0].dtype))
        return vn_error(VN_ERR_UNSUPPORTED, where, "linear and cubic modes need a float X");
    out[0] = ctx->inputs[0];
    for (int32_t d = 0; d < p.rank; d++) out[0].dims[d] = p.out[d];
    return VN_OK;
}

static vn_status resize_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    return rz_infer_common(ctx, out, false);
}

static vn_status upsample_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    return rz_infer_common(ctx, out, true);
}

static void rz_free(void *plan)
{
    rz_plan *p = plan;
    if (!p) return;
    vn_view_free(p->view);
    for (int32_t i = 0; i < p->npass; i++) vn_rz_taps_free(&p->pass[i].taps);
    free(p);
}

/* Nearest as a view: dim d's table maps output index to source offset. */
static vn_status plan_view(const vn_op_ctx *ctx, const char *where, const rz_params *rp, rz_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t strides[VN_MAX_RANK];
    vn_so_strides(x, strides);
    p->view = vn_view_new(where, x->rank, x->dtype);
    if (!p->view) return VN_ERR_OUT_OF_MEMORY;
    vn_cast_store_f64(x->dtype, p->view->pad, 0, rp->extrapolation);
    for (int32_t d = 0; d < x->rank; d++) {
        p->view->d[d].size = rp->out[d];
        if (vn_rz_axis_identity(rp, d)) {
            p->view->d[d].stride = strides[d];
            continue;
        }
        rz_taps t = {0};
        vn_status st = vn_rz_taps(rp, d, where, &t);
        int64_t *tab = st == VN_OK ? vn_view_table(where, p->view, d) : NULL;
        for (int64_t o = 0; tab && o < rp->out[d]; o++)
            tab[o] = t.idx[o] < 0 ? -1 : t.idx[o] * strides[d];
        vn_rz_taps_free(&t);
        if (!tab) return st != VN_OK ? st : VN_ERR_OUT_OF_MEMORY;
    }
    return vn_view_finish(where, ctx->device, p->view);
}

/* Estimated cost of passes over axes[0..n) in that order: per pass its
 * output elements times its taps, three times dearer for the last axis
 * (a gather of single elements rather than rows of multiply-adds). */
static double order_cost(const rz_params *rp, const int32_t *axes, int32_t n)
{
    double numel = 1.0, cost = 0.0;
    for (int32_t d = 0; d < rp->rank; d++) numel *= (double)rp->in[d];
    for (int32_t i = 0; i < n; i++) {
        int32_t d = axes[i];
        numel = numel / (double)rp->in[d] * (double)rp->out[d];
        double taps = rp->mode == RZ_CUBIC ? 4.0 : 2.0;
        cost += numel * taps * (d == rp->rank - 1 ? 3.0 : 1.0);
    }
    return cost;
}

/* Best order of axes[k..n) by trying every permutation (n is small). */
static void best_order(const rz_params *rp, int32_t *axes, int32_t k, int32_t n, int32_t *best,
                       double *best_cost)
{
    if (k == n) {
        double c = order_cost(rp, axes, n);
        if (c < *best_cost) *best_cost = c, memcpy(best, axes, (size_t)n * sizeof *axes);
        return;
    }
    for (int32_t i = k; i < n; i++) {
        int32_t t = axes[k];
        axes[k] = axes[i], axes[i] = t;
        best_order(rp, axes, k + 1, n, best, best_cost);
        axes[i] = axes[k], axes[k] = t;
    }
}

/* The resized axes in pass order: the cheapest order when there are at most
 * four of them, else as they come. */
static int32_t pass_order(const rz_params *rp, int32_t *axes)
{
    int32_t n = 0, work[VN_MAX_RANK];
    for (int32_t d = 0; d < rp->rank; d++)
        if (!vn_rz_axis_identity(rp, d)) axes[n++] = d;
    if (n < 2 || n > 4) return n;
    double cost = INFINITY;
    memcpy(work, axes, (size_t)n * sizeof *axes);
    best_order(rp, work, 0, n, axes, &cost);
    return n;
}

static vn_status plan_passes(const vn_op_ctx *ctx, const char *where, const rz_params *rp,
                             rz_plan *p)
{
    int32_t axes[VN_MAX_RANK];
    int64_t cur[VN_MAX_RANK];
    p->npass = 0;
    int32_t n = pass_order(rp, axes);
    memcpy(cur, rp->in, sizeof cur);
    p->buf_elems = p->dt == VN_F32 ? 0 : p->in_numel;
    for (int32_t i = 0; i < n; i++) {
        int32_t d = axes[i];
        rz_pass *ps = &p->pass[p->npass];
        ps->outer = ps->inner = 1;
        for (int32_t k = 0; k < rp->rank; k++) {
            if (k < d) ps->outer *= cur[k];
            if (k > d) ps->inner *= cur[k];
        }
        ps->in = rp->in[d], ps->out = rp->out[d];
        vn_status st = vn_rz_taps(rp, d, where, &ps->taps);
        if (st != VN_OK) return st;
        p->npass++;
        ps->block_dim = vn_ops_block_dim(ctx->device, ps->outer * ps->out, ps->inner * ps->taps.n);
        cur[d] = rp->out[d];
        bool last = i == n - 1;
        if (!last || p->dt != VN_F32)
            p->buf_elems = vn_ops_max(p->buf_elems, ps->outer * ps->out * ps->inner);
    }
    return VN_OK;
}

static vn_status plan_common(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                             size_t *workspace, bool upsample)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    rz_params rp;
    vn_status st = vn_rz_params(ctx, where, upsample, &rp);
    if (st != VN_OK) return st;
    rz_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    p->dt = ctx->inputs[0].dtype;
    p->extrapolation = (float)rp.extrapolation;
    p->in_numel = vn_desc_numel(&ctx->inputs[0]);
    p->out_numel = vn_desc_numel(&outputs[0]);
    int32_t axes[VN_MAX_RANK];
    bool gather = rp.mode == RZ_NEAREST || pass_order(&rp, axes) == 0;
    st = gather ? plan_view(ctx, where, &rp, p) : plan_passes(ctx, where, &rp, p);
    if (st != VN_OK) {
        rz_free(p);
        return st;
    }
    *workspace = (size_t)(2 * p->buf_elems) * sizeof(float);
    *data = p;
    return VN_OK;
}

static vn_status resize_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                             size_t *workspace)
{
    return plan_common(ctx, outputs, data, workspace, false);
}

static vn_status upsample_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                               size_t *workspace)
{
    return plan_common(ctx, outputs, data, workspace, true);
}

static void widen(vn_dtype dt, const void *src, float *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++) dst[i] = (float)vn_cast_load_f64(dt, src, i);
}

static void narrow(vn_dtype dt, const float *src, void *dst, int64_t n)
{
    for (int64_t i = 0; i < n; i++) vn_cast_store_f64(dt, dst, i, (double)src[i]);
}

static vn_status run_passes(const vn_op_run_ctx *ctx, const rz_plan *p)
{
    float *buf[2] = {ctx->workspace, p->buf_elems ? (float *)ctx->workspace + p->buf_elems : NULL};
    const float *src = ctx->inputs[0].data;
    int32_t next = 0;
    if (p->dt != VN_F32) {
        widen(p->dt, ctx->inputs[0].data, buf[0], p->in_numel);
        src = buf[0], next = 1;
    }
    vn_status st = VN_OK;
    for (int32_t i = 0; i < p->npass && st == VN_OK; i++) {
        bool direct = i == p->npass - 1 && p->dt == VN_F32;
        float *dst = direct ? (float *)ctx->outputs[0].data : buf[next];
        vn_kernel_counters c = {0};
        st = vn_rz_pass_run(ctx->device, &p->pass[i], src, dst, p->extrapolation,
                            ctx->counters ? &c : NULL);
        if (ctx->counters) vn_kernel_counters_add(ctx->counters, &c);
        src = dst, next ^= 1;
    }
    if (st == VN_OK && p->dt != VN_F32) narrow(p->dt, src, ctx->outputs[0].data, p->out_numel);
    return st;
}

static vn_status rz_run(const vn_op_run_ctx *ctx)
{
    const rz_plan *p = ctx->plan;
    if (p->view)
        return vn_view_execute(ctx->device, p->view, ctx->inputs[0].data, ctx->outputs[0].data,
                               ctx->counters);
    return run_passes(ctx, p);
}

static const vn_op_def resize_def = {"Resize",      "",           1,           4,       1,
                                     VN_DTYPES_ALL, resize_infer, resize_plan, rz_free, rz_run};
static const vn_op_def upsample_def = {
    "Upsample", "", 1, 2, 1, VN_DTYPES_ALL, upsample_infer, upsample_plan, rz_free, rz_run};

const vn_op_def *const *vn_ops_resize_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&resize_def, &upsample_def};
    *count = 2;
    return ptrs;
}
