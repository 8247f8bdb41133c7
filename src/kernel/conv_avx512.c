/*
 * conv_avx512.c — the convolution micro-kernels for AVX-512: one C0 block of
 * 16 fp32 channels is exactly one zmm register. Register block: 14 output
 * columns x 2 output blocks = 28 accumulators, 2 weight vectors and one
 * broadcast (31 of 32 zmm).
 */
#include <string.h>

#include "kernel/conv_kernels.h"
#include "kernel/vec_f32_avx512.h"

#define OWB_MAX          14
#define NCB_MAX          2
#define DW_OWB_MAX       8
#define YMM_PAIR_OWB_MAX OWB_MAX /* two-block 1x1 rows whose last block has <= 8 channels */
#define TABLE_NAME       vn_conv_table_avx512
#define TABLE_ISA        VN_ISA_AVX512

/* X(w, ...) for w = 1 .. OWB_MAX, 1 .. DW_OWB_MAX and (two-row blocks) 1 .. OWB_MAX / 2
 * (instantiation lists, conv_kernel.inc) */
// clang-format off
#define OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__) X(8, __VA_ARGS__) X(9, __VA_ARGS__) X(10, __VA_ARGS__) X(11, __VA_ARGS__) X(12, __VA_ARGS__) X(13, __VA_ARGS__) X(14, __VA_ARGS__)
#define DW_OWB_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__) X(8, __VA_ARGS__)
#define OWB2_LIST(X, ...) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__)
// clang-format on

#define DIRECT_ROW_BF16 direct_row_bf16
static void direct_row_bf16(const vn_conv_row_args *a);

#include "kernel/conv_kernel.inc"

/* ---- bf16 direct rows (vdpbf16ps: pairs of input channels, f32 sums) ------ */

static inline __attribute__((always_inline)) void
bf16_store(const vn_conv_row_args *a, __m512 acc[OWB_MAX][NCB_MAX], float *yp, const float *bp,
           const float *rp, const int owb, int c, vn_conv_act act)
{
#pragma GCC unroll 32
    for (int j = 0; j < owb; j++)
        store_vec(yp + j * VN_C0, acc[j][c], bp, rp ? rp + j * VN_C0 : NULL, act, &a->epi);
}

/* One register block: owb columns x ncb output blocks. Per (input block, tap,
 * channel pair) ncb weight vectors (16 co x 2 ci) and one 32-bit broadcast of
 * each column's pair: the f32 kernel's data flow at half the instructions. */
