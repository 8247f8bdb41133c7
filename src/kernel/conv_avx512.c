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

/* X(owb, ...) for owb = 1 .. OWB_MAX (instantiation lists, conv_kernel.inc) */
#define OWB_LIST(X, ...)                                                                           \
    X(1, __VA_ARGS__)                                                                              \
    X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__)      \
        X(7, __VA_ARGS__) X(8, __VA_ARGS__) X(9, __VA_ARGS__) X(10, __VA_ARGS__)                   \
            X(11, __VA_ARGS__) X(12, __VA_ARGS__) X(13, __VA_ARGS__) X(14, __VA_ARGS__)

#include "kernel/conv_kernel.inc"
