/*
 * convtranspose_col2im.c — the second half of ConvTranspose: output rows
 * from the GEMM's col matrix.
 *
 * An output row is one (od, oh) of one (n, m), all ow; a tile is R
 * consecutive rows of one (n, m) (contiguous in Y). For output row (od, oh)
 * and kernel row (kd, kh) the contributing input row is (id, ih) with
 * id = (od + pbd - kd*dd) / sd (ih alike) when both divide exactly and land
 * inside the input; the kW col rows of (m, kd, kh, ·, id, ih) are then
 * scatter-added along the row: column iw of tap kw lands on
 * ow = iw*sw - pbw + kw*dw. Each col row feeds exactly one output row, so
 * the col matrix is read once in all, and tiles write disjoint outputs.
 * 1-D and 2-D are the same code with D (and H) of size 1.
 *
 * The scatter has stride sw and starts at unaligned columns, which no vector
 * instruction of the tile model addresses; it is a scalar loop over scratch
 * (stride 1 vectorises in the compiler). Output rows are seeded with the
 * bias by vn_duplicate, which also marks them written for checked mode.
 */
#include <stdlib.h>

#include "ops/convtranspose.h"

#define TILE_TARGET 8192

typedef struct col2im_args {
    const vn_convt_plan *p;
    vn_gm col, bias, y;
} col2im_args;

typedef struct col2im_block {
    int64_t ws, ows;
    vn_local cbuf, out, bval;
} col2im_block;

static int64_t scratch_bytes(const vn_convt_plan *p, int64_t R)
{
    int64_t ws = vn_ops_row_width(p->g.in[VN_CONVT_W], VN_F32);
    int64_t ows = vn_ops_row_width(p->g.out[VN_CONVT_W], VN_F32);
    return 4 * (p->g.k[VN_CONVT_W] * ws + R * ows) + 8 * VN_BLOCK_BYTES;
}

static vn_status fill_ranges(const char *where, vn_convt_plan *p)
{
    const vn_convt_geom *g = &p->g;
    const int32_t w = VN_CONVT_W;
    p->iw_lo = malloc((size_t)g->k[w] * sizeof *p->iw_lo);
    p->iw_hi = malloc((size_t)g->k[w] * sizeof *p->iw_hi);
    if (!p->iw_lo || !p->iw_hi)
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the ConvTranspose plan");
    for (int64_t t = 0; t < g->k[w]; t++) {
        int64_t off = t * g->d[w] - g->pb[w], lo = 0, hi = g->in[w];
        while (lo < hi && lo * g->s[w] + off < 0) lo++;
        while (hi > lo && (hi - 1) * g->s[w] + off >= g->out[w]) hi--;
        p->iw_lo[t] = lo;
        p->iw_hi[t] = hi;
    }
    return VN_OK;
}

vn_status vn_convt_col2im_plan(const char *where, vn_device *device, vn_convt_plan *p)
{
    const vn_convt_geom *g = &p->g;
    const int32_t w = VN_CONVT_W;
    vn_status st = fill_ranges(where, p);
    if (st != VN_OK) return st;
    p->rows = p->krows = 1;
    for (int32_t i = 0; i < w; i++) {
        p->rows *= g->out[i];
        p->krows *= g->k[i];
    }
    int64_t budget = vn_device_arena_size(device, VN_ARENA_UB) - VN_OPS_UB_MARGIN;
    int64_t R = vn_ops_min(p->rows, vn_ops_max(1, TILE_TARGET / g->out[w]));
    while (R > 1 && scratch_bytes(p, R) > budget) R = (R + 1) / 2;
    if (scratch_bytes(p, R) > budget)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "rows of %lld inputs and %lld outputs with a kernel %lld wide need %lld "
                        "bytes of UB, more than the %lld available",
                        (long long)g->in[w], (long long)g->out[w], (long long)g->k[w],
                        (long long)scratch_bytes(p, 1), (long long)budget);
    p->R = R;
    p->row_tiles = vn_ops_div_up(p->rows, R);
    p->tiles = g->N * g->M * p->row_tiles;
    p->block_dim = vn_ops_block_dim(device, p->tiles, R * g->out[w] * p->kk);
    return VN_OK;
}

/* Scatter-add the kW loaded col rows (one input row) into output row y. */
static void scatter_row(const vn_convt_plan *p, const col2im_block *b, float *y)
{
    const vn_convt_geom *g = &p->g;
    const float *c = vn_ptr(const float, b->cbuf);
    const int32_t w = VN_CONVT_W;
    int64_t s = g->s[w];
    for (int64_t t = 0; t < g->k[w]; t++) {
        const float *row = c + t * b->ws;
        int64_t off = t * g->d[w] - g->pb[w];
        for (int64_t iw = p->iw_lo[t]; iw < p->iw_hi[t]; iw++) y[iw * s + off] += row[iw];
    }
}

