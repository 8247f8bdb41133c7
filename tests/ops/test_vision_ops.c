/*
 * test_vision_ops.c — RoiAlign, AffineGrid, Col2Im, MaxUnpool and DeformConv
 * against references written here from the ONNX specs (double precision; Col2Im as
 * a gather over output pixels where vinci scatters columns).
 */
#include "test_shape_ops_harness.h"

static vn_tensor rand_t(vn_dtype dt, int32_t rank, const int64_t *dims, uint64_t seed, double lo,
                        double hi)
{
    vn_tensor t = th_make(dt, rank, dims);
    vt_rng r = {seed};
    for (int64_t i = 0; i < vn_desc_numel(&t.desc); i++) th_set(&t, i, vt_uniform(&r, lo, hi));
    return t;
}

static bool all_close(const vn_tensor *y, const double *want, int64_t n, double tol)
{
    if (vn_desc_numel(&y->desc) != n) return false;
    for (int64_t i = 0; i < n; i++)
        if (fabs(th_at(y, i) - want[i]) > tol * (1 + fabs(want[i]))) {
            fprintf(stderr, "  element %lld: got %g want %g\n", (long long)i, th_at(y, i), want[i]);
            return false;
        }
    return true;
}

/* ---- RoiAlign ------------------------------------------------------------- */

/* Bilinear value at (y, x) of plane p [H, W]; each corner weighted, and in
 * max mode the largest weighted corner. */
static double ra_sample(const vn_tensor *x, int64_t base, int64_t H, int64_t W, double y, double xx,
                        bool max_mode)
{
    if (y < -1 || y > (double)H || xx < -1 || xx > (double)W) return 0;
    y = y < 0 ? 0 : y, xx = xx < 0 ? 0 : xx;
    int64_t y0 = (int64_t)floor(y), x0 = (int64_t)floor(xx);
    if (y0 >= H - 1) y0 = H - 1, y = (double)y0;
    if (x0 >= W - 1) x0 = W - 1, xx = (double)x0;
    int64_t y1 = y0 + 1 < H ? y0 + 1 : H - 1, x1 = x0 + 1 < W ? x0 + 1 : W - 1;
    double fy = y - (double)y0, fx = xx - (double)x0;
    double c[4] = {(1 - fy) * (1 - fx) * th_at(x, base + y0 * W + x0),
                   (1 - fy) * fx * th_at(x, base + y0 * W + x1),
                   fy * (1 - fx) * th_at(x, base + y1 * W + x0),
                   fy * fx * th_at(x, base + y1 * W + x1)};
    if (!max_mode) return c[0] + c[1] + c[2] + c[3];
    return fmax(fmax(c[0], c[1]), fmax(c[2], c[3]));
}

static void roi_case(bool half_pixel, bool max_mode, int64_t sampling)
{
    int64_t xd[4] = {2, 3, 9, 11}, rd[2] = {4, 2}, one = 4, oh = 3, ow = 4;
    rd[1] = 4;
    vn_tensor in[3] = {rand_t(VN_F32, 4, xd, 7, -1, 1), th_make(VN_F32, 2, rd),
                       th_make(VN_I64, 1, &one)};
    static const double rois[4][4] = {
        {0, 0, 8, 6}, {2.5, 1.2, 10.5, 8.7}, {-2, -1, 3, 4}, {4, 4, 4.5, 4.2}};
    for (int32_t r = 0; r < 4; r++) {
        for (int32_t k = 0; k < 4; k++) th_set(&in[1], r * 4 + k, rois[r][k]);
        th_set(&in[2], r, r % 2);
    }
    double scale = 0.75;
    vn_attr a[] = {
        TH_STR("mode", max_mode ? "max" : "avg"),
        TH_STR("coordinate_transformation_mode", half_pixel ? "half_pixel" : "output_half_pixel"),
        TH_INT("output_height", oh),
        TH_INT("output_width", ow),
        TH_INT("sampling_ratio", sampling),
        TH_FLOAT("spatial_scale", scale)};
    vn_attrs at = {a, 6};
    vn_tensor out[1];
    VT_OK(th_op("RoiAlign", in, 3, true, &at, out, 1));
    double want[4 * 3 * 3 * 4];
    for (int32_t r = 0; r < 4; r++) {
        double off = half_pixel ? 0.5 : 0, x0 = (float)rois[r][0] * scale - off,
               y0 = (float)rois[r][1] * scale - off;
        double w = (float)rois[r][2] * scale - off - x0, h = (float)rois[r][3] * scale - off - y0;
        if (!half_pixel) w = fmax(w, 1), h = fmax(h, 1);
        int64_t gy = sampling ? sampling : (int64_t)ceil(h / (double)oh);
        int64_t gx = sampling ? sampling : (int64_t)ceil(w / (double)ow);
        for (int64_t c = 0; c < 3; c++)
            for (int64_t i = 0; i < oh * ow; i++) {
                double acc = max_mode ? -INFINITY : 0;
                for (int64_t sy = 0; sy < gy; sy++)
                    for (int64_t sx = 0; sx < gx; sx++) {
                        double y = y0 + (double)(i / ow) * h / (double)oh +
                                   ((double)sy + 0.5) * h / (double)oh / (double)gy;
                        double x = x0 + (double)(i % ow) * w / (double)ow +
                                   ((double)sx + 0.5) * w / (double)ow / (double)gx;
                        double v = ra_sample(&in[0], ((r % 2) * 3 + c) * 99, 9, 11, y, x, max_mode);
                        acc = max_mode ? fmax(acc, v) : acc + v;
                    }
                want[(r * 3 + c) * oh * ow + i] =
                    max_mode ? acc : acc / (double)(gy * gx > 0 ? gy * gx : 1);
            }
    }
    VT_CHECK(all_close(&out[0], want, 4 * 3 * oh * ow, 1e-4), "roialign half %d max %d s %lld",
             (int)half_pixel, (int)max_mode, (long long)sampling);
    th_free(out, 1);
    th_free(in, 3);
}

