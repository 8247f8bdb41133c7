/*
 * resize_taps.c — per-axis tap tables of Resize, following the ONNX
 * reference (onnx/reference/ops/op_resize.py), in double precision:
 *
 *   1. output position o -> source coordinate x by the coordinate
 *      transformation mode, with output_width = scale * in as a real number
 *      (align_corners and tf_crop_and_resize divide by output_width - 1);
 *   2. x0 = ceil(x) - 1 and ratio = x - x0 in (0, 1] (an integral x takes the
 *      pixel on its left with ratio 1);
 *   3. coefficients for that ratio: nearest picks x0 or x0 + 1, linear and
 *      cubic weigh n neighbours x0 + 1 - n/2 ... x0 + n/2 (n = 2 / 4, more
 *      when antialiasing a downsample stretches the filter by 1 / scale);
 *   4. exclude_outside zeroes the out-of-range neighbours' weights and
 *      renormalises; then the indices are clamped (the reference pads edges).
 */
#include <math.h>
#include <stdlib.h>

#include "ops/resize.h"

static double source_coord(const rz_params *p, int32_t d, int64_t o, bool *extrapolate)
{
    double s = p->scale[d], in = (double)p->in[d], outf = s * in, y = (double)o;
    *extrapolate = false;
    switch (p->ctm) {
    case RZ_ALIGN_CORNERS:
        return outf == 1.0 ? 0.0 : y * (in - 1.0) / (outf - 1.0);
    case RZ_ASYMMETRIC:
        return y / s;
    case RZ_PYTORCH_HALF_PIXEL:
        return outf == 1.0 ? -0.5 : (y + 0.5) / s - 0.5;
    case RZ_HALF_PIXEL_SYMMETRIC: {
        double adjustment = (double)p->out[d] / outf, center = in / 2.0;
        return center * (1.0 - adjustment) + (y + 0.5) / s - 0.5;
    }
    case RZ_TF_CROP_AND_RESIZE: {
        double lo = p->roi_lo[d], hi = p->roi_hi[d];
        double x =
            outf == 1.0 ? (hi - lo) * (in - 1.0) / 2.0 : y * (hi - lo) * (in - 1.0) / (outf - 1.0);
        x += lo * (in - 1.0);
        *extrapolate = x < 0.0 || x > in - 1.0;
        return x;
    }
    case RZ_HALF_PIXEL:
    default:
        return (y + 0.5) / s - 0.5;
    }
}

/* Nearest: offset 0 (x0) or 1 (x0 + 1) for the ratio. */
static int32_t nearest_pick(const rz_params *p, int32_t d, double ratio)
{
    if (p->nearest == RZ_SIMPLE) /* Resize-10: floor up, ceil down */
        return p->scale[d] < 1.0 || ratio == 1.0 ? 1 : 0;
    if (ratio == 1.0) return 1;
    switch (p->nearest) {
    case RZ_ROUND_PREFER_CEIL:
        return ratio >= 0.5;
    case RZ_FLOOR:
        return 0;
    case RZ_CEIL:
        return 1;
    default:
        return ratio > 0.5;
    }
}

static double cubic_kernel(double x, double a)
{
    x = fabs(x);
    if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    return 0.0;
}

/* Taps per output position along axis d. */
static int32_t tap_count(const rz_params *p, int32_t d)
{
    if (p->mode == RZ_NEAREST) return 1;
    double s = fmin(p->scale[d], 1.0);
    double support = p->mode == RZ_LINEAR ? 1.0 : 2.0;
    if (!p->antialias) return p->mode == RZ_LINEAR ? 2 : 4;
    int64_t start = (int64_t)floor(-support / s) + 1;
    return (int32_t)(2 - 2 * start);
}

/* Weights of the n neighbours x0 + 1 - n/2 + j for the ratio. */
static void weights(const rz_params *p, int32_t d, int32_t n, double ratio, double *w)
{
    double s = p->antialias ? fmin(p->scale[d], 1.0) : 1.0, sum = 0.0;
    for (int32_t j = 0; j < n; j++) {
        double dist = ((double)(j + 1 - n / 2) - ratio) * s;
        if (p->mode == RZ_LINEAR)
            w[j] = fmax(0.0, 1.0 - fabs(dist));
        else
            w[j] = cubic_kernel(dist, p->cubic_a);
        sum += w[j];
    }
    if (p->antialias && sum != 0.0)
        for (int32_t j = 0; j < n; j++) w[j] /= sum;
}

static void exclude_outside(int32_t n, int64_t first, int64_t in, double *w)
{
    double sum = 0.0;
    for (int32_t j = 0; j < n; j++) {
        if (first + j < 0 || first + j >= in) w[j] = 0.0;
        sum += w[j];
    }
    if (sum != 0.0)
        for (int32_t j = 0; j < n; j++) w[j] /= sum;
}

static int64_t clamp_index(int64_t i, int64_t in)
{
    return i < 0 ? 0 : i >= in ? in - 1 : i;
}

/* Taps of output position o into idx[0..n) / w[0..n). */
static void taps_at(const rz_params *p, int32_t d, int32_t n, int64_t o, int64_t *idx, float *w)
{
    bool extrapolate;
    double x = source_coord(p, d, o, &extrapolate), wd[64];
    if (extrapolate) {
        for (int32_t j = 0; j < n; j++) idx[j] = -1, w[j] = 0.0f;
        return;
    }
    double fx = floor(x);
    int64_t x0 = (int64_t)fx - (fx == x ? 1 : 0);
    double ratio = x - (double)x0;
    int64_t in = p->in[d];
    if (p->mode == RZ_NEAREST) {
        idx[0] = clamp_index(x0 + nearest_pick(p, d, ratio), in);
        w[0] = 1.0f;
        return;
    }
    int64_t first = x0 + 1 - n / 2;
    weights(p, d, n, ratio, wd);
    if (p->exclude_outside) exclude_outside(n, first, in, wd);
    for (int32_t j = 0; j < n; j++) idx[j] = clamp_index(first + j, in), w[j] = (float)wd[j];
}

vn_status vn_rz_taps(const rz_params *p, int32_t d, const char *where, rz_taps *t)
{
    int32_t n = tap_count(p, d);
    if (n < 1 || n > 64)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "antialiasing axis %d by scale %g needs %d taps (at most 64)", (int)d,
                        p->scale[d], (int)n);
    int64_t len = vn_ops_max(1, p->out[d] * n);
    t->n = n;
    t->idx = malloc((size_t)len * sizeof *t->idx);
    t->w = malloc((size_t)len * sizeof *t->w);
    if (!t->idx || !t->w) {
        vn_rz_taps_free(t);
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the tap tables");
    }
    for (int64_t o = 0; o < p->out[d]; o++) taps_at(p, d, n, o, t->idx + o * n, t->w + o * n);
    return VN_OK;
}

void vn_rz_taps_free(rz_taps *t)
{
    free(t->idx);
    free(t->w);
    t->idx = NULL;
    t->w = NULL;
}
