/*
 * test_reduce.c — whole-tensor, per-block (BlockReduce) and per-repeat
 * (WholeReduce) reductions: sum / max / min, f32 f16 bf16 i32, masks and
 * strides, accuracy for long sums, NaN, checked-mode errors.
 */
#include "kernel/vec_kernel.h"

typedef struct red_ctx {
    vn_reduce kind;
    int form; /* 0 whole, 1 per block, 2 per repeat */
    int64_t n;
    vn_mask mask;
    int32_t repeat;
    uint16_t blk, rep;
} red_ctx;

static int bad_line;

static void red_body(vn_core *c, vn_local *l, const void *p)
{
    const red_ctx *k = p;
    if (k->form == 0) {
        bad_line = __LINE__ + 1;
        vn_reduce(c, k->kind, l[0], l[1], k->n);
    } else if (k->form == 1) {
        bad_line = __LINE__ + 1;
        vn_block_reduce(c, k->kind, l[0], l[1], k->mask, k->repeat, k->blk, k->rep);
    } else {
        bad_line = __LINE__ + 1;
        vn_repeat_reduce(c, k->kind, l[0], l[1], k->mask, k->repeat, k->blk, k->rep);
    }
}

static double combine(vn_reduce kind, double acc, double x)
{
    if (kind == VN_REDUCE_SUM) return acc + x;
    if (x != x || acc != acc) return NAN;
    return kind == VN_REDUCE_MAX ? fmax(acc, x) : fmin(acc, x);
}

static const vn_dtype ds[] = {VN_F32, VN_F16, VN_BF16, VN_I32};

static bool near(vn_dtype d, double got, double want, double scale)
{
    if (want != want) return got != got;
    if (d == VN_I32) return got == want;
    double tol = d == VN_F32 ? 1e-6 : (d == VN_F16 ? 1e-3 : 8e-3);
    return fabs(got - want) <= tol * (fabs(want) + scale) || got == want;
}

static void test_whole(void)
{
    static const int64_t lens[] = {1, 7, 31, 33, 4095, 40000};
    static uint8_t src[40000 * 4], dst[64];
    vt_rng rng = {8};
    for (size_t di = 0; di < 4; di++)
        for (size_t li = 0; li < 6; li++)
            for (int kind = 0; kind < 3; kind++) {
                vn_dtype d = ds[di];
                int64_t n = lens[li];
                if (n * (int64_t)vn_dtype_size(d) > 160000)
                    n = 160000 / (int64_t)vn_dtype_size(d) / 2;
                double want = kind == 0 ? 0 : (kind == 1 ? -INFINITY : INFINITY), abs_sum = 0;
                for (int64_t i = 0; i < n; i++) {
                    vt_put(d, src, i,
                           d == VN_I32 ? (double)(int64_t)(vt_next(&rng) % 2001) - 1000
                                       : vt_uniform(&rng, -1, 2));
                    double x = vt_get(d, src, i);
                    want = combine((vn_reduce)kind, want, x);
                    abs_sum += fabs(x);
                }
                red_ctx k = {(vn_reduce)kind, 0, n, {{0, 0}}, 0, 0, 0};
                vt_stage s = {
                    2, {{dst, 64 / (int64_t)vn_dtype_size(d), d}, {src, n, d}}, red_body, &k};
                VT_OK(vt_stage_run(&s, li & 1, NULL));
                double got = vt_get(d, dst, 0);
                VT_CHECK(near(d, got, want, kind == 0 ? abs_sum * 1e-3 : 0),
                         "%s kind %d n=%lld: %.9g vs %.9g", vn_dtype_name(d), kind, (long long)n,
                         got, want);
            }
}

static void test_nan_and_long_sum(void)
{
    static float src[40000], dst[8];
    for (int i = 0; i < 40000; i++) src[i] = 0.1f;
    red_ctx k = {VN_REDUCE_SUM, 0, 40000, {{0, 0}}, 0, 0, 0};
    vt_stage s = {2, {{dst, 8, VN_F32}, {src, 40000, VN_F32}}, red_body, &k};
    VT_OK(vt_stage_run(&s, 1, NULL));
    VT_CHECK(fabs(dst[0] - 40000 * (double)0.1f) < 4e-3, "sum %.9g", dst[0]);
    src[777] = NAN;
    k.kind = VN_REDUCE_MAX;
    VT_OK(vt_stage_run(&s, 0, NULL));
    VT_CHECK(isnan(dst[0]), "max with NaN");
}

