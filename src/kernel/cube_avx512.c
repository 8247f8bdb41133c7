/*
 * cube_avx512.c — the AVX-512 cube table: 12 x 32 micro-kernels with 24 zmm
 * accumulators (MLAS-like: each k broadcasts 12 A values and loads two B
 * vectors, 24 FMAs per 14 loads, leaving the two FMA ports the bottleneck).
 * A is read as 12 rows lda apart through three row pointers (rows 0, 4, 8)
 * and the strides 1-3 x lda, which x86 addressing covers without extra adds:
 *   f32   vfmadd231ps, one k per step;
 *   bf16  vdpbf16ps, a pair of k per step (A pair broadcast as 32 bits);
 *   int8  vpdpbusd (u8 x s8 -> s32), a quad of k per step.
 * Without AVX512_BF16 / VNNI the table falls back to generic kernels of the
 * same shape (cube_table.c), so packed layouts do not change.
 */
#include <immintrin.h>
#include <string.h>

#include "kernel/cube_internal.h"

#include "kernel/cube_generic.inc"
#include "kernel/cube_pack_rows.inc"

CUBE_GENERIC_ENTRIES(12, 32)

/* The accumulators as named registers (GCC keeps them in zmm0..23), listed
 * per kernel height: ROWS12 for the full 12 x 32 kernels, ROWS8 / ROWS4 for
 * the kernels of a last micro-panel with at most 8 / 4 valid rows (M = 128
 * is ten panels of 12 and one of 8: computing that one as 12 would waste 3 %
 * of the product). Every height runs the same chain per element, so a row
 * gets the same bits whichever kernel computes it. */
#define ROWS4(F)  F(0, c00, c01) F(1, c10, c11) F(2, c20, c21) F(3, c30, c31)
#define ROWS8(F)  ROWS4(F) F(4, c40, c41) F(5, c50, c51) F(6, c60, c61) F(7, c70, c71)
#define ROWS12(F) ROWS8(F) F(8, c80, c81) F(9, c90, c91) F(10, ca0, ca1) F(11, cb0, cb1)

#define DECL_PS(r, x0, x1)  __m512 x0, x1;
#define DECL_EPI(r, x0, x1) __m512i x0, x1;
#define LOAD_PS(r, x0, x1)                                                                         \
    x0 = _mm512_loadu_ps(c + ldc * r), x1 = _mm512_loadu_ps(c + ldc * r + 16);
#define ZERO_PS(r, x0, x1) x0 = _mm512_setzero_ps(), x1 = _mm512_setzero_ps();
#define STORE_PS(r, x0, x1)                                                                        \
    _mm512_storeu_ps(c + ldc * r, x0), _mm512_storeu_ps(c + ldc * r + 16, x1);
/* Row r of A at the current k: a0/a4/a8 point at rows 0, 4, 8 (a4 and a8
 * are only dereferenced by the kernels tall enough to have those rows). */
#define A_ROW(r) ((r) < 4 ? a0 : (r) < 8 ? a4 : a8) + ((r) % 4) * lda
#define FMA_ROW(r, x0, x1)                                                                         \
    {                                                                                              \
        __m512 ar = _mm512_set1_ps(*(A_ROW(r)));                                                   \
        x0 = _mm512_fmadd_ps(ar, b0, x0);                                                          \
        x1 = _mm512_fmadd_ps(ar, b1, x1);                                                          \
    }

/* How many k steps ahead the f32 kernel prefetches B (8: 1 KiB). */
#define UKR_PF_K 8

/* One micro-kernel of height ROWS: A elements of type AT (KP per k group),
 * B of type BT, C of CT with accumulators of kind ACC (PS: __m512, EPI:
 * __m512i); STEP(ROWS) loads this k group's two B vectors (b0, b1) and
 * updates every row. The three kinds differ only there. */
