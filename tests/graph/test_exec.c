/*
 * test_exec.c — compiled models end to end: results against references at
 * O0 and O1, inputs and outputs by name, errors naming the node and
 * operator, concurrent runs from several threads, asynchronous runs on
 * streams, pass-through outputs, the per-shape-set cache, and the
 * unsupported-operator report.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

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

static vn_model *compile(vn_graph *g, int level, const char *input, int rank, const int64_t *dims)
{
    vn_input_shape s = {input, rank, {0}};
    for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
    vn_compile_options o = {.opt_level = level, .shapes = &s, .num_shapes = input ? 1 : 0};
    vn_model *m = NULL;
    VT_OK(vn_model_compile(g, &o, &m));
    return m;
}

/* y = Relu(x + w), w = {1, -2, 3, -4} */
static void reference_sample(const float *x, float *y, int rows)
{
    static const float w[4] = {1, -2, 3, -4};
    for (int i = 0; i < rows * 4; i++) {
        float s = x[i] + w[i % 4];
        y[i] = s > 0 ? s : 0;
    }
}

static void fill(float *x, int n, int seed)
{
    for (int i = 0; i < n; i++) x[i] = (float)((i * 7 + seed * 13) % 17) - 8.0f;
}

static int max_diff(const float *a, const float *b, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) bad += fabsf(a[i] - b[i]) > 1e-6f;
    return bad;
}

static void test_sample_levels(void)
{
    for (int level = 0; level <= 1; level++) {
        ob mb = ob_sample_model();
        vn_graph *g = load(&mb);
        int64_t dims[2] = {3, 4};
        vn_model *m = compile(g, level, "x", 2, dims);
        vn_model_ctx *ctx = NULL;
        VT_OK(vn_model_ctx_create(m, &ctx));
        float x[12], y[12], want[12];
        fill(x, 12, level);
        reference_sample(x, want, 3);
        vn_named_tensor in = {"x", {{VN_F32, 2, {3, 4}}, x}};
        vn_named_tensor out = {"y", {{VN_F32, 2, {3, 4}}, y}};
        VT_OK(vn_model_run(m, ctx, &in, 1, &out, 1));
        VT_CHECK(max_diff(y, want, 12) == 0, "O%d: wrong result", level);
        /* the same run without naming the output: it lands in the context's buffer */
        vn_tensor own;
        VT_OK(vn_model_run(m, ctx, &in, 1, NULL, 0));
        VT_OK(vn_model_ctx_output(ctx, "y", &own));
        VT_CHECK(max_diff(own.data, want, 12) == 0, "O%d: context output", level);
        vn_model_stats s;
        VT_OK(vn_model_get_stats(m, &s));
        VT_CHECK(s.nodes_after == 2 && s.arena_bytes == 64 && s.arena_bytes <= s.activation_bytes,
                 "nodes %d arena %zu", (int)s.nodes_after, s.arena_bytes);
        vn_model_ctx_destroy(ctx);
        vn_model_destroy(m);
        vn_graph_destroy(g);
    }
}

