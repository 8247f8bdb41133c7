/*
 * test_fuse_elementwise.c — the "fuse_elementwise_chains" pass: a tree of
 * element-wise nodes becomes one vinci::FusedElementwise where it must (every
 * supported op, tensor and constant-scalar operands, broadcasting, the input
 * limit), and stays apart where it must not (two readers, a graph output in
 * the middle). Every graph gives O0's results at O1 and O2. Also the bundled
 * MLP at O2 against O0.
 */
#include "test_fuse_util.h"

#define R 4
#define C 32

static float xs[R * C], zs[C];

static vn_named_tensor make_inputs(vn_named_tensor *t)
{
    vt_rng rng = {3};
    vt_fill(&rng, xs, R * C, -2, 2);
    vt_fill(&rng, zs, C, 0.5, 1.5);
    t[0] = (vn_named_tensor){"x", {{VN_F32, 2, {R, C}}, xs}};
    t[1] = (vn_named_tensor){"z", {{VN_F32, 1, {C}}, zs}};
    return t[0];
}

static vn_graph *finish(ob *g, const char *const *outs)
{
    int64_t xd[2] = {R, C}, zd[1] = {C};
    fz_input(g, "x", 2, xd);
    fz_input(g, "z", 1, zd);
    for (int k = 0; outs[k]; k++) fz_output(g, outs[k]);
    return fz_load(g, 17);
}

static void levels(vn_graph *gr, const char *const *outs, vn_model_stats *s)
{
    vn_named_tensor t[2];
    make_inputs(t);
    fz_levels(gr, t, 2, outs, s);
}

/* One long tree: every op, scalars on both sides, z broadcast over rows. */
static void test_long_chain(void)
{
    ob g = {0}, la = {0};
    fz_scalar(&g, "two", 2.0f);
    fz_scalar(&g, "one", 1.0f);
    fz_scalar(&g, "three", 3.0f);
    fz_node(&g, "Mul", "m1", "x", "two", NULL, "a", NULL); /* MULS */
    fz_node(&g, "Add", "a1", "a", "z", NULL, "b", NULL);   /* broadcast tensor */
    fz_node(&g, "Sigmoid", "s1", "b", NULL, NULL, "c", NULL);
    fz_node(&g, "Sub", "s2", "one", "c", NULL, "d", NULL);   /* scalar - x */
    fz_node(&g, "Div", "d1", "d", "three", NULL, "e", NULL); /* x / scalar */
    fz_node(&g, "Div", "d2", "one", "z", NULL, "f", NULL);   /* second tree: 1 / z */
    fz_node(&g, "Mul", "m2", "e", "f", NULL, "h", NULL);     /* join */
    fz_node(&g, "Tanh", "t1", "h", NULL, NULL, "i", NULL);
    fz_node(&g, "Exp", "e1", "i", NULL, NULL, "j", NULL);
    fz_node(&g, "Log", "l1", "j", NULL, NULL, "k", NULL);
    fz_node(&g, "Abs", "ab", "k", NULL, NULL, "l", NULL);
    fz_node(&g, "Sqrt", "sq", "l", NULL, NULL, "n", NULL);
    fz_node(&g, "Neg", "ng", "n", NULL, NULL, "o", NULL);
    fz_attr_float(&la, "alpha", 0.2f);
    fz_node(&g, "LeakyRelu", "lr", "o", NULL, NULL, "p", &la);
    fz_node(&g, "Max", "mx", "p", "x", NULL, "q", NULL);
    fz_node(&g, "Min", "mn", "q", "three", NULL, "u", NULL); /* MINS */
    fz_node(&g, "Reciprocal", "rc", "u", NULL, NULL, "v", NULL);
    fz_node(&g, "Relu", "rl", "v", NULL, NULL, "y", NULL);
    const char *outs[] = {"y", NULL};
    vn_graph *gr = finish(&g, outs);
    vn_model_stats s;
    levels(gr, outs, &s);
    const vn_pass_report *r = fz_report(&s, "fuse_elementwise_chains");
    VT_CHECK(r && r->changes == 1 && s.nodes_after == 1, "changes %d, %d nodes after",
             r ? (int)r->changes : -1, (int)s.nodes_after);
    if (r) VT_CONTAINS(r->detail, "-> vinci::FusedElementwise");
    vn_graph_destroy(gr);
}

/* Gelu (opset 20, erf form) after a sum. */
static void test_gelu(void)
{
    ob g = {0};
    fz_node(&g, "Add", "a1", "x", "z", NULL, "a", NULL);
    fz_node(&g, "Gelu", "ge", "a", NULL, NULL, "y", NULL);
    int64_t xd[2] = {R, C}, zd[1] = {C};
    fz_input(&g, "x", 2, xd);
    fz_input(&g, "z", 1, zd);
    fz_output(&g, "y");
    vn_graph *gr = fz_load(&g, 20);
    const char *outs[] = {"y", NULL};
    vn_model_stats s;
    levels(gr, outs, &s);
    VT_CHECK(fz_changes(&s, "fuse_elementwise_chains") == 1 && s.nodes_after == 1,
             "changes %d, %d nodes", (int)fz_changes(&s, "fuse_elementwise_chains"),
             (int)s.nodes_after);
    vn_graph_destroy(gr);
}

