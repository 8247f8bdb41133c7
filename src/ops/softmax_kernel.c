/*
 * softmax_kernel.c — Softmax / LogSoftmax in f32 scratch, numerically
 * stable: y = exp(x - max) / sum(exp(x - max)), log-softmax
 * y = (x - max) - log(sum(exp(x - max))) (two subtractions, so x - max is
 * exact near the max even for large-magnitude x).
 *
 * Each tile runs three passes over its chunks of the reduced axis: max, sum
 * of exponentials, output. With one chunk the data stays in scratch and,
 * for Softmax, the exponentials of the sum pass are kept in place. Resident
 * rows use the fused vn_softmax_rows instead (same algorithm, three passes per
 * row while it is in L1; 16-bit rows are cast to f32 in scratch first, so the
 * exponentials are kept in f32 rather than recomputed).
 */
#include <math.h>

#include "ops/softmax.h"

typedef struct softmax_args {
    const vn_softmax_plan *p;
    vn_gm x, y;
} softmax_args;

typedef struct softmax_block {
    vn_queue *qin, *qout;    /* NULL for f32 */
    vn_local work, tmp, red; /* work: [R][W]; tmp: one row of W */
    vn_local mvec, svec;     /* columns: max and sum vectors */
    double *m, *s;           /* rows: per-row max and sum */
} softmax_block;

/* Where chunk k of a tile lies: element offset, rows and columns in scratch. */
typedef struct chunk {
    int64_t off, nrows, ncols, pitch, width;
} chunk;

static chunk chunk_of(const vn_softmax_plan *p, int64_t t, int64_t k)
{
    chunk ch;
    if (p->columns) {
        int64_t o = t / p->ncc, col0 = t % p->ncc * p->C, a0 = k * p->R;
        ch.nrows = vn_ops_min(p->R, p->A - a0);
        ch.ncols = vn_ops_min(p->C, p->inner - col0);
        ch.off = (o * p->A + a0) * p->inner + col0;
        ch.pitch = p->inner;
    } else {
        int64_t row0 = t * p->R, col0 = k * p->C;
        ch.nrows = vn_ops_min(p->R, p->outer - row0);
        ch.ncols = vn_ops_min(p->C, p->A - col0);
        ch.off = row0 * p->A + col0;
        ch.pitch = p->A;
    }
    ch.width = vn_ops_row_width(ch.ncols, p->dtype);
    return ch;
}

static void carve(vn_core *c, const vn_softmax_plan *p, softmax_block *b)
{
    int64_t w = vn_ops_row_width(p->C, p->dtype), tile = p->R * w;
    b->qin = b->qout = NULL;
    if (p->dtype != VN_F32) {
        b->qin = vn_queue_new(c, VN_VECIN, 2, tile, p->dtype);
        b->qout = vn_queue_new(c, VN_VECOUT, 2, tile, p->dtype);
    }
    b->work = vn_buf_new(c, VN_VECCALC, tile, VN_F32);
    b->tmp = vn_buf_new(c, VN_VECCALC, w, VN_F32);
    b->red = vn_buf_new(c, VN_VECCALC, 8, VN_F32);
    if (p->columns) {
        b->mvec = vn_buf_new(c, VN_VECCALC, w, VN_F32);
        b->svec = vn_buf_new(c, VN_VECCALC, w, VN_F32);
    } else {
        vn_local stats = vn_buf_new(c, VN_VECCALC, 2 * p->R, VN_I64);
        b->m = vn_ptr(double, stats);
        b->s = b->m + p->R;
    }
}

/* ---- rows: per-row scalars --------------------------------------------------------- */

static double reduce(vn_core *c, const softmax_block *b, vn_reduce kind, vn_local src, int64_t n)
{
    vn_reduce(c, kind, b->red, src, n);
    return vn_ptr(const float, b->red)[0];
}

static void rows_max(vn_core *c, const softmax_block *b, const chunk *ch)
{
    for (int64_t j = 0; j < ch->nrows; j++) {
        double v = reduce(c, b, VN_REDUCE_MAX, vn_local_at(c, b->work, j * ch->width), ch->ncols);
        if (v > b->m[j]) b->m[j] = v;
    }
}

