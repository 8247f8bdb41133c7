/*
 * conv_dw_fused.c — a pointwise (1x1) convolution and the depthwise one
 * after it, in one pass (vn_conv_plan.dw_fused; the pair is MobileNetV2's
 * expansion + depthwise, fused by pass_fuse_dw.c).
 *
 * The pointwise output is the expanded map (6x the block's input: 4.8 MB at
 * MobileNetV2's features.2); written and read back it costs about as much
 * as both convolutions compute, and the pair is two launches. The depthwise
 * conv works channel by channel, so a tile is (image, band of depthwise
 * output rows, group of up to max_ncb channel blocks: the direct kernel's
 * register block). It computes the group's pointwise rows that the band's
 * taps reach into the L1 scratch [ncb][rows][IW][16] (CopyIn and the first
 * Compute: consecutive rows are one flat run of pixels, cut in chunks of
 * CHUNK for the direct kernel's row call), then runs the depthwise kernel
 * over the scratch into Y (the second Compute and CopyOut; it skips the
 * taps in the padding itself, as on an unfused map). Tiles go group
 * fastest, so consecutive tiles of a launch block read the same input rows.
 *
 * A band is every row where the group's whole plane fits the scratch (up to
 * 56 x 56 with a 512 KiB L1 arena: nothing is computed twice); a taller
 * map's bands recompute the pointwise rows they share with the next band
 * ((KH - 1) * dh + 1 - sh rows: 1 in 33 at MobileNetV2's 112 x 112 3x3/2).
 *
 * When not even one output row's pointwise rows fit the L1 arena (a huge
 * map, or a small VINCI_L1_SIZE), the whole pointwise map goes to the
 * workspace and the depthwise conv runs over it afterwards.
 *
 * Invariant kept for the output: lanes past K of the last block are zero.
 */
#include "kernel/core_internal.h"
#include "ops/conv.h"

typedef struct dw_fused_args {
    const vn_conv_plan *p;
    const vn_conv_table *t;
    const float *x, *w, *bias, *dw_w, *dw_bias;
    float *y;
    int64_t ncb, groups;        /* channel blocks per group (at most), groups */
    int64_t band, bands, tiles; /* depthwise output rows per tile, bands per image, tiles */
    int64_t rows;               /* scratch rows (pointwise rows of a full band) */
} dw_fused_args;

/* Pixels of one pointwise call (8 register blocks of 14 columns). */
#define CHUNK 112

/* Pointwise rows (depthwise input rows) `band` depthwise output rows reach. */
static int64_t band_rows(const vn_conv_geom *dw, int64_t band)
{
    return (band - 1) * dw->sh + (dw->KH - 1) * dw->dh + 1;
}

/* Channel blocks of a group: the direct kernel's register block. */
static int64_t group_blocks(const vn_conv_plan *p)
{
    return vn_ops_min(p->K1, vn_conv_table_get()->max_ncb);
}

static int64_t scratch_bytes(const vn_conv_plan *p, int64_t band)
{
    return group_blocks(p) * band_rows(&p->dw, band) * p->dw.IW * VN_C0 * 4;
}

bool vn_conv_dw_fits(const vn_conv_plan *p)
{
    return scratch_bytes(p, 1) <= vn_conv_arena_room(p, VN_ARENA_L1);
}

/* Pointwise pixels [q0, q0 + count) of image n (rows flattened), output
 * blocks [ob, ob + ncb), into scratch blocks 0 .. ncb - 1, whose pixel 0 is
 * pixel s0 of the map. */
static void pointwise_chunk(const dw_fused_args *d, int64_t n, int64_t q0, int64_t count,
                            int64_t ob, int64_t ncb, float *scratch, int64_t s0)
{
    const vn_conv_plan *p = d->p;
    const vn_conv_geom *g = &p->g;
    int64_t plane = g->IH * g->IW * VN_C0, wslab = p->C1 * VN_C0 * VN_C0;
    vn_conv_row_args a = {0};
    a.x = d->x + n * p->C1 * plane;
    a.x_bstride = plane;
    a.cin_blocks = p->C1;
    a.ci_last = (int32_t)(g->C - (p->C1 - 1) * VN_C0);
    a.w = d->w + ob * wslab;
    a.w_bstride = wslab;
    a.ncb = (int32_t)ncb;
    /* a 1x1 over one flat row of `count` pixels (conv_direct.c's flat chunks) */
    a.IH = a.KH = a.KW = a.sw = a.dw = a.dh = 1, a.IW = a.OW = count, a.x_row0 = q0;
    a.y = scratch + (q0 - s0) * VN_C0;
    a.y_bstride = d->rows * g->IW * VN_C0;
    a.bias = d->bias ? d->bias + ob * VN_C0 : NULL;
    a.epi = p->epi;
    a.w_cold = q0 == s0; /* the tile's first chunk: its group's weights are not in cache */
    a.rows = 1;
    d->t->direct_row(&a);
}

