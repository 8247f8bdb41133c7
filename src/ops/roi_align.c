/*
 * roi_align.c — RoiAlign (ONNX 10, 16): per region of interest (x1, y1, x2,
 * y2 in input coordinates times spatial_scale, shifted by half a pixel in
 * half_pixel mode) an output_height x output_width grid of bins, each the
 * average (or maximum) of sampling_ratio^2 bilinear samples (adaptive:
 * ceil(bin size) per direction when sampling_ratio is 0). Samples outside
 * [-1, size] count as zero; others are clamped to the border, as the ONNX
 * reference does. In max mode a sample is the largest of its four weighted
 * corners (the reference's definition). Scalar: detection heads run it on a
 * few hundred small regions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

typedef struct ra_plan {
    int64_t C, H, W, R, oh, ow, sampling;
    double scale;
    bool half_pixel, max_mode;
    vn_dtype dt, rdt, idt;
} ra_plan;

static vn_status ra_params(const vn_op_ctx *ctx, const char *where, ra_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *r = &ctx->inputs[1], *b = &ctx->inputs[2];
    const char *mode = "avg", *ctm = "half_pixel";
    vn_status st = vn_so_attr_string(ctx, where, "mode", "avg", &mode);
    if (st == VN_OK)
        st = vn_so_attr_string(ctx, where, "coordinate_transformation_mode", "half_pixel", &ctm);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "output_height", 1, &p->oh);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "output_width", 1, &p->ow);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "sampling_ratio", 0, &p->sampling);
    if (st == VN_OK) st = vn_attrs_float(ctx->attrs, "spatial_scale", 1.0, &p->scale);
    if (st != VN_OK) return st;
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return vn_error(VN_ERR_INVALID_ARG, where, "unknown mode '%s'", mode);
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
        return vn_error(VN_ERR_INVALID_ARG, where, "unknown coordinate_transformation_mode '%s'",
                        ctm);
    if (x->rank != 4 || r->rank != 2 || r->dims[1] != 4 || b->rank != 1 ||
        b->dims[0] != r->dims[0] || !vn_cast_is_float(r->dtype) ||
        (b->dtype != VN_I64 && b->dtype != VN_I32) || p->oh < 1 || p->ow < 1)
        return vn_error(VN_ERR_SHAPE, where,
                        "needs X [N, C, H, W], rois [R, 4], batch_indices [R] (i32/i64) and "
                        "positive output sizes");
    p->max_mode = !strcmp(mode, "max");
    p->half_pixel = !strcmp(ctm, "half_pixel");
    p->C = x->dims[1], p->H = x->dims[2], p->W = x->dims[3], p->R = r->dims[0];
    p->dt = x->dtype, p->rdt = r->dtype, p->idt = b->dtype;
    return VN_OK;
}

static vn_status ra_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    ra_plan p = {0};
    vn_status st = ra_params(ctx, where, &p);
    int64_t dims[4] = {p.R, p.C, p.oh, p.ow};
    if (st == VN_OK) *out = vn_so_desc(ctx->inputs[0].dtype, 4, dims);
    return st;
}

static vn_status ra_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    ra_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = ra_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

/* One bilinear sample: four corner offsets and weights (all zero outside). */
typedef struct sample {
    int64_t pos[4];
    double w[4];
} sample;

static sample sample_at(const ra_plan *p, double y, double x)
{
    sample s = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    if (y < -1.0 || y > (double)p->H || x < -1.0 || x > (double)p->W) return s;
    y = fmax(y, 0.0), x = fmax(x, 0.0);
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1 = y0 + 1, x1 = x0 + 1;
    if (y0 >= p->H - 1) y0 = y1 = p->H - 1, y = (double)y0;
    if (x0 >= p->W - 1) x0 = x1 = p->W - 1, x = (double)x0;
    double ly = y - (double)y0, lx = x - (double)x0, hy = 1.0 - ly, hx = 1.0 - lx;
    s.pos[0] = y0 * p->W + x0, s.pos[1] = y0 * p->W + x1;
    s.pos[2] = y1 * p->W + x0, s.pos[3] = y1 * p->W + x1;
    s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
    return s;
}

static void one_roi(const ra_plan *p, const vn_op_run_ctx *ctx, int64_t r)
{
    const void *rois = ctx->inputs[1].data, *x = ctx->inputs[0].data;
    double off = p->half_pixel ? 0.5 : 0.0, c[4];
    for (int32_t k = 0; k < 4; k++)
        c[k] = vn_cast_load_f64(p->rdt, rois, r * 4 + k) * p->scale - off;
    double rw = c[2] - c[0], rh = c[3] - c[1];
    if (!p->half_pixel) rw = fmax(rw, 1.0), rh = fmax(rh, 1.0);
    double bh = rh / (double)p->oh, bw = rw / (double)p->ow;
    int64_t gh = p->sampling > 0 ? p->sampling : (int64_t)ceil(rh / (double)p->oh);
    int64_t gw = p->sampling > 0 ? p->sampling : (int64_t)ceil(rw / (double)p->ow);
    double count = (double)vn_ops_max(gh * gw, 1);
    int64_t b = vn_cast_load_i64(p->idt, ctx->inputs[2].data, r);
    for (int64_t ch = 0; ch < p->C; ch++) {
        int64_t base = (b * p->C + ch) * p->H * p->W;
        for (int64_t ph = 0; ph < p->oh; ph++)
            for (int64_t pw = 0; pw < p->ow; pw++) {
                double acc = 0.0;
                bool first = true;
                for (int64_t iy = 0; iy < gh; iy++)
                    for (int64_t ix = 0; ix < gw; ix++) {
                        double y = c[1] + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                        double xx = c[0] + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                        sample s = sample_at(p, y, xx);
                        double v[4];
                        for (int32_t k = 0; k < 4; k++)
                            v[k] = s.w[k] * vn_cast_load_f64(p->dt, x, base + s.pos[k]);
                        if (!p->max_mode) {
                            acc += v[0] + v[1] + v[2] + v[3];
                            continue;
                        }
                        double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
                        acc = first ? m : fmax(acc, m);
                        first = false;
                    }
                int64_t o = ((r * p->C + ch) * p->oh + ph) * p->ow + pw;
                vn_cast_store_f64(p->dt, ctx->outputs[0].data, o, p->max_mode ? acc : acc / count);
            }
    }
}

static vn_status ra_run(const vn_op_run_ctx *ctx)
{
    const ra_plan *p = ctx->plan;
    int64_t N = ctx->inputs[0].desc.dims[0];
    for (int64_t r = 0; r < p->R; r++) {
        int64_t b = vn_cast_load_i64(p->idt, ctx->inputs[2].data, r);
        if (b < 0 || b >= N)
            return vn_error(VN_ERR_INVALID_ARG, "RoiAlign",
                            "batch_indices[%lld] = %lld is outside [0, %lld)", (long long)r,
                            (long long)b, (long long)N);
        one_roi(p, ctx, r);
    }
    return VN_OK;
}

const vn_op_def vn_roi_align_def = {"RoiAlign",      "",       3,          3,    1,
                                    VN_DTYPES_FLOAT, ra_infer, ra_plan_fn, free, ra_run};
