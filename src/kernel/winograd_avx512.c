/*
 * winograd_avx512.c — the Winograd F(4x4, 3x3) transforms for AVX-512: one C0
 * block of 16 fp32 channels is one zmm register.
 */
#include <immintrin.h>

#include "kernel/winograd_kernels.h"

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
#define TABLE_ISA     VN_ISA_AVX512
#define VSUB(a, b)    _mm512_sub_ps(a, b)
#define TABLE_NAME    vn_wino_table_avx512

#include "kernel/winograd_kernel.inc"
