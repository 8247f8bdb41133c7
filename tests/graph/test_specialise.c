/*
 * test_specialise.c — compiling for actual input values
 * (vn_model_compile_specialised, vn_model_cache_get_values): small integer
 * inputs become plan-time constants and key the cache; plus the graph's
 * internal attributes (ir_attrs.c): old-opset Softmax, Hardmax, Split into
 * the node's outputs, LayerNormalization's Mean / InvStdDev.
 */
#include <math.h>

#include "onnx_build.h"
#include "vinci/graph.h"
#include "vt.h"

static vn_graph *load(ob *m)
{
    vn_graph *g = NULL;
    vn_status st = vn_graph_load_onnx_bytes(m->p, m->n, "test.onnx", NULL, &g);
    VT_CHECK(st == VN_OK, "load: %s", vn_last_error());
    ob_free(m);
    return g;
}

/* y = Reshape(x f32[2,3], shape i64[2]) with the shape a graph input. */
static vn_graph *reshape_graph(void)
{
    ob g = {0};
    const char *in[] = {"x", "shape", NULL}, *out[] = {"y", NULL};
    ob_node(&g, "Reshape", "r", in, out, NULL);
    ob_str(&g, 2, "reshape");
    int64_t xd[2] = {2, 3}, sd[1] = {2}, yd[2] = {-1, -1};
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 11, "shape", OB_INT64, 1, sd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, yd, NULL);
    ob m = ob_model(&g, 17);
    return load(&m);
}

static void test_specialise_reshape(void)
{
    vn_graph *g = reshape_graph();
    vn_model *m = NULL;
    vn_compile_options o = {.opt_level = 1};
    VT_CHECK(vn_model_compile(g, &o, &m) == VN_ERR_UNSUPPORTED, "the shape is not known");
    VT_CONTAINS(vn_last_error(), "constant known at plan time");
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0};
    int64_t shape[2] = {3, 2};
    vn_named_tensor v = {"shape", {{VN_I64, 1, {2}}, shape}};
    VT_OK(vn_model_compile_specialised(g, &o, &v, 1, &m));
    vn_tensor_desc d;
    VT_OK(vn_model_output(m, 0, NULL, &d));
    VT_CHECK(d.rank == 2 && d.dims[0] == 3 && d.dims[1] == 2, "y is [3,2]");
    vn_model_ctx *ctx = NULL;
    VT_OK(vn_model_ctx_create(m, &ctx));
    vn_named_tensor in[2] = {{"x", {{VN_F32, 2, {2, 3}}, x}}, v};
    vn_named_tensor out = {"y", {{VN_F32, 2, {3, 2}}, y}};
    VT_OK(vn_model_run(m, ctx, in, 2, &out, 1));
    for (int i = 0; i < 6; i++) VT_CHECK(y[i] == x[i], "y[%d] = %g", i, y[i]);
    vn_model_ctx_destroy(ctx);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

static void test_cache_keys_values(void)
{
    vn_graph *g = reshape_graph();
    vn_model_cache *c = NULL;
    VT_OK(vn_model_cache_create(g, NULL, &c));
    int64_t s1[2] = {3, 2}, s2[2] = {6, 1}, s1b[2] = {3, 2};
    vn_named_tensor v1 = {"shape", {{VN_I64, 1, {2}}, s1}};
    vn_named_tensor v2 = {"shape", {{VN_I64, 1, {2}}, s2}};
    vn_named_tensor v1b = {"shape", {{VN_I64, 1, {2}}, s1b}};
    const vn_model *a = NULL, *b = NULL, *a2 = NULL;
    VT_OK(vn_model_cache_get_values(c, NULL, 0, &v1, 1, &a));
    VT_OK(vn_model_cache_get_values(c, NULL, 0, &v2, 1, &b));
    VT_OK(vn_model_cache_get_values(c, NULL, 0, &v1b, 1, &a2));
    VT_CHECK(a != b && a == a2, "one model per value set");
    VT_CHECK(vn_model_cache_size(c) == 2, "2 entries, got %d", (int)vn_model_cache_size(c));
    vn_tensor_desc d;
    VT_OK(vn_model_output(b, 0, NULL, &d));
    VT_CHECK(d.dims[0] == 6 && d.dims[1] == 1, "the second model is [6,1]");
    vn_model_cache_destroy(c);
    vn_graph_destroy(g);
}

/* One node `op` (attrs given) on x f32[dims] at `opset`, outputs y0..y{nout-1}. */
static vn_graph *graph_of_one; /* the graph must outlive its model */

static vn_model *one_node(const char *op, ob *attrs, int64_t opset, int rank, const int64_t *dims,
                          int nout)
{
    ob g = {0};
    const char *in[] = {"x", NULL}, *out[] = {"y0", "y1", "y2", NULL};
    out[nout] = NULL;
    ob_node(&g, op, "n", in, out, attrs);
    ob_str(&g, 2, "one");
    ob_value_info(&g, 11, "x", OB_FLOAT, rank, dims, NULL);
    int64_t unknown[1] = {-1};
    for (int k = 0; k < nout; k++) ob_value_info(&g, 12, out[k], OB_FLOAT, -1, unknown, NULL);
    ob m = ob_model(&g, opset);
    vn_graph *gr = load(&m);
    vn_model *model = NULL;
    VT_OK(vn_model_compile(gr, NULL, &model));
    graph_of_one = gr;
    return model;
}

static void done_one(vn_model *m)
{
    vn_model_destroy(m);
    vn_graph_destroy(graph_of_one);
    graph_of_one = NULL;
}

