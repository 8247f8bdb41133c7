/*
 * test_fuse_matmul.c — the "fuse_matmul_epilogue" pass: MatMul / Gemm with
 * bias, activation and residual becomes one vinci::FusedMatMul where it must
 * (both residual orders, Gemm's C and transB, Clip and Gelu), and stays
 * unfused where it must not (an intermediate with two readers, a graph output
 * in the middle, a non-constant bias). Every graph gives O0's results at O1
 * and O2.
 */
#include "test_fuse_util.h"

#define M 6
#define K 8
#define N 16

typedef struct inputs {
    float x[2 * M * K], r[2 * M * N], b[N];
    vn_named_tensor t[3];
} inputs;

static void make_inputs(inputs *in)
{
    vt_rng rng = {42};
    vt_fill(&rng, in->x, 2 * M * K, -1, 1);
    vt_fill(&rng, in->r, 2 * M * N, -1, 1);
    vt_fill(&rng, in->b, N, -1, 1);
    in->t[0] = (vn_named_tensor){"x", {{VN_F32, 3, {2, M, K}}, in->x}};
    in->t[1] = (vn_named_tensor){"r", {{VN_F32, 3, {2, M, N}}, in->r}};
    in->t[2] = (vn_named_tensor){"b", {{VN_F32, 1, {N}}, in->b}};
}

/* x [2,M,K], r [2,M,N] (and b [N] when with_b) and the weights w [K,N], c [N]. */
static void header(ob *g, bool with_b)
{
    vt_rng rng = {7};
    int64_t xd[3] = {2, M, K}, rd[3] = {2, M, N}, wd[2] = {K, N}, cd[1] = {N};
    fz_input(g, "x", 3, xd);
    fz_input(g, "r", 3, rd);
    if (with_b) fz_input(g, "b", 1, cd);
    fz_rand_init(g, &rng, "w", 2, wd, -0.5, 0.5);
    fz_rand_init(g, &rng, "c", 1, cd, -0.5, 0.5);
}

static const vn_model_stats *run(vn_graph *gr, int nin, const char *const *outs)
{
    static vn_model_stats s;
    inputs in;
    make_inputs(&in);
    fz_levels(gr, in.t, nin, outs, &s);
    return &s;
}

static void test_bias_relu_residual(void)
{
    ob g = {0};
    fz_node(&g, "MatMul", "mm", "x", "w", NULL, "p", NULL);
    fz_node(&g, "Add", "bias", "p", "c", NULL, "q", NULL);
    fz_node(&g, "Relu", "relu", "q", NULL, NULL, "a", NULL);
    fz_node(&g, "Add", "res", "r", "a", NULL, "y", NULL);
    header(&g, false);
    fz_output(&g, "y");
    vn_graph *gr = fz_load(&g, 17);
    const char *outs[] = {"y", NULL};
    const vn_model_stats *s = run(gr, 2, outs);
    const vn_pass_report *r = fz_report(s, "fuse_matmul_epilogue");
    VT_CHECK(r && r->changes == 1, "changes %d", r ? (int)r->changes : -1);
    if (r) VT_CONTAINS(r->detail, "node 'mm' (MatMul)+Add+Relu+Add -> vinci::FusedMatMul");
    VT_CHECK(s->nodes_after == 1, "%d nodes after", (int)s->nodes_after);
    vn_graph_destroy(gr);
}

/* Residual before the activation: MatMul + bias + residual, then Sigmoid. */
static void test_residual_first(void)
{
    ob g = {0};
    fz_node(&g, "MatMul", "mm", "x", "w", NULL, "p", NULL);
    fz_node(&g, "Add", "bias", "c", "p", NULL, "q", NULL);
    fz_node(&g, "Add", "res", "q", "r", NULL, "t", NULL);
    fz_node(&g, "Sigmoid", "sig", "t", NULL, NULL, "y", NULL);
    header(&g, false);
    fz_output(&g, "y");
    vn_graph *gr = fz_load(&g, 17);
    const char *outs[] = {"y", NULL};
    const vn_model_stats *s = run(gr, 2, outs);
    VT_CHECK(fz_changes(s, "fuse_matmul_epilogue") == 1 && s->nodes_after == 1,
             "changes %d, %d nodes", (int)fz_changes(s, "fuse_matmul_epilogue"),
             (int)s->nodes_after);
    vn_graph_destroy(gr);
}

