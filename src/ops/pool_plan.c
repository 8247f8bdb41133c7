/*
 * pool_plan.c — tiling of the pooling kernels.
 *
 * Windowed: a tile is R consecutive output rows of one (plane, od). It reads
 * `band` input rows per depth tap, in groups of `group` rows, and keeps the
 * horizontal-pass result of every band row of every depth tap in scratch, so
 * each input row is read once per tile. Scratch per block, in bytes (f32
 * unless said; rows padded to whole blocks, see vn_pool_scratch):
 *   xin   group x Win             the loaded input rows
 *   hbuf  kD x band x Hs          horizontal results (+ the same in i32: argmax columns)
 *   out   R x OWs                 the output tile
 *   plus per-row helpers: divisor rows (AveragePool), accumulator, row
 *   choice, compare mask and the i64 index row (Indices).
 * Global: a tile is `gp` planes; each plane streams through scratch in
 * chunks of `chunk` pixels.
 */
#include <stdlib.h>

#include "ops/pool.h"

/* Output elements per tile worth a tile's fixed costs (copies, loop set-up). */
#define TILE_TARGET  4096
#define GROUP_ROWS   8
#define CHUNK_TARGET 8192

static int64_t band_rows(const vn_pool_plan *p, int64_t R)
{
    const vn_pool_geom *g = &p->g;
    return vn_ops_min(g->in[1], (R - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1);
}

/* Bytes of scratch a block needs for tiles of R rows (plus rounding slack
 * of one block per buffer). */
static int64_t scratch_bytes(const vn_pool_plan *p, int64_t R)
{
    vn_pool_rows z = vn_pool_rows_of(p);
    int64_t io = p->dtype == VN_F32 ? 0 : 2 * (int64_t)vn_dtype_size(p->dtype);
    int64_t band = band_rows(p, R), kd = p->g.k[0];
    int64_t b = vn_pool_xin_elems(p) * 4 + p->group * z.win * io + R * z.ows * (4 + io);
    b += kd * band * z.hs * (p->indices ? 8 : 4);
    if (p->kind == VN_POOL_AVG) b += 2 * z.ows * 4;
    if (p->indices) b += z.hs * 4 + vn_ops_round_up(p->g.out[2], 4) * 8;
    return b + 16 * VN_BLOCK_BYTES;
}

static vn_status fill_tables(const char *where, vn_pool_plan *p)
{
    const vn_pool_geom *g = &p->g;
    int64_t kw = g->k[2], ow = g->out[2];
    p->ow_lo = malloc((size_t)kw * sizeof *p->ow_lo);
    p->ow_hi = malloc((size_t)kw * sizeof *p->ow_hi);
    p->cw = malloc((size_t)ow * sizeof *p->cw);
    if (!p->ow_lo || !p->ow_hi || !p->cw)
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the pooling tables");
    for (int64_t t = 0; t < kw; t++) {
        /* ow*s - pb + t*d in [0, W)  <=>  ow in [lo, hi) */
        int64_t off = t * g->d[2] - g->pb[2], lo = 0, hi = ow;
        while (lo < ow && lo * g->s[2] + off < 0) lo++;
        while (hi > lo && (hi - 1) * g->s[2] + off >= g->in[2]) hi--;
        p->ow_lo[t] = lo;
        p->ow_hi[t] = hi;
    }
    int64_t lo = g->count_include_pad ? -g->pb[2] : 0;
    int64_t hi = g->count_include_pad ? g->in[2] + g->pe[2] : g->in[2];
    for (int64_t o = 0; o < ow; o++) p->cw[o] = (float)vn_pool_taps_in(g, 2, o, lo, hi);
    return VN_OK;
}

vn_status vn_pool_plan_windowed(const char *where, vn_device *device, vn_pool_plan *p)
{
    const vn_pool_geom *g = &p->g;
    vn_status st = fill_tables(where, p);
    if (st != VN_OK) return st;
    int64_t budget = vn_device_arena_size(device, VN_ARENA_UB) - VN_OPS_UB_MARGIN;
    int64_t row = g->out[2] * p->lanes;
    p->group = vn_ops_min(GROUP_ROWS, g->in[1]);
    int64_t R = vn_ops_min(g->out[1], vn_ops_max(1, TILE_TARGET / row));
    while (R > 1 && scratch_bytes(p, R) > budget) R = (R + 1) / 2;
    while (p->group > 1 && scratch_bytes(p, R) > budget) p->group /= 2;
    if (scratch_bytes(p, R) > budget)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "one output row (%lld values, kernel %lld x %lld x %lld) needs %lld bytes "
                        "of UB, more than the %lld available",
                        (long long)row, (long long)g->k[0], (long long)g->k[1], (long long)g->k[2],
                        (long long)scratch_bytes(p, 1), (long long)budget);
    p->R = R;
    p->band = band_rows(p, R);
    p->row_tiles = vn_ops_div_up(g->out[1], R);
    p->tiles = p->planes * g->out[0] * p->row_tiles;
    p->block_dim = vn_ops_block_dim(device, p->tiles, R * row * g->k[0] * g->k[1] * g->k[2]);
    return VN_OK;
}

vn_status vn_pool_plan_global(const char *where, vn_device *device, vn_pool_plan *p)
{
    int64_t pix = p->g.in[0] * p->g.in[1] * p->g.in[2];
    int64_t budget = vn_device_arena_size(device, VN_ARENA_UB) - VN_OPS_UB_MARGIN;
    int64_t io = p->dtype == VN_F32 ? 0 : 2 * (int64_t)vn_dtype_size(p->dtype);
    /* chunk buffer (+ staging) and an output row of gp * lanes values */
    p->chunk = vn_ops_max(1, vn_ops_min(pix, CHUNK_TARGET / p->lanes));
    p->gp = vn_ops_max(1, vn_ops_min(p->planes, 256));
    int64_t need = p->chunk * p->lanes * (4 + io) + p->gp * p->lanes * (4 + io) + 64 * 8;
    if (need > budget)
        return vn_error(VN_ERR_UNSUPPORTED, where, "UB of %lld bytes is too small",
                        (long long)budget);
    p->tiles = vn_ops_div_up(p->planes, p->gp);
    p->block_dim = vn_ops_block_dim(device, p->tiles, p->gp * pix * p->lanes);
    /* more, smaller tiles when the planes would leave workers idle */
    int64_t workers = vn_device_num_workers(device);
    if (p->tiles < workers && p->planes > p->tiles) {
        p->gp = vn_ops_max(1, p->planes / workers);
        p->tiles = vn_ops_div_up(p->planes, p->gp);
        p->block_dim = vn_ops_block_dim(device, p->tiles, p->gp * pix * p->lanes);
    }
    return VN_OK;
}

void vn_pool_plan_release(vn_pool_plan *p)
{
    if (!p) return;
    free(p->ow_lo);
    free(p->ow_hi);
    free(p->cw);
    free(p);
}
