/*
 * test_vnm.c — .vnm offline models: compile -> save -> load -> run gives
 * bit-identical outputs to the in-memory compiled model (the bundled
 * mlp_tiny at O0, O1 and O2 (with the fused nodes' fused_from lists), a
 * model with string and tensor attributes, a pass-through output, a Split
 * whose unused outputs have no shape), a loaded model saved and loaded again,
 * the file info, and load errors on missing / empty files. Prints the load
 * time of the bundled model.
 */
#include <time.h>
#include <unistd.h>

#include "onnx_build.h"
#include "vnm_fixture.h"

/* Save m, load it back, compare runs; returns the load time. */
static double round_trip(const vn_model *m, const char *tag, const vn_named_tensor *in, int32_t ni)
{
    char path[256];
    tmp_path(path, sizeof path, tag);
    VT_OK(vn_model_save(m, path));
    vn_model *l = NULL;
    double t0 = now_ms();
    VT_OK(vn_model_load(path, NULL, &l));
    double ms = now_ms() - t0;
    if (l) {
        check_same(m, l, in, ni);
        vn_model_file_info fi;
        VT_OK(vn_model_file_info_get(l, &fi));
        VT_CHECK(fi.version == VNM_VERSION && fi.file_bytes > 0 && !strcmp(fi.producer, "vinci"),
                 "file info: version %u, %zu bytes, producer '%s'", (unsigned)fi.version,
                 fi.file_bytes, fi.producer);
        /* a loaded model saves again and loads to the same results */
        char again[300];
        snprintf(again, sizeof again, "%s.again.vnm", path);
        vn_model *l2 = NULL;
        VT_OK(vn_model_save(l, again));
        VT_OK(vn_model_load(again, NULL, &l2));
        if (l2) check_same(m, l2, in, ni);
        vn_model_destroy(l2);
        remove(again);
        vn_model_file_info none;
        VT_CHECK(vn_model_file_info_get(m, &none) == VN_ERR_STATE, "compiled model has no file");
    }
    vn_model_destroy(l);
    remove(path);
    return ms;
}

static void test_bundled_round_trip(void)
{
    char model[1024], input[1024];
    if (model_path("mlp_tiny.onnx", model, sizeof model) ||
        model_path("mlp_tiny_input.npy", input, sizeof input)) {
        printf("skip: models/mlp_tiny.onnx not found\n");
        VT_CHECK(1, "skipped");
        return;
    }
    vn_graph *g = NULL;
    vn_tensor x = {0};
    VT_OK(vn_graph_load_onnx(model, &g));
    VT_OK(vn_npy_read(input, &x));
    if (!g || !x.data) return;
    vn_input_shape shape = {"x", x.desc.rank, {0}};
    memcpy(shape.dims, x.desc.dims, sizeof shape.dims);
    vn_named_tensor in = {"x", x};
    for (int level = 0; level <= 2; level++) {
        vn_compile_options o = {.opt_level = level, .shapes = &shape, .num_shapes = 1};
        vn_model *m = NULL;
        VT_OK(vn_model_compile(g, &o, &m));
        if (!m) continue;
        int fused = 0; /* O2 fuses fc1 + its bias: the list must survive the file */
        for (int32_t i = 0; i < m->num_nodes; i++) fused += m->nodes[i].fused_from != NULL;
        VT_CHECK(level < 2 || fused > 0, "O2 mlp_tiny has no fused node");
        char tag[16]; /* room for any int: gcc cannot always bound level */
        snprintf(tag, sizeof tag, "mlp%d", level);
        double ms = round_trip(m, tag, &in, 1);
        printf("  mlp_tiny O%d: load %.3f ms\n", level, ms);
        vn_model_destroy(m);
    }
    vn_aligned_free(x.data);
    vn_graph_destroy(g);
}

static void attr_string(ob *attrs, const char *name, const char *v)
{
    ob a = {0};
    ob_str(&a, 1, name);
    ob_int(&a, 20, 3);
    ob_bytes(&a, 4, v, strlen(v));
    ob_msg(attrs, 5, &a);
}

static void attr_tensor(ob *attrs, const char *name, float v)
{
    ob a = {0}, t = {0};
    int64_t d[1] = {1};
    ob_str(&a, 1, name);
    ob_int(&a, 20, 4);
    ob_tensor_raw(&t, NULL, OB_FLOAT, 1, d, &v, sizeof v);
    ob_msg(&a, 5, &t);
    ob_msg(attrs, 5, &a);
}

static void init_i64(ob *g, const char *name, const int64_t *v, int64_t n)
{
    ob t = {0};
    ob_tensor_raw(&t, name, OB_INT64, 1, &n, v, (size_t)n * 8);
    ob_msg(g, 5, &t);
}

/* y = Pad(x, pads, mode "reflect") + ConstantOfShape(shape, value 0.5), and
 * x passed through as a second output: string, tensor and int attributes. */
