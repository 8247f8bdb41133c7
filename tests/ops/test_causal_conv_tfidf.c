/*
 * test_causal_conv_tfidf.c — CausalConvWithState against a double reference
 * (padded = past_state ++ input, depthwise valid convolution, optional SiLU;
 * with and without bias and past_state, k = 1 to 4, f32 and f16), and
 * TfIdfVectorizer against counts worked out by hand (unigrams counted once,
 * bigrams at skip distances 1 and 2, TF / IDF / TFIDF, weights, min_gram_length,
 * a [B, C] batch) and its errors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

typedef struct cc_case {
    int64_t b, c, len, k;
    bool bias, past, silu;
} cc_case;

static void cc_run(const cc_case *t, vn_dtype dt, uint64_t seed)
{
    vt_rng r = {seed};
    int64_t nx = t->b * t->c * t->len, nw = t->c * t->k, np = t->b * t->c * (t->k - 1);
    size_t es = vn_dtype_size(dt);
    void *x = malloc((size_t)nx * es + 1), *w = malloc((size_t)nw * es), *bias = malloc(t->c * es);
    void *past = malloc((size_t)np * es + 1), *y = malloc((size_t)nx * es + 1);
    void *state = malloc((size_t)np * es + 1);
    for (int64_t i = 0; i < nx; i++) vt_put(dt, x, i, vt_uniform(&r, -2, 2));
    for (int64_t i = 0; i < nw; i++) vt_put(dt, w, i, vt_uniform(&r, -1, 1));
    for (int64_t i = 0; i < t->c; i++) vt_put(dt, bias, i, vt_uniform(&r, -1, 1));
    for (int64_t i = 0; i < np; i++) vt_put(dt, past, i, vt_uniform(&r, -2, 2));
    int64_t xd[3] = {t->b, t->c, t->len}, wd[3] = {t->c, 1, t->k}, pd[3] = {t->b, t->c, t->k - 1};
    vn_tensor in[4] = {{vt_desc(dt, 3, xd), x},
                       {vt_desc(dt, 3, wd), w},
                       {vt_desc(dt, 1, &t->c), bias},
                       {vt_desc(dt, 3, pd), past}};
    if (!t->bias) in[2] = (vn_tensor){{dt, -1, {0}}, NULL};
    if (!t->past) in[3] = (vn_tensor){{dt, -1, {0}}, NULL};
    vn_tensor_desc d[4] = {in[0].desc, in[1].desc, in[2].desc, in[3].desc};
    vn_attr act = {.name = "activation", .type = VN_ATTR_STRING, .s = t->silu ? "silu" : "none"};
    vn_attrs attrs = {&act, 1};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "CausalConvWithState", d, 4, &attrs, &plan));
    if (plan) {
        vn_tensor out[2] = {{in[0].desc, y}, {vt_desc(dt, 3, pd), state}};
        VT_OK(vn_op_run(plan, in, 4, out, 2, NULL));
        double worst = 0, unit = dt == VN_F32 ? 1e-6 : ldexp(1.0, -9);
        for (int64_t row = 0; row < t->b * t->c; row++) {
            int64_t c = row % t->c;
            for (int64_t o = 0; o < t->len; o++) {
                double v = t->bias ? vt_get(dt, bias, c) : 0, mag = fabs(v);
                for (int64_t j = 0; j < t->k; j++) {
                    int64_t p = o + j; /* position in past ++ input */
                    double xv = p < t->k - 1
                                    ? (t->past ? vt_get(dt, past, row * (t->k - 1) + p) : 0)
                                    : vt_get(dt, x, row * t->len + p - (t->k - 1));
                    v += vt_get(dt, w, c * t->k + j) * xv;
                    mag += fabs(vt_get(dt, w, c * t->k + j) * xv);
                }
                if (t->silu) v = v / (1 + exp(-v));
                double e = fabs(vt_get(dt, y, row * t->len + o) - v) / (unit * (1 + mag));
                if (e > worst) worst = e;
            }
            for (int64_t p = 0; p < t->k - 1; p++) { /* the last k-1 of len + k - 1 */
                int64_t q = t->len + p;
                double want = q < t->k - 1 ? (t->past ? vt_get(dt, past, row * (t->k - 1) + q) : 0)
                                           : vt_get(dt, x, row * t->len + q - (t->k - 1));
                if (vt_get(dt, state, row * (t->k - 1) + p) != want) worst = 1e9;
            }
        }
        VT_CHECK(worst <= 1, "%s b %lld c %lld len %lld k %lld bias %d past %d silu %d: %.2f",
                 vn_dtype_name(dt), (long long)t->b, (long long)t->c, (long long)t->len,
                 (long long)t->k, t->bias, t->past, t->silu, worst);
        vn_op_plan_destroy(plan);
    }
    free(x), free(w), free(bias), free(past), free(y), free(state);
}

