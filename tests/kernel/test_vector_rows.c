/*
 * test_vector_rows.c — the high-level vector APIs (vn_layernorm_rows,
 * vn_softmax_rows) through real launches, against double references, on the
 * active ISA (ctest runs this file once per ISA), in release and checked mode;
 * and the checked-mode errors (extent overflow, short gamma, bad dtype).
 *
 * Accuracy bounds (inputs in [-8, 8], gamma in [0.5, 2], beta in [-1, 1]):
 *   LayerNorm / RMSNorm f32: |y - ref| <= 1e-5 * max(1, |ref|), also for rows
 *     with a common offset of 3000 (the refined two-pass variance);
 *   Softmax f32: |y - ref| <= 4e-6 * ref (relative; x - max is rounded once
 *     and exp is <= 2 ulp); LogSoftmax f32: |y - ref| <= 4e-6 * max(1, |ref|);
 *   f16 / bf16: within 1 ulp of the reference rounded to the format (the f32
 *     result is rounded once).
 * Padding between rows (row_pitch > n) is never written.
 */
#include <math.h>
#include <stdlib.h>

#include "kernel/vec_kernel.h"

#define MAX_N     4112
#define MAX_ELEMS (3 * MAX_N)
#define SENTINEL  (-1024.0) /* exact in every format */

typedef struct rows_case {
    vn_dtype dtype;
    int64_t rows, n, pitch;
    bool in_place, has_beta, log_softmax;
    vn_norm_mode mode;
    double eps, offset;
} rows_case;

static float x_f[MAX_ELEMS], g_f[MAX_N], b_f[MAX_N];
static uint16_t x_h[MAX_ELEMS], y_h[MAX_ELEMS];
static float y_f[MAX_ELEMS];

/* Buffers: 0 src, 1 dst, 2 gamma, 3 beta (the body ignores what it does not use). */
static void norm_body(vn_core *c, vn_local *l, const void *ctx)
{
    const rows_case *k = ctx;
    vn_local dst = k->in_place ? l[0] : l[1];
    vn_local beta = k->has_beta ? l[3] : (vn_local){0};
    vn_layernorm_rows(c, dst, l[0], l[2], beta, k->rows, k->n, k->pitch, k->eps, k->mode);
}

static void softmax_body(vn_core *c, vn_local *l, const void *ctx)
{
    const rows_case *k = ctx;
    vn_softmax_rows(c, k->in_place ? l[0] : l[1], l[0], k->rows, k->n, k->pitch, k->log_softmax);
}

static void fill_inputs(const rows_case *k, vt_rng *r)
{
    int64_t total = k->rows * k->pitch;
    vt_fill(r, x_f, (size_t)total, -8.0, 8.0);
    for (int64_t i = 0; i < total; i++) x_f[i] += (float)k->offset;
    vt_fill(r, g_f, (size_t)k->n, 0.5, 2.0);
    vt_fill(r, b_f, (size_t)k->n, -1.0, 1.0);
    for (int64_t i = 0; i < total; i++) {
        /* Inputs exactly representable in the row's format, so the reference sees them. */
        if (k->dtype != VN_F32) vt_put(k->dtype, x_h, i, x_f[i]);
        if (k->dtype != VN_F32) x_f[i] = (float)vt_get(k->dtype, x_h, i);
        vt_put(k->dtype, k->dtype == VN_F32 ? (void *)y_f : (void *)y_h, i, SENTINEL);
    }
}

static void ref_norm(const rows_case *k, const float *x, double *y)
{
    double mean = 0.0, var = 0.0;
    if (k->mode == VN_NORM_LAYER) {
        for (int64_t i = 0; i < k->n; i++) mean += x[i];
        mean /= (double)k->n;
    }
    for (int64_t i = 0; i < k->n; i++) var += (x[i] - mean) * (x[i] - mean);
    double rstd = 1.0 / sqrt(var / (double)k->n + k->eps);
    for (int64_t i = 0; i < k->n; i++)
        y[i] = (x[i] - mean) * rstd * g_f[i] + (k->has_beta ? b_f[i] : 0.0);
}

static void ref_softmax(const rows_case *k, const float *x, double *y)
{
    double m = -INFINITY, s = 0.0;
    for (int64_t i = 0; i < k->n; i++) m = x[i] > m ? x[i] : m;
    for (int64_t i = 0; i < k->n; i++) s += exp(x[i] - m);
    for (int64_t i = 0; i < k->n; i++)
        y[i] = k->log_softmax ? (x[i] - m) - log(s) : exp(x[i] - m) / s;
}

