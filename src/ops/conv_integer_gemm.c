/*
 * conv_integer_gemm.c — ConvInteger / QLinearConv on the int8 GEMM (AMX
 * tiles or VNNI) when w's zero point is one value.
 *
 * Orientation: per image, batched over the groups, C[p][k] = A[p][q] x
 * B[q][k] with the activations as A (u8 or i8, P = OH*OW rows of the
 * receptive field, Q = Cg*KH*KW) and W as B (W_g is [Kg][Q] row-major, i.e.
 * B transposed). The cube multiplies u8 A by i8 B, so the common QDQ case
 * (u8 activations, i8 weights) needs no byte shift; W is constant, so it is
 * packed once at plan time, with the column sums that the fixpipe needs to
 * correct for x's zero point stored behind the panels (a_zero * colsum[k]);
 * w's zero point is then usually 0, and the row sums of A are not needed.
 *
 * A is read as the transpose of [Q][P] rows: the im2col rows of the NCHW
 * input (vn_conv_im2col_row: contiguous runs, x's zero point in the
 * padding, so a padded tap adds 0 after the correction), or for a 1x1,
 * stride 1, unpadded convolution the input itself (its [C][H*W] planes
 * are those rows, group g at an offset of Cg planes). The cube's int8 A
 * load transposes 16 x 16 byte blocks.
 *
 * The exact i32 sums [G][P][Kg] go to the workspace; the finish kernel
 * takes tiles of 64 pixels: QLinearConv requantises each pixel's run of
 * channels (per-channel bias and multiplier as vectors) into a byte tile
 * and transposes it into y's NCHW planes 16 x 16 at a time; ConvInteger's
 * i32 transposes the sums and adds the bias per channel. Both through
 * vn_ci_finish's arithmetic: the same bits as the scalar loops.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "kernel/cube_internal.h"
#include "ops/cast.h"
#include "ops/conv_integer.h"

static int64_t rup64(int64_t x)
{
    return (x + 63) / 64 * 64;
}

static int64_t ci_q(const vn_conv_geom *g)
{
    return g->C / g->G * g->KH * g->KW;
}

static bool ci_in_place(const vn_conv_geom *g)
{
    return g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
           g->OH == g->IH && g->OW == g->IW;
}

static vn_gemm_desc ci_gemm_desc(const ci_plan *p, int64_t xzp, int64_t wzp)
{
    const vn_conv_geom *g = &p->g;
    int64_t P = g->OH * g->OW, Q = ci_q(g), kg = g->K / g->G;
    vn_gemm_desc d = vn_gemm_desc_default(P, kg, Q);
    d.a_dtype = p->xdt, d.b_dtype = p->wdt, d.c_dtype = VN_I32, d.compute = VN_I32;
    d.trans_a = true, d.lda = P; /* A stored [Q][P] */
    d.trans_b = true, d.ldb = Q; /* B stored [Kg][Q]: W_g as it lies */
    d.batch = g->G, d.stride_a = Q * P, d.stride_b = kg * Q, d.stride_c = P * kg;
    d.epi.a_zero = (int32_t)xzp, d.epi.b_zero = (int32_t)wzp;
    d.b_prepacked = true;
    return d;
}

/* A zero point known at plan time (absent: 0): false when it is not a
 * constant; *one false when its elements differ. */
static bool ci_const_zp(const vn_op_ctx *ctx, int32_t slot, bool present, int64_t *v, bool *one)
{
    *v = 0, *one = true;
    if (!present) return true;
    const void *d = ctx->input_data ? ctx->input_data[slot] : NULL;
    if (!d) return false;
    vn_dtype dt = ctx->inputs[slot].dtype;
    *v = vn_cast_load_i64(dt, d, 0);
    for (int64_t k = 1; k < vn_desc_numel(&ctx->inputs[slot]); k++)
        if (vn_cast_load_i64(dt, d, k) != *v) *one = false;
    return true;
}

size_t vn_ci_packed_size(const ci_plan *p)
{
    return p->gemm ? vn_gemm_packed_b_size(p->gemm) : 0;
}

static void ci_workspace(ci_plan *p, bool pack_per_run)
{
    const vn_conv_geom *g = &p->g;
    int64_t P = g->OH * g->OW;
    size_t cols = p->in_place ? 0 : (size_t)rup64(g->G * ci_q(g) * P);
    p->ws_sums = cols;
    p->ws_chan = p->ws_sums + (size_t)rup64(g->K * P * 4);
    /* per channel: ci_channel, then the bias (i32) and multiplier (f64) as arrays */
    p->ws_pack = p->ws_chan + (size_t)rup64(g->K * (int64_t)(sizeof(ci_channel) + 12));
    /* the packer wants 64-byte alignment, which a caller's workspace may lack */
    p->ws_total = p->ws_pack + (pack_per_run ? vn_ci_packed_size(p) + 63 : 0);
}