static void test_bad_arguments(void)
{
    ob mb = ob_sample_model();
    vn_graph *g = load(&mb);
    int64_t dims[2] = {2, 4};
    vn_model *m = compile(g, 1, "x", 2, dims);
    vn_model_ctx *ctx = NULL;
    VT_OK(vn_model_ctx_create(m, &ctx));
    float x[12] = {0};
    vn_named_tensor in = {"x", {{VN_F32, 2, {3, 4}}, x}};
    VT_CHECK(vn_model_run(m, ctx, &in, 1, NULL, 0) == VN_ERR_SHAPE, "wrong shape accepted");
    VT_CONTAINS(vn_last_error(), "'x'");
    VT_CONTAINS(vn_last_error(), "f32[2,4]");
    VT_CHECK(vn_model_run(m, ctx, NULL, 0, NULL, 0) == VN_ERR_INVALID_ARG, "missing input");
    VT_CONTAINS(vn_last_error(), "input 'x' is not given");
    vn_named_tensor bad = {"nope", {{VN_F32, 2, {2, 4}}, x}};
    VT_CHECK(vn_model_run(m, ctx, &bad, 1, NULL, 0) == VN_ERR_INVALID_ARG, "unknown input");
    VT_CONTAINS(vn_last_error(), "nope");
    in.tensor.desc.dims[0] = 2;
    vn_named_tensor out = {"z", {{VN_F32, 2, {2, 4}}, x}};
    VT_CHECK(vn_model_run(m, ctx, &in, 1, &out, 1) == VN_ERR_INVALID_ARG, "unknown output");
    /* a shape the graph's declared dims reject names the input */
    vn_model *m2 = NULL;
    vn_input_shape s = {"x", 2, {2, 5}};
    vn_compile_options o = {.opt_level = 1, .shapes = &s, .num_shapes = 1};
    VT_CHECK(vn_model_compile(g, &o, &m2) == VN_ERR_SHAPE, "bad shape compiled");
    VT_CONTAINS(vn_last_error(), "'x'");
    vn_model_ctx_destroy(ctx);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

/* ---- a failing operator: the error names node and operator ------------------------------ */

static vn_status fail_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    out[0] = ctx->inputs[0];
    return VN_OK;
}
static vn_status fail_run(const vn_op_run_ctx *ctx)
{
    return vn_error(VN_ERR_KERNEL, "Fail", "planted failure");
}
static const vn_op_def fail_def = {"Fail",       "vinci_test", 1,    1,    1,
                                   1u << VN_F32, fail_infer,   NULL, NULL, fail_run};

/* y = Fail(Relu(x)), x f32[2] */
static vn_graph *failing_graph(void)
{
    ob g = {0};
    const char *i1[] = {"x", NULL}, *o1[] = {"r", NULL}, *i2[] = {"r", NULL}, *o2[] = {"y", NULL};
    ob_node(&g, "Relu", "relu", i1, o1, NULL);
    ob n = {0};
    for (int k = 0; i2[k]; k++) ob_str(&n, 1, i2[k]);
    ob_str(&n, 2, o2[0]);
    ob_str(&n, 3, "boom");
    ob_str(&n, 4, "Fail");
    ob_str(&n, 7, "vinci_test");
    ob_msg(&g, 1, &n);
    ob_str(&g, 2, "failing");
    int64_t d[1] = {2};
    ob_value_info(&g, 11, "x", OB_FLOAT, 1, d, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 1, d, NULL);
    ob m = ob_model(&g, 17);
    ob op = {0};
    ob_str(&op, 1, "vinci_test");
    ob_int(&op, 2, 1);
    ob_msg(&m, 8, &op);
    return load(&m);
}