static inline __attribute__((always_inline)) void bf16_block(const vn_conv_row_args *a, int64_t ow0,
                                                             const int owb, const int ncb,
                                                             const int fixed_sw, int64_t kh_lo,
                                                             int64_t kh_hi)
{
    __m512 acc[OWB_MAX][NCB_MAX];
#pragma GCC unroll 32
    for (int j = 0; j < owb; j++)
#pragma GCC unroll 2
        for (int c = 0; c < ncb; c++) acc[j][c] = _mm512_setzero_ps();
    const int64_t sw = fixed_sw ? fixed_sw : a->sw, taps = a->KH * a->KW;
    for (int64_t ib = 0; ib < a->cin_blocks; ib++) {
        const int64_t pairs = ((ib == a->cin_blocks - 1 ? a->ci_last : VN_C0) + 1) / 2;
        const uint16_t *xb = a->x16 + ib * a->x_bstride;
        const uint16_t *wb = a->w16 + ib * taps * VN_C0 * VN_C0;
        for (int64_t kh = kh_lo; kh < kh_hi; kh++) {
            const int64_t row = a->x_row0 + kh * a->x_rstride;
            for (int64_t kw = 0; kw < a->KW; kw++) {
                const uint16_t *xp = xb + (row + ow0 * sw + kw * a->dw) * VN_C0;
                const uint16_t *wp = wb + (kh * a->KW + kw) * VN_C0 * VN_C0;
                if (a->w_cold) prefetch_weights(wp, a->w_bstride * 2, ncb, taps, VN_C0 * VN_C0 * 2);
                for (int64_t cp = 0; cp < pairs; cp++) {
                    __m512bh w[NCB_MAX];
#pragma GCC unroll 2
                    for (int c = 0; c < ncb; c++)
                        w[c] = (__m512bh)_mm512_loadu_si512(wp + c * a->w_bstride + cp * 32);
#pragma GCC unroll 32
                    for (int j = 0; j < owb; j++) {
                        int32_t pair;
                        memcpy(&pair, xp + j * sw * VN_C0 + 2 * cp, 4);
                        __m512bh xv = (__m512bh)_mm512_set1_epi32(pair);
#pragma GCC unroll 2
                        for (int c = 0; c < ncb; c++)
                            acc[j][c] = _mm512_dpbf16_ps(acc[j][c], xv, w[c]);
                    }
                }
            }
        }
    }
#pragma GCC unroll 2
    for (int c = 0; c < ncb; c++) {
        float *yp = a->y + c * a->y_bstride + ow0 * VN_C0;
        const float *bp = a->bias ? a->bias + c * VN_C0 : NULL;
        const float *rp = a->res ? a->res + c * a->res_bstride + ow0 * VN_C0 : NULL;
        WITH_ACT(a->epi.act, bf16_store(a, acc, yp, bp, rp, owb, c, ACT))
        late_act(yp, owb * VN_C0, &a->epi);
    }
}

typedef void (*bf16_block_fn)(const vn_conv_row_args *a, int64_t ow0, int64_t kh_lo, int64_t kh_hi);

#define BF16_BLOCK(OWB, NCB)                                                                       \
    static void bf16_##OWB##_##NCB(const vn_conv_row_args *a, int64_t ow0, int64_t kh_lo,          \
                                   int64_t kh_hi)                                                  \
    {                                                                                              \
        bf16_block(a, ow0, OWB, NCB, 0, kh_lo, kh_hi);                                             \
    }                                                                                              \
    static void bf16u_##OWB##_##NCB(const vn_conv_row_args *a, int64_t ow0, int64_t kh_lo,         \
                                    int64_t kh_hi)                                                 \
    {                                                                                              \
        bf16_block(a, ow0, OWB, NCB, 1, kh_lo, kh_hi);                                             \
    }
#define BF16_ENTRY(OWB, NCB)  bf16_##OWB##_##NCB,
#define BF16U_ENTRY(OWB, NCB) bf16u_##OWB##_##NCB,
OWB_LIST(BF16_BLOCK, 1)
OWB_LIST(BF16_BLOCK, 2)
static const bf16_block_fn bf16_blocks[2][NCB_MAX][OWB_MAX] = {
    {{OWB_LIST(BF16_ENTRY, 1)}, {OWB_LIST(BF16_ENTRY, 2)}},
    {{OWB_LIST(BF16U_ENTRY, 1)}, {OWB_LIST(BF16U_ENTRY, 2)}},
};

/* Every column is interior (the input copy carries its padding): blocks of
 * OWB_MAX columns, then one block of the rest. */
static void direct_row_bf16(const vn_conv_row_args *a)
{
    int64_t kh_lo, kh_hi;
    tap_range(a->ih0, a->KH, a->dh, a->IH, &kh_lo, &kh_hi);
    const bf16_block_fn *fns = bf16_blocks[a->sw == 1][a->ncb - 1];
    vn_conv_row_args args = *a; /* the first block warms the weights for the others */
    for (int64_t ow = 0; ow < a->OW; ow += OWB_MAX) {
        int64_t n = a->OW - ow < OWB_MAX ? a->OW - ow : OWB_MAX;
        fns[n - 1](&args, ow, kh_lo, kh_hi);
        args.w_cold = false;
    }
}
