/*
 * tfidf.c — TfIdfVectorizer (ONNX opset 9) on integer input (i32, i64;
 * string pools are refused: vinci has no string tensors).
 *
 * The pool (pool_int64s) lists n-grams by size: ngram_counts[i] is where the
 * (i+1)-grams start. The pool n-grams are numbered in order, every size
 * counting, and n-gram number j is output column ngram_indexes[j]; only the
 * sizes in [min_gram_length, max_gram_length] are looked for, and of equal
 * pool entries the first wins. For every row of X ([C] or [B, C]), every
 * skip distance s in 1 .. max_skip_count + 1 and every start position, the
 * n-grams X[t], X[t+s], ..., X[t+(n-1)s] that are in the pool are counted;
 * unigrams are counted on the first distance only (onnxruntime's and the
 * ONNX reference's rule). Y ([out] or [B, out], f32, out = max(ngram_indexes)
 * + 1) is the count (TF), weights[col] or 1 when the count is > 0 (IDF), or
 * the count times weights[col] (TFIDF; no weights: the count). The lookup is
 * a linear scan of the pool: this is a text-feature operator of small pools.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

typedef enum tf_mode { TF_TF, TF_IDF, TF_TFIDF } tf_mode;

typedef struct tf_plan {
    tf_mode mode;
    int64_t min_n, max_n, skips, out, npool, ncounts, nidx, nweights;
    int64_t *pool, *counts, *idx; /* copies of the attributes */
    float *weights;
} tf_plan;

static void tf_free(void *data)
{
    tf_plan *p = data;
    if (!p) return;
    free(p->pool), free(p->counts), free(p->idx), free(p->weights);
    free(p);
}

static vn_status copy_ints(const char *where, const vn_attrs *attrs, const char *name,
                           bool required, int64_t **out, int64_t *n)
{
    const vn_attr *a = vn_attrs_find(attrs, name);
    *n = 0;
    if (!a && !required) return VN_OK;
    if (!a || a->type != VN_ATTR_INTS || (a->count > 0 && !a->ints))
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute '%s' (ints) is %s", name,
                        a ? "not a list of ints" : "required");
    *out = malloc((size_t)(a->count + 1) * sizeof **out);
    if (!*out) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    if (a->count > 0) memcpy(*out, a->ints, (size_t)a->count * sizeof **out);
    *n = a->count;
    return VN_OK;
}

static vn_status get_mode(const vn_op_ctx *ctx, const char *where, tf_plan *p)
{
    const char *mode = NULL;
    vn_status st = vn_so_attr_string(ctx, where, "mode", NULL, &mode);
    if (st != VN_OK) return st;
    if (mode && !strcmp(mode, "TF"))
        p->mode = TF_TF;
    else if (mode && !strcmp(mode, "IDF"))
        p->mode = TF_IDF;
    else if (mode && !strcmp(mode, "TFIDF"))
        p->mode = TF_TFIDF;
    else
        return vn_error(VN_ERR_INVALID_ARG, where, "mode must be TF, IDF or TFIDF");
    return VN_OK;
}

static vn_status get_weights(const vn_op_ctx *ctx, const char *where, tf_plan *p)
{
    const vn_attr *w = vn_attrs_find(ctx->attrs, "weights");
    if (!w) return VN_OK;
    if (w->type != VN_ATTR_FLOATS || (w->count > 0 && !w->floats))
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'weights' must be floats");
    if (w->count > 0 && w->count < p->out)
        return vn_error(VN_ERR_INVALID_ARG, where, "%d weights for %lld output columns",
                        (int)w->count, (long long)p->out);
    p->weights = malloc((size_t)(w->count + 1) * sizeof *p->weights);
    if (!p->weights) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    if (w->count > 0) memcpy(p->weights, w->floats, (size_t)w->count * sizeof *p->weights);
    p->nweights = w->count;
    return VN_OK;
}

/* The pool's n-gram count must match ngram_indexes, every index >= 0. */
static vn_status check_pool(const char *where, tf_plan *p)
{
    int64_t grams = 0;
    for (int64_t i = 0; i < p->ncounts; i++) {
        int64_t end = i + 1 < p->ncounts ? p->counts[i + 1] : p->npool;
        if (p->counts[i] < 0 || end < p->counts[i] || end > p->npool)
            return vn_error(VN_ERR_INVALID_ARG, where, "ngram_counts[%lld] = %lld is out of order",
                            (long long)i, (long long)p->counts[i]);
        grams += (end - p->counts[i]) / (i + 1);
    }
    if (grams != p->nidx)
        return vn_error(VN_ERR_INVALID_ARG, where, "the pool has %lld n-grams, ngram_indexes %lld",
                        (long long)grams, (long long)p->nidx);
    p->out = 0;
    for (int64_t j = 0; j < p->nidx; j++) {
        if (p->idx[j] < 0)
            return vn_error(VN_ERR_INVALID_ARG, where, "ngram_indexes[%lld] is negative",
                            (long long)j);
        if (p->idx[j] + 1 > p->out) p->out = p->idx[j] + 1;
    }
    return VN_OK;
}

