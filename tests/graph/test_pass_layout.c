/*
 * test_pass_layout.c — the O3 layout propagation pass (pass_layout.c):
 *   chain: Conv / MaxPool / residual Add / Clip / channel Concat / a Mul by
 *     a per-channel constant (reordered at compile time) / a Mul by a
 *     [1, C, 1, 1] gate stay in NC1HWC0 with reorders only at the boundaries (graph input, a Concat
 * of 20-channel tensors, a per-channel Mul, Flatten, a mid-graph output); the counts of ToNC1HWC0 /
 * FromNC1HWC0 nodes are the fewest possible and the outputs equal O0's (which never reorders).
 *   clip: a Clip with min > 0 (after a MaxPool, so no conv epilogue takes it)
 *     would make the zero padding lanes non-zero, so it runs plain between
 *     two reorders.
 *   group: a grouped Conv left to an NCHW GEMM stays plain between reorders.
 * Each graph's first conv (3 channels) reads the plain input itself
 * (x_layout = "NCHW"): no reorder of the graph input.
 * O0 runs every operator on NCHW; O3's blocked kernels sum in another order,
 * hence 1e-4 relative.
 */
#include "graph/pass_fuse.h"
#include "test_fuse_util.h"

#define HW 10

static int64_t d4(int64_t *d, int64_t a, int64_t b, int64_t c, int64_t e)
{
    d[0] = a, d[1] = b, d[2] = c, d[3] = e;
    return a * b * c * e;
}

static void conv(ob *g, vt_rng *r, const char *x, const char *w, int64_t k, int64_t c, int64_t ks,
                 const char *y)
{
    int64_t wd[4], pads[4] = {ks / 2, ks / 2, ks / 2, ks / 2};
    d4(wd, k, c, ks, ks);
    fz_rand_init(g, r, w, 4, wd, -0.3, 0.3);
    ob a = {0};
    fz_attr_ints(&a, "pads", 4, pads);
    fz_node(g, "Conv", y, x, w, NULL, y, &a);
}

static void concat(ob *g, const char *a, const char *b, const char *y)
{
    ob at = {0};
    ob_attr_int(&at, "axis", 1);
    fz_node(g, "Concat", y, a, b, NULL, y, &at);
}

static vn_graph *chain_graph(void)
{
    ob g = {0};
    vt_rng r = {5};
    int64_t xd[4], sd[3] = {40, 1, 1}, kd[2] = {2, 2};
    d4(xd, 1, 3, HW, HW);
    fz_input(&g, "x", 4, xd);
    conv(&g, &r, "x", "w1", 20, 3, 3, "c1");
    fz_node(&g, "Relu", "r1", "c1", NULL, NULL, "r1", NULL);
    ob pa = {0};
    fz_attr_ints(&pa, "kernel_shape", 2, kd);
    fz_attr_ints(&pa, "strides", 2, kd);
    fz_node(&g, "MaxPool", "p1", "r1", NULL, NULL, "p1", &pa);
    int64_t s1d[3] = {20, 1, 1};
    fz_rand_init(&g, &r, "s1", 3, s1d, 0.5, 1.5);
    fz_node(&g, "Mul", "ps", "p1", "s1", NULL, "ps", NULL); /* per-channel constant: blocked */
    conv(&g, &r, "ps", "w2", 32, 20, 3, "c2");
    conv(&g, &r, "ps", "w3", 32, 20, 1, "c3");
    fz_node(&g, "Add", "a", "c2", "c3", NULL, "a", NULL);
    fz_scalar(&g, "lo", 0.f);
    fz_scalar(&g, "hi", 0.5f);
    fz_node(&g, "Clip", "k", "a", "lo", "hi", "k", NULL);
    concat(&g, "k", "c3", "cat");               /* 32 + 32: blocked */
    conv(&g, &r, "cat", "w4", 20, 64, 1, "c4"); /* 20 channels */
    concat(&g, "c4", "c4", "cat2");             /* 20 + 20: plain */
    fz_rand_init(&g, &r, "s", 3, sd, 0.5, 1.5);
    fz_node(&g, "Mul", "m", "cat2", "s", NULL, "m", NULL); /* per-channel: plain */
    conv(&g, &r, "m", "w5", 16, 40, 3, "c5");
    fz_node(&g, "GlobalAveragePool", "gap", "c5", NULL, NULL, "gap", NULL);
    fz_node(&g, "Mul", "se", "c5", "gap", NULL, "se", NULL); /* [1,16,1,1] gate: blocked */
    fz_node(&g, "GlobalAveragePool", "gap2", "se", NULL, NULL, "gap2", NULL);
    fz_node(&g, "Flatten", "f", "gap2", NULL, NULL, "f", NULL);
    fz_output(&g, "f");
    fz_output(&g, "k");
    return fz_load(&g, 17);
}

static vn_graph *clip_graph(void)
{
    ob g = {0};
    vt_rng r = {6};
    int64_t xd[4], kd[2] = {2, 2};
    d4(xd, 1, 3, HW, HW);
    fz_input(&g, "x", 4, xd);
    conv(&g, &r, "x", "w1", 20, 3, 3, "c1");
    ob pa = {0};
    fz_attr_ints(&pa, "kernel_shape", 2, kd);
    fz_node(&g, "MaxPool", "p", "c1", NULL, NULL, "p", &pa); /* keeps Clip out of the conv */
    fz_scalar(&g, "lo", 0.25f);
    fz_scalar(&g, "hi", 6.f);
    fz_node(&g, "Clip", "k", "p", "lo", "hi", "k", NULL);
    conv(&g, &r, "k", "w2", 16, 20, 3, "y");
    fz_output(&g, "y");
    return fz_load(&g, 17);
}

