/*
 * conv_direct.c — launches of the direct and depthwise micro-kernels
 * (conv_kernels.h) over an NC1HWC0 convolution.
 *
 * Tiles: direct, one (image, group of up to max_ncb output blocks, or the
 * last two as a half pair, output row); depthwise, one (image, channel block, band of output rows).
 * Tiles are ordered image-major, then output blocks, then rows, and each launch block takes a
 * contiguous range, so a block keeps reusing one set of packed weights (in
 * L2) over consecutive rows while the input rows it needs stay in L1/L2.
 * Output blocks of one tile never straddle a group. Exception (rows_outer):
 * when all the packed weights are small and the input is large (a stem:
 * few input channels padded to C0 = 16 lanes, so the input is 16/C times
 * its real size), rows come before output blocks, so each input row is
 * read from memory once instead of once per block group (SqueezeNet's
 * 3-channel 224x224 stem: 2 passes over a 3.2 MB input became 1).
 *
 * A 1x1 unpadded convolution is flat: the H*W pixels are one row, cut in
 * chunks of FLAT. A strided one (ResNet's downsampling) gathers each chunk's
 * pixels into L1 first, so its register blocks are 14 pixels wide even on a
 * 7-wide map.
 *
 * The kernels read the input and weights straight from global memory: on a
 * CPU the caches do what the copy engine does for a tile, and the register
 * blocking (not a UB copy) is what makes the data reuse. Rows with column
 * padding are copied into UB zero-padded (so border columns run in full
 * register blocks); a block whose next tile needs the same rows keeps the
 * copy. An NCHW input of one channel block (x_plain: a stem fed straight
 * from the model's input) is read in place by the kernels' plain variant
 * (conv_kernel.inc), instead of a whole-tensor reorder into a 16/C times
 * larger input; its rows are copied (zero-padded where needed, one float
 * per pixel, channel by channel) when the copy fits UB.
 *
 * Invariant kept for the output: lanes past K of the last output block are
 * zero after the epilogue (activations such as HardSigmoid or Sigmoid map the
 * zero of a padded lane to a non-zero value, so they are cleared again).
 */
#include <string.h>

#include "kernel/core_internal.h"
#include "kernel/pool_c0_kernels.h"
#include "ops/conv.h"

typedef struct direct_args {
    const vn_conv_plan *p;
    const vn_conv_table *t;
    const float *x, *w, *bias, *res;
    float *y;
    int64_t ncb_max, kg1, cg1, pairs, tiles;
    int64_t rows;    /* direct: tiles per (image, block group): OH, or pixel chunks (flat);
                        depthwise: output rows per tile (band) */
    bool flat;       /* 1x1, unpadded: H*W is one row, cut in chunks */
    int64_t chunk;   /* flat: pixels per chunk (FLAT, less when that leaves workers idle) */
    bool gather;     /* flat chunks copied into L1 (bf16: converted; f32: a strided 1x1) */
    bool rows_outer; /* direct, G = 1: tiles ordered (image, row, block group) */
    bool half_pair;  /* the last block group is the last two blocks (vn_conv_table.half_pair_co) */
    bool rows2;      /* a tile is two output rows (a narrow map: vn_conv_row_args.rows) */
    bool x_plain;    /* x is NCHW with C <= 16 (conv.h): the kernels' plain variant */
    int64_t pad_w;   /* > 0: width of the zero-padded row copies in UB (pixels) */
    bool pad_img;    /* the copies hold every input row (a small map), not one tile's */
    int64_t img_top, img_rows; /* pad_img: zero rows above the image's, rows in all */
    bool img_in_l1;            /* pad_img: the copy is in the L1 arena (too large for UB) */
    int64_t copy_rows;         /* per-tile copies: KH tap rows, or (rows2) the rows both reach */
    /* pooled (vn_conv_plan.pooled): a tile is (image, band of pool_rows
     * pooled rows); the band's conv rows, every output block, go to an L1
     * scratch [K1][conv rows][OW][16], which the pool kernel then reduces */
    int64_t pool_rows, pool_bands;
    bool bf16;         /* bf16 operands (plan->bf16): the copies are bf16, every input is copied */
    int64_t buf_elems; /* elements (f32, or bf16) of the row copies */
} direct_args;

/* The row copies of one block (UB; a bf16 flat chunk, L1): which (input,
 * first row or chunk) they hold. */
typedef struct row_copy {
    void *buf;
    const float *x; /* input the copies were made from, NULL: none yet */
    int64_t ih0;
} row_copy;

#define FLAT                 112 /* pixels per tile of a flattened 1x1 convolution (8 x 14 columns) */
#define PER_TILE_COPY_MAX_OW 28 /* wider rows read in place rather than copied per tile */
#define FLAT_MIN             28 /* the least a chunk is cut to for more tiles (2 x 14 columns) */
/* rows_outer when the weights stay in L1/L2 beside a few input rows and the input is beyond L2 */
#define ROWS_OUTER_MAX_W (64 * 1024)
#define ROWS_OUTER_MIN_X (1024 * 1024)
/* Gathered flat chunks go outside the block groups while all the weights
 * take half an L2 or less (512 KiB where the L2 size is unknown). */
static int64_t chunk_outer_max_w(void)
{
    int32_t l2 = vn_cpu_features_get()->l2_bytes;
    return l2 > 0 ? l2 / 2 : 512 * 1024;
}

void vn_conv_clear_tail(const vn_conv_plan *p, float *y_row, int64_t cols)
{
    int64_t real = p->g.K - (p->K1 - 1) * VN_C0;
    for (int64_t ow = 0; ow < cols; ow++)
        memset(y_row + ow * VN_C0 + real, 0, (size_t)(VN_C0 - real) * sizeof(float));
}

/* Rows [*lo, *hi) of the taps whose input row lies inside the input. */
static void rows_inside(const vn_conv_geom *g, int64_t ih0, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    for (int64_t kh = 0; kh < g->KH; kh++) {
        int64_t ih = ih0 + kh * g->dh;
        if (ih < 0) *lo = kh + 1;
        if (ih >= 0 && ih < g->IH) *hi = kh + 1;
    }
}

/* n f32 values as the copies' element type: copied, or rounded to bf16. */
static void put(const direct_args *d, void *dst, const float *src, int64_t n)
{
    if (d->bf16)
        vn_f32_to_bf16_array(src, dst, (size_t)n);
    else
        memcpy(dst, src, (size_t)n * sizeof(float));
}

