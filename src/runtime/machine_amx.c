/*
 * machine_amx.c — the AMX tile throughput loops for vn_machine_measure (see
 * machine_isa.h). Compiled with AMX: call only where vn_amx_usable().
 *
 * Four independent accumulator tiles (0-3) take the products of two A tiles
 * (4, 5) and two B tiles (6, 7), the cube kernels' own arrangement: one tile
 * multiply's latency is covered by the other three.
 */
#include <immintrin.h>
#include <string.h>

#include "base/amx_tiles.h"
#include "runtime/machine_isa.h"

/* A tile of 16 rows x 64 bytes, every 32-bit group `v`. */
static void fill(uint32_t *t, uint32_t v)
{
    for (int i = 0; i < 16 * 16; i++) t[i] = v;
}

/* The sum of accumulator tile 0 after the loop (depends on every step). */
static float sum_c0_f32(void)
{
    float c[16 * 16];
    _tile_stored(0, c, 64);
    float s = 0.0f;
    for (int i = 0; i < 16 * 16; i++) s += c[i];
    return s;
}

static void load_operands(const uint32_t *a, const uint32_t *b)
{
    VN_TILE_LOAD(4, a, 64);
    VN_TILE_LOAD(5, a, 64);
    VN_TILE_LOAD(6, b, 64);
    VN_TILE_LOAD(7, b, 64);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
}

float vn_machine_bf16_amx(int64_t iters, uint32_t a, uint32_t b)
{
    uint32_t ta[16 * 16], tb[16 * 16];
    fill(ta, a), fill(tb, b);
    vn_amx_tiles_set(16, 64, 16);
    load_operands(ta, tb);
    for (int64_t it = 0; it < iters; it++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    return sum_c0_f32();
}

int32_t vn_machine_int8_amx(int64_t iters, uint32_t a, uint32_t b)
{
    uint32_t ta[16 * 16], tb[16 * 16];
    fill(ta, a), fill(tb, b);
    vn_amx_tiles_set(16, 64, 16);
    load_operands(ta, tb);
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
