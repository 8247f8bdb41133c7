/*
 * conv_winograd.c — the Winograd F(4x4, 3x3) / F(2x2, 3x3) convolution on
 * NC1HWC0 (3x3, stride 1, dilation 1, group 1; the tile size and weights
 * from conv_winograd_pack.c), in three launches over the workspace:
 *   1. input transform: tasks (image, input block, tile row) -> V;
 *   2. per transform point, the 1x1 GEMM over channels M_p = U_p V_p, run by
 *      the direct kernel's row (conv_kernels.h: columns = tiles, register
 *      block 14 tiles x 2 output blocks on AVX-512); tasks (point, output
 *      block pair, chunk of tiles), chunks innermost so a block keeps one
 *      weight slab in L2;
 *   3. output transform with the direct conv's epilogue (bias, residual,
 *      activation): tasks (image, output block, tile row).
 * Tiles of all images share one GEMM (the weights are read once per run).
 *
 * Accuracy: the F(4x4) transforms multiply rounding errors by up to ~10x
 * those of direct summation (F(2x2) by far less); docs/architecture.md
 * states the tested bounds.
 */
#include <string.h>

#include "kernel/core_internal.h"
#include "kernel/winograd_kernels.h"
#include "ops/conv.h"

#define CHUNK 112 /* tiles per GEMM task (8 register blocks of 14) */

typedef struct wino_args {
    const vn_conv_plan *p;
    const vn_wino_table *wt;
    const vn_conv_table *ct;
    const float *x, *u, *bias, *res;
    float *y, *v, *m;
    vn_wino_variant var;
    int64_t M, P;       /* output pixels per tile side, transform points */
    int64_t TH, TW, NT; /* tile rows and columns of an image; tiles of all images */
    int64_t ncb_max, pairs, chunks;
    int64_t tasks;
} wino_args;

static void input_kernel(vn_core *core, const void *args)
{
    const wino_args *w = args;
    const vn_conv_plan *p = w->p;
    const vn_conv_geom *g = &p->g;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t th = t % w->TH, ib = (t / w->TH) % p->C1, n = t / (w->TH * p->C1);
        int64_t tile = (n * w->TH + th) * w->TW;
        vn_wino_in_args a = {.x = w->x + (n * p->C1 + ib) * g->IH * g->IW * VN_C0,
                             .IH = g->IH,
                             .IW = g->IW,
                             .ih0 = th * w->M - g->pt,
                             .iw0 = -g->pl,
                             .ntiles = w->TW,
                             .v = w->v + (ib * w->NT + tile) * VN_C0,
                             .pstride = p->C1 * w->NT * VN_C0};
        w->wt->input_row[w->var](&a);
        /* the tensors' own traffic, for the roofline (the transformed tiles live in
         * the workspace, which stays in cache, and are not counted): input rows */
        core->counters.bytes_in += (w->M + 2) * g->IW * VN_C0 * (int64_t)sizeof(float);
    }
}

bool vn_conv_winograd_bf16_fits(const vn_conv_plan *p)
{
    return p->device && p->C1 * CHUNK * VN_C0 * 2 <=
                            vn_device_arena_size(p->device, VN_ARENA_L1) - VN_OPS_UB_MARGIN;
}

/* bf16 (p->bf16): the chunk's transformed tiles of every input block,
 * rounded into `buf` ([C1][CHUNK][16]) when the task moves to a new chunk. */
static const uint16_t *bf16_chunk(const wino_args *w, int64_t pt, int64_t col0, int64_t cols,
                                  uint16_t *buf, int64_t *held)
{
    const vn_conv_plan *p = w->p;
    int64_t key = pt * w->chunks + col0 / CHUNK;
    if (*held != key)
        for (int64_t ib = 0; ib < p->C1; ib++)
            vn_f32_to_bf16_array(w->v + ((pt * p->C1 + ib) * w->NT + col0) * VN_C0,
                                 buf + ib * CHUNK * VN_C0, (size_t)(cols * VN_C0));
    *held = key;
    return buf;
}

