/*
 * pool_c0_avx2.c — the direct NC1HWC0 max pool for avx2.
 */
#include "kernel/pool_c0_kernels.h"
#include "kernel/vec_f32_avx2.h"

#define TABLE_ISA  VN_ISA_AVX2
#define TABLE_NAME vn_pool_c0_table_avx2

#include "kernel/pool_c0_kernel.inc"
