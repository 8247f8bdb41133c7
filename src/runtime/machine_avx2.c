/*
 * machine_avx2.c — AVX2 + FMA throughput and bandwidth loops for
 * vn_machine_measure (see machine_isa.h).
 */
#include <immintrin.h>

#include "runtime/machine_isa.h"

/* Twelve accumulators plus the two operands use 14 of the 16 ymm registers:
 * written out by hand so none is spilled to memory. */
#define CHAINS_12(OP)                                                                              \
    OP(0);                                                                                         \
    OP(1);                                                                                         \
    OP(2);                                                                                         \
    OP(3);                                                                                         \
    OP(4);                                                                                         \
    OP(5);                                                                                         \
    OP(6);                                                                                         \
    OP(7);                                                                                         \
    OP(8);                                                                                         \
    OP(9);                                                                                         \
    OP(10);                                                                                        \
    OP(11)

_Static_assert(VN_MACHINE_CHAINS == 12, "CHAINS_12 writes out VN_MACHINE_CHAINS chains");

static float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

float vn_machine_fma_avx2(int64_t iters, float a, float b)
{
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
#define DECL(i) __m256 acc##i = _mm256_set1_ps((float)(i + 1))
    CHAINS_12(DECL);
#undef DECL
    for (int64_t it = 0; it < iters; it++) {
#define STEP(i) acc##i = _mm256_fmadd_ps(acc##i, va, vb)
        CHAINS_12(STEP);
#undef STEP
    }
    /* The sum depends on every chain, so none can be dropped. */
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)),
                             _mm256_add_ps(_mm256_add_ps(acc4, acc5), _mm256_add_ps(acc6, acc7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(acc8, acc9), _mm256_add_ps(acc10, acc11)));
    return hsum256(s);
}

/* Eight vectors per iteration so loop overhead stays out of the way of the
 * load / store ports. */
void vn_machine_triad_avx2(float *restrict a, const float *restrict b, const float *restrict c,
                           float s, size_t n)
{
    const __m256 vs = _mm256_set1_ps(s);
    for (size_t i = 0; i < n; i += 64) {
        for (size_t k = 0; k < 64; k += 8) {
            __m256 v = _mm256_fmadd_ps(vs, _mm256_load_ps(c + i + k), _mm256_load_ps(b + i + k));
            _mm256_store_ps(a + i + k, v);
        }
    }
}

void vn_machine_copy_avx2(float *restrict a, const float *restrict b, size_t n)
{
    for (size_t i = 0; i < n; i += 64)
        for (size_t k = 0; k < 64; k += 8) _mm256_store_ps(a + i + k, _mm256_load_ps(b + i + k));
}
