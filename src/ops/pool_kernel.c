/*
 * pool_kernel.c — the windowed pooling kernel (MaxPool, AveragePool, LpPool
 * on NCHW and NC1HWC0), separable: a horizontal pass reduces each input row
 * of the tile's band along the W taps (pool_hpass.c), then a vertical pass
 * reduces, per output row, the horizontal results of the (kd, kh) taps with
 * whole-row vector instructions. Max and sum are separable, and so is the
 * AveragePool divisor: the taps counted form a box, so the count is
 * cd(od) * ch(oh) * cw(ow).
 *
 * Indices (MaxPool on NCHW): the horizontal pass records the column of each
 * row maximum (first occurrence), the vertical pass which row won (a later
 * row only when strictly greater), which
 * together is the first maximum in row-major window order, as ONNX's
 * reference scans it. The first valid row seeds the accumulator, so inputs
 * of -inf still get a real index.
 *
 * Invariant: every scratch element a vector instruction reads was written
 * by a vector instruction or a copy (rows are seeded by vn_duplicate before
 * scalar code fills them), as checked mode requires.
 */
#include <math.h>

#include "ops/pool.h"

typedef struct pool_args {
    const vn_pool_plan *p;
    vn_gm x, y, idx;
} pool_args;

typedef struct pool_block {
    vn_pool_rows z;
    vn_queue *qin, *qout; /* NULL for f32 */
    vn_local xin, hbuf, out, divw, dtmp, rowsel, idx64;
    int32_t *hidx;
} pool_block;

/* Where one tile sits. */
typedef struct pool_tile {
    int64_t plane, od, oh0, nr, ih_lo, ih_hi;
} pool_tile;

static double identity(const vn_pool_plan *p)
{
    return p->kind == VN_POOL_MAX ? -INFINITY : 0.0;
}

static void carve_indices(vn_core *c, const vn_pool_plan *p, pool_block *b)
{
    int64_t hs = b->z.hs, ow4 = vn_ops_round_up(p->g.out[2], 4);
    b->hidx = vn_ptr(int32_t, vn_buf_new(c, VN_VECCALC, p->g.k[0] * p->band * hs, VN_I32));
    b->rowsel = vn_buf_new(c, VN_VECCALC, hs, VN_I32);
    b->idx64 = vn_buf_new(c, VN_VECCALC, ow4, VN_I64);
    /* written by scalar code below; marked written once here */
    vn_duplicate(c, vn_local_as(b->idx64, VN_F32), 0.0, 2 * ow4);
}

/* with_indices: this run writes the Indices output (a plan for MaxPool
 * allows it; a node with one output never asks, and skips the tracking). */
static void carve(vn_core *c, const vn_pool_plan *p, pool_block *b, bool with_indices)
{
    b->z = vn_pool_rows_of(p);
    b->qin = b->qout = NULL;
    if (p->dtype != VN_F32) {
        b->qin = vn_queue_new(c, VN_VECIN, 2, p->group * b->z.win, p->dtype);
        b->qout = vn_queue_new(c, VN_VECOUT, 2, p->R * b->z.ows, p->dtype);
    }
    b->xin = vn_buf_new(c, VN_VECCALC, vn_pool_xin_elems(p), VN_F32);
    b->hbuf = vn_buf_new(c, VN_VECCALC, p->g.k[0] * p->band * b->z.hs, VN_F32);
    b->out = vn_buf_new(c, VN_VECCALC, p->R * b->z.ows, VN_F32);
    /* the row padding is never computed but a cast to f16 / bf16 reads it */
    vn_duplicate(c, b->out, 0.0, p->R * b->z.ows);
    b->hidx = NULL;
    if (with_indices) carve_indices(c, p, b);
    if (p->kind == VN_POOL_AVG) {
        b->divw = vn_buf_new(c, VN_VECCALC, b->z.ows, VN_F32);
        b->dtmp = vn_buf_new(c, VN_VECCALC, b->z.ows, VN_F32);
        vn_duplicate(c, b->divw, 1.0, b->z.ows);
        float *w = vn_ptr(float, b->divw);
        for (int64_t o = 0; o < p->g.out[2]; o++)
            for (int32_t l = 0; l < p->lanes; l++) w[o * p->lanes + l] = p->cw[o];
    }
}

static pool_tile locate(const vn_pool_plan *p, int64_t t)
{
    const vn_pool_geom *g = &p->g;
    pool_tile q;
    int64_t rt = t % p->row_tiles;
    q.od = (t / p->row_tiles) % g->out[0];
    q.plane = t / (p->row_tiles * g->out[0]);
    q.oh0 = rt * p->R;
    q.nr = vn_ops_min(p->R, g->out[1] - q.oh0);
    q.ih_lo = vn_ops_max(0, q.oh0 * g->s[1] - g->pb[1]);
    q.ih_hi =
        vn_ops_min(g->in[1], (q.oh0 + q.nr - 1) * g->s[1] - g->pb[1] + (g->k[1] - 1) * g->d[1] + 1);
    return q;
}

