/*
 * cube_avx2.c — the AVX2 + FMA cube table: an f32 6 x 16 micro-kernel (12 ymm
 * accumulators, A broadcast, two B vectors per k); bf16 and int8 use the
 * generic kernels (AVX2 has neither vdpbf16ps nor a non-saturating u8 x s8
 * dot product), vectorised by the compiler at this file's ISA.
 */
#include <immintrin.h>
#include <string.h>

#include "kernel/cube_internal.h"

#include "kernel/cube_generic.inc"

CUBE_GENERIC_ENTRIES(6, 16)

#define ROW(r)                                                                                     \
    {                                                                                              \
        __m256 ar = _mm256_broadcast_ss(a + r);                                                    \
        c##r##0 = _mm256_fmadd_ps(ar, b0, c##r##0);                                                \
        c##r##1 = _mm256_fmadd_ps(ar, b1, c##r##1);                                                \
    }

/* C tile 6 x 16 (row-major) += A panel (k x 6) * B panel (k x 16). */
static void ukr_f32_6x16(int64_t kg, const void *a_, const void *b_, void *c_, int acc)
{
    const float *a = a_, *b = b_;
    float *c = c_;
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    if (acc) {
        c00 = _mm256_loadu_ps(c + 0), c01 = _mm256_loadu_ps(c + 8);
        c10 = _mm256_loadu_ps(c + 16), c11 = _mm256_loadu_ps(c + 24);
        c20 = _mm256_loadu_ps(c + 32), c21 = _mm256_loadu_ps(c + 40);
        c30 = _mm256_loadu_ps(c + 48), c31 = _mm256_loadu_ps(c + 56);
        c40 = _mm256_loadu_ps(c + 64), c41 = _mm256_loadu_ps(c + 72);
        c50 = _mm256_loadu_ps(c + 80), c51 = _mm256_loadu_ps(c + 88);
    } else {
        c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < kg; k++, a += 6, b += 16) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5)
    }
    _mm256_storeu_ps(c + 0, c00), _mm256_storeu_ps(c + 8, c01);
    _mm256_storeu_ps(c + 16, c10), _mm256_storeu_ps(c + 24, c11);
    _mm256_storeu_ps(c + 32, c20), _mm256_storeu_ps(c + 40, c21);
    _mm256_storeu_ps(c + 48, c30), _mm256_storeu_ps(c + 56, c31);
    _mm256_storeu_ps(c + 64, c40), _mm256_storeu_ps(c + 72, c41);
    _mm256_storeu_ps(c + 80, c50), _mm256_storeu_ps(c + 88, c51);
}

const vn_cube_table vn_cube_table_avx2 = {
    .isa = VN_ISA_AVX2,
    .shape = {{6, 16, 1}, {6, 16, 2}, {6, 16, 4}},
    .ukr = {ukr_f32_6x16, cube_gen_bf16_6x16, cube_gen_i8_6x16},
    .gemv_rows = cube_gemv_rows,
};
