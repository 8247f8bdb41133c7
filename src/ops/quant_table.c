/*
 * quant_table.c — the registry table of the operators of quant.h.
 */
#include "ops/quant.h"

const vn_op_def *const *vn_ops_quant_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {
        &vn_quantize_linear_def, &vn_dequantize_linear_def, &vn_dynamic_quantize_linear_def,
        &vn_conv_integer_def,    &vn_qlinear_conv_def,      &vn_instance_norm_def,
        &vn_group_norm_def};
    *count = (int32_t)(sizeof ptrs / sizeof ptrs[0]);
    return ptrs;
}
