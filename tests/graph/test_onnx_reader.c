/*
 * test_onnx_reader.c — reading ONNX models: hand-built byte strings (no
 * Python needed) and, when .venv exists, real files written by the onnx
 * package (scripts/gen_test_models.py).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/ir.h"
#include "graph/onnx_build.h"
#include "vinci/graph.h"
#include "vt.h"

static vn_graph *load(ob *m)
{
    vn_graph *g = NULL;
    vn_status st = vn_graph_load_onnx_bytes(m->p, m->n, "test.onnx", NULL, &g);
    VT_CHECK(st == VN_OK, "load: %s", vn_last_error());
    return g;
}

static const vn_gconst *constant(const vn_graph *g, const char *name)
{
    int32_t v = vn_ir_find(g->main, name);
    return v >= 0 ? g->main->values[v].constant : NULL;
}

static void test_sample_model(void)
{
    ob m = ob_sample_model();
    vn_graph *g = load(&m);
    ob_free(&m);
    if (!g) return;
    VT_CHECK(vn_graph_num_inputs(g) == 1 && vn_graph_num_outputs(g) == 1, "io");
    VT_CHECK(vn_graph_num_nodes(g) == 2 && vn_graph_num_initializers(g) == 1, "nodes");
    vn_value_info in;
    VT_OK(vn_graph_input(g, 0, &in));
    VT_CHECK(!strcmp(in.name, "x") && in.desc.rank == 2 && in.desc.dims[0] == -1 &&
                 in.desc.dims[1] == 4 && in.sym[0] && !strcmp(in.sym[0], "batch"),
             "input x: rank %d", (int)in.desc.rank);
    VT_CHECK(vn_graph_opset_version(g, "") == 17 && vn_graph_opset_version(g, "ai.onnx") == 17,
             "opset");
    VT_CHECK(vn_graph_num_op_types(g) == 2, "op types %d", (int)vn_graph_num_op_types(g));
    vn_op_count c;
    VT_OK(vn_graph_op_type(g, 0, &c));
    VT_CHECK(c.count == 1 && c.supported, "histogram");
    const vn_gconst *w = constant(g, "w");
    VT_CHECK(w && w->desc.dtype == VN_F32 && ((float *)w->data)[3] == -4.0f, "w");
    VT_CHECK(vn_graph_unsupported_report(g, NULL, 0) == 0, "all supported");
    vn_graph_destroy(g);
}

/* Initializers in typed fields: float_data, int32_data (f16 bits, bool,
 * int8), int64_data, double_data (to f32); dims packed and unpacked. */
static void test_typed_fields(void)
{
    ob g = {0}, t = {0};
    ob_int(&t, 1, 3); /* dims unpacked */
    ob_int(&t, 2, OB_DOUBLE);
    ob_str(&t, 8, "d");
    for (int i = 0; i < 3; i++) ob_double(&t, 10, 0.5 * i);
    ob_msg(&g, 5, &t);
    ob pk = {0};
    ob_varint(&pk, 2);
    ob_bytes(&t, 1, pk.p, pk.n); /* dims packed */
    ob_free(&pk);
    ob_int(&t, 2, OB_FLOAT16);
    ob_str(&t, 8, "h");
    ob_varint(&pk, 0x3c00); /* 1.0 */
    ob_varint(&pk, 0xc000); /* -2.0 */
    ob_bytes(&t, 5, pk.p, pk.n);
    ob_free(&pk);
    ob_msg(&g, 5, &t);
    ob_int(&t, 1, 2);
    ob_int(&t, 2, OB_BOOL);
    ob_str(&t, 8, "b");
    ob_int(&t, 5, 1);
    ob_int(&t, 5, 0);
    ob_msg(&g, 5, &t);
    ob_int(&t, 1, 2);
    ob_int(&t, 2, OB_INT64);
    ob_str(&t, 8, "l");
    ob_int(&t, 7, -5);
    ob_int(&t, 7, INT64_C(1) << 40);
    ob_msg(&g, 5, &t);
    ob_int(&t, 2, OB_INT8); /* a scalar */
    ob_str(&t, 8, "s");
    ob_int(&t, 5, -7);
    ob_msg(&g, 5, &t);
    ob m = ob_model(&g, 17);
    vn_graph *gr = load(&m);
    ob_free(&m);
    if (!gr) return;
    const vn_gconst *d = constant(gr, "d"), *h = constant(gr, "h"), *b = constant(gr, "b");
    const vn_gconst *l = constant(gr, "l"), *s = constant(gr, "s");
    VT_CHECK(d && d->desc.dtype == VN_F64 && ((double *)d->data)[2] == 1.0, "double");
    VT_CHECK(h && h->desc.dtype == VN_F16 && ((uint16_t *)h->data)[1] == 0xc000, "f16");
    VT_CHECK(b && ((uint8_t *)b->data)[0] == 1 && ((uint8_t *)b->data)[1] == 0, "bool");
    VT_CHECK(l && ((int64_t *)l->data)[0] == -5 && ((int64_t *)l->data)[1] == INT64_C(1) << 40,
             "int64");
    VT_CHECK(s && s->desc.rank == 0 && ((int8_t *)s->data)[0] == -7, "int8 scalar");
    vn_graph_destroy(gr);
}

