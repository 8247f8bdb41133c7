/*
 * test_passes.c — each pass as a unit on a model under construction (what it
 * changed, and that it reports it), then whole pipelines: O0 and O1 give the
 * same outputs on a graph that exercises every pass.
 */
#include "graph/compile.h"
#include "onnx_build.h"
#include "vt.h"

static vn_graph *load(ob *m)
{
    vn_graph *g = NULL;
    vn_status st = vn_graph_load_onnx_bytes(m->p, m->n, "passes.onnx", NULL, &g);
    VT_CHECK(st == VN_OK, "load: %s", vn_last_error());
    ob_free(m);
    return g;
}

static void add_f32(ob *g, const char *name, int n, const float *v)
{
    int64_t d[1] = {n};
    ob t = {0};
    ob_tensor_raw(&t, name, OB_FLOAT, 1, d, v, (size_t)n * sizeof *v);
    ob_msg(g, 5, &t);
}

static void node1(ob *g, const char *op, const char *name, const char *in0, const char *in1,
                  const char *out, ob *attrs)
{
    const char *ins[3] = {in0, in1, NULL}, *outs[2] = {out, NULL};
    ob_node(g, op, name, ins, outs, attrs);
}

/* Finish a graph with x f32[4] in and the given outputs (f32[4] unless i64). */
static vn_graph *finish(ob *g, const char *const *outs, const int *i64)
{
    int64_t d[1] = {4};
    ob_str(g, 2, "passes");
    ob_value_info(g, 11, "x", OB_FLOAT, 1, d, NULL);
    for (int i = 0; outs[i]; i++)
        ob_value_info(g, 12, outs[i], i64 && i64[i] ? OB_INT64 : OB_FLOAT, -1, NULL, NULL);
    ob m = ob_model(g, 17);
    return load(&m);
}

static vn_model *build(vn_graph *g)
{
    vn_compile_options o = {.opt_level = 1};
    vn_model *m = NULL;
    VT_OK(vn_graph_check_supported(g));
    VT_OK(vn_cg_build(g, &o, &m));
    return m;
}

static int32_t find_value(const vn_model *m, const char *name)
{
    for (int32_t v = 0; v < m->num_values; v++)
        if (!strcmp(m->values[v].name, name)) return v;
    return -1;
}

static int32_t find_node(const vn_model *m, const char *name)
{
    for (int32_t i = 0; i < m->num_nodes; i++)
        if (!strcmp(m->nodes[i].name, name)) return i;
    return -1;
}

static int live_nodes(const vn_model *m)
{
    int n = 0;
    for (int32_t i = 0; i < m->num_nodes; i++) n += !m->nodes[i].dead;
    return n;
}

