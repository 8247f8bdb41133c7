/*
 * rownorm.c — tiling and kernel of the row normalisations (LayerNorm,
 * RMSNorm). Statistics are accumulated in f32 by the vector reductions and
 * summed across chunks in double; the variance is two-pass (mean first,
 * then the mean of squared deviations), so no catastrophic cancellation.
 *
 * The mean is refined in the second pass (the corrected two-pass algorithm):
 * with m = the f32-rounded first-pass mean and d = x - m (exact near m),
 * delta = sum(d) / H, var = sum(d^2) / H - delta^2, and the output is
 * ((x - m) - delta) * rstd, so a large common offset costs no accuracy.
 *
 * Resident tiles (whole rows in scratch) use the fused vn_layernorm_rows,
 * which runs the same statistics per row while it is in L1; streamed rows (too
 * long for scratch) compose single vector instructions per chunk below.
 *
 * Per tile, in scratch (f32): work [R][W] (the rows; f32 or streamed only),
 * tmp [W] (squares), gamma / beta [W] (loaded once per block when resident,
 * per chunk when streamed), stats (double mean / rstd per row). f16 / bf16
 * rows pass through the VECIN / VECOUT queues: resident ones are normalised
 * from one to the other, streamed ones cast into work.
 */
#include <math.h>

#include "ops/rownorm.h"

/* Elements of one tile of rows: big enough to amortise per-tile calls, small
 * enough that a tile (read in place from global memory when resident) and
 * gamma / beta stay near L1 and the next tile's prefetch runs one tile ahead
 * (measured with staged tiles: 4096 beat 8192 and 16384 on [4096, 4096] f16
 * rows by 10-15 %). */
#define ROW_TILE_TARGET 4096
#define CHUNK_TARGET    8192

static int64_t io_cost(vn_dtype dt)
{
    return dt == VN_F32 ? 0 : 4 * (int64_t)vn_dtype_size(dt);
}

/* Bytes per element of the f32 work tile: f32 rows are normalised in place
 * there and streamed rows cast into it; resident 16-bit rows go from their
 * VECIN buffer to their VECOUT buffer and need none. */
static int64_t work_cost(vn_dtype dt, bool streamed)
{
    return dt == VN_F32 || streamed ? 4 : 0;
}

static void choose_streamed(vn_rownorm_plan *p, int64_t budget)
{
    int64_t epb = vn_ops_epb(p->dtype);
    int64_t c = vn_ops_min(CHUNK_TARGET, budget / (16 + io_cost(p->dtype))) / 64 * 64;
    p->cpr = vn_ops_div_up(p->H, c);
    p->C = vn_ops_round_up(vn_ops_div_up(p->H, p->cpr), epb);
    p->cpr = vn_ops_div_up(p->H, p->C);
    p->R = 1;
}

vn_status vn_rownorm_plan_build(const char *where, vn_device *device, vn_rownorm_plan *p)
{
    int64_t budget = vn_device_arena_size(device, VN_ARENA_UB) - VN_OPS_UB_MARGIN - 64;
    int64_t w = vn_ops_row_width(p->H, p->dtype);
    int64_t fixed = 12 * w;
    int64_t per_row = (work_cost(p->dtype, false) + io_cost(p->dtype)) * w + 24;
    if (budget < 64 * (16 + io_cost(p->dtype)))
        return vn_error(VN_ERR_UNSUPPORTED, where, "UB of %lld bytes is too small",
                        (long long)(budget + VN_OPS_UB_MARGIN + 64));
    p->tiles = 0;
    if (p->rows == 0 || p->H == 0) return VN_OK;
    if (fixed + per_row <= budget) {
        int64_t r = (budget - fixed) / per_row;
        r = vn_ops_min(r, vn_ops_max(1, ROW_TILE_TARGET / w));
        p->R = vn_ops_min(vn_ops_min(r, p->rows), 65535);
        p->C = p->H;
        p->cpr = 1;
    } else {
        choose_streamed(p, budget);
    }
    p->tiles = vn_ops_div_up(p->rows, p->R);
    /* Two passes over every row (statistics, then the apply with gamma and
     * beta): counted as twice an element-wise op's work per element, so a
     * [128, 256] LayerNorm (a transformer's) takes two workers (2 threads:
     * 15 -> 10 us a node) */
    p->block_dim = vn_ops_block_dim(device, p->tiles, 2 * p->R * p->H);
    return VN_OK;
}

/* ---- kernel ------------------------------------------------------------------------ */

typedef struct rownorm_args {
    const vn_rownorm_plan *p;
    vn_gm x, scale, bias, y;
} rownorm_args;