/* Largest error of one row in the units of the bounds above (<= 1 passes). */
static double row_error(const rows_case *k, const void *out, int64_t base, const double *ref,
                        bool softmax)
{
    double worst = 0.0;
    for (int64_t i = 0; i < k->n; i++) {
        double got = vt_get(k->dtype, out, base + i), e;
        if (k->dtype == VN_F16 || k->dtype == VN_BF16) {
            /* Rounded directly (not through vt_store, whose f32 / i32 branches
             * gcc's -Warray-bounds flags on a 2-byte buffer under -O2). */
            uint16_t want =
                k->dtype == VN_F16 ? vn_f32_to_f16((float)ref[i]) : vn_f32_to_bf16((float)ref[i]);
            e = (double)vt_ulps16(((const uint16_t *)out)[base + i], want,
                                  k->dtype == VN_F16 ? vt_f16_nan : vt_bf16_nan);
        } else if (softmax && !k->log_softmax) {
            e = fabs(got - ref[i]) / (4e-6 * ref[i]);
        } else {
            double bound = (softmax ? 4e-6 : 1e-5) * fmax(1.0, fabs(ref[i]));
            e = fabs(got - ref[i]) / bound;
        }
        worst = e > worst ? e : worst;
    }
    return worst;
}

/* Runs one case in release and checked mode and compares every row. */
static void run_case(const rows_case *k, bool softmax)
{
    static double ref[MAX_N];
    vt_rng r = {(uint64_t)(k->n * 31 + k->rows + k->dtype * 7 + (softmax ? 1000 : 0))};
    for (int checked = 0; checked < 2; checked++) {
        fill_inputs(k, &r);
        int64_t total = k->rows * k->pitch;
        void *src = k->dtype == VN_F32 ? (void *)x_f : (void *)x_h;
        void *dst = k->dtype == VN_F32 ? (void *)y_f : (void *)y_h;
        vt_stage s = {4,
                      {{src, total, k->dtype},
                       {dst, total, k->dtype},
                       {g_f, k->n, VN_F32},
                       {b_f, k->n, VN_F32}},
                      softmax ? softmax_body : norm_body,
                      k};
        static float x_copy[MAX_ELEMS];
        memcpy(x_copy, x_f, sizeof(float) * (size_t)total);
        vn_kernel_counters cnt;
        VT_OK(vt_stage_run(&s, checked, &cnt));
        const void *out = k->in_place ? src : dst;
        double worst = 0.0;
        for (int64_t row = 0; row < k->rows; row++) {
            if (softmax)
                ref_softmax(k, x_copy + row * k->pitch, ref);
            else
                ref_norm(k, x_copy + row * k->pitch, ref);
            double e = row_error(k, out, row * k->pitch, ref, softmax);
            worst = e > worst ? e : worst;
            for (int64_t i = k->n; i < k->pitch && !k->in_place; i++)
                VT_CHECK(vt_get(k->dtype, dst, row * k->pitch + i) == SENTINEL,
                         "padding element %lld of row %lld written", (long long)i, (long long)row);
        }
        VT_CHECK(worst <= 1.0, "%s %s rows %lld n %lld: error %.3g of the bound",
                 softmax ? "softmax" : "layernorm", vn_dtype_name(k->dtype), (long long)k->rows,
                 (long long)k->n, worst);
        VT_CHECK(cnt.vector_elem_ops > 0, "no vector_elem_ops counted");
    }
}

static const vn_dtype row_dtypes[] = {VN_F32, VN_F16, VN_BF16};

static void test_layernorm_rows(void)
{
    /* n: one element, a partial lane group, a block plus a tail (2048-element blocks). */
    static const int64_t ns[] = {1, 37, 64, 4100};
    for (size_t d = 0; d < 3; d++)
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
            int64_t n = ns[j], pitch = n + (n % 16 ? 16 - n % 16 : 0) + (j % 2 ? 0 : 16);
            if (pitch > MAX_N) pitch = MAX_N;
            rows_case k = {row_dtypes[d], 3, n, pitch, false, true, false, VN_NORM_LAYER, 1e-5, 0};
            run_case(&k, false);
            k.mode = VN_NORM_RMS;
            k.has_beta = false;
            k.in_place = true;
            run_case(&k, false);
        }
}

/* A large common offset: naive E[x^2] - E[x]^2 in f32 would lose every digit. */
static void test_layernorm_offset(void)
{
    rows_case k = {VN_F32, 2, 1000, 1008, false, true, false, VN_NORM_LAYER, 1e-6, 3000.0};
    run_case(&k, false);
    k.in_place = true;
    run_case(&k, false);
}

