/*
 * cube_avx2.c — the AVX2 + FMA cube table: an f32 6 x 16 micro-kernel (12 ymm
 * accumulators, A broadcast, two B vectors per k); an int8 6 x 16 one on
 * 16-bit multiplies and a bf16 6 x 16 one on f32 FMAs (below).
 */
#include <immintrin.h>
#include <string.h>

#include "kernel/cube_internal.h"

#include "kernel/cube_generic.inc"
#include "kernel/cube_pack_rows.inc"

CUBE_GENERIC_ENTRIES(6, 16)

/* Row r of an f32 C tile of 16 columns in cr0, cr1 (columns 8h..8h+7 in
 * crh): loaded from C (acc) or zero, and stored back. */
#define F32_ROW_LOAD(r)                                                                            \
    c##r##0 = acc ? _mm256_loadu_ps(c + (r)*ldc) : _mm256_setzero_ps();                            \
    c##r##1 = acc ? _mm256_loadu_ps(c + (r)*ldc + 8) : _mm256_setzero_ps();
#define F32_ROW_STORE(r)                                                                           \
    _mm256_storeu_ps(c + (r)*ldc, c##r##0), _mm256_storeu_ps(c + (r)*ldc + 8, c##r##1);

/* The f32 kernels' C tiles: 6 x 16 in c00 .. c51, 4 x 16 in c00 .. c31. */
#define F32_TILE_LOAD                                                                              \
    __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;                             \
    F32_ROW_LOAD(0) F32_ROW_LOAD(1) F32_ROW_LOAD(2) F32_ROW_LOAD(3) F32_ROW_LOAD(4) F32_ROW_LOAD(5)
#define F32_TILE_STORE                                                                             \
    F32_ROW_STORE(0)                                                                               \
    F32_ROW_STORE(1) F32_ROW_STORE(2) F32_ROW_STORE(3) F32_ROW_STORE(4) F32_ROW_STORE(5)
#define F32_TILE4_LOAD                                                                             \
    __m256 c00, c01, c10, c11, c20, c21, c30, c31;                                                 \
    F32_ROW_LOAD(0) F32_ROW_LOAD(1) F32_ROW_LOAD(2) F32_ROW_LOAD(3)
#define F32_TILE4_STORE F32_ROW_STORE(0) F32_ROW_STORE(1) F32_ROW_STORE(2) F32_ROW_STORE(3)

/* Row r's products with the B vectors b0, b1 of this k: A's value q floats
 * past the k's first (0 for f32; 0, 1 for a widened bf16 pair). */
#define ROW_AT(r, q)                                                                               \
    {                                                                                              \
        __m256 ar = _mm256_broadcast_ss(((r) < 3 ? a0 : a3) + ((r) % 3) * lda + (q));              \
        c##r##0 = _mm256_fmadd_ps(ar, b0, c##r##0);                                                \
        c##r##1 = _mm256_fmadd_ps(ar, b1, c##r##1);                                                \
    }

/* C tile 6 x 16 (rows ldc apart) += A (6 rows lda apart) * B panel (k x 16). */
static void ukr_f32_6x16(int64_t kg, const void *a_, int64_t lda, const void *b_, int64_t ldb,
                         void *c_, int64_t ldc, int acc, const char *pf, int64_t npf)
{
    const float *a0 = a_, *a3 = a0 + 3 * lda, *b = b_;
    float *c = c_;
    F32_TILE_LOAD
    for (int64_t k = 0; k < kg; k++, a0++, a3++, b += ldb) {
        vn_ukr_next_tile_pf(pf, npf, k); /* the next tile, to L2 */
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        ROW_AT(0, 0) ROW_AT(1, 0) ROW_AT(2, 0) ROW_AT(3, 0) ROW_AT(4, 0) ROW_AT(5, 0);
    }
    F32_TILE_STORE
}

/* C tile 4 x 16 += A (4 rows) * B panel: a short last panel (ukr_le4). M =
 * 128, the rows of every BERT-shaped product, is 20 panels of 6 and 8 rows
 * that run as two of these (mmad_rows) rather than a 6-row panel with 2
 * rows: its 8 chains still keep both FMA pipes busy, and no row past M is
 * read, so A stays in place. */
static void ukr_f32_4x16(int64_t kg, const void *a_, int64_t lda, const void *b_, int64_t ldb,
                         void *c_, int64_t ldc, int acc, const char *pf, int64_t npf)
{
    const float *a0 = a_, *a3 = a0 + 3 * lda, *b = b_;
    float *c = c_;
    F32_TILE4_LOAD
    for (int64_t k = 0; k < kg; k++, a0++, a3++, b += ldb) {
        vn_ukr_next_tile_pf(pf, npf, k); /* the next tile, to L2 */
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        ROW_AT(0, 0) ROW_AT(1, 0) ROW_AT(2, 0) ROW_AT(3, 0);
    }
    F32_TILE4_STORE
}

/* ---- bf16 ---------------------------------------------------------------------
 * AVX2 has no bf16 dot product: a bf16 is the top half of an f32, so this
 * kernel runs the f32 FMAs on B's pairs (k0 in the low 16 bits of each
 * 32-bit lane, k1 in the high) shifted into place, k0's before k1's for each
 * sum: the generic kernel's order, so the bits are the same. A comes widened
 * to f32 (mmad widens each A micro-panel once for all its B panels:
 * vn_cube_table.ukr_bf16_wide), so the loop is the f32 kernel's plus B's shifts
 * (A's would cost one more shift per FMA pair; the generic loop ran at 0.4x
 * f32, which made --precision bf16 slower than f32 here). k1's B vectors are
 * loaded again rather than kept: 12 sums, 2 B vectors and the broadcast A
 * value leave one register. */
static void ukr_bf16_wide_6x16(int64_t kg, const void *a_, int64_t lda, const void *b_, int64_t ldb,
                               void *c_, int64_t ldc, int acc, const char *pf, int64_t npf)
{
    const float *a0 = a_, *a3 = a0 + 3 * lda;
    const uint16_t *b = b_;
    float *c = c_;
    F32_TILE_LOAD
    for (int64_t k = 0; k < kg; k++, a0 += 2, a3 += 2, b += ldb) {
        vn_ukr_next_tile_pf(pf, npf, k); /* the next tile, to L2 */
        __m256i w0 = _mm256_loadu_si256((const __m256i *)b);
        __m256i w1 = _mm256_loadu_si256((const __m256i *)(b + 16));
        __m256 b0 = _mm256_castsi256_ps(_mm256_slli_epi32(w0, 16));
        __m256 b1 = _mm256_castsi256_ps(_mm256_slli_epi32(w1, 16));
        ROW_AT(0, 0) ROW_AT(1, 0) ROW_AT(2, 0) ROW_AT(3, 0) ROW_AT(4, 0) ROW_AT(5, 0);
        w0 = _mm256_loadu_si256((const __m256i *)b);
        w1 = _mm256_loadu_si256((const __m256i *)(b + 16));
        b0 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_srli_epi32(w0, 16), 16));
        b1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_srli_epi32(w1, 16), 16));
        ROW_AT(0, 1) ROW_AT(1, 1) ROW_AT(2, 1) ROW_AT(3, 1) ROW_AT(4, 1) ROW_AT(5, 1);
    }
    F32_TILE_STORE
}

