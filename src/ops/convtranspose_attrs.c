/*
 * convtranspose_attrs.c — the geometry of ConvTranspose from its inputs and
 * attributes (auto_pad, dilations, group, kernel_shape, output_padding,
 * output_shape, pads, strides).
 *
 * With dk = (k-1)*d + 1 and natural = s*(in-1) + output_padding + dk:
 *   output_shape given: out = output_shape, total = natural - out, split as
 *     SAME_UPPER: begin = total/2, end = total - begin; otherwise begin =
 *     total - total/2, end = total/2 (the opset-11 text; / rounds down, so a
 *     negative total, an output larger than natural, is split the same way);
 *   SAME_UPPER / SAME_LOWER: out = in*s, pads split as above;
 *   VALID: no pads, out = natural;   NOTSET: out = natural - pads.
 */
#include <string.h>

#include "ops/convtranspose.h"

static int64_t floor_half(int64_t v)
{
    return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

static vn_status get_ints(const char *where, const vn_attrs *attrs, const char *name, int32_t count,
                          int64_t min, int64_t fallback, int64_t *out, bool *given)
{
    const vn_attr *a = vn_attrs_find(attrs, name);
    if (given) *given = a != NULL;
    for (int32_t i = 0; i < count; i++) out[i] = fallback;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_INTS || (a->count > 0 && !a->ints))
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' must be a list of ints", name);
    int32_t skip = a->count - count; /* output_shape may name N and C too */
    if (skip != 0 && !(strcmp(name, "output_shape") == 0 && skip == 2))
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' has %d values, expected %d",
                        name, (int)a->count, (int)count);
    for (int32_t i = 0; i < count; i++) {
        if (a->ints[skip + i] < min)
            return vn_error(VN_ERR_INVALID_ARG, where, "%s[%d] = %lld must be >= %lld", name,
                            (int)(skip + i), (long long)a->ints[skip + i], (long long)min);
        out[i] = a->ints[skip + i];
    }
    return VN_OK;
}

static vn_status check_inputs(const char *where, const vn_tensor_desc *x, const vn_tensor_desc *w,
                              const vn_tensor_desc *b, vn_convt_geom *g, int64_t group)
{
    char bx[128], bw[128];
    if (x->rank < 3 || x->rank > 2 + VN_CONVT_DIMS)
        return vn_error(VN_ERR_SHAPE, where, "X %s must have rank 3 to %d (N, C, [[D,] H,] W)",
                        vn_desc_format(x, bx, sizeof bx), 2 + VN_CONVT_DIMS);
    if (w->rank != x->rank || w->dtype != x->dtype)
        return vn_error(VN_ERR_SHAPE, where, "W %s must be %s of X's rank (X is %s)",
                        vn_desc_format(w, bw, sizeof bw), vn_dtype_name(x->dtype),
                        vn_desc_format(x, bx, sizeof bx));
    if (group < 1 || x->dims[1] % group != 0 || w->dims[0] != x->dims[1])
        return vn_error(VN_ERR_SHAPE, where,
                        "X %s and W %s do not fit group %lld: W's first dim must be X's channels, "
                        "a multiple of group",
                        vn_desc_format(x, bx, sizeof bx), vn_desc_format(w, bw, sizeof bw),
                        (long long)group);
    g->nsp = x->rank - 2;
    g->N = x->dims[0];
    g->C = x->dims[1];
    g->G = group;
    g->Cg = g->C / group;
    g->Mg = w->dims[1];
    g->M = g->Mg * group;
    if (b && (b->rank != 1 || b->dims[0] != g->M || b->dtype != x->dtype))
        return vn_error(VN_ERR_SHAPE, where, "B %s must be %s[%lld]",
                        vn_desc_format(b, bw, sizeof bw), vn_dtype_name(x->dtype), (long long)g->M);
    return VN_OK;
}

