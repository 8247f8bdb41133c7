/*
 * conv_plan.c — choosing the algorithm of a convolution and its workspace,
 * and running the plan.
 *
 * Choice (attribute "algo" may force one for tests and benchmarks: "auto",
 * "gemm", "im2col", "direct", "depthwise", "winograd"; a forced algo must be legal):
 *   depthwise (G = C = K)                            -> DEPTHWISE on NC1HWC0
 *   NCHW, 1x1, stride 1, no padding                  -> GEMM_1X1, in place
 *   3x3 stride 1 G = 1 where it wins (conv_winograd_pack.c) -> WINOGRAD on NC1HWC0
 *   G = 1, or C/G and K/G multiples of 16            -> DIRECT on NC1HWC0
 *   anything else                                    -> IM2COL (+ GEMM) on NCHW
 * The NC1HWC0 kernels on an NCHW tensor, and the NCHW GEMM paths on an
 * NC1HWC0 tensor, reorder input, residual and output through the workspace,
 * except an NCHW X of at most 16 channels, which DIRECT reads itself
 * (x_plain). Attribute x_layout = "NCHW" on an NC1HWC0 operator gives it
 * such an X (its output stays NC1HWC0): the algorithm is then DIRECT.
 *
 * Workspace layout (64-byte aligned pieces, absent when size 0):
 *   w    packed weights (DIRECT / DEPTHWISE, unless given packed)
 *   bias bias padded to K1*16 (DIRECT / DEPTHWISE)
 *   x, y, res  the reordered input, output and residual
 *   col  the im2col columns of one image (IM2COL).
 *   wino the transformed input and products (WINOGRAD).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"
#include "ops/prepack.h"

static const char *const algo_names[VN_CONV_ALGO_COUNT] = {"gemm", "im2col", "direct", "depthwise",
                                                           "winograd"};

const char *vn_conv_algo_name(vn_conv_algo algo)
{
    return (unsigned)algo < VN_CONV_ALGO_COUNT ? algo_names[algo] : "invalid";
}

static bool is_1x1(const vn_conv_geom *g)
{
    return g->KH == 1 && g->KW == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0 &&
           g->pb == 0 && g->pr == 0;
}

static bool algo_legal(const vn_conv_plan *p, vn_conv_algo a)
{
    switch (a) {
    case VN_CONV_ALGO_GEMM_1X1:
        return is_1x1(&p->g);
    case VN_CONV_ALGO_IM2COL:
        return true;
    case VN_CONV_ALGO_DIRECT:
        return vn_conv_direct_ok(&p->g);
    case VN_CONV_ALGO_DEPTHWISE:
        return vn_conv_depthwise_ok(&p->g);
    case VN_CONV_ALGO_WINOGRAD:
        return vn_conv_winograd_ok(&p->g);
    default:
        return false;
    }
}

/* With bf16 asked for, the bf16 direct kernel is as fast as bf16 Winograd
 * on small maps and needs a quarter of the weights (measured on ResNet-50's
 * 3x3 layers, 1 thread: at 14x14 2.77 vs 2.80 ms for the six 256-channel
 * layers; at 28x28 Winograd wins, 0.84 ms against 1.66 direct, at 56x56
 * 0.99 against 1.65). */
#define BF16_DIRECT_MAX_PIXELS (14 * 14)
static bool bf16_direct_wins(const vn_conv_plan *p)
{
    return p->want_bf16 && p->g.OH * p->g.OW <= BF16_DIRECT_MAX_PIXELS;
}

static vn_conv_algo choose(const vn_conv_plan *p)
{
    if (p->x_layout != p->layout) return VN_CONV_ALGO_DIRECT;
    if (vn_conv_depthwise_ok(&p->g)) return VN_CONV_ALGO_DEPTHWISE;
    if (p->layout == VN_CONV_NCHW && is_1x1(&p->g)) return VN_CONV_ALGO_GEMM_1X1;
    if (vn_conv_winograd_ok(&p->g) && vn_conv_winograd_wins(&p->g) && !bf16_direct_wins(p))
        return VN_CONV_ALGO_WINOGRAD;
    if (vn_conv_direct_ok(&p->g)) return VN_CONV_ALGO_DIRECT;
    return VN_CONV_ALGO_IM2COL;
}

