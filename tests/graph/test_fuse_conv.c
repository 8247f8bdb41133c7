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

/* Conv (algorithm `algo`, K x K) + Add(residual) + Relu, C = K = 16 channels
 * on a 12 x 12 map. The residual is Relu(r), an arena value the Add reads
 * last, or (`self`) the conv's own input Relu(x). */
static vn_graph *residual_graph(const char *algo, int64_t k, bool self)
{
    ob g = {0}, ca = {0};
    vt_rng rng = {19};
    int64_t xd[4] = {1, 16, 12, 12}, wd[4] = {16, 16, k, k}, kd[1] = {16}, p = k / 2;
    int64_t pads[4] = {p, p, p, p};
    fz_input(&g, "x", 4, xd);
    fz_input(&g, "r", 4, xd);
    fz_rand_init(&g, &rng, "w", 4, wd, -0.3, 0.3);
    fz_rand_init(&g, &rng, "b", 1, kd, -1, 1);
    fz_attr_ints(&ca, "pads", 4, pads);
    fz_attr_str(&ca, "algo", algo);
    fz_node(&g, "Relu", "rx", "x", NULL, NULL, "x2", NULL);
    fz_node(&g, "Relu", "rr", "r", NULL, NULL, "r2", NULL);
    fz_node(&g, "Conv", "conv", "x2", "w", "b", "c", &ca);
    fz_node(&g, "Add", "res", "c", self ? "x2" : "r2", NULL, "s", NULL);
    fz_node(&g, "Relu", "act", "s", NULL, NULL, "a", NULL);
    fz_node(&g, "Identity", "out", "a", NULL, NULL, "y", NULL);
    fz_output(&g, "y");
    if (self) fz_output(&g, "r2");
    return fz_load(&g, 17);
}

/* O3 in bf16 against O0 in f32 within bf16's rounding (a residual lost
 * under the output would be off by its own size, about 1). */
static void residual_bf16(vn_graph *gr, const vn_named_tensor *in, const char *algo)
{
    const char *outs[] = {"y", NULL};
    float *f32[FZ_MAX_IO] = {NULL}, *bf16[FZ_MAX_IO] = {NULL};
    int64_t nf[FZ_MAX_IO] = {0}, nb[FZ_MAX_IO] = {0}, bad = 0;
    vn_model_stats s;
    fz_run(gr, 0, in, 2, outs, f32, nf, &s);
    fz_precision = VN_PRECISION_BF16;
    fz_run(gr, 3, in, 2, outs, bf16, nb, &s);
    fz_precision = VN_PRECISION_F32;
    VT_CHECK(nf[0] == nb[0] && nf[0] > 0, "%s bf16: %lld values, f32 %lld", algo, (long long)nb[0],
             (long long)nf[0]);
    for (int64_t i = 0; nf[0] == nb[0] && i < nf[0]; i++)
        bad += !(fabsf(bf16[0][i] - f32[0][i]) <= 0.05f + 0.02f * fabsf(f32[0][i]));
    VT_CHECK(bad == 0, "%s bf16: %lld of %lld values off", algo, (long long)bad, (long long)nf[0]);
    free(f32[0]), free(bf16[0]);
}

/* A fused conv's output takes over its residual's memory where the conv
 * reads that residual last (compile_memory.c, may_share): one activation in
 * place at O3 (the only arena value read last by a node that may share it),
 * O0's results from every algorithm; none when the residual is also the
 * conv's input, which it reads at other positions. */
static void test_conv_residual_in_place(void)
{
    static float x[16 * 12 * 12], r[16 * 12 * 12];
    vt_rng rng = {23};
    vt_fill(&rng, x, 16 * 12 * 12, -1, 1);
    vt_fill(&rng, r, 16 * 12 * 12, -1, 1);
    vn_named_tensor in[2] = {{"x", {{VN_F32, 4, {1, 16, 12, 12}}, x}},
                             {"r", {{VN_F32, 4, {1, 16, 12, 12}}, r}}};
    const char *outs[] = {"y", NULL}, *outs_self[] = {"y", "r2", NULL};
    static const struct {
        const char *algo;
        int64_t k;
    } cases[] = {{"auto", 3}, {"direct", 3}, {"winograd", 3}, {"im2col", 3}, {"gemm", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int self = 0; self <= 1; self++) {
            vn_graph *gr = residual_graph(cases[i].algo, cases[i].k, self);
            vn_model_stats s;
            fz_levels(gr, in, 2, self ? outs_self : outs, &s);
            VT_CHECK(fz_changes(&fz_o3, "fuse_conv_epilogue") == 1, "%s: residual not fused",
                     cases[i].algo);
            VT_CHECK(fz_o3.inplace_count == (self ? 0u : 1u),
                     "%s%s: %zu activations in place at O3", cases[i].algo,
                     self ? " (residual = X)" : "", fz_o3.inplace_count);
            /* bf16 (the AMX row stores its sums before the residual is read) */
            if (!self) residual_bf16(gr, in, cases[i].algo);
            vn_graph_destroy(gr);
        }
    }
}

int main(void)
{
    VT_RUN(test_fold_batchnorm);
    VT_RUN(test_fold_batchnorm_not);
    VT_RUN(test_conv_epilogue);
    VT_RUN(test_conv_epilogue_order);
    VT_RUN(test_conv_residual_in_place);
    return vt_summary();
}