static void test_roi_align(void)
{
    for (int32_t m = 0; m < 8; m++) roi_case(m & 1, (m >> 1) & 1, (m >> 2) ? 2 : 0);
}

/* ---- AffineGrid ------------------------------------------------------------ */

static void test_affine_grid(void)
{
    for (int32_t k = 2; k <= 3; k++)
        for (int32_t align = 0; align < 2; align++) {
            int64_t td[3] = {2, k, k + 1}, sz[5] = {2, 3, 4, 5, 6}, n = k + 2;
            vn_tensor in[2] = {rand_t(VN_F32, 3, td, 3, -1, 1), th_ints(n, sz)}, out[1];
            vn_attr a[] = {TH_INT("align_corners", align)};
            vn_attrs at = {a, 1};
            VT_OK(th_op("AffineGrid", in, 2, true, &at, out, 1));
            int64_t pts = k == 2 ? 4 * 5 : 4 * 5 * 6;
            double *want = malloc((size_t)(2 * pts * k) * sizeof *want);
            for (int64_t b = 0; b < 2; b++)
                for (int64_t p = 0; p < pts; p++) {
                    double h[4] = {0, 0, 0, 1};
                    int64_t idx[3] = {p / (k == 2 ? 5 : 30), p / (k == 2 ? 1 : 6) % 5, p % 6};
                    int64_t n_of[3] = {4, 5, 6};
                    if (k == 2) idx[1] = p % 5, idx[2] = 0;
                    for (int32_t d = 0; d < k; d++) { /* h[0] = x from the last spatial dim */
                        double m = (double)n_of[d], i = (double)idx[d];
                        h[k - 1 - d] = align ? -1 + 2 * i / (m - 1) : (2 * i + 1) / m - 1;
                    }
                    h[k] = 1;
                    for (int32_t r = 0; r < k; r++) {
                        double acc = 0;
                        for (int32_t c = 0; c <= k; c++)
                            acc += th_at(&in[0], (b * k + r) * (k + 1) + c) * h[c];
                        want[(b * pts + p) * k + r] = acc;
                    }
                }
            VT_CHECK(all_close(&out[0], want, 2 * pts * k, 1e-5) &&
                         out[0].desc.dims[out[0].desc.rank - 1] == k,
                     "affine grid %dd align %d", (int)k, (int)align);
            free(want);
            th_free(out, 1);
            th_free(in, 2);
        }
}

/* ---- Col2Im ------------------------------------------------------------------ */