static bool has_pool_attr(const vn_attrs *attrs)
{
    for (int32_t i = 0; attrs && i < attrs->count; i++)
        if (!strncmp(attrs->items[i].name, "pool_", 5)) return true;
    return false;
}

static vn_status pick_algo(const vn_op_ctx *ctx, const char *where, vn_conv_plan *p)
{
    const vn_attr *a = vn_attrs_find(ctx->attrs, "algo");
    p->algo = choose(p);
    /* a fused pool (pool_*: conv_direct.c pools its tiles) needs the direct kernel */
    if (p->algo == VN_CONV_ALGO_WINOGRAD && has_pool_attr(ctx->attrs))
        p->algo = vn_conv_direct_ok(&p->g) ? VN_CONV_ALGO_DIRECT : VN_CONV_ALGO_IM2COL;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_STRING || !a->s)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'algo' must be a string");
    if (strcmp(a->s, "auto") == 0) return VN_OK;
    for (int i = 0; i < VN_CONV_ALGO_COUNT; i++)
        if (strcmp(a->s, algo_names[i]) == 0) {
            if (!algo_legal(p, (vn_conv_algo)i) ||
                (p->x_layout != p->layout && i != VN_CONV_ALGO_DIRECT))
                return vn_error(VN_ERR_UNSUPPORTED, where,
                                "algo '%s' cannot run this convolution (group %lld, C %lld, K "
                                "%lld, kernel %lldx%lld)",
                                a->s, (long long)p->g.G, (long long)p->g.C, (long long)p->g.K,
                                (long long)p->g.KH, (long long)p->g.KW);
            p->algo = (vn_conv_algo)i;
            return VN_OK;
        }
    return vn_error(VN_ERR_INVALID_ARG, where,
                    "algo '%s' is not auto, gemm, im2col, direct, depthwise or winograd", a->s);
}

/* Bytes of the packed weights the kernel reads (bf16 direct: 2 per element). */
static size_t packed_bytes(const vn_conv_plan *p)
{
    return (size_t)vn_conv_packed_elems(&p->g, p->algo) * (p->bf16 ? 2 : sizeof(float));
}

void vn_conv_pack_f32(const vn_conv_plan *p, const float *w, float *packed)
{
    if (p->x_plain)
        vn_conv_pack_plain(&p->g, w, packed);
    else
        vn_conv_pack_blocked(&p->g, p->algo, w, packed);
}

void vn_conv_pack_for_plan(const vn_conv_plan *p, const float *w, void *packed)
{
    if (p->bf16 && p->algo == VN_CONV_ALGO_WINOGRAD)
        vn_conv_pack_winograd_bf16(&p->g, w, packed);
    else if (p->bf16)
        vn_conv_pack_direct_bf16(&p->g, w, packed);
    else
        vn_conv_pack_f32(p, w, packed);
}

/* A constant bias b padded for the kernels (vn_conv_pad_bias) into *out. */
static vn_status padded_bias(const char *where, const char *what, const vn_conv_plan *p,
                             const float *b, float **out)
{
    *out = vn_aligned_alloc((size_t)(p->K1 * VN_C0) * sizeof(float), 64);
    if (!*out) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for %s", what);
    vn_conv_pad_bias(p, b, *out);
    return VN_OK;
}

/* W (and B) constant at plan time: pack them once, into the plan. */
static vn_status pack_constants(const vn_op_ctx *ctx, const char *where, vn_conv_plan *p)
{
    bool blocked = vn_conv_algo_blocked(p->algo);
    const float *w = ctx->input_data ? ctx->input_data[1] : NULL;
    if (!blocked || !ctx->device || !w) return VN_OK;
    size_t bytes = packed_bytes(p);
    p->const_w = vn_aligned_alloc(bytes, 64);
    if (!p->const_w) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for packed weights");
    if (p->packed)
        memcpy(p->const_w, w, bytes);
    else
        vn_conv_pack_for_plan(p, w, p->const_w);
    const float *b = p->has_bias ? ctx->input_data[2] : NULL;
    return b ? padded_bias(where, "the bias", p, b, &p->const_bias) : VN_OK;
}

