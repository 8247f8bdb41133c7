/*
 * pool_attrs.c — the window geometry of the pooling operators from their
 * ONNX attributes (kernel_shape, strides, dilations, pads, auto_pad,
 * ceil_mode, count_include_pad, storage_order, p).
 *
 * Output sizes (ONNX MaxPool-12 / AveragePool-19), with dk = (k-1)*d + 1:
 *   NOTSET: floor or ceil((in + pb + pe - dk) / s) + 1; in ceil mode a last
 *           window that would start in the right padding (start >= in + pb
 *           from the padded origin) is dropped;
 *   VALID:  ceil((in - dk + 1) / s), no pads;
 *   SAME_*: ceil(in / s), total pad max(0, (out-1)*s + dk - in), the odd one
 *           at the end (SAME_UPPER) or at the start (SAME_LOWER).
 * Invariant on success: every out >= 1 and every pad < dk, so the last tap
 * of every window lies at or after position 0.
 */
#include <string.h>

#include "ops/pool.h"

/* An INTS attribute with exactly `count` values, each >= `min`; `fallback`
 * (count values) when absent. */
static vn_status get_ints(const char *where, const vn_attrs *attrs, const char *name, int32_t count,
                          int64_t min, int64_t fallback, int64_t *out, bool *given)
{
    const vn_attr *a = vn_attrs_find(attrs, name);
    if (given) *given = a != NULL;
    for (int32_t i = 0; i < count; i++) out[i] = fallback;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_INTS || (a->count > 0 && !a->ints))
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' must be a list of ints", name);
    if (a->count != count)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' has %d values, expected %d",
                        name, (int)a->count, (int)count);
    for (int32_t i = 0; i < count; i++) {
        if (a->ints[i] < min)
            return vn_error(VN_ERR_INVALID_ARG, where, "%s[%d] = %lld must be >= %lld", name,
                            (int)i, (long long)a->ints[i], (long long)min);
        out[i] = a->ints[i];
    }
    return VN_OK;
}