/* ---- int8 ---------------------------------------------------------------------
 * AVX2 has no exact u8 x s8 dot product: vpmaddubsw adds two products of up
 * to 255 * 128 in saturating 16 bits. So both operands are widened to 16 bits
 * in registers and multiplied with vpmaddwd (exact: each 32-bit lane is the
 * sum of two products), reading the same byte-quad layouts as the generic
 * kernel: per k group, A row r holds a[4r..], B's 16 columns 4 bytes each.
 * Widened, 4 columns' quads fill a ymm of 16-bit values and A's quad is
 * repeated in each 64-bit lane, so lane 2j (2j+1) of the product holds
 * column j's k0 + k1 (k2 + k3) part; the parts are added once, at the store
 * (vphaddd, whose 128-bit lanes interleave the columns: vpermq puts them
 * back). Registers: 6 rows x 8 columns' parts (12 accumulators), 2 widened B
 * quarters and the widened A, so the 16 columns run as two passes over k. */

#define I8_ROW(r)                                                                                  \
    {                                                                                              \
        int32_t q;                                                                                 \
        memcpy(&q, a + (r)*lda + 4 * k, 4);                                                        \
        __m256i ar = _mm256_cvtepu8_epi16(_mm_set1_epi32(q));                                      \
        s##r##0 = _mm256_add_epi32(s##r##0, _mm256_madd_epi16(b0, ar));                            \
        s##r##1 = _mm256_add_epi32(s##r##1, _mm256_madd_epi16(b1, ar));                            \
    }

