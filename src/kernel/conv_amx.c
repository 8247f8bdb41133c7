/*
 * conv_amx.c — the bf16 direct-convolution row (vn_conv_table.direct_row_bf16)
 * on AMX tiles, for CPUs that have them (conv_kernels.h has the contract).
 *
 * The NC1HWC0 layouts already are tiles: for 16 consecutive output columns
 * of one row, the input pixels a tap reads are 16 pixels sw apart in one
 * input block, 16 bf16 channels (32 bytes) each: an A tile of 16 rows x 32
 * bytes with a row stride of sw * 32 bytes, read where it lies. The packed
 * bf16 weights of one (output block, input block, tap) are [8 channel pairs]
 * [16 co][2]: a B tile of 8 rows x 64 bytes. Their product, accumulated over
 * input blocks and taps, is 16 columns x 16 output channels of f32: a C tile
 * stored straight into the output row ([OW][16]), which the epilogue then
 * finishes in place (bias, activation: the AVX-512 store step); with a
 * residual, into an L1 buffer the epilogue finishes into the row.
 *
 * Per call: chunks of 16 columns (the last one shorter: its tiles get that
 * many rows, so nothing past the row is read or written), and for each, the
 * ncb output blocks (up to 4 C tiles) over all input blocks and taps. A last
 * input block with fewer real channels is copied with its other lanes
 * zeroed (grouped convolutions share a block between groups), so its
 * weights' zero rows never meet another group's values.
 */
#include <immintrin.h>
#include <string.h>

#include "base/amx_tiles.h"
#include "kernel/conv_kernels.h"
#include "kernel/vec_f32_avx512.h"

#define TABLE_ISA VN_ISA_AVX512
#include "kernel/conv_epilogue.inc"

#define CHUNK     16 /* output columns per tile */
#define C_TILES   4  /* output blocks accumulated at once */
#define PAIR_ROWS (VN_C0 / 2)

/* The A tile of a last input block with `pairs` real channel pairs: its
 * rows copied with the other lanes zeroed (stride 32 bytes). */
static const uint16_t *masked_a(uint16_t *buf, const uint16_t *xp, int64_t step, int rows,
                                int64_t pairs)
{
    memset(buf, 0, (size_t)rows * VN_C0 * 2);
    for (int r = 0; r < rows; r++) memcpy(buf + r * VN_C0, xp + r * step, (size_t)pairs * 4);
    return buf;
}

/* C tiles 0 .. nc-1 += A (tile 4) x the weights of blocks c at wp + c * wstride. */
static inline void tap_products(const uint16_t *wp, int64_t wstride, int nc)
{
    VN_TILE_LOAD(6, wp, 64);
    _tile_dpbf16ps(0, 4, 6);
    if (nc > 1) {
        VN_TILE_LOAD(7, wp + wstride, 64);
        _tile_dpbf16ps(1, 4, 7);
    }
    if (nc > 2) {
        VN_TILE_LOAD(6, wp + 2 * wstride, 64);
        _tile_dpbf16ps(2, 4, 6);
    }
    if (nc > 3) {
        VN_TILE_LOAD(7, wp + 3 * wstride, 64);
        _tile_dpbf16ps(3, 4, 7);
    }
}

/* Sums of `rows` columns from ow0 for output blocks c0 .. c0+nc-1, block c
 * at sums + c * bytes (16 floats a column). */
static void chunk_sums(const vn_conv_row_args *a, int64_t ow0, int rows, int64_t c0, int nc,
                       int64_t kh_lo, int64_t kh_hi, float *sums, size_t bytes)
{
    const int64_t taps = a->KH * a->KW, step = a->sw * VN_C0;
    uint16_t masked[CHUNK * VN_C0];
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t ib = 0; ib < a->cin_blocks; ib++) {
        const int64_t real = ib == a->cin_blocks - 1 ? a->ci_last : VN_C0;
        const uint16_t *xb = a->x16 + ib * a->x_bstride;
        const uint16_t *wb = a->w16 + c0 * a->w_bstride + ib * taps * VN_C0 * VN_C0;
        for (int64_t kh = kh_lo; kh < kh_hi; kh++) {
            const int64_t row = a->x_row0 + kh * a->x_rstride;
            for (int64_t kw = 0; kw < a->KW; kw++) {
                const uint16_t *xp = xb + (row + ow0 * a->sw + kw * a->dw) * VN_C0;
                if (real < VN_C0) {
                    VN_TILE_LOAD(4, masked_a(masked, xp, step, rows, (real + 1) / 2), VN_C0 * 2);
                } else {
                    VN_TILE_LOAD(4, xp, step * 2);
                }
                tap_products(wb + (kh * a->KW + kw) * VN_C0 * VN_C0, a->w_bstride, nc);
            }
        }
    }
    _tile_stored(0, sums, 64);
    if (nc > 1) _tile_stored(1, (char *)sums + bytes, 64);
    if (nc > 2) _tile_stored(2, (char *)sums + 2 * bytes, 64);
    if (nc > 3) _tile_stored(3, (char *)sums + 3 * bytes, 64);
}

/* y (block c from ow0) = bias, residual and activation over the sums. */
static void chunk_epilogue(const vn_conv_row_args *a, int64_t ow0, int rows, int64_t c,
                           const float *sums)
{
    float *y = a->y + c * a->y_bstride + ow0 * VN_C0;
    const float *bias = a->bias ? a->bias + c * VN_C0 : NULL;
    const float *res = a->res ? a->res + c * a->res_bstride + ow0 * VN_C0 : NULL;
    WITH_ACT(a->epi.act, for (int j = 0; j < rows; j++)
                             store_vec(y + j * VN_C0, _mm512_loadu_ps(sums + j * VN_C0), bias,
                                       res ? res + j * VN_C0 : NULL, ACT, &a->epi))
    late_act(y, rows * VN_C0, &a->epi);
}

void vn_conv_amx_row_bf16(const vn_conv_row_args *a)
{
    int64_t kh_lo, kh_hi;
    tap_range(a->ih0, a->KH, a->dh, a->IH, &kh_lo, &kh_hi);
    /* The sums go to y, finished there in place, unless there is a residual:
     * that may share y's memory (compile_memory.c), so it must be read
     * before y is written, and the sums wait in `aside` (16 KiB, in L1). */
    float aside[C_TILES * CHUNK * VN_C0];
    for (int64_t ow0 = 0; ow0 < a->OW; ow0 += CHUNK) {
        int rows = (int)(a->OW - ow0 < CHUNK ? a->OW - ow0 : CHUNK);
        vn_amx_tiles_set(rows, VN_C0 * 2, PAIR_ROWS);
        for (int64_t c0 = 0; c0 < a->ncb; c0 += C_TILES) {
            int nc = (int)(a->ncb - c0 < C_TILES ? a->ncb - c0 : C_TILES);
            float *sums = a->res ? aside : a->y + c0 * a->y_bstride + ow0 * VN_C0;
            size_t bytes = a->res ? sizeof aside / C_TILES : (size_t)a->y_bstride * 4;
            chunk_sums(a, ow0, rows, c0, nc, kh_lo, kh_hi, sums, bytes);
            for (int c = 0; c < nc; c++)
                chunk_epilogue(a, ow0, rows, c0 + c, (const float *)((char *)sums + c * bytes));
        }
    }
}