/* Constant nodes, every attribute type, a subgraph reading an outer value;
 * If is supported (the graph engine's), but only compiled models infer it. */
static void test_attributes_and_subgraph(void)
{
    ob g = {0}, attrs = {0}, a = {0}, sub = {0};
    const char *cin[] = {NULL}, *cout[] = {"k", NULL};
    ob_str(&a, 1, "value_floats");
    ob_int(&a, 20, 6);
    ob_float(&a, 7, 1.5f);
    ob_float(&a, 7, -3.0f);
    ob_msg(&attrs, 5, &a);
    ob_node(&g, "Constant", "const0", cin, cout, &attrs);
    const char *sin[] = {"k", "k", NULL}, *sout[] = {"t", NULL};
    ob_node(&sub, "Add", "inner", sin, sout, NULL);
    ob_str(&sub, 2, "then");
    ob_value_info(&sub, 12, "t", OB_FLOAT, -1, NULL, NULL);
    ob_str(&a, 1, "then_branch");
    ob_int(&a, 20, 5);
    ob_msg(&a, 6, &sub);
    ob_msg(&attrs, 5, &a);
    ob_str(&a, 1, "names");
    ob_int(&a, 20, 8);
    ob_str(&a, 9, "p");
    ob_str(&a, 9, "q");
    ob_msg(&attrs, 5, &a);
    ob_str(&a, 1, "mode");
    ob_int(&a, 20, 3);
    ob_str(&a, 4, "linear");
    ob_msg(&attrs, 5, &a);
    ob_str(&a, 1, "perm");
    ob_int(&a, 20, 7);
    ob_int(&a, 8, 2);
    ob_int(&a, 8, -1);
    ob_msg(&attrs, 5, &a);
    const char *iin[] = {"c", NULL}, *iout[] = {"y", NULL};
    ob_node(&g, "If", "if0", iin, iout, &attrs);
    ob_value_info(&g, 11, "c", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, -1, NULL, NULL);
    ob m = ob_model(&g, 17);
    vn_graph *gr = load(&m);
    ob_free(&m);
    if (!gr) return;
    const vn_gconst *k = constant(gr, "k");
    VT_CHECK(k && k->desc.rank == 1 && k->desc.dims[0] == 2 && ((float *)k->data)[1] == -3.0f,
             "Constant value_floats");
    const vn_gnode *n = &gr->main->nodes[1];
    VT_CHECK(n->num_attrs == 4 && n->attrs[0].type == VN_GATTR_GRAPH && n->attrs[0].count == 1,
             "graph attribute");
    VT_CHECK(n->num_implicit == 1, "If reads k from the outer graph: %d", (int)n->num_implicit);
    VT_CHECK(n->num_reg_attrs == 3, "registry sees names, mode and perm: %d",
             (int)n->num_reg_attrs);
    VT_CHECK(n->num_reg_attrs == 3 && n->reg_attrs[0].type == VN_ATTR_STRINGS &&
                 n->reg_attrs[0].count == 2 && !strcmp(n->reg_attrs[0].strings[1], "q"),
             "registry strings");
    VT_CHECK(n->attrs[1].count == 2 && !strcmp(n->attrs[1].strings[1], "q"), "strings");
    VT_CHECK(n->attrs[3].ints[1] == -1, "negative ints");
    char report[512];
    VT_CHECK(vn_graph_unsupported_report(gr, report, sizeof report) == 0, "report: %s", report);
    vn_status st = vn_graph_infer(gr, NULL, 0);
    VT_CHECK(st == VN_ERR_UNSUPPORTED, "infer: %s", vn_status_name(st));
    VT_CONTAINS(vn_last_error(), "If: control flow is inferred and run only by compiled models");
    vn_graph_destroy(gr);
}

