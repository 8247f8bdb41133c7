/*
 * test_fuse_gelu.c — the O3 "fuse_gelu" pass: the erf and tanh GELU chains
 * become one Gelu (folded into FusedMatMul after a MatMul + bias), in every
 * Mul order and with Div or Mul by the 1/sqrt2 constant; chains with a wrong
 * constant or an intermediate read elsewhere stay apart. Every graph gives
 * O0's results at O1 .. O3, and the fused results match a double-precision
 * GELU.
 */
#include <math.h>

#include "test_fuse_util.h"

#define R 4
#define C 32

static float xs[R * C];

static vn_graph *finish(ob *g, const char *const *outs)
{
    int64_t xd[2] = {R, C};
    fz_input(g, "x", 2, xd);
    for (int k = 0; outs[k]; k++) fz_output(g, outs[k]);
    return fz_load(g, 17);
}

static double gelu_ref(double x, bool tanh_form)
{
    if (tanh_form) return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
}

/* Compile at O3, run, and compare y with want(x) (n values). */
static void check_o3(vn_graph *gr, const float *want, int64_t n)
{
    vn_named_tensor t = {"x", {{VN_F32, 2, {R, C}}, xs}};
    const char *outs[] = {"y", NULL};
    float *got[FZ_MAX_IO] = {0};
    int64_t cnt[FZ_MAX_IO] = {0};
    vn_model_stats s;
    fz_run(gr, 3, &t, 1, outs, got, cnt, &s);
    int64_t bad = 0;
    for (int64_t i = 0; cnt[0] == n && i < n; i++)
        bad += !(fabsf(got[0][i] - want[i]) <= 1e-5f * fabsf(want[i]) + 1e-6f);
    VT_CHECK(cnt[0] == n && bad == 0, "%lld of %lld values off the reference", (long long)bad,
             (long long)n);
    free(got[0]);
}

/* Runs the levels; returns O3's fuse_gelu changes and node count. */
static int32_t levels(vn_graph *gr, const char *const *outs, int32_t *nodes_after)
{
    vt_rng rng = {5};
    vt_fill(&rng, xs, R * C, -3, 3);
    vn_named_tensor t = {"x", {{VN_F32, 2, {R, C}}, xs}};
    vn_model_stats s;
    fz_levels(gr, &t, 1, outs, &s);
    VT_CHECK(fz_changes(&s, "fuse_gelu") <= 0, "O2 ran fuse_gelu");
    *nodes_after = fz_o3.nodes_after;
    return fz_changes(&fz_o3, "fuse_gelu");
}

/* The PyTorch export: MatMul + bias, x / sqrt2, Erf, + 1, x * e, * 0.5. */
static void test_erf_after_matmul(void)
{
    ob g = {0};
    vt_rng rng = {9};
    int64_t wd[2] = {C, C}, cd[1] = {C};
    float w[C * C], c[C];
    vt_fill(&rng, w, C * C, -0.3, 0.3);
    vt_fill(&rng, c, C, -0.5, 0.5);
    fz_init(&g, "w", 2, wd, w);
    fz_init(&g, "c", 1, cd, c);
    fz_scalar(&g, "sqrt2", (float)sqrt(2.0));
    fz_scalar(&g, "one", 1.0f);
    fz_scalar(&g, "half", 0.5f);
    fz_node(&g, "MatMul", "mm", "x", "w", NULL, "p", NULL);
    fz_node(&g, "Add", "bias", "p", "c", NULL, "h", NULL);
    fz_node(&g, "Div", "div", "h", "sqrt2", NULL, "d", NULL);
    fz_node(&g, "Erf", "erf", "d", NULL, NULL, "e", NULL);
    fz_node(&g, "Add", "add", "e", "one", NULL, "a", NULL);
    fz_node(&g, "Mul", "mul", "h", "a", NULL, "m", NULL);
    fz_node(&g, "Mul", "mul_1", "m", "half", NULL, "y", NULL);
    const char *outs[] = {"y", NULL};
    vn_graph *gr = finish(&g, outs);
    int32_t nodes;
    VT_CHECK(levels(gr, outs, &nodes) == 1 && nodes == 1, "fused %d, %d nodes",
             (int)fz_changes(&fz_o3, "fuse_gelu"), (int)nodes);
    const vn_pass_report *r = fz_report(&fz_o3, "fuse_gelu");
    if (r) VT_CONTAINS(r->detail, "node 'div' (Div)+Erf+Add+Mul+Mul -> Gelu");
    r = fz_report(&fz_o3, "fuse_matmul_epilogue");
    if (r) VT_CONTAINS(r->detail, "(MatMul)+Add+Gelu -> vinci::FusedMatMul");
    float want[R * C];
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            double h = c[j];
            for (int k = 0; k < C; k++) h += (double)xs[i * C + k] * w[k * C + j];
            want[i * C + j] = (float)gelu_ref(h, false);
        }
    check_o3(gr, want, R * C);
    vn_graph_destroy(gr);
}

