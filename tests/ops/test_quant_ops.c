/*
 * test_quant_ops.c — QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
 * ConvInteger, QLinearConv, InstanceNormalization and GroupNormalization
 * against references written here: exact integer arithmetic and a round
 * half to even of this file's own (floor based), double precision for the
 * float sides. Quantize / requantize cases use power-of-two scales and
 * quarter-step inputs so the quotients are exact and ties really occur.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

#define MAXIN 9

/* Plan and run `op` on n inputs (a NULL data pointer with rank -1: omitted);
 * outputs are allocated here (free them). Returns the plan status. */
static vn_status run_op(const char *op, const vn_attr *a, int32_t na, const vn_tensor *in,
                        int32_t n, vn_tensor *out, int32_t nout)
{
    vn_attrs attrs = {a, na};
    vn_tensor_desc d[MAXIN];
    for (int32_t i = 0; i < n; i++) d[i] = in[i].desc;
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(NULL, op, d, n, &attrs, &plan);
    if (st != VN_OK) return st;
    for (int32_t o = 0; o < nout; o++) {
        out[o].desc = *vn_op_plan_output(plan, o);
        size_t bytes = (size_t)vn_desc_numel(&out[o].desc) * vn_dtype_size(out[o].desc.dtype);
        out[o].data = calloc(bytes ? bytes : 1, 1);
    }
    size_t ws = vn_op_plan_workspace(plan);
    void *w = ws ? malloc(ws) : NULL;
    VT_OK(vn_op_run(plan, in, n, out, nout, w));
    free(w);
    vn_op_plan_destroy(plan);
    return VN_OK;
}

static vn_tensor tens(vn_dtype dt, int32_t rank, const int64_t *dims, void *data)
{
    return (vn_tensor){vt_desc(dt, rank, dims), data};
}