/* Runs m on x and copies output `k` (n floats) to y. */
static void run_one(vn_model *m, const float *x, const int64_t *dims, int rank, int k, float *y,
                    int n)
{
    vn_model_ctx *ctx = NULL;
    VT_OK(vn_model_ctx_create(m, &ctx));
    vn_named_tensor in = {"x", {{VN_F32, rank, {0}}, (void *)x}};
    for (int d = 0; d < rank; d++) in.tensor.desc.dims[d] = dims[d];
    VT_OK(vn_model_run(m, ctx, &in, 1, NULL, 0));
    const char *name = NULL;
    vn_tensor t;
    VT_OK(vn_model_output(m, k, &name, NULL));
    VT_OK(vn_model_ctx_output(ctx, name, &t));
    for (int i = 0; i < n; i++) y[i] = ((const float *)t.data)[i];
    vn_model_ctx_destroy(ctx);
}

/* Softmax before opset 13 normalises dims[axis:] flattened (axis 1 default). */
static void test_softmax_old_opset(void)
{
    int64_t dims[3] = {1, 2, 2};
    float x[4] = {0, 1, 2, 3}, y[4];
    ob none = {0};
    vn_model *m = one_node("Softmax", &none, 11, 3, dims, 1);
    VT_CHECK(m != NULL, "compiled");
    if (!m) return;
    run_one(m, x, dims, 3, 0, y, 4);
    double z = exp(0) + exp(1) + exp(2) + exp(3);
    for (int i = 0; i < 4; i++)
        VT_CHECK(fabs(y[i] - exp(i) / z) < 1e-6, "y[%d] = %g, want %g", i, y[i], exp(i) / z);
    done_one(m);
    ob none13 = {0};
    m = one_node("Softmax", &none13, 13, 3, dims, 1); /* opset 13: the last axis alone */
    run_one(m, x, dims, 3, 0, y, 4);
    VT_CHECK(fabs(y[0] + y[1] - 1) < 1e-6 && fabs(y[2] + y[3] - 1) < 1e-6, "rows of 2");
    done_one(m);
}

static void test_hardmax(void)
{
    int64_t dims[2] = {2, 3};
    float x[6] = {1, 5, 5, -1, -2, -3}, y[6];
    ob none = {0};
    vn_model *m = one_node("Hardmax", &none, 13, 2, dims, 1);
    run_one(m, x, dims, 2, 0, y, 6);
    const float want[6] = {0, 1, 0, 1, 0, 0}; /* the first maximum */
    for (int i = 0; i < 6; i++) VT_CHECK(y[i] == want[i], "y[%d] = %g", i, y[i]);
    done_one(m);
}

/* Split without 'split' before opset 18: equal parts, one per node output. */
static void test_split_node_outputs(void)
{
    int64_t dims[1] = {6};
    float x[6] = {0, 1, 2, 3, 4, 5}, y[2];
    ob none = {0};
    vn_model *m = one_node("Split", &none, 13, 1, dims, 3);
    vn_tensor_desc d;
    VT_OK(vn_model_output(m, 2, NULL, &d));
    VT_CHECK(d.rank == 1 && d.dims[0] == 2, "three parts of 2");
    run_one(m, x, dims, 1, 2, y, 2);
    VT_CHECK(y[0] == 4 && y[1] == 5, "the third part is {4, 5}: %g %g", y[0], y[1]);
    done_one(m);
}

/* LayerNormalization named with 3 outputs gives Mean and InvStdDev. */
static void test_layernorm_stats(void)
{
    ob g = {0}, attrs = {0};
    const char *in[] = {"x", "s", NULL}, *out[] = {"y", "mean", "istd", NULL};
    ob_attr_int(&attrs, "axis", 1);
    ob_node(&g, "LayerNormalization", "ln", in, out, &attrs);
    ob_str(&g, 2, "ln");
    float s[2] = {1, 1};
    int64_t sd[1] = {2}, xd[2] = {2, 2}, unknown[1] = {-1};
    ob t = {0};
    ob_tensor_raw(&t, "s", OB_FLOAT, 1, sd, s, sizeof s);
    ob_msg(&g, 5, &t);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    for (int k = 0; k < 3; k++) ob_value_info(&g, 12, out[k], OB_FLOAT, -1, unknown, NULL);
    ob mb = ob_model(&g, 17);
    vn_graph *gr = load(&mb);
    vn_model *m = NULL;
    VT_OK(vn_model_compile(gr, NULL, &m));
    vn_tensor_desc d;
    VT_OK(vn_model_output(m, 1, NULL, &d));
    VT_CHECK(d.rank == 2 && d.dims[0] == 2 && d.dims[1] == 1 && d.dtype == VN_F32,
             "Mean is f32[2,1]");
    float x[4] = {1, 3, 10, 10}, mean[2], istd[2];
    run_one(m, x, xd, 2, 1, mean, 2);
    run_one(m, x, xd, 2, 2, istd, 2);
    VT_CHECK(mean[0] == 2 && mean[1] == 10, "means %g %g", mean[0], mean[1]);
    VT_CHECK(fabs(istd[0] - 1 / sqrt(1 + 1e-5)) < 1e-5 && fabs(istd[1] - 1 / sqrt(1e-5)) < 1e-1,
             "inverse std devs %g %g", istd[0], istd[1]);
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

int main(void)
{
    VT_RUN(test_specialise_reshape);
    VT_RUN(test_cache_keys_values);
    VT_RUN(test_softmax_old_opset);
    VT_RUN(test_hardmax);
    VT_RUN(test_split_node_outputs);
    VT_RUN(test_layernorm_stats);
    return vt_summary();
}
