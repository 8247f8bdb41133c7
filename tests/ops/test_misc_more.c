/*
 * test_misc_more.c — CumProd, Det, MeanVarianceNormalization,
 * RotaryEmbedding, Unique, TensorScatter, Scatter, BitShift and Swish
 * against references written here from the ONNX definitions.
 */
#include "test_shape_ops_harness.h"

static uint32_t seed = 99;
static double rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (double)(float)((double)(seed >> 8) / (double)(1u << 24) * 2.0 - 1.0);
}

static void test_cumprod(void)
{
    int64_t xd[2] = {2, 3}, ax = 1;
    double v[6] = {1, 2, 3, 4, 5, 6};
    vn_tensor in[2] = {th_from(VN_F32, 2, xd, v), th_ints(1, &ax)}, out[1];
    static const double want[4][6] = {
        {1, 2, 6, 4, 20, 120}, {1, 1, 2, 1, 4, 20}, {6, 6, 3, 120, 30, 6}, {6, 3, 1, 30, 6, 1}};
    for (int m = 0; m < 4; m++) {
        vn_attr a[] = {TH_INT("exclusive", m & 1), TH_INT("reverse", m >> 1)};
        vn_attrs at = {a, 2};
        VT_OK(th_op("CumProd", in, 2, true, &at, out, 1));
        bool ok = true;
        for (int i = 0; i < 6; i++) ok &= th_at(&out[0], i) == want[m][i];
        VT_CHECK(ok, "cumprod mode %d", m);
        th_free(out, 1);
    }
    in[0].desc.dtype = VN_I32;
    for (int i = 0; i < 6; i++) th_set(&in[0], i, v[i] * 1000);
    VT_OK(th_op("CumProd", in, 2, true, NULL, out, 1));
    /* 4000 * 5000 * 6000 = 1.2e11 wraps in int32 */
    VT_CHECK(th_at(&out[0], 5) == (double)(int32_t)(uint32_t)(120000000000ull & 0xffffffffu),
             "i32 wraps");
    th_free(out, 1);
    th_free(in, 2);
}

static void test_det(void)
{
    int64_t xd[3] = {3, 3, 3};
    double v[27];
    for (int i = 0; i < 27; i++) v[i] = rnd();
    for (int i = 0; i < 9; i++) v[18 + i] = (i % 3) + 1; /* singular: equal rows */
    vn_tensor in[1] = {th_from(VN_F32, 3, xd, v)}, out[1];
    VT_OK(th_op("Det", in, 1, false, NULL, out, 1));
    VT_CHECK(out[0].desc.rank == 1 && out[0].desc.dims[0] == 3, "det shape");
    for (int b = 0; b < 2; b++) {
        const double *m = v + 9 * b;
        double want = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
                      m[2] * (m[3] * m[7] - m[4] * m[6]);
        VT_CHECK(fabs(th_at(&out[0], b) - want) < 1e-6, "det %d: %g vs %g", b, th_at(&out[0], b),
                 want);
    }
    VT_CHECK(fabs(th_at(&out[0], 2)) < 1e-6, "singular det");
    th_free(out, 1);
    th_free(in, 1);
}

static void test_mvn(void)
{
    int64_t xd[4] = {2, 3, 2, 2};
    double v[24];
    for (int i = 0; i < 24; i++) v[i] = rnd() * 3 + i % 5;
    vn_tensor in[1] = {th_from(VN_F32, 4, xd, v)}, out[1];
    VT_OK(th_op("MeanVarianceNormalization", in, 1, false, NULL, out, 1));
    double e = 0;
    for (int c = 0; c < 3; c++) { /* default axes 0, 2, 3: one group per channel */
        double s = 0, q = 0;
        for (int n = 0; n < 2; n++)
            for (int k = 0; k < 4; k++) s += v[n * 12 + c * 4 + k];
        s /= 8;
        for (int n = 0; n < 2; n++)
            for (int k = 0; k < 4; k++) q += pow(v[n * 12 + c * 4 + k] - s, 2);
        double sd = sqrt(q / 8) + 1e-9;
        for (int n = 0; n < 2; n++)
            for (int k = 0; k < 4; k++) {
                int i = n * 12 + c * 4 + k;
                e = fmax(e, fabs(th_at(&out[0], i) - (v[i] - s) / sd));
            }
    }
    VT_CHECK(e < 1e-5, "mvn error %g", e);
    th_free(out, 1);
    th_free(in, 1);
}

