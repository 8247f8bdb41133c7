/*
 * conv_attrs.c — ONNX Conv attributes and shapes: kernel_shape, pads,
 * auto_pad (NOTSET, SAME_UPPER, SAME_LOWER, VALID), strides, dilations,
 * group, for NCHW and NC1HWC0 inputs, 1-D and 2-D; and the activation
 * attributes of the Fused operators.
 *
 * Output extent per spatial dim (ONNX): with padded input I + b + e and
 * effective kernel (k - 1) * d + 1, O = floor((I + b + e - ((k-1)*d+1)) / s) + 1;
 * SAME_*: O = ceil(I / s) and the total pad (O-1)*s + (k-1)*d + 1 - I is split
 * with the odd element at the end (UPPER) or the beginning (LOWER).
 */
#include <stdio.h>
#include <string.h>

#include "ops/conv.h"

#define MAX_SP 2

typedef struct sp_attrs {
    int64_t k[MAX_SP], s[MAX_SP], d[MAX_SP], pb[MAX_SP], pe[MAX_SP];
} sp_attrs;

static vn_status get_ints(const vn_op_ctx *ctx, const char *where, const char *name, int32_t count,
                          int64_t fallback, int64_t *out, bool *present)
{
    const vn_attr *a = vn_attrs_find(ctx->attrs, name);
    if (present) *present = a != NULL;
    for (int32_t i = 0; i < count; i++) out[i] = fallback;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_INTS)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' must be ints", name);
    if (a->count != count)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' has %d values, expected %d",
                        name, (int)a->count, (int)count);
    for (int32_t i = 0; i < count; i++) out[i] = a->ints[i];
    return VN_OK;
}

/* Spatial rank from X's rank; X and W checked for rank and dtype. */
static vn_status check_ranks(const char *where, vn_conv_layout layout, const vn_tensor_desc *x,
                             const vn_tensor_desc *w, int32_t *nsp)
{
    char a[128], b[128];
    int32_t extra = layout == VN_CONV_NC1HWC0 ? 3 : 2;
    *nsp = x->rank - extra;
    if (*nsp == 3)
        return vn_error(VN_ERR_UNSUPPORTED, where, "3-D convolution (X %s) is not implemented",
                        vn_desc_format(x, a, sizeof a));
    if (*nsp < 1 || *nsp > MAX_SP)
        return vn_error(VN_ERR_SHAPE, where, "X %s must have rank %d or %d (%s)",
                        vn_desc_format(x, a, sizeof a), extra + 1, extra + 2,
                        layout == VN_CONV_NC1HWC0 ? "N, C1, [H,] W, 16" : "N, C, [H,] W");
    if (layout == VN_CONV_NC1HWC0 && x->dims[x->rank - 1] != VN_C0)
        return vn_error(VN_ERR_SHAPE, where, "X %s is not NC1HWC0: the last dim must be %d",
                        vn_desc_format(x, a, sizeof a), VN_C0);
    if (w->rank != *nsp + 2)
        return vn_error(VN_ERR_SHAPE, where, "W %s must have rank %d for X %s",
                        vn_desc_format(w, a, sizeof a), *nsp + 2, vn_desc_format(x, b, sizeof b));
    if (x->dtype != VN_F32 || w->dtype != VN_F32)
        return vn_error(VN_ERR_DTYPE, where, "X %s and W %s must be f32",
                        vn_desc_format(x, a, sizeof a), vn_desc_format(w, b, sizeof b));
    return VN_OK;
}

/* Channels: C from X (NCHW) or from W and the group (NC1HWC0, whose C1 must match). */
static vn_status check_channels(const char *where, vn_conv_layout layout, const vn_tensor_desc *x,
                                const vn_tensor_desc *w, vn_conv_geom *g)
{
    char a[128], b[128];
    vn_desc_format(x, a, sizeof a);
    vn_desc_format(w, b, sizeof b);
    if (g->G < 1)
        return vn_error(VN_ERR_INVALID_ARG, where, "group %lld must be >= 1", (long long)g->G);
    g->N = x->dims[0];
    g->K = w->dims[0];
    g->C = layout == VN_CONV_NCHW ? x->dims[1] : w->dims[1] * g->G;
    if (layout == VN_CONV_NC1HWC0 && vn_ops_div_up(g->C, VN_C0) != x->dims[1])
        return vn_error(VN_ERR_SHAPE, where,
                        "channel mismatch: W %s with group %lld has %lld input channels, X %s "
                        "holds %lld channel blocks of %d",
                        b, (long long)g->G, (long long)g->C, a, (long long)x->dims[1], VN_C0);
    if (g->C % g->G != 0 || g->K % g->G != 0)
        return vn_error(
            VN_ERR_INVALID_ARG, where,
            "bad group %lld: input channels %lld (X %s) and output channels %lld (W %s) "
            "must both be multiples of it",
            (long long)g->G, (long long)g->C, a, (long long)g->K, b);
    if (w->dims[1] * g->G != g->C)
        return vn_error(VN_ERR_SHAPE, where,
                        "channel mismatch: X %s has %lld channels, W %s expects %lld x group %lld "
                        "= %lld",
                        a, (long long)g->C, b, (long long)w->dims[1], (long long)g->G,
                        (long long)(w->dims[1] * g->G));
    if (g->K < 1 || g->C < 1)
        return vn_error(VN_ERR_SHAPE, where, "X %s and W %s need at least one channel", a, b);
    return VN_OK;
}

