/*
 * test_fuse_norm.c — the O3 "fuse_norm" pass: the element-wise LayerNorm
 * chain (Pow or Mul square, Div or Reciprocal * , with and without
 * gamma / beta, axes as attribute or input) becomes LayerNormalization, the
 * RMSNorm chain RMSNormalization; a chain over the wrong axis or with the
 * centred value read elsewhere stays apart. Every graph gives O0's results
 * at O1 .. O3, and the fused results match a double-precision reference.
 */
#include <math.h>

#include "test_fuse_util.h"

#define R   5
#define C   48
#define EPS 1e-5f

static float xs[R * C], gam[C], bet[C];

typedef struct chain {
    bool rms, mul_square, reciprocal, gamma, beta, axes_input, wrong_axis, extra_reader, two_axes;
} chain;

static void reference(const chain *c, float *want)
{
    for (int i = 0; i < R; i++) {
        const float *x = xs + i * C;
        double mu = 0, var = 0;
        for (int j = 0; !c->rms && j < C; j++) mu += x[j];
        mu /= C;
        for (int j = 0; j < C; j++) var += (x[j] - mu) * (x[j] - mu);
        var /= C;
        for (int j = 0; j < C; j++) {
            double y = (x[j] - mu) / sqrt(var + EPS);
            if (c->gamma) y *= gam[j];
            if (c->beta) y += bet[j];
            want[i * C + j] = (float)y;
        }
    }
}

static void mean(ob *g, const chain *c, const char *name, const char *in, const char *out)
{
    ob a = {0};
    int64_t axis = c->wrong_axis ? 0 : -1;
    if (c->axes_input) {
        fz_node(g, "ReduceMean", name, in, "axes", NULL, out, NULL);
        return;
    }
    int64_t both[2] = {-2, -1}; /* the whole tensor: not a last-axis norm */
    fz_attr_ints(&a, "axes", c->two_axes ? 2 : 1, c->two_axes ? both : &axis);
    fz_node(g, "ReduceMean", name, in, NULL, NULL, out, &a);
}

static vn_graph *build(const chain *c, const char *const *outs)
{
    ob g = {0};
    int64_t xd[2] = {R, C}, cd[1] = {C}, ad[1] = {1}, axis = c->wrong_axis ? 0 : -1;
    fz_init(&g, "gamma", 1, cd, gam);
    fz_init(&g, "beta", 1, cd, bet);
    fz_scalar(&g, "two", 2.0f);
    fz_scalar(&g, "eps", EPS);
    if (c->axes_input) {
        ob t = {0};
        ob_tensor_raw(&t, "axes", OB_INT64, 1, ad, &axis, sizeof axis);
        ob_msg(&g, 5, &t);
    }
    const char *d = "x";
    if (!c->rms) {
        mean(&g, c, "mean", "x", "mu");
        fz_node(&g, "Sub", "sub", "x", "mu", NULL, "d", NULL);
        d = "d";
    }
    if (c->mul_square)
        fz_node(&g, "Mul", "sq", d, d, NULL, "s", NULL);
    else
        fz_node(&g, "Pow", "sq", d, "two", NULL, "s", NULL);
    mean(&g, c, "var", "s", "v");
    fz_node(&g, "Add", "addeps", "v", "eps", NULL, "ve", NULL);
    fz_node(&g, "Sqrt", "sqrt", "ve", NULL, NULL, "sd", NULL);
    const char *n = c->gamma || c->beta ? "n" : "y";
    if (c->reciprocal) {
        fz_node(&g, "Reciprocal", "rcp", "sd", NULL, NULL, "rs", NULL);
        fz_node(&g, "Mul", "norm", "rs", d, NULL, n, NULL);
    } else {
        fz_node(&g, "Div", "norm", d, "sd", NULL, n, NULL);
    }
    if (c->gamma) fz_node(&g, "Mul", "scale", n, "gamma", NULL, c->beta ? "gn" : "y", NULL);
    if (c->beta) fz_node(&g, "Add", "shift", "beta", c->gamma ? "gn" : n, NULL, "y", NULL);
    if (c->extra_reader) fz_node(&g, "Abs", "abs", d, NULL, NULL, "z", NULL);
    fz_input(&g, "x", 2, xd);
    for (int k = 0; outs[k]; k++) fz_output(&g, outs[k]);
    return fz_load(&g, c->axes_input ? 18 : 17);
}

