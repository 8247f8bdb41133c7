/*
 * cast.c — vn_cast: dtype conversion with an explicit rounding mode.
 *
 * One converter per supported (src, dst) pair in a table. Every conversion
 * goes through f32 or double, both exact for the inputs in question (f16,
 * bf16, i8, u8 are exact in f32; i32 is exact in double), and then rounds
 * once, by the mode, to the destination:
 *   - to f16/bf16 (vn_narrow): the nearest-even result and its neighbour on
 *     the other side of x bracket x; the mode picks one of the two;
 *   - to f32 from i32: the same with f32 neighbours;
 *   - to integers: round the double by the mode, saturate, NaN -> 0.
 */
#include <math.h>
#include <string.h>

#include "kernel/vector_internal.h"

typedef void (*vn_cast_fn)(void *dst, const void *src, int64_t n, vn_round mode);

/* ---- rounding helpers ------------------------------------------------------ */

static double vn_round_int(double x, vn_round mode)
{
    switch (mode) {
    case VN_ROUND_FLOOR:
        return floor(x);
    case VN_ROUND_CEIL:
        return ceil(x);
    case VN_ROUND_ROUND:
        return round(x);
    case VN_ROUND_TRUNC:
        return trunc(x);
    default:
        return nearbyint(x); /* NONE, RINT: the default mode is to-nearest-even */
    }
}

/* Picks between lo < x < hi (neighbours in the destination format, as values
 * vlo/vhi) by the mode; `rne` is the nearest-even one, `lo_odd` whether lo's
 * last mantissa bit is set, `neg` the sign of x. Returns true for hi. */
static bool vn_pick_hi(double x, double vlo, double vhi, bool rne_is_hi, bool lo_odd, bool neg,
                       vn_round mode)
{
    switch (mode) {
    case VN_ROUND_FLOOR:
        return false;
    case VN_ROUND_CEIL:
        return true;
    case VN_ROUND_TRUNC:
        return neg;
    case VN_ROUND_ODD:
        return !lo_odd;
    case VN_ROUND_ROUND: {
        if (isinf(vhi) || isinf(vlo)) return rne_is_hi; /* overflow threshold is a tie: same */
        double dlo = x - vlo, dhi = vhi - x;
        return dlo == dhi ? !neg : dhi < dlo;
    }
    default:
        return rne_is_hi;
    }
}

/* Sign-magnitude bit patterns: the next representable value toward +inf. */
static uint16_t vn_up16(uint16_t h)
{
    if (h == 0x8000u) return 1; /* -0 -> smallest positive subnormal */
    return (uint16_t)((h & 0x8000u) ? h - 1u : h + 1u);
}
static uint16_t vn_down16(uint16_t h)
{
    if (h == 0) return 0x8001u; /* +0 -> smallest negative subnormal */
    return (uint16_t)((h & 0x8000u) ? h + 1u : h - 1u);
}

typedef struct vn_half_fmt {
    uint16_t (*from)(float);
    float (*to)(uint16_t);
} vn_half_fmt;
static const vn_half_fmt vn_fmt_f16 = {vn_f32_to_f16, vn_f16_to_f32};
static const vn_half_fmt vn_fmt_bf16 = {vn_f32_to_bf16, vn_bf16_to_f32};

static uint16_t vn_narrow(float x, vn_round mode, vn_half_fmt f)
{
    uint16_t h = f.from(x);
    float back = f.to(h);
    if (back == x || x != x) return h; /* exact (incl. +-inf, +-0) or NaN */
    bool rne_is_hi = back > x;
    uint16_t lo = rne_is_hi ? vn_down16(h) : h, hi = rne_is_hi ? h : vn_up16(h);
    bool pick = vn_pick_hi(x, f.to(lo), f.to(hi), rne_is_hi, lo & 1u, x < 0, mode);
    return pick ? hi : lo;
}

static uint32_t vn_f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Double (an exact i32) to f32 by the mode. */
static float vn_to_f32_mode(double x, vn_round mode)
{
    float r = (float)x;
    if ((double)r == x) return r;
    bool rne_is_hi = (double)r > x;
    float lo = rne_is_hi ? nextafterf(r, -INFINITY) : r;
    float hi = rne_is_hi ? r : nextafterf(r, INFINITY);
    return vn_pick_hi(x, lo, hi, rne_is_hi, vn_f2u(lo) & 1u, x < 0, mode) ? hi : lo;
}