/* Round half to even, written independently of rint. */
static double ref_round(double v)
{
    double f = floor(v), r = v - f;
    if (r > 0.5) return f + 1;
    if (r < 0.5) return f;
    return fmod(f, 2.0) == 0.0 ? f : f + 1;
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ---- QuantizeLinear / DequantizeLinear -------------------------------------------- */

static void test_quantize_per_tensor(void)
{
    vt_rng r = {0x71};
    float x[40], s = 0.5f;
    uint8_t zp = 7;
    for (int i = 0; i < 40; i++) x[i] = (float)((int)(vt_next(&r) % 600) - 300) * 0.25f;
    x[0] = 1.25f, x[1] = 0.75f, x[2] = -3.75f; /* x / s = 2.5, 1.5, -7.5: ties */
    int64_t dx[2] = {4, 10};
    vn_tensor in[3] = {tens(VN_F32, 2, dx, x), tens(VN_F32, 0, NULL, &s),
                       tens(VN_U8, 0, NULL, &zp)};
    vn_tensor out;
    VT_OK(run_op("QuantizeLinear", NULL, 0, in, 3, &out, 1));
    VT_CHECK(out.desc.dtype == VN_U8 && out.desc.rank == 2, "output %s",
             vn_dtype_name(out.desc.dtype));
    const uint8_t *y = out.data;
    for (int i = 0; i < 40; i++) {
        double want = clampd(ref_round((double)x[i] / 0.5) + 7, 0, 255);
        VT_CHECK(y[i] == want, "x %g: %d, want %g", (double)x[i], y[i], want);
    }
    VT_CHECK(y[0] == 9 && y[1] == 9 && y[2] == 0, "ties %d %d %d", y[0], y[1], y[2]);
    free(out.data);
}

/* One f32 scale and zero point into i8 (the vectorised loop): the f32
 * quotient rounded half to even, ties, values past 2^22 and 2^24, infinities
 * and NaN (the low end); and the i8 DequantizeLinear back. */
static void test_quantize_tensor_edges(void)
{
    vt_rng r = {0x75};
    float x[64], s = 0.37f;
    int8_t zp = -5;
    for (int i = 0; i < 48; i++) x[i] = (float)vt_uniform(&r, -60.0, 60.0);
    const float edge[16] = {0.5f * 0.37f, 1.5f * 0.37f, -2.5f * 0.37f, 4194304.5f,
                            -4194304.5f,  16777217.0f,  -1e30f,        1e30f,
                            INFINITY,     -INFINITY,    NAN,           0.0f,
                            -0.0f,        1e-30f,       46.99f,        -45.4f};
    memcpy(x + 48, edge, sizeof edge);
    int64_t dx[1] = {64};
    vn_tensor in[3] = {tens(VN_F32, 1, dx, x), tens(VN_F32, 0, NULL, &s),
                       tens(VN_I8, 0, NULL, &zp)};
    vn_tensor out, back;
    VT_OK(run_op("QuantizeLinear", NULL, 0, in, 3, &out, 1));
    const int8_t *y = out.data;
    for (int i = 0; i < 64; i++) {
        float q = x[i] / s;
        double want = isnan(q) ? -128 : clampd(ref_round((double)q) - 5, -128, 127);
        VT_CHECK(y[i] == want, "x %g: %d, want %g", (double)x[i], y[i], want);
    }
    vn_tensor din[3] = {out, tens(VN_F32, 0, NULL, &s), tens(VN_I8, 0, NULL, &zp)};
    VT_OK(run_op("DequantizeLinear", NULL, 0, din, 3, &back, 1));
    for (int i = 0; i < 64; i++)
        VT_CHECK(((float *)back.data)[i] == (float)(y[i] + 5) * s, "dequantized element %d", i);
    free(out.data);
    free(back.data);
}

static void test_quantize_axis_and_blocked(void)
{
    vt_rng r = {0x72};
    /* per axis: x [2,3,4], axis 1, i8 */
    float x[24], s[3] = {0.25f, 1.0f, 4.0f};
    int8_t zp[3] = {-3, 0, 100};
    for (int i = 0; i < 24; i++) x[i] = (float)((int)(vt_next(&r) % 2000) - 1000) * 0.125f;
    int64_t dx[3] = {2, 3, 4}, ds[1] = {3};
    vn_tensor in[3] = {tens(VN_F32, 3, dx, x), tens(VN_F32, 1, ds, s), tens(VN_I8, 1, ds, zp)};
    vn_tensor out;
    VT_OK(run_op("QuantizeLinear", NULL, 0, in, 3, &out, 1));
    for (int i = 0; i < 24; i++) {
        int c = (i / 4) % 3;
        double want = clampd(ref_round((double)x[i] / s[c]) + zp[c], -128, 127);
        VT_CHECK(((int8_t *)out.data)[i] == want, "axis element %d", i);
    }
    free(out.data);
    /* blocked: x [2,6], axis 1, block 4 -> scale [2,2]; no zero point, output_dtype u16 */
    float xb[12], sb[4] = {0.5f, 2.0f, 0.25f, 1.0f};
    for (int i = 0; i < 12; i++) xb[i] = (float)((int)(vt_next(&r) % 4000) - 500) * 0.25f;
    int64_t dxb[2] = {2, 6}, dsb[2] = {2, 2};
    vn_attr a[3] = {{.name = "axis", .type = VN_ATTR_INT, .i = 1},
                    {.name = "block_size", .type = VN_ATTR_INT, .i = 4},
                    {.name = "output_dtype", .type = VN_ATTR_INT, .i = 4 /* UINT16 */}};
    vn_tensor inb[2] = {tens(VN_F32, 2, dxb, xb), tens(VN_F32, 2, dsb, sb)};
    VT_OK(run_op("QuantizeLinear", a, 3, inb, 2, &out, 1));
    VT_CHECK(out.desc.dtype == VN_U16, "blocked dtype %s", vn_dtype_name(out.desc.dtype));
    for (int i = 0; i < 12; i++) {
        int row = i / 6, col = i % 6;
        double want = clampd(ref_round((double)xb[i] / sb[row * 2 + col / 4]), 0, 65535);
        VT_CHECK(((uint16_t *)out.data)[i] == want, "blocked element %d", i);
    }
    free(out.data);
    /* a scale that fits neither mode */
    int64_t bad[1] = {2};
    in[1] = tens(VN_F32, 1, bad, s);
    VT_CHECK(run_op("QuantizeLinear", NULL, 0, in, 2, &out, 1) == VN_ERR_SHAPE, "bad scale");
    VT_CONTAINS(vn_last_error(), "f32[2]");
}

static void test_dequantize(void)
{
    vt_rng r = {0x73};
    uint8_t x[24], zp[3] = {0, 128, 255};
    float s[3] = {0.1f, 3.7f, 1e-3f};
    for (int i = 0; i < 24; i++) x[i] = (uint8_t)(vt_next(&r) >> 56);
    int64_t dx[3] = {2, 4, 3}, ds[1] = {3};
    vn_attr a = {.name = "axis", .type = VN_ATTR_INT, .i = -1};
    vn_tensor in[3] = {tens(VN_U8, 3, dx, x), tens(VN_F32, 1, ds, s), tens(VN_U8, 1, ds, zp)};
    vn_tensor out;
    VT_OK(run_op("DequantizeLinear", &a, 1, in, 3, &out, 1));
    VT_CHECK(out.desc.dtype == VN_F32, "dtype");
    for (int i = 0; i < 24; i++) { /* (x - zp) * s is exact in double: one f32 rounding */
        float want = (float)(((double)x[i] - zp[i % 3]) * (double)s[i % 3]);
        VT_CHECK(((float *)out.data)[i] == want, "element %d", i);
    }
    free(out.data);
    /* i32 without zero point, per tensor */
    int32_t xi[5] = {-2147483647, -5, 0, 9, 123456};
    float si = 0.5f;
    int64_t d5[1] = {5};
    vn_tensor in2[2] = {tens(VN_I32, 1, d5, xi), tens(VN_F32, 0, NULL, &si)};
    VT_OK(run_op("DequantizeLinear", NULL, 0, in2, 2, &out, 1));
    for (int i = 0; i < 5; i++)
        VT_CHECK(((float *)out.data)[i] == (float)((double)xi[i] * 0.5), "i32 element %d", i);
    free(out.data);
}

static void test_dynamic_quantize(void)
{
    vt_rng r = {0x74};
    float x[64];
    for (int i = 0; i < 64; i++) x[i] = (float)vt_uniform(&r, -2.0, 5.0);
    int64_t dx[2] = {8, 8};
    vn_tensor in = tens(VN_F32, 2, dx, x), out[3];
    VT_OK(run_op("DynamicQuantizeLinear", NULL, 0, &in, 1, out, 3));
    double lo = 0, hi = 0;
    for (int i = 0; i < 64; i++) lo = fmin(lo, x[i]), hi = fmax(hi, x[i]);
    double s = (hi - lo) / 255, zp = ref_round(clampd(-lo / s, 0, 255));
    float got_s = *(float *)out[1].data;
    VT_CHECK(fabs(got_s - s) <= 1e-6 * s, "scale %g, want %g", (double)got_s, s);
    VT_CHECK(fabs(*(uint8_t *)out[2].data - zp) <= 1, "zero point");
    VT_CHECK(out[1].desc.rank == 0 && out[2].desc.dtype == VN_U8, "scalar outputs");
    for (int i = 0; i < 64; i++) { /* f32 vs f64 quotients may land either side of a tie */
        double want = clampd(ref_round(x[i] / s) + zp, 0, 255);
        VT_CHECK(fabs(((uint8_t *)out[0].data)[i] - want) <= 1, "element %d", i);
    }
    for (int o = 0; o < 3; o++) free(out[o].data);
}

/* ---- ConvInteger / QLinearConv ------------------------------------------------------ */

enum { N = 2, C = 4, H = 5, W = 6, K = 4, G = 2, KH = 3, KW = 2, SH = 2, SW = 1, DH = 1, DW = 2 };
enum { PT = 1, PL = 0, PB = 2, PR = 1 };
enum { PH = H + PT + PB, PW = W + PL + PR };
enum { OH = (PH - ((KH - 1) * DH + 1)) / SH + 1, OW = (PW - ((KW - 1) * DW + 1)) / SW + 1 };

static const vn_attr conv_attrs[4] = {
    {.name = "pads", .type = VN_ATTR_INTS, .ints = (const int64_t[]){PT, PL, PB, PR}, .count = 4},
    {.name = "strides", .type = VN_ATTR_INTS, .ints = (const int64_t[]){SH, SW}, .count = 2},
    {.name = "dilations", .type = VN_ATTR_INTS, .ints = (const int64_t[]){DH, DW}, .count = 2},
    {.name = "group", .type = VN_ATTR_INT, .i = G}};

/* acc over an explicitly zero-point-padded copy of x (x's bytes as i8 when x_i8). */
static void ref_conv(const uint8_t *x, bool x_i8, int xzp, const int8_t *w, const int8_t *wzp,
                     int64_t *acc)
{
    static int pad[N][C][PH][PW];
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int i = 0; i < PH; i++)
                for (int j = 0; j < PW; j++) {
                    int h = i - PT, v = j - PL;
                    pad[n][c][i][j] = h >= 0 && h < H && v >= 0 && v < W
                                          ? (x_i8 ? (int8_t)x[((n * C + c) * H + h) * W + v]
                                                  : x[((n * C + c) * H + h) * W + v]) -
                                                xzp
                                          : 0;
                }
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    int64_t s = 0;
                    int g = k / (K / G);
                    for (int c = 0; c < C / G; c++)
                        for (int i = 0; i < KH; i++)
                            for (int j = 0; j < KW; j++)
                                s += (int64_t)pad[n][g * (C / G) + c][oh * SH + i * DH]
                                                 [ow * SW + j * DW] *
                                     (w[((k * (C / G) + c) * KH + i) * KW + j] - wzp[k]);
                    acc[((n * K + k) * OH + oh) * OW + ow] = s;
                }
}