/* Floats per pixel of the input: 16 (a C0 block), 1 for a plain input. */
static int64_t pixel_elems(const direct_args *d)
{
    return d->x_plain ? 1 : VN_C0;
}

/* Input row ih of channel block ib (of channel ib for a plain input) into
 * dst, zero-padded left by pl and right up to pad_w pixels (zero is 0 in f32
 * and bf16 alike). */
static void pad_row(const direct_args *d, const float *x, int64_t ib, int64_t ih, char *dst)
{
    const vn_conv_geom *g = &d->p->g;
    int64_t u = pixel_elems(d);
    size_t es = d->bf16 ? 2 : 4, px = (size_t)u * es;
    int64_t right = d->pad_w - g->pl - g->IW;
    memset(dst, 0, (size_t)g->pl * px);
    put(d, dst + (size_t)g->pl * px, x + (ib * g->IH + ih) * g->IW * u, g->IW * u);
    if (right > 0) memset(dst + (size_t)(g->pl + g->IW) * px, 0, (size_t)right * px);
}

/* Copy the input rows of taps [kh_lo, kh_hi) of `nb` channel blocks (of the
 * C channels of a plain input) into buf, zero-padded (pad_row): the kernel
 * then sees no column padding. Layout of buf: [nb][KH][pad_w][16] (plain:
 * [C][KH][pad_w]); for two-row tiles (rows2), the copy_rows consecutive
 * input rows from ih0 that both rows' taps reach; with pad_img, every row of
 * the image instead, below
 * img_top zero rows and followed by zero rows up to img_rows,
 * [nb][img_rows][pad_w][16], copied once for all the tiles of a block. */
static void pad_rows(const direct_args *d, const float *x, int64_t nb, int64_t ih0, void *buf)
{
    const vn_conv_geom *g = &d->p->g;
    int64_t kh_lo = 0, kh_hi = d->img_rows, rows = d->img_rows, W = d->pad_w;
    size_t row_bytes = (size_t)(W * pixel_elems(d)) * (d->bf16 ? 2 : 4);
    if (d->x_plain) nb = g->C;
    if (!d->pad_img && !d->rows2) rows_inside(g, ih0, &kh_lo, &kh_hi), rows = g->KH;
    if (!d->pad_img && d->rows2) kh_hi = rows = d->copy_rows;
    for (int64_t ib = 0; ib < nb; ib++)
        for (int64_t r = kh_lo; r < kh_hi; r++) {
            char *dst = (char *)buf + (size_t)(ib * rows + r) * row_bytes;
            int64_t ih = d->pad_img ? r - d->img_top : ih0 + r * (d->rows2 ? 1 : g->dh);
            if (ih < 0 || ih >= g->IH)
                memset(dst, 0, row_bytes); /* a zero row of the image copy */
            else
                pad_row(d, x, ib, ih, dst);
        }
}

/* A gathered flat chunk: the input pixels of output pixels [p0, p0 + n) of
 * nb channel blocks, [nb][FLAT][16] (f32, or converted to bf16); a strided
 * 1x1 picks every sh-th row and sw-th column, so the chunk is a unit-stride
 * 1x1 again, and a register block covers 14 output pixels however short the
 * output rows are (a 7-wide row would read every weight for 7 pixels). */
static void gather_chunk(const direct_args *d, const float *x, int64_t nb, int64_t p0, int64_t n,
                         void *buf)
{
    const vn_conv_geom *g = &d->p->g;
    int64_t plane = g->IH * g->IW;
    size_t px = VN_C0 * (d->bf16 ? 2 : 4);
    for (int64_t ib = 0; ib < nb; ib++) {
        const float *xb = x + ib * plane * VN_C0;
        char *dst = (char *)buf + (size_t)(ib * FLAT) * px;
        if (g->sh == 1 && g->sw == 1) {
            put(d, dst, xb + p0 * VN_C0, n * VN_C0);
            continue;
        }
        for (int64_t q = 0; q < n; q++) {
            int64_t oh = (p0 + q) / g->OW, ow = (p0 + q) % g->OW;
            put(d, dst + (size_t)q * px, xb + (oh * g->sh * g->IW + ow * g->sw) * VN_C0, VN_C0);
        }
    }
}

/* Input columns the taps of a row reach, padding included. */
static int64_t width_used(const vn_conv_geom *g)
{
    return (g->OW - 1) * g->sw + (g->KW - 1) * g->dw + 1;
}

/* Does a row need column padding (zeros left, or taps past the right edge)? */
static bool column_padded(const vn_conv_geom *g)
{
    return g->pl > 0 || width_used(g) > g->IW;
}

/* The padded width of the row copies (pixels). */
static int64_t padded_width(const vn_conv_geom *g)
{
    return vn_ops_max(g->IW + g->pl, width_used(g));
}

/* Floats (or bf16) of the zero-padded row copies of one tile over nb
 * channel blocks: [nb][KH][padded width][16]. */
static int64_t pad_rows_elems(const vn_conv_geom *g, int64_t nb)
{
    return nb * g->KH * padded_width(g) * VN_C0;
}

/* The geometry fields of a row call, for output row oh (or flat chunk). */
#define ROW_GEOMETRY(a, g)                                                                         \
    do {                                                                                           \
        (a).IH = (g)->IH, (a).IW = (g)->IW, (a).OW = (g)->OW, (a).KH = (g)->KH;                    \
        (a).KW = (g)->KW, (a).sw = (g)->sw, (a).dw = (g)->dw, (a).pl = (g)->pl;                    \
        (a).dh = (g)->dh;                                                                          \
    } while (0)

/* Point a row call at the UB copy (padded) or the global input (plain), and
 * at output column range [c0, c0 + cols) for flat chunks. */