typedef struct rownorm_block {
    vn_queue *qin, *qout; /* NULL for f32; qout also for resident rows */
    vn_local work, tmp, gamma, beta, red;
    double *mean, *delta, *rstd; /* per row of the tile */
} rownorm_block;

static void carve(vn_core *c, const vn_rownorm_plan *p, rownorm_block *b)
{
    int64_t w = vn_ops_row_width(p->C, p->dtype), tile = p->R * w;
    b->qin = b->qout = NULL;
    b->work = (vn_local){0};
    /* 16-bit: gamma / beta are cast on their way in; streamed rows also pass
     * through both queues (resident rows stay in global memory) */
    if (p->dtype != VN_F32) b->qin = vn_queue_new(c, VN_VECIN, 2, tile, p->dtype);
    if (p->dtype != VN_F32 && p->cpr > 1) b->qout = vn_queue_new(c, VN_VECOUT, 2, tile, p->dtype);
    if (p->cpr > 1) b->work = vn_buf_new(c, VN_VECCALC, tile, VN_F32);
    b->tmp = vn_buf_new(c, VN_VECCALC, w, VN_F32);
    b->gamma = vn_buf_new(c, VN_VECCALC, w, VN_F32);
    b->beta = vn_buf_new(c, VN_VECCALC, w, VN_F32);
    b->red = vn_buf_new(c, VN_VECCALC, 8, VN_F32);
    vn_local stats = vn_buf_new(c, VN_VECCALC, 3 * p->R, VN_I64);
    b->mean = vn_ptr(double, stats);
    b->delta = b->mean + p->R;
    b->rstd = b->delta + p->R;
}

static double reduce_sum(vn_core *c, const rownorm_block *b, vn_local src, int64_t n)
{
    vn_reduce_sum(c, b->red, src, n);
    return vn_ptr(const float, b->red)[0];
}

/* Pass 1 (LayerNorm): row sums into mean[]. */
static void pass_sum(vn_core *c, const rownorm_block *b, int64_t nrows, int64_t ncols, int64_t w)
{
    for (int64_t j = 0; j < nrows; j++)
        b->mean[j] += reduce_sum(c, b, vn_local_at(c, b->work, j * w), ncols);
}

/* Pass 2: sums of deviations into delta[] and of their squares into rstd[]
 * (LayerNorm), or of squares (RMS). */
static void pass_squares(vn_core *c, const vn_rownorm_plan *p, const rownorm_block *b,
                         int64_t nrows, int64_t ncols, int64_t w)
{
    for (int64_t j = 0; j < nrows; j++) {
        vn_local row = vn_local_at(c, b->work, j * w);
        if (p->mode == VN_ROWNORM_LAYER) {
            vn_adds(c, b->tmp, row, -b->mean[j], ncols);
            b->delta[j] += reduce_sum(c, b, b->tmp, ncols);
            vn_mul(c, b->tmp, b->tmp, b->tmp, ncols);
        } else {
            vn_mul(c, b->tmp, row, row, ncols);
        }
        b->rstd[j] += reduce_sum(c, b, b->tmp, ncols);
    }
}

/* Pass 3: normalise, scale, shift (gamma / beta hold the chunk's columns). */
static void pass_normalise(vn_core *c, const vn_rownorm_plan *p, const rownorm_block *b,
                           int64_t nrows, int64_t ncols, int64_t w)
{
    for (int64_t j = 0; j < nrows; j++) {
        vn_local row = vn_local_at(c, b->work, j * w);
        if (p->mode == VN_ROWNORM_LAYER) {
            vn_adds(c, row, row, -b->mean[j], ncols);
            vn_adds(c, row, row, -b->delta[j], ncols);
        }
        vn_muls(c, row, row, b->rstd[j], ncols);
        vn_mul(c, row, row, b->gamma, ncols);
        if (p->has_bias) vn_add(c, row, row, b->beta, ncols);
    }
}

static void start_stats(const vn_rownorm_plan *p, const rownorm_block *b)
{
    for (int64_t j = 0; j < p->R; j++) b->mean[j] = b->delta[j] = b->rstd[j] = 0.0;
}

static void finish_mean(const vn_rownorm_plan *p, const rownorm_block *b, int64_t nrows)
{
    /* Rounded to f32: the value vn_adds subtracts, so d = x - m is what pass 2 sums. */
    for (int64_t j = 0; j < nrows; j++) b->mean[j] = (float)(b->mean[j] / (double)p->H);
}