/* A sum of 10 distinct tensors: more than 8 inputs, so split in two groups. */
static void test_input_limit(void)
{
    ob g = {0};
    vt_rng rng = {5};
    int64_t d[1] = {C};
    char names[10][16], outs_[10][16]; /* 16: room for any int, so gcc never warns */
    const char *prev = "x";
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof names[i], "w%d", i);
        snprintf(outs_[i], sizeof outs_[i], i == 9 ? "y" : "s%d", i);
        fz_rand_init(&g, &rng, names[i], 1, d, -1, 1);
        /* w_i are constants of C elements: tensor inputs, not scalars */
        fz_node(&g, "Add", NULL, prev, names[i], NULL, outs_[i], NULL);
        prev = outs_[i];
    }
    const char *outs[] = {"y", NULL};
    vn_graph *gr = finish(&g, outs);
    vn_model_stats s;
    levels(gr, outs, &s);
    VT_CHECK(fz_changes(&s, "fuse_elementwise_chains") == 2 && s.nodes_after == 2,
             "changes %d, %d nodes", (int)fz_changes(&s, "fuse_elementwise_chains"),
             (int)s.nodes_after);
    vn_graph_destroy(gr);
}

/* a has two readers, b is a graph output: nothing may be fused. */
static void test_not_fused(void)
{
    ob g = {0};
    fz_node(&g, "Relu", "r1", "x", NULL, NULL, "a", NULL);
    fz_node(&g, "Neg", "n1", "a", NULL, NULL, "b", NULL);
    fz_node(&g, "Exp", "e1", "a", NULL, NULL, "c", NULL);
    fz_node(&g, "Abs", "a1", "b", NULL, NULL, "d", NULL);
    const char *outs[] = {"b", "c", "d", NULL};
    vn_graph *gr = finish(&g, outs);
    vn_model_stats s;
    levels(gr, outs, &s);
    VT_CHECK(fz_changes(&s, "fuse_elementwise_chains") == 0 && s.nodes_after == 4,
             "changes %d (%s), %d nodes", (int)fz_changes(&s, "fuse_elementwise_chains"),
             fz_report(&s, "fuse_elementwise_chains")->detail, (int)s.nodes_after);
    vn_graph_destroy(gr);
}

/* The repository root from this file's path (CMake compiles it by full path). */
static int model_path(const char *file, char *buf, size_t size)
{
    const char *tail = strstr(__FILE__, "tests/graph/");
    if (!tail) return -1;
    snprintf(buf, size, "%.*smodels/%s", (int)(tail - __FILE__), __FILE__, file);
    FILE *f = fopen(buf, "rb");
    if (!f) return -1;
    fclose(f);
    return 0;
}

static void test_bundled_mlp(void)
{
    char model[1024], input[1024];
    if (model_path("mlp_tiny.onnx", model, sizeof model) ||
        model_path("mlp_tiny_input.npy", input, sizeof input)) {
        printf("skip: models/mlp_tiny.onnx not found next to the sources\n");
        return;
    }
    vn_graph *g = NULL;
    vn_tensor x = {0};
    VT_OK(vn_graph_load_onnx(model, &g));
    VT_OK(vn_npy_read(input, &x));
    if (!g || !x.data) return;
    vn_named_tensor in = {"x", x};
    const char *outs[] = {"y", NULL};
    vn_model_stats s;
    vn_input_shape shape = {"x", x.desc.rank, {0}};
    memcpy(shape.dims, x.desc.dims, sizeof shape.dims);
    fz_shapes = &shape, fz_num_shapes = 1; /* the batch is the .npy's */
    fz_levels(g, &in, 1, outs, &s);
    fz_shapes = NULL, fz_num_shapes = 0;
    VT_CHECK(fz_changes(&s, "fuse_matmul_epilogue") > 0, "no MatMul fused in the MLP");
    printf("mlp_tiny at O2: %d of %d nodes; matmul %s; elementwise %s\n", (int)s.nodes_after,
           (int)s.nodes_before, fz_report(&s, "fuse_matmul_epilogue")->detail,
           fz_report(&s, "fuse_elementwise_chains")->detail);
    vn_aligned_free(x.data);
    vn_graph_destroy(g);
}

int main(void)
{
    VT_RUN(test_long_chain);
    VT_RUN(test_gelu);
    VT_RUN(test_input_limit);
    VT_RUN(test_not_fused);
    VT_RUN(test_bundled_mlp);
    return vt_summary();
}
