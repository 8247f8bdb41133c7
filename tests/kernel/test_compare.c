/*
 * test_compare.c — Compare / CompareScalar to a bit mask (all modes, f32 f16
 * bf16 i32, NaN), Select / SelectScalar by a bit mask, and the length rule.
 */
#include "kernel/vec_kernel.h"

#define N 512 /* a multiple of 256 bytes for every dtype */

typedef struct cmp_ctx {
    vn_cmp cmp;
    int scalar; /* 0: tensor-tensor */
    double s;
    int64_t n;
} cmp_ctx;

static int bad_line;

static void cmp_body(vn_core *c, vn_local *l, const void *p)
{
    const cmp_ctx *k = p;
    if (k->scalar) {
        bad_line = __LINE__ + 1;
        vn_compare_scalar(c, l[0], l[1], k->s, k->cmp, k->n);
    } else {
        bad_line = __LINE__ + 1;
        vn_compare(c, l[0], l[1], l[2], k->cmp, k->n);
    }
}

static bool ref_cmp(vn_cmp c, double a, double b)
{
    switch (c) {
    case VN_CMP_LT:
        return a < b;
    case VN_CMP_GT:
        return a > b;
    case VN_CMP_GE:
        return a >= b;
    case VN_CMP_LE:
        return a <= b;
    case VN_CMP_EQ:
        return a == b;
    default:
        return a != b;
    }
}

static void fill(vt_rng *rng, vn_dtype d, void *p, int n)
{
    for (int i = 0; i < n; i++) {
        double v = (double)(int)(vt_next(rng) % 7) - 3; /* many equal pairs */
        if (d != VN_I32 && i % 61 == 5) v = NAN;
        vt_put(d, p, i, v);
    }
}

static void test_compare_all_modes(void)
{
    static const vn_dtype ds[] = {VN_F32, VN_F16, VN_BF16, VN_I32};
    static uint8_t a[N * 4], b[N * 4], bits[N / 8];
    vt_rng rng = {3};
    for (size_t di = 0; di < 4; di++)
        for (int cmp = 0; cmp <= VN_CMP_NE; cmp++)
            for (int scalar = 0; scalar < 2; scalar++) {
                vn_dtype d = ds[di];
                int n = (int)(N * 4 / vn_dtype_size(d)) / 2;
                fill(&rng, d, a, n);
                fill(&rng, d, b, n);
                memset(bits, 0xcc, sizeof bits);
                cmp_ctx k = {(vn_cmp)cmp, scalar, 1.0, n};
                vt_stage s = {3, {{bits, N / 8, VN_U8}, {a, n, d}, {b, n, d}}, cmp_body, &k};
                VT_OK(vt_stage_run(&s, scalar, NULL));
                int bad = 0;
                for (int i = 0; i < n; i++) {
                    bool want =
                        ref_cmp((vn_cmp)cmp, vt_get(d, a, i), scalar ? 1.0 : vt_get(d, b, i));
                    bad += ((bits[i / 8] >> (i % 8)) & 1) != want;
                }
                VT_CHECK(bad == 0, "%s cmp %d scalar %d: %d wrong bits", vn_dtype_name(d), cmp,
                         scalar, bad);
                VT_CHECK(n / 8 >= N / 8 || bits[n / 8] == 0xcc, "bytes past the mask untouched");
            }
}

typedef struct sel_ctx {
    int scalar;
    double s;
    int64_t n;
} sel_ctx;

static void sel_body(vn_core *c, vn_local *l, const void *p)
{
    const sel_ctx *k = p;
    if (k->scalar)
        vn_select_scalar(c, l[0], l[1], l[2], k->s, k->n);
    else
        vn_select(c, l[0], l[1], l[2], l[3], k->n);
}

static void test_select(void)
{
    static const vn_dtype ds[] = {VN_F32, VN_F16, VN_BF16, VN_I32};
    static uint8_t mask[N / 8], a[N * 4], b[N * 4], dst[N * 4];
    vt_rng rng = {4};
    for (size_t di = 0; di < 4; di++)
        for (int scalar = 0; scalar < 2; scalar++) {
            vn_dtype d = ds[di];
            int n = 300; /* any length */
            for (size_t i = 0; i < sizeof mask; i++) mask[i] = (uint8_t)vt_next(&rng);
            for (int i = 0; i < n; i++) vt_put(d, a, i, i), vt_put(d, b, i, -i);
            memset(dst, 0x77, sizeof dst);
            sel_ctx k = {scalar, -2.0, n};
            vt_stage s = {
                4, {{dst, N, d}, {mask, N / 8, VN_U8}, {a, N, d}, {b, N, d}}, sel_body, &k};
            VT_OK(vt_stage_run(&s, 1, NULL));
            int bad = 0;
            for (int i = 0; i < n; i++) {
                double want = (mask[i / 8] >> (i % 8)) & 1 ? vt_get(d, a, i)
                                                           : (scalar ? -2.0 : vt_get(d, b, i));
                bad += vt_get(d, dst, i) != want;
            }
            VT_CHECK(bad == 0, "%s scalar %d: %d wrong", vn_dtype_name(d), scalar, bad);
            VT_CHECK(dst[n * vn_dtype_size(d)] == 0x77, "past n untouched");
        }
}

static void test_length_rule(void)
{
    static float a[N], b[N];
    static uint8_t bits[N / 8];
    cmp_ctx k = {VN_CMP_LT, 0, 0, 100}; /* 400 bytes: not a multiple of 256 */
    vt_stage s = {3, {{bits, N / 8, VN_U8}, {a, N, VN_F32}, {b, N, VN_F32}}, cmp_body, &k};
    vn_status st = vt_stage_run(&s, 1, NULL);
    printf("  expected error: %s\n", vn_last_error());
    VT_FAILS_AT(st, "vn_compare", "test_compare.c", bad_line);
    /* release mode processes n anyway */
    for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = 50;
    VT_OK(vt_stage_run(&s, 0, NULL));
    VT_CHECK(bits[0] == 0xff && bits[6] == 0x03 && bits[12] == 0, "bits %02x %02x %02x", bits[0],
             bits[6], bits[12]);
    /* operands of different dtypes */
    k.n = 64;
    s.buf[2].dtype = VN_I32;
    st = vt_stage_run(&s, 1, NULL);
    VT_FAILS_AT(st, "vn_compare", "test_compare.c", bad_line);
}

int main(void)
{
    VT_RUN(test_compare_all_modes);
    VT_RUN(test_select);
    VT_RUN(test_length_rule);
    return vt_summary();
}
