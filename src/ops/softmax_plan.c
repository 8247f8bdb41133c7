/*
 * softmax_plan.c — tiling of Softmax / LogSoftmax (see softmax.h): the
 * largest tile whose buffers fit UB, preferring a tile that holds the whole
 * reduced extent (x read once) over a streamed one (x read three times).
 */
#include "ops/softmax.h"

/* Elements per resident tile of rows: one 16 KiB f32 row of 4096 (measured
 * 0.65 -> 0.72 of triad on [4096, 4096] against 8192: the tile stays near L1). */
#define ROW_TILE_TARGET 4096
#define CHUNK_TARGET    8192
#define COL_TARGET      512 /* columns per tile: 2 KiB f32 rows, long vector runs */
#define COL_MIN         64

static int64_t io_cost(vn_dtype dt)
{
    return dt == VN_F32 ? 0 : 4 * (int64_t)vn_dtype_size(dt);
}

static void plan_rows(vn_softmax_plan *p, int64_t budget)
{
    int64_t w = vn_ops_row_width(p->A, p->dtype);
    int64_t per_row = (4 + io_cost(p->dtype)) * w + 16, fixed = 4 * w;
    if (fixed + per_row <= budget) {
        int64_t r = vn_ops_min((budget - fixed) / per_row, vn_ops_max(1, ROW_TILE_TARGET / w));
        p->R = vn_ops_min(vn_ops_min(r, p->outer), 65535);
        p->C = p->A;
        p->nchunks = 1;
    } else {
        int64_t c = vn_ops_min(CHUNK_TARGET, budget / (8 + io_cost(p->dtype))) / 64 * 64;
        int64_t n = vn_ops_div_up(p->A, c);
        p->C = vn_ops_round_up(vn_ops_div_up(p->A, n), vn_ops_epb(p->dtype));
        p->nchunks = vn_ops_div_up(p->A, p->C);
        p->R = 1;
    }
    p->ncc = 1;
    p->tiles = vn_ops_div_up(p->outer, p->R);
}

/* Rows of A that fit with C columns. */
static int64_t col_rows(const vn_softmax_plan *p, int64_t budget, int64_t c)
{
    int64_t w = vn_ops_row_width(c, p->dtype);
    return (budget - 12 * w) / ((4 + io_cost(p->dtype)) * w);
}

static void plan_columns(vn_softmax_plan *p, int64_t budget, int64_t workers)
{
    int64_t start = vn_ops_min(vn_ops_round_up(p->inner, vn_ops_epb(p->dtype)), COL_TARGET);
    /* Narrower column groups when there are fewer tiles than workers. */
    while (start / 2 >= COL_MIN && p->outer * vn_ops_div_up(p->inner, start) < workers) start /= 2;
    int64_t c = start;
    while (col_rows(p, budget, c) < p->A && c / 2 >= COL_MIN) c /= 2;
    if (col_rows(p, budget, c) < p->A) { /* streamed: keep runs long */
        c = start;
        while (col_rows(p, budget, c) < 1 && c / 2 >= vn_ops_epb(p->dtype)) c /= 2;
    }
    p->C = c;
    p->R = vn_ops_min(col_rows(p, budget, c), p->A);
    p->nchunks = vn_ops_div_up(p->A, p->R);
    p->ncc = vn_ops_div_up(p->inner, p->C);
    p->tiles = p->outer * p->ncc;
}

vn_status vn_softmax_plan_build(const char *where, vn_device *device, vn_softmax_plan *p)
{
    int64_t budget = vn_device_arena_size(device, VN_ARENA_UB) - VN_OPS_UB_MARGIN - 64;
    int64_t need = 64 * (16 + 2 * io_cost(p->dtype)) + 16 * 64;
    if (budget < need)
        return vn_error(VN_ERR_UNSUPPORTED, where, "UB of %lld bytes is too small",
                        (long long)(budget + VN_OPS_UB_MARGIN + 64));
    p->tiles = 0;
    if (p->outer * p->A * p->inner == 0) return VN_OK;
    p->columns = p->inner > 1;
    if (p->columns)
        plan_columns(p, budget, vn_device_num_workers(device));
    else
        plan_rows(p, budget);
    int64_t tile_elems = p->columns ? p->C * p->A : p->R * p->A;
    p->block_dim = vn_ops_block_dim(device, p->tiles, tile_elems);
    return VN_OK;
}