/* The 8 column sums of row r's parts, added to C's row if acc. */
#define I8_STORE(r)                                                                                \
    {                                                                                              \
        __m256i v = _mm256_permute4x64_epi64(_mm256_hadd_epi32(s##r##0, s##r##1), 0xD8);           \
        __m256i *cp = (__m256i *)(c + (r)*ldc);                                                    \
        if (acc) v = _mm256_add_epi32(v, _mm256_loadu_si256(cp));                                  \
        _mm256_storeu_si256(cp, v);                                                                \
    }

/* C tile 6 x 8 (i32, rows ldc apart) += A (6 rows of u8 quads, lda bytes
 * apart) * B's 8 columns from b (s8 quads, k groups ldb bytes apart). */
static inline void i8_6x8(int64_t kg, const uint8_t *a, int64_t lda, const int8_t *b, int64_t ldb,
                          int32_t *c, int64_t ldc, int acc, const char *pf, int64_t npf)
{
    __m256i s00, s01, s10, s11, s20, s21, s30, s31, s40, s41, s50, s51;
    s00 = s01 = s10 = s11 = s20 = s21 = s30 = s31 = s40 = s41 = s50 = s51 = _mm256_setzero_si256();
    for (int64_t k = 0; k < kg; k++, b += ldb) {
        vn_ukr_next_tile_pf(pf, npf, k); /* the next tile, to L2 */
        __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)b));
        __m256i b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + 16)));
        I8_ROW(0) I8_ROW(1) I8_ROW(2) I8_ROW(3) I8_ROW(4) I8_ROW(5)
    }
    I8_STORE(0) I8_STORE(1) I8_STORE(2) I8_STORE(3) I8_STORE(4) I8_STORE(5)
}

static void ukr_i8_6x16(int64_t kg, const void *a, int64_t lda, const void *b, int64_t ldb, void *c,
                        int64_t ldc, int acc, const char *pf, int64_t npf)
{
    i8_6x8(kg, a, lda, b, ldb, c, ldc, acc, pf, npf);
    i8_6x8(kg, a, lda, (const int8_t *)b + 32, ldb, (int32_t *)c + 8, ldc, acc, NULL, 0);
}

const vn_cube_table vn_cube_table_avx2 = {
    .isa = VN_ISA_AVX2,
    .shape = {{6, 16, 1}, {6, 16, 2}, {6, 16, 4}},
    .ukr = {ukr_f32_6x16, cube_gen_bf16_6x16, ukr_i8_6x16},
    .ukr_le4 = {ukr_f32_4x16, NULL, NULL},
    .ukr_bf16_wide = ukr_bf16_wide_6x16,
    .gemv_rows = cube_gemv_rows,
    .gemv_panels = cube_gemv_panels,
    .gemv_trans = cube_gemv_trans,
    .pack_b_rows = cube_pack_b_rows,
};
