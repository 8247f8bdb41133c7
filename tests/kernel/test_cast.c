/*
 * test_cast.c — vn_cast: every supported pair and every round mode against a
 * reference that brackets x between its two neighbours in the destination
 * format (found by search, not by the library's conversions); exhaustive
 * f16 -> f32 -> f16; saturation and NaN -> 0 for integers; unsupported pairs.
 */
#include "kernel/vec_kernel.h"
#include "kernel/vec_ref.h"

#define CAP 4096

typedef struct cast_ctx {
    vn_round mode;
    int64_t n;
} cast_ctx;

static int bad_line;

static void cast_body(vn_core *c, vn_local *l, const void *p)
{
    const cast_ctx *k = p;
    bad_line = __LINE__ + 1;
    vn_cast(c, l[1], l[0], k->mode, k->n);
}

/* Casts n elements of src (dtype s) into dst (dtype d). */
static vn_status run_cast(void *src, vn_dtype s, void *dst, vn_dtype d, vn_round mode, int64_t n,
                          int checked)
{
    cast_ctx k = {mode, n};
    vt_stage st = {2, {{src, n, s}, {dst, n, d}}, cast_body, &k};
    return vt_stage_run(&st, checked, NULL);
}

/* ---- reference rounding -------------------------------------------------------- */

/* Sorted finite values of a 16-bit format, plus +-inf placed at the next
 * binade (so nearest-rounding overflows exactly where IEEE says). */
typedef struct fmt16 {
    double val[65536];
    uint16_t bits[65536];
    int count;
} fmt16;

static fmt16 f16s, bf16s;

static void build(fmt16 *f, bool bf)
{
    int n = 0;
    for (int s = 1; s >= 0; s--)
        for (int m = 0; m < 0x8000; m++) {
            int mag = s ? 0x7fff - m : m;
            uint16_t b = (uint16_t)((s << 15) | mag);
            double v = bf ? vn_bf16_to_f32(b) : vn_f16_to_f32(b);
            if (v != v || (s && mag == 0)) continue; /* NaN; -0 (kept +0 only) */
            if (isinf(v)) v = copysign(bf ? 0x1p128 : 65536.0, v);
            f->val[n] = v, f->bits[n] = b, n++;
        }
    f->count = n;
}

static bool pick_hi(double x, double lo, double hi, bool lo_odd, vn_round mode)
{
    switch (mode) {
    case VN_ROUND_FLOOR:
        return false;
    case VN_ROUND_CEIL:
        return true;
    case VN_ROUND_TRUNC:
        return x < 0;
    case VN_ROUND_ODD:
        return !lo_odd;
    case VN_ROUND_ROUND:
        return (hi - x == x - lo) ? x > 0 : hi - x < x - lo;
    default:
        return (hi - x == x - lo) ? lo_odd : hi - x < x - lo;
    }
}

static uint16_t ref16_pick(const fmt16 *f, double x, vn_round mode)
{
    int lo = 0, hi = f->count - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (f->val[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    /* the infinities stand at the next binade but are never an exact match */
    uint16_t inf = f == &bf16s ? 0x7f80u : 0x7c00u;
    if (f->val[lo] == x && (f->bits[lo] & 0x7fffu) != inf) return f->bits[lo];
    if (f->val[hi] == x && (f->bits[hi] & 0x7fffu) != inf) return f->bits[hi];
    return pick_hi(x, f->val[lo], f->val[hi], f->bits[lo] & 1, mode) ? f->bits[hi] : f->bits[lo];
}

/* Infinities are exact; a zero result keeps the sign of x. */
static uint16_t ref16(const fmt16 *f, double x, vn_round mode)
{
    if (isinf(x)) return f == &bf16s ? (x > 0 ? 0x7f80u : 0xff80u) : (x > 0 ? 0x7c00u : 0xfc00u);
    uint16_t b = ref16_pick(f, x, mode);
    return (b == 0 && x < 0) ? 0x8000u : b;
}

static double ref_int(double x, vn_round mode, double lo, double hi)
{
    if (x != x) return 0;
    double r = mode == VN_ROUND_FLOOR   ? floor(x)
               : mode == VN_ROUND_CEIL  ? ceil(x)
               : mode == VN_ROUND_ROUND ? round(x)
               : mode == VN_ROUND_TRUNC ? trunc(x)
                                        : nearbyint(x);
    return r < lo ? lo : r > hi ? hi : r;
}

static float ref_f32(double x, vn_round mode)
{
    float r = (float)x;
    if (r == x) return r;
    float lo = r < x ? r : nextafterf(r, -INFINITY), hi = r > x ? r : nextafterf(r, INFINITY);
    uint32_t lb;
    memcpy(&lb, &lo, 4);
    return pick_hi(x, lo, hi, lb & 1, mode) ? hi : lo;
}

/* ---- tests ------------------------------------------------------------------------ */

static void test_f16_round_trip_exhaustive(void)
{
    static uint16_t h[CAP], back[CAP];
    static float f[CAP];
    int64_t bad = 0;
    for (int base = 0; base < 65536; base += CAP) {
        for (int i = 0; i < CAP; i++) h[i] = (uint16_t)(base + i);
        VT_OK(run_cast(h, VN_F16, f, VN_F32, VN_ROUND_NONE, CAP, base == 0));
        VT_OK(run_cast(f, VN_F32, back, VN_F16, VN_ROUND_NONE, CAP, base == 0));
        for (int i = 0; i < CAP; i++) {
            bool nan = vt_f16_nan(h[i]);
            bad += nan ? !vt_f16_nan(back[i]) : back[i] != h[i];
            bad += !nan && (double)f[i] != (double)vn_f16_to_f32(h[i]);
        }
    }
    VT_CHECK(bad == 0, "%lld f16 values did not survive f16 -> f32 -> f16", (long long)bad);
}

static void fill_f32(vt_rng *rng, float *x, int n, double scale)
{
    for (int i = 0; i < n; i++) {
        double v = vt_uniform(rng, -scale, scale);
        x[i] = i % 3 == 0 ? (float)nearbyint(v * 4) / 4 : (float)v; /* ties in plenty */
    }
    static const float sp[] = {0.0f,     -0.0f,    INFINITY, -INFINITY,     NAN,
                               65504.0f, 65519.0f, 65520.0f, -65520.0f,     70000.0f,
                               1e-8f,    -1e-8f,   3e38f,    2.5f,          -2.5f,
                               0.5f,     -0.5f,    1.5f,     5.9604645e-8f, 2.9802322e-8f,
                               4e9f,     -4e9f,    255.5f,   300.0f,        -129.0f};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0] && (int)i < n; i++) x[i] = sp[i];
}

