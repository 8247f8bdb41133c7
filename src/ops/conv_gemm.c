/*
 * conv_gemm.c — the NCHW convolution paths on the GEMM of [C]:
 *
 *   1x1, stride 1, no padding: per image and group Y_g = W_g (Kg x Cg) x
 *     X_g (Cg x H*W), read in place (no copy). G = 1: one GEMM batched over
 *     the images with W broadcast (stride 0); G > 1: per image, batched over
 *     the groups.
 *   im2col: per image the columns [G][Cg*KH*KW][OH*OW] (zero where a tap
 *     falls in the padding) go to the workspace, then one GEMM batched over
 *     the groups. Covers every legal attribute combination.
 *
 * Epilogue in the GEMM's fixpipe: bias per row (G = 1) or, batched over
 * groups, as C_in with beta = 1 broadcast along the row (a per-batch column
 * of Kg values, since the GEMM's bias vector is shared by all batches);
 * the residual; ReLU / Clip / Sigmoid / SiLU. LeakyRelu, HardSigmoid and
 * HardSwish, which the fixpipe lacks, run as one pass after the GEMM.
 */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kernel/core_internal.h"
#include "ops/conv.h"

static bool gemm_act(vn_conv_act act, vn_act *out)
{
    switch (act) {
    case VN_CONV_ACT_NONE:
        *out = VN_ACT_NONE;
        return true;
    case VN_CONV_ACT_RELU:
        *out = VN_ACT_RELU;
        return true;
    case VN_CONV_ACT_CLIP:
        *out = VN_ACT_CLIP;
        return true;
    case VN_CONV_ACT_SIGMOID:
        *out = VN_ACT_SIGMOID;
        return true;
    case VN_CONV_ACT_SILU:
        *out = VN_ACT_SILU;
        return true;
    default:
        *out = VN_ACT_NONE;
        return false;
    }
}

/* The GEMM of one run step: batch over images (1x1, G = 1) or over groups. */
vn_status vn_conv_gemm_plan(vn_conv_plan *p)
{
    const vn_conv_geom *g = &p->g;
    int64_t cg = g->C / g->G, kg = g->K / g->G, ohw = g->OH * g->OW;
    int64_t kc = cg * g->KH * g->KW;
    bool over_images = p->algo == VN_CONV_ALGO_GEMM_1X1 && g->G == 1;
    vn_gemm_desc d = vn_gemm_desc_default(kg, ohw, kc);
    if (over_images) {
        d.batch = g->N;
        d.stride_a = 0;
        d.stride_b = g->C * ohw;
        d.stride_c = g->K * ohw;
        d.stride_residual = g->K * ohw;
    } else {
        d.batch = g->G;
        d.stride_a = kg * kc;
        d.stride_b = p->algo == VN_CONV_ALGO_GEMM_1X1 ? cg * ohw : kc * ohw;
        d.stride_c = kg * ohw;
        d.stride_residual = kg * ohw;
    }
    if (p->has_bias && g->G == 1) {
        d.epi.bias_axis = VN_BIAS_ROW;
    } else if (p->has_bias) {
        d.epi.has_c_in = true;
        d.epi.beta = 1.0f;
        d.epi.c_in_rs = 1;
        d.epi.c_in_cs = 0;
        d.stride_c_in = kg;
    }
    d.epi.has_residual = p->has_res;
    d.epi.ldr = ohw;
    p->post_act = !gemm_act(p->epi.act, &d.epi.act);
    d.epi.clip_min = p->epi.p0;
    d.epi.clip_max = p->epi.p1;
    return vn_gemm_plan_create(p->device, &d, &p->gemm);
}

/* ---- im2col ----------------------------------------------------------------- */

typedef struct col_args {
    const vn_conv_geom *g;
    const float *x; /* one image [C][IH][IW] */
    float *col;     /* [G * Cg * KH * KW][OH * OW] */
} col_args;

/* Output columns [*lo, *hi) whose tap kw reads inside the input row:
 * ow * sw - pl + kw * dw in [0, IW). */
static void inside_cols(const vn_conv_geom *g, int64_t kw, int64_t *lo, int64_t *hi)
{
    int64_t off = g->pl - kw * g->dw;
    *lo = off > 0 ? (off + g->sw - 1) / g->sw : 0;
    *hi = g->IW + off > 0 ? (g->IW + off - 1) / g->sw + 1 : 0;
    if (*hi > g->OW) *hi = g->OW;
    if (*lo > g->OW) *lo = g->OW;
    if (*hi < *lo) *hi = *lo;
}

/* Every other byte of src (an int8 row at stride 2, e.g. a stem's), 16 at
 * a time: the even bytes of two 16-byte loads, packed. */
static int64_t gather_bytes2(uint8_t *dst, const uint8_t *src, int64_t n)
{
    int64_t i = 0;
#ifdef __SSE2__
    const __m128i lo = _mm_set1_epi16(0xff);
    for (; i + 16 <= n; i += 16) { /* reads src[2i .. 2i+31]: the last pair ends at 2i+30 */
        __m128i a = _mm_and_si128(_mm_loadu_si128((const __m128i *)(src + 2 * i)), lo);
        __m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(src + 2 * i + 16)), lo);
        _mm_storeu_si128((__m128i *)(dst + i), _mm_packus_epi16(a, b));
    }
#endif
    return i;
}

