/*
 * test_attention_fused.c — vinci::FusedAttention against naive attention in
 * double: sequence lengths around the query tile (1, 7, 64, 128, 129, 200),
 * more keys than queries and fewer (past 512 keys several key tiles, so the
 * online softmax rescales), head sizes 32 / 64 / 80, 1 / 4 / 12 heads, every mask broadcast
 * form ([B,1,1,T], [B,1,S,T], [S,T], [B,H,S,T]), causal, and a run in checked
 * mode; plus the shape errors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"

typedef struct fa_case {
    int B, S, T, H, D, Dv;
    int mask; /* 0 none, 1 [B,1,1,T], 2 [B,1,S,T], 3 [S,T], 4 [B,H,S,T] */
    bool causal;
} fa_case;

static int mask_dims(const fa_case *c, int64_t *d)
{
    switch (c->mask) {
    case 1:
        d[0] = c->B, d[1] = 1, d[2] = 1, d[3] = c->T;
        return 4;
    case 2:
        d[0] = c->B, d[1] = 1, d[2] = c->S, d[3] = c->T;
        return 4;
    case 3:
        d[0] = c->S, d[1] = c->T;
        return 2;
    case 4:
        d[0] = c->B, d[1] = c->H, d[2] = c->S, d[3] = c->T;
        return 4;
    default:
        return 0;
    }
}

static double mask_at(const fa_case *c, const float *m, int b, int h, int i, int j)
{
    switch (c->mask) {
    case 1:
        return m[b * c->T + j];
    case 2:
        return m[(b * c->S + i) * c->T + j];
    case 3:
        return m[i * c->T + j];
    case 4:
        return m[((b * c->H + h) * c->S + i) * c->T + j];
    default:
        return 0;
    }
}

/* Y[b, i, h*Dv + e] = sum_j softmax_j(scale q.k + mask) v, in double. */
static void reference(const fa_case *c, double scale, const float *q, const float *k,
                      const float *v, const float *m, float *y)
{
    int hq = c->H * c->D, hv = c->H * c->Dv;
    double *s = malloc((size_t)c->T * sizeof *s);
    for (int b = 0; b < c->B; b++)
        for (int h = 0; h < c->H; h++)
            for (int i = 0; i < c->S; i++) {
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j < c->T; j++) {
                    double dot = 0;
                    for (int d = 0; d < c->D; d++)
                        dot += (double)q[(b * c->S + i) * hq + h * c->D + d] *
                               k[(b * c->T + j) * hq + h * c->D + d];
                    s[j] = dot * scale + mask_at(c, m, b, h, i, j);
                    if (c->causal && j > i) s[j] = -INFINITY;
                    mx = fmax(mx, s[j]);
                }
                for (int j = 0; j < c->T; j++) sum += s[j] = exp(s[j] - mx);
                for (int e = 0; e < c->Dv; e++) {
                    double acc = 0;
                    for (int j = 0; j < c->T; j++)
                        acc += s[j] * v[(b * c->T + j) * hv + h * c->Dv + e];
                    y[(b * c->S + i) * hv + h * c->Dv + e] = (float)(acc / sum);
                }
            }
    free(s);
}

static float *rand_buf(vt_rng *r, size_t n, double lo, double hi)
{
    float *x = malloc((n ? n : 1) * sizeof *x);
    vt_fill(r, x, n, lo, hi);
    return x;
}

static void check(const fa_case *c, bool with_scale, int checked)
{
    vt_rng rng = {(uint64_t)(c->S * 131 + c->T * 7 + c->D + c->mask)};
    size_t nq = (size_t)c->B * c->S * c->H * c->D, nk = (size_t)c->B * c->T * c->H * c->D;
    size_t nv = (size_t)c->B * c->T * c->H * c->Dv, ny = (size_t)c->B * c->S * c->H * c->Dv;
    vn_tensor_desc in[4] = {{VN_F32, 3, {c->B, c->S, c->H * c->D}},
                            {VN_F32, 3, {c->B, c->T, c->H * c->D}},
                            {VN_F32, 3, {c->B, c->T, c->H * c->Dv}},
                            {VN_F32, 0, {0}}};
    in[3].rank = mask_dims(c, in[3].dims);
    size_t nm = c->mask ? (size_t)vn_desc_numel(&in[3]) : 0;
    float *q = rand_buf(&rng, nq, -1, 1), *k = rand_buf(&rng, nk, -1, 1);
    float *v = rand_buf(&rng, nv, -1, 1), *m = rand_buf(&rng, nm, -4, 0);
    for (size_t i = 0; i < nm; i += 5) m[i] = -10000.0f; /* BERT's padding value */
    float *y = calloc(ny ? ny : 1, sizeof *y), *want = calloc(ny ? ny : 1, sizeof *want);
    double scale = with_scale ? 0.3 : 1.0 / sqrt(c->D);
    reference(c, scale, q, k, v, m, want);
    vn_attr a[3] = {{.name = "num_heads", .type = VN_ATTR_INT, .i = c->H},
                    {.name = "causal", .type = VN_ATTR_INT, .i = c->causal},
                    {.name = "scale", .type = VN_ATTR_FLOAT, .f = scale}};
    vn_attrs attrs = {a, with_scale ? 3 : 2};
    vn_device *dev = NULL;
    vn_device_options o = {0};
    o.checked = checked;
    if (checked) VT_OK(vn_device_create(&o, &dev));
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(dev, "vinci::FusedAttention", in, c->mask ? 4 : 3, &attrs, &plan));
    if (plan) {
        vn_tensor ti[4] = {{in[0], q}, {in[1], k}, {in[2], v}, {in[3], m}};
        vn_tensor to[1] = {{*vn_op_plan_output(plan, 0), y}};
        size_t ws = vn_op_plan_workspace(plan);
        void *w = malloc(ws ? ws : 1);
        VT_OK(vn_op_run(plan, ti, c->mask ? 4 : 3, to, 1, w));
        free(w);
        vn_op_plan_destroy(plan);
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < ny; i++)
            if (!(fabsf(y[i] - want[i]) <= 2e-5f + 2e-5f * fabsf(want[i])) && !bad++) first = i;
        VT_CHECK(bad == 0,
                 "B %d S %d T %d H %d D %d Dv %d mask %d causal %d: %zu of %zu off, y[%zu] %g "
                 "want %g",
                 c->B, c->S, c->T, c->H, c->D, c->Dv, c->mask, c->causal, bad, ny, first, y[first],
                 want[first]);
    }
    if (dev) vn_device_destroy(dev);
    free(q), free(k), free(v), free(m), free(y), free(want);
}