static void test_f32_to_narrow_every_mode(void)
{
    static float x[CAP];
    static uint16_t out[CAP];
    vt_rng rng = {11};
    for (int fmt = 0; fmt < 2; fmt++)
        for (int mode = 0; mode < VN_ROUND_COUNT; mode++)
            for (int scale = 0; scale < 3; scale++) {
                fill_f32(&rng, x, CAP, scale == 0 ? 4.0 : scale == 1 ? 7e4 : 1e-5);
                vn_dtype d = fmt ? VN_BF16 : VN_F16;
                VT_OK(run_cast(x, VN_F32, out, d, (vn_round)mode, CAP, mode & 1));
                int64_t bad = 0, first = -1;
                for (int i = 0; i < CAP; i++) {
                    bool nan = x[i] != x[i];
                    uint16_t want = nan ? 0 : ref16(fmt ? &bf16s : &f16s, x[i], (vn_round)mode);
                    bool ok = nan ? (fmt ? vt_bf16_nan(out[i]) : vt_f16_nan(out[i]))
                                  : (out[i] == want || (x[i] == 0 && (out[i] & 0x7fff) == 0));
                    if (!ok && bad++ == 0) first = i;
                }
                VT_CHECK(bad == 0, "f32->%s mode %d: %lld wrong, first x=%.9g got %04x want %04x",
                         vn_dtype_name(d), mode, (long long)bad, first >= 0 ? x[first] : 0,
                         first >= 0 ? out[first] : 0,
                         first >= 0 ? ref16(fmt ? &bf16s : &f16s, x[first], (vn_round)mode) : 0);
            }
}

static void test_to_integers(void)
{
    static float x[CAP];
    static uint16_t h[CAP];
    static int32_t i32[CAP];
    static int8_t i8[CAP];
    static uint8_t u8[CAP];
    vt_rng rng = {12};
    for (int mode = 0; mode < VN_ROUND_ODD; mode++) {
        fill_f32(&rng, x, CAP, 300);
        for (int i = 0; i < CAP; i++) h[i] = vn_f32_to_f16(x[i]);
        int64_t bad = 0;
        VT_OK(run_cast(x, VN_F32, i32, VN_I32, (vn_round)mode, CAP, 1));
        for (int i = 0; i < CAP; i++)
            bad += i32[i] != ref_int(x[i], (vn_round)mode, INT32_MIN, INT32_MAX);
        VT_OK(run_cast(h, VN_F16, i32, VN_I32, (vn_round)mode, CAP, 0));
        for (int i = 0; i < CAP; i++)
            bad += i32[i] != ref_int(vn_f16_to_f32(h[i]), (vn_round)mode, INT32_MIN, INT32_MAX);
        VT_OK(run_cast(x, VN_F32, i8, VN_I8, (vn_round)mode, CAP, 1));
        for (int i = 0; i < CAP; i++) bad += i8[i] != ref_int(x[i], (vn_round)mode, -128, 127);
        VT_OK(run_cast(h, VN_F16, u8, VN_U8, (vn_round)mode, CAP, 1));
        for (int i = 0; i < CAP; i++)
            bad += u8[i] != ref_int(vn_f16_to_f32(h[i]), (vn_round)mode, 0, 255);
        VT_CHECK(bad == 0, "mode %d: %lld wrong integer results", mode, (long long)bad);
    }
}

