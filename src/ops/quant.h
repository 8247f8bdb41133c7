/*
 * quant.h — the quantization family: QuantizeLinear, DequantizeLinear
 * (quantize.c), DynamicQuantizeLinear (quantize_dynamic.c), ConvInteger and
 * QLinearConv (conv_integer.c), InstanceNormalization and
 * GroupNormalization (group_norm.c), gathered into one registry table by
 * quant_table.c.
 */
#ifndef VINCI_OPS_QUANT_H
#define VINCI_OPS_QUANT_H

#include "ops/shape_ops.h"

extern const vn_op_def vn_quantize_linear_def, vn_dequantize_linear_def,
    vn_dynamic_quantize_linear_def, vn_conv_integer_def, vn_qlinear_conv_def, vn_instance_norm_def,
    vn_group_norm_def;

/* [*lo, *hi] of the integer quantized types u8, i8, u16, i16 (false: other). */
bool vn_quant_int_range(vn_dtype dt, int64_t *lo, int64_t *hi);
/* An integral double clamped to dt's range (NaN: the low end). */
int64_t vn_quant_saturate(double v, vn_dtype dt);

#endif /* VINCI_OPS_QUANT_H */