/* ---- external data ---------------------------------------------------------------- */

static char tmpdir[256];

static ob external_model(const char *location, int64_t offset, int64_t length)
{
    ob g = {0}, t = {0}, e = {0};
    ob_int(&t, 1, 4);
    ob_int(&t, 2, OB_FLOAT);
    ob_str(&t, 8, "w");
    ob_str(&e, 1, "location");
    ob_str(&e, 2, location);
    ob_msg(&t, 13, &e);
    char num[32];
    if (offset >= 0) {
        snprintf(num, sizeof num, "%lld", (long long)offset);
        ob_str(&e, 1, "offset");
        ob_str(&e, 2, num);
        ob_msg(&t, 13, &e);
    }
    if (length >= 0) {
        snprintf(num, sizeof num, "%lld", (long long)length);
        ob_str(&e, 1, "length");
        ob_str(&e, 2, num);
        ob_msg(&t, 13, &e);
    }
    ob_int(&t, 14, 1);
    ob_msg(&g, 5, &t);
    return ob_model(&g, 17);
}

static vn_status load_external(const char *location, int64_t offset, int64_t length, vn_graph **g)
{
    ob m = external_model(location, offset, length);
    vn_status st = vn_graph_load_onnx_bytes(m.p, m.n, "ext.onnx", tmpdir, g);
    ob_free(&m);
    return st;
}

static void test_external_data(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/vinci_ext_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        VT_CHECK(0, "mkdtemp failed");
        return;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/w.bin", tmpdir);
    FILE *f = fopen(path, "wb");
    float data[6] = {9, 1, 2, 3, 4, 9};
    fwrite(data, sizeof data, 1, f);
    fclose(f);
    vn_graph *g = NULL;
    VT_OK(load_external("w.bin", 4, 16, &g));
    const vn_gconst *w = g ? constant(g, "w") : NULL;
    VT_CHECK(w && ((float *)w->data)[0] == 1 && ((float *)w->data)[3] == 4, "external values");
    vn_graph_destroy(g);
    const struct {
        const char *loc;
        int64_t off, len;
        vn_status want;
        const char *msg;
    } bad[] = {
        {"/etc/passwd", -1, -1, VN_ERR_FORMAT, "leaves the model's folder"},
        {"../w.bin", -1, -1, VN_ERR_FORMAT, "leaves the model's folder"},
        {"a/../../w.bin", -1, -1, VN_ERR_FORMAT, "leaves the model's folder"},
        {"w.bin", 16, 16, VN_ERR_FORMAT, "runs past the end"},
        {"w.bin", 0, 8, VN_ERR_FORMAT, "its dims need 16 bytes"},
        {"w.bin", 40, -1, VN_ERR_FORMAT, "runs past the end"},
        {"missing.bin", -1, -1, VN_ERR_IO, "cannot open"},
        {"link.bin", -1, 16, VN_ERR_FORMAT, "outside the model's folder"},
    };
    snprintf(path, sizeof path, "%s/link.bin", tmpdir);
    VT_CHECK(symlink("/etc/hostname", path) == 0, "symlink");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g = NULL;
        vn_status st = load_external(bad[i].loc, bad[i].off, bad[i].len, &g);
        VT_CHECK(st == bad[i].want && !g, "%s: %s", bad[i].loc, vn_status_name(st));
        VT_CONTAINS(vn_last_error(), bad[i].msg);
        VT_CONTAINS(vn_last_error(), "byte ");
    }
    ob m = external_model("w.bin", -1, -1);
    VT_CHECK(vn_graph_load_onnx_bytes(m.p, m.n, "mem.onnx", NULL, &g) == VN_ERR_FORMAT,
             "no folder");
    ob_free(&m);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    VT_CHECK(system(cmd) == 0, "cleanup");
}

