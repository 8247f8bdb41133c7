/*
 * convert_isa.h — the per-ISA array conversions behind vn_*_array (internal).
 *
 * Each function converts the whole array; the vector loop handles full vectors
 * and the scalar vn_* forms finish the tail, so every path is bit-identical to
 * the scalar conversions. Only call an ISA's functions when vn_isa_active()
 * allows that ISA: they are compiled with its instruction set.
 */
#ifndef VINCI_SRC_BASE_CONVERT_ISA_H
#define VINCI_SRC_BASE_CONVERT_ISA_H

#include <stddef.h>
#include <stdint.h>

void vn_f32_to_f16_array_avx2(const float *src, uint16_t *dst, size_t n);
void vn_f16_to_f32_array_avx2(const uint16_t *src, float *dst, size_t n);
void vn_f32_to_bf16_array_avx2(const float *src, uint16_t *dst, size_t n);
void vn_bf16_to_f32_array_avx2(const uint16_t *src, float *dst, size_t n);

void vn_f32_to_f16_array_avx512(const float *src, uint16_t *dst, size_t n);
void vn_f16_to_f32_array_avx512(const uint16_t *src, float *dst, size_t n);
void vn_f32_to_bf16_array_avx512(const float *src, uint16_t *dst, size_t n);
void vn_bf16_to_f32_array_avx512(const uint16_t *src, float *dst, size_t n);

#endif /* VINCI_SRC_BASE_CONVERT_ISA_H */