static size_t piece(size_t *total, int64_t elems)
{
    size_t off = *total;
    *total += (size_t)vn_ops_round_up(elems * 4, 64);
    return elems > 0 ? off : (size_t)-1;
}

bool vn_conv_plain_input_ok(const vn_conv_geom *g)
{
    return g->G == 1 && g->C <= VN_C0 && g->nsp == 2 && !is_1x1(g) &&
           g->KW * g->C <= VN_CONV_PLAIN_TAPS;
}

static void plan_workspace(vn_conv_plan *p)
{
    const vn_conv_geom *g = &p->g;
    bool blocked_algo = vn_conv_algo_blocked(p->algo);
    bool reorder = blocked_algo != (p->layout == VN_CONV_NC1HWC0);
    bool reorder_x = blocked_algo != (p->x_layout == VN_CONV_NC1HWC0) && !p->x_plain;
    int64_t in_b = g->N * p->C1 * g->IH * g->IW * VN_C0,
            out_b = g->N * p->K1 * g->OH * g->OW * VN_C0;
    int64_t in_p = g->N * g->C * g->IH * g->IW, out_p = g->N * g->K * g->OH * g->OW;
    size_t t = 0;
    bool need_w = blocked_algo && !p->packed && !p->const_w;
    p->ws_w = piece(&t, need_w ? (int64_t)(packed_bytes(p) + 3) / 4 : 0);
    p->ws_bias = piece(&t, blocked_algo && p->has_bias && !p->const_bias ? p->K1 * VN_C0 : 0);
    p->ws_x = piece(&t, reorder_x ? (blocked_algo ? in_b : in_p) : 0);
    p->ws_y = piece(&t, reorder ? (blocked_algo ? out_b : out_p) : 0);
    p->ws_res = piece(&t, reorder && p->has_res ? (blocked_algo ? out_b : out_p) : 0);
    p->ws_col =
        piece(&t, p->algo == VN_CONV_ALGO_IM2COL ? g->C * g->KH * g->KW * g->OH * g->OW : 0);
    p->ws_wino = piece(&t, p->algo == VN_CONV_ALGO_WINOGRAD ? vn_conv_winograd_ws_elems(g) : 0);
    /* a fused pool whose tiles do not fit L1: the whole conv map, pooled after
     * (the fusion was checked without a device, so the final plan must run) */
    bool unfit = (p->pooled && !vn_conv_pool_fits(p)) || (p->gap && !vn_conv_gap_fits(p));
    p->ws_pool = piece(&t, p->device && unfit ? out_b : 0);
    /* a fused depthwise conv: its weights packed per run unless constant, and
     * the pointwise map when one band's rows do not fit L1 */
    bool dw = p->dw_fused;
    p->ws_dw_w = piece(&t, dw && !p->dw_const_w ? p->K1 * p->dw.KH * p->dw.KW * VN_C0 : 0);
    p->ws_dw_bias = piece(&t, dw && p->dw_has_bias && !p->dw_const_bias ? p->K1 * VN_C0 : 0);
    p->ws_dw_map = piece(&t, dw && p->device && !vn_conv_dw_fits(p) ? out_b : 0);
    p->ws_total = t;
}

static vn_status check_optional(const vn_op_ctx *ctx, const char *where, vn_conv_plan *p,
                                bool fused)
{
    char a[128], b[128];
    const vn_tensor_desc *bias = ctx->num_inputs > 2 ? &ctx->inputs[2] : NULL;
    p->has_bias = bias && bias->rank >= 0;
    if (p->has_bias && (bias->rank != 1 || bias->dims[0] != p->g.K || bias->dtype != VN_F32))
        return vn_error(VN_ERR_SHAPE, where, "B %s must be f32[%lld] (one per output channel)",
                        vn_desc_format(bias, a, sizeof a), (long long)p->g.K);
    const vn_tensor_desc *res = fused && ctx->num_inputs > 3 ? &ctx->inputs[3] : NULL;
    p->has_res = res && res->rank >= 0;
    vn_tensor_desc out = vn_conv_out_desc(&p->g, p->layout);
    bool same = p->has_res && res->rank == out.rank && res->dtype == VN_F32;
    for (int32_t d = 0; same && d < out.rank; d++) same = res->dims[d] == out.dims[d];
    if (p->has_res && !same)
        return vn_error(VN_ERR_SHAPE, where, "residual %s must have the output's shape %s",
                        vn_desc_format(res, a, sizeof a), vn_desc_format(&out, b, sizeof b));
    return VN_OK;
}