static vn_status read_spatial(const vn_op_ctx *ctx, const char *where, int32_t nsp,
                              const vn_tensor_desc *w, sp_attrs *s, bool *explicit_pads)
{
    bool has_k;
    int64_t pads[2 * MAX_SP];
    vn_status st = get_ints(ctx, where, "kernel_shape", nsp, 0, s->k, &has_k);
    if (st == VN_OK) st = get_ints(ctx, where, "strides", nsp, 1, s->s, NULL);
    if (st == VN_OK) st = get_ints(ctx, where, "dilations", nsp, 1, s->d, NULL);
    if (st == VN_OK) st = get_ints(ctx, where, "pads", 2 * nsp, 0, pads, explicit_pads);
    if (st != VN_OK) return st;
    for (int32_t i = 0; i < nsp; i++) {
        if (has_k && s->k[i] != w->dims[2 + i]) {
            char b[128];
            return vn_error(VN_ERR_SHAPE, where, "kernel_shape[%d] = %lld does not match W %s",
                            (int)i, (long long)s->k[i], vn_desc_format(w, b, sizeof b));
        }
        s->k[i] = w->dims[2 + i];
        s->pb[i] = pads[i];
        s->pe[i] = pads[nsp + i];
        if (s->k[i] < 1 || s->s[i] < 1 || s->d[i] < 1 || s->pb[i] < 0 || s->pe[i] < 0)
            return vn_error(VN_ERR_INVALID_ARG, where,
                            "spatial dim %d: kernel %lld, stride %lld, dilation %lld must be >= 1 "
                            "and pads %lld, %lld >= 0",
                            (int)i, (long long)s->k[i], (long long)s->s[i], (long long)s->d[i],
                            (long long)s->pb[i], (long long)s->pe[i]);
    }
    return VN_OK;
}

/* Apply auto_pad to dim i of input extent `in`; the output extent in *out. */
static vn_status resolve_dim(const char *where, const char *mode, int32_t i, int64_t in,
                             sp_attrs *s, int64_t *out, const vn_tensor_desc *x)
{
    int64_t ek = (s->k[i] - 1) * s->d[i] + 1;
    if (strcmp(mode, "SAME_UPPER") == 0 || strcmp(mode, "SAME_LOWER") == 0) {
        int64_t o = vn_ops_div_up(in, s->s[i]);
        int64_t total = vn_ops_max(0, (o - 1) * s->s[i] + ek - in);
        bool upper = mode[5] == 'U';
        s->pb[i] = upper ? total / 2 : total - total / 2;
        s->pe[i] = total - s->pb[i];
    } else if (strcmp(mode, "VALID") == 0) {
        s->pb[i] = s->pe[i] = 0;
    } else if (strcmp(mode, "NOTSET") != 0) {
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", mode);
    }
    int64_t padded = in + s->pb[i] + s->pe[i];
    if (ek > padded) {
        char a[128];
        return vn_error(VN_ERR_SHAPE, where,
                        "kernel bigger than the padded input: spatial dim %d of X %s is %lld "
                        "(%lld with pads %lld + %lld), the dilated kernel spans %lld",
                        (int)i, vn_desc_format(x, a, sizeof a), (long long)in, (long long)padded,
                        (long long)s->pb[i], (long long)s->pe[i], (long long)ek);
    }
    *out = (padded - ek) / s->s[i] + 1;
    return VN_OK;
}

