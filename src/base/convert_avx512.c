/*
 * convert_avx512.c — array conversions with AVX-512, 16 elements a step.
 *
 * f16 uses vcvtps2ph / vcvtph2ps (round to nearest even, exact subnormals,
 * quiet NaNs), matching the scalar forms. bf16 deliberately avoids
 * vcvtneps2bf16: it flushes f32 denormals to zero, which the exact scalar form
 * does not, so the rounding is done with integer ops instead.
 */
#include <immintrin.h>

#include "base/convert_isa.h"
#include "vinci/base.h"

void vn_f32_to_f16_array_avx512(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(src + i),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_storeu_si256((__m256i *)(dst + i), h);
    }
    for (; i < n; i++) dst[i] = vn_f32_to_f16(src[i]);
}

void vn_f16_to_f32_array_avx512(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(src + i))));
    for (; i < n; i++) dst[i] = vn_f16_to_f32(src[i]);
}

/* Lanes holding a NaN: |x| > Inf as integers (both sides non-negative). */
static __mmask16 nan_lanes(__m512i u)
{
    __m512i a = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    return _mm512_cmpgt_epi32_mask(a, _mm512_set1_epi32(0x7f800000));
}

void vn_f32_to_bf16_array_avx512(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i u = _mm512_loadu_si512(src + i);
        __m512i hi = _mm512_srli_epi32(u, 16);
        __m512i bias =
            _mm512_add_epi32(_mm512_and_si512(hi, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7fff));
        __m512i b = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
        b = _mm512_mask_or_epi32(b, nan_lanes(u), hi, _mm512_set1_epi32(0x40));
        /* vpmovdw truncates each lane to its low 16 bits, where the result is. */
        _mm256_storeu_si256((__m256i *)(dst + i), _mm512_cvtepi32_epi16(b));
    }
    for (; i < n; i++) dst[i] = vn_f32_to_bf16(src[i]);
}

void vn_bf16_to_f32_array_avx512(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(src + i)));
        __m512i u = _mm512_slli_epi32(w, 16);
        u = _mm512_mask_or_epi32(u, nan_lanes(u), u, _mm512_set1_epi32(0x00400000));
        _mm512_storeu_si512(dst + i, u);
    }
    for (; i < n; i++) dst[i] = vn_bf16_to_f32(src[i]);
}
