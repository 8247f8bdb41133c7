/*
 * conv_avx2.c — the convolution micro-kernels for AVX2 + FMA: one C0 block of
 * 16 fp32 channels is two ymm registers. Direct register blocks: 6 output
 * columns x 1 output block or 3 columns x 2 blocks = 12 accumulators, 2 or 4
 * weight vectors and one broadcast (15 or 16 of 16 ymm). 3 x 2 serves 1x1
 * kernels (bench_conv 1 thread vs oneDNN: 1x1 256>1024@14 0.83 -> 0.85x, pw
 * 24>144@56 0.74 -> 0.78x, 384>64@14 0.82 -> 0.87x); k x k kernels and
 * Winograd keep 6 x 1, whose weights serve twice the columns (3x3 512@7
 * 0.97x, 0.84x with 3 x 2). The 3x3 depthwise
 * block (one ymm half of the channels at a time) keeps 8 columns' sums, its
 * row's 3 weight vectors and the input vector in 12.
 */
#include "kernel/conv_kernels.h"
#include "kernel/vec_f32_avx2.h"

#define OWB_MAX     6
#define NCB_MAX     2 /* 1x1 kernels: 3 x 2 blocks */
#define OWB_NCB2    3
#define NCB_MAX_KXK 1 /* k x k and Winograd: 6 x 1 */
#define DW_OWB_MAX  6
#define DW3_OWB_MAX 8
#define TABLE_NAME  vn_conv_table_avx2
#define TABLE_ISA   VN_ISA_AVX2

/* X(w, ...) for w = 1 .. OWB_MAX, 1 .. OWB_NCB2, 1 .. DW3_OWB_MAX and 1 ..
 * DW_OWB_MAX (instantiation lists, conv_kernel.inc) */
// clang-format off
#define OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__)
#define OWB_NCB2_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__)
#define DW3_OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__) X(8, __VA_ARGS__)
#define DW_OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__)
// clang-format on

#include "kernel/conv_kernel.inc"
