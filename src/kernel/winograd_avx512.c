/*
 * winograd_avx512.c — the Winograd F(4x4, 3x3) transforms for AVX-512: one C0
 * block of 16 fp32 channels is one zmm register.
 */
#include "kernel/winograd_kernels.h"
#include "kernel/vec_f32_avx512.h"

#define TABLE_ISA  VN_ISA_AVX512
#define TABLE_NAME vn_wino_table_avx512

#include "kernel/winograd_kernel.inc"
