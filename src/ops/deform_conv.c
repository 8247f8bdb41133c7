/*
 * deform_conv.c — DeformConv (ONNX 19, 22), 2-D: a grouped convolution
 * whose kernel taps are moved by learned offsets. Tap (a, b) of output pixel
 * (i, j) samples X bilinearly at
 *     (i * stride_h - pad_top + a * dil_h + dy, j * stride_w - pad_left + b * dil_w + dx)
 * (corners outside the image read zero; (dy, dx) from `offset`
 * [N, offset_group * kH * kW * 2, oH, oW], per offset group of input
 * channels), times the optional `mask` [N, offset_group * kH * kW, oH, oW];
 * then the ordinary grouped weighted sum with W [M, C / group, kH, kW] and
 * the optional bias B [M]. The sampled taps of one input channel are built
 * once per image (an im2col of deformed samples) and reused by every output
 * channel of its group. Scalar, in double.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

typedef struct dc_plan {
    int64_t N, C, H, W, M, kh, kw, oh, ow, group, ogroup;
    int64_t stride[2], dil[2], pad[4];
    vn_dtype dt;
} dc_plan;

static vn_status ints_or(const vn_op_ctx *ctx, const char *where, const char *name, int32_t want,
                         int64_t fill, int64_t *v)
{
    int32_t n = 0;
    bool present = false;
    vn_status st = vn_so_attr_ints(ctx, where, name, v, 8, &n, &present);
    if (st == VN_OK && present && n != want)
        st = vn_error(VN_ERR_INVALID_ARG, where, "'%s' needs %d values", name, (int)want);
    for (int32_t i = 0; st == VN_OK && !present && i < want; i++) v[i] = fill;
    return st;
}

static vn_status dc_params(const vn_op_ctx *ctx, const char *where, dc_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *w = &ctx->inputs[1], *off = &ctx->inputs[2];
    if (x->rank != 4 || w->rank != 4 || off->rank != 4)
        return vn_error(VN_ERR_UNSUPPORTED, where, "only 2-D DeformConv (X [N, C, H, W])");
    vn_status st = vn_so_attr_int(ctx, where, "group", 1, &p->group);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "offset_group", 1, &p->ogroup);
    if (st == VN_OK) st = ints_or(ctx, where, "strides", 2, 1, p->stride);
    if (st == VN_OK) st = ints_or(ctx, where, "dilations", 2, 1, p->dil);
    if (st == VN_OK) st = ints_or(ctx, where, "pads", 4, 0, p->pad);
    if (st != VN_OK) return st;
    p->N = x->dims[0], p->C = x->dims[1], p->H = x->dims[2], p->W = x->dims[3];
    p->M = w->dims[0], p->kh = w->dims[2], p->kw = w->dims[3];
    p->oh = off->dims[2], p->ow = off->dims[3], p->dt = x->dtype;
    int64_t taps = p->kh * p->kw;
    bool ok = p->group > 0 && p->ogroup > 0 && w->dims[1] * p->group == p->C &&
              p->M % p->group == 0 && p->C % p->ogroup == 0 && off->dims[0] == p->N &&
              off->dims[1] == p->ogroup * taps * 2;
    for (int32_t d = 0; d < 2 && ok; d++) {
        int64_t in = x->dims[2 + d], k = w->dims[2 + d], out = off->dims[2 + d];
        ok = out == (in + p->pad[d] + p->pad[d + 2] - ((k - 1) * p->dil[d] + 1)) / p->stride[d] + 1;
    }
    if (ok && vn_so_present(ctx, 3))
        ok = ctx->inputs[3].rank == 1 && ctx->inputs[3].dims[0] == p->M;
    if (ok && vn_so_present(ctx, 4)) {
        const vn_tensor_desc *m = &ctx->inputs[4];
        ok = m->rank == 4 && m->dims[0] == p->N && m->dims[1] == p->ogroup * taps &&
             m->dims[2] == p->oh && m->dims[3] == p->ow;
    }
    if (!ok)
        return vn_error(VN_ERR_SHAPE, where,
                        "X, W, offset, B and mask shapes do not agree with group, offset_group, "
                        "strides, pads and dilations");
    return VN_OK;
}

static vn_status dc_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    dc_plan p = {0};
    vn_status st = dc_params(ctx, where, &p);
    int64_t dims[4] = {p.N, p.M, p.oh, p.ow};
    if (st == VN_OK) *out = vn_so_desc(ctx->inputs[0].dtype, 4, dims);
    return st;
}

static vn_status dc_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    dc_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = dc_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    /* the deformed taps of one image: [C, kH * kW, oH * oW] */
    *workspace = (size_t)vn_ops_max(1, p->C * p->kh * p->kw * p->oh * p->ow) * sizeof(double);
    *plan = p;
    return VN_OK;
}