static vn_status get_flag(const char *where, const vn_attrs *attrs, const char *name, int64_t *out)
{
    if (vn_attrs_int(attrs, name, 0, out) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' must be an int", name);
    if (*out != 0 && *out != 1)
        return vn_error(VN_ERR_INVALID_ARG, where, "%s must be 0 or 1, got %lld", name,
                        (long long)*out);
    return VN_OK;
}

static vn_status get_p(const char *where, const vn_attrs *attrs, int64_t *p)
{
    const vn_attr *a = vn_attrs_find(attrs, "p");
    *p = 2;
    if (a && a->type == VN_ATTR_FLOAT && a->f == (double)(int64_t)a->f)
        *p = (int64_t)a->f;
    else if (a && a->type != VN_ATTR_INT)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'p' must be an int");
    else if (a)
        *p = a->i;
    if (*p < 1 || *p > 64)
        return vn_error(VN_ERR_INVALID_ARG, where, "p = %lld must be in 1..64", (long long)*p);
    return VN_OK;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* Output size and effective pads of spatial dim i (ceil_mode given). */
static void out_size(vn_pool_geom *g, int32_t i, vn_auto_pad ap, bool ceil_mode)
{
    int64_t in = g->in[i], s = g->s[i], dk = (g->k[i] - 1) * g->d[i] + 1;
    if (ap == VN_AUTO_PAD_VALID) {
        g->pb[i] = g->pe[i] = 0;
        g->out[i] = floor_div(in - dk, s) + 1;
    } else if (ap != VN_AUTO_PAD_NOTSET) {
        g->out[i] = (in + s - 1) / s;
        int64_t total = vn_ops_max(0, (g->out[i] - 1) * s + dk - in);
        g->pb[i] = ap == VN_AUTO_PAD_SAME_UPPER ? total / 2 : total - total / 2;
        g->pe[i] = total - g->pb[i];
    } else {
        int64_t span = in + g->pb[i] + g->pe[i] - dk;
        g->out[i] = (ceil_mode ? floor_div(span + s - 1, s) : floor_div(span, s)) + 1;
        if (ceil_mode && g->out[i] > 1 && (g->out[i] - 1) * s >= in + g->pb[i]) g->out[i]--;
    }
}

static vn_status check_dim(const char *where, const vn_pool_geom *g, int32_t i)
{
    int64_t dk = (g->k[i] - 1) * g->d[i] + 1;
    int32_t a = i - (VN_POOL_DIMS - g->nsp); /* the attribute's index */
    if (g->pb[i] >= dk || g->pe[i] >= dk)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "pads %lld, %lld of spatial axis %d are too big: each must be smaller "
                        "than the dilated kernel extent %lld",
                        (long long)g->pb[i], (long long)g->pe[i], (int)a, (long long)dk);
    if (g->out[i] < 1)
        return vn_error(VN_ERR_SHAPE, where,
                        "kernel extent %lld does not fit spatial axis %d of size %lld (with "
                        "pads %lld, %lld): the output would be empty",
                        (long long)dk, (int)a, (long long)g->in[i], (long long)g->pb[i],
                        (long long)g->pe[i]);
    return VN_OK;
}

/* kernel_shape, strides, dilations, pads into the last nsp of the 3 dims. */
static vn_status get_window(const char *where, const vn_attrs *attrs, vn_pool_geom *g)
{
    int32_t n = g->nsp, o = VN_POOL_DIMS - n;
    int64_t pads[2 * VN_POOL_DIMS];
    bool given = false;
    vn_status st = get_ints(where, attrs, "kernel_shape", n, 1, 1, g->k + o, &given);
    if (st == VN_OK && !given)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'kernel_shape' is required");
    if (st == VN_OK) st = get_ints(where, attrs, "strides", n, 1, 1, g->s + o, NULL);
    if (st == VN_OK) st = get_ints(where, attrs, "dilations", n, 1, 1, g->d + o, NULL);
    if (st == VN_OK) st = get_ints(where, attrs, "pads", 2 * n, 0, 0, pads, NULL);
    for (int32_t i = 0; i < n && st == VN_OK; i++) {
        g->pb[o + i] = pads[i];
        g->pe[o + i] = pads[n + i];
    }
    return st;
}

static vn_status get_flags(const char *where, const vn_attrs *attrs, vn_pool_kind kind,
                           vn_pool_geom *g, int64_t *ceil_mode)
{
    int64_t cip = 0, order = 0;
    vn_status st = get_flag(where, attrs, "ceil_mode", ceil_mode);
    if (st == VN_OK && kind == VN_POOL_AVG) st = get_flag(where, attrs, "count_include_pad", &cip);
    if (st == VN_OK && kind == VN_POOL_MAX) st = get_flag(where, attrs, "storage_order", &order);
    if (st == VN_OK && kind == VN_POOL_LP) st = get_p(where, attrs, &g->p);
    g->count_include_pad = cip != 0;
    g->storage_order = (int32_t)order;
    return st;
}

vn_status vn_pool_geom_make(const char *where, const vn_attrs *attrs, vn_pool_kind kind,
                            int32_t nsp, const int64_t *in, vn_pool_geom *g)
{
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    g->p = 2;
    for (int32_t i = 0; i < VN_POOL_DIMS; i++) {
        g->in[i] = i < VN_POOL_DIMS - nsp ? 1 : in[i - (VN_POOL_DIMS - nsp)];
        g->k[i] = g->s[i] = g->d[i] = 1;
    }
    vn_auto_pad ap = VN_AUTO_PAD_NOTSET;
    int64_t ceil_mode = 0;
    vn_status st = get_window(where, attrs, g);
    if (st == VN_OK) st = vn_ops_auto_pad(where, attrs, &ap);
    if (st == VN_OK) st = get_flags(where, attrs, kind, g, &ceil_mode);
    for (int32_t i = 0; i < VN_POOL_DIMS && st == VN_OK; i++) {
        out_size(g, i, ap, ceil_mode != 0);
        st = check_dim(where, g, i);
    }
    return st;
}

int64_t vn_pool_taps_in(const vn_pool_geom *g, int32_t i, int64_t o, int64_t lo, int64_t hi)
{
    int64_t start = o * g->s[i] - g->pb[i], n = 0;
    for (int64_t t = 0; t < g->k[i]; t++) {
        int64_t pos = start + t * g->d[i];
        n += pos >= lo && pos < hi;
    }
    return n;
}
