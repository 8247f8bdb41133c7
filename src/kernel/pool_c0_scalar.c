/*
 * pool_c0_scalar.c — the direct NC1HWC0 max pool for scalar, and the choice of the active table.
 */
#include "kernel/isa.h"
#include "kernel/pool_c0_kernels.h"
#include "kernel/vec_f32_scalar.h"

#define TABLE_ISA  VN_ISA_SCALAR
#define TABLE_NAME vn_pool_c0_table_scalar

#include "kernel/pool_c0_kernel.inc"

const vn_pool_c0_table *vn_pool_c0_table_get(void)
{
    return vn_isa_pick(&vn_pool_c0_table_avx512, &vn_pool_c0_table_avx2, &vn_pool_c0_table_scalar);
}
