/*
 * cast_scalar.c — the scalar conversions of cast.h. Every kernel of the
 * shape, reduction, logic, math, gather and cast families reads and writes
 * elements through these, so one rule set holds everywhere.
 */
#include <math.h>
#include <string.h>

#include "ops/cast.h"

double vn_cast_load_f64(vn_dtype dtype, const void *p, int64_t i)
{
    switch (dtype) {
    case VN_F32:
        return ((const float *)p)[i];
    case VN_F16:
        return vn_f16_to_f32(((const uint16_t *)p)[i]);
    case VN_BF16:
        return vn_bf16_to_f32(((const uint16_t *)p)[i]);
    case VN_I8:
        return ((const int8_t *)p)[i];
    case VN_U8:
        return ((const uint8_t *)p)[i];
    case VN_I32:
        return ((const int32_t *)p)[i];
    case VN_I64:
        return (double)((const int64_t *)p)[i];
    case VN_BOOL:
        return ((const uint8_t *)p)[i] != 0;
    default:
        return 0.0;
    }
}

/* Truncation toward zero, saturating at the int64 range; NaN -> 0. */
static int64_t f64_to_i64(double v)
{
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

int64_t vn_cast_load_i64(vn_dtype dtype, const void *p, int64_t i)
{
    switch (dtype) {
    case VN_I8:
        return ((const int8_t *)p)[i];
    case VN_U8:
        return ((const uint8_t *)p)[i];
    case VN_I32:
        return ((const int32_t *)p)[i];
    case VN_I64:
        return ((const int64_t *)p)[i];
    case VN_BOOL:
        return ((const uint8_t *)p)[i] != 0;
    default:
        return f64_to_i64(vn_cast_load_f64(dtype, p, i));
    }
}

void vn_cast_store_i64(vn_dtype dtype, void *p, int64_t i, int64_t v)
{
    /* Wrapping through the unsigned type of the target width is defined C. */
    switch (dtype) {
    case VN_F32:
        ((float *)p)[i] = (float)v;
        break;
    case VN_F16:
        ((uint16_t *)p)[i] = vn_f32_to_f16((float)v);
        break;
    case VN_BF16:
        ((uint16_t *)p)[i] = vn_f32_to_bf16((float)v);
        break;
    case VN_I8:
        ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v;
        break;
    case VN_U8:
        ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v;
        break;
    case VN_I32: {
        uint32_t u = (uint32_t)(uint64_t)v;
        memcpy((int32_t *)p + i, &u, sizeof u);
        break;
    }
    case VN_I64:
        ((int64_t *)p)[i] = v;
        break;
    case VN_BOOL:
        ((uint8_t *)p)[i] = v != 0;
        break;
    default:
        break;
    }
}

void vn_cast_store_f64(vn_dtype dtype, void *p, int64_t i, double v)
{
    switch (dtype) {
    case VN_F32:
        ((float *)p)[i] = (float)v;
        break;
    /* via f32: exact for every f32 source; a double source may round twice */
    case VN_F16:
        ((uint16_t *)p)[i] = vn_f32_to_f16((float)v);
        break;
    case VN_BF16:
        ((uint16_t *)p)[i] = vn_f32_to_bf16((float)v);
        break;
    case VN_BOOL:
        ((uint8_t *)p)[i] = v != 0.0;
        break; /* NaN != 0 */
    default:
        vn_cast_store_i64(dtype, p, i, f64_to_i64(v));
        break;
    }
}
