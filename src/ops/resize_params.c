/*
 * resize_params.c — Resize / Upsample attributes and constant inputs to the
 * output shape and the per-axis scales, as the ONNX reference computes them:
 * from scales, out = floor(in * scale) (scale the f32 value as a double);
 * from sizes, scale = size / in, and for keep_aspect_ratio_policy
 * not_larger / not_smaller one scale (the min / max over the axes) with
 * out = round-half-up(scale * in).
 *
 * Signatures: Resize-10 is (X, scales) with only `mode`, asymmetric
 * coordinates and the "simple" nearest rule; Resize-11+ is (X, roi, scales,
 * sizes); Upsample is (X, scales) (opset 9) or X with a `scales` attribute
 * (opset 7), with Resize-10's rules.
 */
#include <math.h>
#include <string.h>

#include "ops/resize.h"

static int32_t pick(const char *s, const char *const *names, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

static vn_status string_choice(const vn_op_ctx *ctx, const char *where, const char *name,
                               const char *fallback, const char *const *names, int32_t n,
                               int32_t *out)
{
    const char *s = fallback;
    vn_status st = vn_so_attr_string(ctx, where, name, fallback, &s);
    if (st != VN_OK) return st;
    *out = pick(s, names, n);
    if (*out < 0) return vn_error(VN_ERR_INVALID_ARG, where, "unknown %s '%s'", name, s);
    return VN_OK;
}

static vn_status parse_mode(const vn_op_ctx *ctx, const char *where, bool v11, rz_params *p)
{
    static const char *const modes[] = {"nearest", "linear", "cubic", "bilinear"};
    static const char *const ctms[] = {"half_pixel",         "half_pixel_symmetric",
                                       "pytorch_half_pixel", "align_corners",
                                       "asymmetric",         "tf_crop_and_resize"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                           "ceil"};
    int32_t m, c = RZ_ASYMMETRIC, n = RZ_SIMPLE;
    vn_status st = string_choice(ctx, where, "mode", "nearest", modes, 4, &m);
    if (st == VN_OK && v11)
        st = string_choice(ctx, where, "coordinate_transformation_mode", "half_pixel", ctms, 6, &c);
    if (st == VN_OK && v11)
        st = string_choice(ctx, where, "nearest_mode", "round_prefer_floor", nearests, 4, &n);
    if (st != VN_OK) return st;
    p->mode = m == 3 ? RZ_LINEAR : (rz_mode)m; /* Upsample-7 spelled it "bilinear" */
    p->ctm = (rz_ctm)c;
    p->nearest = (rz_nearest)n;
    int64_t excl = 0, aa = 0;
    p->cubic_a = -0.75;
    p->extrapolation = 0.0;
    if (!v11) return VN_OK;
    st = vn_attrs_float(ctx->attrs, "cubic_coeff_a", -0.75, &p->cubic_a);
    if (st == VN_OK) st = vn_attrs_float(ctx->attrs, "extrapolation_value", 0.0, &p->extrapolation);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "exclude_outside", 0, &excl);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "antialias", 0, &aa);
    p->exclude_outside = excl != 0;
    p->antialias = aa != 0 && p->mode != RZ_NEAREST; /* antialias only filters linear / cubic */
    return st;
}

/* The resized axes: `axes` when given (each once), else all of them. */
static vn_status parse_axes(const vn_op_ctx *ctx, const char *where, int32_t rank, int32_t *axes,
                            int32_t *naxes)
{
    int64_t raw[VN_MAX_RANK];
    int32_t n = 0;
    bool present = false, mask[VN_MAX_RANK] = {false};
    vn_status st = vn_so_attr_ints(ctx, where, "axes", raw, VN_MAX_RANK, &n, &present);
    if (st != VN_OK) return st;
    if (!present) {
        for (int32_t d = 0; d < rank; d++) axes[d] = d;
        *naxes = rank;
        return VN_OK;
    }
    st = vn_so_axes(where, "axes", raw, n, rank, mask);
    for (int32_t i = 0; i < n && st == VN_OK; i++)
        st = vn_so_axis(where, "axes", raw[i], rank, &axes[i]);
    *naxes = n;
    return st;
}

/* A float input (roi, scales) of exactly `want` values into vals. */
static vn_status const_floats(const vn_op_ctx *ctx, const char *where, int32_t i, const char *name,
                              int64_t want, double *vals)
{
    const vn_tensor_desc *d = &ctx->inputs[i];
    const void *data = vn_so_const(ctx, i);
    if (!vn_cast_is_float(d->dtype) || d->rank != 1)
        return vn_error(VN_ERR_INVALID_ARG, where, "'%s' must be a 1-D float tensor", name);
    if (d->dims[0] != want)
        return vn_error(VN_ERR_SHAPE, where, "'%s' has %lld values, expected %lld", name,
                        (long long)d->dims[0], (long long)want);
    if (!data)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "input '%s' must be a constant known at plan time (its values decide the "
                        "output shape)",
                        name);
    for (int64_t k = 0; k < want; k++) vals[k] = vn_cast_load_f64(d->dtype, data, k);
    return VN_OK;
}

static bool has_values(const vn_op_ctx *ctx, int32_t i)
{
    return vn_so_present(ctx, i) && vn_desc_numel(&ctx->inputs[i]) > 0;
}

