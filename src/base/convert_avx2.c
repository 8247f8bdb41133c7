/*
 * convert_avx2.c — array conversions with AVX2 + F16C, 8 elements a step.
 *
 * f16 uses the F16C instructions, which round to nearest even, keep f16
 * subnormals and quiet NaNs exactly like the scalar forms. bf16 has no AVX2
 * instruction, so it is the scalar integer rounding done on 8 lanes.
 */
#include <immintrin.h>

#include "base/convert_isa.h"
#include "vinci/base.h"

void vn_f32_to_f16_array_avx2(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    for (; i < n; i++) dst[i] = vn_f32_to_f16(src[i]);
}

void vn_f16_to_f32_array_avx2(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    for (; i < n; i++) dst[i] = vn_f16_to_f32(src[i]);
}

/* Lanes holding a NaN: |x| > Inf as integers (both sides non-negative). */
static __m256i nan_lanes(__m256i u)
{
    __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    return _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
}

/* 8 f32 bit patterns to 8 bf16 in the low 16 bits of each lane. */
static __m256i bf16_round8(__m256i u)
{
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i bias = _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff));
    __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
    __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
    return _mm256_blendv_epi8(rounded, quiet, nan_lanes(u));
}

void vn_f32_to_bf16_array_avx2(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i b = bf16_round8(_mm256_loadu_si256((const __m256i *)(src + i)));
        /* Lanes are 0..0xffff, so the unsigned-saturating pack is exact. */
        __m128i packed =
            _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
        _mm_storeu_si128((__m128i *)(dst + i), packed);
    }
    for (; i < n; i++) dst[i] = vn_f32_to_bf16(src[i]);
}

void vn_bf16_to_f32_array_avx2(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i)));
        __m256i u = _mm256_slli_epi32(w, 16);
        __m256i quiet = _mm256_and_si256(nan_lanes(u), _mm256_set1_epi32(0x00400000));
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_or_si256(u, quiet));
    }
    for (; i < n; i++) dst[i] = vn_bf16_to_f32(src[i]);
}
