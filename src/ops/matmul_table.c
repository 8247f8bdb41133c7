/*
 * matmul_table.c — the matrix operator family's table for the registry
 * (MatMul, Gemm, MatMulInteger, QLinearMatMul, vinci::FusedMatMul).
 */
#include "ops/matmul.h"

const vn_op_def *const *vn_ops_matmul_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&vn_matmul_def, &vn_gemm_op_def, &vn_matmul_integer_def,
                                            &vn_qlinear_matmul_def, &vn_fused_matmul_def};
    *count = (int32_t)(sizeof ptrs / sizeof ptrs[0]);
    return ptrs;
}