/* Builds, runs the levels; returns O3's fuse_norm changes. */
static int32_t run(const chain *c, bool check_ref)
{
    vt_rng rng = {11};
    vt_fill(&rng, xs, R * C, -2, 3);
    vt_fill(&rng, gam, C, 0.5, 1.5);
    vt_fill(&rng, bet, C, -1, 1);
    const char *one[] = {"y", NULL}, *two[] = {"y", "z", NULL};
    const char *const *outs = c->extra_reader ? two : one;
    vn_graph *gr = build(c, outs);
    vn_named_tensor t = {"x", {{VN_F32, 2, {R, C}}, xs}};
    vn_model_stats s;
    fz_levels(gr, &t, 1, outs, &s);
    if (check_ref) {
        float *got[FZ_MAX_IO] = {0}, want[R * C];
        int64_t n[FZ_MAX_IO] = {0}, bad = 0;
        fz_run(gr, 3, &t, 1, outs, got, n, &s);
        reference(c, want);
        for (int64_t i = 0; n[0] == R * C && i < R * C; i++)
            bad += !(fabsf(got[0][i] - want[i]) <= 1e-4f * fabsf(want[i]) + 1e-5f);
        VT_CHECK(n[0] == R * C && bad == 0, "%lld values off the reference", (long long)bad);
        free(got[0]);
    }
    vn_graph_destroy(gr);
    return fz_changes(&fz_o3, "fuse_norm");
}

static void expect(const chain *c, const char *op)
{
    int32_t changes = run(c, true);
    const vn_pass_report *r = fz_report(&fz_o3, "fuse_norm");
    VT_CHECK(changes == 1 && fz_o3.nodes_after == 1, "changes %d, %d nodes after", (int)changes,
             (int)fz_o3.nodes_after);
    if (r) VT_CONTAINS(r->detail, op);
}

static void test_layernorm_pow_div(void)
{
    expect(&(chain){.gamma = true, .beta = true}, "node 'mean' (ReduceMean)+Sub+Pow");
}

static void test_layernorm_mul_reciprocal_axes_input(void)
{
    expect(&(chain){.mul_square = true, .reciprocal = true, .gamma = true, .axes_input = true},
           "-> LayerNormalization");
}

static void test_layernorm_plain(void)
{
    expect(&(chain){.gamma = false}, "-> LayerNormalization");
}

static void test_rmsnorm(void)
{
    expect(&(chain){.rms = true, .gamma = true}, "node 'sq' (Pow)+ReduceMean+Add+Sqrt+Div+Mul");
}

static void test_rmsnorm_reciprocal(void)
{
    expect(&(chain){.rms = true, .mul_square = true, .reciprocal = true, .gamma = true},
           "-> RMSNormalization");
}

/* Over axis 0 or over axes [-2, -1]: nothing. d = x - mu read by a third node: not a LayerNorm
 * (the rest is still an RMSNorm of d, which may fuse). */
static void test_not_fused(void)
{
    VT_CHECK(run(&(chain){.gamma = true, .beta = true, .wrong_axis = true}, false) == 0,
             "axis 0 fused");
    VT_CHECK(run(&(chain){.rms = true, .gamma = true, .two_axes = true}, false) == 0,
             "axes [-2, -1] fused");
    run(&(chain){.gamma = true, .extra_reader = true}, false);
    const vn_pass_report *r = fz_report(&fz_o3, "fuse_norm");
    VT_CHECK(!r || !strstr(r->detail, "LayerNormalization"), "d with a third reader: %s",
             r ? r->detail : "");
}

int main(void)
{
    VT_RUN(test_layernorm_pow_div);
    VT_RUN(test_layernorm_mul_reciprocal_axes_input);
    VT_RUN(test_layernorm_plain);
    VT_RUN(test_rmsnorm);
    VT_RUN(test_rmsnorm_reciprocal);
    VT_RUN(test_not_fused);
    return vt_summary();
}