/* Modes: bit 0 interleaved, bit 1 3-D input; mode 1 rotates half of each head. */
static void test_rotary(void)
{
    for (int mode = 0; mode < 4; mode++) {
        bool inter = mode & 1, three_d = mode & 2;
        int64_t B = 2, H = 2, S = 3, D = 8, rot = mode == 1 ? 4 : 8, half = rot / 2, P = 7;
        int64_t x4[4] = {B, H, S, D}, x3[3] = {B, S, H * D}, cd[2] = {P, half}, pd[2] = {B, S};
        double x[96], c[28], s[28], pid[6] = {0, 3, 6, 1, 2, 5};
        for (int i = 0; i < 96; i++) x[i] = rnd();
        for (int i = 0; i < P * half; i++) c[i] = cos(0.3 * i), s[i] = sin(0.3 * i);
        vn_tensor in[4] = {three_d ? th_from(VN_F32, 3, x3, x) : th_from(VN_F32, 4, x4, x),
                           th_from(VN_F32, 2, cd, c), th_from(VN_F32, 2, cd, s),
                           th_from(VN_I64, 2, pd, pid)};
        vn_attr a[3] = {TH_INT("interleaved", inter),
                        TH_INT("rotary_embedding_dim", mode == 1 ? 4 : 0), TH_INT("num_heads", H)};
        vn_attrs at = {a, 3};
        vn_tensor out[1];
        VT_OK(th_op("RotaryEmbedding", in, 4, false, &at, out, 1));
        double e = 0;
        for (int64_t b = 0; b < B; b++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t q = 0; q < S; q++) {
                    int64_t o = three_d ? ((b * S + q) * H + h) * D : ((b * H + h) * S + q) * D;
                    int64_t row = (int64_t)pid[b * S + q];
                    for (int64_t d = 0; d < D; d++) {
                        double want = x[o + d];
                        if (d < rot) {
                            int64_t j = inter ? d / 2 : d % half;
                            bool second = inter ? d % 2 : d >= half;
                            double x1 = x[o + (inter ? 2 * j : j)];
                            double x2 = x[o + (inter ? 2 * j + 1 : j + half)];
                            double cc = c[row * half + j], ss = s[row * half + j];
                            want = second ? ss * x1 + cc * x2 : cc * x1 - ss * x2;
                        }
                        e = fmax(e, fabs(th_at(&out[0], o + d) - want));
                    }
                }
        VT_CHECK(e < 1e-6, "rotary mode %d error %g", mode, e);
        th_free(out, 1);
        pid[2] = 9; /* out of range */
        th_set(&in[3], 2, 9);
        VT_CHECK(th_op("RotaryEmbedding", in, 4, false, &at, out, 1) == VN_ERR_INVALID_ARG,
                 "position id out of range");
        th_free(out, 1);
        th_free(in, 4);
    }
}

static void test_unique(void)
{
    double v[6] = {2, 1, 1, 3, 4, 3};
    int64_t n = 6;
    vn_tensor in[1] = {th_from(VN_F32, 1, &n, v)}, out[4];
    vn_attr a[1] = {TH_INT("sorted", 0)};
    vn_attrs at = {a, 1};
    VT_OK(th_op("Unique", in, 1, true, &at, out, 4));
    static const double y[4] = {2, 1, 3, 4}, idx[4] = {0, 1, 3, 4}, inv[6] = {0, 1, 1, 2, 3, 2},
                        cnt[4] = {1, 2, 2, 1};
    bool ok = out[0].desc.dims[0] == 4 && out[2].desc.dims[0] == 6;
    for (int i = 0; ok && i < 4; i++)
        ok =
            th_at(&out[0], i) == y[i] && th_at(&out[1], i) == idx[i] && th_at(&out[3], i) == cnt[i];
    for (int i = 0; ok && i < 6; i++) ok = th_at(&out[2], i) == inv[i];
    VT_CHECK(ok, "unique unsorted (spec example 1)");
    th_free(out, 4);
    th_free(in, 1);
    /* spec example 4: slices along axis 1, sorted */
    int64_t xd[3] = {2, 4, 2};
    double x[16] = {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1};
    vn_tensor in2[1] = {th_from(VN_I32, 3, xd, x)};
    vn_attr a2[1] = {TH_INT("axis", -2)};
    vn_attrs at2 = {a2, 1};
    VT_OK(th_op("Unique", in2, 1, true, &at2, out, 4));
    static const double y2[12] = {0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1}, idx2[3] = {1, 0, 2},
                        inv2[4] = {1, 0, 2, 0}, cnt2[3] = {2, 1, 1};
    ok = out[0].desc.rank == 3 && out[0].desc.dims[1] == 3;
    for (int i = 0; ok && i < 12; i++) ok = th_at(&out[0], i) == y2[i];
    for (int i = 0; ok && i < 3; i++)
        ok = th_at(&out[1], i) == idx2[i] && th_at(&out[3], i) == cnt2[i];
    for (int i = 0; ok && i < 4; i++) ok = th_at(&out[2], i) == inv2[i];
    VT_CHECK(ok, "unique axis 1 sorted (spec example 4)");
    th_free(out, 4);
    VT_CHECK(th_op("Unique", in2, 1, false, &at2, out, 4) == VN_ERR_UNSUPPORTED, "needs constant");
    th_free(in2, 1);
}

