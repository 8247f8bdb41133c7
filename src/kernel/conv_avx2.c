/*
 * conv_avx2.c — the convolution micro-kernels for AVX2 + FMA: one C0 block of
 * 16 fp32 channels is two ymm registers. Register block: 6 output columns x
 * 1 output block = 12 accumulators, 2 weight vectors and one broadcast (15
 * of 16 ymm).
 */
#include <immintrin.h>

#include "kernel/conv_kernels.h"

#define V             __m256
#define VL            8
#define VZERO()       _mm256_setzero_ps()
#define VSET1(f)      _mm256_set1_ps(f)
#define VLOAD(p)      _mm256_loadu_ps(p)
#define VSTORE(p, v)  _mm256_storeu_ps(p, v)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b)    _mm256_add_ps(a, b)
#define VMUL(a, b)    _mm256_mul_ps(a, b)
#define VMAX(a, b)    _mm256_max_ps(a, b)
#define VMIN(a, b)    _mm256_min_ps(a, b)
#define OWB_MAX       6
#define NCB_MAX       1
#define DW_OWB_MAX    6
#define TABLE_NAME    vn_conv_table_avx2
#define TABLE_ISA     VN_ISA_AVX2

#include "kernel/conv_kernel.inc"