static void conv_data(uint8_t *x, int8_t *w)
{
    vt_rng r = {0x75};
    for (int i = 0; i < N * C * H * W; i++) x[i] = (uint8_t)(vt_next(&r) >> 56);
    for (int i = 0; i < K * (C / G) * KH * KW; i++) w[i] = (int8_t)(vt_next(&r) >> 56);
}

/* ConvInteger against the reference: a per-channel w zero point with
 * different values (the scalar loops), one value in every channel (the
 * GEMM path: im2col rows x W^T on the int8 cube), and an i8 x. */
static void check_conv_integer(bool per_channel, bool x_i8)
{
    static uint8_t x[N * C * H * W];
    static int8_t w[K * (C / G) * KH * KW];
    static int64_t acc[N * K * OH * OW];
    conv_data(x, w);
    uint8_t xzp = x_i8 ? (uint8_t)(int8_t)-9 : 131;
    int8_t wzp[K] = {-4, 0, 17, -128};
    if (!per_channel) wzp[0] = wzp[1] = wzp[2] = wzp[3] = -7;
    int64_t dx[4] = {N, C, H, W}, dw[4] = {K, C / G, KH, KW}, dk[1] = {K};
    vn_dtype xdt = x_i8 ? VN_I8 : VN_U8;
    vn_tensor in[4] = {tens(xdt, 4, dx, x), tens(VN_I8, 4, dw, w), tens(xdt, 0, NULL, &xzp),
                       tens(VN_I8, 1, dk, wzp)};
    vn_tensor out;
    VT_OK(run_op("ConvInteger", conv_attrs, 4, in, 4, &out, 1));
    VT_CHECK(out.desc.dtype == VN_I32 && out.desc.dims[2] == OH && out.desc.dims[3] == OW,
             "output shape");
    ref_conv(x, x_i8, x_i8 ? (int8_t)xzp : xzp, w, wzp, acc);
    int bad = 0;
    for (int i = 0; i < N * K * OH * OW; i++) bad += ((int32_t *)out.data)[i] != acc[i];
    VT_CHECK(bad == 0, "per_channel %d x_i8 %d: %d of %d elements wrong", (int)per_channel,
             (int)x_i8, bad, N * K * OH * OW);
    free(out.data);
}

