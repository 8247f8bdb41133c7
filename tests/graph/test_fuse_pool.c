/*
 * test_fuse_pool.c — the O3 pass fuse_conv_pool (pass_fuse_pool.c): a stem
 * conv reading the plain input, with or without its ReLU / Sigmoid, followed by a
 * MaxPool becomes one FusedConvNC1HWC0 with pool_* attributes, and every
 * level's outputs still equal O0's; a conv whose output has another reader,
 * or a second conv (blocked input), keeps its MaxPool. A conv (with its
 * ReLU, or a residual Add and ReLU) followed by a GlobalAveragePool becomes
 * one node with pool_global = 1, unless its map has another reader. The
 * fused models round-trip through a .vnm.
 */
#include "graph/pass_fuse.h"
#include "test_fuse_util.h"
#include "vnm_fixture.h"

#define HW 23

static void conv(ob *g, vt_rng *r, const char *x, const char *w, int64_t k, int64_t c,
                 const char *y)
{
    int64_t wd[4] = {k, c, 3, 3}, pads[4] = {1, 1, 1, 1};
    fz_rand_init(g, r, w, 4, wd, -0.3, 0.3);
    ob a = {0};
    fz_attr_ints(&a, "pads", 4, pads);
    fz_node(g, "Conv", y, x, w, NULL, y, &a);
}

static void maxpool(ob *g, const char *x, const char *y, int64_t ceil_mode)
{
    int64_t k[2] = {3, 3}, s[2] = {2, 2};
    ob a = {0};
    fz_attr_ints(&a, "kernel_shape", 2, k);
    fz_attr_ints(&a, "strides", 2, s);
    ob_attr_int(&a, "ceil_mode", ceil_mode);
    fz_node(g, "MaxPool", y, x, NULL, NULL, y, &a);
}

/* The image input "x" [1, 3, HW, HW], random from seed. */
static vn_named_tensor image(uint64_t seed)
{
    static float x[3 * HW * HW];
    vt_rng rng = {seed};
    vt_fill(&rng, x, 3 * HW * HW, -1, 1);
    return (vn_named_tensor){"x", {{VN_F32, 4, {1, 3, HW, HW}}, x}};
}

/* O3 has want_pools `pool` nodes (or their NC1HWC0 twins) left and
 * fuse_conv_pool reports want_fused changes; every level equals O0. */
static void check(vn_graph *gr, const char *const *outs, const char *pool, int want_pools,
                  int want_fused)
{
    vn_named_tensor in[1] = {image(3)};
    vn_compile_options o = {.opt_level = 3};
    vn_model *m = NULL;
    VT_OK(vn_model_compile(gr, &o, &m));
    if (m) {
        char blocked[64];
        snprintf(blocked, sizeof blocked, "%sNC1HWC0", pool);
        int pools = fz_count_ops(m, blocked) + fz_count_ops(m, pool);
        VT_CHECK(pools == want_pools, "%d %s left at O3, want %d", pools, pool, want_pools);
        vn_model_destroy(m);
    }
    vn_model_stats o2;
    fz_levels(gr, in, 1, outs, &o2);
    VT_CHECK(fz_changes(&fz_o3, "fuse_conv_pool") == want_fused, "fuse_conv_pool: %d changes",
             fz_changes(&fz_o3, "fuse_conv_pool"));
}

/* The O3 model through a .vnm and back: the pooled stem's attributes and
 * its dense plain-input weights (their own blob tag) survive, and every
 * output is byte-identical. */
static void check_vnm(vn_graph *gr, const char *name)
{
    vn_named_tensor in[1] = {image(4)};
    check_o3_round_trip(gr, in, 1, name);
}

/* x -> conv (+ Relu / Sigmoid) -> MaxPool -> conv -> MaxPool -> y: the stem's
 * pool fuses, not the second. */