static void place_rows(const direct_args *d, const float *x, int64_t nb, int64_t oh, row_copy *rc,
                       const void **xa, int64_t *x_bstride, int64_t *row0, int64_t *rstride,
                       int64_t *IH, int64_t *IW, int64_t *pl, int64_t *ih0)
{
    void *buf = rc ? rc->buf : NULL;
    const vn_conv_geom *g = &d->p->g;
    *ih0 = oh * g->sh - g->pt;
    if (d->gather) { /* chunk oh gathered into L1, [nb][FLAT][16] */
        int64_t p0 = oh * d->chunk, n = vn_ops_min(d->chunk, g->OH * g->OW - p0);
        if (rc->x != x || rc->ih0 != oh) gather_chunk(d, x, nb, p0, n, buf);
        rc->x = x, rc->ih0 = oh;
        *xa = buf, *x_bstride = FLAT * VN_C0, *ih0 = 0, *pl = 0, *rstride = 0, *row0 = 0;
        return;
    }
    if (d->flat) { /* one pixel row: chunk oh covers pixels [oh*chunk, ...) */
        *xa = x, *x_bstride = g->IH * g->IW * VN_C0, *ih0 = 0, *pl = 0, *rstride = 0;
        *row0 = oh * d->chunk;
        return;
    }
    if (buf && d->pad_img) { /* the whole image, copied at the block's first tile of it */
        if (rc->x != x) pad_rows(d, x, nb, 0, buf);
        rc->x = x;
        *ih0 += d->img_top, *IH = d->img_rows; /* the copy's rows, zero rows included */
        *xa = buf, *x_bstride = d->img_rows * d->pad_w * VN_C0, *row0 = *ih0 * d->pad_w;
        *rstride = g->dh * d->pad_w, *IW = d->pad_w, *pl = 0;
        return;
    }
    if (buf) {
        if (rc->x != x || rc->ih0 != *ih0) pad_rows(d, x, nb, *ih0, buf);
        rc->x = x, rc->ih0 = *ih0;
        *xa = buf, *x_bstride = d->copy_rows * d->pad_w * VN_C0, *row0 = 0;
        *rstride = (d->rows2 ? g->dh : 1) * d->pad_w; /* rows2: every row from ih0 */
        *IW = d->pad_w, *pl = 0;
        return;
    }
    *xa = x, *x_bstride = g->IH * g->IW * VN_C0, *row0 = *ih0 * g->IW, *rstride = g->dh * g->IW;
}

/* A direct tile: image n, (group, output block group) pair -- which weights
 * it reads -- and output row (or flat chunk) oh. */
typedef struct tile_at {
    int64_t n, pair, oh;
} tile_at;

static tile_at tile_of(const direct_args *d, int64_t t)
{
    if (d->rows_outer) /* G = 1 */
        return (tile_at){t / (d->pairs * d->rows), t % d->pairs, (t / d->pairs) % d->rows};
    int64_t rest = t / d->rows, pairs = d->p->g.G * d->pairs;
    return (tile_at){rest / pairs, rest % pairs, t % d->rows};
}

/* Where a tile's output goes, if not into Y (a scratch): output block ob's
 * pixel pix (row-major in the map) at y + (ob - ob0) * bstride + (pix - pix0) * 16. */
typedef struct tile_out {
    float *y;
    int64_t bstride, ob0, pix0;
} tile_out;

/* The output blocks [*ob, *ob + *ncb) of a (group, block group) pair. */
static void pair_blocks(const direct_args *d, int64_t pair, int64_t *ob, int64_t *ncb)
{
    int64_t grp = pair / d->pairs, end = (grp + 1) * d->kg1;
    *ob = grp * d->kg1 + (pair % d->pairs) * d->ncb_max;
    *ncb = d->half_pair && *ob + 2 == end ? 2 : vn_ops_min(d->ncb_max, end - *ob);
}

/* The f32 packed weights of output block ob: [cg1][KH][KW][16][16] each. */
static const float *block_weights(const direct_args *d, int64_t ob)
{
    return d->w + ob * d->cg1 * d->p->g.KH * d->p->g.KW * VN_C0 * VN_C0;
}

/* The f32 weights of output block group `pair` (group included). */
static const float *pair_weights(const direct_args *d, int64_t pair)
{
    int64_t ob, ncb;
    pair_blocks(d, pair, &ob, &ncb);
    return block_weights(d, ob);
}

/* Which row of a pair's tiles requests the next pair's weights: the
 * second, or the only one (whose blocks after the first find its weights
 * warm: the kernel asks from a warm block only). */
static int64_t asking_row(const direct_args *d)
{
    return d->rows > 1 ? 1 : 0;
}

/* cold: the block has not read this tile's weights yet; w_next: the f32
 * weights of the block's next tile, to request meanwhile, or NULL
 * (conv_kernels.h). */
static void direct_tile(vn_core *core, const direct_args *d, tile_at at, row_copy *rc, bool cold,
                        const float *w_next, const tile_out *out)
{
    const vn_conv_plan *p = d->p;
    const vn_conv_geom *g = &p->g;
    int64_t n = at.n, pair = at.pair, oh = at.oh, grp = pair / d->pairs, ob, ncb;
    pair_blocks(d, pair, &ob, &ncb);
    int64_t taps = g->KH * g->KW, plane = g->OH * g->OW * VN_C0;
    vn_conv_row_args a = {0};
    ROW_GEOMETRY(a, g);
    if (d->rows2) oh *= 2; /* tile oh is rows 2 oh and 2 oh + 1 */
    int64_t col0 = d->flat ? oh * d->chunk : 0, pix = oh * g->OW;
    if (d->flat) a.OW = a.IW = vn_ops_min(d->chunk, g->OH * g->OW - col0), a.IH = 1, pix = col0;
    if (d->flat) a.sw = a.dw = 1; /* a strided bf16 chunk is gathered unit-stride */
    const float *xg = d->x_plain ? d->x + n * g->C * g->IH * g->IW
                                 : d->x + ((n * p->C1 + grp * d->cg1) * g->IH * g->IW) * VN_C0;
    const void *xa = NULL;
    place_rows(d, xg, d->cg1, oh, rc, &xa, &a.x_bstride, &a.x_row0, &a.x_rstride, &a.IH, &a.IW,
               &a.pl, &a.ih0);
    if (d->bf16)
        a.x16 = xa, a.w16 = (const uint16_t *)d->w + ob * d->cg1 * taps * VN_C0 * VN_C0;
    else
        a.x = xa;
    a.x_plain = d->x_plain;
    /* a plain input's channels lie a plane apart, or KH padded rows in its copy */
    a.x_cstride = d->x_plain && d->pad_w > 0 ? g->KH * d->pad_w : g->IH * g->IW;
    a.cin_blocks = d->cg1;
    a.ci_last = (int32_t)(g->G == 1 ? g->C - (p->C1 - 1) * VN_C0 : VN_C0);
    a.co_last = (int32_t)(g->G == 1 && ob + ncb == p->K1 ? g->K - (p->K1 - 1) * VN_C0 : VN_C0);
    a.w = block_weights(d, ob);
    a.w_bstride = d->cg1 * taps * VN_C0 * VN_C0;
    a.ncb = (int32_t)ncb;
    a.y = out ? out->y + (ob - out->ob0) * out->bstride + (pix - out->pix0) * VN_C0
              : d->y + (n * p->K1 + ob) * plane + pix * VN_C0;
    a.y_bstride = out ? out->bstride : plane;
    a.bias = d->bias ? d->bias + ob * VN_C0 : NULL;
    a.res = d->res ? d->res + (n * p->K1 + ob) * plane + pix * VN_C0 : NULL;
    a.res_bstride = plane;
    a.epi = p->epi;
    a.w_cold = cold;
    a.w_next = d->bf16 ? NULL : w_next;
    a.rows = d->rows2 && oh + 1 < g->OH ? 2 : 1;
    /* the next row's taps: sh rows of the copy of the whole image, or of the input */
    a.ih_step = g->sh, a.x_rstep = g->sh * (d->pad_w > 0 ? d->pad_w : g->IW);
    a.y_rstride = g->OW * VN_C0;
    if (d->bf16)
        d->t->direct_row_bf16(&a);
    else
        d->t->direct_row(&a);
    if (ob + ncb == p->K1 && g->K % VN_C0)
        vn_conv_clear_tail(p, a.y + (ncb - 1) * a.y_bstride,
                           a.rows * a.OW); /* the rows are contiguous */
    vn_core_count_macs(core, d->bf16 ? VN_BF16 : VN_F32,
                       a.rows * a.OW * ncb * VN_C0 * (g->C / g->G) * taps);
}

