/*
 * layout.c — the NCHW <-> NC1HWC0 transform kernels (see layout.h).
 *
 * A tile is one (image, channel block) and a run of up to CHUNK spatial
 * positions; blocks take contiguous ranges of tiles. Each tile reads 16
 * channel rows of the run (streams of consecutive floats) and writes one
 * contiguous run of run*16 floats, or the reverse; padding lanes are written
 * as zeros. The CPU's caches stand in for the copy engine: the tiles move
 * straight between the two global tensors (a staging copy through UB would
 * double the traffic of a pure data-movement kernel).
 */
#include <string.h>

#include "kernel/conv_kernels.h"
#include "kernel/core_internal.h"
#include "ops/layout.h"

#define CHUNK 1024 /* spatial positions per tile: 64 KiB of NC1HWC0 */

typedef struct layout_args {
    const float *x;
    float *y;
    int64_t N, C, C1, S, chunks;
    bool to_blocked;
} layout_args;

/* Through a 16 x 16 staging block, so every output line is written once, whole
 * (padding lanes included), and each channel row is read as one stream: a
 * plain scatter writes each output line 16 times, and first zero-filled. */
static void tile_to(const layout_args *a, int64_t n, int64_t c1, int64_t s0, int64_t len)
{
    float *dst = a->y + ((n * a->C1 + c1) * a->S + s0) * VN_C0;
    const float *src = a->x + (n * a->C + c1 * VN_C0) * a->S + s0;
    int64_t c0n = vn_ops_min(VN_C0, a->C - c1 * VN_C0);
    float blk[VN_C0][VN_C0];
    memset(blk, 0, sizeof blk); /* lanes c >= c0n stay zero */
    for (int64_t s = 0; s < len; s += VN_C0) {
        int64_t m = vn_ops_min(VN_C0, len - s);
        for (int64_t c = 0; c < c0n; c++)
            for (int64_t j = 0; j < m; j++) blk[j][c] = src[c * a->S + s + j];
        memcpy(dst + s * VN_C0, blk, (size_t)(m * VN_C0) * sizeof *dst);
    }
}

static void tile_from(const layout_args *a, int64_t n, int64_t c1, int64_t s0, int64_t len)
{
    const float *src = a->x + ((n * a->C1 + c1) * a->S + s0) * VN_C0;
    int64_t c0n = vn_ops_min(VN_C0, a->C - c1 * VN_C0);
    for (int64_t c = 0; c < c0n; c++) {
        float *dst = a->y + (n * a->C + c1 * VN_C0 + c) * a->S + s0;
        for (int64_t s = 0; s < len; s++) dst[s] = src[s * VN_C0 + c];
    }
}

static void layout_kernel(vn_core *core, const void *args)
{
    const layout_args *a = args;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t chunk = t % a->chunks, nc = t / a->chunks;
        int64_t s0 = chunk * CHUNK, len = vn_ops_min(CHUNK, a->S - s0);
        if (a->to_blocked)
            tile_to(a, nc / a->C1, nc % a->C1, s0, len);
        else
            tile_from(a, nc / a->C1, nc % a->C1, s0, len);
        int64_t real = vn_ops_min(VN_C0, a->C - nc % a->C1 * VN_C0) * len * 4;
        core->counters.bytes_in += a->to_blocked ? real : len * VN_C0 * 4;
        core->counters.bytes_out += a->to_blocked ? len * VN_C0 * 4 : real;
    }
}

static vn_status launch(vn_device *device, layout_args *a, vn_kernel_counters *counters)
{
    a->C1 = vn_ops_div_up(a->C, VN_C0);
    a->chunks = vn_ops_div_up(a->S, CHUNK);
    int64_t tiles = a->N * a->C1 * a->chunks;
    if (tiles == 0) return VN_OK;
    /* a tile is at most CHUNK pixels: a 1x1 map (after a global pool) is one each */
    int64_t tile_elems = vn_ops_min(CHUNK, a->S) * VN_C0;
    const char *name = a->to_blocked ? "vn_to_nc1hwc0" : "vn_from_nc1hwc0";
    int32_t blocks = vn_ops_block_dim(device, tiles, tile_elems);
    vn_launch_desc d = {layout_kernel, name, blocks, a, -1, tiles};
    return vn_launch(device, &d, counters);
}

vn_status vn_layout_to_nc1hwc0(vn_device *device, const float *x, float *y, int64_t N, int64_t C,
                               int64_t S, vn_kernel_counters *counters)
{
    layout_args a = {x, y, N, C, 0, S, 0, true};
    return launch(device, &a, counters);
}

vn_status vn_layout_from_nc1hwc0(vn_device *device, const float *x, float *y, int64_t N, int64_t C,
                                 int64_t S, vn_kernel_counters *counters)
{
    layout_args a = {x, y, N, C, 0, S, 0, false};
    return launch(device, &a, counters);
}
