/*
 * signal_stft.c — STFT (opset 17): frames of frame_length samples every
 * frame_step samples of signal [batch, length, 1 or 2], each multiplied by
 * the window (ones when absent) and transformed; output [batch, frames,
 * bins, 2], bins = frame_length / 2 + 1 when onesided (the default).
 */
#include <stdlib.h>

#include "kernel/core_internal.h"
#include "ops/signal.h"

typedef struct stft_plan {
    int64_t batch, len, chans, step, n, frames, bins, wlen;
    vn_dtype dt;
    vn_dft_twiddles tw;
    int32_t block_dim;
} stft_plan;

static vn_status const_scalar_int(const vn_op_ctx *ctx, const char *where, int32_t i,
                                  const char *name, int64_t *out)
{
    int32_t n = 0;
    vn_status st = vn_so_const_ints(ctx, where, i, name, out, 1, &n);
    if (st == VN_OK && n != 1) st = vn_error(VN_ERR_SHAPE, where, "'%s' must be a scalar", name);
    return st;
}

static vn_status stft_params(const vn_op_ctx *ctx, const char *where, stft_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t one = 1;
    if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
        return vn_error(VN_ERR_SHAPE, where, "signal must be [batch, length, 1 or 2]");
    p->batch = x->dims[0];
    p->len = x->dims[1];
    p->chans = x->dims[2];
    p->dt = x->dtype;
    vn_status st = const_scalar_int(ctx, where, 1, "frame_step", &p->step);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "onesided", 1, &one);
    if (st != VN_OK) return st;
    bool has_w = vn_so_present(ctx, 2);
    if (has_w && (ctx->inputs[2].rank != 1 || ctx->inputs[2].dtype != x->dtype))
        return vn_error(VN_ERR_SHAPE, where, "window must be a vector of the signal's dtype");
    p->wlen = has_w ? ctx->inputs[2].dims[0] : 0;
    p->n = has_w ? p->wlen : p->len;
    if (vn_so_present(ctx, 3)) st = const_scalar_int(ctx, where, 3, "frame_length", &p->n);
    if (st != VN_OK) return st;
    if (!has_w) p->wlen = p->n;
    if (p->step < 1 || p->n < 1 || p->n > p->len || p->wlen > p->n)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "frame_step %lld and frame_length %lld (window %lld) do not fit a signal "
                        "of %lld samples",
                        (long long)p->step, (long long)p->n, (long long)p->wlen, (long long)p->len);
    p->frames = 1 + (p->len - p->n) / p->step;
    p->bins = one ? p->n / 2 + 1 : p->n;
    return VN_OK;
}

static vn_status stft_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    stft_plan p = {0};
    vn_status st = stft_params(ctx, where, &p);
    int64_t dims[4] = {p.batch, p.frames, p.bins, 2};
    if (st == VN_OK) *out = vn_so_desc(ctx->inputs[0].dtype, 4, dims);
    return st;
}

static void stft_free(void *plan)
{
    stft_plan *p = plan;
    if (p) vn_dft_twiddles_free(&p->tw);
    free(p);
}

static vn_status stft_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                              size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    (void)outputs;
    stft_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = stft_params(ctx, where, p);
    if (st == VN_OK) st = vn_dft_twiddles_init(where, p->n, &p->tw);
    if (st != VN_OK) {
        stft_free(p);
        return st;
    }
    p->block_dim = vn_ops_block_dim(ctx->device, p->batch * p->frames, p->n * p->bins);
    *workspace = (size_t)p->block_dim * 4 * (size_t)p->n * sizeof(double);
    *plan = p;
    return VN_OK;
}

typedef struct stft_args {
    const stft_plan *p;
    const void *x, *w;
    void *y;
    double *ws;
} stft_args;

static void stft_kernel(vn_core *core, const void *args)
{
    const stft_args *a = args;
    const stft_plan *p = a->p;
    double *re = a->ws + (int64_t)vn_block_idx(core) * 4 * p->n, *im = re + p->n;
    double *ore = im + p->n, *oim = ore + p->n;
    for (int64_t l; vn_tile_next(core, &l);) {
        int64_t b = l / p->frames, start = l % p->frames * p->step;
        for (int64_t t = 0; t < p->n; t++) {
            double w = t >= p->wlen ? 0 : a->w ? vn_cast_load_f64(p->dt, a->w, t) : 1;
            int64_t at = (b * p->len + start + t) * p->chans;
            re[t] = w * vn_cast_load_f64(p->dt, a->x, at);
            im[t] = p->chans == 2 ? w * vn_cast_load_f64(p->dt, a->x, at + 1) : 0;
        }
        vn_dft_direct(&p->tw, re, im, -1.0, p->bins, ore, oim);
        for (int64_t k = 0; k < p->bins; k++) {
            vn_cast_store_f64(p->dt, a->y, (l * p->bins + k) * 2, ore[k]);
            vn_cast_store_f64(p->dt, a->y, (l * p->bins + k) * 2 + 1, oim[k]);
        }
        core->counters.vector_elem_ops += 4 * p->n * p->bins;
    }
}

static vn_status stft_run(const vn_op_run_ctx *ctx)
{
    const stft_plan *p = ctx->plan;
    const void *w =
        ctx->num_inputs > 2 && ctx->inputs[2].desc.rank >= 0 ? ctx->inputs[2].data : NULL;
    stft_args a = {p, ctx->inputs[0].data, w, ctx->outputs[0].data, ctx->workspace};
    vn_launch_desc d = {stft_kernel, "vn_stft", p->block_dim, &a, -1, p->batch * p->frames};
    return p->batch * p->frames > 0 ? vn_launch(ctx->device, &d, ctx->counters) : VN_OK;
}

const vn_op_def vn_signal_stft_def = {
    "STFT", "", 2, 4, 1, VN_DTYPES_FLOAT, stft_infer, stft_plan_fn, stft_free, stft_run};