static vn_status check_packed_w(const vn_op_ctx *ctx, const char *where, const vn_conv_plan *p)
{
    char a[128];
    const vn_tensor_desc *w = &ctx->inputs[1];
    int64_t want = vn_conv_packed_elems(&p->g, p->algo);
    if (w->rank != 1 || w->dims[0] != want)
        return vn_error(VN_ERR_SHAPE, where,
                        "packed W %s must be f32[%lld] (the %s layout, see vn_conv_pack_weights)",
                        vn_desc_format(w, a, sizeof a), (long long)want,
                        vn_conv_algo_name(p->algo));
    return VN_OK;
}

/* Attribute x_layout: "NCHW" only under an NC1HWC0 operator (else X has the
 * operator's layout). */
static vn_status read_x_layout(const vn_op_ctx *ctx, const char *where, vn_conv_plan *p)
{
    static const char *const names[] = {"NCHW", "NC1HWC0"}; /* vn_conv_layout order */
    int32_t i = -1;
    vn_status st = vn_ops_attr_choice(where, ctx->attrs, "x_layout", names, 2, &i);
    p->x_layout = i < 0 ? p->layout : (vn_conv_layout)i;
    if (st == VN_OK && i >= 0 && p->layout != VN_CONV_NC1HWC0)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "x_layout is for the NC1HWC0 operators (this one reads NCHW already)");
    return st;
}

/* Attribute compute = "bf16": DIRECT multiplies in bf16 where the CPU has a
 * bf16 dot product (else, and for the other algorithms, f32 as before: the
 * graph engine's --precision is a request, not a guarantee). Weights given
 * packed (packed = 1) are f32, so they stay f32. */
static vn_status read_compute(const vn_op_ctx *ctx, const char *where, vn_conv_plan *p)
{
    bool bf16 = false;
    vn_status st = vn_ops_compute_bf16(where, ctx->attrs, &bf16);
    p->want_bf16 = bf16 && p->device && vn_conv_bf16_available();
    return st;
}

static void plan_compute(vn_conv_plan *p)
{
    bool direct = p->algo == VN_CONV_ALGO_DIRECT && !p->x_plain && vn_conv_bf16_fits(p);
    bool wino = p->algo == VN_CONV_ALGO_WINOGRAD && vn_conv_winograd_bf16_fits(p);
    p->bf16 = p->want_bf16 && !p->packed && (direct || wino);
}

/* DIRECT on an NCHW X it can read itself; an NC1HWC0 operator given an
 * NCHW X must be able to. */
static vn_status plan_plain_input(const char *where, vn_conv_plan *p)
{
    bool nchw_x = p->x_layout == VN_CONV_NCHW;
    p->x_plain = nchw_x && p->algo == VN_CONV_ALGO_DIRECT && vn_conv_plain_input_ok(&p->g);
    if (p->x_plain || p->x_layout == p->layout) return VN_OK;
    return vn_error(VN_ERR_UNSUPPORTED, where,
                    "x_layout NCHW needs group 1, at most %d input channels (X has %lld), a "
                    "kernel other than a plain 1x1 and KW x C at most %d",
                    VN_C0, (long long)p->g.C, VN_CONV_PLAIN_TAPS);
}

/* The attributes named prefix + one of known[] (the prefix dropped) as a
 * list of their own in items (n_known of them at most): a fused operator's
 * attributes (pool_, dw_). An unknown or repeated one is an error. */