/* A depthwise tile: image n, channel block c1, band of output rows. */
typedef struct dw_at {
    int64_t n, c1, band;
} dw_at;

/* The band rows [oh0, oh1) of channel block c1 of image n: one kernel call. */
static void dw_tile(vn_core *core, const direct_args *d, dw_at at)
{
    const vn_conv_plan *p = d->p;
    const vn_conv_geom *g = &p->g;
    int64_t band = at.band, c1 = at.c1, n = at.n, taps = g->KH * g->KW;
    int64_t plane = g->OH * g->OW * VN_C0, oh1 = vn_ops_min(g->OH, (band + 1) * d->rows);
    const float *xc = d->x + (n * p->C1 + c1) * g->IH * g->IW * VN_C0;
    float *yc = d->y + (n * p->C1 + c1) * plane;
    const float *rc = d->res ? d->res + (n * p->C1 + c1) * plane : NULL;
    vn_conv_dw_args a = {0};
    ROW_GEOMETRY(a, g);
    a.w = d->w + c1 * taps * VN_C0;
    a.bias = d->bias ? d->bias + c1 * VN_C0 : NULL;
    a.epi = p->epi;
    int64_t oh0 = band * d->rows, bstride = 0;
    const void *xa = NULL;
    place_rows(d, xc, 1, oh0, NULL, &xa, &bstride, &a.x_row0, &a.x_rstride, &a.IH, &a.IW, &a.pl,
               &a.ih0);
    a.x = xa; /* read in place: row oh + 1's taps start sh rows on */
    a.y = yc + oh0 * g->OW * VN_C0;
    a.res = rc ? rc + oh0 * g->OW * VN_C0 : NULL;
    a.rows = oh1 - oh0, a.ih_step = g->sh, a.x_rstep = g->sh * g->IW, a.y_rstride = g->OW * VN_C0;
    d->t->dw_row(&a);
    if (c1 == p->C1 - 1 && g->C % VN_C0)
        vn_conv_clear_tail(p, a.y, a.rows * g->OW); /* rows contiguous */
    vn_core_count_macs(core, VN_F32, (oh1 - oh0) * g->OW * VN_C0 * taps);
}

/* Conv rows needed by `pooled` consecutive pooled rows (their windows' span). */
static int64_t pool_conv_rows(const vn_pool_geom *q, int64_t pooled)
{
    return (pooled - 1) * q->s[1] + (q->k[1] - 1) * q->d[1] + 1;
}

/* The conv rows a worker's last pooled tile left in its scratch: image n,
 * rows [r0, r1), blocks bstride floats apart (n < 0: none). */
typedef struct held_rows {
    int64_t n, r0, r1, bstride;
} held_rows;

/* Move the rows of `h` from r0 on (those the new band [r0, r1) shares with
 * the last one: the pool windows' overlap) to the top of each block of the
 * new layout (blocks bstride apart); returns the first row still to
 * compute. In place, block by block: upward where the blocks shrink or
 * stay, downward where they grow, so no block is overwritten before it
 * moves. */
static int64_t keep_shared_rows(vn_core *core, const held_rows *h, int64_t n, int64_t r0,
                                int64_t r1, int64_t bstride, int64_t K1, int64_t row_elems,
                                float *scratch)
{
    if (h->n != n || r0 < h->r0 || r0 >= h->r1) return r0;
    int64_t keep = vn_ops_min(h->r1, r1) - r0, off = (r0 - h->r0) * row_elems;
    size_t bytes = (size_t)(keep * row_elems) * sizeof(float);
    for (int64_t i = 0; i < K1; i++) {
        int64_t kb = bstride <= h->bstride ? i : K1 - 1 - i;
        memmove(scratch + kb * bstride, scratch + kb * h->bstride + off, bytes);
        vn_shadow_mark(core, scratch + kb * bstride, (int64_t)bytes); /* moved, not computed */
    }
    return r0 + keep;
}

/* A pooled tile: the conv rows under its band's windows (clipped to the
 * map), every block pair of each row in turn (so a row's input copy serves
 * them all), then each output block's band pooled from the scratch: rows
 * outside it are padding or under no window of the band. The rows it shares
 * with the worker's previous band (`held`; a 3x3/2 pool's windows overlap
 * by one conv row) are moved, not computed again: 1 row in 17 of ResNet's
 * stem. */
