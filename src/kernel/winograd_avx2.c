/*
 * winograd_avx2.c — the Winograd F(4x4, 3x3) transforms for AVX2 + FMA: one
 * C0 block of 16 fp32 channels is two ymm registers.
 */
#include "kernel/winograd_kernels.h"
#include "kernel/vec_f32_avx2.h"

#define TABLE_ISA  VN_ISA_AVX2
#define TABLE_NAME vn_wino_table_avx2

#include "kernel/winograd_kernel.inc"
