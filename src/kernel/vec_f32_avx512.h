/*
 * vec_f32_avx512.h — the f32 vector macros the register-blocked kernel
 * templates (conv_kernel.inc, winograd_kernel.inc) are written in, for
 * AVX-512: one vector is a zmm register (16 floats). Included by the *_avx512.c files that
 * instantiate a template.
 */
#ifndef VINCI_KERNEL_VEC_F32_AVX512_H
#define VINCI_KERNEL_VEC_F32_AVX512_H

#include <immintrin.h>

#define V             __m512
#define VL            16
#define VZERO()       _mm512_setzero_ps()
#define VSET1(f)      _mm512_set1_ps(f)
#define VLOAD(p)      _mm512_loadu_ps(p)
#define VSTORE(p, v)  _mm512_storeu_ps(p, v)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b)    _mm512_add_ps(a, b)
#define VSUB(a, b)    _mm512_sub_ps(a, b)
#define VMUL(a, b)    _mm512_mul_ps(a, b)
#define VMAX(a, b)    _mm512_max_ps(a, b)
#define VMIN(a, b)    _mm512_min_ps(a, b)
/* Keep v in a register: the compiler may not fold its load into each of
 * its uses (one load per use where one would do). */
#define VKEEP(v) __asm__("" : "+v"(v))

#endif
