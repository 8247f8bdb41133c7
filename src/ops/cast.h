/*
 * cast.h — scalar conversions between every vinci dtype, the one rule set
 * that Cast and the scalar kernels of the ONNX operator families share.
 *
 * Rules (ONNX Cast, numpy astype): float -> float and integer -> float round
 * once to nearest even (NaN and Inf kept; f64 / i64 / u64 -> f16 / bf16 do
 * not round twice through f32); float -> integer truncates toward zero and
 * wraps to the target width (values beyond int64, or beyond u64 for a u64
 * target, saturate first, NaN becomes 0, so no conversion is undefined
 * behaviour); integer -> integer wraps; anything -> bool is (x != 0) (NaN
 * is true); bool -> anything is 0 or 1.
 *
 * Integers travel as int64: i8..i32, u8..u32 exactly, u64 as its bit
 * pattern (values >= 2^63 read negative). Code that orders, divides or
 * widens u64 values must treat them as uint64 (vn_cast_is_u64); wrapping
 * add, sub, mul and bit operations are the same either way.
 */
#ifndef VINCI_OPS_CAST_H
#define VINCI_OPS_CAST_H

#include "ops/ops_internal.h"

/* Element `i` of an array of `dtype` as a double / an int64 (floats truncate;
 * u64 as its bit pattern). */
/* ONNX TensorProto.DataType code -> vinci dtype (-1: none). The one map the
 * operators use (Cast's 'to', EyeLike's 'dtype'). */
int32_t vn_cast_dtype_from_onnx(int64_t code);

double vn_cast_load_f64(vn_dtype dtype, const void *p, int64_t i);
int64_t vn_cast_load_i64(vn_dtype dtype, const void *p, int64_t i);
/* Store `v` as element `i` of an array of `dtype` by the rules above.
 * store_u64 takes an unsigned value (a u64 source going to a float). */
void vn_cast_store_f64(vn_dtype dtype, void *p, int64_t i, double v);
void vn_cast_store_i64(vn_dtype dtype, void *p, int64_t i, int64_t v);
void vn_cast_store_u64(vn_dtype dtype, void *p, int64_t i, uint64_t v);

/* f64 -> f16 / bf16 rounded once to nearest even (through f32 rounded to odd). */
uint16_t vn_cast_f64_to_f16(double v);
uint16_t vn_cast_f64_to_bf16(double v);

static inline bool vn_cast_is_float(vn_dtype d)
{
    return d == VN_F32 || d == VN_F16 || d == VN_BF16 || d == VN_F64;
}

static inline bool vn_cast_is_u64(vn_dtype d)
{
    return d == VN_U64;
}

/* Every dtype vinci has. */
#define VN_DTYPES_ALL ((1u << VN_DTYPE_COUNT) - 1u)
/* The integer dtypes whose values int64 holds exactly, in order (bool and u64
 * excluded): every kernel that reads integers through vn_cast_load_i64 or
 * vn_cast_load_f64 takes them. */
#define VN_DTYPES_INT                                                                              \
    (VN_DTYPE_BIT(VN_I8) | VN_DTYPE_BIT(VN_U8) | VN_DTYPE_BIT(VN_I16) | VN_DTYPE_BIT(VN_U16) |     \
     VN_DTYPE_BIT(VN_I32) | VN_DTYPE_BIT(VN_U32) | VN_DTYPE_BIT(VN_I64))
/* f64 and u64, for the operators whose code computes them exactly (in double,
 * in uint64); added to masks one operator at a time. */
#define VN_DTYPES_F64 VN_DTYPE_BIT(VN_F64)
#define VN_DTYPES_U64 VN_DTYPE_BIT(VN_U64)

/* The functions that hand each family's table to the registry. */
const vn_op_def *const *vn_ops_cast_table(int32_t *count);

#endif /* VINCI_OPS_CAST_H */