vn_status vn_ci_gemm_plan(const vn_op_ctx *ctx, const char *where, ci_plan *p)
{
    const vn_conv_geom *g = &p->g;
    int64_t xzp, wzp;
    bool one;
    if (ci_q(g) == 0 || g->N * g->K * g->OH * g->OW == 0) return VN_OK;
    bool wzp_known = ci_const_zp(ctx, p->in.wzp, p->has_wzp, &wzp, &one);
    if (wzp_known && !one) return VN_OK; /* scalar */
    ci_const_zp(ctx, p->in.xzp, p->has_xzp, &xzp, &one);
    vn_gemm_desc d = ci_gemm_desc(p, xzp, wzp);
    vn_status st = vn_gemm_plan_create(ctx->device, &d, &p->gemm);
    if (st != VN_OK) return st;
    p->gemm_xzp = (int32_t)xzp, p->gemm_wzp = (int32_t)wzp;
    p->in_place = ci_in_place(g);
    bool hidden = ctx->prepacked_inputs >> p->in.w & 1;
    /* A w zero point that is a graph input may differ per channel in some run,
     * which then takes the scalar loops over the raw W: so W is packed (and
     * may be exported, its raw bytes dropped) only when the GEMM is certain. */
    const void *w = ctx->input_data && !hidden && wzp_known ? ctx->input_data[p->in.w] : NULL;
    ci_workspace(p, !w && !hidden);
    if (!w) return VN_OK;
    p->packed = vn_aligned_alloc(vn_ci_packed_size(p), 64);
    if (!p->packed) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the packed W");
    return vn_gemm_pack_b(p->gemm, w, p->packed);
}

void vn_ci_plan_free(void *plan)
{
    ci_plan *p = plan;
    if (!p) return;
    if (!p->packed_borrowed) vn_aligned_free(p->packed);
    vn_gemm_plan_destroy(p->gemm);
    free(p);
}

/* ---- im2col ------------------------------------------------------------------ */

typedef struct ci_col_args {
    const vn_conv_geom *g;
    const uint8_t *x; /* one image [C][IH][IW] */
    uint8_t *cols;    /* [C*KH*KW][OH*OW] = [G][Q][P] */
    uint8_t pad;      /* x's zero point: a padded tap adds 0 */
} ci_col_args;

static void ci_col_kernel(vn_core *core, const void *args)
{
    const ci_col_args *a = args;
    const vn_conv_geom *g = a->g;
    int64_t P = g->OH * g->OW;
    for (int64_t r; vn_tile_next(core, &r);) {
        vn_conv_im2col_row(g, a->x, 1, a->pad, r, a->cols + r * P);
        core->counters.bytes_out += P;
    }
}

/* ---- finish: [G][P][Kg] sums -> y's NCHW planes ----------------------------- */

#define FIN_PIX 64  /* pixels per finish tile */
#define FIN_CH  16  /* i32: channels transposed at a time */
#define FIN_CQ  128 /* requantised: channels of one byte tile */

typedef struct ci_fin_args {
    const ci_plan *p;
    const int32_t *sums;
    const ci_channel *chan;
    const int32_t *bias; /* per channel, for the requantisation */
    const double *mult;
    void *y;   /* the whole output */
    int64_t n; /* the image */
} ci_fin_args;

/* i32 output: FIN_CH channels at a time transposed into rows, + bias. */
static void ci_fin_i32(const ci_fin_args *a, int64_t gi, int64_t p0, int64_t pl)
{
    const vn_conv_geom *g = &a->p->g;
    int64_t kg = g->K / g->G, P = g->OH * g->OW;
    const int32_t *s = a->sums + (gi * P + p0) * kg;
    int32_t t[FIN_CH][FIN_PIX];
    for (int64_t j0 = 0; j0 < kg; j0 += FIN_CH) {
        int64_t jl = vn_ops_min(FIN_CH, kg - j0);
        for (int64_t i = 0; i < pl; i++)
            for (int64_t j = 0; j < jl; j++) t[j][i] = s[i * kg + j0 + j];
        for (int64_t j = 0; j < jl; j++) {
            int64_t k = gi * kg + j0 + j;
            vn_ci_finish(a->p, &a->chan[k], a->y, (a->n * g->K + k) * P + p0, t[j], pl);
        }
    }
}

/* u8 / i8 output: each pixel's channels requantised into a byte tile
 * [pixel][channel], which is transposed into the channels' planes. */
static void ci_fin_q(const ci_fin_args *a, int64_t gi, int64_t p0, int64_t pl)
{
    const ci_plan *p = a->p;
    const vn_conv_geom *g = &p->g;
    int64_t kg = g->K / g->G, P = g->OH * g->OW;
    const int32_t *s = a->sums + (gi * P + p0) * kg;
    uint8_t t[FIN_PIX * FIN_CQ];
    bool u8 = p->ydt == VN_U8;
    double zp = a->chan[0].yzp;
    for (int64_t j0 = 0; j0 < kg; j0 += FIN_CQ) {
        int64_t jl = vn_ops_min(FIN_CQ, kg - j0), k0 = gi * kg + j0;
        for (int64_t i = 0; i < pl; i++)
            vn_ci_requant(s + i * kg + j0, a->bias + k0, a->mult + k0, true, zp, u8, t + i * jl,
                          jl);
        uint8_t *y = (uint8_t *)a->y + (a->n * g->K + k0) * P + p0;
        vn_bytes_transpose(y, P, t, jl, jl, pl, 0);
    }
}

