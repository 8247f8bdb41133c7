/*
 * signal_window.c — HannWindow, HammingWindow and BlackmanWindow (opset
 * 17): a vector of `size` (a constant scalar input) values of a raised
 * cosine, periodic (period size, the default) or symmetric (period size-1).
 * Computed in double, stored as f32 (output_datatype 1, the only one
 * supported).
 */
#include <math.h>
#include <stdlib.h>

#include "ops/signal.h"

typedef enum window_kind { WIN_HANN = 0, WIN_HAMMING, WIN_BLACKMAN } window_kind;

/* a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) */
static const double coef[3][3] = {
    {0.5, 0.5, 0.0}, {25.0 / 46.0, 21.0 / 46.0, 0.0}, {0.42, 0.5, 0.08}};

typedef struct window_plan {
    int64_t size;
    double period;
} window_plan;

static vn_status window_params(const vn_op_ctx *ctx, const char *where, window_plan *p)
{
    double size = 0;
    int64_t periodic = 1, odt = 1;
    vn_status st = vn_so_const_scalar(ctx, where, 0, "size", &size);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "periodic", 1, &periodic);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "output_datatype", 1, &odt);
    if (st != VN_OK) return st;
    if (odt != 1)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "output_datatype %lld: only 1 (float) is "
                        "supported",
                        (long long)odt);
    if (size < 0 || size != floor(size))
        return vn_error(VN_ERR_INVALID_ARG, where, "size %g is not a count", size);
    p->size = (int64_t)size;
    p->period = (double)(periodic ? p->size : p->size - 1);
    return VN_OK;
}

static vn_status window_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    window_plan p = {0};
    vn_status st = window_params(ctx, where, &p);
    if (st == VN_OK) *out = vn_so_vec(VN_F32, p.size);
    return st;
}

static vn_status window_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                                size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    (void)outputs;
    window_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = window_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

static vn_status window_run_kind(const vn_op_run_ctx *ctx, window_kind kind)
{
    const window_plan *p = ctx->plan;
    const double *c = coef[kind], two_pi = 6.283185307179586476925286766559;
    float *y = ctx->outputs[0].data;
    for (int64_t i = 0; i < p->size; i++) {
        /* a symmetric window of one value is that value at n = 0 */
        double x = p->period > 0 ? two_pi * (double)i / p->period : 0;
        y[i] = (float)(c[0] - c[1] * cos(x) + c[2] * cos(2 * x));
    }
    return VN_OK;
}

static vn_status hann_run(const vn_op_run_ctx *ctx)
{
    return window_run_kind(ctx, WIN_HANN);
}
static vn_status hamming_run(const vn_op_run_ctx *ctx)
{
    return window_run_kind(ctx, WIN_HAMMING);
}
static vn_status blackman_run(const vn_op_run_ctx *ctx)
{
    return window_run_kind(ctx, WIN_BLACKMAN);
}

#define WINDOW_DEF(var, name, run)                                                                 \
    const vn_op_def var = {                                                                        \
        name,           "",   1,  1, 1, VN_DTYPE_BIT(VN_I32) | VN_DTYPE_BIT(VN_I64), window_infer, \
        window_plan_fn, free, run}

WINDOW_DEF(vn_signal_hann_def, "HannWindow", hann_run);
WINDOW_DEF(vn_signal_hamming_def, "HammingWindow", hamming_run);
WINDOW_DEF(vn_signal_blackman_def, "BlackmanWindow", blackman_run);