static void test_tensorscatter(void)
{
    int64_t cd[3] = {2, 4, 3}, ud[3] = {2, 3, 3}, two = 2;
    double c[24], u[18], w[2] = {2, 0};
    for (int i = 0; i < 24; i++) c[i] = i;
    for (int i = 0; i < 18; i++) u[i] = 100 + i;
    for (int circ = 0; circ < 2; circ++) {
        vn_tensor in[3] = {th_from(VN_F32, 3, cd, c), th_from(VN_F32, 3, ud, u),
                           th_from(VN_I64, 1, &two, w)};
        vn_attr a[1] = {TH_STR("mode", circ ? "circular" : "linear")};
        vn_attrs at = {a, 1};
        vn_tensor out[1];
        vn_status st = th_op("TensorScatter", in, 3, false, &at, out, 1);
        if (!circ) {
            VT_CHECK(st == VN_ERR_INVALID_ARG, "linear write past the end"); /* 2 + 3 > 4 */
        } else {
            VT_OK(st);
            bool ok = true;
            for (int b = 0; b < 2; b++)
                for (int p = 0; p < 4; p++)
                    for (int k = 0; k < 3; k++) {
                        int s = ((p - (int)w[b]) % 4 + 4) % 4; /* update row landing at p */
                        double want = s < 3 ? u[(b * 3 + s) * 3 + k] : c[(b * 4 + p) * 3 + k];
                        ok &= th_at(&out[0], (b * 4 + p) * 3 + k) == want;
                    }
            VT_CHECK(ok, "circular scatter");
        }
        th_free(out, 1);
        th_free(in, 3);
    }
}

static void test_scatter_alias(void)
{
    int64_t dd[2] = {1, 5}, id[2] = {1, 2};
    double d[5] = {1, 2, 3, 4, 5}, ix[2] = {1, 3}, up[2] = {1.1, 2.1};
    vn_tensor in[3] = {th_from(VN_F32, 2, dd, d), th_from(VN_I64, 2, id, ix),
                       th_from(VN_F32, 2, id, up)},
              out[1];
    vn_attr a[1] = {TH_INT("axis", 1)};
    vn_attrs at = {a, 1};
    VT_OK(th_op("Scatter", in, 3, false, &at, out, 1));
    static const double want[5] = {1, 1.1, 3, 2.1, 5};
    bool ok = true;
    for (int i = 0; i < 5; i++) ok &= fabs(th_at(&out[0], i) - want[i]) < 1e-6;
    VT_CHECK(ok, "Scatter = ScatterElements");
    th_free(out, 1);
    th_free(in, 3);
}

static void test_bitshift_swish(void)
{
    int64_t n = 4;
    double x[4] = {16, 4, 1, 255}, y[4] = {1, 2, 3, 70};
    vn_dtype dts[4] = {VN_U8, VN_U16, VN_U32, VN_U64};
    for (int t = 0; t < 4; t++)
        for (int left = 0; left < 2; left++) {
            vn_tensor in[2] = {th_from(dts[t], 1, &n, x), th_from(dts[t], 1, &n, y)}, out[1];
            vn_attr a[1] = {TH_STR("direction", left ? "LEFT" : "RIGHT")};
            vn_attrs at = {a, 1};
            VT_OK(th_op("BitShift", in, 2, false, &at, out, 1));
            int bits = (int)vn_dtype_size(dts[t]) * 8;
            bool ok = true;
            for (int i = 0; i < 4; i++) {
                uint64_t a0 = (uint64_t)x[i], s = (uint64_t)y[i];
                uint64_t want = s >= 64 ? 0 : left ? a0 << s : a0 >> s;
                if (bits < 64) want &= (1ull << bits) - 1;
                ok &= (uint64_t)vn_cast_load_i64(dts[t], out[0].data, i) == want;
            }
            VT_CHECK(ok, "bitshift dtype %d left %d", t, left);
            th_free(out, 1);
            th_free(in, 2);
        }
    double sv[4] = {-3, -0.5, 0.25, 4}, alpha = 0.7;
    vn_tensor in[1] = {th_from(VN_F32, 1, &n, sv)}, out[1];
    vn_attr a[1] = {TH_FLOAT("alpha", alpha)};
    vn_attrs at = {a, 1};
    VT_OK(th_op("Swish", in, 1, false, &at, out, 1));
    double e = 0;
    for (int i = 0; i < 4; i++)
        e = fmax(e, fabs(th_at(&out[0], i) - sv[i] / (1 + exp(-alpha * sv[i]))));
    VT_CHECK(e < 1e-6, "swish error %g", e);
    th_free(out, 1);
    th_free(in, 1);
}

int main(void)
{
    VT_RUN(test_cumprod);
    VT_RUN(test_det);
    VT_RUN(test_mvn);
    VT_RUN(test_rotary);
    VT_RUN(test_unique);
    VT_RUN(test_tensorscatter);
    VT_RUN(test_scatter_alias);
    VT_RUN(test_bitshift_swish);
    return vt_summary();
}
