/*
 * machine_amx.c — the AMX tile throughput loops for vn_machine_measure (see
 * machine_isa.h). Compiled with AMX: call only where vn_amx_usable().
 *
 * Four independent accumulator tiles (0-3) take the products of two A tiles
 * (4, 5) and two B tiles (6, 7), the cube kernels' own arrangement: one tile
 * multiply's latency is covered by the other three.
 */
#include <immintrin.h>

#include "base/amx_tiles.h"
#include "runtime/machine_isa.h"

/* Configure the tiles, fill the A tiles with the 32-bit group `a` and the B
 * tiles with `b`, zero the accumulators. */
static void tiles_ready(uint32_t a, uint32_t b)
{
    uint32_t ta[16 * 16], tb[16 * 16];
    for (int i = 0; i < 16 * 16; i++) ta[i] = a, tb[i] = b;
    vn_amx_tiles_set(16, 64, 16);
    VN_TILE_LOAD(4, ta, 64);
    VN_TILE_LOAD(5, ta, 64);
    VN_TILE_LOAD(6, tb, 64);
    VN_TILE_LOAD(7, tb, 64);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
}

/* The sums go through accumulator tile 0's 256 values (every step feeds it). */
float vn_machine_bf16_amx(int64_t iters, uint32_t a, uint32_t b)
{
    tiles_ready(a, b);
    for (int64_t it = 0; it < iters; it++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    float c[16 * 16], s = 0.0f;
    _tile_stored(0, c, 64);
    for (int i = 0; i < 16 * 16; i++) s += c[i];
    return s;
}

int32_t vn_machine_int8_amx(int64_t iters, uint32_t a, uint32_t b)
{
    tiles_ready(a, b);
    for (int64_t it = 0; it < iters; it++) {
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(2, 5, 6);
        _tile_dpbusd(3, 5, 7);
    }
    int32_t c[16 * 16], s = 0;
    _tile_stored(0, c, 64);
    for (int i = 0; i < 16 * 16; i++) s += c[i];
    return s;
}