static vn_status get_window(const char *where, const vn_attrs *attrs, const vn_tensor_desc *w,
                            vn_convt_geom *g, int64_t *pads, int64_t *oshape, bool *has_oshape)
{
    int32_t n = g->nsp, o = VN_CONVT_DIMS - n;
    int64_t ks[VN_CONVT_DIMS];
    bool given = false;
    vn_status st = get_ints(where, attrs, "kernel_shape", n, 1, 1, ks, &given);
    for (int32_t i = 0; i < n && st == VN_OK; i++)
        if (given && ks[i] != w->dims[2 + i])
            return vn_error(VN_ERR_SHAPE, where,
                            "kernel_shape[%d] = %lld does not match W's dim %d (%lld)", (int)i,
                            (long long)ks[i], (int)(2 + i), (long long)w->dims[2 + i]);
    for (int32_t i = 0; i < n; i++) g->k[o + i] = w->dims[2 + i];
    if (st == VN_OK) st = get_ints(where, attrs, "strides", n, 1, 1, g->s + o, NULL);
    if (st == VN_OK) st = get_ints(where, attrs, "dilations", n, 1, 1, g->d + o, NULL);
    if (st == VN_OK) st = get_ints(where, attrs, "output_padding", n, 0, 0, g->op + o, NULL);
    if (st == VN_OK) st = get_ints(where, attrs, "pads", 2 * n, 0, 0, pads, NULL);
    if (st == VN_OK) st = get_ints(where, attrs, "output_shape", n, 1, 1, oshape, has_oshape);
    return st;
}

static void split(vn_convt_geom *g, int32_t i, int64_t total, bool upper)
{
    g->pb[i] = upper ? floor_half(total) : total - floor_half(total);
    g->pe[i] = total - g->pb[i];
}

/* Output size and pads of dim i. */
static void out_size(vn_convt_geom *g, int32_t i, vn_auto_pad ap, const int64_t *oshape)
{
    int64_t natural = g->s[i] * (g->in[i] - 1) + g->op[i] + (g->k[i] - 1) * g->d[i] + 1;
    if (oshape) {
        g->out[i] = *oshape;
        split(g, i, natural - g->out[i], ap == VN_AUTO_PAD_SAME_UPPER);
    } else if (ap == VN_AUTO_PAD_SAME_UPPER || ap == VN_AUTO_PAD_SAME_LOWER) {
        g->out[i] = g->in[i] * g->s[i];
        split(g, i, natural - g->out[i], ap == VN_AUTO_PAD_SAME_UPPER);
    } else {
        if (ap == VN_AUTO_PAD_VALID) g->pb[i] = g->pe[i] = 0;
        g->out[i] = natural - g->pb[i] - g->pe[i];
    }
}

static vn_status check_dim(const char *where, const vn_convt_geom *g, int32_t i)
{
    int32_t a = i - (VN_CONVT_DIMS - g->nsp);
    if (g->op[i] >= g->s[i] && g->op[i] >= g->d[i])
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "output_padding[%d] = %lld must be smaller than the stride (%lld) or the "
                        "dilation (%lld)",
                        (int)a, (long long)g->op[i], (long long)g->s[i], (long long)g->d[i]);
    if (g->out[i] < 1)
        return vn_error(VN_ERR_SHAPE, where,
                        "pads %lld, %lld of spatial axis %d are too big: the output would have "
                        "size %lld",
                        (long long)g->pb[i], (long long)g->pe[i], (int)a, (long long)g->out[i]);
    return VN_OK;
}

vn_status vn_convt_geom_make(const char *where, const vn_attrs *attrs, const vn_tensor_desc *x,
                             const vn_tensor_desc *w, const vn_tensor_desc *b, vn_convt_geom *g)
{
    memset(g, 0, sizeof *g);
    int64_t group = 1, pads[2 * VN_CONVT_DIMS] = {0}, oshape[VN_CONVT_DIMS] = {0};
    bool has_oshape = false;
    vn_auto_pad ap = VN_AUTO_PAD_NOTSET;
    if (vn_attrs_int(attrs, "group", 1, &group) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'group' must be an int");
    vn_status st = check_inputs(where, x, w, b, g, group);
    int32_t lead = VN_CONVT_DIMS - g->nsp; /* the dims X does not have */
    for (int32_t i = 0; i < VN_CONVT_DIMS; i++) {
        g->in[i] = i < lead ? 1 : x->dims[2 + i - lead];
        g->out[i] = g->k[i] = g->s[i] = g->d[i] = 1; /* the spatial axes' are set below */
    }
    if (st == VN_OK) st = get_window(where, attrs, w, g, pads, oshape, &has_oshape);
    if (st == VN_OK) st = vn_ops_auto_pad(where, attrs, &ap);
    for (int32_t a = 0; a < g->nsp && st == VN_OK; a++) {
        int32_t i = lead + a;
        g->pb[i] = pads[a];
        g->pe[i] = pads[g->nsp + a];
        out_size(g, i, ap, has_oshape ? &oshape[a] : NULL);
        st = check_dim(where, g, i);
    }
    return st;
}