static void test_sequence_lengths(void)
{
    static const int lens[] = {1, 7, 64, 128, 129, 200};
    for (int i = 0; i < 6; i++)
        check(&(fa_case){1, lens[i], lens[i], 4, 64, 64, 0, false}, false, 0);
}

static void test_keys_differ(void)
{
    check(&(fa_case){2, 7, 300, 2, 32, 32, 0, false}, false, 0); /* three key tiles */
    check(&(fa_case){1, 129, 5, 3, 64, 64, 0, false}, true, 0);
    check(&(fa_case){1, 33, 257, 1, 80, 80, 1, false}, false, 0);
    /* past 512 keys: several key tiles, online softmax with rescaling */
    check(&(fa_case){1, 40, 1100, 2, 64, 64, 0, false}, false, 0);
    check(&(fa_case){2, 9, 700, 2, 80, 80, 2, false}, true, 0);
}

static void test_head_sizes(void)
{
    check(&(fa_case){1, 40, 40, 1, 32, 32, 0, false}, false, 0);
    check(&(fa_case){1, 40, 40, 12, 80, 80, 0, false}, false, 0);
    check(&(fa_case){1, 64, 64, 12, 64, 64, 0, false}, false, 0);
    check(&(fa_case){1, 20, 30, 2, 64, 40, 0, false}, false, 0); /* Dv != D */
    /* 384 (batch, head, query tile) tiles: more than the blocks launched */
    check(&(fa_case){2, 257, 257, 64, 8, 8, 1, false}, false, 0);
}

static void test_masks(void)
{
    for (int mask = 1; mask <= 4; mask++) {
        check(&(fa_case){2, 37, 37, 4, 32, 32, mask, false}, false, 0);
        check(&(fa_case){2, 128, 128, 4, 64, 64, mask, false}, false, 0);
        check(&(fa_case){1, 9, 200, 2, 64, 64, mask, false}, true, 0);
    }
}

static void test_causal(void)
{
    check(&(fa_case){1, 7, 7, 4, 64, 64, 0, true}, false, 0);
    check(&(fa_case){1, 200, 200, 2, 64, 64, 0, true}, false, 0);
    check(&(fa_case){1, 129, 300, 2, 32, 32, 3, true}, false, 0);
    check(&(fa_case){2, 64, 64, 4, 80, 80, 1, true}, false, 0);
    check(&(fa_case){1, 700, 700, 1, 32, 32, 1, true}, false, 0); /* one and two key tiles */
}

static void test_checked_mode(void)
{
    check(&(fa_case){1, 45, 150, 2, 40, 40, 2, true}, false, 1);
    check(&(fa_case){2, 128, 128, 4, 64, 64, 1, false}, false, 1);
    check(&(fa_case){1, 70, 600, 2, 64, 64, 4, true}, false, 1);
}

static void test_errors(void)
{
    vn_tensor_desc in[4] = {{VN_F32, 3, {1, 8, 64}},
                            {VN_F32, 3, {1, 8, 64}},
                            {VN_F32, 3, {1, 8, 64}},
                            {VN_F32, 4, {1, 2, 8, 8}}};
    vn_attr a = {.name = "num_heads", .type = VN_ATTR_INT, .i = 3};
    vn_attrs attrs = {&a, 1};
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedAttention", in, 3, &attrs, &plan) != VN_OK,
             "3 heads do not divide 64");
    VT_CONTAINS(vn_last_error(), "num_heads");
    a.i = 4;
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedAttention", in, 4, &attrs, &plan) != VN_OK,
             "a mask with 2 heads for 4");
    VT_CONTAINS(vn_last_error(), "mask dim 1");
}

int main(void)
{
    VT_RUN(test_sequence_lengths);
    VT_RUN(test_keys_differ);
    VT_RUN(test_head_sizes);
    VT_RUN(test_masks);
    VT_RUN(test_causal);
    VT_RUN(test_checked_mode);
    VT_RUN(test_errors);
    return vt_summary();
}