static vn_status tf_parse(const vn_op_ctx *ctx, const char *where, tf_plan *p)
{
    if (vn_attrs_find(ctx->attrs, "pool_strings"))
        return vn_error(VN_ERR_UNSUPPORTED, where, "pool_strings: vinci has no string tensors");
    vn_status st = get_mode(ctx, where, p);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "min_gram_length", 1, &p->min_n);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "max_gram_length", 1, &p->max_n);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "max_skip_count", 0, &p->skips);
    if (st == VN_OK) st = copy_ints(where, ctx->attrs, "pool_int64s", true, &p->pool, &p->npool);
    if (st == VN_OK)
        st = copy_ints(where, ctx->attrs, "ngram_counts", true, &p->counts, &p->ncounts);
    if (st == VN_OK) st = copy_ints(where, ctx->attrs, "ngram_indexes", true, &p->idx, &p->nidx);
    if (st == VN_OK) st = check_pool(where, p);
    if (st == VN_OK) st = get_weights(ctx, where, p);
    if (st == VN_OK && (p->min_n < 1 || p->max_n < p->min_n || p->skips < 0))
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "gram lengths %lld..%lld and max_skip_count %lld are not valid",
                        (long long)p->min_n, (long long)p->max_n, (long long)p->skips);
    const vn_tensor_desc *x = &ctx->inputs[0];
    if (st == VN_OK && (x->rank > 2 || (x->rank == 2 && x->dims[0] < 1)))
        return vn_error(VN_ERR_SHAPE, where, "X must be [C] or [B, C] with B >= 1");
    return st;
}

static vn_status tf_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    tf_plan p;
    memset(&p, 0, sizeof p);
    vn_status st = tf_parse(ctx, where, &p);
    const vn_tensor_desc *x = &ctx->inputs[0];
    int64_t dims[2] = {x->rank == 2 ? x->dims[0] : p.out, p.out};
    *out = vn_so_desc(VN_F32, x->rank == 2 ? 2 : 1, dims);
    free(p.pool), free(p.counts), free(p.idx), free(p.weights);
    return st;
}

static vn_status tf_plan_make(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                              size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    tf_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = tf_parse(ctx, where, p);
    if (st != VN_OK) {
        tf_free(p);
        return st;
    }
    *data = p;
    return VN_OK;
}

/* The output column of the first pool n-gram equal to x[0], x[s], ...,
 * x[(n-1)s], or -1. */
static int64_t find_gram(const tf_plan *p, const int64_t *x, int64_t s, int64_t n)
{
    if (n > p->ncounts) return -1;
    int64_t id = 0; /* the number of the first n-gram of size n */
    for (int64_t i = 0; i + 1 < n; i++) {
        int64_t end = i + 1 < p->ncounts ? p->counts[i + 1] : p->npool;
        id += (end - p->counts[i]) / (i + 1);
    }
    int64_t begin = p->counts[n - 1], end = n < p->ncounts ? p->counts[n] : p->npool;
    for (int64_t g = begin; g + n <= end; g += n, id++) {
        int64_t j = 0;
        while (j < n && p->pool[g + j] == x[j * s]) j++;
        if (j == n) return p->idx[id];
    }
    return -1;
}

/* Counts of one row of len items into freq[out]. */
static void count_row(const tf_plan *p, const int64_t *x, int64_t len, int64_t *freq)
{
    int64_t first = p->min_n;
    for (int64_t s = 1; s <= p->skips + 1 && first <= p->max_n; s++) {
        for (int64_t t = 0; t < len; t++)
            for (int64_t n = first; n <= p->max_n && t + (n - 1) * s < len; n++) {
                int64_t col = find_gram(p, x + t, s, n);
                if (col >= 0) freq[col]++;
            }
        if (first == 1) first = 2; /* unigrams do not depend on the distance */
    }
}

static float tf_value(const tf_plan *p, int64_t col, int64_t f)
{
    float w = p->nweights > 0 ? p->weights[col] : 1.0f;
    if (p->mode == TF_TF) return (float)f;
    if (p->mode == TF_IDF) return f > 0 ? w : 0.0f;
    return w * (float)f;
}

static vn_status tf_run(const vn_op_run_ctx *ctx)
{
    const tf_plan *p = ctx->plan;
    const vn_tensor *x = &ctx->inputs[0];
    int64_t rows = x->desc.rank == 2 ? x->desc.dims[0] : 1;
    int64_t len = x->desc.rank == 0 ? 1 : x->desc.dims[x->desc.rank - 1];
    int64_t *row = malloc((size_t)(len + 1) * sizeof *row);
    int64_t *freq = malloc((size_t)(p->out + 1) * sizeof *freq);
    if (!row || !freq) {
        free(row), free(freq);
        return vn_error(VN_ERR_OUT_OF_MEMORY, "TfIdfVectorizer", "no memory for a row");
    }
    float *y = ctx->outputs[0].data;
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t i = 0; i < len; i++)
            row[i] = vn_cast_load_i64(x->desc.dtype, x->data, r * len + i);
        memset(freq, 0, (size_t)p->out * sizeof *freq);
        count_row(p, row, len, freq);
        for (int64_t c = 0; c < p->out; c++) y[r * p->out + c] = tf_value(p, c, freq[c]);
    }
    free(row), free(freq);
    return VN_OK;
}

const vn_op_def vn_tfidf_def = {
    "TfIdfVectorizer", "",           1,       1,     1, VN_DTYPE_BIT(VN_I32) | VN_DTYPE_BIT(VN_I64),
    tf_infer,          tf_plan_make, tf_free, tf_run};