/* A grouped conv with 4 channels per group runs an NCHW GEMM: it stays plain. */
static vn_graph *group_graph(void)
{
    ob g = {0};
    vt_rng r = {7};
    int64_t xd[4], wd[4], pads[4] = {1, 1, 1, 1};
    d4(xd, 1, 3, HW, HW);
    fz_input(&g, "x", 4, xd);
    conv(&g, &r, "x", "w1", 16, 3, 3, "c1");
    d4(wd, 16, 4, 3, 3);
    fz_rand_init(&g, &r, "wg", 4, wd, -0.3, 0.3);
    ob a = {0};
    fz_attr_ints(&a, "pads", 4, pads);
    ob_attr_int(&a, "group", 4);
    fz_node(&g, "Conv", "cg", "c1", "wg", NULL, "cg", &a);
    conv(&g, &r, "cg", "w2", 16, 16, 3, "y");
    fz_output(&g, "y");
    return fz_load(&g, 17);
}

/* Compile at O3, check the reorder counts, run and compare with O0. */
static void check(vn_graph *gr, const char *const *outs, int want_to, int want_from,
                  int want_consts, int want_plain_conv, int want_plain_x)
{
    static float x[3 * HW * HW];
    vt_rng rng = {9};
    vt_fill(&rng, x, 3 * HW * HW, -1, 1);
    vn_named_tensor in[1] = {{"x", {{VN_F32, 4, {1, 3, HW, HW}}, x}}};
    vn_compile_options o = {.opt_level = 3};
    vn_model *m = NULL;
    VT_OK(vn_model_compile(gr, &o, &m));
    if (!m) return;
    int to = fz_count_ops(m, "ToNC1HWC0"), from = fz_count_ops(m, "FromNC1HWC0");
    int plain = fz_count_ops(m, "Conv") + fz_count_ops(m, "FusedConv") + fz_count_ops(m, "MaxPool");
    int plain_x = 0; /* blocked convs reading an NCHW X (a stem) */
    for (int32_t i = 0; i < m->num_nodes; i++)
        plain_x += !strcmp(vn_fuse_attr_str(&m->nodes[i], "x_layout", ""), "NCHW");
    VT_CHECK(to == want_to && from == want_from && plain == want_plain_conv &&
                 plain_x == want_plain_x,
             "To %d (want %d), From %d (want %d), plain conv/pool %d (want %d), convs reading "
             "NCHW X %d (want %d)",
             to, want_to, from, want_from, plain, want_plain_conv, plain_x, want_plain_x);
    vn_model_destroy(m);
    float *got[2][FZ_MAX_IO] = {{0}};
    int64_t n[2][FZ_MAX_IO] = {{0}};
    vn_model_stats s[2];
    fz_run(gr, 0, in, 1, outs, got[0], n[0], &s[0]);
    fz_run(gr, 3, in, 1, outs, got[1], n[1], &s[1]);
    VT_CHECK(fz_changes(&s[1], "layout_propagation") ==
                 want_to + want_from + want_consts + want_plain_x,
             "report: %d changes", fz_changes(&s[1], "layout_propagation"));
    for (int k = 0; outs[k]; k++) {
        int64_t bad = 0;
        VT_CHECK(n[1][k] == n[0][k] && n[0][k] > 0, "%s: %lld values, O0 %lld", outs[k],
                 (long long)n[1][k], (long long)n[0][k]);
        for (int64_t i = 0; n[1][k] == n[0][k] && i < n[0][k]; i++)
            bad += !(fabsf(got[1][k][i] - got[0][k][i]) <= 1e-4f * fabsf(got[0][k][i]) + 1e-5f);
        VT_CHECK(bad == 0, "%s: %lld of %lld values differ from O0", outs[k], (long long)bad,
                 (long long)n[0][k]);
        free(got[0][k]);
        free(got[1][k]);
    }
}

static void test_chain(void)
{
    vn_graph *gr = chain_graph();
    const char *outs[] = {"f", "k", NULL};
    /* To: m (the first conv reads x as it is). From: c4 (plain Concat), gap2
     * (Flatten), k (graph output). Constants: s1. */
    check(gr, outs, 1, 3, 1, 0, 1);
    vn_graph_destroy(gr);
}

static void test_clip(void)
{
    vn_graph *gr = clip_graph();
    const char *outs[] = {"y", NULL};
    check(gr, outs, 1, 2, 0, 0, 1);
    vn_graph_destroy(gr);
}

static void test_group(void)
{
    vn_graph *gr = group_graph();
    const char *outs[] = {"y", NULL};
    check(gr, outs, 1, 2, 0, 1, 1); /* To: cg, 16 channels (only stems read NCHW X) */
    vn_graph_destroy(gr);
}

int main(void)
{
    VT_RUN(test_chain);
    VT_RUN(test_clip);
    VT_RUN(test_group);
    return vt_summary();
}