static ob attr_model(void)
{
    ob g = {0}, pad_attrs = {0}, cos_attrs = {0};
    const char *i1[] = {"x", "pads", NULL}, *o1[] = {"p", NULL};
    const char *i2[] = {"shape", NULL}, *o2[] = {"c", NULL};
    const char *i3[] = {"p", "c", NULL}, *o3[] = {"y", NULL};
    attr_string(&pad_attrs, "mode", "reflect");
    attr_tensor(&cos_attrs, "value", 0.5f);
    ob_node(&g, "Pad", "pad", i1, o1, &pad_attrs);
    ob_node(&g, "ConstantOfShape", "cos", i2, o2, &cos_attrs);
    ob_node(&g, "Add", "add", i3, o3, NULL);
    ob_str(&g, 2, "attrs");
    int64_t pads[4] = {0, 1, 0, 1}, shape[2] = {2, 6}, xd[2] = {2, 4}, yd[2] = {2, 6};
    init_i64(&g, "pads", pads, 4);
    init_i64(&g, "shape", shape, 2);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, yd, NULL);
    ob_value_info(&g, 12, "x", OB_FLOAT, 2, xd, NULL);
    return ob_model(&g, 17);
}

static void test_attr_round_trip(void)
{
    ob mb = attr_model();
    vn_graph *g = NULL;
    VT_OK(vn_graph_load_onnx_bytes(mb.p, mb.n, "attrs.onnx", NULL, &g));
    ob_free(&mb);
    float x[8] = {1, -2, 3, -4, 5, -6, 7, -8};
    vn_named_tensor in = {"x", {{VN_F32, 2, {2, 4}}, x}};
    for (int level = 0; g && level <= 1; level++) {
        vn_compile_options o = {.opt_level = level};
        vn_model *m = NULL;
        VT_OK(vn_model_compile(g, &o, &m));
        if (m) round_trip(m, level ? "attr1" : "attr0", &in, 1);
        vn_model_destroy(m);
    }
    vn_graph_destroy(g);
}

/* Split into 2 of its 64 possible outputs: the 62 unused anonymous outputs
 * have no shape (rank -1) but the arena class, and must load as they are. */
static void test_split_round_trip(void)
{
    ob g = {0}, split_attrs = {0};
    const char *i1[] = {"x", NULL}, *o1[] = {"s1", "s2", NULL};
    const char *i2[] = {"s1", NULL}, *o2[] = {"y", NULL};
    ob_attr_int(&split_attrs, "axis", 1);
    ob_node(&g, "Split", "split", i1, o1, &split_attrs);
    ob_node(&g, "Relu", "relu", i2, o2, NULL);
    ob_str(&g, 2, "split");
    int64_t xd[2] = {2, 6}, hd[2] = {2, 3};
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, xd, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, 2, hd, NULL);
    ob_value_info(&g, 12, "s2", OB_FLOAT, 2, hd, NULL);
    ob mb = ob_model(&g, 17);
    vn_graph *gr = NULL;
    VT_OK(vn_graph_load_onnx_bytes(mb.p, mb.n, "split.onnx", NULL, &gr));
    ob_free(&mb);
    float x[12] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12};
    vn_named_tensor in = {"x", {{VN_F32, 2, {2, 6}}, x}};
    for (int level = 0; gr && level <= 1; level++) {
        vn_compile_options o = {.opt_level = level};
        vn_model *m = NULL;
        VT_OK(vn_model_compile(gr, &o, &m));
        int unshaped = 0;
        for (int32_t v = 0; m && v < m->num_values; v++)
            unshaped += m->values[v].desc.rank < 0 && m->values[v].mem == VN_MEM_ARENA;
        VT_CHECK(!m || unshaped > 0, "O%d: no unused Split output in the arena", level);
        if (m) round_trip(m, level ? "split1" : "split0", &in, 1);
        vn_model_destroy(m);
    }
    vn_graph_destroy(gr);
}

static void test_load_errors(void)
{
    vn_model *m = (vn_model *)1;
    VT_CHECK(vn_model_load("/nonexistent/x.vnm", NULL, &m) == VN_ERR_IO && !m, "missing file");
    char path[256];
    tmp_path(path, sizeof path, "empty");
    FILE *f = fopen(path, "wb");
    if (f) fclose(f);
    VT_CHECK(vn_model_load(path, NULL, &m) == VN_ERR_FORMAT, "empty file");
    VT_CONTAINS(vn_last_error(), "byte 0");
    remove(path);
    VT_CHECK(vn_model_save(NULL, path) == VN_ERR_INVALID_ARG, "NULL model");
}

int main(void)
{
    VT_RUN(test_bundled_round_trip);
    VT_RUN(test_attr_round_trip);
    VT_RUN(test_split_round_trip);
    VT_RUN(test_load_errors);
    return vt_summary();
}