/* The input row (flattened over the leading dims) that kernel row kr sends
 * to output row orow, or -1 when it sends none: per leading dim i,
 * in = (out + pb - k*d) / s must divide exactly and land inside [0, in). */
static int64_t input_row(const vn_convt_geom *g, int64_t orow, int64_t kr)
{
    int64_t irow = 0, pitch = 1;
    for (int32_t i = VN_CONVT_W - 1; i >= 0; i--) {
        int64_t t = orow % g->out[i] + g->pb[i] - kr % g->k[i] * g->d[i];
        if (t < 0 || t % g->s[i] != 0 || t / g->s[i] >= g->in[i]) return -1;
        irow += t / g->s[i] * pitch;
        pitch *= g->in[i];
        orow /= g->out[i];
        kr /= g->k[i];
    }
    return irow;
}

/* Output row orow of (n, m): bias, then every kernel row that lands on it. */
static void output_row(vn_core *c, const col2im_args *a, const col2im_block *b, int64_t n,
                       int64_t m, int64_t orow, vn_local dst)
{
    const vn_convt_plan *p = a->p;
    const vn_convt_geom *g = &p->g;
    const int32_t w = VN_CONVT_W;
    float bias = a->bias.data ? vn_ptr(const float, b->bval)[0] : 0.0f;
    vn_duplicate(c, dst, bias, g->out[w]);
    int64_t grp = m / g->Mg, mg = m % g->Mg;
    for (int64_t kr = 0; kr < p->krows && a->col.data; kr++) {
        int64_t irow = input_row(g, orow, kr);
        if (irow < 0) continue;
        int64_t row0 = ((n * g->G + grp) * g->Mg + mg) * p->kk + kr * g->k[w];
        vn_ops_load_rows(c, b->cbuf, a->col, row0 * p->hw + irow * g->in[w], g->k[w], g->in[w],
                         p->hw);
        scatter_row(p, b, vn_ptr(float, dst));
    }
}

static void run_tile(vn_core *c, const col2im_args *a, const col2im_block *b, int64_t t)
{
    const vn_convt_plan *p = a->p;
    const vn_convt_geom *g = &p->g;
    int64_t rt = t % p->row_tiles, nm = t / p->row_tiles, n = nm / g->M, m = nm % g->M;
    int64_t r0 = rt * p->R, nr = vn_ops_min(p->R, p->rows - r0);
    if (a->bias.data) vn_ops_load_rows(c, b->bval, a->bias, m, 1, 1, 1);
    for (int64_t j = 0; j < nr; j++)
        output_row(c, a, b, n, m, r0 + j, vn_local_at(c, b->out, j * b->ows));
    int64_t ow = g->out[VN_CONVT_W];
    vn_ops_store_rows(c, a->y, (nm * p->rows + r0) * ow, b->out, nr, ow, ow);
}

static void col2im_kernel(vn_core *c, const void *args)
{
    const col2im_args *a = args;
    const vn_convt_plan *p = a->p;
    col2im_block b;
    b.ws = vn_ops_row_width(p->g.in[VN_CONVT_W], VN_F32);
    b.ows = vn_ops_row_width(p->g.out[VN_CONVT_W], VN_F32);
    b.cbuf = vn_buf_new(c, VN_VECCALC, p->g.k[VN_CONVT_W] * b.ws, VN_F32);
    b.out = vn_buf_new(c, VN_VECCALC, p->R * b.ows, VN_F32);
    b.bval = vn_buf_new(c, VN_VECCALC, 8, VN_F32);
    for (int64_t t; vn_tile_next(c, &t);) run_tile(c, a, &b, t);
}

vn_status vn_convt_col2im(vn_device *device, const vn_convt_plan *p, const float *col,
                          const float *bias, float *y, vn_kernel_counters *counters)
{
    if (p->tiles == 0) return VN_OK;
    const vn_convt_geom *g = &p->g;
    int64_t ncol = g->N * g->M * p->kk * p->hw, ny = g->N * g->M * p->rows * g->out[VN_CONVT_W];
    col2im_args a = {p, vn_gm_make((void *)col, VN_F32, ncol),
                     vn_gm_make((void *)bias, VN_F32, bias ? g->M : 0),
                     vn_ops_output_gm(y, VN_F32, ny)};
    vn_launch_desc d = {col2im_kernel, "conv_transpose_col2im", p->block_dim, &a, -1, p->tiles};
    return vn_launch(device, &d, counters);
}