static void finish_rstd(const vn_rownorm_plan *p, const rownorm_block *b, int64_t nrows)
{
    for (int64_t j = 0; j < nrows; j++) {
        double h = (double)p->H, d = b->delta[j] / h, var = b->rstd[j] / h - d * d;
        b->delta[j] = d;
        b->rstd[j] = 1.0 / sqrt((var > 0 ? var : 0) + p->eps);
    }
}

static void load_params(vn_core *c, const rownorm_args *a, const rownorm_block *b, int64_t col0,
                        int64_t ncols)
{
    vn_ops_load_f32(c, b->qin, b->gamma, a->scale, col0, 1, ncols, ncols);
    if (a->p->has_bias) vn_ops_load_f32(c, b->qin, b->beta, a->bias, col0, 1, ncols, ncols);
}

/* Resident tile: one fused row instruction on the rows where they lie in
 * global memory (vn_layernorm_rows_gm: the passes run per row while it sits
 * in L1; staging it through VECIN / VECOUT cost half the bandwidth on one
 * core). The next tile's rows are queued so they stream in meanwhile. */
static void resident_tile(vn_core *c, const rownorm_args *a, const rownorm_block *b, int64_t row0,
                          int64_t nrows, bool more)
{
    const vn_rownorm_plan *p = a->p;
    int64_t h = p->H, next_rows = more ? vn_ops_min(p->R, p->rows - row0 - nrows) : 0;
    vn_norm_mode mode = p->mode == VN_ROWNORM_LAYER ? VN_NORM_LAYER : VN_NORM_RMS;
    vn_local beta = p->has_bias ? b->beta : (vn_local){0};
    if (more) vn_prefetch(c, a->x, (row0 + nrows) * h, next_rows * h);
    vn_layernorm_rows_gm(c, a->y, row0 * h, a->x, row0 * h, b->gamma, beta, nrows, h, h, p->eps,
                         mode);
}

/* One row too long for scratch: each pass streams its chunks again. */
static void streamed_row(vn_core *c, const rownorm_args *a, const rownorm_block *b, int64_t row)
{
    const vn_rownorm_plan *p = a->p;
    for (int32_t pass = p->mode == VN_ROWNORM_LAYER ? 0 : 1; pass < 3; pass++) {
        for (int64_t k = 0; k < p->cpr; k++) {
            int64_t col0 = k * p->C, n = vn_ops_min(p->C, p->H - col0);
            int64_t w = vn_ops_row_width(n, p->dtype);
            vn_ops_load_f32(c, b->qin, b->work, a->x, row * p->H + col0, 1, n, n);
            if (pass == 0)
                pass_sum(c, b, 1, n, w);
            else if (pass == 1)
                pass_squares(c, p, b, 1, n, w);
            else {
                load_params(c, a, b, col0, n);
                pass_normalise(c, p, b, 1, n, w);
                vn_ops_store_f32(c, b->qout, a->y, row * p->H + col0, b->work, 1, n, n);
            }
        }
        if (pass == 0) finish_mean(p, b, 1);
        if (pass == 1) finish_rstd(p, b, 1);
    }
}

static void rownorm_kernel(vn_core *c, const void *args)
{
    const rownorm_args *a = args;
    const vn_rownorm_plan *p = a->p;
    rownorm_block b;
    carve(c, p, &b);
    if (p->cpr == 1) load_params(c, a, &b, 0, p->H);
    for (int64_t t; vn_tile_next(c, &t);) {
        int64_t row0 = t * p->R, nrows = vn_ops_min(p->R, p->rows - row0);
        start_stats(p, &b);
        if (p->cpr == 1)
            resident_tile(c, a, &b, row0, nrows, vn_tile_followed(c, t));
        else
            streamed_row(c, a, &b, row0);
    }
}

vn_status vn_rownorm_execute(vn_device *device, const vn_rownorm_plan *p, const void *x,
                             const void *scale, const void *bias, void *y,
                             vn_kernel_counters *counters)
{
    if (p->tiles == 0) return VN_OK;
    rownorm_args a = {p, vn_gm_make((void *)x, p->dtype, p->rows * p->H),
                      vn_gm_make((void *)scale, p->dtype, p->H),
                      vn_gm_make((void *)bias, p->dtype, bias ? p->H : 0),
                      vn_ops_output_gm(y, p->dtype, p->rows * p->H)};
    const char *name = p->mode == VN_ROWNORM_LAYER ? "layer_norm" : "rms_norm";
    vn_launch_desc d = {rownorm_kernel, name, p->block_dim, &a, -1, p->tiles};
    return vn_launch(device, &d, counters);
}