static void test_identity_removal(void)
{
    /* x -> Identity(i1) -> Relu -> r -> Dropout -> y (output): i1 is bypassed,
     * the Dropout's producer (Relu) writes y directly; p = Identity(x) is a
     * graph input passed straight to an output and stays. */
    ob g = {0};
    node1(&g, "Identity", "i1", "x", NULL, "a", NULL);
    node1(&g, "Relu", "relu", "a", NULL, "r", NULL);
    node1(&g, "Dropout", "drop", "r", NULL, "y", NULL);
    node1(&g, "Identity", "keep", "x", NULL, "p", NULL);
    const char *outs[] = {"y", "p", NULL};
    vn_graph *gr = finish(&g, outs, NULL);
    vn_model *m = build(gr);
    vn_pass_report r = {"identity", 0, ""};
    VT_OK(vn_pass_identity(m, &r));
    VT_CHECK(r.changes == 2, "changes %d (%s)", (int)r.changes, r.detail);
    VT_CONTAINS(r.detail, "node 'i1' (Identity)");
    VT_CONTAINS(r.detail, "node 'drop' (Dropout)");
    int32_t ri = find_node(m, "relu");
    const vn_cnode *relu = &m->nodes[ri];
    VT_CHECK(!relu->dead && relu->inputs[0] == find_value(m, "x"), "Relu does not read x");
    VT_CHECK(relu->outputs[0] == find_value(m, "y"), "Relu does not write y");
    VT_CHECK(m->values[find_value(m, "y")].producer == ri, "y's producer");
    VT_CHECK(!m->nodes[find_node(m, "keep")].dead && live_nodes(m) == 2, "%d live nodes",
             live_nodes(m));
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

static void test_dead_nodes(void)
{
    /* y = Relu(x); n1 = Neg(x) and n2 = Abs(n1) feed nothing */
    ob g = {0};
    node1(&g, "Neg", "n1", "x", NULL, "a", NULL);
    node1(&g, "Relu", "relu", "x", NULL, "y", NULL);
    node1(&g, "Abs", "n2", "a", NULL, "b", NULL);
    const char *outs[] = {"y", NULL};
    vn_graph *gr = finish(&g, outs, NULL);
    vn_model *m = build(gr);
    vn_pass_report r = {"dead", 0, ""};
    VT_OK(vn_pass_dead_nodes(m, &r));
    VT_CHECK(r.changes == 2 && m->nodes[0].dead && m->nodes[2].dead && !m->nodes[1].dead,
             "changes %d: %s", (int)r.changes, r.detail);
    VT_CONTAINS(r.detail, "'n1'");
    vn_pass_report again = {"dead", 0, ""};
    VT_OK(vn_pass_dead_nodes(m, &again));
    VT_CHECK(again.changes == 0, "second run changed %d", (int)again.changes);
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

static void test_shape_folding(void)
{
    /* s = Shape(Relu(x))[start=0], z = Size(x) */
    ob g = {0}, attrs = {0};
    node1(&g, "Relu", "relu", "x", NULL, "r", NULL);
    ob_attr_int(&attrs, "start", -1);
    node1(&g, "Shape", "shape", "r", NULL, "s", &attrs);
    node1(&g, "Size", "size", "x", NULL, "z", NULL);
    const char *outs[] = {"s", "z", NULL};
    int i64[] = {1, 1};
    vn_graph *gr = finish(&g, outs, i64);
    vn_model *m = build(gr);
    vn_pass_report r = {"shape", 0, ""};
    for (int32_t i = 0; i < 3; i++) {
        bool changed = false;
        VT_OK(vn_cg_infer_node(m, i));
        VT_OK(vn_fold_shape(m, i, &r, &changed));
        VT_CHECK(changed == (i > 0), "node %d changed %d", (int)i, changed);
    }
    const vn_cvalue *s = &m->values[find_value(m, "s")], *z = &m->values[find_value(m, "z")];
    VT_CHECK(s->kind == VN_CV_CONST && s->desc.rank == 1 && s->desc.dims[0] == 1 &&
                 ((const int64_t *)s->data)[0] == 4,
             "Shape folded wrongly");
    VT_CHECK(z->kind == VN_CV_CONST && z->desc.rank == 0 && ((const int64_t *)z->data)[0] == 4,
             "Size folded wrongly");
    VT_CHECK(r.changes == 2, "changes %d", (int)r.changes);
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

static void test_constant_folding(void)
{
    /* c = w1 * w2 (constant), y = x + c */
    ob g = {0};
    float w1[4] = {1, 2, 3, 4}, w2[4] = {2, 2, -1, 0.5f};
    add_f32(&g, "w1", 4, w1);
    add_f32(&g, "w2", 4, w2);
    node1(&g, "Mul", "mul", "w1", "w2", "c", NULL);
    node1(&g, "Add", "add", "x", "c", "y", NULL);
    const char *outs[] = {"y", NULL};
    vn_graph *gr = finish(&g, outs, NULL);
    vn_model *m = build(gr);
    vn_pass_report r = {"const", 0, ""};
    bool changed = false;
    VT_OK(vn_cg_infer_node(m, 0));
    VT_OK(vn_fold_const(m, 0, &r, &changed));
    const vn_cvalue *c = &m->values[find_value(m, "c")];
    const float *cd = c->data;
    VT_CHECK(changed && m->nodes[0].dead && c->kind == VN_CV_CONST, "not folded");
    VT_CHECK(cd && cd[0] == 2 && cd[1] == 4 && cd[2] == -3 && cd[3] == 2, "wrong values");
    VT_CONTAINS(r.detail, "node 'mul' (Mul)");
    /* the Add reads x, which is not constant: not folded */
    changed = true;
    VT_OK(vn_cg_infer_node(m, 1));
    VT_OK(vn_fold_const(m, 1, &r, &changed));
    VT_CHECK(!changed && r.changes == 1, "Add folded");
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

/* Every pass has something to do; O0 and O1 must agree. */
/* A pass's detail names changes until it is full, then ends in one "...";
 * `changes` counts them all. */
static void test_report_detail(void)
{
    vn_pass_report r;
    memset(&r, 0, sizeof r);
    char what[64];
    for (int i = 0; i < 60; i++) {
        snprintf(what, sizeof what, "node 'layer%d.conv' (Conv)+Relu", i);
        vn_pass_note(&r, what);
    }
    VT_CHECK(r.changes == 60, "changes %d, want 60", (int)r.changes);
    VT_CONTAINS(r.detail, "node 'layer0.conv' (Conv)+Relu, node 'layer1.conv'");
    size_t n = strlen(r.detail);
    VT_CHECK(n >= 5 && !strcmp(r.detail + n - 5, ", ..."), "detail ends '%s'", r.detail);
    VT_CHECK(strstr(r.detail, "...") == r.detail + n - 3, "more than one '...': %s", r.detail);
    memset(&r, 0, sizeof r);
    vn_pass_note(&r, "a");
    vn_pass_note(&r, "b");
    VT_CHECK(!strcmp(r.detail, "a, b") && r.changes == 2, "detail '%s'", r.detail);
}

static void test_levels_agree(void)
{
    ob g = {0};
    float w1[4] = {1, 2, 3, 4}, w2[4] = {0.5f, -1, 2, 0};
    add_f32(&g, "w1", 4, w1);
    add_f32(&g, "w2", 4, w2);
    node1(&g, "Mul", "mul", "w1", "w2", "c", NULL);
    node1(&g, "Identity", "id", "x", NULL, "xi", NULL);
    node1(&g, "Add", "add", "xi", "c", "s", NULL);
    node1(&g, "Neg", "unused", "s", NULL, "u", NULL);
    node1(&g, "Dropout", "drop", "s", NULL, "d", NULL);
    node1(&g, "Sigmoid", "sig", "d", NULL, "y", NULL);
    node1(&g, "Shape", "shape", "d", NULL, "shp", NULL);
    const char *outs[] = {"y", "shp", NULL};
    int i64[] = {0, 1};
    vn_graph *gr = finish(&g, outs, i64);
    float x[4] = {-1, 0.5f, 2, -3}, y[2][4];
    int64_t shp[2][1];
    for (int level = 0; level <= 1; level++) {
        vn_compile_options o = {.opt_level = level};
        vn_model *m = NULL;
        vn_model_ctx *ctx = NULL;
        VT_OK(vn_model_compile(gr, &o, &m));
        VT_OK(vn_model_ctx_create(m, &ctx));
        vn_named_tensor in = {"x", {{VN_F32, 1, {4}}, x}};
        vn_named_tensor out[2] = {{"y", {{VN_F32, 1, {4}}, y[level]}},
                                  {"shp", {{VN_I64, 1, {1}}, shp[level]}}};
        VT_OK(vn_model_run(m, ctx, &in, 1, out, 2));
        vn_model_stats s;
        VT_OK(vn_model_get_stats(m, &s));
        if (level == 1) {
            VT_CHECK(s.nodes_before == 7 && s.nodes_after == 2, "O1 kept %d of %d nodes",
                     (int)s.nodes_after, (int)s.nodes_before);
            VT_CHECK(s.num_reports == 4, "%d reports", (int)s.num_reports);
        } else {
            VT_CHECK(s.nodes_after == 7 && s.num_reports == 0, "O0 changed the graph");
        }
        vn_model_ctx_destroy(ctx);
        vn_model_destroy(m);
    }
    for (int i = 0; i < 4; i++) {
        double want = 1.0 / (1.0 + exp(-(x[i] + w1[i] * w2[i])));
        VT_CHECK(fabs(y[0][i] - want) < 1e-6 && fabs(y[1][i] - want) < 1e-6, "y[%d] %g %g %g", i,
                 y[0][i], y[1][i], want);
    }
    VT_CHECK(shp[0][0] == 4 && shp[1][0] == 4, "shape %lld %lld", (long long)shp[0][0],
             (long long)shp[1][0]);
    vn_graph_destroy(gr);
}

int main(void)
{
    VT_RUN(test_identity_removal);
    VT_RUN(test_dead_nodes);
    VT_RUN(test_shape_folding);
    VT_RUN(test_constant_folding);
    VT_RUN(test_report_detail);
    VT_RUN(test_levels_agree);
    return vt_summary();
}