static vn_status prefixed_attrs(const vn_op_ctx *ctx, const char *where, const char *prefix,
                                const char *const *known, int32_t n_known, vn_attr *items,
                                vn_attrs *view)
{
    size_t len = strlen(prefix);
    *view = (vn_attrs){items, 0};
    for (int32_t i = 0; ctx->attrs && i < ctx->attrs->count; i++) {
        const vn_attr *a = &ctx->attrs->items[i];
        if (strncmp(a->name, prefix, len) != 0) continue;
        int32_t k = 0;
        while (k < n_known && strcmp(known[k], a->name + len) != 0) k++;
        bool again = k < n_known && vn_attrs_find(view, known[k]) != NULL;
        if (k == n_known || again)
            return vn_error(VN_ERR_INVALID_ARG, where,
                            "attribute '%s' is not one the fused operator takes with the %s "
                            "prefix (or is given twice)",
                            a->name, prefix);
        items[view->count] = *a;
        items[view->count++].name = a->name + len;
    }
    return VN_OK;
}

/* pool_global = 1 (alone): a GlobalAveragePool of the conv's map. */
static vn_status read_global_pool(const char *where, const vn_attrs *view, vn_conv_plan *p)
{
    const vn_attr *a = vn_attrs_find(view, "global");
    if (view->count != 1 || a->type != VN_ATTR_INT || a->i != 1)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "pool_global (a fused GlobalAveragePool) must be the int 1 and the only "
                        "pool_ attribute");
    if (p->layout != VN_CONV_NC1HWC0 || p->algo != VN_CONV_ALGO_DIRECT || p->g.nsp != 2)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "pool_global (a fused GlobalAveragePool) needs a 2-D NC1HWC0 direct "
                        "convolution");
    /* the precision pass marks the fused node after fusion; gap tiles are
     * f32 (a classifier's last conv is a small part of a model) */
    p->bf16 = false;
    p->gap = true;
    return VN_OK;
}

/* The pool_* attributes, if any, as MaxPool's own (prefix dropped) over the
 * conv's output map, or pool_global; a MaxPool-pooled plan must be a direct
 * f32 conv of a plain input without residual (the only one conv_direct.c
 * pools). */
static vn_status read_pool(const vn_op_ctx *ctx, const char *where, vn_conv_plan *p)
{
    static const char *const known[] = {"kernel_shape", "strides",  "pads",          "dilations",
                                        "ceil_mode",    "auto_pad", "storage_order", "global"};
    enum { KNOWN = sizeof known / sizeof known[0] };
    vn_attr items[KNOWN];
    vn_attrs view;
    vn_status st = prefixed_attrs(ctx, where, "pool_", known, KNOWN, items, &view);
    if (st != VN_OK || view.count == 0) return st;
    if (vn_attrs_find(&view, "global")) return read_global_pool(where, &view, p);
    if (p->layout != VN_CONV_NC1HWC0 || !p->x_plain || p->has_res || p->bf16 || p->g.nsp != 2)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "pool_ attributes (a fused MaxPool) need an NC1HWC0 direct f32 convolution "
                        "of a plain input (x_layout NCHW) without residual");
    int64_t in[2] = {p->g.OH, p->g.OW};
    char pool_where[VN_OPS_WHERE_MAX + 48];
    snprintf(pool_where, sizeof pool_where, "%s (fused MaxPool, pool_ attributes)", where);
    p->pooled = true;
    return vn_pool_geom_make(pool_where, &view, VN_POOL_MAX, 2, in, &p->pool);
}

/* A plan the depthwise step of conv_dw_fused.c can follow: an f32 direct
 * 1x1, stride 1, unpadded, group 1, on NC1HWC0 without residual or pool. */
static bool dw_fusable(const vn_conv_plan *p)
{
    const vn_conv_geom *g = &p->g;
    return p->layout == VN_CONV_NC1HWC0 && p->x_layout == VN_CONV_NC1HWC0 &&
           p->algo == VN_CONV_ALGO_DIRECT && !p->bf16 && !p->has_res && !p->pooled && !p->gap &&
           g->nsp == 2 && g->G == 1 && is_1x1(g);
}

/* The dw_* attributes, if any: the depthwise conv fused after this one,
 * over its output map, with W = input 4 and B = input 5. */