static vn_status get_group_and_pad(const vn_op_ctx *ctx, const char *where, int64_t *group,
                                   const char **mode)
{
    if (vn_attrs_int(ctx->attrs, "group", 1, group) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'group' must be an int");
    const vn_attr *ap = vn_attrs_find(ctx->attrs, "auto_pad");
    *mode = "NOTSET";
    if (ap) {
        if (ap->type != VN_ATTR_STRING || !ap->s)
            return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'auto_pad' must be a string");
        *mode = ap->s;
    }
    return VN_OK;
}

vn_status vn_conv_geom_parse(const vn_op_ctx *ctx, const char *where, vn_conv_layout layout,
                             bool packed, vn_conv_geom *g)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *w = &ctx->inputs[1];
    vn_tensor_desc wshape;
    memset(g, 0, sizeof *g);
    if (packed) { /* W is packed; its ONNX shape comes from the attribute weight_shape */
        const vn_attr *a = vn_attrs_find(ctx->attrs, "weight_shape");
        if (!a || a->type != VN_ATTR_INTS || a->count < 3 || a->count > 4)
            return vn_error(VN_ERR_INVALID_ARG, where,
                            "packed = 1 needs the ints attribute 'weight_shape' (W's ONNX shape)");
        memset(&wshape, 0, sizeof wshape);
        wshape.dtype = w->dtype;
        wshape.rank = a->count;
        for (int32_t i = 0; i < a->count; i++) wshape.dims[i] = a->ints[i];
        w = &wshape;
    }
    int32_t nsp = 0;
    const char *mode = NULL;
    vn_status st = check_ranks(where, layout, x, w, &nsp);
    if (st == VN_OK) st = get_group_and_pad(ctx, where, &g->G, &mode);
    if (st == VN_OK) st = check_channels(where, layout, x, w, g);
    sp_attrs s;
    bool explicit_pads = false;
    if (st == VN_OK) st = read_spatial(ctx, where, nsp, w, &s, &explicit_pads);
    if (st != VN_OK) return st;
    if (explicit_pads && strcmp(mode, "NOTSET") != 0)
        return vn_error(VN_ERR_INVALID_ARG, where, "pads and auto_pad '%s' cannot both be given",
                        mode);
    int64_t outs[MAX_SP];
    for (int32_t i = 0; i < nsp; i++) {
        st = resolve_dim(where, mode, i, x->dims[2 + i], &s, &outs[i], x);
        if (st != VN_OK) return st;
    }
    g->nsp = nsp;
    int32_t h = nsp == 2 ? 0 : -1, wd = nsp - 1; /* index of H (none for 1-D) and W */
    g->IH = h < 0 ? 1 : x->dims[2];
    g->IW = x->dims[2 + wd];
    g->KH = h < 0 ? 1 : s.k[0];
    g->KW = s.k[wd];
    g->OH = h < 0 ? 1 : outs[0];
    g->OW = outs[wd];
    g->sh = h < 0 ? 1 : s.s[0];
    g->sw = s.s[wd];
    g->dh = h < 0 ? 1 : s.d[0];
    g->dw = s.d[wd];
    g->pt = h < 0 ? 0 : s.pb[0];
    g->pb = h < 0 ? 0 : s.pe[0];
    g->pl = s.pb[wd];
    g->pr = s.pe[wd];
    return VN_OK;
}

vn_tensor_desc vn_conv_out_desc(const vn_conv_geom *g, vn_conv_layout layout)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = VN_F32;
    int32_t r = 0;
    d.dims[r++] = g->N;
    d.dims[r++] = layout == VN_CONV_NCHW ? g->K : vn_ops_div_up(g->K, VN_C0);
    if (g->nsp == 2) d.dims[r++] = g->OH;
    d.dims[r++] = g->OW;
    if (layout == VN_CONV_NC1HWC0) d.dims[r++] = VN_C0;
    d.rank = r;
    return d;
}

static const struct {
    const char *name;
    vn_conv_act act;
    int32_t nparams;
    float p0, p1; /* defaults */
} acts[] = {
    {"", VN_CONV_ACT_NONE, 0, 0, 0},
    {"Relu", VN_CONV_ACT_RELU, 0, 0, 0},
    {"Clip", VN_CONV_ACT_CLIP, 2, -3.402823466e38f, 3.402823466e38f},
    {"Relu6", VN_CONV_ACT_CLIP, 0, 0, 6},
    {"LeakyRelu", VN_CONV_ACT_LEAKY_RELU, 1, 0.01f, 0},
    {"HardSigmoid", VN_CONV_ACT_HARD_SIGMOID, 2, 0.2f, 0.5f},
    {"HardSwish", VN_CONV_ACT_HARD_SWISH, 0, 0, 0},
    {"Sigmoid", VN_CONV_ACT_SIGMOID, 0, 0, 0},
    {"SiLU", VN_CONV_ACT_SILU, 0, 0, 0},
    {"Silu", VN_CONV_ACT_SILU, 0, 0, 0},
};

vn_status vn_conv_epi_parse(const vn_op_ctx *ctx, const char *where, vn_conv_epi *epi)
{
    memset(epi, 0, sizeof *epi);
    const vn_attr *a = vn_attrs_find(ctx->attrs, "activation");
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_STRING || !a->s)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'activation' must be a string");
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        if (strcmp(acts[i].name, a->s) != 0) continue;
        epi->act = acts[i].act;
        epi->p0 = acts[i].p0;
        epi->p1 = acts[i].p1;
        const vn_attr *p = vn_attrs_find(ctx->attrs, "activation_params");
        if (!p) return VN_OK;
        if (p->type != VN_ATTR_FLOATS || p->count > acts[i].nparams)
            return vn_error(VN_ERR_INVALID_ARG, where,
                            "activation_params of %s must be at most %d floats (got %d)", a->s,
                            (int)acts[i].nparams, (int)p->count);
        if (p->count > 0) epi->p0 = p->floats[0];
        if (p->count > 1) epi->p1 = p->floats[1];
        return VN_OK;
    }
    return vn_error(VN_ERR_INVALID_ARG, where,
                    "activation '%s' is not one of Relu, Clip, Relu6, LeakyRelu, HardSigmoid, "
                    "HardSwish, Sigmoid, SiLU",
                    a->s);
}
