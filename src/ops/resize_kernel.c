/*
 * resize_kernel.c — one separable Resize pass over f32 data:
 * src [outer, in, inner] -> dst [outer, out, inner], output line (r, o) the
 * weighted sum of source lines (r, idx[o][t]). A tile is one output line of
 * `inner` elements; when inner > 1 the taps are whole rows (contiguous,
 * vectorised); when inner == 1 (the last axis) a line is one element and
 * tiles are taken in runs, so a block walks each row left to right.
 */
#include "kernel/core_internal.h"
#include "ops/resize.h"

typedef struct pass_args {
    const rz_pass *p;
    const float *src;
    float *dst;
    float extrapolation;
} pass_args;

/* dst[k] = sum_t w[t] * src[idx[t] * inner + k], k < inner. */
static void line_rows(float *restrict dst, const float *restrict src, const int64_t *idx,
                      const float *w, int32_t n, int64_t inner)
{
    const float *s0 = src + idx[0] * inner;
    float w0 = w[0];
    if (n == 2) {
        const float *s1 = src + idx[1] * inner;
        float w1 = w[1];
        for (int64_t k = 0; k < inner; k++) dst[k] = w0 * s0[k] + w1 * s1[k];
        return;
    }
    for (int64_t k = 0; k < inner; k++) dst[k] = w0 * s0[k];
    for (int32_t t = 1; t < n; t++) {
        const float *st = src + idx[t] * inner;
        float wt = w[t];
        for (int64_t k = 0; k < inner; k++) dst[k] += wt * st[k];
    }
}

static float point(const float *src, const int64_t *idx, const float *w, int32_t n)
{
    if (n == 2) return w[0] * src[idx[0]] + w[1] * src[idx[1]];
    float acc = 0.0f;
    for (int32_t t = 0; t < n; t++) acc += w[t] * src[idx[t]];
    return acc;
}

static void pass_kernel(vn_core *core, const void *args)
{
    const pass_args *a = args;
    const rz_pass *p = a->p;
    int32_t n = p->taps.n;
    int64_t r = 0, o = 0, last = -2, done = 0;
    for (int64_t tile; vn_tile_next(core, &tile); last = tile, done++) {
        if (tile != last + 1) { /* walked, not divided, from tile to tile */
            r = tile / p->out, o = tile % p->out;
        } else if (++o == p->out) {
            o = 0, r++;
        }
        const int64_t *idx = p->taps.idx + o * n;
        const float *w = p->taps.w + o * n;
        const float *src = a->src + r * p->in * p->inner;
        float *dst = a->dst + tile * p->inner;
        if (idx[0] < 0) {
            for (int64_t k = 0; k < p->inner; k++) dst[k] = a->extrapolation;
        } else if (p->inner == 1) {
            dst[0] = point(src, idx, w, n);
        } else {
            line_rows(dst, src, idx, w, n, p->inner);
        }
    }
    core->counters.vector_elem_ops += done * p->inner * n * 2;
}

vn_status vn_rz_pass_run(vn_device *device, const rz_pass *pass, const float *src, float *dst,
                         float extrapolation, vn_kernel_counters *counters)
{
    if (pass->outer * pass->out * pass->inner == 0) return VN_OK;
    pass_args a = {pass, src, dst, extrapolation};
    vn_launch_desc d = {pass_kernel, "vn_resize_pass",       pass->block_dim, &a,
                        -1,          pass->outer * pass->out};
    return vn_launch(device, &d, counters);
}