static void test_causal_conv(void)
{
    const cc_case cases[] = {{2, 3, 8, 4, true, true, false},
                             {1, 5, 1, 4, false, true, true},
                             {2, 4, 2, 4, true, false, true},
                             {1, 1, 6, 1, true, false, false},
                             {3, 2, 5, 3, false, false, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cc_run(&cases[i], VN_F32, 10 + i);
        cc_run(&cases[i], VN_F16, 20 + i);
    }
}

/* TfIdfVectorizer over X (i64 [rows, len]) with the pool of the header:
 * unigram 1; bigrams [1,2], [2,1], [1,1]. */
static vn_status tfidf(const int64_t *x, int32_t rank, const int64_t *dims, const char *mode,
                       int64_t min_n, bool weights, float *y)
{
    static const int64_t pool[7] = {1, 1, 2, 2, 1, 1, 1}, counts[2] = {0, 1}, idx[4] = {0, 1, 2, 3};
    static const float w[4] = {0.5f, 1, 2, 4};
    vn_attr a[9] = {
        {.name = "mode", .type = VN_ATTR_STRING, .s = mode},
        {.name = "min_gram_length", .type = VN_ATTR_INT, .i = min_n},
        {.name = "max_gram_length", .type = VN_ATTR_INT, .i = 2},
        {.name = "max_skip_count", .type = VN_ATTR_INT, .i = 1},
        {.name = "pool_int64s", .type = VN_ATTR_INTS, .ints = pool, .count = 7},
        {.name = "ngram_counts", .type = VN_ATTR_INTS, .ints = counts, .count = 2},
        {.name = "ngram_indexes", .type = VN_ATTR_INTS, .ints = idx, .count = 4},
        {.name = "weights", .type = VN_ATTR_FLOATS, .floats = w, .count = 4},
    };
    vn_attrs attrs = {a, weights ? 8 : 7};
    vn_tensor in = {vt_desc(VN_I64, rank, dims), (void *)x};
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(NULL, "TfIdfVectorizer", &in.desc, 1, &attrs, &plan);
    if (st != VN_OK) return st;
    vn_tensor out = {*vn_op_plan_output(plan, 0), y};
    st = vn_op_run(plan, &in, 1, &out, 1, NULL);
    vn_op_plan_destroy(plan);
    return st;
}

static bool equal4(const float *y, float a, float b, float c, float d)
{
    return y[0] == a && y[1] == b && y[2] == c && y[3] == d;
}

static void test_tfidf(void)
{
    /* [1,2,1,2]: unigram 1 twice; distance 1: [1,2] x2, [2,1]; distance 2: [1,1], [2,2] */
    const int64_t x[8] = {1, 2, 1, 2, 2, 2, 2, 2};
    int64_t d1[1] = {4}, d2[2] = {2, 4};
    float y[8];
    VT_OK(tfidf(x, 1, d1, "TF", 1, false, y));
    VT_CHECK(equal4(y, 2, 2, 1, 1), "TF %g %g %g %g", y[0], y[1], y[2], y[3]);
    VT_OK(tfidf(x, 1, d1, "IDF", 1, true, y));
    VT_CHECK(equal4(y, 0.5f, 1, 2, 4), "IDF weights %g %g %g %g", y[0], y[1], y[2], y[3]);
    VT_OK(tfidf(x, 1, d1, "IDF", 1, false, y));
    VT_CHECK(equal4(y, 1, 1, 1, 1), "IDF %g %g %g %g", y[0], y[1], y[2], y[3]);
    VT_OK(tfidf(x, 1, d1, "TFIDF", 1, true, y));
    VT_CHECK(equal4(y, 1, 2, 2, 4), "TFIDF %g %g %g %g", y[0], y[1], y[2], y[3]);
    VT_OK(tfidf(x, 1, d1, "TF", 2, false, y));
    VT_CHECK(equal4(y, 0, 2, 1, 1), "bigrams only %g %g %g %g", y[0], y[1], y[2], y[3]);
    VT_OK(tfidf(x, 2, d2, "TF", 1, false, y));
    VT_CHECK(equal4(y, 2, 2, 1, 1) && equal4(y + 4, 0, 0, 0, 0), "batch");
    VT_CHECK(tfidf(x, 1, d1, "BM25", 1, false, y) == VN_ERR_INVALID_ARG, "mode BM25");
    VT_CONTAINS(vn_last_error(), "TF, IDF or TFIDF");
}

int main(void)
{
    VT_RUN(test_causal_conv);
    VT_RUN(test_tfidf);
    return vt_summary();
}