static vn_status read_dw(const vn_op_ctx *ctx, const char *where, vn_conv_plan *p)
{
    static const char *const known[] = {
        "kernel_shape", "strides",  "pads",       "dilations",
        "group",        "auto_pad", "activation", "activation_params"};
    enum { KNOWN = sizeof known / sizeof known[0] };
    vn_attr items[KNOWN];
    vn_attrs view;
    vn_status st = prefixed_attrs(ctx, where, "dw_", known, KNOWN, items, &view);
    bool given = ctx->num_inputs > 4 && ctx->inputs[4].rank >= 0;
    if (st != VN_OK || (view.count == 0 && !given)) return st;
    char dw_where[VN_OPS_WHERE_MAX + 48];
    snprintf(dw_where, sizeof dw_where, "%s (fused depthwise conv, dw_ attributes)", where);
    /* the fused kernels are f32: a bf16 request (--precision bf16 marks
     * every conv after the fusions) leaves this pair in f32 */
    p->bf16 = false;
    if (!given || !dw_fusable(p))
        return vn_error(VN_ERR_UNSUPPORTED, dw_where,
                        "a fused depthwise conv needs its W as input 4 and an f32 direct 1x1 "
                        "(stride 1, no pads, group 1) NC1HWC0 convolution without residual");
    vn_tensor_desc ins[3] = {vn_conv_out_desc(&p->g, VN_CONV_NC1HWC0), ctx->inputs[4]};
    ins[2] = ctx->num_inputs > 5 ? ctx->inputs[5] : (vn_tensor_desc){.rank = -1};
    vn_op_ctx c = *ctx;
    c.inputs = ins, c.num_inputs = 3, c.attrs = &view;
    st = vn_conv_geom_parse(&c, dw_where, VN_CONV_NC1HWC0, false, &p->dw);
    if (st == VN_OK) st = vn_conv_epi_parse(&c, dw_where, &p->dw_epi);
    if (st != VN_OK) return st;
    if (!vn_conv_depthwise_ok(&p->dw) || p->dw.nsp != 2 || p->dw.C != p->g.K)
        return vn_error(VN_ERR_UNSUPPORTED, dw_where,
                        "a 2-D depthwise conv (group = channels = outputs) of the pointwise conv's "
                        "%lld outputs is needed; this is group %lld over %lld channels into %lld",
                        (long long)p->g.K, (long long)p->dw.G, (long long)p->dw.C,
                        (long long)p->dw.K);
    p->dw_has_bias = ins[2].rank >= 0;
    if (p->dw_has_bias && (ins[2].rank != 1 || ins[2].dims[0] != p->dw.K || ins[2].dtype != VN_F32))
        return vn_error(VN_ERR_SHAPE, dw_where, "its B must be f32[%lld]", (long long)p->dw.K);
    p->dw_fused = true;
    return VN_OK;
}

/* dw_fused: the depthwise W (and B) constant at plan time, packed once. */
static vn_status pack_dw_constants(const vn_op_ctx *ctx, const char *where, vn_conv_plan *p)
{
    const float *w = ctx->input_data ? ctx->input_data[4] : NULL;
    if (!p->dw_fused || !w || !ctx->device) return VN_OK; /* as pack_constants */
    size_t wb = (size_t)vn_conv_packed_elems(&p->dw, VN_CONV_ALGO_DEPTHWISE) * sizeof(float);
    p->dw_const_w = vn_aligned_alloc(wb, 64);
    if (!p->dw_const_w)
        return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the depthwise weights");
    vn_conv_pack_depthwise(&p->dw, w, p->dw_const_w);
    const float *b = p->dw_has_bias ? ctx->input_data[5] : NULL;
    return b ? padded_bias(where, "the depthwise bias", p, b, &p->dw_const_bias) : VN_OK;
}

vn_tensor_desc vn_conv_plan_out_desc(const vn_conv_plan *p)
{
    vn_tensor_desc d = vn_conv_out_desc(&p->g, p->layout);
    if (p->dw_fused) return vn_conv_out_desc(&p->dw, p->layout);
    if (p->pooled) /* NC1HWC0: [N, K1, H, W, 16]; the pool's dims are its last two */
        d.dims[2] = p->pool.out[VN_POOL_DIMS - 2], d.dims[3] = p->pool.out[VN_POOL_DIMS - 1];
    if (p->gap) d.dims[2] = d.dims[3] = 1;
    return d;
}