static void test_col2im(void)
{
    /* image 7 x 6, block 3 x 2, strides 2 x 1, dilations 1 x 2, pads (1, 0, 2, 1) */
    int64_t img[2] = {7, 6}, blk[2] = {3, 2}, st[2] = {2, 1}, dl[2] = {1, 2}, pd[4] = {1, 0, 2, 1};
    int64_t grid[2], two = 2, C = 2;
    for (int32_t d = 0; d < 2; d++)
        grid[d] = (img[d] + pd[d] + pd[d + 2] - (dl[d] * (blk[d] - 1) + 1)) / st[d] + 1;
    int64_t xd[3] = {2, C * 6, grid[0] * grid[1]};
    vn_tensor in[3] = {rand_t(VN_F32, 3, xd, 5, -1, 1), th_ints(two, img), th_ints(two, blk)};
    vn_attr a[] = {TH_INTS("strides", st, 2), TH_INTS("dilations", dl, 2), TH_INTS("pads", pd, 4)};
    vn_attrs at = {a, 3};
    vn_tensor out[1];
    VT_OK(th_op("Col2Im", in, 3, true, &at, out, 1));
    double want[2 * 2 * 42];
    for (int64_t n = 0; n < 2; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t y = 0; y < 7; y++)
                for (int64_t x = 0; x < 6; x++) {
                    double acc = 0;
                    for (int64_t ky = 0; ky < 3; ky++)
                        for (int64_t kx = 0; kx < 2; kx++) {
                            int64_t ty = y + pd[0] - ky * dl[0], tx = x + pd[1] - kx * dl[1];
                            if (ty < 0 || tx < 0 || ty % st[0] || tx % st[1]) continue;
                            int64_t gy = ty / st[0], gx = tx / st[1];
                            if (gy >= grid[0] || gx >= grid[1]) continue;
                            acc += th_at(&in[0], ((n * C + c) * 6 + ky * 2 + kx) * xd[2] +
                                                     gy * grid[1] + gx);
                        }
                    want[((n * C + c) * 7 + y) * 6 + x] = acc;
                }
    VT_CHECK(all_close(&out[0], want, 2 * 2 * 42, 1e-5) && out[0].desc.dims[2] == 7, "col2im 2-D");
    th_free(out, 1);
    in[0].desc.dims[2] += 1;
    VT_CHECK(th_op("Col2Im", in, 3, true, &at, out, 1) == VN_ERR_SHAPE, "wrong block count");
    th_free(in, 3);
}

/* ---- MaxUnpool ----------------------------------------------------------------- */

static void test_max_unpool(void)
{
    /* pool a random [1, 2, 6, 6] with 2x2 / stride 2 by hand, then unpool */
    int64_t xd[4] = {1, 2, 6, 6}, pd[4] = {1, 2, 3, 3}, k[2] = {2, 2}, four = 4;
    vn_tensor src = rand_t(VN_F32, 4, xd, 2, -1, 1);
    vn_tensor in[3] = {th_make(VN_F32, 4, pd), th_make(VN_I64, 4, pd), th_make(VN_I64, 1, &four)};
    for (int64_t c = 0; c < 2; c++)
        for (int64_t i = 0; i < 9; i++) {
            int64_t best = -1;
            for (int64_t t = 0; t < 4; t++) {
                int64_t f = (c * 6 + (i / 3) * 2 + t / 2) * 6 + (i % 3) * 2 + t % 2;
                if (best < 0 || th_at(&src, f) > th_at(&src, best)) best = f;
            }
            th_set(&in[0], c * 9 + i, th_at(&src, best));
            ((int64_t *)in[1].data)[c * 9 + i] = best;
        }
    vn_attr a[] = {TH_INTS("kernel_shape", k, 2), TH_INTS("strides", k, 2)};
    vn_attrs at = {a, 2};
    vn_tensor out[1];
    VT_OK(th_op("MaxUnpool", in, 2, true, &at, out, 1));
    double want[2 * 8 * 8] = {0};
    for (int64_t i = 0; i < 18; i++) want[((int64_t *)in[1].data)[i]] = th_at(&in[0], i);
    VT_CHECK(all_close(&out[0], want, 72, 0) && out[0].desc.dims[3] == 6, "unpool default shape");
    th_free(out, 1);
    int64_t os[4] = {1, 2, 8, 7};
    memcpy(in[2].data, os, sizeof os);
    VT_OK(th_op("MaxUnpool", in, 3, true, &at, out, 1));
    for (int64_t i = 0; i < 2 * 8 * 7; i++) want[i] = 0;
    for (int64_t i = 0; i < 18; i++) {
        int64_t f = ((int64_t *)in[1].data)[i], c = f / 36, y = f / 6 % 6, x = f % 6;
        want[(c * 8 + y) * 7 + x] = th_at(&in[0], i);
    }
    VT_CHECK(all_close(&out[0], want, 2 * 8 * 7, 0), "unpool into output_shape");
    th_free(out, 1);
    th_free(in, 3);
    th_free(&src, 1);
}

/* ---- DeformConv ------------------------------------------------------------------ */

