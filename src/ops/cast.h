/*
 * cast.h — scalar conversions between every vinci dtype, the one rule set
 * that Cast and the scalar kernels of the ONNX operator families share.
 *
 * Rules (ONNX Cast, numpy astype): float -> float rounds to nearest even
 * (NaN and Inf kept); float -> integer truncates toward zero and wraps to
 * the target width (values beyond int64 saturate first, NaN becomes 0, so no
 * conversion is undefined behaviour); integer -> integer wraps; anything ->
 * bool is (x != 0) (NaN is true); bool -> anything is 0 or 1.
 */
#ifndef VINCI_OPS_CAST_H
#define VINCI_OPS_CAST_H

#include "ops/ops_internal.h"

/* Element `i` of an array of `dtype` as a double / an int64 (floats truncate). */
double vn_cast_load_f64(vn_dtype dtype, const void *p, int64_t i);
int64_t vn_cast_load_i64(vn_dtype dtype, const void *p, int64_t i);
/* Store `v` as element `i` of an array of `dtype` by the rules above. */
void vn_cast_store_f64(vn_dtype dtype, void *p, int64_t i, double v);
void vn_cast_store_i64(vn_dtype dtype, void *p, int64_t i, int64_t v);

static inline bool vn_cast_is_float(vn_dtype d)
{
    return d == VN_F32 || d == VN_F16 || d == VN_BF16;
}

/* Every dtype vinci has. */
#define VN_DTYPES_ALL ((1u << VN_DTYPE_COUNT) - 1u)
/* The integer dtypes (bool excluded). */
#define VN_DTYPES_INT                                                                              \
    (VN_DTYPE_BIT(VN_I8) | VN_DTYPE_BIT(VN_U8) | VN_DTYPE_BIT(VN_I32) | VN_DTYPE_BIT(VN_I64))

/* The functions that hand each family's table to the registry. */
const vn_op_def *const *vn_ops_cast_table(int32_t *count);

#endif /* VINCI_OPS_CAST_H */