/* n elements of es bytes, `step` elements apart in src, packed into dst. */
static void gather(uint8_t *dst, const uint8_t *src, int64_t n, int64_t step, size_t es)
{
    if (es == 1 && step == 2) {
        /* whole blocks only where their last load stays inside the run */
        int64_t i = n > 16 ? gather_bytes2(dst, src, n - 1) : 0;
        for (; i < n; i++) dst[i] = src[2 * i];
        return;
    }
    if (es == 4)
        for (int64_t i = 0; i < n; i++) memcpy(dst + 4 * i, src + 4 * i * step, 4);
    else
        for (int64_t i = 0; i < n; i++) dst[i * es] = src[i * step * es];
}

void vn_conv_im2col_row(const vn_conv_geom *g, const void *x, size_t es, uint8_t pad, int64_t r,
                        void *dst)
{
    int64_t kw = r % g->KW, kh = r / g->KW % g->KH, c = r / (g->KW * g->KH), lo, hi;
    inside_cols(g, kw, &lo, &hi);
    const uint8_t *xc = (const uint8_t *)x + (size_t)(c * g->IH * g->IW) * es;
    uint8_t *d = dst;
    for (int64_t oh = 0; oh < g->OH; oh++, d += g->OW * es) {
        int64_t ih = oh * g->sh - g->pt + kh * g->dh;
        if (ih < 0 || ih >= g->IH || lo >= hi) {
            memset(d, pad, (size_t)g->OW * es);
            continue;
        }
        const uint8_t *src = xc + (size_t)(ih * g->IW - g->pl + kw * g->dw + lo * g->sw) * es;
        memset(d, pad, (size_t)lo * es);
        if (g->sw == 1)
            memcpy(d + lo * es, src, (size_t)(hi - lo) * es);
        else
            gather(d + lo * es, src, hi - lo, g->sw, es);
        memset(d + hi * es, pad, (size_t)(g->OW - hi) * es);
    }
}

static void col_kernel(vn_core *core, const void *args)
{
    const col_args *a = args;
    const vn_conv_geom *g = a->g;
    int64_t ohw = g->OH * g->OW;
    for (int64_t r; vn_tile_next(core, &r);) {
        vn_conv_im2col_row(g, a->x, 4, 0, r, a->col + r * ohw);
        core->counters.bytes_out += ohw * 4;
    }
}

/* ---- activation pass ---------------------------------------------------------- */

typedef struct act_args {
    const vn_conv_plan *p;
    float *y;
    int64_t n;
} act_args;

#define ACT_CHUNK 16384

static void act_kernel(vn_core *core, const void *args)
{
    const act_args *a = args;
    const vn_conv_table *t = vn_conv_table_get();
    for (int64_t c; vn_tile_next(core, &c);) {
        int64_t off = c * ACT_CHUNK, n = vn_ops_min(ACT_CHUNK, a->n - off);
        t->act(a->y + off, n, &a->p->epi);
        core->counters.vector_elem_ops += n;
    }
}

vn_status vn_conv_act_run(const vn_conv_plan *p, float *y, int64_t n)
{
    act_args a = {p, y, n};
    int64_t chunks = vn_ops_div_up(n, ACT_CHUNK);
    if (chunks == 0) return VN_OK;
    int32_t blocks = vn_ops_block_dim(p->device, chunks, ACT_CHUNK);
    vn_launch_desc ld = {act_kernel, "vn_conv_act", blocks, &a, -1, chunks};
    return vn_launch(p->device, &ld, NULL);
}

/* ---- run -------------------------------------------------------------------------- */

static vn_status run_image(const vn_conv_plan *p, const float *x, const float *w, const float *bias,
                           const float *res, float *y, float *col, vn_kernel_counters *counters)
{
    const vn_conv_geom *g = &p->g;
    vn_status st = VN_OK;
    const float *b = x;
    if (p->algo == VN_CONV_ALGO_IM2COL) {
        col_args ca = {g, x, col};
        int64_t rows = g->C * g->KH * g->KW;
        int32_t blocks = vn_ops_block_dim(p->device, rows, g->OH * g->OW);
        vn_launch_desc ld = {col_kernel, "vn_conv_im2col", blocks, &ca, -1, rows};
        st = vn_launch(p->device, &ld, counters);
        b = col;
    }
    vn_gemm_args ga = {.a = w, .b = b, .c = y, .residual = res};
    if (bias && g->G == 1)
        ga.bias = bias;
    else if (bias)
        ga.c_in = bias;
    vn_kernel_counters run = {0};
    ga.counters = &run;
    if (st == VN_OK) st = vn_gemm_run(p->gemm, &ga);
    if (st == VN_OK && counters) vn_kernel_counters_add(counters, &run);
    return st;
}

vn_status vn_conv_gemm_run(const vn_conv_plan *p, const float *x, const float *w, const float *bias,
                           const float *res, float *y, float *col, vn_kernel_counters *counters)
{
    const vn_conv_geom *g = &p->g;
    int64_t in_img = g->C * g->IH * g->IW, out_img = g->K * g->OH * g->OW;
    vn_status st = VN_OK;
    if (p->algo == VN_CONV_ALGO_GEMM_1X1 && g->G == 1)
        st = run_image(p, x, w, bias, res, y, col, counters); /* batched over images */
    else
        for (int64_t n = 0; n < g->N && st == VN_OK; n++)
            st = run_image(p, x + n * in_img, w, bias, res ? res + n * out_img : NULL,
                           y + n * out_img, col, counters);
    if (st == VN_OK && p->post_act) st = vn_conv_act_run(p, y, g->N * out_img);
    return st;
}
