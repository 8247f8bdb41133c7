/*
 * signal_dft.c — DFT (opsets 17 to 20): the transform of a real ([..., 1])
 * or complex ([..., 2]) signal along one axis, forward or inverse, full or
 * one-sided (rfft / irfft), zero-padded or truncated to dft_length. The axis
 * is an attribute up to opset 19 and an input from opset 20. Each line along
 * the axis is gathered into double buffers and transformed directly.
 */
#include <stdlib.h>

#include "kernel/core_internal.h"
#include "ops/signal.h"

typedef struct dft_plan {
    int64_t outer, len_in, inner, c_in; /* x seen as [outer, len_in, inner, c_in] */
    int64_t n, used, len_out, c_out;    /* transform size, input values used, output length */
    bool inverse, onesided;
    vn_dtype dt;
    vn_dft_twiddles tw;
    int32_t block_dim;
} dft_plan;

/* The axis: input 2 (opset 20), else the attribute (opsets 17, 19), else the
 * default of the node's opset (-2 from 20, 1 before). */
static vn_status dft_axis(const vn_op_ctx *ctx, const char *where, int64_t *axis)
{
    int32_t n = 0;
    if (vn_so_present(ctx, 2)) {
        vn_status st = vn_so_const_ints(ctx, where, 2, "axis", axis, 1, &n);
        if (st == VN_OK && n != 1) st = vn_error(VN_ERR_SHAPE, where, "'axis' must be a scalar");
        return st;
    }
    int64_t opset = 20;
    vn_status st = vn_so_attr_int(ctx, where, "_opset", 20, &opset);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "axis", opset < 20 ? 1 : -2, axis);
    return st;
}

static vn_status dft_params(const vn_op_ctx *ctx, const char *where, dft_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t axis = 0, inv = 0, one = 0, len = 0;
    int32_t n = 0;
    if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
        return vn_error(VN_ERR_SHAPE, where, "input must be [..., 1] (real) or [..., 2] (complex)");
    vn_status st = dft_axis(ctx, where, &axis);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "inverse", 0, &inv);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "onesided", 0, &one);
    if (st == VN_OK && vn_so_present(ctx, 1))
        st = vn_so_const_ints(ctx, where, 1, "dft_length", &len, 1, &n);
    if (st != VN_OK) return st;
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis > x->rank - 2)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "axis must name a signal dimension (not the "
                        "last, real/imaginary one)");
    p->inverse = inv != 0;
    p->onesided = one != 0;
    p->len_in = x->dims[axis];
    p->c_in = x->dims[x->rank - 1];
    p->outer = p->inner = 1;
    for (int32_t d = 0; d < x->rank - 1; d++) {
        if (d < axis) p->outer *= x->dims[d];
        if (d > axis) p->inner *= x->dims[d];
    }
    bool irfft = p->inverse && p->onesided;
    p->n = n ? len : irfft ? 2 * (p->len_in - 1) : p->len_in;
    if (p->n < 1) return vn_error(VN_ERR_INVALID_ARG, where, "the DFT length must be positive");
    p->used = vn_ops_min(p->len_in, irfft ? p->n / 2 + 1 : p->n);
    p->len_out = p->onesided && !p->inverse ? p->n / 2 + 1 : p->n;
    p->c_out = irfft ? 1 : 2;
    p->dt = x->dtype;
    return VN_OK;
}

static vn_status dft_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    dft_plan p = {0};
    vn_status st = dft_params(ctx, where, &p);
    if (st != VN_OK) return st;
    int64_t axis = 0;
    dft_axis(ctx, where, &axis);
    if (axis < 0) axis += ctx->inputs[0].rank;
    *out = ctx->inputs[0];
    out->dims[axis] = p.len_out;
    out->dims[out->rank - 1] = p.c_out;
    return VN_OK;
}

static void dft_free(void *plan)
{
    dft_plan *p = plan;
    if (p) vn_dft_twiddles_free(&p->tw);
    free(p);
}

static vn_status dft_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    (void)outputs;
    dft_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = dft_params(ctx, where, p);
    if (st == VN_OK) st = vn_dft_twiddles_init(where, p->n, &p->tw);
    if (st != VN_OK) {
        dft_free(p);
        return st;
    }
    p->block_dim = vn_ops_block_dim(ctx->device, p->outer * p->inner, p->n * p->len_out);
    *workspace = (size_t)p->block_dim * 4 * (size_t)p->n * sizeof(double);
    *plan = p;
    return VN_OK;
}

typedef struct dft_args {
    const dft_plan *p;
    const void *x;
    void *y;
    double *ws;
} dft_args;

/* Line `l` of x into re / im (length n), zero-padded; for irfft the
 * Hermitian extension of the half spectrum (imaginary parts of the DC and
 * Nyquist bins dropped, as a real signal's spectrum has none). */
static void dft_load(const dft_plan *p, const void *x, int64_t l, double *re, double *im)
{
    int64_t o = l / p->inner, i = l % p->inner;
    for (int64_t t = 0; t < p->n; t++) re[t] = im[t] = 0;
    for (int64_t t = 0; t < p->used; t++) {
        int64_t at = ((o * p->len_in + t) * p->inner + i) * p->c_in;
        re[t] = vn_cast_load_f64(p->dt, x, at);
        im[t] = p->c_in == 2 ? vn_cast_load_f64(p->dt, x, at + 1) : 0;
    }
    if (!(p->inverse && p->onesided)) return;
    for (int64_t k = p->n / 2 + 1; k < p->n; k++) {
        re[k] = re[p->n - k];
        im[k] = -im[p->n - k];
    }
    im[0] = 0;
    if (p->n % 2 == 0) im[p->n / 2] = 0;
}

static void dft_kernel(vn_core *core, const void *args)
{
    const dft_args *a = args;
    const dft_plan *p = a->p;
    double *re = a->ws + (int64_t)vn_block_idx(core) * 4 * p->n, *im = re + p->n;
    double *ore = im + p->n, *oim = ore + p->n;
    double scale = p->inverse ? 1.0 / (double)p->n : 1.0;
    for (int64_t l; vn_tile_next(core, &l);) {
        dft_load(p, a->x, l, re, im);
        vn_dft_direct(&p->tw, re, im, p->inverse ? 1.0 : -1.0, p->len_out, ore, oim);
        int64_t o = l / p->inner, i = l % p->inner;
        for (int64_t k = 0; k < p->len_out; k++) {
            int64_t at = ((o * p->len_out + k) * p->inner + i) * p->c_out;
            vn_cast_store_f64(p->dt, a->y, at, ore[k] * scale);
            if (p->c_out == 2) vn_cast_store_f64(p->dt, a->y, at + 1, oim[k] * scale);
        }
        core->counters.vector_elem_ops += 4 * p->n * p->len_out;
    }
}

static vn_status dft_run(const vn_op_run_ctx *ctx)
{
    const dft_plan *p = ctx->plan;
    dft_args a = {p, ctx->inputs[0].data, ctx->outputs[0].data, ctx->workspace};
    vn_launch_desc d = {dft_kernel, "vn_dft", p->block_dim, &a, -1, p->outer * p->inner};
    return p->outer * p->inner > 0 ? vn_launch(ctx->device, &d, ctx->counters) : VN_OK;
}

const vn_op_def vn_signal_dft_def = {"DFT",           "",        1,           3,        1,
                                     VN_DTYPES_FLOAT, dft_infer, dft_plan_fn, dft_free, dft_run};