static void test_conv_integer(void)
{
    check_conv_integer(true, false);
    check_conv_integer(false, false);
    check_conv_integer(false, true);
}

static void test_qlinear_conv(void)
{
    static uint8_t x[N * C * H * W], yzp = 100;
    static int8_t w[K * (C / G) * KH * KW];
    static int64_t acc[N * K * OH * OW];
    conv_data(x, w);
    uint8_t xzp = 120;
    int8_t wzp[K] = {0, 0, 0, 0}; /* QLinearConv's w_zero_point: per channel, zeros */
    float xs = 0.5f, ws[K] = {0.25f, 0.125f, 0.0625f, 1.0f}, ys = 4.0f;
    int32_t b[K] = {1000, -37, 0, 5};
    int64_t dx[4] = {N, C, H, W}, dw[4] = {K, C / G, KH, KW}, dk[1] = {K};
    vn_tensor in[9] = {
        tens(VN_U8, 4, dx, x),      tens(VN_F32, 0, NULL, &xs), tens(VN_U8, 0, NULL, &xzp),
        tens(VN_I8, 4, dw, w),      tens(VN_F32, 1, dk, ws),    tens(VN_I8, 1, dk, wzp),
        tens(VN_F32, 0, NULL, &ys), tens(VN_U8, 0, NULL, &yzp), tens(VN_I32, 1, dk, b)};
    vn_tensor out;
    VT_OK(run_op("QLinearConv", conv_attrs, 4, in, 9, &out, 1));
    VT_CHECK(out.desc.dtype == VN_U8, "dtype %s", vn_dtype_name(out.desc.dtype));
    ref_conv(x, false, xzp, w, wzp, acc);
    int ties = 0;
    for (int i = 0; i < N * K * OH * OW; i++) {
        int k = (i / (OH * OW)) % K;
        double v = (double)(acc[i] + b[k]) * xs * ws[k] / ys; /* exact: powers of two */
        ties += v - floor(v) == 0.5;
        double want = clampd(ref_round(v) + yzp, 0, 255);
        VT_CHECK(((uint8_t *)out.data)[i] == want, "element %d: %d, want %g", i,
                 ((uint8_t *)out.data)[i], want);
    }
    VT_CHECK(ties > 0, "the case should contain ties");
    free(out.data);
}