static void pooled_tile(vn_core *core, const direct_args *d, int64_t t, row_copy *rc,
                        float *scratch, held_rows *held)
{
    const vn_conv_plan *p = d->p;
    const vn_conv_geom *g = &p->g;
    const vn_pool_geom *q = &p->pool;
    int64_t n = t / d->pool_bands, POH = q->out[1], POW = q->out[2];
    int64_t ph0 = t % d->pool_bands * d->pool_rows, ph1 = vn_ops_min(POH, ph0 + d->pool_rows);
    int64_t r0 = vn_ops_max(0, ph0 * q->s[1] - q->pb[1]);
    int64_t r1 = vn_ops_min(g->OH, ph0 * q->s[1] - q->pb[1] + pool_conv_rows(q, ph1 - ph0));
    tile_out out = {scratch, (r1 - r0) * g->OW * VN_C0, 0, r0 * g->OW};
    int64_t first =
        keep_shared_rows(core, held, n, r0, r1, out.bstride, p->K1, g->OW * VN_C0, scratch);
    for (int64_t r = first; r < r1; r++)
        for (int64_t pair = 0; pair < d->pairs; pair++)
            direct_tile(core, d, (tile_at){n, pair, r}, rc, r == first, NULL, &out);
    *held = (held_rows){n, r0, r1, out.bstride};
    const vn_pool_c0_table *pt = vn_pool_c0_table_get();
    for (int64_t kb = 0; kb < p->K1; kb++) {
        vn_pool_c0_args a = {.x = scratch + kb * out.bstride,
                             .y = d->y + (n * p->K1 + kb) * POH * POW * VN_C0,
                             .IH = r1 - r0,
                             .IW = g->OW,
                             .OW = POW,
                             .oh0 = ph0,
                             .oh1 = ph1,
                             .kh = q->k[1],
                             .kw = q->k[2],
                             .sh = q->s[1],
                             .sw = q->s[2],
                             .ph = q->pb[1] + r0, /* scratch row 0 is conv row r0 */
                             .pw = q->pb[2],
                             .dh = q->d[1],
                             .dw = q->d[2]};
        pt->max_rows(&a);
    }
}

/* A globally pooled tile (vn_conv_plan.gap): image n and one block pair,
 * every conv row (or flat chunk) of it into the L1 scratch [ncb][OH*OW][16],
 * then each output block's mean into Y [N][K1][16]. The padded lanes of the
 * last block are zero in the scratch (cleared by direct_tile), so their mean
 * is too. */
static void gap_tile(vn_core *core, const direct_args *d, int64_t t, int64_t end, row_copy *rc,
                     float *scratch)
{
    const vn_conv_plan *p = d->p;
    int64_t per = p->g.G * d->pairs, n = t / per, pair = t % per, pix = p->g.OH * p->g.OW, ob, ncb;
    pair_blocks(d, pair, &ob, &ncb);
    tile_out out = {scratch, pix * VN_C0, ob, 0};
    /* the next tile's weights, requested as next_weights does */
    const float *next =
        t + 1 < end && (t + 1) % per != pair ? pair_weights(d, (t + 1) % per) : NULL;
    for (int64_t r = 0; r < d->rows; r++)
        direct_tile(core, d, (tile_at){n, pair, r}, rc, r == 0, r == asking_row(d) ? next : NULL,
                    &out);
    vn_pool_c0_plane_fn mean = vn_pool_c0_table_get()->reduce_plane;
    for (int64_t c = 0; c < ncb; c++)
        mean(scratch + c * pix * VN_C0, pix, false, (float)(1.0 / (double)pix),
             d->y + (n * p->K1 + ob + c) * VN_C0);
}

/* A pair's tiles run its rows in turn (not rows_outer); its asking row
 * requests the next pair's weights, so that the next cold tile reads them
 * from L2: in a model (weights from DRAM) a cold first row consumed them
 * faster than memory delivers. */
static const float *next_weights(const direct_args *d, int64_t t, tile_at at, int64_t end)
{
    if (d->rows_outer || at.oh != asking_row(d)) return NULL;
    int64_t t_next = t - at.oh + d->rows; /* the next pair's first row */
    if (t_next >= end) return NULL;
    tile_at nx = tile_of(d, t_next);
    return nx.pair == at.pair ? NULL : pair_weights(d, nx.pair);
}

/* The depthwise tile t: (image, channel block, band), band fastest. */
static dw_at dw_tile_of(const direct_args *d, int64_t t, int64_t bands)
{
    return (dw_at){t / bands / d->p->C1, t / bands % d->p->C1, t % bands};
}

/* Tiles through an L1 scratch, pooled from there (a fused pool or GAP). */
static void pooled_kernel(vn_core *core, const direct_args *d, row_copy *rc, int64_t begin,
                          int64_t end)
{
    const vn_conv_plan *p = d->p;
    int64_t elems = p->pooled ? p->K1 * pool_conv_rows(&p->pool, d->pool_rows) * p->g.OW * VN_C0
                              : d->ncb_max * p->g.OH * p->g.OW * VN_C0;
    float *scratch = vn_ptr(float, vn_buf_new(core, VN_B1, elems, VN_F32));
    held_rows held = {-1, 0, 0, 0};
    for (int64_t t; vn_tile_next(core, &t);) {
        if (p->pooled)
            pooled_tile(core, d, t, rc, scratch, &held);
        else
            gap_tile(core, d, t, t >= begin ? end : 0, rc, scratch); /* hints: own share */
    }
}

/* Tiles come from vn_tile_next: this block's share in order, then tiles
 * taken from the end of a slower block's share. The hints about what a
 * block runs next (next_weights, gap_tile) hold inside its own share. */
static void conv_kernel(vn_core *core, const void *args)
{
    const direct_args *d = args;
    int64_t begin, end;
    vn_tile_home(core, &begin, &end);
    bool dw = d->p->algo == VN_CONV_ALGO_DEPTHWISE;
    row_copy rc = {NULL, NULL, 0};
    /* row copies in UB; a gathered flat chunk of every input block in L1, the cube's staging */
    vn_position pos = d->gather || d->img_in_l1 ? VN_B1 : VN_VECCALC;
    if (d->pad_w > 0 || d->gather)
        rc.buf = vn_ptr(void, vn_buf_new(core, pos, d->buf_elems, d->bf16 ? VN_U16 : VN_F32));
    if (d->p->pooled || d->p->gap) {
        pooled_kernel(core, d, rc.buf ? &rc : NULL, begin, end);
        return;
    }
    int64_t held = -1; /* the weights the previous tile read */
    /* depthwise tiles are (n, c1, band), band fastest: decoded where a tile
     * does not follow the last, else stepped (the divisions were a tenth of
     * a 7 x 7 layer's time) */
    int64_t bands = dw ? vn_ops_div_up(d->p->g.OH, d->rows) : 1, last = -2;
    dw_at at_dw = {0, 0, 0};
    for (int64_t t; vn_tile_next(core, &t); last = t) {
        if (dw) {
            if (t != last + 1) {
                at_dw = dw_tile_of(d, t, bands);
            } else if (++at_dw.band == bands && (at_dw.band = 0, ++at_dw.c1 == d->p->C1)) {
                at_dw.c1 = 0, at_dw.n++;
            }
            dw_tile(core, d, at_dw);
            continue;
        }
        /* rows_outer weights are small and stay in L2 after the first pass */
        tile_at at = tile_of(d, t);
        bool cold = at.pair != held && (held < 0 || !d->rows_outer);
        const float *next = t >= begin && t < end ? next_weights(d, t, at, end) : NULL;
        direct_tile(core, d, at, rc.buf ? &rc : NULL, cold, next, NULL);
        held = at.pair;
    }
}

