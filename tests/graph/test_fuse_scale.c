/*
 * test_fuse_scale.c — the O3 "fuse_softmax_scale" pass: attention scores
 * MatMul -> Div / Mul by a constant -> [Add mask] -> Softmax become a
 * FusedMatMul with alpha (and the mask as residual when it has the scores'
 * shape; a broadcast mask stays an Add); a non-constant divisor or a product
 * read elsewhere stays apart. Every graph gives O0's results at O1 .. O3,
 * and the O3 result matches a double-precision softmax(alpha QK + mask).
 */
#include <math.h>

#include "test_fuse_util.h"

#define B 2
#define H 3
#define S 6
#define D 8

static float qs[B * H * S * D], ks[B * H * D * S], full_mask[B * H * S * S], row_mask[S];

typedef struct scores {
    const char *scale_op; /* "Div", "Mul" or NULL */
    int mask;             /* 0 none, 1 full shape, 2 broadcast [S] */
    bool const_scale, extra_reader;
} scores;

static double scale_of(const scores *c)
{
    if (!c->scale_op) return 1.0;
    return !strcmp(c->scale_op, "Div") ? 1.0 / sqrt((double)D) : 0.125;
}

static void reference(const scores *c, float *want)
{
    for (int bh = 0; bh < B * H; bh++)
        for (int i = 0; i < S; i++) {
            double row[S], mx = -INFINITY, sum = 0;
            for (int j = 0; j < S; j++) {
                double dot = 0;
                for (int k = 0; k < D; k++)
                    dot += (double)qs[(bh * S + i) * D + k] * ks[(bh * D + k) * S + j];
                row[j] = dot * scale_of(c);
                if (c->mask == 1) row[j] += full_mask[(bh * S + i) * S + j];
                if (c->mask == 2) row[j] += row_mask[j];
                mx = fmax(mx, row[j]);
            }
            for (int j = 0; j < S; j++) sum += row[j] = exp(row[j] - mx);
            for (int j = 0; j < S; j++) want[(bh * S + i) * S + j] = (float)(row[j] / sum);
        }
}

static vn_graph *build(const scores *c, const char *const *outs)
{
    ob g = {0};
    int64_t qd[4] = {B, H, S, D}, kd[4] = {B, H, D, S}, md[4] = {B, H, S, S}, rd[1] = {S};
    fz_input(&g, "q", 4, qd);
    fz_input(&g, "k", 4, kd);
    if (!c->scale_op)
        fz_scalar(&g, "s", 1.0f); /* unread */
    else if (c->const_scale)
        fz_scalar(&g, "s", !strcmp(c->scale_op, "Div") ? sqrtf((float)D) : 0.125f);
    else
        fz_input(&g, "s", 0, NULL);
    if (c->mask == 1) fz_init(&g, "mask", 4, md, full_mask);
    if (c->mask == 2) fz_init(&g, "mask", 1, rd, row_mask);
    fz_node(&g, "MatMul", "qk", "q", "k", NULL, "p", NULL);
    const char *cur = "p";
    if (c->scale_op) fz_node(&g, c->scale_op, "scale", "p", "s", NULL, cur = "ps", NULL);
    if (c->mask) fz_node(&g, "Add", "mask_add", cur, "mask", NULL, "pm", NULL), cur = "pm";
    fz_node(&g, "Softmax", "softmax", cur, NULL, NULL, "y", NULL);
    if (c->extra_reader) fz_node(&g, "Abs", "abs", "p", NULL, NULL, "z", NULL);
    for (int k = 0; outs[k]; k++) fz_output(&g, outs[k]);
    return fz_load(&g, 17);
}

static int32_t run(const scores *c, bool check_ref)
{
    vt_rng rng = {17};
    vt_fill(&rng, qs, B * H * S * D, -1, 1);
    vt_fill(&rng, ks, B * H * D * S, -1, 1);
    vt_fill(&rng, full_mask, B * H * S * S, -3, 0);
    vt_fill(&rng, row_mask, S, -3, 0);
    float sv = 3.0f;
    const char *one[] = {"y", NULL}, *two[] = {"y", "z", NULL};
    const char *const *outs = c->extra_reader ? two : one;
    vn_graph *gr = build(c, outs);
    vn_named_tensor t[3] = {{"q", {{VN_F32, 4, {B, H, S, D}}, qs}},
                            {"k", {{VN_F32, 4, {B, H, D, S}}, ks}},
                            {"s", {{VN_F32, 0, {0}}, &sv}}};
    vn_model_stats s;
    fz_levels(gr, t, c->const_scale ? 2 : 3, outs, &s);
    if (check_ref) {
        float *got[FZ_MAX_IO] = {0}, want[B * H * S * S];
        int64_t n[FZ_MAX_IO] = {0}, bad = 0, total = B * H * S * S;
        fz_run(gr, 3, t, 2, outs, got, n, &s);
        reference(c, want);
        for (int64_t i = 0; n[0] == total && i < total; i++)
            bad += !(fabsf(got[0][i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-6f);
        VT_CHECK(n[0] == total && bad == 0, "%lld values off the reference", (long long)bad);
        free(got[0]);
    }
    vn_graph_destroy(gr);
    return fz_changes(&fz_o3, "fuse_softmax_scale");
}

static void expect(const scores *c, const char *what)
{
    int32_t changes = run(c, true);
    const vn_pass_report *r = fz_report(&fz_o3, "fuse_softmax_scale");
    VT_CHECK(changes == 1, "changes %d", (int)changes);
    if (r) VT_CONTAINS(r->detail, what);
}

static void test_div(void)
{
    expect(&(scores){"Div", 0, true, false}, "node 'qk' (MatMul)+Div -> vinci::FusedMatMul");
}

static void test_mul_full_mask(void)
{
    expect(&(scores){"Mul", 1, true, false}, "node 'qk' (MatMul)+Mul+Add -> vinci::FusedMatMul");
    VT_CHECK(fz_o3.nodes_after == 2, "%d nodes after", (int)fz_o3.nodes_after);
}

static void test_mask_only(void)
{
    expect(&(scores){NULL, 1, true, false}, "node 'qk' (MatMul)+Add -> vinci::FusedMatMul");
}

static void test_broadcast_mask_stays(void)
{
    expect(&(scores){"Div", 2, true, false}, "node 'qk' (MatMul)+Div -> vinci::FusedMatMul");
    VT_CHECK(fz_o3.nodes_after == 3, "%d nodes after", (int)fz_o3.nodes_after);
}

static void test_not_fused(void)
{
    VT_CHECK(run(&(scores){"Div", 0, false, false}, false) == 0, "input divisor fused");
    VT_CHECK(run(&(scores){"Div", 0, true, true}, false) == 0, "product with two readers fused");
}

int main(void)
{
    VT_RUN(test_div);
    VT_RUN(test_mul_full_mask);
    VT_RUN(test_mask_only);
    VT_RUN(test_broadcast_mask_stays);
    VT_RUN(test_not_fused);
    return vt_summary();
}