static double vn_sat_int(double x, vn_round mode, double lo, double hi)
{
    if (x != x) return 0.0;
    double r = vn_round_int(x, mode);
    return r < lo ? lo : (r > hi ? hi : r);
}

/* ---- converters ---------------------------------------------------------------- */

/* Loads element i of a source as float (exact for these sources). */
typedef float (*vn_load_f)(const void *src, int64_t i);
static float ld_f32(const void *s, int64_t i)
{
    return ((const float *)s)[i];
}
static float ld_f16(const void *s, int64_t i)
{
    return vn_f16_to_f32(((const uint16_t *)s)[i]);
}
static float ld_bf16(const void *s, int64_t i)
{
    return vn_bf16_to_f32(((const uint16_t *)s)[i]);
}
static float ld_i8(const void *s, int64_t i)
{
    return ((const int8_t *)s)[i];
}
static float ld_u8(const void *s, int64_t i)
{
    return ((const uint8_t *)s)[i];
}

#define VN_CAST_TO_HALF(name, load, fmt)                                                           \
    static void name(void *dst, const void *src, int64_t n, vn_round mode)                         \
    {                                                                                              \
        uint16_t *d = dst;                                                                         \
        for (int64_t i = 0; i < n; i++) d[i] = vn_narrow(load(src, i), mode, fmt);                 \
    }
#define VN_CAST_TO_F32(name, load)                                                                 \
    static void name(void *dst, const void *src, int64_t n, vn_round mode)                         \
    {                                                                                              \
        float *d = dst;                                                                            \
        for (int64_t i = 0; i < n; i++) d[i] = load(src, i);                                       \
    }
#define VN_CAST_TO_INT(name, load, T, lo, hi)                                                      \
    static void name(void *dst, const void *src, int64_t n, vn_round mode)                         \
    {                                                                                              \
        T *d = dst;                                                                                \
        for (int64_t i = 0; i < n; i++) d[i] = (T)vn_sat_int(load(src, i), mode, lo, hi);          \
    }

VN_CAST_TO_HALF(c_f32_f16_mode, ld_f32, vn_fmt_f16)
VN_CAST_TO_HALF(c_f32_bf16_mode, ld_f32, vn_fmt_bf16)
VN_CAST_TO_HALF(c_bf16_f16, ld_bf16, vn_fmt_f16)
VN_CAST_TO_HALF(c_f16_bf16, ld_f16, vn_fmt_bf16)
VN_CAST_TO_HALF(c_i8_f16, ld_i8, vn_fmt_f16)
VN_CAST_TO_HALF(c_u8_f16, ld_u8, vn_fmt_f16)

/* The common f32 -> f16/bf16 casts (nearest even) use the vectorised arrays. */
static bool vn_mode_rne(vn_round mode)
{
    return mode == VN_ROUND_NONE || mode == VN_ROUND_RINT;
}
static void c_f32_f16(void *dst, const void *src, int64_t n, vn_round mode)
{
    if (vn_mode_rne(mode))
        vn_f32_to_f16_array(src, dst, (size_t)n);
    else
        c_f32_f16_mode(dst, src, n, mode);
}
static void c_f32_bf16(void *dst, const void *src, int64_t n, vn_round mode)
{
    if (vn_mode_rne(mode))
        vn_f32_to_bf16_array(src, dst, (size_t)n);
    else
        c_f32_bf16_mode(dst, src, n, mode);
}
VN_CAST_TO_F32(c_i8_f32, ld_i8)
VN_CAST_TO_F32(c_u8_f32, ld_u8)
VN_CAST_TO_INT(c_f32_i32, ld_f32, int32_t, INT32_MIN, INT32_MAX)
VN_CAST_TO_INT(c_f16_i32, ld_f16, int32_t, INT32_MIN, INT32_MAX)
VN_CAST_TO_INT(c_f32_i8, ld_f32, int8_t, INT8_MIN, INT8_MAX)
VN_CAST_TO_INT(c_f16_i8, ld_f16, int8_t, INT8_MIN, INT8_MAX)
VN_CAST_TO_INT(c_f32_u8, ld_f32, uint8_t, 0, UINT8_MAX)
VN_CAST_TO_INT(c_f16_u8, ld_f16, uint8_t, 0, UINT8_MAX)