static int64_t depth_of(const vn_pool_geom *g, int64_t od, int64_t kd)
{
    return od * g->s[0] - g->pb[0] + kd * g->d[0];
}

/* Horizontal pass of the band rows of depth tap kd (input depth id). */
static void band_pass(vn_core *c, const pool_args *a, const pool_block *b, const pool_tile *q,
                      int64_t kd, int64_t id)
{
    const vn_pool_plan *p = a->p;
    const vn_pool_geom *g = &p->g;
    int64_t rows = q->ih_hi - q->ih_lo, hs = b->z.hs, wl = g->in[2] * p->lanes;
    int64_t slot0 = kd * p->band;
    vn_duplicate(c, vn_local_at(c, b->hbuf, slot0 * hs), identity(p), rows * hs);
    if (b->hidx)
        for (int64_t e = 0; e < rows * hs; e++) b->hidx[slot0 * hs + e] = -1;
    if (p->lanes > 1 && g->s[2] > 1) {
        for (int64_t r = 0; r < rows; r++) {
            int64_t off = ((q->plane * g->in[0] + id) * g->in[1] + q->ih_lo + r) * wl;
            vn_pool_hpass_c0_strided(c, p, vn_local_at(c, b->hbuf, (slot0 + r) * hs), b->xin, a->x,
                                     off);
        }
        return;
    }
    for (int64_t r0 = 0; r0 < rows; r0 += p->group) {
        int64_t gr = vn_ops_min(p->group, rows - r0);
        int64_t off = ((q->plane * g->in[0] + id) * g->in[1] + q->ih_lo + r0) * wl;
        vn_ops_load_f32(c, b->qin, b->xin, a->x, off, gr, wl, wl);
        if (p->kind == VN_POOL_LP) vn_pool_lp_pre(c, b->xin, p->g.p, gr * b->z.win);
        for (int64_t j = 0; j < gr; j++) {
            int64_t slot = slot0 + r0 + j;
            vn_pool_hpass(c, p, vn_local_at(c, b->hbuf, slot * hs),
                          vn_local_at(c, b->xin, j * b->z.win),
                          b->hidx ? b->hidx + slot * hs : NULL);
        }
    }
}

/* Divisor of AveragePool for output row oh of depth od: cd * ch * cw[ow]. */
static void divide(vn_core *c, const vn_pool_plan *p, const pool_block *b, vn_local dst, int64_t od,
                   int64_t oh)
{
    const vn_pool_geom *g = &p->g;
    double n = 1;
    for (int32_t i = 0; i < 2; i++) {
        int64_t lo = g->count_include_pad ? -g->pb[i] : 0;
        int64_t hi = g->count_include_pad ? g->in[i] + g->pe[i] : g->in[i];
        n *= (double)vn_pool_taps_in(g, i, i == 0 ? od : oh, lo, hi);
    }
    int64_t len = g->out[2] * p->lanes;
    vn_muls(c, b->dtmp, b->divw, n, len);
    vn_div(c, dst, dst, b->dtmp, len);
}

/* Output row oh (no indices): reduce the valid (kd, kh) horizontal rows. */
static void vertical_row(vn_core *c, const vn_pool_plan *p, const pool_block *b, const pool_tile *q,
                         int64_t oh, vn_local dst)
{
    const vn_pool_geom *g = &p->g;
    int64_t len = g->out[2] * p->lanes;
    vn_vop op = p->kind == VN_POOL_MAX ? VN_VOP_MAX : VN_VOP_ADD;
    vn_duplicate(c, dst, identity(p), len);
    for (int64_t kd = 0; kd < g->k[0]; kd++) {
        int64_t id = depth_of(g, q->od, kd);
        if (id < 0 || id >= g->in[0]) continue;
        for (int64_t kh = 0; kh < g->k[1]; kh++) {
            int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
            if (ih < 0 || ih >= g->in[1]) continue;
            int64_t slot = kd * p->band + ih - q->ih_lo;
            vn_vbinary(c, op, dst, dst, vn_local_at(c, b->hbuf, slot * b->z.hs), len);
        }
    }
    if (p->kind == VN_POOL_AVG) divide(c, p, b, dst, q->od, oh);
    if (p->kind == VN_POOL_LP) vn_pool_lp_post(c, dst, g->p, len);
}

/* Flattened input index of (plane, id, ih, iw), as storage_order lays it out. */
static int64_t flat_index(const vn_pool_geom *g, int64_t plane, int64_t id, int64_t ih, int64_t iw)
{
    const int64_t *in = g->in;
    int64_t base = plane * in[0] * in[1] * in[2];
    if (g->storage_order == 0) return base + (id * in[1] + ih) * in[2] + iw;
    /* column-major over the operator's spatial dims: the first one fastest */
    if (g->nsp == 3) return base + id + ih * in[0] + iw * in[0] * in[1];
    return base + ih + iw * in[1];
}

