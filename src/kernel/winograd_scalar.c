/*
 * winograd_scalar.c — the Winograd F(4x4, 3x3) transforms for baseline
 * x86-64 (one float per "vector"), and the choice of the active table.
 */
#include "kernel/isa.h"
#include "kernel/winograd_kernels.h"
#include "kernel/vec_f32_scalar.h"

#define TABLE_ISA  VN_ISA_SCALAR
#define TABLE_NAME vn_wino_table_scalar

#include "kernel/winograd_kernel.inc"

const vn_wino_table *vn_wino_table_get(void)
{
    return vn_isa_pick(&vn_wino_table_avx512, &vn_wino_table_avx2, &vn_wino_table_scalar);
}
