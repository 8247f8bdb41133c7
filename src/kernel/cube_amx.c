/*
 * cube_amx.c — the bf16 and int8 micro-kernels on Intel AMX tiles, the cube
 * of CPUs that have one (Sapphire Rapids and later).
 *
 * An AMX tile register holds 16 rows of 64 bytes; one tile multiply
 * (tdpbf16ps / tdpbusd) adds a 16 x 16 block of f32 / i32 sums per 16 x 64
 * byte A tile and 16 x 64 byte B tile: 16 x 16 x 32 bf16 or 16 x 16 x 64
 * int8 products in one instruction, an order of magnitude more than the
 * AVX-512 dot products (measured: 3.1 TFLOP/s bf16 on one core, against 230
 * GFLOP/s fp32 FMA and about 105 GFLOP/s vdpbf16ps on the same core).
 *
 * The micro-panel layouts of kernel.h already are the tiles' layouts:
 *   A  row-major, Kp elements a row: an A tile is 16 rows, 64 bytes (16 k
 *      groups: 32 bf16 or 64 u8) each, lda * size bytes apart;
 *   B  a panel row holds one k group of NR = 32 columns (KP = 2 bf16 or 4
 *      int8 each: 128 bytes), which is the "VNNI" layout a B tile wants:
 *      16 panel rows (16 k groups) of the first or last 16 columns, 64
 *      bytes at offset 0 or 64 of each row;
 *   C  row-major f32 / i32, ldc elements a row.
 * So a packed B is the same bytes for the AVX-512 and the AMX kernels; only
 * MR differs (32 here: two A tiles), and the generic k loop runs 16 k
 * groups a step. A last step of fewer k groups is copied into zero-padded
 * tiles on the stack, so the kernels take any kgroups (the layouts' k
 * padding makes the zeros exact for both products).
 *
 * Tile registers (amx_tiles.h): 0-3 accumulate C (2 x 2 tiles of 16 x 16),
 * 4-5 hold A, 6-7 hold B, every one 16 rows x 64 bytes.
 * Results: tdpbf16ps rounds its pair sums before adding them, so bf16
 * results differ from vdpbf16ps's in the last bits (within the bf16
 * tolerance); int8 sums are exact, the same bits as VNNI.
 */
#include <immintrin.h>
#include <string.h>

#include "base/amx_tiles.h"
#include "kernel/cube_internal.h"

#define TILE_GROUPS 16 /* k groups in one A tile row / B tile */
#define TILE_BYTES  64 /* bytes in one tile row */

/* The last k step of kg % 16 groups, as zero-padded tiles: A (rows x 64
 * bytes) and B (16 x 128 bytes). */
typedef struct tail_tiles {
    uint8_t a[32][TILE_BYTES];
    uint8_t b[TILE_GROUPS][2 * TILE_BYTES];
} tail_tiles;

static void tail_copy(tail_tiles *t, int rows, const uint8_t *a, size_t sa, const uint8_t *b,
                      size_t sb, int64_t groups, size_t group_bytes)
{
    memset(t, 0, sizeof *t);
    for (int r = 0; r < rows; r++)
        memcpy(t->a[r], a + (size_t)r * sa, (size_t)groups * group_bytes);
    for (int64_t g = 0; g < groups; g++) memcpy(t->b[g], b + (size_t)g * sb, 2 * TILE_BYTES);
}

/* Spread the next tile's prefetch lines over the k steps. */
static inline void next_tile_pf(const char *pf, int64_t npf, int64_t step, int64_t steps)
{
    int64_t per = (npf + steps - 1) / steps;
    for (int64_t i = step * per; i < npf && i < (step + 1) * per; i++)
        _mm_prefetch(pf + 64 * i, _MM_HINT_T1);
}

/* One micro-kernel of 16 * HALVES rows x 32 columns: ES-byte A and B
 * elements, KP of them a k group, DP the tile product (C += A x B). */