/* A GEMM task: transform point, output block pair, chunk of tiles. */
typedef struct wino_task {
    int64_t pt, pair, chunk;
} wino_task;

static wino_task task_of(const wino_args *w, int64_t t)
{
    /* bf16: chunks outside the block pairs, so a converted chunk serves them all */
    wino_task k = {t / (w->chunks * w->pairs), (t / w->chunks) % w->pairs, t % w->chunks};
    if (w->p->bf16) k.pair = t % w->pairs, k.chunk = (t / w->pairs) % w->chunks;
    return k;
}

/* The task's weight slab: point pt, output blocks from pair * ncb_max. */
static const float *slab_of(const wino_args *w, wino_task k)
{
    const vn_conv_plan *p = w->p;
    return w->u + (k.pt * p->K1 + k.pair * w->ncb_max) * p->C1 * VN_C0 * VN_C0;
}

static void gemm_kernel(vn_core *core, const void *args)
{
    const wino_args *w = args;
    const vn_conv_plan *p = w->p;
    int64_t cin = p->g.C, held = -1;
    uint16_t *buf =
        p->bf16 ? vn_ptr(uint16_t, vn_buf_new(core, VN_B1, p->C1 * CHUNK * VN_C0, VN_U16)) : NULL;
    const float *slab_held = NULL; /* the slab the last task read */
    for (int64_t t; vn_tile_next(core, &t);) {
        wino_task k = task_of(w, t);
        int64_t pt = k.pt, chunk = k.chunk, ob = k.pair * w->ncb_max;
        int64_t col0 = chunk * CHUNK, cols = vn_ops_min(CHUNK, w->NT - col0);
        int64_t ncb = vn_ops_min(w->ncb_max, p->K1 - ob);
        vn_conv_row_args a = {0};
        a.x = w->v + (pt * p->C1 * w->NT + col0) * VN_C0;
        a.x_bstride = w->NT * VN_C0;
        a.cin_blocks = p->C1;
        a.ci_last = (int32_t)(cin - (p->C1 - 1) * VN_C0);
        a.w = slab_of(w, k);
        a.w_bstride = p->C1 * VN_C0 * VN_C0;
        a.ncb = (int32_t)ncb;
        a.IH = a.KH = a.KW = a.sw = a.dw = a.dh = 1;
        a.IW = a.OW = cols;
        a.y = w->m + ((pt * p->K1 + ob) * w->NT + col0) * VN_C0;
        a.y_bstride = w->NT * VN_C0;
        /* f32: a slab serves its chunks in turn; bf16 (chunks outer) rereads it a round later */
        a.w_cold = p->bf16 || a.w != slab_held;
        slab_held = a.w;
        /* f32: the next task's slab when it starts one (its first chunk), in this block's share */
        wino_task nx = task_of(w, t + 1);
        if (!p->bf16 && vn_tile_followed(core, t) && nx.chunk == 0) a.w_next = slab_of(w, nx);
        if (p->bf16) {
            a.x16 = bf16_chunk(w, pt, col0, cols, buf, &held);
            a.x_bstride = CHUNK * VN_C0;
            a.w16 = (const uint16_t *)w->u + (pt * p->K1 + ob) * p->C1 * VN_C0 * VN_C0;
            w->ct->direct_row_bf16(&a);
        } else {
            w->ct->direct_row(&a);
        }
        vn_core_count_macs(core, p->bf16 ? VN_BF16 : VN_F32, cols * ncb * VN_C0 * cin);
        core->counters.bytes_in +=
            ncb * VN_C0 * p->C1 * VN_C0 * (p->bf16 ? 2 : (int64_t)sizeof(float)); /* weights */
    }
}

