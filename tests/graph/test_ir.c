/*
 * test_ir.c — the IR: linking, topological order, cycles and undefined
 * inputs, symbolic dims bound from input shapes, inference through the
 * registry, and the one report of every unsupported operator.
 */
#include <stdio.h>
#include <string.h>

#include "graph/ir.h"
#include "graph/onnx_build.h"
#include "vinci/graph.h"
#include "vt.h"

typedef struct nd {
    const char *op, *name;
    const char *in[4], *out[3];
} nd;

/* A model of the given nodes over x f32[batch,4] and y f32[4]. */
static vn_status build(const nd *nodes, int n, const char *output, vn_graph **g)
{
    ob gr = {0};
    for (int i = 0; i < n; i++)
        ob_node(&gr, nodes[i].op, nodes[i].name, nodes[i].in, nodes[i].out, NULL);
    int64_t xd[2] = {-1, 4}, yd[1] = {4};
    const char *xs[2] = {"batch", NULL};
    ob_value_info(&gr, 11, "x", OB_FLOAT, 2, xd, xs);
    ob_value_info(&gr, 11, "y", OB_FLOAT, 1, yd, NULL);
    ob_value_info(&gr, 12, output, OB_FLOAT, -1, NULL, NULL);
    ob m = ob_model(&gr, 18);
    vn_status st = vn_graph_load_onnx_bytes(m.p, m.n, "ir.onnx", NULL, g);
    ob_free(&m);
    return st;
}

static void test_topological_order(void)
{
    /* Listed backwards: c needs b needs a. */
    nd nodes[] = {{"Relu", "c", {"b_out"}, {"z"}},
                  {"Add", "b", {"a_out", "y"}, {"b_out"}},
                  {"Relu", "a", {"x"}, {"a_out"}}};
    vn_graph *g = NULL;
    VT_OK(build(nodes, 3, "z", &g));
    if (!g) return;
    const int32_t *o = g->main->order;
    VT_CHECK(o[0] == 2 && o[1] == 1 && o[2] == 0, "order %d %d %d", o[0], o[1], o[2]);
    int32_t v = vn_ir_find(g->main, "a_out");
    VT_CHECK(v >= 0 && g->main->values[v].producer == 2 && g->main->values[v].num_consumers == 1 &&
                 g->main->values[v].consumers[0] == 1,
             "producer / consumers");
    vn_input_shape x = {"x", 2, {5, 4}};
    VT_OK(vn_graph_infer(g, &x, 1));
    vn_tensor_desc d;
    VT_OK(vn_graph_value_desc(g, "z", &d));
    VT_CHECK(d.rank == 2 && d.dims[0] == 5 && d.dims[1] == 4, "z shape");
    vn_graph_destroy(g);
}

static void test_link_errors(void)
{
    nd cycle[] = {{"Relu", "p", {"q_out"}, {"p_out"}}, {"Relu", "q", {"p_out"}, {"q_out"}}};
    vn_graph *g = NULL;
    VT_CHECK(build(cycle, 2, "p_out", &g) == VN_ERR_FORMAT && !g, "cycle");
    VT_CONTAINS(vn_last_error(), "cycle");
    VT_CONTAINS(vn_last_error(), "node 'p' (Relu)");
    nd undef[] = {{"Add", "adder", {"x", "nope"}, {"o"}}};
    VT_CHECK(build(undef, 1, "o", &g) == VN_ERR_FORMAT, "undefined");
    VT_CONTAINS(vn_last_error(), "node 'adder' (Add): input 1 'nope' is not defined");
    nd twice[] = {{"Relu", "r1", {"x"}, {"o"}}, {"Relu", "r2", {"x"}, {"o"}}};
    VT_CHECK(build(twice, 2, "o", &g) == VN_ERR_FORMAT, "SSA");
    VT_CONTAINS(vn_last_error(), "already defined by node 'r1'");
    nd noout[] = {{"Relu", "r", {"x"}, {"o"}}};
    VT_CHECK(build(noout, 1, "missing", &g) == VN_ERR_FORMAT, "output");
    VT_CONTAINS(vn_last_error(), "output 0 'missing' is not produced");
}

