/*
 * conv_avx2.c — the convolution micro-kernels for AVX2 + FMA: one C0 block of
 * 16 fp32 channels is two ymm registers. Register block: 6 output columns x
 * 1 output block = 12 accumulators, 2 weight vectors and one broadcast (15
 * of 16 ymm); 3 columns x 2 blocks measured no faster for 1x1 and slower for
 * 3x3 (bench_conv, Zen 3). The 3x3 depthwise block (one ymm half of the
 * channels at a time) keeps 12 columns' sums and its row's 3 weight vectors
 * in 15, the inputs read by the FMAs (6 columns: dw 32@112 0.58-0.71x
 * oneDNN, 8: 0.92x; 12: 4 % faster again than 8, its 12 FMA chains hide
 * the latency that 8 barely cover).
 */
#include "kernel/conv_kernels.h"
#include "kernel/vec_f32_avx2.h"

#define OWB_MAX             6
#define NCB_MAX             1
#define DW_OWB_MAX          6
#define DW3_OWB_MAX         12
#define POINTWISE_CI_UNROLL 16 /* conv_kernel.inc, pointwise_channels */
/* Maps at most 7 wide run tiles of two rows, in blocks of 3 + 2 + 2 columns
 * of both rows (12, 8, 8 accumulators) instead of 4 + 3 per row: a 3-column
 * block's 6 FMA chains cannot hide the FMA latency on both pipes. */
#define ROWS2_MAX_OW 7
/* A 1x1 output block with at most 8 real channels computes one ymm of it:
 * 12 columns (12 accumulators, as a full 6-column block has) */
#define HALF_OWB_MAX 12
/* ... and a 1x1 pair of a full output block and such a last one 4 columns
 * of 3 vectors (12 accumulators, 3 weight vectors, one broadcast) */
#define HALF_PAIR_OWB_MAX 4
#define TABLE_NAME        vn_conv_table_avx2
#define TABLE_ISA         VN_ISA_AVX2

/* X(w, ...) for w = 1 .. OWB_MAX, 1 .. DW3_OWB_MAX and 1 .. DW_OWB_MAX
 * (instantiation lists, conv_kernel.inc) */
// clang-format off
#define OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__)
#define DW3_OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__) X(8, __VA_ARGS__) X(9, __VA_ARGS__) X(10, __VA_ARGS__) X(11, __VA_ARGS__) X(12, __VA_ARGS__)
#define HALF_OWB_LIST(X, ...) DW3_OWB_LIST(X, __VA_ARGS__)
#define HALF_PAIR_OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__)
#define OWB2_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__)
#define DW_OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__)
// clang-format on

#include "kernel/conv_kernel.inc"
