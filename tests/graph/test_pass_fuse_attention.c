/*
 * test_pass_fuse_attention.c — the O3 "fuse_attention" pass: torch's
 * multi-head attention (Reshape + Transpose of q / k / v, MatMul, Div or Mul
 * by a constant, optional mask Add, Softmax, MatMul, Transpose, Reshape)
 * becomes one vinci::FusedAttention whose output matches O0 and a double
 * reference; a wrong perm, a non-constant scale, a second reader of the
 * scores or a softmax on another axis leave the graph alone.
 */
#include <math.h>

#include "test_fuse_util.h"

#define B  2
#define S  9
#define H  3
#define D  8
#define HD (H * D)

static vn_model_stats last_o3;
static float qs[B * S * HD], ks[B * S * HD], vs[B * S * HD], mask_b11t[B * S];

typedef struct variant {
    const char *scale_op; /* "Div", "Mul" or NULL */
    int mask;             /* 0 none, 1 [B,1,1,T] */
    bool wrong_perm, input_scale, extra_reader, softmax_axis2;
} variant;

static double scale_of(const variant *c)
{
    if (!c->scale_op) return 1.0;
    return !strcmp(c->scale_op, "Div") ? 1.0 / sqrt((double)D) : 0.25;
}

/* Y[b, i, h*D + e] in double. */
static void reference(const variant *c, float *want)
{
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < S; i++) {
                double row[S], mx = -INFINITY, sum = 0;
                for (int j = 0; j < S; j++) {
                    double dot = 0;
                    for (int e = 0; e < D; e++)
                        dot += (double)qs[(b * S + i) * HD + h * D + e] *
                               ks[(b * S + j) * HD + h * D + e];
                    row[j] = dot * scale_of(c) + (c->mask ? mask_b11t[b * S + j] : 0.0);
                    mx = fmax(mx, row[j]);
                }
                for (int j = 0; j < S; j++) sum += row[j] = exp(row[j] - mx);
                for (int e = 0; e < D; e++) {
                    double acc = 0;
                    for (int j = 0; j < S; j++) acc += row[j] * vs[(b * S + j) * HD + h * D + e];
                    want[(b * S + i) * HD + h * D + e] = (float)(acc / sum);
                }
            }
}

static void transpose(ob *g, const char *name, const char *in, const char *out, const int64_t *p)
{
    ob a = {0};
    fz_attr_ints(&a, "perm", 4, p);
    fz_node(g, "Transpose", name, in, NULL, NULL, out, &a);
}

static void shape_const(ob *g, const char *name, int rank, const int64_t *v)
{
    ob t = {0};
    int64_t d[1] = {rank};
    ob_tensor_raw(&t, name, OB_INT64, 1, d, v, (size_t)rank * sizeof *v);
    ob_msg(g, 5, &t);
}

static vn_graph *build(const variant *c, const char *const *outs)
{
    ob g = {0};
    int64_t xd[3] = {B, S, HD}, heads[4] = {B, S, H, D}, merge[3] = {B, S, HD};
    int64_t md[4] = {B, 1, 1, S};
    static const int64_t bshd[4] = {0, 2, 1, 3}, bhdt[4] = {0, 2, 3, 1};
    fz_input(&g, "q", 3, xd);
    fz_input(&g, "k", 3, xd);
    fz_input(&g, "v", 3, xd);
    shape_const(&g, "heads", 4, heads);
    shape_const(&g, "merge", 3, merge);
    if (c->input_scale)
        fz_input(&g, "s", 0, NULL);
    else
        fz_scalar(&g, "s", !c->scale_op || !strcmp(c->scale_op, "Div") ? sqrtf((float)D) : 0.25f);
    if (c->mask == 1) fz_init(&g, "mask", 4, md, mask_b11t);
    fz_node(&g, "Reshape", "rq", "q", "heads", NULL, "q4", NULL);
    fz_node(&g, "Reshape", "rk", "k", "heads", NULL, "k4", NULL);
    fz_node(&g, "Reshape", "rv", "v", "heads", NULL, "v4", NULL);
    transpose(&g, "tq", "q4", "qt", bshd);
    transpose(&g, "tk", "k4", "kt", bhdt);
    transpose(&g, "tv", "v4", "vt", bshd);
    fz_node(&g, "MatMul", "qk", "qt", "kt", NULL, "p", NULL);
    const char *cur = "p";
    if (c->scale_op) fz_node(&g, c->scale_op, "scale", "p", "s", NULL, cur = "ps", NULL);
    if (c->mask) fz_node(&g, "Add", "mask_add", cur, "mask", NULL, "pm", NULL), cur = "pm";
    ob sa = {0};
    ob_attr_int(&sa, "axis", c->softmax_axis2 ? 2 : -1);
    fz_node(&g, "Softmax", "softmax", cur, NULL, NULL, "pr", &sa);
    fz_node(&g, "MatMul", "av", "pr", "vt", NULL, "o4", NULL);
    /* the wrong perm makes [B,S,D,H]: still a valid graph, not attention's */
    transpose(&g, "to", "o4", "ot", c->wrong_perm ? bhdt : bshd);
    fz_node(&g, "Reshape", "ro", "ot", "merge", NULL, "y", NULL);
    if (c->extra_reader) fz_node(&g, "Abs", "abs", "p", NULL, NULL, "z", NULL);
    for (int k = 0; outs[k]; k++) fz_output(&g, outs[k]);
    return fz_load(&g, 17);
}

