/*
 * tiles_amx.c — the AMX permission and tile configuration (amx_tiles.h).
 *
 * The configuration is per-thread state that only vinci's kernels use, so
 * each thread remembers what it loaded last and reloads only on a change
 * (ldtilecfg costs about as much as a few tile multiplies).
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/amx_tiles.h"
#include "vinci/base.h"

/* Linux: a process must ask for the tile data state before using it. */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA  18

static bool usable;
static pthread_once_t usable_once = PTHREAD_ONCE_INIT;

static void decide(void)
{
    const vn_cpu_features *f = vn_cpu_features_get();
    if (!(f->amx_tile && f->amx_bf16 && f->amx_int8 && f->os_amx)) return;
    const char *env = getenv("VINCI_AMX");
    if (env && strcmp(env, "0") == 0) return;
    usable = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

bool vn_amx_usable(void)
{
    pthread_once(&usable_once, decide);
    return usable;
}

typedef struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

/* rows | a_bytes << 8 | b_rows << 16 of the loaded configuration; 0: none. */
static _Thread_local uint32_t loaded;

void vn_amx_tiles_set(int rows, int a_bytes, int b_rows)
{
    uint32_t key = (uint32_t)rows | (uint32_t)a_bytes << 8 | (uint32_t)b_rows << 16;
    if (key == loaded) return;
    tile_config c;
    memset(&c, 0, sizeof c);
    c.palette = 1;
    for (int t = 0; t < 4; t++) c.colsb[t] = 64, c.rows[t] = (uint8_t)rows;
    for (int t = 4; t < 6; t++) c.colsb[t] = (uint16_t)a_bytes, c.rows[t] = (uint8_t)rows;
    for (int t = 6; t < 8; t++) c.colsb[t] = 64, c.rows[t] = (uint8_t)b_rows;
    /* GCC 12 does not treat ldtilecfg as reading the struct and drops the
     * stores above without this barrier (the tiles then fault). */
    __asm__ volatile("" : : "r"(&c) : "memory");
    _tile_loadconfig(&c);
    loaded = key;
}
