/*
 * conv_avx512.c — the convolution micro-kernels for AVX-512: one C0 block of
 * 16 fp32 channels is exactly one zmm register. Register block: 14 output
 * columns x 2 output blocks = 28 accumulators, 2 weight vectors and one
 * broadcast (31 of 32 zmm).
 */
#include <immintrin.h>

#include "kernel/conv_kernels.h"

#define V             __m512
#define VL            16
#define VZERO()       _mm512_setzero_ps()
#define VSET1(f)      _mm512_set1_ps(f)
#define VLOAD(p)      _mm512_loadu_ps(p)
#define VSTORE(p, v)  _mm512_storeu_ps(p, v)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b)    _mm512_add_ps(a, b)
#define VMUL(a, b)    _mm512_mul_ps(a, b)
#define VMAX(a, b)    _mm512_max_ps(a, b)
#define VMIN(a, b)    _mm512_min_ps(a, b)
#define OWB_MAX       14
#define NCB_MAX       2
#define DW_OWB_MAX    8
#define TABLE_NAME    vn_conv_table_avx512
#define TABLE_ISA     VN_ISA_AVX512

#include "kernel/conv_kernel.inc"
