/*
 * machine_avx512.c — AVX-512 throughput and bandwidth loops for
 * vn_machine_measure (see machine_isa.h). Compiled with AVX-512 F/BW/DQ/VL,
 * BF16 and VNNI: call only when the CPU has them.
 */
#include <immintrin.h>

#include "runtime/machine_isa.h"

/* The chains are written out by hand (not as an array the compiler may keep in
 * memory) so all twelve accumulators stay in zmm registers. */
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

float vn_machine_fma_avx512(int64_t iters, float a, float b)
{
    const __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
#define DECL(i) __m512 acc##i = _mm512_set1_ps((float)(i + 1))
    CHAINS_12(DECL);
#undef DECL
    for (int64_t it = 0; it < iters; it++) {
#define STEP(i) acc##i = _mm512_fmadd_ps(acc##i, va, vb)
        CHAINS_12(STEP);
#undef STEP
    }
    /* The sum depends on every chain, so none can be dropped. */
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)),
                             _mm512_add_ps(_mm512_add_ps(acc4, acc5), _mm512_add_ps(acc6, acc7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(acc8, acc9), _mm512_add_ps(acc10, acc11)));
    return _mm512_reduce_add_ps(s);
}

float vn_machine_bf16_avx512(int64_t iters, uint32_t a, uint32_t b)
{
    const __m512bh va = (__m512bh)_mm512_set1_epi32((int32_t)a);
    const __m512bh vb = (__m512bh)_mm512_set1_epi32((int32_t)b);
#define DECL(i) __m512 acc##i = _mm512_set1_ps((float)(i + 1))
    CHAINS_12(DECL);
#undef DECL
    for (int64_t it = 0; it < iters; it++) {
#define STEP(i) acc##i = _mm512_dpbf16_ps(acc##i, va, vb)
        CHAINS_12(STEP);
#undef STEP
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)),
                             _mm512_add_ps(_mm512_add_ps(acc4, acc5), _mm512_add_ps(acc6, acc7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(acc8, acc9), _mm512_add_ps(acc10, acc11)));
    return _mm512_reduce_add_ps(s);
}

int32_t vn_machine_int8_avx512(int64_t iters, uint32_t a, uint32_t b)
{
    const __m512i va = _mm512_set1_epi32((int32_t)a), vb = _mm512_set1_epi32((int32_t)b);
#define DECL(i) __m512i acc##i = _mm512_set1_epi32(i + 1)
    CHAINS_12(DECL);
#undef DECL
    for (int64_t it = 0; it < iters; it++) {
#define STEP(i) acc##i = _mm512_dpbusd_epi32(acc##i, va, vb)
        CHAINS_12(STEP);
#undef STEP
    }
    __m512i s = _mm512_add_epi32(
        _mm512_add_epi32(_mm512_add_epi32(acc0, acc1), _mm512_add_epi32(acc2, acc3)),
        _mm512_add_epi32(_mm512_add_epi32(acc4, acc5), _mm512_add_epi32(acc6, acc7)));
    s = _mm512_add_epi32(
        s, _mm512_add_epi32(_mm512_add_epi32(acc8, acc9), _mm512_add_epi32(acc10, acc11)));
    return _mm512_reduce_add_epi32(s);
}

/* Four vectors per iteration so loop overhead stays out of the way of the
 * load / store ports. */
void vn_machine_triad_avx512(float *restrict a, const float *restrict b, const float *restrict c,
                             float s, size_t n)
{
    const __m512 vs = _mm512_set1_ps(s);
    for (size_t i = 0; i < n; i += 64) {
        for (size_t k = 0; k < 64; k += 16) {
            __m512 v = _mm512_fmadd_ps(vs, _mm512_load_ps(c + i + k), _mm512_load_ps(b + i + k));
            _mm512_store_ps(a + i + k, v);
        }
    }
}

void vn_machine_copy_avx512(float *restrict a, const float *restrict b, size_t n)
{
    for (size_t i = 0; i < n; i += 64)
        for (size_t k = 0; k < 64; k += 16) _mm512_store_ps(a + i + k, _mm512_load_ps(b + i + k));
}
