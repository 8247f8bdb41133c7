/*
 * misc_unique.c — Unique (opset 11): the distinct values of x (flattened),
 * or its distinct slices along `axis`, sorted ascending (lexicographically
 * for slices; the default) or in order of first occurrence, with the first
 * occurrence of each, the inverse map and the counts. The output shapes
 * depend on the values, so x must be a constant known at plan time (like
 * NonZero): the plan computes everything and the run copies it.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/misc.h"

typedef struct unique_plan {
    int64_t n, u, slice;        /* slices, distinct slices, elements per slice */
    int64_t outer, inner;       /* x as [outer, n, inner] */
    int64_t *first, *inv, *cnt; /* [u], [n], [u] */
    void *y;                    /* the distinct slices, x's dtype */
    size_t y_bytes;
} unique_plan;

typedef struct keys {
    const void *x;
    vn_dtype dt;
    bool flt;
    int64_t outer, n, inner;
} keys;

static double key_f(const keys *k, int64_t s, int64_t e)
{
    int64_t o = e / k->inner, i = e % k->inner;
    return vn_cast_load_f64(k->dt, k->x, (o * k->n + s) * k->inner + i);
}

/* Lexicographic order of slices a and b; ties by position (a stable sort
 * puts the first occurrence first). */
static int cmp_slices(const keys *k, int64_t a, int64_t b, bool tie)
{
    for (int64_t e = 0; e < k->outer * k->inner; e++) {
        int64_t o = e / k->inner, i = e % k->inner;
        int64_t ia = (o * k->n + a) * k->inner + i, ib = (o * k->n + b) * k->inner + i;
        if (k->flt) {
            double va = key_f(k, a, e), vb = key_f(k, b, e);
            if (va != vb) return va < vb ? -1 : 1;
        } else {
            int64_t va = vn_cast_load_i64(k->dt, k->x, ia), vb = vn_cast_load_i64(k->dt, k->x, ib);
            if (va != vb) return va < vb ? -1 : 1;
        }
    }
    return tie ? (a < b ? -1 : a > b) : 0;
}

/* Merge sort of idx[0..n) by cmp_slices (tmp: n scratch). */
static void sort_slices(const keys *k, int64_t *idx, int64_t *tmp, int64_t n)
{
    if (n < 2) return;
    int64_t h = n / 2, i = 0, j = h, o = 0;
    sort_slices(k, idx, tmp, h);
    sort_slices(k, idx + h, tmp, n - h);
    while (i < h || j < n)
        tmp[o++] =
            j >= n || (i < h && cmp_slices(k, idx[i], idx[j], true) <= 0) ? idx[i++] : idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

static void unique_free(void *plan)
{
    unique_plan *p = plan;
    if (!p) return;
    free(p->first);
    free(p->inv);
    free(p->cnt);
    free(p->y);
    free(p);
}

static vn_status unique_layout(const vn_op_ctx *ctx, const char *where, unique_plan *p,
                               int32_t *axis, int64_t *sorted)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t ax = 0;
    vn_status st = vn_so_attr_int(ctx, where, "sorted", 1, sorted);
    if (st != VN_OK) return st;
    *axis = -1;
    if (vn_attrs_find(ctx->attrs, "axis")) {
        st = vn_so_attr_int(ctx, where, "axis", 0, &ax);
        if (st == VN_OK) st = vn_so_axis(where, "axis", ax, x->rank, axis);
        if (st != VN_OK) return st;
    }
    if (*axis >= 0) {
        vn_misc_split3(x, *axis, &p->outer, &p->n, &p->inner);
    } else {
        p->outer = p->inner = 1;
        p->n = vn_desc_numel(x);
    }
    p->slice = p->outer * p->inner;
    if (!vn_so_const(ctx, 0))
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "input 0 must be a constant known at plan time (its values decide the "
                        "output shapes)");
    return VN_OK;
}

/* Group the slices: first occurrence, inverse map and counts, in sorted or
 * first-occurrence order. */
