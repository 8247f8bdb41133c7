/*
 * test_fuse_conv.c — the convolution passes:
 *   fold_batchnorm: Conv + BatchNormalization becomes one Conv whose W and B
 *     are the folded constants (checked against the formula in double), and
 *     nothing changes when the Conv's output has a second reader. The unit
 *     runs on a model under construction (BatchNormalization itself is not a
 *     registered operator, so such graphs do not compile at O0 to compare).
 *   fuse_conv_epilogue: Conv + Add(residual) + Relu / Clip become one
 *     vinci::FusedConv with O0's results; an activation before the residual
 *     Add is left alone.
 */
#include "test_fuse_util.h"
#include "graph/pass_fuse.h"

#define CH 3
#define KO 4
#define HW 6

static void conv_bn_graph(ob *g, bool second_reader)
{
    vt_rng rng = {11};
    int64_t xd[4] = {1, CH, HW, HW}, wd[4] = {KO, CH, 3, 3}, kd[1] = {KO};
    fz_input(g, "x", 4, xd);
    fz_rand_init(g, &rng, "w", 4, wd, -1, 1);
    fz_rand_init(g, &rng, "b", 1, kd, -1, 1);
    fz_rand_init(g, &rng, "gamma", 1, kd, 0.5, 1.5);
    fz_rand_init(g, &rng, "beta", 1, kd, -1, 1);
    fz_rand_init(g, &rng, "mean", 1, kd, -1, 1);
    fz_rand_init(g, &rng, "var", 1, kd, 0.5, 2);
    ob ca = {0}, ba = {0};
    int64_t pads[4] = {1, 1, 1, 1};
    fz_attr_ints(&ca, "pads", 4, pads);
    fz_node(g, "Conv", "conv", "x", "w", "b", "c", &ca);
    fz_attr_float(&ba, "epsilon", 1e-3f);
    const char *ins[] = {"c", "gamma", "beta", "mean", "var", NULL}, *outs[] = {"y", NULL};
    ob_node(g, "BatchNormalization", "bn", ins, outs, &ba);
    fz_output(g, "y");
    if (second_reader) {
        fz_node(g, "Relu", "relu", "c", NULL, NULL, "z", NULL);
        fz_output(g, "z");
    }
}

static vn_model *build(vn_graph *gr)
{
    int64_t xd[4] = {1, CH, HW, HW};
    vn_input_shape shape = {"x", 4, {0}};
    memcpy(shape.dims, xd, sizeof xd);
    vn_compile_options o = {.opt_level = 1, .shapes = &shape, .num_shapes = 1};
    vn_model *m = NULL;
    VT_OK(vn_cg_build(gr, &o, &m));
    return m;
}

static const float *const_of(const vn_model *m, const char *name)
{
    for (int32_t v = 0; v < m->num_values; v++)
        if (!strcmp(m->values[v].name, name)) return m->values[v].data;
    return NULL;
}

static void check_folded(const vn_model *m, const vn_cnode *n)
{
    const float *w = const_of(m, "w"), *b = const_of(m, "b"), *ga = const_of(m, "gamma"),
                *be = const_of(m, "beta"), *mu = const_of(m, "mean"), *va = const_of(m, "var");
    const float *w2 = m->values[n->inputs[1]].data, *b2 = m->values[n->inputs[2]].data;
    int bad = 0;
    for (int k = 0; k < KO; k++) {
        double f = ga[k] / sqrt((double)va[k] + 1e-3f);
        bad += fabs(b2[k] - ((b[k] - mu[k]) * f + be[k])) > 1e-5;
        for (int i = 0; i < CH * 9; i++)
            bad += fabs(w2[k * CH * 9 + i] - w[k * CH * 9 + i] * f) > 1e-5;
    }
    VT_CHECK(bad == 0, "%d folded values wrong", bad);
}

