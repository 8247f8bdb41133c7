/*
 * winograd_avx2.c — the Winograd F(4x4, 3x3) transforms for AVX2 + FMA: one
 * C0 block of 16 fp32 channels is two ymm registers.
 */
#include <immintrin.h>

#include "kernel/winograd_kernels.h"

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
#define TABLE_ISA     VN_ISA_AVX2
#define VSUB(a, b)    _mm256_sub_ps(a, b)
#define TABLE_NAME    vn_wino_table_avx2

#include "kernel/winograd_kernel.inc"
