/*
 * cast_scalar.c — the scalar conversions of cast.h. Every kernel of the
 * shape, reduction, logic, math, gather and cast families reads and writes
 * elements through these, so one rule set holds everywhere.
 *
 * Single rounding to f16 / bf16 from wider sources: the value is first
 * rounded to odd (truncate, then set the last bit if anything was dropped)
 * at a precision at least two bits above the target's, which keeps every
 * nearest-even decision of the final rounding intact.
 */
#include <math.h>
#include <string.h>

#include "ops/cast.h"

#define TWO63 9223372036854775808.0
#define TWO64 18446744073709551616.0

/* ---- rounding to odd -------------------------------------------------------------------- */

/* v rounded to f32 by truncation, with the last mantissa bit set when inexact.
 * NaN, Inf and values beyond f32 keep what a plain conversion gives them
 * (beyond-range finite values become FLT_MAX | odd = FLT_MAX, still above
 * every f16 / bf16 rounding threshold). */
static float f64_to_f32_odd(double v)
{
    float f = (float)v;
    if (v != v || (double)f == v || isinf(v)) return f;
    if (fabs((double)f) > fabs(v)) f = nextafterf(f, 0.0f);
    uint32_t b;
    memcpy(&b, &f, 4);
    b |= 1u;
    memcpy(&f, &b, 4);
    return f;
}

/* u rounded to 53 bits by truncation, last bit set when inexact. */
static double u64_to_f64_odd(uint64_t u)
{
    int bits = 64 - __builtin_clzll(u | 1);
    if (bits <= 53) return (double)u;
    int shift = bits - 53;
    uint64_t hi = u >> shift, lost = u & ((UINT64_C(1) << shift) - 1);
    return ldexp((double)(hi | (lost != 0)), shift);
}

static double i64_to_f64_odd(int64_t v)
{
    double m = u64_to_f64_odd(v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    return v < 0 ? -m : m;
}

uint16_t vn_cast_f64_to_f16(double v)
{
    return vn_f32_to_f16(f64_to_f32_odd(v));
}

uint16_t vn_cast_f64_to_bf16(double v)
{
    return vn_f32_to_bf16(f64_to_f32_odd(v));
}

/* ---- loads ------------------------------------------------------------------------------ */

double vn_cast_load_f64(vn_dtype dtype, const void *p, int64_t i)
{
    switch (dtype) {
    case VN_F32:
        return ((const float *)p)[i];
    case VN_F64:
        return ((const double *)p)[i];
    case VN_F16:
        return vn_f16_to_f32(((const uint16_t *)p)[i]);
    case VN_BF16:
        return vn_bf16_to_f32(((const uint16_t *)p)[i]);
    case VN_U64:
        return (double)((const uint64_t *)p)[i];
    default:
        return (double)vn_cast_load_i64(dtype, p, i);
    }
}

/* Truncation toward zero, saturating at the int64 range; NaN -> 0. */
static int64_t f64_to_i64(double v)
{
    if (v != v) return 0;
    if (v >= TWO63) return INT64_MAX;
    if (v <= -TWO63) return INT64_MIN;
    return (int64_t)v;
}

/* The same for a u64 target: values in [2^63, 2^64) convert exactly, larger
 * ones saturate; negative ones wrap like every other integer target. */
static uint64_t f64_to_u64(double v)
{
    if (v >= TWO64) return UINT64_MAX;
    if (v >= TWO63) return (uint64_t)v;
    return (uint64_t)f64_to_i64(v);
}

int64_t vn_cast_load_i64(vn_dtype dtype, const void *p, int64_t i)
{
    switch (dtype) {
    case VN_I8:
        return ((const int8_t *)p)[i];
    case VN_U8:
        return ((const uint8_t *)p)[i];
    case VN_I16:
        return ((const int16_t *)p)[i];
    case VN_U16:
        return ((const uint16_t *)p)[i];
    case VN_I32:
        return ((const int32_t *)p)[i];
    case VN_U32:
        return ((const uint32_t *)p)[i];
    case VN_I64:
        return ((const int64_t *)p)[i];
    case VN_U64: {
        int64_t v; /* the bit pattern (see cast.h) */
        memcpy(&v, (const uint64_t *)p + i, 8);
        return v;
    }
    case VN_BOOL:
        return ((const uint8_t *)p)[i] != 0;
    case VN_F32:
    case VN_F64:
    case VN_F16:
    case VN_BF16:
        return f64_to_i64(vn_cast_load_f64(dtype, p, i));
    default:
        return 0;
    }
}

/* ---- stores ----------------------------------------------------------------------------- */

/* An integer's bits wrapped to an integer dtype (defined C: through unsigned). */
static void store_bits(vn_dtype dtype, void *p, int64_t i, uint64_t u)
{
    switch (dtype) {
    case VN_I8:
    case VN_U8:
        ((uint8_t *)p)[i] = (uint8_t)u;
        break;
    case VN_I16:
    case VN_U16:
        ((uint16_t *)p)[i] = (uint16_t)u;
        break;
    case VN_I32:
    case VN_U32:
        ((uint32_t *)p)[i] = (uint32_t)u;
        break;
    case VN_I64:
    case VN_U64:
        ((uint64_t *)p)[i] = u;
        break;
    case VN_BOOL:
        ((uint8_t *)p)[i] = u != 0;
        break;
    default:
        break;
    }
}

void vn_cast_store_i64(vn_dtype dtype, void *p, int64_t i, int64_t v)
{
    switch (dtype) {
    case VN_F32:
        ((float *)p)[i] = (float)v;
        break;
    case VN_F64:
        ((double *)p)[i] = (double)v;
        break;
    case VN_F16:
        ((uint16_t *)p)[i] = vn_cast_f64_to_f16(i64_to_f64_odd(v));
        break;
    case VN_BF16:
        ((uint16_t *)p)[i] = vn_cast_f64_to_bf16(i64_to_f64_odd(v));
        break;
    default:
        store_bits(dtype, p, i, (uint64_t)v);
        break;
    }
}

void vn_cast_store_u64(vn_dtype dtype, void *p, int64_t i, uint64_t v)
{
    switch (dtype) {
    case VN_F32:
        ((float *)p)[i] = (float)v;
        break;
    case VN_F64:
        ((double *)p)[i] = (double)v;
        break;
    case VN_F16:
        ((uint16_t *)p)[i] = vn_cast_f64_to_f16(u64_to_f64_odd(v));
        break;
    case VN_BF16:
        ((uint16_t *)p)[i] = vn_cast_f64_to_bf16(u64_to_f64_odd(v));
        break;
    default:
        store_bits(dtype, p, i, v);
        break;
    }
}

void vn_cast_store_f64(vn_dtype dtype, void *p, int64_t i, double v)
{
    switch (dtype) {
    case VN_F32:
        ((float *)p)[i] = (float)v;
        break;
    case VN_F64:
        ((double *)p)[i] = v;
        break;
    case VN_F16:
        ((uint16_t *)p)[i] = vn_cast_f64_to_f16(v);
        break;
    case VN_BF16:
        ((uint16_t *)p)[i] = vn_cast_f64_to_bf16(v);
        break;
    case VN_BOOL:
        ((uint8_t *)p)[i] = v != 0.0;
        break; /* NaN != 0 */
    case VN_U64:
        store_bits(dtype, p, i, f64_to_u64(v));
        break;
    default:
        store_bits(dtype, p, i, (uint64_t)f64_to_i64(v));
        break;
    }
}