/* ---- files written by the onnx package ----------------------------------------------- */

static char models[512];

/* The models folder: $VINCI_TEST_MODELS, or generated now with the repo's
 * .venv (found from this file's path); "" when neither is available. */
static void find_models(void)
{
    const char *env = getenv("VINCI_TEST_MODELS");
    if (env && env[0]) {
        snprintf(models, sizeof models, "%s", env);
        return;
    }
    char root[400];
    snprintf(root, sizeof root, "%s", __FILE__);
    for (int i = 0; i < 3; i++) {
        char *slash = strrchr(root, '/');
        if (slash) *slash = '\0';
    }
    char py[512], cmd[2048];
    snprintf(py, sizeof py, "%s/.venv/bin/python", root);
    if (root[0] != '/' || access(py, X_OK) != 0) {
        printf("skip   onnx-package models: no %s (run scripts/setup.sh --python)\n", py);
        return;
    }
    snprintf(models, sizeof models, "/tmp/vinci_models_XXXXXX");
    if (!mkdtemp(models)) {
        models[0] = '\0';
        return;
    }
    snprintf(cmd, sizeof cmd, "'%s' '%s/scripts/gen_test_models.py' '%s'", py, root, models);
    if (system(cmd) != 0) {
        printf("skip   onnx-package models: %s failed\n", cmd);
        models[0] = '\0';
    }
}

static vn_graph *load_file(const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", models, name);
    vn_graph *g = NULL;
    VT_OK(vn_graph_load_onnx(path, &g));
    return g;
}

static void test_onnx_add_relu(void)
{
    if (!models[0]) {
        VT_CHECK(vn_graph_load_onnx("/nonexistent.onnx", &(vn_graph *){0}) == VN_ERR_IO, "io");
        return;
    }
    vn_graph *g = load_file("add_relu.onnx");
    if (!g) return;
    vn_input_shape x = {"x", 2, {3, 4}};
    VT_OK(vn_graph_infer(g, &x, 1));
    vn_value_info out;
    VT_OK(vn_graph_output(g, 0, &out));
    VT_CHECK(out.desc.rank == 2 && out.desc.dims[0] == 3 && out.desc.dtype == VN_F32, "y");
    vn_graph_destroy(g);
}

static void compare_npy(const vn_graph *g, const char *init, const char *npy)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", models, npy);
    vn_tensor t;
    VT_OK(vn_npy_read(path, &t));
    const vn_gconst *c = constant(g, init);
    VT_CHECK(c && c->desc.dtype == t.desc.dtype &&
                 c->nbytes == (size_t)vn_desc_numel(&t.desc) * vn_dtype_size(t.desc.dtype) &&
                 !memcmp(c->data, t.data, c->nbytes),
             "%s differs from %s", init, npy);
    vn_aligned_free(t.data);
}

static void test_onnx_typed(void)
{
    if (!models[0]) {
        VT_CHECK(1, "skipped");
        return;
    }
    vn_graph *g = load_file("typed.onnx");
    if (!g) return;
    const char *keys[] = {"f32", "f16", "f64", "i8", "u8", "i16", "u16", "i32", "i64", "b"};
    char init[64], npy[64];
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        snprintf(npy, sizeof npy, "typed_%s.npy", keys[i]);
        snprintf(init, sizeof init, "raw_%s", keys[i]);
        compare_npy(g, init, npy);
        snprintf(init, sizeof init, "typed_%s", keys[i]);
        compare_npy(g, init, npy);
    }
    const vn_gconst *a = constant(g, "raw_i16"), *b = constant(g, "typed_u16");
    VT_CHECK(a && a->desc.dtype == VN_I16 && b && b->desc.dtype == VN_U16, "16-bit kept");
    const vn_gconst *bf = constant(g, "typed_bf16");
    VT_CHECK(bf && bf->desc.dtype == VN_BF16 && vn_bf16_to_f32(((uint16_t *)bf->data)[1]) == -2.5f,
             "bf16");
    const vn_gconst *ci = constant(g, "c_ints"), *cf = constant(g, "c_float");
    VT_CHECK(ci && ci->desc.dtype == VN_I64 && ((int64_t *)ci->data)[1] == -1, "value_ints");
    VT_CHECK(cf && cf->desc.rank == 0 && *(float *)cf->data == 2.5f, "value_float");
    const vn_gconst *ct = constant(g, "c_tensor");
    VT_CHECK(ct && ct->desc.dtype == VN_I32 && ((int32_t *)ct->data)[5] == 5, "value tensor");
    VT_OK(vn_graph_infer(g, NULL, 0));
    vn_graph_destroy(g);
}