#define AMX_UKR(NAME, HALVES, ES, KP, DP)                                                          \
    static void NAME(int64_t kg, const void *a_, int64_t lda, const void *b_, int64_t ldb,         \
                     void *c_, int64_t ldc, int acc, const char *pf, int64_t npf)                  \
    {                                                                                              \
        vn_amx_tiles_set(16, TILE_BYTES, TILE_GROUPS);                                             \
        const uint8_t *a = a_, *b = b_;                                                            \
        uint8_t *c = c_;                                                                           \
        size_t sa = (size_t)lda * ES, sb = (size_t)ldb * ES, sc = (size_t)ldc * 4;                 \
        if (acc) {                                                                                 \
            VN_TILE_LOAD(0, c, sc);                                                                \
            VN_TILE_LOAD(1, c + TILE_BYTES, sc);                                                   \
            if (HALVES == 2) VN_TILE_LOAD(2, c + 16 * sc, sc);                                     \
            if (HALVES == 2) VN_TILE_LOAD(3, c + 16 * sc + TILE_BYTES, sc);                        \
        } else {                                                                                   \
            _tile_zero(0);                                                                         \
            _tile_zero(1);                                                                         \
            if (HALVES == 2) _tile_zero(2);                                                        \
            if (HALVES == 2) _tile_zero(3);                                                        \
        }                                                                                          \
        int64_t full = kg / TILE_GROUPS, steps = full + (kg % TILE_GROUPS != 0);                   \
        for (int64_t s = 0; s < steps; s++) {                                                      \
            const uint8_t *as = a + s * TILE_BYTES, *bs = b + s * TILE_GROUPS * sb;                \
            size_t sta = sa, stb = sb;                                                             \
            tail_tiles tail;                                                                       \
            if (s == full) {                                                                       \
                tail_copy(&tail, 16 * HALVES, as, sa, bs, sb, kg - full * TILE_GROUPS,             \
                          (size_t)(KP * ES));                                                      \
                as = tail.a[0], bs = tail.b[0], sta = TILE_BYTES, stb = 2 * TILE_BYTES;            \
            }                                                                                      \
            next_tile_pf(pf, npf, s, steps);                                                       \
            VN_TILE_LOAD(4, as, sta);                                                              \
            VN_TILE_LOAD(6, bs, stb);                                                              \
            VN_TILE_LOAD(7, bs + TILE_BYTES, stb);                                                 \
            DP(0, 4, 6);                                                                           \
            DP(1, 4, 7);                                                                           \
            if (HALVES == 2) {                                                                     \
                VN_TILE_LOAD(5, as + 16 * sta, sta);                                               \
                DP(2, 5, 6);                                                                       \
                DP(3, 5, 7);                                                                       \
            }                                                                                      \
        }                                                                                          \
        _tile_stored(0, c, sc);                                                                    \
        _tile_stored(1, c + TILE_BYTES, sc);                                                       \
        if (HALVES == 2) _tile_stored(2, c + 16 * sc, sc);                                         \
        if (HALVES == 2) _tile_stored(3, c + 16 * sc + TILE_BYTES, sc);                            \
    }

#define DP_BF16(c, a, b) _tile_dpbf16ps(c, a, b)
#define DP_I8(c, a, b)   _tile_dpbusd(c, a, b)
AMX_UKR(amx_bf16_32x32, 2, 2, 2, DP_BF16)
AMX_UKR(amx_bf16_16x32, 1, 2, 2, DP_BF16)
AMX_UKR(amx_i8_32x32, 2, 1, 4, DP_I8)
AMX_UKR(amx_i8_16x32, 1, 1, 4, DP_I8)

/* The AVX-512 table with the bf16 and int8 rows on tiles (cube_table.c). */
vn_cube_table vn_cube_table_amx_from(const vn_cube_table *avx512)
{
    vn_cube_table t = *avx512;
    t.shape[VN_CUBE_BF16] = (vn_cube_shape){32, 32, 2};
    t.shape[VN_CUBE_I8] = (vn_cube_shape){32, 32, 4};
    t.ukr[VN_CUBE_BF16] = amx_bf16_32x32, t.ukr[VN_CUBE_I8] = amx_i8_32x32;
    t.ukr_le16[VN_CUBE_BF16] = amx_bf16_16x32, t.ukr_le16[VN_CUBE_I8] = amx_i8_16x32;
    t.ukr_le8[VN_CUBE_BF16] = t.ukr_le8[VN_CUBE_I8] = NULL;
    t.ukr_le4[VN_CUBE_BF16] = t.ukr_le4[VN_CUBE_I8] = NULL;
    return t;
}
