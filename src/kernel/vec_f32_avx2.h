/*
 * vec_f32_avx2.h — the f32 vector macros the register-blocked kernel
 * templates (conv_kernel.inc, winograd_kernel.inc) are written in, for
 * AVX2 + FMA: one vector is a ymm register (8 floats). Included by the *_avx2.c files that
 * instantiate a template.
 */
#ifndef VINCI_KERNEL_VEC_F32_AVX2_H
#define VINCI_KERNEL_VEC_F32_AVX2_H

#include <immintrin.h>

#define V             __m256
#define VL            8
#define VZERO()       _mm256_setzero_ps()
#define VSET1(f)      _mm256_set1_ps(f)
#define VLOAD(p)      _mm256_loadu_ps(p)
#define VSTORE(p, v)  _mm256_storeu_ps(p, v)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b)    _mm256_add_ps(a, b)
#define VSUB(a, b)    _mm256_sub_ps(a, b)
#define VMUL(a, b)    _mm256_mul_ps(a, b)
#define VMAX(a, b)    _mm256_max_ps(a, b)
#define VMIN(a, b)    _mm256_min_ps(a, b)
/* Keep v in a register: the compiler may not fold its load into each of
 * its uses (one load per use where one would do). */
#define VKEEP(v) __asm__("" : "+x"(v))

#endif