static void test_softmax_rows(void)
{
    static const int64_t ns[] = {1, 37, 64, 4100};
    for (size_t d = 0; d < 3; d++)
        for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++)
            for (int lg = 0; lg < 2; lg++) {
                int64_t n = ns[j], pitch = n + (n % 16 ? 16 - n % 16 : 0);
                rows_case k = {row_dtypes[d], 3, n, pitch, false, false, lg, VN_NORM_LAYER, 0, 0};
                run_case(&k, true);
                k.in_place = true;
                run_case(&k, true);
            }
}

/* A NaN in a row makes that row NaN and leaves the other rows alone. */
static void nan_body(vn_core *c, vn_local *l, const void *ctx)
{
    (void)ctx;
    vn_softmax_rows(c, l[1], l[0], 2, 64, 64, false);
}

static void test_softmax_nan(void)
{
    for (int i = 0; i < 128; i++) x_f[i] = (float)(i % 7);
    x_f[10] = NAN;
    vt_stage s = {2, {{x_f, 128, VN_F32}, {y_f, 128, VN_F32}}, nan_body, NULL};
    VT_OK(vt_stage_run(&s, 1, NULL));
    int nan_first = 0, nan_second = 0;
    for (int i = 0; i < 64; i++) nan_first += isnan(y_f[i]) != 0;
    for (int i = 64; i < 128; i++) nan_second += isnan(y_f[i]) != 0;
    VT_CHECK(nan_first == 64 && nan_second == 0, "NaN rows: %d / %d", nan_first, nan_second);
}

static int bad_line; /* the line of the call a checked-mode test expects to fail */

/* ---- rows in place in global memory (vn_layernorm_rows_gm) ------------------ */

typedef struct gm_rows {
    const rows_case *k;
    vn_gm x, y, gamma;
    int64_t extra_rows; /* > 0: ask for rows past the tensors (the checked error) */
    bool softmax;
    bool bad_scratch; /* Softmax: an f16 scratch row (an error in every mode) */
} gm_rows;

static void gm_norm_kernel(vn_core *c, const void *p)
{
    const gm_rows *g = p;
    const rows_case *k = g->k;
    if (g->softmax) {
        vn_local scratch = vn_buf_new(c, VN_VECCALC, MAX_N, g->bad_scratch ? VN_F16 : VN_F32);
        bad_line = __LINE__ + 1;
        vn_softmax_rows_gm(c, g->y, 0, g->x, 0, scratch, k->rows + g->extra_rows, k->n, k->pitch,
                           k->log_softmax);
        return;
    }
    vn_local gamma = vn_buf_new(c, VN_VECCALC, MAX_N, VN_F32);
    vn_copy_pad_params one_row = {1, (uint32_t)(k->n * 4), 0, 0};
    vn_pad no_pad = {0};
    vn_copy_in_pad(c, gamma, g->gamma, 0, one_row, no_pad);
    vn_pipe_barrier(c);
    bad_line = __LINE__ + 1;
    vn_layernorm_rows_gm(c, g->y, 0, g->x, 0, gamma, (vn_local){0}, k->rows + g->extra_rows, k->n,
                         k->pitch, k->eps, k->mode);
}

/* f32 and f16 rows straight from global memory (LayerNorm, Softmax and
 * LogSoftmax), with cached and streamed (non-temporal) stores, against the
 * reference; padding never written; rows past the tensors named. */
