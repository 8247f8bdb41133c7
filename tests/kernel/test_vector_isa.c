/*
 * test_vector_isa.c — the f32 kernel table of the active ISA (ctest runs this
 * once per VINCI_ISA) against double references, on plain arrays: every op,
 * lengths from 1 to 1000003, special values, in place; reductions; speed.
 */
#include <time.h>

#include "kernel/isa.h"
#include "kernel/vec_ref.h"
#include "vt.h"

static const int64_t vt_lengths[] = {1, 7, 31, 33, 4095, 1000003};

static void vt_inputs(vt_rng *rng, const vt_op *o, float *a, float *b, int64_t n)
{
    vt_fill(rng, a, (size_t)n, o->lo, o->hi);
    vt_fill(rng, b, (size_t)n, o->blo, o->bhi);
    for (int64_t i = 0; i < n && i < VT_NSPECIAL; i++) a[i] = vt_specials[i];
    /* b specials shifted so every pair of specials meets somewhere */
    for (int64_t i = 0; i < n && i < VT_NSPECIAL; i++)
        b[i] = vt_specials[(i * 7 + 3) % VT_NSPECIAL];
    /* a few tiny denominators and arguments near the op's interesting points */
    if (n > 40) a[VT_NSPECIAL] = 1e-20f, b[VT_NSPECIAL] = -3e-38f;
}

static void vt_run_op(const vn_isa_table *t, const vt_op *o, float *dst, const float *a,
                      const float *b, int64_t n)
{
    switch (vn_vop_kind_of(o->op)) {
    case VN_VOP_UNARY:
        t->unary[o->op](dst, a, n);
        break;
    case VN_VOP_BINARY:
        t->binary[o->op](dst, a, b, n);
        break;
    case VN_VOP_SCALAR:
        t->scalar[o->op](dst, a, (float)o->s, n);
        break;
    }
}

static void test_ops_against_double(void)
{
    const vn_isa_table *t = vn_isa_table_get();
    VT_CHECK(t->isa == vn_isa_active(), "table %d for active ISA %d", (int)t->isa,
             (int)vn_isa_active());
    int64_t nmax = 1000003;
    float *a = malloc(sizeof(float) * nmax), *b = malloc(sizeof(float) * nmax);
    float *d = malloc(sizeof(float) * nmax), *d2 = malloc(sizeof(float) * nmax);
    vt_rng rng = {0x5eed};
    for (int k = 0; k < VN_VOP_COUNT; k++) {
        const vt_op *o = &vt_ops[k];
        for (size_t li = 0; li < sizeof vt_lengths / sizeof vt_lengths[0]; li++) {
            int64_t n = vt_lengths[li];
            vt_inputs(&rng, o, a, b, n);
            vt_run_op(t, o, d, a, b, n);
            int64_t worst = 0, at = 0;
            for (int64_t i = 0; i < n; i++) {
                float want = (float)o->ref(
                    a[i], vn_vop_kind_of(o->op) == VN_VOP_SCALAR ? (double)(float)o->s : b[i]);
                int64_t u = vt_ulps(d[i], want);
                /* a subnormal result carries fewer bits: products like
                 * silu's x * e^x lose up to |x| steps of 2^-149 */
                if (fabsf(want) < 1.17549435e-38f * (1.0 + fabs(a[i])))
                    u -= 2 * (int64_t)ceil(fmin(fabs(a[i]), 1e6));
                if (u > worst) worst = u, at = i;
            }
            VT_CHECK(
                worst <= o->ulps, "%s n=%lld: %lld ulps at [%lld] a=%.9g b=%.9g got %.9g want %.9g",
                vn_vop_name(o->op), (long long)n, (long long)worst, (long long)at, a[at], b[at],
                d[at], o->ref(a[at], vn_vop_kind_of(o->op) == VN_VOP_SCALAR ? o->s : b[at]));
            /* in place gives the same bits */
            memcpy(d2, a, sizeof(float) * (size_t)n);
            vt_run_op(t, o, d2, d2, b, n);
            VT_CHECK(memcmp(d, d2, sizeof(float) * (size_t)n) == 0 || o->op == VN_VOP_ADD + 100,
                     "%s n=%lld: in-place result differs", vn_vop_name(o->op), (long long)n);
        }
    }
    free(a), free(b), free(d), free(d2);
}