/* Gemm (transB, C scaled by beta) + Clip with constant bounds, on 2-D x. */
static void test_gemm_clip(void)
{
    ob g = {0}, ga = {0};
    vt_rng rng = {9};
    int64_t xd[2] = {M, K}, wd[2] = {N, K}, cd[1] = {N};
    fz_input(&g, "x", 2, xd);
    fz_rand_init(&g, &rng, "wt", 2, wd, -0.5, 0.5);
    fz_rand_init(&g, &rng, "c", 1, cd, -0.5, 0.5);
    fz_scalar(&g, "lo", -0.1f);
    fz_scalar(&g, "hi", 0.2f);
    ob_attr_int(&ga, "transB", 1);
    fz_attr_float(&ga, "beta", 0.5f);
    fz_node(&g, "Gemm", "gemm", "x", "wt", "c", "p", &ga);
    fz_node(&g, "Clip", "clip", "p", "lo", "hi", "y", NULL);
    fz_output(&g, "y");
    vn_graph *gr = fz_load(&g, 17);
    const char *outs[] = {"y", NULL};
    float x[M * K];
    vt_fill(&rng, x, M * K, -1, 1);
    vn_named_tensor in = {"x", {{VN_F32, 2, {M, K}}, x}};
    vn_model_stats s;
    fz_levels(gr, &in, 1, outs, &s);
    const vn_pass_report *r = fz_report(&s, "fuse_matmul_epilogue");
    VT_CHECK(r && r->changes == 1 && s.nodes_after == 1, "changes %d", r ? (int)r->changes : -1);
    if (r) VT_CONTAINS(r->detail, "node 'gemm' (Gemm)+Clip");
    vn_graph_destroy(gr);
}

/* Gelu (opset 20) in both forms. */
static void test_gelu(void)
{
    for (int tanh_form = 0; tanh_form <= 1; tanh_form++) {
        ob g = {0}, ga = {0};
        if (tanh_form) fz_attr_str(&ga, "approximate", "tanh");
        fz_node(&g, "MatMul", "mm", "x", "w", NULL, "p", NULL);
        fz_node(&g, "Add", "bias", "p", "c", NULL, "q", NULL);
        fz_node(&g, "Gelu", "gelu", "q", NULL, NULL, "y", &ga);
        header(&g, false);
        fz_output(&g, "y");
        vn_graph *gr = fz_load(&g, 20);
        const char *outs[] = {"y", NULL};
        const vn_model_stats *s = run(gr, 2, outs);
        VT_CHECK(fz_changes(s, "fuse_matmul_epilogue") == 1 && s->nodes_after == 1,
                 "tanh %d: changes %d, %d nodes", tanh_form,
                 (int)fz_changes(s, "fuse_matmul_epilogue"), (int)s->nodes_after);
        vn_graph_destroy(gr);
    }
}

/* The product has a second reader: nothing is fused into the MatMul. */
static void test_not_two_readers(void)
{
    ob g = {0};
    fz_node(&g, "MatMul", "mm", "x", "w", NULL, "p", NULL);
    fz_node(&g, "Add", "bias", "p", "c", NULL, "q", NULL);
    fz_node(&g, "Add", "again", "p", "r", NULL, "z", NULL);
    header(&g, false);
    fz_output(&g, "q");
    fz_output(&g, "z");
    vn_graph *gr = fz_load(&g, 17);
    const char *outs[] = {"q", "z", NULL};
    const vn_model_stats *s = run(gr, 2, outs);
    VT_CHECK(fz_changes(s, "fuse_matmul_epilogue") == 0, "fused: %s",
             fz_report(s, "fuse_matmul_epilogue")->detail);
    vn_graph_destroy(gr);
}

/* The biased value is a graph output: MatMul + bias fuse, the Relu stays. */
static void test_not_past_output(void)
{
    ob g = {0};
    fz_node(&g, "MatMul", "mm", "x", "w", NULL, "p", NULL);
    fz_node(&g, "Add", "bias", "p", "c", NULL, "q", NULL);
    fz_node(&g, "Relu", "relu", "q", NULL, NULL, "y", NULL);
    header(&g, false);
    fz_output(&g, "q");
    fz_output(&g, "y");
    vn_graph *gr = fz_load(&g, 17);
    const char *outs[] = {"q", "y", NULL};
    const vn_model_stats *s = run(gr, 2, outs);
    const vn_pass_report *r = fz_report(s, "fuse_matmul_epilogue");
    VT_CHECK(r && r->changes == 1 && s->nodes_after == 2, "changes %d, %d nodes",
             r ? (int)r->changes : -1, (int)s->nodes_after);
    if (r) VT_CHECK(!strstr(r->detail, "Relu"), "Relu fused past an output: %s", r->detail);
    vn_graph_destroy(gr);
}

/* A bias that is a graph input is not a constant: no fusion. */
static void test_not_input_bias(void)
{
    ob g = {0};
    fz_node(&g, "MatMul", "mm", "x", "w", NULL, "p", NULL);
    fz_node(&g, "Add", "bias", "p", "b", NULL, "y", NULL);
    header(&g, true);
    fz_output(&g, "y");
    vn_graph *gr = fz_load(&g, 17);
    const char *outs[] = {"y", NULL};
    const vn_model_stats *s = run(gr, 3, outs);
    VT_CHECK(fz_changes(s, "fuse_matmul_epilogue") == 0 && s->nodes_after == 2,
             "changes %d, %d nodes", (int)fz_changes(s, "fuse_matmul_epilogue"),
             (int)s->nodes_after);
    vn_graph_destroy(gr);
}

int main(void)
{
    VT_RUN(test_bias_relu_residual);
    VT_RUN(test_residual_first);
    VT_RUN(test_gemm_clip);
    VT_RUN(test_gelu);
    VT_RUN(test_not_two_readers);
    VT_RUN(test_not_past_output);
    VT_RUN(test_not_input_bias);
    return vt_summary();
}