static void output_kernel(vn_core *core, const void *args)
{
    const wino_args *w = args;
    const vn_conv_plan *p = w->p;
    const vn_conv_geom *g = &p->g;
    int64_t plane = g->OH * g->OW * VN_C0, real = g->K - (p->K1 - 1) * VN_C0;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t th = t % w->TH, ob = (t / w->TH) % p->K1, n = t / (w->TH * p->K1);
        int64_t tile = (n * w->TH + th) * w->TW, off = (n * p->K1 + ob) * plane;
        vn_wino_out_args a = {.m = w->m + (ob * w->NT + tile) * VN_C0,
                              .pstride = p->K1 * w->NT * VN_C0,
                              .ntiles = w->TW,
                              .y = w->y + off,
                              .res = w->res ? w->res + off : NULL,
                              .bias = w->bias ? w->bias + ob * VN_C0 : NULL,
                              .OH = g->OH,
                              .OW = g->OW,
                              .oh0 = th * w->M,
                              .epi = p->epi};
        w->wt->output_row[w->var](&a);
        int64_t out_bytes = w->M * g->OW * VN_C0 * (int64_t)sizeof(float);
        core->counters.bytes_in += w->res ? out_bytes : 0;
        core->counters.bytes_out += out_bytes;
        if (ob != p->K1 - 1 || real == VN_C0) continue;
        /* padded lanes back to zero (HardSigmoid, Sigmoid, Clip map 0 elsewhere) */
        int64_t oh1 = vn_ops_min(g->OH, a.oh0 + w->M);
        for (int64_t px = a.oh0 * g->OW; px < oh1 * g->OW; px++)
            memset(a.y + px * VN_C0 + real, 0, (size_t)(VN_C0 - real) * sizeof(float));
    }
}

static vn_status launch(const wino_args *w, vn_kernel_fn fn, const char *name, int64_t work,
                        vn_kernel_counters *counters)
{
    int32_t blocks = vn_ops_block_dim(w->p->device, w->tasks, vn_ops_max(1, work));
    vn_launch_desc ld = {fn, name, blocks, w, -1, w->tasks};
    return vn_launch(w->p->device, &ld, counters);
}

vn_status vn_conv_winograd_run(const vn_conv_plan *p, const float *x, const float *u,
                               const float *bias, const float *res, float *y, float *ws,
                               vn_kernel_counters *counters)
{
    const vn_conv_geom *g = &p->g;
    wino_args w = {.p = p,
                   .wt = vn_wino_table_get(),
                   .ct = vn_conv_table_get(),
                   .x = x,
                   .u = u,
                   .bias = bias,
                   .res = res,
                   .y = y,
                   .var = vn_conv_winograd_variant(g),
                   .NT = vn_conv_winograd_tiles(g)};
    w.M = vn_wino_m(w.var), w.P = vn_wino_points(w.var);
    w.TH = vn_ops_div_up(g->OH, w.M), w.TW = vn_ops_div_up(g->OW, w.M);
    w.v = ws;
    w.m = ws + w.P * p->C1 * w.NT * VN_C0;
    w.ncb_max = w.ct->max_ncb;
    w.pairs = vn_ops_div_up(p->K1, w.ncb_max);
    w.chunks = vn_ops_div_up(w.NT, CHUNK);
    if (w.NT == 0) return VN_OK;
    vn_kernel_counters step[3] = {{0}};
    int64_t row_elems = w.TW * w.P * VN_C0; /* elements of one tile row's points */
    w.tasks = g->N * p->C1 * w.TH;
    vn_status st = launch(&w, input_kernel, "vn_conv_winograd_in", row_elems, &step[0]);
    w.tasks = w.P * w.pairs * w.chunks;
    if (st == VN_OK)
        st = launch(&w, gemm_kernel, "vn_conv_winograd_gemm",
                    vn_ops_min(CHUNK, w.NT) * w.ncb_max * 2 * g->C, &step[1]);
    w.tasks = g->N * p->K1 * w.TH;
    if (st == VN_OK) st = launch(&w, output_kernel, "vn_conv_winograd_out", row_elems, &step[2]);
    if (counters) { /* filled, as one launch would */
        memset(counters, 0, sizeof *counters);
        for (int i = 0; i < 3; i++) vn_kernel_counters_add(counters, &step[i]);
    }
    return st;
}