/* ln near 1 and exp near the overflow / underflow edges, densely. */
static void test_edges(void)
{
    const vn_isa_table *t = vn_isa_table_get();
    enum { N = 4096 };
    static float a[N], d[N];
    for (int i = 0; i < N; i++) a[i] = 0.9f + 0.2f * (float)i / N;
    t->unary[VN_VOP_LN](d, a, N);
    int64_t worst = 0;
    for (int i = 0; i < N; i++) {
        int64_t u = vt_ulps(d[i], (float)log(a[i]));
        worst = u > worst ? u : worst;
    }
    VT_CHECK(worst <= 2, "ln near 1: %lld ulps", (long long)worst);
    for (int i = 0; i < N; i++)
        a[i] = (i & 1) ? 88.0f + (float)i / N : -87.0f - 17.0f * (float)i / N;
    t->unary[VN_VOP_EXP](d, a, N);
    worst = 0;
    for (int i = 0; i < N; i++) {
        int64_t u = vt_ulps(d[i], (float)exp(a[i]));
        worst = u > worst ? u : worst;
    }
    VT_CHECK(worst <= 2, "exp at the edges: %lld ulps", (long long)worst);
    float sub[3] = {1e-45f, 1e-39f, 2e-38f}, out[3];
    t->unary[VN_VOP_LN](out, sub, 3);
    for (int i = 0; i < 3; i++)
        VT_CHECK(vt_ulps(out[i], (float)log(sub[i])) <= 2, "ln(%g) = %g", sub[i], out[i]);
    float neg[2] = {-1.0f, -1e-30f};
    t->unary[VN_VOP_LN](out, neg, 2);
    VT_CHECK(isnan(out[0]) && isnan(out[1]), "ln(negative) is NaN");
    t->unary[VN_VOP_SQRT](out, neg, 2);
    VT_CHECK(isnan(out[0]) && isnan(out[1]), "sqrt(negative) is NaN");
}

enum { NT_N = 1100 };
static float nt_a[NT_N + 16], nt_b[NT_N + 16], nt_want[NT_N + 16], nt_got[NT_N + 16];

/* Random operands with the special values from offset `off` on. */
static void nt_inputs(vt_rng *rng, int off)
{
    vt_fill(rng, nt_a, NT_N + 16, -4, 4), vt_fill(rng, nt_b, NT_N + 16, -4, 4);
    for (int i = 0; i < VT_NSPECIAL; i++)
        nt_a[off + i] = vt_specials[i], nt_b[off + i] = vt_specials[(i * 7 + 3) % VT_NSPECIAL];
}

/* The plain and the streamed result of one case, n elements from `off`. */
static void nt_compare(const char *what, int op, int off, int64_t n)
{
    VT_CHECK(memcmp(nt_want + off, nt_got + off, (size_t)n * 4) == 0,
             "op %d%s: streamed kernel differs (offset %d, n %lld)", op, what, off, (long long)n);
}

/* The streamed kernels (*_nt: non-temporal stores from registers) give the
 * regular kernels' bits, special values included, for start offsets within
 * a 64-byte line (the plain head stores) and lengths with and without a
 * tail; every op with one is covered. */
static void test_streamed_kernels(void)
{
    const vn_isa_table *t = vn_isa_table_get();
    vt_rng rng = {77};
    int covered = 0;
    for (int op = 0; op < VN_VOP_COUNT; op++) {
        vn_vop_kind kind = vn_vop_kind_of((vn_vop)op);
        bool has = kind == VN_VOP_UNARY    ? t->unary_nt[op] != NULL
                   : kind == VN_VOP_BINARY ? t->binary_nt[op] != NULL
                                           : t->scalar_nt[op] != NULL;
        covered += has;
        for (int off = 0; has && off < 16; off += 3)
            for (int64_t n = 1; n <= NT_N; n = n * 3 + 1) {
                nt_inputs(&rng, off);
                float *w = nt_want + off, *g = nt_got + off;
                const float *pa = nt_a + off, *pb = nt_b + off;
                if (kind == VN_VOP_UNARY)
                    t->unary[op](w, pa, n), t->unary_nt[op](g, pa, n);
                else if (kind == VN_VOP_BINARY)
                    t->binary[op](w, pa, pb, n), t->binary_nt[op](g, pa, pb, n);
                else
                    t->scalar[op](w, pa, -0.75f, n), t->scalar_nt[op](g, pa, -0.75f, n);
                nt_compare("", op, off, n);
            }
    }
    VT_CHECK(covered >= 6, "only %d ops have streamed kernels", covered);
}

/* A binary op and a ReLU in registers (binary_relu_nt) = the op's kernel,
 * then k_relu. */
static void test_streamed_relu_pairs(void)
{
    const vn_isa_table *t = vn_isa_table_get();
    vt_rng rng = {78};
    VT_CHECK(t->binary_relu_nt[VN_VOP_ADD] != NULL, "no streamed ReLU-Add");
    for (int op = 0; op < VN_VOP_COUNT; op++)
        for (int off = 0; t->binary_relu_nt[op] && off < 16; off += 5)
            for (int64_t n = 1; n <= NT_N; n = n * 3 + 1) {
                nt_inputs(&rng, off);
                float *w = nt_want + off;
                t->binary[op](w, nt_a + off, nt_b + off, n);
                t->unary[VN_VOP_RELU](w, w, n);
                t->binary_relu_nt[op](nt_got + off, nt_a + off, nt_b + off, n);
                nt_compare(" + relu", op, off, n);
            }
}

/* exp over its whole range, densely (every 2^-12 step from -110 to 90, the
 * underflow to subnormals and 0, the overflow to inf), and its special
 * values, against double; also through the masked tail (odd lengths). */