static void ci_fin_kernel(vn_core *core, const void *args)
{
    const ci_fin_args *a = args;
    const vn_conv_geom *g = &a->p->g;
    int64_t P = g->OH * g->OW, per = vn_ops_div_up(P, FIN_PIX);
    int64_t es = a->p->ydt == VN_I32 ? 4 : 1;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t p0 = t % per * FIN_PIX;
        if (a->p->ydt == VN_I32)
            ci_fin_i32(a, t / per, p0, vn_ops_min(FIN_PIX, P - p0));
        else
            ci_fin_q(a, t / per, p0, vn_ops_min(FIN_PIX, P - p0));
        core->counters.bytes_out += FIN_PIX * (g->K / g->G) * es;
    }
}

/* ---- run ---------------------------------------------------------------------- */

/* One image: columns (unless x is A as it lies), the GEMM, the finish. */
static vn_status ci_image(const vn_op_run_ctx *ctx, const vn_gemm_plan *gp, const void *packed,
                          const ci_fin_args *fin, int64_t xzp, int64_t n)
{
    const ci_plan *p = ctx->plan;
    const vn_conv_geom *g = &p->g;
    uint8_t *ws = ctx->workspace;
    const uint8_t *x = (const uint8_t *)ctx->inputs[p->in.x].data + n * g->C * g->IH * g->IW;
    int32_t *sums = (int32_t *)(ws + p->ws_sums);
    int64_t P = g->OH * g->OW, kg = g->K / g->G;
    vn_kernel_counters c[3] = {0};
    vn_status st = VN_OK;
    const uint8_t *a = x;
    if (!p->in_place) {
        int64_t rows = g->C * g->KH * g->KW;
        ci_col_args ca = {g, x, ws, (uint8_t)xzp};
        int32_t blocks = vn_ops_block_dim(ctx->device, rows, P);
        vn_launch_desc ld = {ci_col_kernel, "vn_conv_integer_im2col", blocks, &ca, -1, rows};
        st = vn_launch(ctx->device, &ld, &c[0]);
        a = ws;
    }
    vn_gemm_args ga = {.a = a, .b = packed, .b_packed = true, .c = sums, .counters = &c[1]};
    if (st == VN_OK) st = vn_gemm_run(gp, &ga);
    ci_fin_args fa = *fin;
    fa.sums = sums, fa.n = n;
    int64_t fin_tiles = g->G * vn_ops_div_up(P, FIN_PIX);
    int32_t fin_blocks = vn_ops_block_dim(ctx->device, fin_tiles, FIN_PIX * kg);
    vn_launch_desc lf = {ci_fin_kernel, "vn_conv_integer_finish", fin_blocks, &fa, -1, fin_tiles};
    if (st == VN_OK) st = vn_launch(ctx->device, &lf, &c[2]);
    for (int i = 0; i < 3 && st == VN_OK && ctx->counters; i++)
        vn_kernel_counters_add(ctx->counters, &c[i]);
    return st;
}

vn_status vn_ci_gemm_run(const vn_op_run_ctx *ctx, int64_t xzp, int64_t wzp)
{
    const ci_plan *p = ctx->plan;
    const vn_tensor *in = ctx->inputs;
    uint8_t *ws = ctx->workspace;
    vn_gemm_plan *tmp = NULL; /* zero points that were not constants at plan time */
    const vn_gemm_plan *gp = p->gemm;
    vn_status st = VN_OK;
    if (xzp != p->gemm_xzp || wzp != p->gemm_wzp) {
        vn_gemm_desc d = ci_gemm_desc(p, xzp, wzp);
        if ((st = vn_gemm_plan_create(ctx->device, &d, &tmp)) != VN_OK) return st;
        gp = tmp;
    }
    const void *packed = p->packed;
    if (!packed) { /* W is not a constant: packed per run */
        uint8_t *at = ws + p->ws_pack + (64 - (uintptr_t)(ws + p->ws_pack) % 64) % 64;
        packed = at;
        st = vn_gemm_pack_b(gp, in[p->in.w].data, at);
    }
    ci_channel *chan = (ci_channel *)(ws + p->ws_chan);
    double *mult = (double *)(chan + p->g.K);
    int32_t *bias = (int32_t *)(mult + p->g.K);
    for (int64_t k = 0; k < p->g.K; k++) {
        chan[k] = vn_ci_channel_of(p, in, k);
        mult[k] = chan[k].m, bias[k] = (int32_t)chan[k].b;
    }
    ci_fin_args fin = {p, NULL, chan, bias, mult, ctx->outputs[0].data, 0};
    for (int64_t n = 0; n < p->g.N && st == VN_OK; n++)
        st = ci_image(ctx, gp, packed, &fin, xzp, n);
    vn_gemm_plan_destroy(tmp);
    return st;
}