/* Compiles at O0 and O3: the O3 output must match O0 (and, when fused, the
 * double reference). Returns fuse_attention's change count at O3. */
static int32_t run(const variant *c)
{
    vt_rng rng = {23};
    vt_fill(&rng, qs, B * S * HD, -1, 1);
    vt_fill(&rng, ks, B * S * HD, -1, 1);
    vt_fill(&rng, vs, B * S * HD, -1, 1);
    vt_fill(&rng, mask_b11t, B * S, -3, 0);
    float sv = sqrtf((float)D);
    const char *one[] = {"y", NULL}, *two[] = {"y", "z", NULL};
    const char *const *outs = c->extra_reader ? two : one;
    vn_graph *gr = build(c, outs);
    vn_named_tensor t[4] = {{"q", {{VN_F32, 3, {B, S, HD}}, qs}},
                            {"k", {{VN_F32, 3, {B, S, HD}}, ks}},
                            {"v", {{VN_F32, 3, {B, S, HD}}, vs}},
                            {"s", {{VN_F32, 0, {0}}, &sv}}};
    float *got[2][FZ_MAX_IO] = {{0}}, want[B * S * HD];
    int64_t n[2][FZ_MAX_IO] = {{0}}, total = B * S * HD, bad = 0, bad_ref = 0;
    vn_model_stats s0, s3;
    int nin = c->input_scale ? 4 : 3;
    fz_run(gr, 0, t, nin, outs, got[0], n[0], &s0);
    fz_run(gr, 3, t, nin, outs, got[1], n[1], &s3);
    int32_t changes = fz_changes(&s3, "fuse_attention");
    last_o3 = s3;
    reference(c, want);
    for (int64_t i = 0; n[0][0] == total && n[1][0] == total && i < total; i++) {
        bad += !(fabsf(got[1][0][i] - got[0][0][i]) <= 1e-5f + 1e-5f * fabsf(got[0][0][i]));
        bad_ref += !(fabsf(got[1][0][i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i]));
    }
    VT_CHECK(n[0][0] == total && n[1][0] == total, "outputs %lld / %lld values", (long long)n[0][0],
             (long long)n[1][0]);
    VT_CHECK(bad == 0, "O3 differs from O0 in %lld values", (long long)bad);
    if (changes == 1 && !c->wrong_perm)
        VT_CHECK(bad_ref == 0, "%lld values off the reference", (long long)bad_ref);
    for (int l = 0; l < 2; l++)
        for (int k = 0; outs[k]; k++) free(got[l][k]);
    vn_graph_destroy(gr);
    return changes;
}

static void expect_fused(const variant *c, const char *what)
{
    VT_CHECK(run(c) == 1, "not fused");
    const vn_pass_report *r = fz_report(&last_o3, "fuse_attention");
    if (r) VT_CONTAINS(r->detail, what);
}

static void test_div_no_mask(void)
{
    expect_fused(&(variant){"Div", 0, false, false, false, false},
                 "node 'qk' (MatMul)+Reshape+Transpose+Reshape+Transpose+Div+Softmax+Reshape+"
                 "Transpose+MatMul+Transpose+Reshape -> vinci::FusedAttention");
}

static void test_mul_with_mask(void)
{
    expect_fused(&(variant){"Mul", 1, false, false, false, false}, "+Mul+Add+Softmax+");
}

static void test_no_scale(void)
{
    expect_fused(&(variant){NULL, 1, false, false, false, false}, "+Add+Softmax+");
}

static void test_left_alone(void)
{
    VT_CHECK(run(&(variant){"Div", 0, false, true, false, false}) == 0, "input scale fused");
    VT_CHECK(run(&(variant){"Div", 0, false, false, true, false}) == 0, "scores read twice fused");
    VT_CHECK(run(&(variant){"Div", 0, false, false, false, true}) == 0, "softmax axis 2 fused");
}

static void test_wrong_perm(void)
{
    VT_CHECK(run(&(variant){"Div", 0, true, false, false, false}) == 0, "wrong perm fused");
}

int main(void)
{
    VT_RUN(test_div_no_mask);
    VT_RUN(test_mul_with_mask);
    VT_RUN(test_no_scale);
    VT_RUN(test_left_alone);
    VT_RUN(test_wrong_perm);
    return vt_summary();
}