/* The depthwise rows [oh0, oh1) of block c1 of image n from scratch block
 * s, whose row 0 is pointwise row r0. */
static void depthwise_rows(const dw_fused_args *d, int64_t n, int64_t c1, int64_t oh0, int64_t oh1,
                           const float *scratch, int64_t s, int64_t r0)
{
    const vn_conv_plan *p = d->p;
    const vn_conv_geom *dw = &p->dw;
    vn_conv_dw_args a = {0};
    a.x = scratch + s * d->rows * dw->IW * VN_C0;
    a.w = d->dw_w + c1 * dw->KH * dw->KW * VN_C0;
    a.IH = dw->IH, a.IW = dw->IW, a.OW = dw->OW, a.KH = dw->KH, a.KW = dw->KW;
    a.sw = dw->sw, a.dw = dw->dw, a.pl = dw->pl, a.dh = dw->dh;
    a.ih0 = oh0 * dw->sh - dw->pt; /* taps outside [0, IH) are skipped */
    a.x_row0 = (a.ih0 - r0) * dw->IW, a.x_rstride = dw->dh * dw->IW;
    a.y = d->y + ((n * p->K1 + c1) * dw->OH + oh0) * dw->OW * VN_C0;
    a.bias = d->dw_bias ? d->dw_bias + c1 * VN_C0 : NULL;
    a.epi = p->dw_epi;
    a.rows = oh1 - oh0, a.ih_step = dw->sh, a.x_rstep = dw->sh * dw->IW;
    a.y_rstride = dw->OW * VN_C0;
    d->t->dw_row(&a);
    if (c1 == p->K1 - 1 && dw->K % VN_C0) vn_conv_clear_tail(p, a.y, a.rows * dw->OW);
}

/* Tile t: image, band of depthwise output rows, group of channel blocks
 * (fastest). */
static void fused_tile(vn_core *core, const dw_fused_args *d, int64_t t, float *scratch)
{
    const vn_conv_plan *p = d->p;
    const vn_conv_geom *dw = &p->dw;
    int64_t ob = t % d->groups * d->ncb, ncb = vn_ops_min(d->ncb, p->K1 - ob);
    int64_t n = t / d->groups / d->bands, oh0 = t / d->groups % d->bands * d->band;
    int64_t oh1 = vn_ops_min(dw->OH, oh0 + d->band);
    int64_t top = oh0 * dw->sh - dw->pt; /* the band's first tap row, maybe padding */
    int64_t r0 = vn_ops_max(0, top), r1 = vn_ops_min(dw->IH, top + band_rows(dw, oh1 - oh0));
    int64_t IW = dw->IW, q1 = r1 * IW;
    for (int64_t q = r0 * IW; q < q1; q += CHUNK)
        pointwise_chunk(d, n, q, vn_ops_min(CHUNK, q1 - q), ob, ncb, scratch, r0 * IW);
    for (int64_t s = 0; s < ncb; s++) depthwise_rows(d, n, ob + s, oh0, oh1, scratch, s, r0);
    vn_core_count_macs(core, VN_F32, /* r1 < r0: a band wholly in the padding */
                       vn_ops_max(0, r1 - r0) * p->g.OW * ncb * VN_C0 * p->g.C +
                           (oh1 - oh0) * dw->OW * ncb * VN_C0 * dw->KH * dw->KW);
}