static void test_from_integers(void)
{
    static int32_t i32[CAP];
    static float f[CAP];
    static uint16_t h[CAP];
    static int8_t i8[256];
    static uint8_t u8[256];
    vt_rng rng = {13};
    for (int i = 0; i < CAP; i++) {
        int64_t big = (int64_t)(vt_next(&rng) % 4294967296ull) - 2147483648ll;
        i32[i] = i % 2 ? (int32_t)big : (int32_t)((int64_t)(vt_next(&rng) % 140001) - 70000);
    }
    i32[0] = INT32_MIN, i32[1] = INT32_MAX, i32[2] = 16777217, i32[3] = 65520, i32[4] = -65519;
    for (int mode = 0; mode < VN_ROUND_COUNT; mode++) {
        int64_t bad = 0;
        if (mode != VN_ROUND_ODD) {
            VT_OK(run_cast(i32, VN_I32, f, VN_F32, (vn_round)mode, CAP, 1));
            for (int i = 0; i < CAP; i++) bad += f[i] != ref_f32(i32[i], (vn_round)mode);
        }
        VT_OK(run_cast(i32, VN_I32, h, VN_F16, (vn_round)mode, CAP, 0));
        for (int i = 0; i < CAP; i++) bad += h[i] != ref16(&f16s, i32[i], (vn_round)mode);
        VT_CHECK(bad == 0, "i32 mode %d: %lld wrong", mode, (long long)bad);
    }
    for (int i = 0; i < 256; i++) i8[i] = (int8_t)(i - 128), u8[i] = (uint8_t)i;
    int64_t bad = 0;
    VT_OK(run_cast(i8, VN_I8, f, VN_F32, VN_ROUND_NONE, 256, 1));
    for (int i = 0; i < 256; i++) bad += f[i] != i - 128;
    VT_OK(run_cast(u8, VN_U8, h, VN_F16, VN_ROUND_NONE, 256, 1));
    for (int i = 0; i < 256; i++) bad += vn_f16_to_f32(h[i]) != i;
    VT_CHECK(bad == 0, "i8/u8: %lld wrong", (long long)bad);
}

static void test_half_to_half(void)
{
    static uint16_t src[CAP], dst[CAP];
    int64_t bad = 0;
    for (int mode = 0; mode < VN_ROUND_COUNT; mode++)
        for (int base = 0; base < 65536; base += CAP) {
            for (int i = 0; i < CAP; i++) src[i] = (uint16_t)(base + i);
            VT_OK(run_cast(src, VN_F16, dst, VN_BF16, (vn_round)mode, CAP, 0));
            for (int i = 0; i < CAP; i++)
                if (!vt_f16_nan(src[i]))
                    bad += dst[i] != ref16(&bf16s, vn_f16_to_f32(src[i]), (vn_round)mode) &&
                           !(vn_f16_to_f32(src[i]) == 0 && (dst[i] & 0x7fff) == 0);
            VT_OK(run_cast(src, VN_BF16, dst, VN_F16, (vn_round)mode, CAP, 0));
            for (int i = 0; i < CAP; i++)
                if (!vt_bf16_nan(src[i])) {
                    bool wrong = dst[i] != ref16(&f16s, vn_bf16_to_f32(src[i]), (vn_round)mode) &&
                                 !(vn_bf16_to_f32(src[i]) == 0 && (dst[i] & 0x7fff) == 0);
                    if (wrong && bad < 3)
                        fprintf(stderr, "    bf16 %04x (%g) mode %d -> %04x, want %04x\n", src[i],
                                vn_bf16_to_f32(src[i]), mode, dst[i],
                                ref16(&f16s, vn_bf16_to_f32(src[i]), (vn_round)mode));
                    bad += wrong;
                }
        }
    VT_CHECK(bad == 0, "f16 <-> bf16: %lld wrong", (long long)bad);
}

static void test_unsupported(void)
{
    static float f[64];
    static int64_t i64[64];
    static int32_t i32[64];
    vn_status st = run_cast(f, VN_F32, i64, VN_I64, VN_ROUND_NONE, 64, 0);
    VT_FAILS_AT(st, "vn_cast", "test_cast.c", bad_line);
    st = run_cast(f, VN_F32, i32, VN_I32, VN_ROUND_ODD, 64, 0);
    VT_FAILS_AT(st, "vn_cast", "test_cast.c", bad_line);
}

int main(void)
{
    build(&f16s, false);
    build(&bf16s, true);
    VT_RUN(test_f16_round_trip_exhaustive);
    VT_RUN(test_f32_to_narrow_every_mode);
    VT_RUN(test_to_integers);
    VT_RUN(test_from_integers);
    VT_RUN(test_half_to_half);
    VT_RUN(test_unsupported);
    return vt_summary();
}
