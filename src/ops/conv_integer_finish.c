/*
 * conv_integer_finish.c — ConvInteger / QLinearConv's last step, shared by
 * the scalar loops and the GEMM path: + bias, stored as i32, or requantised
 * by the loop of conv_integer_finish.inc for the active ISA (chosen once).
 */
#include "ops/conv_integer.h"

#define CI_FINISH_NAME vn_ci_finish_scalar
#include "ops/conv_integer_finish.inc"

void vn_ci_finish_avx2(const ci_channel *c, bool u8, void *y, const int32_t *acc, int64_t n);
void vn_ci_finish_avx512(const ci_channel *c, bool u8, void *y, const int32_t *acc, int64_t n);

typedef void (*ci_finish_fn)(const ci_channel *c, bool u8, void *y, const int32_t *acc, int64_t n);

static ci_finish_fn ci_finish_of(vn_isa isa)
{
    return isa == VN_ISA_AVX512 ? vn_ci_finish_avx512
           : isa == VN_ISA_AVX2 ? vn_ci_finish_avx2
                                : vn_ci_finish_scalar;
}

/* The sums are i32, wrapped as the spec's accumulator: + bias in i32
 * arithmetic. */
void vn_ci_finish(const ci_plan *p, const ci_channel *c, void *y, int64_t e, const int32_t *acc,
                  int64_t n)
{
    if (!c->q) {
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)y)[e + i] = (int32_t)((uint32_t)acc[i] + (uint32_t)c->b);
        return;
    }
    ci_finish_of(vn_isa_active())(c, p->ydt == VN_U8, (uint8_t *)y + e, acc, n);
}