/* ---- InstanceNormalization / GroupNormalization ------------------------------------- */

/* y over [n][groups][cg * S] with scale / bias per channel or per group. */
static void ref_norm(const float *x, int n, int c, int s, int groups, const float *sc,
                     const float *bi, bool per_group, double eps, double *y)
{
    int cg = c / groups, span = cg * s;
    for (int i = 0; i < n * groups; i++) {
        const float *p = x + (size_t)i * span;
        double m = 0, v = 0;
        for (int j = 0; j < span; j++) m += p[j];
        m /= span;
        for (int j = 0; j < span; j++) v += (p[j] - m) * (p[j] - m);
        v /= span;
        for (int j = 0; j < span; j++) {
            int g = i % groups, ch = g * cg + j / s, si = per_group ? g : ch;
            y[(size_t)i * span + j] = (p[j] - m) / sqrt(v + eps) * sc[si] + bi[si];
        }
    }
}

static void check_norm(const char *op, int groups, bool per_group, double eps)
{
    enum { NN = 2, CC = 6, S = 7 };
    vt_rng r = {0x76};
    float x[NN * CC * S], sc[CC], bi[CC];
    double want[NN * CC * S];
    vt_fill(&r, x, NN * CC * S, -3, 8);
    vt_fill(&r, sc, CC, -2, 2);
    vt_fill(&r, bi, CC, -1, 1);
    int64_t dx[3] = {NN, CC, S}, dp[1] = {per_group ? groups : CC};
    vn_attr a[2] = {{.name = "epsilon", .type = VN_ATTR_FLOAT, .f = eps},
                    {.name = "num_groups", .type = VN_ATTR_INT, .i = groups}};
    vn_tensor in[3] = {tens(VN_F32, 3, dx, x), tens(VN_F32, 1, dp, sc), tens(VN_F32, 1, dp, bi)};
    vn_tensor out;
    VT_OK(run_op(op, a, op[0] == 'I' ? 1 : 2, in, 3, &out, 1));
    ref_norm(x, NN, CC, S, groups, sc, bi, per_group, eps, want);
    for (int i = 0; i < NN * CC * S; i++)
        VT_CHECK(fabs(((float *)out.data)[i] - want[i]) <= 1e-5 * (1 + fabs(want[i])),
                 "%s groups %d element %d: %g, want %g", op, groups, i,
                 (double)((float *)out.data)[i], want[i]);
    free(out.data);
}

static void test_norms(void)
{
    check_norm("InstanceNormalization", 6, false, 1e-5);
    check_norm("GroupNormalization", 2, false, 1e-2); /* opset 21: scale per channel */
    check_norm("GroupNormalization", 3, true, 1e-5);  /* opset 18: scale per group */
    check_norm("GroupNormalization", 1, false, 0.5);
    float x[8] = {0}, s[4] = {1, 1, 1, 1};
    int64_t dx[3] = {1, 4, 2}, ds[1] = {4};
    vn_attr a = {.name = "num_groups", .type = VN_ATTR_INT, .i = 3};
    vn_tensor in[3] = {tens(VN_F32, 3, dx, x), tens(VN_F32, 1, ds, s), tens(VN_F32, 1, ds, s)};
    vn_tensor out;
    VT_CHECK(run_op("GroupNormalization", &a, 1, in, 3, &out, 1) == VN_ERR_INVALID_ARG, "3 | 4");
    VT_CONTAINS(vn_last_error(), "num_groups 3");
}

int main(void)
{
    VT_RUN(test_quantize_per_tensor);
    VT_RUN(test_quantize_tensor_edges);
    VT_RUN(test_quantize_axis_and_blocked);
    VT_RUN(test_dequantize);
    VT_RUN(test_dynamic_quantize);
    VT_RUN(test_conv_integer);
    VT_RUN(test_qlinear_conv);
    VT_RUN(test_norms);
    return vt_summary();
}
