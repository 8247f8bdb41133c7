/*
 * amx_tiles.h — the AMX tile registers shared by the cube (cube_amx.c) and
 * the convolution rows (conv_amx.c): whether the process may use them, and
 * their per-thread configuration.
 *
 * Tile roles, the same in every kernel: 0-3 accumulate C (rows x 64 bytes:
 * 16 f32 / i32 columns), 4-5 hold A (rows x a_bytes), 6-7 hold B (b_rows x
 * 64 bytes). Loading a configuration zeroes every tile, so a kernel sets it
 * before its first tile instruction and never while it accumulates.
 */
#ifndef VINCI_BASE_AMX_TILES_H
#define VINCI_BASE_AMX_TILES_H

#include <stdbool.h>

/* Whether this CPU and OS let the process use the tiles (CPUID, XCR0, and
 * the OS's permission, asked for once); VINCI_AMX=0 says no. */
bool vn_amx_usable(void);

/* Configure this thread's tiles (a no-op when they already are so): rows 1..16
 * for A and C, a_bytes 4..64 per A row, b_rows 1..16 for B. */
void vn_amx_tiles_set(int rows, int a_bytes, int b_rows);

/* A tile load. GCC 12's _tile_loadd names no memory input (nor does
 * ldtilecfg name the whole configuration), so stores into a buffer that a
 * tile then loads could be dropped or sunk past the load: the barrier
 * makes them land first. (_tile_stored does clobber memory.) */
#define VN_TILE_LOAD(tile, base, stride)                                                           \
    do {                                                                                           \
        __asm__ volatile("" : : : "memory");                                                       \
        _tile_loadd(tile, base, stride);                                                           \
    } while (0)

#endif /* VINCI_BASE_AMX_TILES_H */