int64_t vn_conv_arena_room(const vn_conv_plan *p, vn_arena arena)
{
    return vn_device_arena_size(p->device, arena) - VN_OPS_UB_MARGIN;
}

/* 1x1, unpadded, any stride: flat chunks (a strided one gathered unit-stride). */
static bool is_pointwise(const vn_conv_geom *g)
{
    return g->KH == 1 && g->KW == 1 && g->pt == 0 && g->pl == 0 && g->pb == 0 && g->pr == 0;
}

/* A pointwise conv of unit stride: H*W is one row (f32 reads it in place). */
static bool is_flat(const vn_conv_geom *g)
{
    return is_pointwise(g) && g->sh == 1 && g->sw == 1;
}

/* The last two output blocks as one block group: a flat f32 1x1 whose last
 * block has at most one vector of real channels, on a table that takes
 * such a pair (vn_conv_table.half_pair_co) beyond its max_ncb of 1. Not
 * for a gap conv (its scratch holds max_ncb blocks) nor, to keep their
 * tiles as they are, a pooled or gathered one. */
static bool half_pair_pays(const vn_conv_plan *p, const direct_args *d)
{
    const vn_conv_geom *g = &p->g;
    int64_t co_last = g->K - (p->K1 - 1) * VN_C0;
    return d->ncb_max == 1 && d->flat && !d->gather && !d->bf16 && g->G == 1 && p->K1 >= 2 &&
           co_last <= d->t->half_pair_co && !p->pooled && !p->gap;
}

/* A flat chunk of every input block of a group, es bytes a value, fits L1. */
static bool chunk_fits(const vn_conv_plan *p, int64_t es)
{
    const vn_conv_geom *g = &p->g;
    int64_t nb = g->G == 1 ? p->C1 : g->C / g->G / VN_C0;
    return nb * FLAT * VN_C0 * es <= vn_conv_arena_room(p, VN_ARENA_L1);
}

bool vn_conv_bf16_fits(const vn_conv_plan *p)
{
    const vn_conv_geom *g = &p->g;
    int64_t nb = g->G == 1 ? p->C1 : g->C / g->G / VN_C0;
    if (is_pointwise(g)) return chunk_fits(p, 2);
    /* another unpadded strided conv reads its input in place in f32; in bf16 each row
     * would be converted once per block group */
    return column_padded(g) && pad_rows_elems(g, nb) * 2 <= vn_conv_arena_room(p, VN_ARENA_UB);
}

/* The whole zero-padded image of nb blocks (pad_img) in `arena`, if it fits:
 * for two-row tiles with zero rows above and below, where that fits too, so
 * that every output row reaches all KH taps inside it and both rows of a
 * tile always run as one block (the top and bottom rows' clipped taps would
 * split their pairs; the zero taps cost 2 of 21 row-taps of a 7 x 7 map). */
static bool copy_image(const vn_conv_plan *p, direct_args *d, int64_t nb, int64_t width,
                       vn_arena arena)
{
    const vn_conv_geom *g = &p->g;
    int64_t es = d->bf16 ? 2 : 4, room = vn_conv_arena_room(p, arena);
    if (nb * g->IH * width * VN_C0 * es > room) return false;
    int64_t last = (g->OH - 1) * g->sh - g->pt + (g->KH - 1) * g->dh; /* the last tap row */
    int64_t rows = g->pt + g->IH + vn_ops_max(0, last - (g->IH - 1));
    bool zero_rows = d->rows2 && nb * rows * width * VN_C0 * es <= room;
    d->img_top = zero_rows ? g->pt : 0, d->img_rows = zero_rows ? rows : g->IH;
    d->pad_img = true, d->img_in_l1 = arena == VN_ARENA_L1, d->pad_w = width;
    d->buf_elems = nb * d->img_rows * width * VN_C0;
    return true;
}

/* Column padding goes through zero-padded row copies in UB when there is
 * any (so border columns run in full register blocks) and the copies fit;
 * bf16 copies (and converts) every input, a flat one chunk by chunk into L1
 * (vn_conv_bf16_fits checked that they fit); a plain input's rows are
 * copied per channel, zero-padded where needed ([C][KH][width] floats): its
 * border columns run in full blocks too (in-model MobileNetV2 stem 0.29 ->
 * 0.18 ms, ResNet-50's 7x7 1.38 -> 1.16 ms), and the broadcasts read KH x C
 * rows of one small buffer instead of C planes 200 KB apart (SqueezeNet's
 * unpadded stem 0.34-0.45 -> 0.30-0.38 ms, noisy runs); in place only when
 * the copy does not fit UB. */
