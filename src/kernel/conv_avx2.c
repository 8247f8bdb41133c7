/*
 * conv_avx2.c — the convolution micro-kernels for AVX2 + FMA: one C0 block of
 * 16 fp32 channels is two ymm registers. Register block: 6 output columns x
 * 1 output block = 12 accumulators, 2 weight vectors and one broadcast (15
 * of 16 ymm).
 */
#include "kernel/conv_kernels.h"
#include "kernel/vec_f32_avx2.h"

#define OWB_MAX    6
#define NCB_MAX    1
#define DW_OWB_MAX 6
#define TABLE_NAME vn_conv_table_avx2
#define TABLE_ISA  VN_ISA_AVX2

/* X(w, ...) for w = 1 .. OWB_MAX, and 1 .. DW_OWB_MAX (instantiation lists,
 * conv_kernel.inc) */
// clang-format off
#define OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__)
#define DW_OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__)
// clang-format on

#include "kernel/conv_kernel.inc"