static vn_status unique_compute(const vn_op_ctx *ctx, const char *where, unique_plan *p,
                                bool sorted)
{
    const vn_tensor_desc *x = &ctx->inputs[0];
    keys k = {vn_so_const(ctx, 0), x->dtype, vn_cast_is_float(x->dtype), p->outer, p->n, p->inner};
    size_t nb = (size_t)vn_ops_max(p->n, 1) * sizeof(int64_t);
    int64_t *idx = malloc(nb), *tmp = malloc(nb), *rank = malloc(nb);
    p->first = malloc(nb);
    p->inv = malloc(nb);
    p->cnt = malloc(nb);
    vn_status st = VN_OK;
    if (!idx || !tmp || !rank || !p->first || !p->inv || !p->cnt)
        st = vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for %lld slices", (long long)p->n);
    for (int64_t i = 0; st == VN_OK && i < p->n; i++) idx[i] = i;
    if (st == VN_OK) sort_slices(&k, idx, tmp, p->n);
    p->u = 0;
    for (int64_t i = 0; st == VN_OK && i < p->n; i++) {
        if (i == 0 || cmp_slices(&k, idx[i - 1], idx[i], false) != 0) {
            p->first[p->u] = idx[i]; /* the stable sort puts the first occurrence first */
            p->cnt[p->u++] = 0;
        }
        p->cnt[p->u - 1]++;
        rank[idx[i]] = p->u - 1; /* sorted position of slice idx[i]'s group */
    }
    if (st == VN_OK && !sorted) { /* reorder the groups by first occurrence */
        int64_t *order = tmp, *pos = idx, u = 0;
        for (int64_t i = 0; i < p->n; i++) pos[i] = -1;
        for (int64_t s = 0; s < p->n; s++)
            if (pos[rank[s]] < 0) pos[rank[s]] = u, order[u++] = rank[s];
        int64_t *f = malloc(nb), *c = malloc(nb);
        if (!f || !c) st = vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the groups");
        for (int64_t g = 0; st == VN_OK && g < p->u; g++)
            f[g] = p->first[order[g]], c[g] = p->cnt[order[g]];
        for (int64_t s = 0; st == VN_OK && s < p->n; s++) rank[s] = pos[rank[s]];
        if (st == VN_OK) memcpy(p->first, f, (size_t)p->u * sizeof *f);
        if (st == VN_OK) memcpy(p->cnt, c, (size_t)p->u * sizeof *c);
        free(f);
        free(c);
    }
    if (st == VN_OK) memcpy(p->inv, rank, (size_t)p->n * sizeof *rank);
    free(idx);
    free(tmp);
    free(rank);
    return st;
}

static vn_status unique_build(const vn_op_ctx *ctx, unique_plan *p, int32_t *axis)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    int64_t sorted = 1;
    vn_status st = unique_layout(ctx, where, p, axis, &sorted);
    if (st == VN_OK) st = unique_compute(ctx, where, p, sorted != 0);
    if (st != VN_OK) return st;
    size_t es = vn_dtype_size(ctx->inputs[0].dtype);
    const char *x = vn_so_const(ctx, 0);
    p->y_bytes = (size_t)(p->u * p->slice) * es;
    p->y = malloc(p->y_bytes ? p->y_bytes : 1);
    if (!p->y) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the output");
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t g = 0; g < p->u; g++)
            memcpy((char *)p->y + (size_t)((o * p->u + g) * p->inner) * es,
                   x + (size_t)((o * p->n + p->first[g]) * p->inner) * es, (size_t)p->inner * es);
    return VN_OK;
}

static vn_status unique_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    unique_plan *p = calloc(1, sizeof *p);
    int32_t axis = -1;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, "Unique", "no memory for the plan");
    vn_status st = unique_build(ctx, p, &axis);
    if (st == VN_OK) {
        out[0] = axis >= 0 ? ctx->inputs[0] : vn_so_vec(ctx->inputs[0].dtype, p->u);
        if (axis >= 0) out[0].dims[axis] = p->u;
        out[1] = vn_so_vec(VN_I64, p->u);
        out[2] = vn_so_vec(VN_I64, p->n);
        out[3] = vn_so_vec(VN_I64, p->u);
    }
    unique_free(p);
    return st;
}

static vn_status unique_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                                size_t *workspace)
{
    (void)outputs;
    unique_plan *p = calloc(1, sizeof *p);
    int32_t axis = -1;
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, "Unique", "no memory for the plan");
    vn_status st = unique_build(ctx, p, &axis);
    if (st != VN_OK) {
        unique_free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

static vn_status unique_run(const vn_op_run_ctx *ctx)
{
    const unique_plan *p = ctx->plan;
    const void *src[4] = {p->y, p->first, p->inv, p->cnt};
    size_t bytes[4] = {p->y_bytes, (size_t)p->u * 8, (size_t)p->n * 8, (size_t)p->u * 8};
    for (int32_t k = 0; k < 4 && k < ctx->num_outputs; k++)
        if (ctx->outputs[k].data && bytes[k]) memcpy(ctx->outputs[k].data, src[k], bytes[k]);
    return VN_OK;
}

const vn_op_def vn_misc_unique_def = {"Unique",
                                      "",
                                      1,
                                      1,
                                      4,
                                      VN_DTYPES_FLOAT | VN_DTYPES_INT | VN_DTYPES_F64,
                                      unique_infer,
                                      unique_plan_fn,
                                      unique_free,
                                      unique_run};