static void plan_padding(const vn_conv_plan *p, direct_args *d, int64_t nb)
{
    const vn_conv_geom *g = &p->g;
    int64_t es = d->bf16 ? 2 : 4, ub = vn_conv_arena_room(p, VN_ARENA_UB);
    if (d->gather) {
        d->buf_elems = nb * FLAT * VN_C0;
        return;
    }
    if (d->x_plain) {
        int64_t plain = g->C * g->KH * padded_width(g);
        if (plain * es <= ub) d->pad_w = padded_width(g), d->buf_elems = plain;
        return;
    }
    bool any = d->bf16 || (!d->flat && column_padded(g));
    int64_t elems = pad_rows_elems(g, nb), width = elems / (nb * g->KH * VN_C0);
    if (!any) return; /* read in place, two rows at a time where narrow */
    if (elems * es > ub) {
        d->rows2 = false; /* in place with column padding: the rows' border blocks */
        return;
    }
    /* a small map whose taps overlap (KH > sh) is copied once per block, not per tile:
     * each tile would copy KH rows of it again; too large for UB, a narrow map's image
     * goes to the L1 arena (an L2-sized staging buffer) rather than being copied again
     * per tile (ResNet-50's 3x3/2 512@14, 430 KB, 5 rows for each of its 64 tiles) */
    if (g->KH > g->sh && copy_image(p, d, nb, width, VN_ARENA_UB)) return;
    if (g->KH > g->sh && d->rows2 && !p->gap && copy_image(p, d, nb, width, VN_ARENA_L1)) return;
    /* two-row tiles copy the rows both rows' taps reach, consecutive */
    int64_t span = (g->KH - 1) * g->dh + 1 + g->sh, two = nb * span * width * VN_C0;
    if (d->rows2 && two * es <= ub) {
        d->pad_w = width, d->copy_rows = span, d->buf_elems = two;
        return;
    }
    d->rows2 = false;
    /* Per-tile copies of a row at least PER_TILE_COPY_MAX_OW wide cost more
     * than its one-column border calls (bench_conv, 1 thread: 3x3/2 128@56
     * 1.29 ms copied, 1.17 in place; 3x3 64@56 direct 1.15 / 1.10; at 14
     * columns the copy wins, 256@14 1.16 / 1.23): f32 reads those in place.
     * So does a strided row of any width: its copy of KH rows serves one
     * tile, and a ResNet-style stride-2 row has one border column (the last
     * column's taps end inside): 3x3/2 256@28 1.37-1.41 ms copied, 1.27 in
     * place. */
    bool copy = g->OW < PER_TILE_COPY_MAX_OW && g->sw == 1;
    if (d->bf16 || copy) d->pad_w = width, d->buf_elems = elems;
}

/* Flat chunks: as even as whole 14-pixel register blocks allow (196
 * pixels run as 98 + 98, not 112 + 84, which leaves one of 2 workers idle
 * for 14 % of the layer), then halved down to FLAT_MIN pixels while there
 * are fewer than 4 tiles per worker (MobileNetV2's 960 > 160 at 7 x 7: 49
 * pixels and 5 block groups, which 2 workers would split 3 : 2). */
static void plan_chunks(direct_args *d, int32_t workers)
{
    const vn_conv_geom *g = &d->p->g;
    int64_t pixels = g->OH * g->OW, per_chunk = g->N * g->G * d->pairs, chunk = FLAT;
    for (;;) {
        int64_t even = vn_ops_div_up(pixels, vn_ops_div_up(pixels, chunk));
        d->chunk = vn_ops_min(chunk, vn_ops_div_up(even, 14) * 14);
        d->rows = vn_ops_div_up(pixels, d->chunk);
        if (workers <= 1 || chunk <= FLAT_MIN || per_chunk * d->rows >= 4 * workers) return;
        chunk = vn_ops_max(FLAT_MIN, (chunk / 2 + 13) / 14 * 14);
    }
}

/* The tensors' own traffic, for the roofline: input, packed weights and
 * residual once, output once. (The kernels read them from global memory in
 * place; what their tiles re-read from cache, and the UB row copies, would
 * count cache traffic as memory traffic.) */
static void count_bytes(const vn_conv_plan *p, vn_kernel_counters *c)
{
    const vn_conv_geom *g = &p->g;
    int64_t x = p->x_plain ? g->N * g->C * g->IH * g->IW : g->N * p->C1 * g->IH * g->IW * VN_C0;
    vn_tensor_desc yd = vn_conv_plan_out_desc(p);
    int64_t y = vn_desc_numel(&yd), map = g->N * p->K1 * g->OH * g->OW * VN_C0; /* a residual's */
    c->bytes_in +=
        x * 4 + vn_conv_packed_elems(g, p->algo) * (p->bf16 ? 2 : 4) + (p->has_res ? map * 4 : 0);
    c->bytes_out += y * 4;
}

/* L1 bytes of a pooled tile's scratch for `pooled` rows. */
static int64_t pool_scratch_bytes(const vn_conv_plan *p, int64_t pooled)
{
    return p->K1 * pool_conv_rows(&p->pool, pooled) * p->g.OW * VN_C0 * 4;
}

bool vn_conv_pool_fits(const vn_conv_plan *p)
{
    return pool_scratch_bytes(p, 1) <= vn_conv_arena_room(p, VN_ARENA_L1);
}

bool vn_conv_gap_fits(const vn_conv_plan *p)
{
    const vn_conv_geom *g = &p->g;
    int64_t scratch = vn_conv_table_get()->max_ncb * g->OH * g->OW * VN_C0 * 4;
    int64_t gathered = is_pointwise(g) && !is_flat(g) ? p->C1 * FLAT * VN_C0 * 4 : 0;
    /* half: the other half stays the cache it stands for, for the weights
     * and input rows the tile streams */
    return scratch + gathered <= vn_conv_arena_room(p, VN_ARENA_L1) / 2;
}

vn_status vn_conv_pool_map(const vn_conv_plan *p, const float *map, float *y,
                           vn_kernel_counters *counters)
{
    if (p->gap) { /* the GlobalAveragePool operator's plan over the map */
        vn_pool_plan pool = {.kind = VN_POOL_AVG, .dtype = VN_F32, .lanes = VN_C0, .global = true};
        pool.g.in[0] = 1, pool.g.in[1] = p->g.OH, pool.g.in[2] = p->g.OW;
        pool.planes = p->g.N * p->K1;
        vn_status st = vn_pool_plan_global(p->where, p->device, &pool);
        return st == VN_OK ? vn_pool_run_global(p->device, &pool, map, y, counters) : st;
    }
    vn_pool_plan pool = {.kind = VN_POOL_MAX, .dtype = VN_F32, .g = p->pool};
    pool.planes = p->g.N * p->K1; /* the pool's geometry was made over the conv map */
    return vn_pool_run_direct(p->device, &pool, map, y, counters);
}

/* Bands of pooled rows: as many rows as the L1 scratch holds (a band whose
 * worker did not run the band before computes the conv rows their windows
 * share once more: 1 for a 3x3/2 pool), then as even as a whole number of
 * tiles per worker allows. */