static void c_f16_f32(void *dst, const void *src, int64_t n, vn_round mode)
{
    vn_f16_to_f32_array(src, dst, (size_t)n);
}
static void c_bf16_f32(void *dst, const void *src, int64_t n, vn_round mode)
{
    vn_bf16_to_f32_array(src, dst, (size_t)n);
}
static void c_i32_f32(void *dst, const void *src, int64_t n, vn_round mode)
{
    const int32_t *s = src;
    float *d = dst;
    for (int64_t i = 0; i < n; i++) d[i] = vn_to_f32_mode(s[i], mode);
}
/* Through f32: |i| < 2^24 is exact there, and larger values overflow f16
 * (max 65504) whatever the f32 rounding did, so the single mode rounding is
 * the one that counts. */
static void c_i32_f16(void *dst, const void *src, int64_t n, vn_round mode)
{
    const int32_t *s = src;
    uint16_t *d = dst;
    for (int64_t i = 0; i < n; i++) {
        float f = (float)s[i];
        if (mode == VN_ROUND_FLOOR || mode == VN_ROUND_CEIL || mode == VN_ROUND_TRUNC ||
            mode == VN_ROUND_ODD)
            f = vn_to_f32_mode(s[i], mode); /* keep the direction of an inexact f32 step */
        d[i] = vn_narrow(f, mode, vn_fmt_f16);
    }
}

/* [src][dst]; NULL = unsupported pair. */
static const vn_cast_fn vn_cast_table[VN_DTYPE_COUNT][VN_DTYPE_COUNT] = {
    [VN_F32] = {[VN_F16] = c_f32_f16,
                [VN_BF16] = c_f32_bf16,
                [VN_I32] = c_f32_i32,
                [VN_I8] = c_f32_i8,
                [VN_U8] = c_f32_u8},
    [VN_F16] = {[VN_F32] = c_f16_f32,
                [VN_BF16] = c_f16_bf16,
                [VN_I32] = c_f16_i32,
                [VN_I8] = c_f16_i8,
                [VN_U8] = c_f16_u8},
    [VN_BF16] = {[VN_F32] = c_bf16_f32, [VN_F16] = c_bf16_f16},
    [VN_I32] = {[VN_F32] = c_i32_f32, [VN_F16] = c_i32_f16},
    [VN_I8] = {[VN_F32] = c_i8_f32, [VN_F16] = c_i8_f16},
    [VN_U8] = {[VN_F32] = c_u8_f32, [VN_F16] = c_u8_f16},
};

/* ODD exists only for narrowing to f16 / bf16 (where a second rounding can
 * follow); other targets reject it. */
static bool vn_cast_mode_ok(vn_dtype dst, vn_round mode)
{
    if ((unsigned)mode >= VN_ROUND_COUNT) return false;
    return mode != VN_ROUND_ODD || dst == VN_F16 || dst == VN_BF16;
}

void vn_cast_(vn_core *core, vn_local dst, vn_local src, vn_round mode, int64_t n, vn_site site)
{
    vn_xfer_sync(core);
    vn_cast_fn f = vn_dtype_valid(src.dtype) && vn_dtype_valid(dst.dtype)
                       ? vn_cast_table[src.dtype][dst.dtype]
                       : NULL;
    if (!f || !vn_cast_mode_ok(dst.dtype, mode))
        vn_core_fail(core, site, "vn_cast", "no cast %s -> %s with round mode %d",
                     vn_dtype_name(src.dtype), vn_dtype_name(dst.dtype), (int)mode);
    if (core->checked) {
        if (n < 0) vn_core_fail(core, site, "vn_cast", "negative count %lld", (long long)n);
        vn_check_local(core, src, "vn_cast", site);
        vn_check_local(core, dst, "vn_cast", site);
        vn_vec_check_read_n(core, src, n, "vn_cast", site);
        vn_vec_check_write_n(core, dst, n, "vn_cast", site);
    }
    if (n <= 0) return;
    f(dst.data, src.data, n, mode);
    core->counters.vector_elem_ops += n;
}