static vn_status from_scales(const vn_op_ctx *ctx, const char *where, int32_t input,
                             const int32_t *axes, int32_t naxes, rz_params *p)
{
    double s[VN_MAX_RANK];
    vn_status st;
    const vn_attr *a = input < 0 ? vn_attrs_find(ctx->attrs, "scales") : NULL;
    if (input < 0) { /* Upsample-7: an attribute */
        if (!a || a->type != VN_ATTR_FLOATS || a->count != naxes)
            return vn_error(VN_ERR_INVALID_ARG, where, "needs 'scales' (%d floats)", (int)naxes);
        for (int32_t k = 0; k < naxes; k++) s[k] = a->floats[k];
    } else if ((st = const_floats(ctx, where, input, "scales", naxes, s)) != VN_OK) {
        return st;
    }
    for (int32_t k = 0; k < naxes; k++) {
        int32_t d = axes[k];
        if (!(s[k] > 0) || !isfinite(s[k]))
            return vn_error(VN_ERR_INVALID_ARG, where, "scale %g of axis %d must be positive", s[k],
                            (int)d);
        p->scale[d] = s[k];
        p->out[d] = (int64_t)floor(s[k] * (double)p->in[d]);
    }
    return VN_OK;
}

static vn_status from_sizes(const vn_op_ctx *ctx, const char *where, const int32_t *axes,
                            int32_t naxes, rz_params *p)
{
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
    int64_t sz[VN_MAX_RANK];
    int32_t n = 0, policy = 0;
    vn_status st = vn_so_const_ints(ctx, where, 3, "sizes", sz, VN_MAX_RANK, &n);
    if (st == VN_OK && n != naxes)
        st =
            vn_error(VN_ERR_SHAPE, where, "'sizes' has %d values, expected %d", (int)n, (int)naxes);
    if (st == VN_OK)
        st = string_choice(ctx, where, "keep_aspect_ratio_policy", "stretch", policies, 3, &policy);
    for (int32_t k = 0; k < naxes && st == VN_OK; k++)
        if (sz[k] < 0 || p->in[axes[k]] == 0)
            st = vn_error(VN_ERR_INVALID_ARG, where, "size %lld of axis %d is not valid",
                          (long long)sz[k], (int)axes[k]);
    if (st != VN_OK) return st;
    double one = policy == 1 ? INFINITY : 0.0;
    for (int32_t k = 0; k < naxes; k++) {
        double s = (double)sz[k] / (double)p->in[axes[k]];
        p->scale[axes[k]] = s, p->out[axes[k]] = sz[k];
        one = policy == 1 ? fmin(one, s) : fmax(one, s);
    }
    if (policy == 0) return VN_OK;
    for (int32_t k = 0; k < naxes; k++) {
        p->scale[axes[k]] = one;
        p->out[axes[k]] = (int64_t)(one * (double)p->in[axes[k]] + 0.5);
    }
    return VN_OK;
}

static vn_status parse_roi(const vn_op_ctx *ctx, const char *where, const int32_t *axes,
                           int32_t naxes, rz_params *p)
{
    double roi[2 * VN_MAX_RANK];
    for (int32_t d = 0; d < p->rank; d++) p->roi_lo[d] = 0.0, p->roi_hi[d] = 1.0;
    if (p->ctm != RZ_TF_CROP_AND_RESIZE) return VN_OK; /* roi means nothing elsewhere */
    if (!has_values(ctx, 1))
        return vn_error(VN_ERR_INVALID_ARG, where, "tf_crop_and_resize needs 'roi'");
    vn_status st = const_floats(ctx, where, 1, "roi", 2 * naxes, roi);
    for (int32_t k = 0; k < naxes && st == VN_OK; k++)
        p->roi_lo[axes[k]] = roi[k], p->roi_hi[axes[k]] = roi[naxes + k];
    return st;
}

vn_status vn_rz_params(const vn_op_ctx *ctx, const char *where, bool upsample, rz_params *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    bool v11 = !upsample && ctx->num_inputs >= 3;
    int32_t axes[VN_MAX_RANK], naxes = 0;
    memset(p, 0, sizeof *p);
    p->rank = x->rank;
    for (int32_t d = 0; d < x->rank; d++) p->in[d] = p->out[d] = x->dims[d], p->scale[d] = 1.0;
    if (x->rank < 1) return vn_error(VN_ERR_SHAPE, where, "X must have rank >= 1");
    vn_status st = parse_mode(ctx, where, v11, p);
    if (st == VN_OK) st = v11 ? parse_axes(ctx, where, x->rank, axes, &naxes) : VN_OK;
    if (st != VN_OK) return st;
    if (!v11) { /* Resize-10, Upsample: all axes, scales input 1 or the attribute */
        for (int32_t d = 0; d < x->rank; d++) axes[d] = d;
        return from_scales(ctx, where, ctx->num_inputs >= 2 ? 1 : -1, axes, x->rank, p);
    }
    bool scales = has_values(ctx, 2), sizes = has_values(ctx, 3);
    if (scales == sizes)
        return vn_error(VN_ERR_INVALID_ARG, where, "needs exactly one of 'scales' and 'sizes'");
    st = scales ? from_scales(ctx, where, 2, axes, naxes, p)
                : from_sizes(ctx, where, axes, naxes, p);
    if (st == VN_OK) st = parse_roi(ctx, where, axes, naxes, p);
    return st;
}

bool vn_rz_axis_identity(const rz_params *p, int32_t d)
{
    bool roi_id = p->ctm != RZ_TF_CROP_AND_RESIZE ||
                  (p->roi_lo[d] == 0.0 && fabs(p->roi_hi[d] - 1.0) <= 1e-9);
    return fabs(p->scale[d] - 1.0) <= 1e-9 && p->out[d] == p->in[d] && roi_id;
}
