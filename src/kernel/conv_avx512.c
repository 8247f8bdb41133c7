/*
 * conv_avx512.c — the convolution micro-kernels for AVX-512: one C0 block of
 * 16 fp32 channels is exactly one zmm register. Register block: 14 output
 * columns x 2 output blocks = 28 accumulators, 2 weight vectors and one
 * broadcast (31 of 32 zmm).
 */
#include "kernel/conv_kernels.h"
#include "kernel/vec_f32_avx512.h"

#define OWB_MAX    14
#define NCB_MAX    2
#define DW_OWB_MAX 8
#define TABLE_NAME vn_conv_table_avx512
#define TABLE_ISA  VN_ISA_AVX512

#include "kernel/conv_kernel.inc"
