/*
 * pool_c0_avx512.c — the direct NC1HWC0 max pool for avx512.
 */
#include "kernel/pool_c0_kernels.h"
#include "kernel/vec_f32_avx512.h"

#define TABLE_ISA  VN_ISA_AVX512
#define TABLE_NAME vn_pool_c0_table_avx512

#include "kernel/pool_c0_kernel.inc"