/* Bilinear read of plane [H, W] at (y, x), corners outside reading zero. */
static double dc_read(const vn_tensor *x, int64_t base, int64_t H, int64_t W, double y, double xx)
{
    int64_t y0 = (int64_t)floor(y), x0 = (int64_t)floor(xx);
    double v = 0;
    for (int64_t yy = y0; yy <= y0 + 1; yy++)
        for (int64_t xc = x0; xc <= x0 + 1; xc++)
            if (yy >= 0 && yy < H && xc >= 0 && xc < W)
                v += (1 - fabs(y - (double)yy)) * (1 - fabs(xx - (double)xc)) *
                     th_at(x, base + yy * W + xc);
    return v;
}

static void test_deform_conv(void)
{
    /* N 2, C 4, 7 x 6, M 6, group 2, offset_group 2, kernel 3 x 2, stride (2, 1),
     * dilation (1, 2), pads (1, 1, 1, 0) */
    enum { N = 2, C = 4, H = 7, W = 6, M = 6, G = 2, OG = 2, KH = 3, KW = 2 };
    int64_t st[2] = {2, 1}, dl[2] = {1, 2}, pd[4] = {1, 1, 1, 0};
    int64_t oh = (H + 2 - 3) / 2 + 1, ow = (W + 1 - 3) / 1 + 1;
    int64_t xd[4] = {N, C, H, W}, wd[4] = {M, C / G, KH, KW}, od[4] = {N, OG * KH * KW * 2, oh, ow},
            md[4] = {N, OG * KH * KW, oh, ow}, bd = M;
    vn_tensor in[5] = {rand_t(VN_F32, 4, xd, 1, -1, 1), rand_t(VN_F32, 4, wd, 2, -1, 1),
                       rand_t(VN_F32, 4, od, 3, -2.5, 2.5), rand_t(VN_F32, 1, &bd, 4, -1, 1),
                       rand_t(VN_F32, 4, md, 5, 0, 1)};
    vn_attr a[] = {TH_INT("group", G), TH_INT("offset_group", OG), TH_INTS("strides", st, 2),
                   TH_INTS("dilations", dl, 2), TH_INTS("pads", pd, 4)};
    vn_attrs at = {a, 5};
    for (int32_t with_mask = 0; with_mask < 2; with_mask++) {
        vn_tensor out[1];
        VT_OK(th_op("DeformConv", in, with_mask ? 5 : 3, true, &at, out, 1));
        double *want = malloc((size_t)(N * M * oh * ow) * sizeof *want);
        for (int64_t e = 0; e < N * M * oh * ow; e++) {
            int64_t n = e / (M * oh * ow), m = e / (oh * ow) % M, i = e / ow % oh, j = e % ow;
            double acc = with_mask ? th_at(&in[3], m) : 0;
            for (int64_t ci = 0; ci < C / G; ci++) {
                int64_t c = m / (M / G) * (C / G) + ci, g = c / (C / OG);
                for (int64_t t = 0; t < KH * KW; t++) {
                    int64_t ch = (g * KH * KW + t) * 2, P = oh * ow, q = i * ow + j;
                    double y = (double)(i * st[0] - pd[0] + t / KW * dl[0]) +
                               th_at(&in[2], (n * od[1] + ch) * P + q);
                    double x = (double)(j * st[1] - pd[1] + t % KW * dl[1]) +
                               th_at(&in[2], (n * od[1] + ch + 1) * P + q);
                    double mk =
                        with_mask ? th_at(&in[4], (n * md[1] + g * KH * KW + t) * P + q) : 1;
                    acc += th_at(&in[1], (m * (C / G) + ci) * KH * KW + t) * mk *
                           dc_read(&in[0], (n * C + c) * H * W, H, W, y, x);
                }
            }
            want[e] = acc;
        }
        VT_CHECK(all_close(&out[0], want, N * M * oh * ow, 1e-5), "deform conv mask+bias %d",
                 (int)with_mask);
        free(want);
        th_free(out, 1);
    }
    in[2].desc.dims[1] = 10;
    vn_tensor out[1];
    VT_CHECK(th_op("DeformConv", in, 3, true, &at, out, 1) == VN_ERR_SHAPE, "offset channels");
    th_free(in, 5);
}

int main(void)
{
    VT_RUN(test_deform_conv);
    VT_RUN(test_roi_align);
    VT_RUN(test_affine_grid);
    VT_RUN(test_col2im);
    VT_RUN(test_max_unpool);
    return vt_summary();
}