static void write_indices(vn_core *c, const pool_args *a, const pool_block *b, const pool_tile *q,
                          int64_t oh, bool any)
{
    const vn_pool_plan *p = a->p;
    const vn_pool_geom *g = &p->g;
    const int32_t *sel = vn_ptr(const int32_t, b->rowsel);
    int64_t *ix = vn_ptr(int64_t, b->idx64), ow = g->out[2];
    for (int64_t o = 0; o < ow; o++) {
        int64_t slot = any ? sel[o] : -1;
        int32_t iw = slot >= 0 ? b->hidx[slot * b->z.hs + o] : -1;
        if (iw < 0) {
            ix[o] = -1; /* a window holding no input element */
            continue;
        }
        int64_t id = depth_of(g, q->od, slot / p->band), ih = q->ih_lo + slot % p->band;
        ix[o] = flat_index(g, q->plane, id, ih, iw);
    }
    int64_t off = ((q->plane * g->out[0] + q->od) * g->out[1] + oh) * ow;
    vn_ops_store_rows(c, a->idx, off, b->idx64, 1, ow, ow);
}

/* Output row oh with Indices: the max of the valid (kd, kh) rows with the
 * winning row recorded per column (a later row only when strictly greater).
 * Scalar: the tile model has no vector argmax, and the compare + select
 * pair it would take costs more than this loop. */
static void vertical_row_indices(vn_core *c, const pool_args *a, const pool_block *b,
                                 const pool_tile *q, int64_t oh, vn_local dst)
{
    const vn_pool_geom *g = &a->p->g;
    int64_t ow = g->out[2];
    const float *hb = vn_ptr(const float, b->hbuf);
    float *d = vn_ptr(float, dst);
    int32_t *sel = vn_ptr(int32_t, b->rowsel);
    bool any = false;
    for (int64_t kd = 0; kd < g->k[0]; kd++) {
        int64_t id = depth_of(g, q->od, kd);
        if (id < 0 || id >= g->in[0]) continue;
        for (int64_t kh = 0; kh < g->k[1]; kh++) {
            int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];
            if (ih < 0 || ih >= g->in[1]) continue;
            int32_t slot = (int32_t)(kd * a->p->band + ih - q->ih_lo);
            const float *row = hb + slot * b->z.hs;
            for (int64_t o = 0; o < ow; o++)
                if (!any || row[o] > d[o]) d[o] = row[o], sel[o] = slot;
            any = true;
        }
    }
    if (!any) vn_duplicate(c, dst, -INFINITY, ow);
    write_indices(c, a, b, q, oh, any);
}

static void run_tile(vn_core *c, const pool_args *a, const pool_block *b, int64_t t)
{
    const vn_pool_plan *p = a->p;
    const vn_pool_geom *g = &p->g;
    pool_tile q = locate(p, t);
    for (int64_t kd = 0; kd < g->k[0]; kd++) {
        int64_t id = depth_of(g, q.od, kd);
        if (id >= 0 && id < g->in[0] && q.ih_hi > q.ih_lo) band_pass(c, a, b, &q, kd, id);
    }
    for (int64_t j = 0; j < q.nr; j++) {
        vn_local dst = vn_local_at(c, b->out, j * b->z.ows);
        if (a->idx.data)
            vertical_row_indices(c, a, b, &q, q.oh0 + j, dst);
        else
            vertical_row(c, p, b, &q, q.oh0 + j, dst);
    }
    int64_t wl = g->out[2] * p->lanes;
    int64_t off = ((q.plane * g->out[0] + q.od) * g->out[1] + q.oh0) * wl;
    vn_ops_store_f32(c, b->qout, a->y, off, b->out, q.nr, wl, wl);
}

static void pool_kernel(vn_core *c, const void *args)
{
    const pool_args *a = args;
    pool_block b;
    carve(c, a->p, &b, a->idx.data != NULL);
    for (int64_t t; vn_tile_next(c, &t);) run_tile(c, a, &b, t);
}

vn_status vn_pool_run_windowed(vn_device *device, const vn_pool_plan *p, const void *x, void *y,
                               int64_t *idx, vn_kernel_counters *counters)
{
    if (p->tiles == 0) return VN_OK;
    if (vn_pool_direct_ok(p)) return vn_pool_run_direct(device, p, x, y, counters);
    if (!idx && vn_pool_bytes_ok(p)) return vn_pool_run_bytes(device, p, x, y, counters);
    const vn_pool_geom *g = &p->g;
    int64_t nin = p->planes * g->in[0] * g->in[1] * g->in[2] * p->lanes;
    int64_t nout = p->planes * g->out[0] * g->out[1] * g->out[2];
    pool_args a = {p, vn_gm_make((void *)x, p->dtype, nin),
                   vn_ops_output_gm(y, p->dtype, nout * p->lanes),
                   vn_gm_make(idx, VN_I64, idx && p->indices ? nout : 0)};
    if (!p->indices) a.idx.data = NULL;
    static const char *const names[] = {"max_pool", "average_pool", "lp_pool"};
    vn_launch_desc d = {pool_kernel, names[p->kind], p->block_dim, &a, -1, p->tiles};
    return vn_launch(device, &d, counters);
}