static void test_per_block_and_repeat(void)
{
    static uint8_t src[8192], dst[4096];
    vt_rng rng = {9};
    static const uint16_t blks[] = {1, 2}, reps[] = {8, 16, 0};
    for (size_t di = 0; di < 4; di++)
        for (int form = 1; form <= 2; form++)
            for (int trial = 0; trial < 6; trial++) {
                vn_dtype d = ds[di];
                size_t size = vn_dtype_size(d);
                int32_t lanes = (int32_t)(256 / size), per = (int32_t)(32 / size);
                int64_t cnt = 8192 / (int64_t)size;
                for (int64_t i = 0; i < cnt; i++)
                    vt_put(d, src, i,
                           d == VN_I32 ? (double)(int64_t)(vt_next(&rng) % 200) - 100
                                       : vt_uniform(&rng, -4, 4));
                memset(dst, 0, sizeof dst);
                vn_mask m = {{vt_next(&rng), vt_next(&rng)}};
                if (trial == 0) m = vn_mask_first(lanes);
                red_ctx k = {(vn_reduce)(trial % 3), form,           0, m, 3 + trial,
                             blks[trial % 2],        reps[trial % 3]};
                vt_stage s = {2, {{dst, 4096 / (int64_t)size, d}, {src, cnt, d}}, red_body, &k};
                VT_OK(vt_stage_run(&s, trial & 1, NULL));
                int bad = 0;
                int groups = form == 1 ? 8 : 1, width = lanes / groups;
                for (int32_t r = 0; r < k.repeat; r++)
                    for (int g = 0; g < groups; g++) {
                        double want = k.kind == 0 ? 0 : (k.kind == 1 ? -INFINITY : INFINITY);
                        for (int lane = g * width; lane < (g + 1) * width; lane++) {
                            if (!((m.bits[lane / 64] >> (lane % 64)) & 1)) continue;
                            int64_t off = ((int64_t)r * k.rep + (lane / per) * k.blk) * 32 +
                                          (lane % per) * (int64_t)size;
                            want = combine(k.kind, want, vt_get(d, src + off, 0));
                        }
                        if (d == VN_I32 && isinf(want)) want = want > 0 ? INT32_MAX : INT32_MIN;
                        bad += !near(d, vt_get(d, dst, r * groups + g), want, 1.0);
                    }
                VT_CHECK(bad == 0, "%s form %d trial %d: %d wrong", vn_dtype_name(d), form, trial,
                         bad);
            }
}

static void test_checked_errors(void)
{
    static float src[2048], dst[64];
    static uint16_t h[64];
    red_ctx k = {VN_REDUCE_SUM, 2, 0, {{~0ull, 0}}, 256, 1, 8};
    vt_stage s = {2, {{dst, 64, VN_F32}, {src, 2048, VN_F32}}, red_body, &k};
    vn_status st = vt_stage_run(&s, 1, NULL);
    VT_FAILS_AT(st, "vn_repeat_reduce", "test_reduce.c", bad_line);
    k.form = 0, k.n = 64;
    vt_stage s2 = {2, {{h, 64, VN_F16}, {src, 2048, VN_F32}}, red_body, &k};
    st = vt_stage_run(&s2, 1, NULL);
    printf("  expected error: %s\n", vn_last_error());
    VT_FAILS_AT(st, "vn_reduce", "test_reduce.c", bad_line);
    k.form = 1, k.repeat = 20, k.rep = 16; /* reads past the 8 KiB source */
    st = vt_stage_run(&s, 1, NULL);
    VT_FAILS_AT(st, "vn_block_reduce", "test_reduce.c", bad_line);
}

int main(void)
{
    VT_RUN(test_whole);
    VT_RUN(test_nan_and_long_sum);
    VT_RUN(test_per_block_and_repeat);
    VT_RUN(test_checked_errors);
    return vt_summary();
}
