/*
 * test_signal.c — DFT, STFT, the window functions and MelWeightMatrix
 * against references written here in double from the ONNX definitions
 * (each twiddle computed afresh with cos/sin of the full angle).
 */
#include "test_shape_ops_harness.h"

static const double TWO_PI = 6.283185307179586476925286766559;

static uint32_t seed = 777;
static double rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (double)(float)((double)(seed >> 8) / (double)(1u << 24) * 2.0 - 1.0);
}

/* Largest |got - want| over n values. */
static double err(const vn_tensor *t, const double *want, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(th_at(t, i) - want[i]));
    return e;
}

/* Reference DFT along dim 1 of x [outer=A, L, inner=C, ch]; n points (zero
 * padded / truncated), nout outputs, sign -1 forward / +1 inverse (scaled). */
static void ref_dft(const double *x, int64_t A, int64_t L, int64_t C, int64_t ch, int64_t n,
                    int64_t nout, int sign, double *y)
{
    for (int64_t a = 0; a < A; a++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t k = 0; k < nout; k++) {
                double sr = 0, si = 0;
                for (int64_t t = 0; t < n && t < L; t++) {
                    double re = x[((a * L + t) * C + c) * ch];
                    double im = ch == 2 ? x[((a * L + t) * C + c) * ch + 1] : 0;
                    double ang = sign * TWO_PI * (double)(k * t) / (double)n;
                    sr += re * cos(ang) - im * sin(ang);
                    si += re * sin(ang) + im * cos(ang);
                }
                double s = sign > 0 ? 1.0 / (double)n : 1.0;
                y[((a * nout + k) * C + c) * 2] = sr * s;
                y[((a * nout + k) * C + c) * 2 + 1] = si * s;
            }
}

static vn_tensor scalar_i64(int64_t v)
{
    double d = (double)v;
    return th_from(VN_I64, 0, NULL, &d);
}

static void test_dft_forward_inverse(void)
{
    int64_t xd[4] = {2, 7, 3, 2};
    double x[84], want[2 * 8 * 3 * 2];
    for (int i = 0; i < 84; i++) x[i] = rnd();
    for (int mode = 0; mode < 4; mode++) {
        /* 0: forward n 8 (padded); 1: inverse n 5 (truncated); 2: onesided n 7; 3: axis attr */
        int64_t n = mode == 0 ? 8 : mode == 1 ? 5 : 7;
        vn_tensor in[3] = {th_from(VN_F32, 4, xd, x), scalar_i64(n),
                           scalar_i64(mode == 3 ? -3 : 1)};
        vn_attr a[2] = {TH_INT("inverse", mode == 1), TH_INT("onesided", mode == 2)};
        vn_attr a3[1] = {TH_INT("axis", 1)};
        vn_attrs at = {a, 2}, at3 = {a3, 1};
        vn_tensor out[1];
        VT_OK(th_op("DFT", in, mode == 3 ? 1 : 3, true, mode == 3 ? &at3 : &at, out, 1));
        int64_t nout = mode == 2 ? n / 2 + 1 : n;
        ref_dft(x, 2, 7, 3, 2, n, nout, mode == 1 ? 1 : -1, want);
        VT_CHECK(out[0].desc.dims[1] == nout && out[0].desc.dims[3] == 2, "mode %d shape", mode);
        VT_CHECK(err(&out[0], want, 2 * nout * 6) < 1e-5, "mode %d error %g", mode,
                 err(&out[0], want, 2 * nout * 6));
        th_free(out, 1);
        th_free(in, 3);
    }
}

static void test_dft_real_and_irfft(void)
{
    int64_t xd[3] = {2, 10, 1};
    double x[20], want[2 * 10 * 2];
    for (int i = 0; i < 20; i++) x[i] = rnd();
    vn_tensor in[3] = {th_from(VN_F32, 3, xd, x), {.desc = {.rank = -1}}, scalar_i64(-2)};
    vn_attr a[1] = {TH_INT("onesided", 1)};
    vn_attrs at = {a, 1};
    vn_tensor spec[1], back[1];
    VT_OK(th_op("DFT", in, 3, true, &at, spec, 1));
    ref_dft(x, 2, 10, 1, 1, 10, 6, -1, want);
    VT_CHECK(spec[0].desc.dims[1] == 6 && err(&spec[0], want, 24) < 1e-5, "rfft");
    /* irfft of the half spectrum gives the signal back (length 2 * (6 - 1)) */
    vn_attr ai[2] = {TH_INT("onesided", 1), TH_INT("inverse", 1)};
    vn_attrs ati = {ai, 2};
    vn_tensor in2[3] = {spec[0], {.desc = {.rank = -1}}, in[2]};
    VT_OK(th_op("DFT", in2, 3, true, &ati, back, 1));
    VT_CHECK(back[0].desc.dims[1] == 10 && back[0].desc.dims[2] == 1 && err(&back[0], x, 20) < 1e-5,
             "irfft round trip %g", err(&back[0], x, 20));
    th_free(back, 1);
    th_free(spec, 1);
    th_free(in, 3);
    int64_t bad[2] = {4, 3};
    vn_tensor b[1] = {th_make(VN_F32, 2, bad)};
    VT_CHECK(th_op("DFT", b, 1, true, NULL, spec, 1) == VN_ERR_SHAPE, "last dim 3 rejected");
    th_free(b, 1);
}