static void dw_fused_kernel(vn_core *core, const void *args)
{
    const dw_fused_args *d = args;
    int64_t elems = d->ncb * d->rows * d->p->dw.IW * VN_C0;
    float *scratch = vn_ptr(float, vn_buf_new(core, VN_B1, elems, VN_F32));
    for (int64_t t; vn_tile_next(core, &t);) fused_tile(core, d, t, scratch);
}

/* Bands: as many output rows as the L1 scratch holds; then more, thinner
 * ones while the tiles would leave a worker idle at the end (fewer than 4
 * per worker and not a whole number per worker: MobileNetV2's 144 channels
 * at 56 x 56 are 5 groups, which 2 workers would split 3 : 2). */
static void plan_bands(const vn_conv_plan *p, dw_fused_args *d)
{
    int64_t OH = p->dw.OH, fit = 1, workers = vn_device_num_workers(p->device);
    int64_t room = vn_conv_arena_room(p, VN_ARENA_L1);
    d->ncb = group_blocks(p);
    d->groups = vn_ops_div_up(p->K1, d->ncb);
    while (fit < OH && scratch_bytes(p, fit + 1) <= room) fit++;
    int64_t bands = vn_ops_div_up(OH, fit), per = p->g.N * d->groups;
    while (bands < OH && per * bands < 4 * workers && per * bands % workers != 0) bands++;
    d->band = vn_ops_div_up(OH, bands);
    d->bands = vn_ops_div_up(OH, d->band);
    d->tiles = per * d->bands;
    d->rows = band_rows(&p->dw, d->band);
}

/* The unfused fallback: the pointwise map into `map`, then the depthwise
 * conv over it, each by its own launch (counted separately, then summed). */
static vn_status run_unfused(const vn_conv_plan *p, const float *x, const float *wp,
                             const float *bias, const float *dw_w, const float *dw_bias, float *map,
                             float *y, vn_kernel_counters *counters)
{
    vn_conv_plan pw = *p, dw = *p;
    pw.dw_fused = false;
    dw.dw_fused = false, dw.g = p->dw, dw.algo = VN_CONV_ALGO_DEPTHWISE, dw.epi = p->dw_epi;
    dw.C1 = dw.K1 = p->K1, dw.has_bias = p->dw_has_bias;
    vn_kernel_counters step[2] = {{0}};
    vn_status st = vn_conv_nc1hwc0_run(&pw, x, wp, bias, NULL, map, &step[0]);
    if (st == VN_OK) st = vn_conv_nc1hwc0_run(&dw, map, dw_w, dw_bias, NULL, y, &step[1]);
    for (int i = 0; counters && i < 2; i++) vn_kernel_counters_add(counters, &step[i]);
    return st;
}

vn_status vn_conv_dw_fused_run(const vn_conv_plan *p, const float *x, const float *wp,
                               const float *bias, const float *dw_w, const float *dw_bias,
                               float *map, float *y, vn_kernel_counters *counters)
{
    if (map) return run_unfused(p, x, wp, bias, dw_w, dw_bias, map, y, counters);
    dw_fused_args d = {.p = p,
                       .t = vn_conv_table_get(),
                       .x = x,
                       .w = wp,
                       .bias = bias,
                       .dw_w = dw_w,
                       .dw_bias = dw_bias,
                       .y = y};
    plan_bands(p, &d);
    if (d.tiles == 0) return VN_OK;
    int64_t work = d.rows * p->g.OW * d.ncb * VN_C0 * p->g.C; /* MACs of a tile, about */
    int32_t blocks = vn_ops_block_dim(p->device, d.tiles, vn_ops_max(1, work / 8));
    vn_launch_desc ld = {dw_fused_kernel, "vn_conv_dw_fused", blocks, &d, -1, d.tiles};
    vn_status st = vn_launch(p->device, &ld, counters);
    if (st == VN_OK && counters) {
        const vn_conv_geom *g = &p->g, *dw = &p->dw;
        int64_t xe = g->N * p->C1 * g->IH * g->IW * VN_C0, ye = g->N * p->K1 * dw->OH * dw->OW;
        int64_t we = vn_conv_packed_elems(g, VN_CONV_ALGO_DIRECT) +
                     vn_conv_packed_elems(dw, VN_CONV_ALGO_DEPTHWISE);
        counters->bytes_in += (xe + we) * 4;
        counters->bytes_out += ye * VN_C0 * 4;
    }
    return st;
}