static void test_rows_gm(void)
{
    static double ref[MAX_N];
    const vn_dtype dts[] = {VN_F32, VN_F16};
    for (int op = 0; op < 3; op++) /* LayerNorm, Softmax, LogSoftmax */
        for (int d = 0; d < 2; d++)
            for (int stream = 0; stream < 2; stream++) {
                rows_case k = {dts[d], 3,       4100,          MAX_N, false,
                               false,  op == 2, VN_NORM_LAYER, 1e-5,  0};
                vt_rng r = {(uint64_t)(77 + d * 2 + stream)};
                fill_inputs(&k, &r);
                int64_t total = k.rows * k.pitch;
                void *src = k.dtype == VN_F32 ? (void *)x_f : (void *)x_h;
                void *dst = k.dtype == VN_F32 ? (void *)y_f : (void *)y_h;
                gm_rows g = {&k,
                             vn_gm_make(src, k.dtype, total),
                             vn_gm_make(dst, k.dtype, total),
                             vn_gm_make(g_f, VN_F32, k.n),
                             0,
                             op > 0,
                             false};
                if (stream) g.y.hint = VN_CACHE_STREAM;
                for (int checked = 0; checked < 2; checked++) {
                    vn_launch_desc ld = {gm_norm_kernel, "gm_norm", 1, &g, checked, 0};
                    VT_OK(vn_launch(vt_dev(), &ld, NULL));
                }
                double worst = 0.0;
                for (int64_t row = 0; row < k.rows; row++) {
                    if (op)
                        ref_softmax(&k, x_f + row * k.pitch, ref);
                    else
                        ref_norm(&k, x_f + row * k.pitch, ref);
                    double e = row_error(&k, dst, row * k.pitch, ref, op > 0);
                    worst = e > worst ? e : worst;
                    for (int64_t i = k.n; i < k.pitch; i++)
                        VT_CHECK(vt_get(k.dtype, dst, row * k.pitch + i) == SENTINEL,
                                 "padding element %lld of row %lld written", (long long)i,
                                 (long long)row);
                }
                VT_CHECK(worst <= 1.0, "in place op %d %s stream %d: error %.3g of the bound", op,
                         vn_dtype_name(k.dtype), stream, worst);
                /* a fourth row lies past both tensors: named, in checked mode */
                g.extra_rows = 1;
                vn_launch_desc ld = {gm_norm_kernel, "gm_norm", 1, &g, 1, 0};
                vn_status st = vn_launch(vt_dev(), &ld, NULL);
                VT_FAILS_AT(st, op ? "vn_softmax_rows_gm" : "vn_layernorm_rows_gm",
                            "test_vector_rows.c", bad_line);
                VT_CONTAINS(vn_last_error(), "out of bounds");
                if (!op) continue;
                g.extra_rows = 0, g.bad_scratch = true; /* refused in release mode too */
                ld.checked = 0;
                st = vn_launch(vt_dev(), &ld, NULL);
                VT_FAILS_AT(st, "vn_softmax_rows_gm", "test_vector_rows.c", bad_line);
                VT_CONTAINS(vn_last_error(), "scratch is f16, not f32");
            }
}

/* ---- checked mode errors ----------------------------------------------------- */

/* Three rows of 64 read from a local of two rows. */
static void softmax_overflow_body(vn_core *c, vn_local *l, const void *ctx)
{
    (void)ctx;
    bad_line = __LINE__ + 1;
    vn_softmax_rows(c, l[1], l[0], 3, 64, 64, false);
}

/* The rows fit, the row pitch pushes the last row past the end of dst. */
static void norm_overflow_body(vn_core *c, vn_local *l, const void *ctx)
{
    (void)ctx;
    bad_line = __LINE__ + 1;
    vn_layernorm_rows(c, l[1], l[1], l[2], (vn_local){0}, 2, 64, 96, 1e-5, VN_NORM_LAYER);
}

/* gamma holds fewer than n elements. */
static void short_gamma_body(vn_core *c, vn_local *l, const void *ctx)
{
    (void)ctx;
    bad_line = __LINE__ + 1;
    vn_layernorm_rows(c, l[1], l[0], l[3], (vn_local){0}, 1, 64, 64, 1e-5, VN_NORM_RMS);
}

/* i32 rows: not an instruction of this dtype, in release mode too. */
static void bad_dtype_body(vn_core *c, vn_local *l, const void *ctx)
{
    (void)ctx;
    bad_line = __LINE__ + 1;
    vn_softmax_rows(c, vn_local_as(l[1], VN_I32), vn_local_as(l[0], VN_I32), 1, 8, 8, true);
}

static void test_checked_errors(void)
{
    static float a[128], b[128], g[64], g_short[32];
    for (int i = 0; i < 128; i++) a[i] = b[i] = (float)i / 64.0f;
    for (int i = 0; i < 64; i++) g[i] = 1.0f;
    struct {
        vt_body_fn body;
        const char *call;
        int checked;
    } cases[] = {
        {softmax_overflow_body, "vn_softmax_rows", 1}, {norm_overflow_body, "vn_layernorm_rows", 1},
        {short_gamma_body, "vn_layernorm_rows", 1},    {bad_dtype_body, "vn_softmax_rows", 1},
        {bad_dtype_body, "vn_softmax_rows", 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        vt_stage s = {4,
                      {{a, 128, VN_F32}, {b, 128, VN_F32}, {g, 64, VN_F32}, {g_short, 32, VN_F32}},
                      cases[k].body,
                      NULL};
        vn_status st = vt_stage_run(&s, cases[k].checked, NULL);
        printf("  expected error: %s\n", vn_last_error());
        VT_FAILS_AT(st, cases[k].call, "test_vector_rows.c", bad_line);
    }
}

int main(void)
{
    VT_RUN(test_layernorm_rows);
    VT_RUN(test_layernorm_offset);
    VT_RUN(test_rows_gm);
    VT_RUN(test_softmax_rows);
    VT_RUN(test_softmax_nan);
    VT_RUN(test_checked_errors);
    return vt_summary();
}