/* Mul by 1/sqrt2, and (0.5 x) e: a standalone Gelu. */
static void test_erf_half_first(void)
{
    ob g = {0};
    fz_scalar(&g, "rsqrt2", (float)(1 / sqrt(2.0)));
    fz_scalar(&g, "one", 1.0f);
    fz_scalar(&g, "half", 0.5f);
    fz_node(&g, "Mul", "scale", "rsqrt2", "x", NULL, "d", NULL);
    fz_node(&g, "Erf", "erf", "d", NULL, NULL, "e", NULL);
    fz_node(&g, "Add", "add", "one", "e", NULL, "a", NULL);
    fz_node(&g, "Mul", "hx", "x", "half", NULL, "h", NULL);
    fz_node(&g, "Mul", "mul", "a", "h", NULL, "y", NULL);
    const char *outs[] = {"y", NULL};
    vn_graph *gr = finish(&g, outs);
    int32_t nodes;
    VT_CHECK(levels(gr, outs, &nodes) == 1 && nodes == 1, "fused %d, %d nodes",
             (int)fz_changes(&fz_o3, "fuse_gelu"), (int)nodes);
    float want[R * C];
    for (int i = 0; i < R * C; i++) want[i] = (float)gelu_ref(xs[i], false);
    check_o3(gr, want, R * C);
    vn_graph_destroy(gr);
}

/* The tanh form, x^3 by Pow or by two Muls, and x (0.5 e). */
static void tanh_case(bool pow_cube)
{
    ob g = {0};
    fz_scalar(&g, "three", 3.0f);
    fz_scalar(&g, "k", 0.044715f);
    fz_scalar(&g, "s", (float)sqrt(2 / M_PI));
    fz_scalar(&g, "one", 1.0f);
    fz_scalar(&g, "half", 0.5f);
    if (pow_cube) {
        fz_node(&g, "Pow", "pow", "x", "three", NULL, "x3", NULL);
    } else {
        fz_node(&g, "Mul", "sq", "x", "x", NULL, "x2", NULL);
        fz_node(&g, "Mul", "cube", "x2", "x", NULL, "x3", NULL);
    }
    fz_node(&g, "Mul", "kx3", "x3", "k", NULL, "t", NULL);
    fz_node(&g, "Add", "sum", "x", "t", NULL, "u", NULL);
    fz_node(&g, "Mul", "su", "s", "u", NULL, "v", NULL);
    fz_node(&g, "Tanh", "tanh", "v", NULL, NULL, "e", NULL);
    fz_node(&g, "Add", "add", "e", "one", NULL, "a", NULL);
    fz_node(&g, "Mul", "ha", "half", "a", NULL, "h", NULL);
    fz_node(&g, "Mul", "mul", "x", "h", NULL, "y", NULL);
    const char *outs[] = {"y", NULL};
    vn_graph *gr = finish(&g, outs);
    int32_t nodes;
    VT_CHECK(levels(gr, outs, &nodes) == 1 && nodes == 1, "fused %d, %d nodes",
             (int)fz_changes(&fz_o3, "fuse_gelu"), (int)nodes);
    float want[R * C];
    for (int i = 0; i < R * C; i++) want[i] = (float)gelu_ref(xs[i], true);
    check_o3(gr, want, R * C);
    vn_graph_destroy(gr);
}

static void test_tanh_pow(void)
{
    tanh_case(true);
}

static void test_tanh_muls(void)
{
    tanh_case(false);
}

/* Not GELU: Erf output also a graph output; a Div by sqrt3. */
static void test_negative(void)
{
    for (int variant = 0; variant < 2; variant++) {
        ob g = {0};
        fz_scalar(&g, "sqrt2", (float)sqrt(variant ? 3.0 : 2.0));
        fz_scalar(&g, "one", 1.0f);
        fz_scalar(&g, "half", 0.5f);
        fz_node(&g, "Div", "div", "x", "sqrt2", NULL, "d", NULL);
        fz_node(&g, "Erf", "erf", "d", NULL, NULL, "e", NULL);
        fz_node(&g, "Add", "add", "e", "one", NULL, "a", NULL);
        fz_node(&g, "Mul", "mul", "x", "a", NULL, "m", NULL);
        fz_node(&g, "Mul", "mul_1", "m", "half", NULL, "y", NULL);
        const char *two[] = {"y", "e", NULL}, *one[] = {"y", NULL};
        const char *const *outs = variant ? one : two;
        vn_graph *gr = finish(&g, outs);
        int32_t nodes;
        VT_CHECK(levels(gr, outs, &nodes) == 0, "variant %d fused", variant);
        vn_graph_destroy(gr);
    }
}

int main(void)
{
    VT_RUN(test_erf_after_matmul);
    VT_RUN(test_erf_half_first);
    VT_RUN(test_tanh_pow);
    VT_RUN(test_tanh_muls);
    VT_RUN(test_negative);
    return vt_summary();
}