static void test_stem(void)
{
    static const char *const acts[] = {NULL, "Relu", "Sigmoid"};
    for (int act = 0; act < 3; act++) {
        ob g = {0};
        vt_rng r = {11};
        int64_t xd[4] = {1, 3, HW, HW};
        fz_input(&g, "x", 4, xd);
        conv(&g, &r, "x", "w1", 20, 3, "c1");
        if (acts[act]) fz_node(&g, acts[act], "r1", "c1", NULL, NULL, "r1", NULL);
        maxpool(&g, acts[act] ? "r1" : "c1", "p1", 1);
        conv(&g, &r, "p1", "w2", 16, 20, "c2");
        fz_node(&g, "Relu", "r2", "c2", NULL, NULL, "r2", NULL);
        maxpool(&g, "r2", "y", 0);
        fz_output(&g, "y");
        vn_graph *gr = fz_load(&g, 17);
        const char *outs[] = {"y", NULL};
        check(gr, outs, "MaxPool", 1, 1);
        check_vnm(gr, "fuse_pool");
        vn_graph_destroy(gr);
    }
}

/* The stem's output is also a graph output: its pool stays. */
static void test_other_reader(void)
{
    ob g = {0};
    vt_rng r = {12};
    int64_t xd[4] = {1, 3, HW, HW};
    fz_input(&g, "x", 4, xd);
    conv(&g, &r, "x", "w1", 20, 3, "c1");
    fz_node(&g, "Relu", "r1", "c1", NULL, NULL, "r1", NULL);
    maxpool(&g, "r1", "y", 0);
    fz_output(&g, "y");
    fz_output(&g, "r1");
    vn_graph *gr = fz_load(&g, 17);
    const char *outs[] = {"y", "r1", NULL};
    check(gr, outs, "MaxPool", 1, 0);
    vn_graph_destroy(gr);
}

/* x -> conv -> Relu -> conv 1x1 [-> Add(conv output) ] -> Relu ->
 * GlobalAveragePool -> y; variant 2 also outputs the pooled map. */
static vn_graph *global_net(int v)
{
    ob g = {0};
    vt_rng r = {13};
    int64_t xd[4] = {1, 3, HW, HW}, wd[4] = {24, 20, 1, 1};
    fz_input(&g, "x", 4, xd);
    conv(&g, &r, "x", "w1", 20, 3, "c1");
    fz_node(&g, "Relu", "r1", "c1", NULL, NULL, "r1", NULL);
    fz_rand_init(&g, &r, "w2", 4, wd, -0.3, 0.3);
    fz_node(&g, "Conv", "c2", "r1", "w2", NULL, "c2", NULL);
    const char *last = "c2";
    if (v == 1) { /* a residual: conv + conv -> Add */
        conv(&g, &r, "r1", "w3", 24, 20, "c3");
        fz_node(&g, "Add", "s", "c2", "c3", NULL, "s", NULL);
        last = "s";
    }
    fz_node(&g, "Relu", "r2", last, NULL, NULL, "r2", NULL);
    fz_node(&g, "GlobalAveragePool", "y", "r2", NULL, NULL, "y", NULL);
    fz_output(&g, "y");
    if (v == 2) fz_output(&g, "r2");
    return fz_load(&g, 17);
}

/* The last conv takes the pool (pool_global), O3 equals O0; with the map
 * also a graph output, the pool stays. */
static void test_global(void)
{
    for (int v = 0; v < 3; v++) {
        vn_graph *gr = global_net(v);
        const char *outs[] = {"y", v == 2 ? "r2" : NULL, NULL};
        check(gr, outs, "GlobalAveragePool", v == 2, v != 2);
        if (v != 2) check_vnm(gr, "fuse_pool_global");
        vn_graph_destroy(gr);
    }
}

/* --precision bf16 marks the fused node after fusion: it compiles and runs
 * (the pooled conv stays f32). */
static void test_global_bf16(void)
{
    vn_graph *gr = global_net(0);
    vn_named_tensor in[1] = {image(6)};
    const char *outs[] = {"y", NULL};
    fz_check_bf16(gr, in, 1, outs, "fuse_conv_pool", 1, 24);
    vn_graph_destroy(gr);
}

int main(void)
{
    VT_RUN(test_stem);
    VT_RUN(test_other_reader);
    VT_RUN(test_global);
    VT_RUN(test_global_bf16);
    return vt_summary();
}