static void plan_pool_bands(const vn_conv_plan *p, direct_args *d, int64_t *work)
{
    int64_t POH = p->pool.out[1], fit = 1, workers = vn_device_num_workers(p->device);
    while (fit < POH && pool_scratch_bytes(p, fit + 1) <= vn_conv_arena_room(p, VN_ARENA_L1)) fit++;
    int64_t bands = vn_ops_div_up(POH, fit);
    if (p->g.N < workers) bands = vn_ops_min(POH, vn_ops_div_up(bands, workers) * workers);
    d->pool_rows = vn_ops_div_up(POH, bands);
    d->pool_bands = vn_ops_div_up(POH, d->pool_rows);
    d->tiles = p->g.N * d->pool_bands;
    *work = pool_conv_rows(&p->pool, d->pool_rows) * p->g.OW * p->K1 * VN_C0 * p->g.C * p->g.KH *
            p->g.KW;
}

vn_status vn_conv_nc1hwc0_run(const vn_conv_plan *p, const float *x, const float *wp,
                              const float *bias, const float *res, float *y,
                              vn_kernel_counters *counters)
{
    const vn_conv_geom *g = &p->g;
    direct_args d = {.p = p,
                     .t = vn_conv_table_get(),
                     .x = x,
                     .w = wp,
                     .bias = bias,
                     .res = res,
                     .y = y,
                     .x_plain = p->x_plain,
                     .bf16 = p->bf16,
                     .rows = g->OH,
                     .img_rows = g->IH,
                     .copy_rows = g->KH};
    int64_t work; /* multiply-accumulates of one tile */
    bool dw = p->algo == VN_CONV_ALGO_DEPTHWISE;
    /* a strided 1x1 is gathered flat in f32 too, when a chunk fits L1 */
    bool strided_1x1 = is_pointwise(g) && !is_flat(g) && (d.bf16 || chunk_fits(p, 4));
    d.flat = !dw && !d.x_plain && (is_flat(g) || strided_1x1);
    d.gather = d.flat && (d.bf16 || strided_1x1);
    if (d.flat) d.chunk = FLAT, d.rows = vn_ops_div_up(g->OH * g->OW, FLAT);
    /* a narrow map's tiles are pairs of rows (vn_conv_row_args.rows), where
     * plan_padding finds their input rows a copy (or none is needed) */
    d.rows2 = !dw && !d.flat && !d.bf16 && !d.x_plain && g->OW <= d.t->max_ow2 && g->OH > 1;
    /* Depthwise does 9 FMAs per input vector it would copy: the copy costs
     * more than the two one-column border calls per row it saves. */
    if (!dw) plan_padding(p, &d, g->G == 1 ? p->C1 : g->C / g->G / VN_C0);
    if (d.rows2) d.rows = vn_ops_div_up(g->OH, 2); /* tile oh: rows 2 oh, 2 oh + 1 */
    if (dw) { /* bands of rows: about 8 tiles per worker, whole planes when plenty */
        int64_t planes = g->N * p->C1, want = 8 * (int64_t)vn_device_num_workers(p->device);
        int64_t per = vn_ops_div_up(g->OH, vn_ops_max(1, vn_ops_div_up(want, planes)));
        d.rows = vn_ops_max(1, per);
        d.tiles = planes * vn_ops_div_up(g->OH, d.rows);
        work = d.rows * g->OW * VN_C0 * g->KH * g->KW;
    } else {
        d.ncb_max = d.t->max_ncb;
        d.kg1 = g->G == 1 ? p->K1 : g->K / g->G / VN_C0;
        d.cg1 = g->G == 1 ? p->C1 : g->C / g->G / VN_C0;
        d.pairs = vn_ops_div_up(d.kg1, d.ncb_max);
        d.half_pair = half_pair_pays(p, &d);
        if (d.half_pair) d.pairs--;
        if (d.flat && !p->gap) /* gap tiles are whole maps: no chunk to cut */
            plan_chunks(&d, vn_device_num_workers(p->device));
        d.tiles = g->N * g->G * d.pairs * d.rows;
        int64_t w_bytes = d.kg1 * d.cg1 * g->KH * g->KW * VN_C0 * VN_C0 * 4;
        d.rows_outer = g->G == 1 && d.pairs > 1 && w_bytes <= ROWS_OUTER_MAX_W &&
                       p->C1 * g->IH * g->IW * VN_C0 * 4 >= ROWS_OUTER_MIN_X;
        /* gathered: a chunk serves every block group in turn (their weights
         * stay in L2, or cost less to stream again per chunk than a gather
         * per tile: ResNet-50's 512>1024 downsampling, 2 chunks, gathered
         * 229 KB for each of 32 groups against 2 MB of weights) instead of
         * being gathered once per group */
        int64_t gathered = d.cg1 * FLAT * VN_C0 * 4;
        if (d.gather && g->G == 1 &&
            (w_bytes / (d.bf16 ? 2 : 1) <= chunk_outer_max_w() ||
             (d.rows > 1 && d.pairs * gathered > w_bytes)))
            d.rows_outer = true;
        int64_t group = d.half_pair ? 2 : d.ncb_max; /* blocks of a tile, at most */
        work = (d.flat ? d.chunk : g->OW * (d.rows2 ? 2 : 1)) * group * VN_C0 * (g->C / g->G) *
               g->KH * g->KW;
    }
    if (p->pooled) plan_pool_bands(p, &d, &work);
    if (p->gap) { /* a tile is every row of one (image, block pair) */
        d.tiles = g->N * g->G * d.pairs;
        d.rows_outer = false;
        work *= d.rows;
    }
    if (d.tiles == 0) return VN_OK;
    /* A tile of `work` MACs counts as work/8 elements for the hand-off rule;
     * a depthwise MAC as 4x that: its vector reads a new input (9 FMAs per
     * load against a direct kernel's 16-32), so it runs at a quarter of
     * the FMA rate, and a 7 x 7 map of 960 channels (15 us) was 1 block. */
    int64_t per_elem = dw ? 2 : 8;
    int32_t blocks = vn_ops_block_dim(p->device, d.tiles, vn_ops_max(1, work / per_elem));
    const char *name = dw ? "vn_conv_depthwise" : "vn_conv_direct";
    vn_launch_desc ld = {conv_kernel, name, blocks, &d, -1, d.tiles};
    vn_status st = vn_launch(p->device, &ld, counters);
    if (st == VN_OK && counters) count_bytes(p, counters);
    return st;
}