/* X[plane] at (y, x), bilinear, zero outside the image. */
static double bilinear(const dc_plan *p, const void *x, int64_t plane, double y, double xx)
{
    double fy = floor(y), fx = floor(xx), v = 0.0;
    for (int32_t cy = 0; cy < 2; cy++)
        for (int32_t cx = 0; cx < 2; cx++) {
            double yy = fy + cy, xc = fx + cx;
            if (yy < 0 || yy >= (double)p->H || xc < 0 || xc >= (double)p->W) continue;
            double w = (cy ? y - fy : 1.0 - (y - fy)) * (cx ? xx - fx : 1.0 - (xx - fx));
            if (w != 0.0)
                v += w * vn_cast_load_f64(p->dt, x, plane + (int64_t)yy * p->W + (int64_t)xc);
        }
    return v;
}

/* The deformed, masked taps of image n into col [C, taps, oH * oW]. */
static void sample_image(const dc_plan *p, const vn_op_run_ctx *ctx, int64_t n, double *col)
{
    const void *x = ctx->inputs[0].data, *off = ctx->inputs[2].data;
    const void *mask = ctx->num_inputs > 4 ? ctx->inputs[4].data : NULL;
    vn_dtype odt = ctx->inputs[2].desc.dtype, mdt = mask ? ctx->inputs[4].desc.dtype : VN_F32;
    int64_t taps = p->kh * p->kw, P = p->oh * p->ow, cpg = p->C / p->ogroup;
    for (int64_t c = 0; c < p->C; c++) {
        int64_t g = c / cpg, plane = (n * p->C + c) * p->H * p->W;
        for (int64_t t = 0; t < taps; t++)
            for (int64_t q = 0; q < P; q++) {
                int64_t i = q / p->ow, j = q % p->ow, a = t / p->kw, b = t % p->kw;
                int64_t oc = ((n * p->ogroup + g) * taps + t) * 2;
                double dy = vn_cast_load_f64(odt, off, oc * P + q);
                double dx = vn_cast_load_f64(odt, off, (oc + 1) * P + q);
                double y = (double)(i * p->stride[0] - p->pad[0] + a * p->dil[0]) + dy;
                double xx = (double)(j * p->stride[1] - p->pad[1] + b * p->dil[1]) + dx;
                double m =
                    mask ? vn_cast_load_f64(mdt, mask, ((n * p->ogroup + g) * taps + t) * P + q)
                         : 1.0;
                col[(c * taps + t) * P + q] = m == 0.0 ? 0.0 : m * bilinear(p, x, plane, y, xx);
            }
    }
}

static vn_status dc_run(const vn_op_run_ctx *ctx)
{
    const dc_plan *p = ctx->plan;
    double *col = ctx->workspace;
    const void *w = ctx->inputs[1].data;
    const void *bias = ctx->num_inputs > 3 ? ctx->inputs[3].data : NULL;
    int64_t taps = p->kh * p->kw, P = p->oh * p->ow, cg = p->C / p->group, mg = p->M / p->group;
    for (int64_t n = 0; n < p->N; n++) {
        sample_image(p, ctx, n, col);
        for (int64_t m = 0; m < p->M; m++) {
            int64_t c0 = m / mg * cg;
            double b = bias ? vn_cast_load_f64(ctx->inputs[3].desc.dtype, bias, m) : 0.0;
            for (int64_t q = 0; q < P; q++) {
                double acc = b;
                for (int64_t c = 0; c < cg; c++)
                    for (int64_t t = 0; t < taps; t++)
                        acc += vn_cast_load_f64(p->dt, w, (m * cg + c) * taps + t) *
                               col[((c0 + c) * taps + t) * P + q];
                vn_cast_store_f64(p->dt, ctx->outputs[0].data, (n * p->M + m) * P + q, acc);
            }
        }
    }
    return VN_OK;
}

const vn_op_def vn_deform_conv_def = {"DeformConv",    "",       3,          5,    1,
                                      VN_DTYPES_FLOAT, dc_infer, dc_plan_fn, free, dc_run};