#define UKR(NAME, ROWS, AT, BT, CT, KP, ACC, STEP)                                                 \
    static void NAME(int64_t kg, const void *a_, int64_t lda, const void *b_, int64_t ldb,         \
                     void *c_, int64_t ldc, int acc, const char *pf, int64_t npf)                  \
    {                                                                                              \
        const AT *a0 = a_, *a4 = a0 + 4 * lda, *a8 = a0 + 8 * lda;                                 \
        const BT *b = b_;                                                                          \
        CT *c = c_;                                                                                \
        (void)a4, (void)a8;                                                                        \
        ROWS(DECL_##ACC)                                                                           \
        if (acc) {                                                                                 \
            ROWS(LOAD_##ACC)                                                                       \
        } else {                                                                                   \
            ROWS(ZERO_##ACC)                                                                       \
        }                                                                                          \
        for (int64_t k = 0; k < kg; k++, a0 += KP, a4 += KP, a8 += KP, b += ldb) {                 \
            vn_ukr_next_tile_pf(pf, npf, k);                                                       \
            STEP(ROWS)                                                                             \
        }                                                                                          \
        ROWS(STORE_##ACC)                                                                          \
    }

/* f32: B streams from L2 (or a pre-packed B from memory): ask for it
 * UKR_PF_K steps ahead, past what the L1 next-line prefetch covers. */
#define F32_STEP(ROWS)                                                                             \
    _mm_prefetch((const char *)(b + ldb * UKR_PF_K), _MM_HINT_T0);                                 \
    _mm_prefetch((const char *)(b + ldb * UKR_PF_K + 16), _MM_HINT_T0);                            \
    __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);                                  \
    ROWS(FMA_ROW)
UKR(ukr_f32_12x32, ROWS12, float, float, float, 1, PS, F32_STEP)
UKR(ukr_f32_8x32, ROWS8, float, float, float, 1, PS, F32_STEP)
UKR(ukr_f32_4x32, ROWS4, float, float, float, 1, PS, F32_STEP)

#define DP_ROW(r, x0, x1)                                                                          \
    {                                                                                              \
        int32_t s;                                                                                 \
        memcpy(&s, A_ROW(r), 4);                                                                   \
        __m512bh ar = (__m512bh)_mm512_set1_epi32(s);                                              \
        x0 = _mm512_dpbf16_ps(x0, ar, b0);                                                         \
        x1 = _mm512_dpbf16_ps(x1, ar, b1);                                                         \
    }
#define BF16_STEP(ROWS)                                                                            \
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);                                                 \
    __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 32);                                            \
    ROWS(DP_ROW)
UKR(ukr_bf16_12x32, ROWS12, uint16_t, uint16_t, float, 2, PS, BF16_STEP)
UKR(ukr_bf16_8x32, ROWS8, uint16_t, uint16_t, float, 2, PS, BF16_STEP)
UKR(ukr_bf16_4x32, ROWS4, uint16_t, uint16_t, float, 2, PS, BF16_STEP)

#define LOAD_EPI(r, x0, x1)                                                                        \
    x0 = _mm512_loadu_si512(c + ldc * r), x1 = _mm512_loadu_si512(c + ldc * r + 16);
#define ZERO_EPI(r, x0, x1) x0 = _mm512_setzero_si512(), x1 = _mm512_setzero_si512();
#define STORE_EPI(r, x0, x1)                                                                       \
    _mm512_storeu_si512(c + ldc * r, x0), _mm512_storeu_si512(c + ldc * r + 16, x1);
#define VNNI_ROW(r, x0, x1)                                                                        \
    {                                                                                              \
        int32_t s;                                                                                 \
        memcpy(&s, A_ROW(r), 4);                                                                   \
        __m512i ar = _mm512_set1_epi32(s);                                                         \
        x0 = _mm512_dpbusd_epi32(x0, ar, b0);                                                      \
        x1 = _mm512_dpbusd_epi32(x1, ar, b1);                                                      \
    }
#define I8_STEP(ROWS)                                                                              \
    __m512i b0 = _mm512_loadu_si512(b), b1 = _mm512_loadu_si512(b + 64);                           \
    ROWS(VNNI_ROW)
UKR(ukr_i8_12x32, ROWS12, uint8_t, int8_t, int32_t, 4, EPI, I8_STEP)

const vn_cube_table vn_cube_table_avx512 = {
    .isa = VN_ISA_AVX512,
    .shape = {{12, 32, 1}, {12, 32, 2}, {12, 32, 4}},
    .ukr = {ukr_f32_12x32, ukr_bf16_12x32, ukr_i8_12x32},
    .ukr_le8 = {ukr_f32_8x32, ukr_bf16_8x32, NULL},
    .ukr_le4 = {ukr_f32_4x32, ukr_bf16_4x32, NULL},
    .gemv_rows = cube_gemv_rows,
    .gemv_panels = cube_gemv_panels,
    .gemv_trans = cube_gemv_trans,
    .pack_b_rows = cube_pack_b_rows,
};

/* Same shapes, generic kernels: for CPUs without AVX512_BF16 / VNNI. */
const vn_ukr_fn vn_cube_avx512_generic_bf16 = cube_gen_bf16_12x32;
const vn_ukr_fn vn_cube_avx512_generic_i8 = cube_gen_i8_12x32;