static void rows_sum(vn_core *c, const softmax_block *b, const chunk *ch, bool in_place)
{
    for (int64_t j = 0; j < ch->nrows; j++) {
        vn_local row = vn_local_at(c, b->work, j * ch->width), dst = in_place ? row : b->tmp;
        vn_adds(c, dst, row, -b->m[j], ch->ncols);
        vn_exp(c, dst, dst, ch->ncols);
        b->s[j] += reduce(c, b, VN_REDUCE_SUM, dst, ch->ncols);
    }
}

static void rows_out(vn_core *c, const vn_softmax_plan *p, const softmax_block *b, const chunk *ch,
                     bool have_exp)
{
    for (int64_t j = 0; j < ch->nrows; j++) {
        vn_local row = vn_local_at(c, b->work, j * ch->width);
        if (!have_exp) vn_adds(c, row, row, -b->m[j], ch->ncols);
        if (p->log) {
            vn_adds(c, row, row, -log(b->s[j]), ch->ncols);
            continue;
        }
        if (!have_exp) vn_exp(c, row, row, ch->ncols);
        vn_muls(c, row, row, 1.0 / b->s[j], ch->ncols);
    }
}

/* ---- columns: per-column vectors ------------------------------------------------------ */

static void cols_max(vn_core *c, const softmax_block *b, const chunk *ch)
{
    for (int64_t a = 0; a < ch->nrows; a++)
        vn_max(c, b->mvec, b->mvec, vn_local_at(c, b->work, a * ch->width), ch->width);
}

static void cols_sum(vn_core *c, const softmax_block *b, const chunk *ch, bool in_place)
{
    for (int64_t a = 0; a < ch->nrows; a++) {
        vn_local row = vn_local_at(c, b->work, a * ch->width), dst = in_place ? row : b->tmp;
        vn_sub(c, dst, row, b->mvec, ch->width);
        vn_exp(c, dst, dst, ch->width);
        vn_add(c, b->svec, b->svec, dst, ch->width);
    }
}

static void cols_out(vn_core *c, const vn_softmax_plan *p, const softmax_block *b, const chunk *ch,
                     bool have_exp)
{
    for (int64_t a = 0; a < ch->nrows; a++) {
        vn_local row = vn_local_at(c, b->work, a * ch->width);
        if (!have_exp) vn_sub(c, row, row, b->mvec, ch->width);
        if (p->log) {
            vn_sub(c, row, row, b->svec, ch->width); /* svec holds log(sum) */
            continue;
        }
        if (!have_exp) vn_exp(c, row, row, ch->width);
        vn_mul(c, row, row, b->svec, ch->width); /* svec holds 1 / sum */
    }
}

/* ---- passes ------------------------------------------------------------------------------ */

static void start_tile(vn_core *c, const vn_softmax_plan *p, const softmax_block *b,
                       const chunk *ch)
{
    if (p->columns) {
        vn_duplicate(c, b->mvec, -INFINITY, ch->width);
        vn_duplicate(c, b->svec, 0.0, ch->width);
        return;
    }
    for (int64_t j = 0; j < p->R; j++) {
        b->m[j] = -INFINITY;
        b->s[j] = 0.0;
    }
}

static void finish_sum(vn_core *c, const vn_softmax_plan *p, const softmax_block *b,
                       const chunk *ch)
{
    if (!p->columns) return; /* rows use log / 1 / s directly */
    if (p->log)
        vn_ln(c, b->svec, b->svec, ch->width);
    else
        vn_reciprocal(c, b->svec, b->svec, ch->width);
}

static void load(vn_core *c, const softmax_args *a, const softmax_block *b, const chunk *ch)
{
    vn_ops_load_f32(c, b->qin, b->work, a->x, ch->off, ch->nrows, ch->ncols, ch->pitch);
}