static void test_onnx_external_and_control_flow(void)
{
    if (!models[0]) {
        VT_CHECK(1, "skipped");
        return;
    }
    vn_graph *g = load_file("external.onnx");
    if (g) compare_npy(g, "w", "external_w.npy");
    const vn_gconst *b = g ? constant(g, "b") : NULL;
    VT_CHECK(b && ((int64_t *)b->data)[15] == 15, "external int64");
    vn_graph_destroy(g);
    g = load_file("control_flow.onnx");
    if (!g) return;
    char report[1024];
    vn_graph_unsupported_report(g, report, sizeof report);
    VT_CHECK(!strstr(report, "If (") && !strstr(report, "Loop ("), "If, Loop supported: %s",
             report);
    VT_CONTAINS(report, "FusedThing (domain 'com.example', opset 1): 1 node 'custom0'");
    VT_CHECK(vn_graph_infer(g, NULL, 0) == VN_ERR_UNSUPPORTED, "unsupported");
    VT_CONTAINS(vn_last_error(), "1 operator is not supported");
    vn_graph_destroy(g);
}

/* A string-list attribute (RNN activations) reaches the operator: the run
 * matches NumPy's float64 RNN with Relu, which differs from the default Tanh. */
static void test_onnx_strings_attribute(void)
{
    if (!models[0]) {
        VT_CHECK(1, "skipped");
        return;
    }
    vn_graph *g = load_file("rnn_relu.onnx");
    char px[700], py[700];
    snprintf(px, sizeof px, "%s/rnn_relu_x.npy", models);
    snprintf(py, sizeof py, "%s/rnn_relu_y.npy", models);
    vn_tensor x = {0}, want = {0};
    VT_OK(vn_npy_read(px, &x));
    VT_OK(vn_npy_read(py, &want));
    vn_compile_options o = {.opt_level = 1};
    vn_model *m = NULL;
    vn_model_ctx *ctx = NULL;
    vn_tensor y;
    if (g && x.data && want.data && vn_model_compile(g, &o, &m) == VN_OK &&
        vn_model_ctx_create(m, &ctx) == VN_OK) {
        vn_named_tensor in = {"x", x};
        VT_OK(vn_model_run(m, ctx, &in, 1, NULL, 0));
        VT_OK(vn_model_ctx_output(ctx, "y", &y));
        int64_t n = vn_desc_numel(&want.desc), bad = 0;
        for (int64_t i = 0; i < n; i++)
            bad += fabsf(((float *)y.data)[i] - ((float *)want.data)[i]) > 1e-5f;
        VT_CHECK(n == 40 && bad == 0, "%lld of %lld values differ", (long long)bad, (long long)n);
    } else {
        VT_CHECK(0, "rnn_relu: %s", vn_last_error());
    }
    vn_model_ctx_destroy(ctx);
    vn_model_destroy(m);
    vn_aligned_free(x.data);
    vn_aligned_free(want.data);
    vn_graph_destroy(g);
}

int main(void)
{
    VT_RUN(test_sample_model);
    VT_RUN(test_typed_fields);
    VT_RUN(test_attributes_and_subgraph);
    VT_RUN(test_external_data);
    find_models();
    VT_RUN(test_onnx_add_relu);
    VT_RUN(test_onnx_typed);
    VT_RUN(test_onnx_external_and_control_flow);
    VT_RUN(test_onnx_strings_attribute);
    if (models[0] && !getenv("VINCI_TEST_MODELS")) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", models);
        if (system(cmd) != 0) printf("could not remove %s\n", models);
    }
    return vt_summary();
}
