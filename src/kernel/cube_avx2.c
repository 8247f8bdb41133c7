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
#include "kernel/cube_pack_rows.inc"

CUBE_GENERIC_ENTRIES(6, 16)

#define ROW(r)                                                                                     \
    {                                                                                              \
        __m256 ar = _mm256_broadcast_ss(((r) < 3 ? a0 : a3) + ((r) % 3) * lda);                    \
        c##r##0 = _mm256_fmadd_ps(ar, b0, c##r##0);                                                \
        c##r##1 = _mm256_fmadd_ps(ar, b1, c##r##1);                                                \
    }

/* C tile 6 x 16 (rows ldc apart) += A (6 rows lda apart) * B panel (k x 16). */
static void ukr_f32_6x16(int64_t kg, const void *a_, int64_t lda, const void *b_, int64_t ldb,
                         void *c_, int64_t ldc, int acc, const char *pf, int64_t npf)
{
    const float *a0 = a_, *a3 = a0 + 3 * lda, *b = b_;
    float *c = c_;
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
    if (acc) {
        c00 = _mm256_loadu_ps(c), c01 = _mm256_loadu_ps(c + 8);
        c10 = _mm256_loadu_ps(c + ldc), c11 = _mm256_loadu_ps(c + ldc + 8);
        c20 = _mm256_loadu_ps(c + 2 * ldc), c21 = _mm256_loadu_ps(c + 2 * ldc + 8);
        c30 = _mm256_loadu_ps(c + 3 * ldc), c31 = _mm256_loadu_ps(c + 3 * ldc + 8);
        c40 = _mm256_loadu_ps(c + 4 * ldc), c41 = _mm256_loadu_ps(c + 4 * ldc + 8);
        c50 = _mm256_loadu_ps(c + 5 * ldc), c51 = _mm256_loadu_ps(c + 5 * ldc + 8);
    } else {
        c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < kg; k++, a0++, a3++, b += ldb) {
        if (k < npf) _mm_prefetch(pf + 64 * k, _MM_HINT_T1); /* the next tile, to L2 */
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5)
    }
    _mm256_storeu_ps(c, c00), _mm256_storeu_ps(c + 8, c01);
    _mm256_storeu_ps(c + ldc, c10), _mm256_storeu_ps(c + ldc + 8, c11);
    _mm256_storeu_ps(c + 2 * ldc, c20), _mm256_storeu_ps(c + 2 * ldc + 8, c21);
    _mm256_storeu_ps(c + 3 * ldc, c30), _mm256_storeu_ps(c + 3 * ldc + 8, c31);
    _mm256_storeu_ps(c + 4 * ldc, c40), _mm256_storeu_ps(c + 4 * ldc + 8, c41);
    _mm256_storeu_ps(c + 5 * ldc, c50), _mm256_storeu_ps(c + 5 * ldc + 8, c51);
}

const vn_cube_table vn_cube_table_avx2 = {
    .isa = VN_ISA_AVX2,
    .shape = {{6, 16, 1}, {6, 16, 2}, {6, 16, 4}},
    .ukr = {ukr_f32_6x16, cube_gen_bf16_6x16, cube_gen_i8_6x16},
    .gemv_rows = cube_gemv_rows,
    .gemv_panels = cube_gemv_panels,
    .gemv_trans = cube_gemv_trans,
    .pack_b_rows = cube_pack_b_rows,
};