static void test_symbolic_dims(void)
{
    nd nodes[] = {{"Add", "add", {"x", "y"}, {"o"}}};
    vn_graph *g = NULL;
    VT_OK(build(nodes, 1, "o", &g));
    if (!g) return;
    vn_status st = vn_graph_infer(g, NULL, 0);
    VT_CHECK(st == VN_ERR_SHAPE, "batch unknown: %s", vn_status_name(st));
    VT_CONTAINS(vn_last_error(), "input 'x' dim 0 ('batch') is not known");
    vn_input_shape bad = {"x", 2, {2, 5}};
    VT_CHECK(vn_graph_infer(g, &bad, 1) == VN_ERR_SHAPE, "fixed dim");
    VT_CONTAINS(vn_last_error(), "declared f32[-1,4], given f32[2,5]");
    vn_input_shape rank = {"x", 3, {2, 4, 1}};
    VT_CHECK(vn_graph_infer(g, &rank, 1) == VN_ERR_SHAPE, "rank");
    vn_input_shape who = {"w", 1, {4}};
    VT_CHECK(vn_graph_infer(g, &who, 1) == VN_ERR_INVALID_ARG, "unknown name");
    VT_CONTAINS(vn_last_error(), "no input named 'w'");
    vn_tensor_desc d;
    VT_CHECK(vn_graph_value_desc(g, "o", &d) == VN_ERR_STATE, "not inferred");
    for (int64_t batch = 1; batch <= 3; batch += 2) {
        vn_input_shape x = {"x", 2, {batch, 4}};
        VT_OK(vn_graph_infer(g, &x, 1));
        VT_OK(vn_graph_value_desc(g, "o", &d));
        VT_CHECK(d.dims[0] == batch, "batch %lld", (long long)batch);
    }
    vn_graph_destroy(g);
}

static void test_shape_error_names_node(void)
{
    ob gr = {0};
    const char *in[] = {"x", "y", NULL}, *out[] = {"o", NULL};
    ob_node(&gr, "Add", "bad_add", in, out, NULL);
    int64_t xd[2] = {2, 3}, yd[1] = {4};
    ob_value_info(&gr, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&gr, 11, "y", OB_FLOAT, 1, yd, NULL);
    ob_value_info(&gr, 12, "o", OB_FLOAT, -1, NULL, NULL);
    ob m = ob_model(&gr, 17);
    vn_graph *g = NULL;
    VT_OK(vn_graph_load_onnx_bytes(m.p, m.n, "shape.onnx", NULL, &g));
    ob_free(&m);
    if (!g) return;
    vn_status st = vn_graph_infer(g, NULL, 0);
    VT_CHECK(st == VN_ERR_SHAPE, "%s", vn_status_name(st));
    VT_CONTAINS(vn_last_error(), "node 'bad_add' (Add)");
    VT_CONTAINS(vn_last_error(), "f32[2,3], f32[4]");
    vn_graph_destroy(g);
}

static void test_dtype_error_names_node(void)
{
    ob gr = {0};
    const char *in[] = {"b", NULL}, *out[] = {"o", NULL};
    ob_node(&gr, "Sigmoid", "sig", in, out, NULL);
    int64_t d[1] = {3};
    ob_value_info(&gr, 11, "b", OB_INT64, 1, d, NULL);
    ob_value_info(&gr, 12, "o", OB_INT64, 1, d, NULL);
    ob m = ob_model(&gr, 17);
    vn_graph *g = NULL;
    VT_OK(vn_graph_load_onnx_bytes(m.p, m.n, "dtype.onnx", NULL, &g));
    ob_free(&m);
    if (!g) return;
    VT_CHECK(vn_graph_infer(g, NULL, 0) == VN_ERR_DTYPE, "dtype");
    VT_CONTAINS(vn_last_error(), "node 'sig' (Sigmoid): input 0 is i64[3]");
    vn_graph_destroy(g);
}

/* StringNormalizer (strings) stands for an operator vinci will not run. */
static void test_unsupported_listed_at_once(void)
{
    nd nodes[] = {{"StringNormalizer", "conv1", {"x"}, {"a"}},
                  {"StringNormalizer", "conv2", {"a"}, {"b"}},
                  {"Relu", "relu", {"b"}, {"c"}},
                  {"Foo", "foo", {"c"}, {"d"}},
                  {"StringNormalizer", NULL, {"d"}, {"e"}}};
    vn_graph *g = NULL;
    VT_OK(build(nodes, 5, "e", &g));
    if (!g) return;
    vn_input_shape x = {"x", 2, {1, 4}};
    VT_CHECK(vn_graph_infer(g, &x, 1) == VN_ERR_UNSUPPORTED, "unsupported");
    const char *e = vn_last_error();
    VT_CONTAINS(e, "2 operators are not supported");
    VT_CONTAINS(e, "StringNormalizer (domain 'ai.onnx', opset 18): 3 nodes 'conv1', 'conv2', #4");
    VT_CONTAINS(e, "Foo (domain 'ai.onnx', opset 18): 1 node 'foo'");
    VT_CHECK(strstr(e, "Relu") == NULL, "Relu is supported: %s", e);
    vn_op_count c;
    VT_OK(vn_graph_op_type(g, 0, &c));
    VT_CHECK(!strcmp(c.op_type, "StringNormalizer") && c.count == 3 && !c.supported,
             "histogram first");
    vn_graph_destroy(g);
}

int main(void)
{
    VT_RUN(test_topological_order);
    VT_RUN(test_link_errors);
    VT_RUN(test_symbolic_dims);
    VT_RUN(test_shape_error_names_node);
    VT_RUN(test_dtype_error_names_node);
    VT_RUN(test_unsupported_listed_at_once);
    return vt_summary();
}