static void test_exp_sweep(void)
{
    const vn_isa_table *t = vn_isa_table_get();
    int64_t n = 200 * 4096 + 7;
    float *a = malloc(sizeof(float) * (size_t)n), *d = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) a[i] = -110.0f + (float)i / 4096.0f;
    t->unary[VN_VOP_EXP](d, a, n);
    int64_t worst = 0, at = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t u = vt_ulps(d[i], (float)exp((double)a[i]));
        if (u > worst) worst = u, at = i;
    }
    VT_CHECK(worst <= 2, "exp sweep: %lld ulps at %.9g (got %.9g want %.9g)", (long long)worst,
             a[at], d[at], (float)exp((double)a[at]));
    float sp[9] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 88.7228f, 88.7229f, -103.97f, -1e30f};
    float out[9];
    for (int len = 1; len <= 9; len++) {
        t->unary[VN_VOP_EXP](out, sp, len);
        for (int i = 0; i < len; i++) {
            float want = (float)exp((double)sp[i]);
            VT_CHECK(isnan(sp[i]) ? isnan(out[i]) : vt_ulps(out[i], want) <= 2,
                     "exp(%g) = %g, want %g (n=%d)", sp[i], out[i], want, len);
        }
    }
    free(a), free(d);
}

static void test_reductions(void)
{
    const vn_isa_table *t = vn_isa_table_get();
    int64_t n = 1000003;
    float *a = malloc(sizeof(float) * n);
    vt_rng rng = {42};
    for (size_t li = 0; li < sizeof vt_lengths / sizeof vt_lengths[0]; li++) {
        int64_t m = vt_lengths[li];
        vt_fill(&rng, a, (size_t)m, -1.0, 1.0);
        double s = 0, sa = 0, mx = -INFINITY, mn = INFINITY;
        for (int64_t i = 0; i < m; i++) {
            s += a[i], sa += fabs(a[i]);
            mx = a[i] > mx ? a[i] : mx, mn = a[i] < mn ? a[i] : mn;
        }
        float got = t->reduce[VN_REDUCE_SUM](a, m);
        VT_CHECK(fabs(got - s) <= 1e-6 * sa + 1e-7, "sum n=%lld: %.9g vs %.9g", (long long)m, got,
                 s);
        VT_CHECK(t->reduce[VN_REDUCE_MAX](a, m) == (float)mx, "max n=%lld", (long long)m);
        VT_CHECK(t->reduce[VN_REDUCE_MIN](a, m) == (float)mn, "min n=%lld", (long long)m);
        if (m > 20) {
            a[m / 2] = NAN;
            VT_CHECK(isnan(t->reduce[VN_REDUCE_MAX](a, m)), "max propagates NaN n=%lld",
                     (long long)m);
            VT_CHECK(isnan(t->reduce[VN_REDUCE_MIN](a, m)), "min propagates NaN n=%lld",
                     (long long)m);
        }
    }
    /* a large constant sum: naive f32 accumulation would stall at 2^24 */
    for (int64_t i = 0; i < n; i++) a[i] = 1.0f;
    VT_CHECK(t->reduce[VN_REDUCE_SUM](a, n) == (float)n, "sum of ones %.1f",
             t->reduce[VN_REDUCE_SUM](a, n));
    free(a);
}

static double vt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Not a pass/fail benchmark (machines are shared): prints the speed of the
 * kernels the fused element-wise path relies on. */
static void test_speed_report(void)
{
    const vn_isa_table *t = vn_isa_table_get();
    enum { N = 1 << 20, REPS = 20 };
    float *a = malloc(sizeof(float) * N), *b = malloc(sizeof(float) * N),
          *d = malloc(sizeof(float) * N);
    vt_rng rng = {7};
    vt_fill(&rng, a, N, -10, 10);
    vt_fill(&rng, b, N, -10, 10);
    t->binary[VN_VOP_ADD](d, a, b, N);
    double t0 = vt_now();
    for (int r = 0; r < REPS; r++) t->binary[VN_VOP_ADD](d, a, b, N);
    double t1 = vt_now();
    for (int r = 0; r < REPS; r++) t->unary[VN_VOP_EXP](d, a, N);
    double t2 = vt_now();
    double add = (double)N * REPS / (t1 - t0), ex = (double)N * REPS / (t2 - t1);
    printf("speed %s: Add %.2f Gelem/s (%.1f GB/s), Exp %.2f Gelem/s (%.1f GB/s)\n",
           vn_isa_name(t->isa), add * 1e-9, add * 12e-9, ex * 1e-9, ex * 8e-9);
    VT_CHECK(add > 0 && ex > 0, "timing ran");
    free(a), free(b), free(d);
}

int main(void)
{
    VT_RUN(test_ops_against_double);
    VT_RUN(test_edges);
    VT_RUN(test_streamed_kernels);
    VT_RUN(test_streamed_relu_pairs);
    VT_RUN(test_exp_sweep);
    VT_RUN(test_reductions);
    VT_RUN(test_speed_report);
    return vt_summary();
}