static void test_fold_batchnorm(void)
{
    ob g = {0};
    conv_bn_graph(&g, false);
    vn_graph *gr = fz_load(&g, 17);
    vn_model *m = build(gr);
    if (!m) return;
    vn_pass_report r = {"fold_batchnorm", 0, ""};
    VT_OK(vn_pass_fold_batchnorm(m, &r));
    VT_CHECK(r.changes == 1, "changes %d", (int)r.changes);
    VT_CONTAINS(r.detail, "node 'conv' (Conv)+BatchNormalization -> Conv");
    int live = 0, at = -1;
    for (int32_t i = 0; i < m->num_nodes; i++)
        if (!m->nodes[i].dead) live++, at = i;
    VT_CHECK(live == 1 && !strcmp(m->nodes[at].op_type, "Conv"), "%d live nodes", live);
    if (live == 1) {
        const vn_cnode *n = &m->nodes[at];
        VT_CHECK(!strcmp(m->values[n->outputs[0]].name, "y") && n->num_inputs == 3,
                 "the Conv does not write y from 3 inputs");
        check_folded(m, n);
        VT_OK(vn_cg_infer_node(m, at)); /* a plain Conv the registry accepts */
    }
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

static void test_fold_batchnorm_not(void)
{
    ob g = {0};
    conv_bn_graph(&g, true);
    vn_graph *gr = fz_load(&g, 17);
    vn_model *m = build(gr);
    if (!m) return;
    vn_pass_report r = {"fold_batchnorm", 0, ""};
    VT_OK(vn_pass_fold_batchnorm(m, &r));
    VT_CHECK(r.changes == 0, "folded although the Conv output has two readers: %s", r.detail);
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

/* Conv (+ residual r) + act; `act_first` puts the activation before the Add. */
static vn_graph *conv_graph(const char *act, bool residual, bool act_first)
{
    ob g = {0}, ca = {0};
    vt_rng rng = {13};
    int64_t xd[4] = {1, CH, HW, HW}, rd[4] = {1, KO, HW, HW}, wd[4] = {KO, CH, 3, 3}, kd[1] = {KO},
            pads[4] = {1, 1, 1, 1};
    fz_input(&g, "x", 4, xd);
    fz_input(&g, "r", 4, rd);
    fz_rand_init(&g, &rng, "w", 4, wd, -1, 1);
    fz_rand_init(&g, &rng, "b", 1, kd, -1, 1);
    fz_scalar(&g, "lo", -0.5f);
    fz_scalar(&g, "hi", 1.0f);
    fz_attr_ints(&ca, "pads", 4, pads);
    fz_node(&g, "Conv", "conv", "x", "w", "b", "c", &ca);
    const char *cur = "c";
    if (residual && !act_first) fz_node(&g, "Add", "res", cur, "r", NULL, "s", NULL), cur = "s";
    if (!strcmp(act, "Clip"))
        fz_node(&g, "Clip", "act", cur, "lo", "hi", "a", NULL);
    else
        fz_node(&g, act, "act", cur, NULL, NULL, "a", NULL);
    cur = "a";
    if (residual && act_first) fz_node(&g, "Add", "res", cur, "r", NULL, "s2", NULL), cur = "s2";
    fz_node(&g, "Identity", "out", cur, NULL, NULL, "y", NULL);
    fz_output(&g, "y");
    return fz_load(&g, 17);
}

static void run_conv(vn_graph *gr, vn_model_stats *s)
{
    static float x[CH * HW * HW], r[KO * HW * HW];
    vt_rng rng = {17};
    vt_fill(&rng, x, CH * HW * HW, -1, 1);
    vt_fill(&rng, r, KO * HW * HW, -1, 1);
    vn_named_tensor in[2] = {{"x", {{VN_F32, 4, {1, CH, HW, HW}}, x}},
                             {"r", {{VN_F32, 4, {1, KO, HW, HW}}, r}}};
    const char *outs[] = {"y", NULL};
    fz_levels(gr, in, 2, outs, s);
}

static void test_conv_epilogue(void)
{
    const char *acts[] = {"Relu", "Clip", "Sigmoid"};
    for (int i = 0; i < 3; i++) {
        vn_graph *gr = conv_graph(acts[i], i != 2, false);
        vn_model_stats s;
        run_conv(gr, &s);
        const vn_pass_report *r = fz_report(&s, "fuse_conv_epilogue");
        VT_CHECK(r && r->changes == 1 && s.nodes_after == 1, "%s: changes %d, %d nodes", acts[i],
                 r ? (int)r->changes : -1, (int)s.nodes_after);
        if (r) VT_CONTAINS(r->detail, "-> vinci::FusedConv");
        vn_graph_destroy(gr);
    }
}

/* Relu before the residual Add: only Conv + Relu fuse, the Add stays. */
static void test_conv_epilogue_order(void)
{
    vn_graph *gr = conv_graph("Relu", true, true);
    vn_model_stats s;
    run_conv(gr, &s);
    const vn_pass_report *r = fz_report(&s, "fuse_conv_epilogue");
    VT_CHECK(r && r->changes == 1 && s.nodes_after == 2, "changes %d, %d nodes",
             r ? (int)r->changes : -1, (int)s.nodes_after);
    if (r) VT_CHECK(!strstr(r->detail, "Add"), "Add fused after the activation: %s", r->detail);
    vn_graph_destroy(gr);
}

int main(void)
{
    VT_RUN(test_fold_batchnorm);
    VT_RUN(test_fold_batchnorm_not);
    VT_RUN(test_conv_epilogue);
    VT_RUN(test_conv_epilogue_order);
    return vt_summary();
}