static void test_run_error_names_node(void)
{
    static int registered;
    if (!registered++) VT_OK(vn_op_register(&fail_def));
    vn_graph *g = failing_graph();
    vn_model *m = compile(g, 1, NULL, 0, NULL);
    vn_model_ctx *ctx = NULL;
    VT_OK(vn_model_ctx_create(m, &ctx));
    float x[2] = {1, 2};
    vn_named_tensor in = {"x", {{VN_F32, 1, {2}}, x}};
    VT_CHECK(vn_model_run(m, ctx, &in, 1, NULL, 0) == VN_ERR_KERNEL, "failure not reported");
    VT_CONTAINS(vn_last_error(), "node 'boom' (vinci_test::Fail)");
    VT_CONTAINS(vn_last_error(), "planted failure");
    /* asynchronously: the node's failure becomes the stream's error */
    vn_device *dev;
    vn_stream *s;
    VT_OK(vn_device_default(&dev));
    VT_OK(vn_stream_create(dev, VN_PRIORITY_NORMAL, &s));
    VT_OK(vn_model_run_async(m, ctx, s, &in, 1, NULL, 0));
    VT_CHECK(vn_stream_synchronize(s, -1) == VN_ERR_KERNEL, "async failure not reported");
    VT_CONTAINS(vn_last_error(), "node 'boom' (vinci_test::Fail)");
    VT_OK(vn_stream_reset(s));
    VT_OK(vn_stream_destroy(s));
    vn_model_ctx_destroy(ctx);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

/* ---- a user operator declared in place ------------------------------------------------------ */

/* y = 2x, element by element: reads x[i] only to write y[i]. */
static vn_status twice_run(const vn_op_run_ctx *ctx)
{
    const float *x = ctx->inputs[0].data;
    float *y = ctx->outputs[0].data;
    for (int64_t i = 0; i < vn_desc_numel(&ctx->inputs[0].desc); i++) y[i] = 2 * x[i];
    return VN_OK;
}
static const vn_op_def twice_def = {"Twice",      "vinci_test", 1,    1,    1,
                                    1u << VN_F32, fail_infer,   NULL, NULL, twice_run};

/* y = Relu(Twice(Relu(x))), x f32[64]: Twice reads the first Relu's output
 * (an arena value) last, so once Twice declares input 0 in place
 * (vn_op_set_in_place) its output takes that memory: one activation in
 * place instead of none, and the same results. */
static void test_user_op_in_place(void)
{
    VT_OK(vn_op_register(&twice_def));
    VT_CHECK(vn_op_in_place(&twice_def) == 0, "undeclared operator in place");
    for (int declared = 0; declared <= 1; declared++) {
        if (declared) VT_OK(vn_op_set_in_place(&twice_def, 1));
        ob g = {0}, n = {0};
        const char *i1[] = {"x", NULL}, *o1[] = {"r", NULL}, *i3[] = {"t", NULL},
                   *o3[] = {"y", NULL};
        ob_node(&g, "Relu", "relu1", i1, o1, NULL);
        ob_str(&n, 1, "r"), ob_str(&n, 2, "t"), ob_str(&n, 3, "twice");
        ob_str(&n, 4, "Twice"), ob_str(&n, 7, "vinci_test");
        ob_msg(&g, 1, &n);
        ob_node(&g, "Relu", "relu2", i3, o3, NULL);
        ob_str(&g, 2, "twice");
        int64_t d[1] = {64};
        ob_value_info(&g, 11, "x", OB_FLOAT, 1, d, NULL);
        ob_value_info(&g, 12, "y", OB_FLOAT, 1, d, NULL);
        ob m = ob_model(&g, 17), op = {0};
        ob_str(&op, 1, "vinci_test"), ob_int(&op, 2, 1);
        ob_msg(&m, 8, &op);
        vn_graph *gr = load(&m);
        vn_model *md = compile(gr, 3, NULL, 0, NULL);
        vn_model_stats st;
        VT_OK(vn_model_get_stats(md, &st));
        VT_CHECK(st.inplace_count == (size_t)declared, "declared %d: %zu activations in place",
                 declared, st.inplace_count);
        float x[64], y[64];
        for (int i = 0; i < 64; i++) x[i] = (float)(i % 9) - 4;
        vn_named_tensor in = {"x", {{VN_F32, 1, {64}}, x}}, out = {"y", {{VN_F32, 1, {64}}, y}};
        vn_model_ctx *ctx = NULL;
        VT_OK(vn_model_ctx_create(md, &ctx));
        VT_OK(vn_model_run(md, ctx, &in, 1, &out, 1));
        vn_model_ctx_destroy(ctx);
        int bad = 0;
        for (int i = 0; i < 64; i++) bad += y[i] != 2 * (x[i] > 0 ? x[i] : 0);
        VT_CHECK(bad == 0, "declared %d: %d wrong", declared, bad);
        vn_model_destroy(md);
        vn_graph_destroy(gr);
    }
}

/* ---- concurrency -------------------------------------------------------------------------- */

typedef struct thread_arg {
    const vn_model *m;
    int seed, bad;
    vn_status st;
} thread_arg;

enum { ROWS = 64, RUNS = 40 };

static void *thread_main(void *p)
{
    thread_arg *a = p;
    vn_model_ctx *ctx = NULL;
    a->st = vn_model_ctx_create(a->m, &ctx);
    static _Thread_local float x[ROWS * 4], y[ROWS * 4], want[ROWS * 4];
    for (int r = 0; r < RUNS && a->st == VN_OK; r++) {
        fill(x, ROWS * 4, a->seed * 100 + r);
        reference_sample(x, want, ROWS);
        vn_named_tensor in = {"x", {{VN_F32, 2, {ROWS, 4}}, x}};
        vn_named_tensor out = {"y", {{VN_F32, 2, {ROWS, 4}}, y}};
        a->st = vn_model_run(a->m, ctx, &in, 1, &out, 1);
        a->bad += max_diff(y, want, ROWS * 4);
    }
    vn_model_ctx_destroy(ctx);
    return NULL;
}

static void test_threads(void)
{
    ob mb = ob_sample_model();
    vn_graph *g = load(&mb);
    int64_t dims[2] = {ROWS, 4};
    vn_model *m = compile(g, 1, "x", 2, dims);
    pthread_t t[6];
    thread_arg a[6];
    for (int i = 0; i < 6; i++) {
        a[i] = (thread_arg){m, i, 0, VN_OK};
        pthread_create(&t[i], NULL, thread_main, &a[i]);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(t[i], NULL);
        VT_CHECK(a[i].st == VN_OK && a[i].bad == 0, "thread %d: %s, %d wrong", i,
                 vn_status_name(a[i].st), a[i].bad);
    }
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

static atomic_int hold_open;

static void hold_stream(void *user, vn_status status)
{
    (void)user, (void)status;
    while (!atomic_load(&hold_open)) sched_yield();
}

static void test_async_streams(void)
{
    ob mb = ob_sample_model();
    vn_graph *g = load(&mb);
    int64_t dims[2] = {ROWS, 4};
    vn_model *m = compile(g, 1, "x", 2, dims);
    vn_device *dev;
    VT_OK(vn_device_default(&dev));
    enum { N = 3 };
    vn_stream *s[N];
    vn_model_ctx *ctx[N];
    static float x[N][ROWS * 4], y[N][ROWS * 4], want[N][ROWS * 4];
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < N; i++) {
            if (round == 0) VT_OK(vn_stream_create(dev, VN_PRIORITY_NORMAL, &s[i]));
            if (round == 0) VT_OK(vn_model_ctx_create(m, &ctx[i]));
            fill(x[i], ROWS * 4, round * 10 + i);
            reference_sample(x[i], want[i], ROWS);
            memset(y[i], 0xff, sizeof y[i]);
            vn_named_tensor in = {"x", {{VN_F32, 2, {ROWS, 4}}, x[i]}};
            vn_named_tensor out = {"y", {{VN_F32, 2, {ROWS, 4}}, y[i]}};
            /* One pending run per context. A blocking callback holds the stream
             * so the first run is surely still pending when the second comes
             * (without it, a fast first run made the check a race). */
            atomic_store(&hold_open, 0);
            VT_OK(vn_stream_add_callback(s[i], hold_stream, NULL, true));
            VT_OK(vn_model_run_async(m, ctx[i], s[i], &in, 1, &out, 1));
            VT_CHECK(vn_model_run_async(m, ctx[i], s[i], &in, 1, &out, 1) == VN_ERR_STATE,
                     "second pending run accepted");
            atomic_store(&hold_open, 1);
        }
        for (int i = 0; i < N; i++) {
            VT_OK(vn_stream_synchronize(s[i], -1));
            VT_CHECK(max_diff(y[i], want[i], ROWS * 4) == 0, "stream %d round %d wrong", i, round);
        }
    }
    for (int i = 0; i < N; i++) {
        vn_model_ctx_destroy(ctx[i]);
        VT_OK(vn_stream_destroy(s[i]));
    }
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

/* ---- pass-through outputs, cache, unsupported -------------------------------------------- */

/* outputs: a = Identity(x) (a graph input passed through), c = the constant w, y = Relu(x) */
static void test_passthrough_outputs(void)
{
    ob g = {0};
    const char *i1[] = {"x", NULL}, *o1[] = {"a", NULL}, *o2[] = {"y", NULL};
    const char *i3[] = {"w", NULL}, *o3[] = {"c", NULL};
    ob_node(&g, "Identity", "id_x", i1, o1, NULL);
    ob_node(&g, "Relu", "relu", i1, o2, NULL);
    ob_node(&g, "Identity", "id_w", i3, o3, NULL);
    ob_str(&g, 2, "passthrough");
    float w[2] = {5, 6};
    int64_t d[1] = {2};
    ob t = {0};
    ob_tensor_raw(&t, "w", OB_FLOAT, 1, d, w, sizeof w);
    ob_msg(&g, 5, &t);
    ob_value_info(&g, 11, "x", OB_FLOAT, 1, d, NULL);
    ob_value_info(&g, 12, "a", OB_FLOAT, 1, d, NULL);
    ob_value_info(&g, 12, "c", OB_FLOAT, 1, d, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 1, d, NULL);
    ob mb = ob_model(&g, 17);
    vn_graph *gr = load(&mb);
    for (int level = 0; level <= 1; level++) {
        vn_model *m = compile(gr, level, NULL, 0, NULL);
        vn_model_ctx *ctx = NULL;
        VT_OK(vn_model_ctx_create(m, &ctx));
        float x[2] = {-1, 2}, a[2] = {0}, c[2] = {0}, y[2] = {0};
        vn_named_tensor in = {"x", {{VN_F32, 1, {2}}, x}};
        vn_named_tensor out[3] = {{"a", {{VN_F32, 1, {2}}, a}},
                                  {"c", {{VN_F32, 1, {2}}, c}},
                                  {"y", {{VN_F32, 1, {2}}, y}}};
        VT_OK(vn_model_run(m, ctx, &in, 1, out, 3));
        VT_CHECK(a[0] == -1 && a[1] == 2 && c[0] == 5 && c[1] == 6 && y[0] == 0 && y[1] == 2,
                 "O%d: a %g %g c %g %g y %g %g", level, a[0], a[1], c[0], c[1], y[0], y[1]);
        vn_model_ctx_destroy(ctx);
        vn_model_destroy(m);
    }
    vn_graph_destroy(gr);
}

static void test_cache(void)
{
    ob mb = ob_sample_model();
    vn_graph *g = load(&mb);
    vn_model_cache *c = NULL;
    VT_OK(vn_model_cache_create(g, NULL, &c));
    vn_input_shape s3 = {"x", 2, {3, 4}}, s5 = {"x", 2, {5, 4}};
    const vn_model *a = NULL, *b = NULL, *a2 = NULL;
    VT_OK(vn_model_cache_get(c, &s3, 1, &a));
    VT_OK(vn_model_cache_get(c, &s5, 1, &b));
    VT_OK(vn_model_cache_get(c, &s3, 1, &a2));
    VT_CHECK(a && a == a2 && a != b && vn_model_cache_size(c) == 2, "cache size %d",
             (int)vn_model_cache_size(c));
    /* the first model still runs correctly after the graph was recompiled */
    vn_model_ctx *ctx = NULL;
    VT_OK(vn_model_ctx_create(a, &ctx));
    float x[12], y[12], want[12];
    fill(x, 12, 3);
    reference_sample(x, want, 3);
    vn_named_tensor in = {"x", {{VN_F32, 2, {3, 4}}, x}};
    vn_named_tensor out = {"y", {{VN_F32, 2, {3, 4}}, y}};
    VT_OK(vn_model_run(a, ctx, &in, 1, &out, 1));
    VT_CHECK(max_diff(y, want, 12) == 0, "wrong result");
    vn_model_ctx_destroy(ctx);
    vn_model_cache_destroy(c);
    vn_graph_destroy(g);
}

static void test_unsupported_listed(void)
{
    ob g = {0};
    const char *i1[] = {"x", NULL}, *o1[] = {"a", NULL}, *i2[] = {"a", NULL}, *o2[] = {"b", NULL};
    const char *i3[] = {"b", NULL}, *o3[] = {"y", NULL};
    ob_node(&g, "FooOp", "foo1", i1, o1, NULL);
    ob_node(&g, "BarOp", "bar1", i2, o2, NULL);
    ob_node(&g, "FooOp", "foo2", i3, o3, NULL);
    ob_str(&g, 2, "unsupported");
    int64_t d[1] = {2};
    ob_value_info(&g, 11, "x", OB_FLOAT, 1, d, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 1, d, NULL);
    ob mb = ob_model(&g, 17);
    vn_graph *gr = load(&mb);
    vn_model *m = NULL;
    VT_CHECK(vn_model_compile(gr, NULL, &m) == VN_ERR_UNSUPPORTED && !m, "compiled");
    VT_CONTAINS(vn_last_error(), "FooOp");
    VT_CONTAINS(vn_last_error(), "BarOp");
    VT_CONTAINS(vn_last_error(), "'foo2'");
    vn_graph_destroy(gr);
}

int main(void)
{
    VT_RUN(test_sample_levels);
    VT_RUN(test_bad_arguments);
    VT_RUN(test_run_error_names_node);
    VT_RUN(test_user_op_in_place);
    VT_RUN(test_threads);
    VT_RUN(test_async_streams);
    VT_RUN(test_passthrough_outputs);
    VT_RUN(test_cache);
    VT_RUN(test_unsupported_listed);
    return vt_summary();
}
