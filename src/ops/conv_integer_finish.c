/*
 * conv_integer_finish.c — ConvInteger / QLinearConv's last step, shared by
 * the scalar loops and the GEMM path: + bias, stored as i32, or requantised
 * by the loop of conv_integer_finish.inc for the active ISA (chosen once).
 */
#include "ops/conv_integer.h"

#define CI_FINISH_NAME vn_ci_requant_scalar
#include "ops/conv_integer_finish.inc"

void vn_ci_requant_avx2(const int32_t *acc, const int32_t *b, const double *m, bool per_elem,
                        double zp, bool u8, void *y, int64_t n);
void vn_ci_requant_avx512(const int32_t *acc, const int32_t *b, const double *m, bool per_elem,
                          double zp, bool u8, void *y, int64_t n);

void vn_ci_requant(const int32_t *acc, const int32_t *b, const double *m, bool per_elem, double zp,
                   bool u8, void *y, int64_t n)
{
    vn_isa isa = vn_isa_active();
    if (isa == VN_ISA_AVX512)
        vn_ci_requant_avx512(acc, b, m, per_elem, zp, u8, y, n);
    else if (isa == VN_ISA_AVX2)
        vn_ci_requant_avx2(acc, b, m, per_elem, zp, u8, y, n);
    else
        vn_ci_requant_scalar(acc, b, m, per_elem, zp, u8, y, n);
}

/* The sums are i32, wrapped as the spec's accumulator: + bias in i32
 * arithmetic. */
void vn_ci_finish(const ci_plan *p, const ci_channel *c, void *y, int64_t e, const int32_t *acc,
                  int64_t n)
{
    int32_t b = (int32_t)c->b;
    if (!c->q) {
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)y)[e + i] = (int32_t)((uint32_t)acc[i] + (uint32_t)b);
        return;
    }
    vn_ci_requant(acc, &b, &c->m, false, c->yzp, p->ydt == VN_U8, (uint8_t *)y + e, n);
}