vn_status vn_conv_plan_build(const vn_op_ctx *ctx, const char *where, vn_conv_layout layout,
                             bool fused, vn_conv_plan **out)
{
    int64_t packed = 0;
    *out = NULL;
    if (vn_attrs_int(ctx->attrs, "packed", 0, &packed) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'packed' must be an int");
    vn_conv_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    p->layout = layout;
    p->packed = packed != 0;
    p->device = ctx->device;
    snprintf(p->where, sizeof p->where, "%s", where);
    vn_status st = read_x_layout(ctx, where, p);
    if (st == VN_OK) st = vn_conv_geom_parse(ctx, where, p->x_layout, p->packed, &p->g);
    if (st == VN_OK) st = check_optional(ctx, where, p, fused);
    if (st == VN_OK && fused) st = vn_conv_epi_parse(ctx, where, &p->epi);
    if (st == VN_OK) {
        p->C1 = vn_ops_div_up(p->g.C, VN_C0);
        p->K1 = vn_ops_div_up(p->g.K, VN_C0);
        st = read_compute(ctx, where, p);
    }
    if (st == VN_OK) {
        st = pick_algo(ctx, where, p);
    }
    if (st == VN_OK) st = plan_plain_input(where, p);
    if (st == VN_OK) plan_compute(p);
    if (st == VN_OK) st = read_pool(ctx, where, p);
    if (st == VN_OK) st = read_dw(ctx, where, p);
    if (st == VN_OK && p->packed) st = check_packed_w(ctx, where, p);
    if (st == VN_OK && (p->algo == VN_CONV_ALGO_GEMM_1X1 || p->algo == VN_CONV_ALGO_IM2COL) &&
        p->device)
        st = vn_conv_gemm_plan(p);
    if (st == VN_OK) st = pack_constants(ctx, where, p);
    if (st == VN_OK) st = pack_dw_constants(ctx, where, p);
    if (st != VN_OK) {
        vn_conv_plan_free(p);
        return st;
    }
    plan_workspace(p);
    *out = p;
    return VN_OK;
}

void vn_conv_plan_free(vn_conv_plan *p)
{
    if (!p) return;
    vn_gemm_plan_destroy(p->gemm);
    if (!p->borrowed) {
        vn_aligned_free(p->const_w);
        vn_aligned_free(p->const_bias);
    }
    if (!p->dw_borrowed) {
        vn_aligned_free(p->dw_const_w);
        vn_aligned_free(p->dw_const_bias);
    }
    free(p);
}

/* ---- pre-packed constants -------------------------------------------------------- */

#define BIT_W       (1u << 1)
#define BIT_BIAS    (1u << 2)
#define BIT_DW_W    (1u << 4)
#define BIT_DW_BIAS (1u << 5)

/* The packed blobs' layout tags; a plain input's weights are dense
 * (vn_conv_pack_plain), so they carry a tag of their own: an offline model
 * packed for the other layout is refused at load, not misread. */
static void blob_layout(const vn_conv_plan *p, uint32_t bit, char *buf, size_t size)
{
    if (bit == BIT_DW_W || bit == BIT_DW_BIAS) {
        snprintf(buf, size, "conv.dw_%s.f32.c%d", bit == BIT_DW_W ? "depthwise" : "bias", VN_C0);
        return;
    }
    bool bias = bit == BIT_BIAS;
    /* Winograd's weights: the tile size (vn_conv_winograd_variant) decides the points */
    bool f2 =
        !bias && p->algo == VN_CONV_ALGO_WINOGRAD && vn_conv_winograd_variant(&p->g) == VN_WINO_F2;
    snprintf(buf, size, "conv.%s%s%s.%s.c%d", bias ? "bias" : vn_conv_algo_name(p->algo),
             f2 ? "_f2" : "", p->x_plain && !bias ? "_plain" : "",
             p->bf16 && !bias ? "bf16" : "f32", VN_C0);
}

/* A plan's constants that go to blobs, in blob order, with their sizes. */
typedef struct plan_blob {
    uint32_t bit;
    float **data;
    size_t size;
} plan_blob;

static int32_t plan_blobs(vn_conv_plan *p, plan_blob out[VN_OP_MAX_BLOBS])
{
    size_t bias = (size_t)(p->K1 * VN_C0) * sizeof(float);
    size_t dw = (size_t)vn_conv_packed_elems(&p->dw, VN_CONV_ALGO_DEPTHWISE) * sizeof(float);
    int32_t n = 0;
    out[n++] = (plan_blob){BIT_W, &p->const_w, packed_bytes(p)};
    out[n++] = (plan_blob){BIT_BIAS, &p->const_bias, bias};
    if (p->dw_fused) out[n++] = (plan_blob){BIT_DW_W, &p->dw_const_w, dw};
    if (p->dw_fused) out[n++] = (plan_blob){BIT_DW_BIAS, &p->dw_const_bias, bias};
    return n;
}

int32_t vn_conv_plan_export(const vn_conv_plan *p, vn_op_blob blobs[VN_OP_MAX_BLOBS],
                            uint64_t *consumed)
{
    *consumed = 0;
    if (!p || !p->const_w) return 0;
    plan_blob pb[VN_OP_MAX_BLOBS];
    int32_t count = plan_blobs((vn_conv_plan *)p, pb), n = 0;
    for (int32_t i = 0; i < count; i++) {
        if (!*pb[i].data) continue;
        memset(&blobs[n], 0, sizeof blobs[n]);
        blobs[n].data = *pb[i].data;
        blobs[n].size = pb[i].size;
        blob_layout(p, pb[i].bit, blobs[n].layout, sizeof blobs[n].layout);
        n++;
        *consumed |= pb[i].bit;
    }
    return n;
}

vn_status vn_conv_plan_adopt(vn_conv_plan *p, const vn_op_blob *blobs, int32_t num_blobs,
                             uint64_t consumed)
{
    plan_blob pb[VN_OP_MAX_BLOBS];
    int32_t count = plan_blobs(p, pb), want = 0;
    uint64_t known = 0;
    for (int32_t i = 0; i < count; i++) {
        known |= pb[i].bit;
        want += (consumed & pb[i].bit) != 0;
    }
    bool bias_ok = !(consumed & BIT_BIAS) || p->has_bias;
    /* a depthwise B blob comes with its W blob (dw_borrowed covers both) */
    bool dw_bias_ok = !(consumed & BIT_DW_BIAS) || (p->dw_has_bias && (consumed & BIT_DW_W));
    if (!vn_conv_algo_blocked(p->algo) || !(consumed & BIT_W) || (consumed & ~known) || !bias_ok ||
        !dw_bias_ok || num_blobs != want)
        return vn_error(VN_ERR_FORMAT, p->where,
                        "%d packed blobs consuming inputs 0x%llx do not fit the %s algorithm "
                        "(W packed for a blocked algorithm, then B if constant, then a fused "
                        "depthwise conv's W and B)",
                        (int)num_blobs, (unsigned long long)consumed, vn_conv_algo_name(p->algo));
    char lay[48];
    for (int32_t i = 0, k = 0; i < count; i++) {
        if (!(consumed & pb[i].bit)) continue;
        blob_layout(p, pb[i].bit, lay, sizeof lay);
        vn_status st = vn_prepack_check_blob(p->where, &blobs[k], k, pb[i].size, lay);
        if (st != VN_OK) return st;
        k++;
    }
    /* normally none: the plan was built with these inputs hidden */
    if (!p->borrowed) {
        vn_aligned_free(p->const_w);
        vn_aligned_free(p->const_bias);
    }
    if (consumed & BIT_DW_W) { /* B without a blob is packed per run, from input 5 */
        if (!p->dw_borrowed) {
            vn_aligned_free(p->dw_const_w);
            vn_aligned_free(p->dw_const_bias);
        }
        p->dw_const_w = p->dw_const_bias = NULL;
    }
    p->borrowed = true;
    p->const_w = p->const_bias = NULL;
    for (int32_t i = 0, k = 0; i < count; i++) /* read-only: runs only read them */
        if (consumed & pb[i].bit) *pb[i].data = (float *)blobs[k++].data;
    p->dw_borrowed = (consumed & BIT_DW_W) != 0;
    plan_workspace(p);
    return VN_OK;
}