static void pass(vn_core *c, const softmax_args *a, const softmax_block *b, const chunk *ch,
                 int32_t which, bool in_place)
{
    const vn_softmax_plan *p = a->p;
    if (which == 0)
        p->columns ? cols_max(c, b, ch) : rows_max(c, b, ch);
    else if (which == 1)
        p->columns ? cols_sum(c, b, ch, in_place) : rows_sum(c, b, ch, in_place);
    else
        p->columns ? cols_out(c, p, b, ch, in_place) : rows_out(c, p, b, ch, in_place);
}

/* Resident rows: start fetching tile t while the current one is computed
 * (its copy-out then streams the fetch along). Rows are contiguous in x. */
static void prefetch_rows(vn_core *c, const softmax_args *a, int64_t t)
{
    const vn_softmax_plan *p = a->p;
    if (p->columns || p->nchunks != 1) return;
    chunk ch = chunk_of(p, t, 0);
    vn_prefetch(c, a->x, ch.off, (ch.nrows - 1) * ch.pitch + ch.ncols);
}

static void softmax_tile(vn_core *c, const softmax_args *a, const softmax_block *b, int64_t t,
                         bool more)
{
    const vn_softmax_plan *p = a->p;
    chunk first = chunk_of(p, t, 0);
    start_tile(c, p, b, &first);
    if (p->nchunks == 1 && !p->columns && p->dtype == VN_F32) {
        /* resident f32 rows in place in global memory (staging them through
         * VECIN / VECOUT cost half the bandwidth on one core); work is the
         * exponentials' scratch row */
        if (more) prefetch_rows(c, a, t + 1);
        vn_softmax_rows_gm(c, a->y, first.off, a->x, first.off, b->work, first.nrows, first.ncols,
                           first.pitch, p->log);
        return;
    }
    if (p->nchunks == 1 && !p->columns) { /* resident rows: one fused instruction */
        load(c, a, b, &first);
        if (more) prefetch_rows(c, a, t + 1);
        vn_softmax_rows(c, b->work, b->work, first.nrows, first.ncols, first.width, p->log);
        vn_ops_store_f32(c, b->qout, a->y, first.off, b->work, first.nrows, first.ncols,
                         first.pitch);
        return;
    }
    if (p->nchunks == 1) { /* resident columns: one load, exponentials kept for Softmax */
        bool in_place = !p->log;
        load(c, a, b, &first);
        pass(c, a, b, &first, 0, false);
        pass(c, a, b, &first, 1, in_place);
        finish_sum(c, p, b, &first);
        pass(c, a, b, &first, 2, in_place);
        vn_ops_store_f32(c, b->qout, a->y, first.off, b->work, first.nrows, first.ncols,
                         first.pitch);
        return;
    }
    for (int32_t which = 0; which < 3; which++) {
        if (which == 2) finish_sum(c, p, b, &first);
        for (int64_t k = 0; k < p->nchunks; k++) {
            chunk ch = chunk_of(p, t, k);
            load(c, a, b, &ch);
            pass(c, a, b, &ch, which, false);
            if (which == 2)
                vn_ops_store_f32(c, b->qout, a->y, ch.off, b->work, ch.nrows, ch.ncols, ch.pitch);
        }
    }
}

static void softmax_kernel(vn_core *c, const void *args)
{
    const softmax_args *a = args;
    softmax_block b;
    carve(c, a->p, &b);
    for (int64_t t; vn_tile_next(c, &t);) softmax_tile(c, a, &b, t, vn_tile_followed(c, t));
}

vn_status vn_softmax_execute(vn_device *device, const vn_softmax_plan *p, const void *x, void *y,
                             vn_kernel_counters *counters)
{
    if (p->tiles == 0) return VN_OK;
    int64_t n = p->outer * p->A * p->inner;
    softmax_args a = {p, vn_gm_make((void *)x, p->dtype, n), vn_ops_output_gm(y, p->dtype, n)};
    vn_launch_desc d = {softmax_kernel, p->log ? "log_softmax" : "softmax", p->block_dim, &a, -1,
                        p->tiles};
    return vn_launch(device, &d, counters);
}