static void test_stft(void)
{
    int64_t sd[3] = {2, 40, 1}, wl = 12;
    double s[80], w[12];
    for (int i = 0; i < 80; i++) s[i] = rnd();
    for (int i = 0; i < 12; i++) w[i] = 0.5 + 0.04 * i;
    vn_tensor in[3] = {th_from(VN_F32, 3, sd, s), scalar_i64(5), th_from(VN_F32, 1, &wl, w)};
    vn_tensor out[1];
    VT_OK(th_op("STFT", in, 3, true, NULL, out, 1));
    int64_t frames = 1 + (40 - 12) / 5, bins = 7;
    VT_CHECK(out[0].desc.dims[1] == frames && out[0].desc.dims[2] == bins, "stft shape");
    double e = 0;
    for (int64_t b = 0; b < 2; b++)
        for (int64_t f = 0; f < frames; f++) {
            double fr[12], y[14];
            for (int t = 0; t < 12; t++) fr[t] = s[b * 40 + f * 5 + t] * w[t];
            ref_dft(fr, 1, 12, 1, 1, 12, bins, -1, y);
            for (int64_t k = 0; k < 2 * bins; k++)
                e = fmax(e, fabs(th_at(&out[0], (b * frames + f) * bins * 2 + k) - y[k]));
        }
    VT_CHECK(e < 1e-5, "stft error %g", e);
    th_free(out, 1);
    th_free(in, 3);
}

static void test_windows(void)
{
    static const char *ops[3] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
    for (int op = 0; op < 3; op++)
        for (int periodic = 0; periodic < 2; periodic++) {
            vn_tensor in[1] = {scalar_i64(9)}, out[1];
            vn_attr a[1] = {TH_INT("periodic", periodic)};
            vn_attrs at = {a, 1};
            VT_OK(th_op(ops[op], in, 1, true, &at, out, 1));
            double e = 0, N = periodic ? 9 : 8;
            for (int i = 0; i < 9; i++) {
                double want =
                    op == 0   ? pow(sin(M_PI * i / N), 2)
                    : op == 1 ? 0.54347826086956521 - 0.45652173913043478 * cos(TWO_PI * i / N)
                              : 0.42 - 0.5 * cos(TWO_PI * i / N) + 0.08 * cos(2 * TWO_PI * i / N);
                e = fmax(e, fabs(th_at(&out[0], i) - want));
            }
            VT_CHECK(out[0].desc.dims[0] == 9 && e < 1e-6, "%s periodic %d error %g", ops[op],
                     periodic, e);
            th_free(out, 1);
            th_free(in, 1);
        }
}

static void test_mel(void)
{
    double v[5] = {6, 32, 8000, 100, 3500};
    vn_tensor in[5];
    for (int i = 0; i < 5; i++) in[i] = th_from(i < 3 ? VN_I32 : VN_F32, 0, NULL, &v[i]);
    vn_tensor out[1];
    VT_OK(th_op("MelWeightMatrix", in, 5, true, NULL, out, 1));
    VT_CHECK(out[0].desc.dims[0] == 17 && out[0].desc.dims[1] == 6, "mel shape");
    /* filter edges: mel-spaced points, floor((n + 1) * hz / rate) */
    double lo = 2595 * log10(1 + 100 / 700.0), hi = 2595 * log10(1 + 3500 / 700.0);
    int64_t pt[8];
    for (int i = 0; i < 8; i++)
        pt[i] = (int64_t)floor(33 * 700 * (pow(10, (lo + i * (hi - lo) / 8) / 2595) - 1) / 8000);
    double e = 0;
    for (int64_t m = 0; m < 6; m++)
        for (int64_t j = 0; j < 17; j++) {
            double want = 0;
            if (j >= pt[m] && j <= pt[m + 1])
                want = pt[m + 1] == pt[m] ? 1 : (double)(j - pt[m]) / (double)(pt[m + 1] - pt[m]);
            if (j >= pt[m + 1] && j < pt[m + 2])
                want = (double)(pt[m + 2] - j) / (double)(pt[m + 2] - pt[m + 1]);
            e = fmax(e, fabs(th_at(&out[0], j * 6 + m) - want));
        }
    VT_CHECK(e < 1e-6, "mel error %g", e);
    th_free(out, 1);
    VT_CHECK(th_op("MelWeightMatrix", in, 5, false, NULL, out, 1) == VN_ERR_UNSUPPORTED,
             "inputs must be constant");
    th_free(in, 5);
}

int main(void)
{
    VT_RUN(test_dft_forward_inverse);
    VT_RUN(test_dft_real_and_irfft);
    VT_RUN(test_stft);
    VT_RUN(test_windows);
    VT_RUN(test_mel);
    return vt_summary();
}
