/*
 * test_node_groups.c — nodes that run at once (compile_groups.c), turned on
 * with VINCI_CONCURRENT_NODES=1: a fire module's two expand convs and a
 * residual block's downsample beside its first conv become groups (the
 * residual Add fused into the deeper conv leaves the downsample free); a
 * grouped run is byte-identical to the same model run node by node (a
 * profiled run) and to a .vnm round trip, every time; members' planned
 * memory is disjoint; a failing member's error names it, and with two
 * failing the earlier one, as a run in order would; the context runs again
 * afterwards.
 */
#include "test_fuse_util.h"
#include "vinci/profile.h"
#include "vnm_fixture.h"

#define HW 19

static void conv(ob *g, vt_rng *r, const char *x, int64_t k, int64_t c, int64_t ks, const char *y)
{
    char w[64];
    snprintf(w, sizeof w, "%s.w", y);
    int64_t wd[4] = {k, c, ks, ks}, p = ks / 2, pads[4] = {p, p, p, p};
    fz_rand_init(g, r, w, 4, wd, -0.3, 0.3);
    ob a = {0};
    fz_attr_ints(&a, "pads", 4, pads);
    fz_node(g, "Conv", y, x, w, NULL, y, &a);
}

static void relu(ob *g, const char *x, const char *y)
{
    fz_node(g, "Relu", y, x, NULL, NULL, y, NULL);
}

/* x -> squeeze -> {expand 1x1, expand 3x3} -> Concat -> {conv1 -> conv2,
 * downsample} -> Add -> Relu -> y */
static vn_graph *branchy(void)
{
    ob g = {0};
    vt_rng r = {21};
    int64_t xd[4] = {1, 8, HW, HW};
    fz_input(&g, "x", 4, xd);
    conv(&g, &r, "x", 8, 8, 1, "sq"), relu(&g, "sq", "sqr");
    conv(&g, &r, "sqr", 16, 8, 1, "e1"), relu(&g, "e1", "e1r");
    conv(&g, &r, "sqr", 16, 8, 3, "e3"), relu(&g, "e3", "e3r");
    ob a = {0};
    ob_attr_int(&a, "axis", 1);
    fz_node(&g, "Concat", "cat", "e1r", "e3r", NULL, "cat", &a);
    conv(&g, &r, "cat", 16, 32, 3, "c1"), relu(&g, "c1", "c1r");
    conv(&g, &r, "c1r", 16, 16, 3, "c2");
    conv(&g, &r, "cat", 16, 32, 1, "ds");
    fz_node(&g, "Add", "s", "c2", "ds", NULL, "s", NULL);
    relu(&g, "s", "y");
    fz_output(&g, "y");
    return fz_load(&g, 17);
}

/* x -> {p, q} -> {a = conv(p), b = conv(q)} -> Mul -> y: a reads p for the
 * last time, so a plan that let b write into p's memory would race. */
static vn_graph *diamond(void)
{
    ob g = {0};
    vt_rng r = {22};
    int64_t xd[4] = {1, 8, HW, HW};
    fz_input(&g, "x", 4, xd);
    conv(&g, &r, "x", 16, 8, 1, "p");
    conv(&g, &r, "x", 16, 8, 1, "q");
    conv(&g, &r, "p", 16, 16, 3, "a");
    conv(&g, &r, "q", 16, 16, 3, "b");
    fz_node(&g, "Mul", "s", "a", "b", NULL, "y", NULL);
    fz_output(&g, "y");
    return fz_load(&g, 17);
}

static vn_named_tensor image(void)
{
    static float x[8 * HW * HW];
    vt_rng rng = {5};
    vt_fill(&rng, x, sizeof x / sizeof x[0], -1, 1);
    return (vn_named_tensor){"x", {{VN_F32, 4, {1, 8, HW, HW}}, x}};
}

static int count_groups(const vn_model *m)
{
    int groups = 0;
    for (int32_t i = 0; i < m->num_nodes; i++) groups += m->nodes[i].concurrent > 1;
    return groups;
}

/* Value v's arena bytes [lo, hi), or lo = hi = 0 outside the arena. */
static void range(const vn_model *m, int32_t v, size_t *lo, size_t *hi)
{
    const vn_cvalue *val = &m->values[v];
    *lo = *hi = 0;
    if (v < 0 || val->mem != VN_MEM_ARENA) return;
    *lo = val->offset;
    *hi = val->offset + desc_bytes(&val->desc);
}

/* No member's outputs overlap what another member of its group reads or writes. */
static void check_disjoint(const vn_model *m)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        for (int32_t a = i; a < i + m->nodes[i].concurrent; a++)
            for (int32_t b = i; b < i + m->nodes[i].concurrent; b++) {
                if (a == b) continue;
                const vn_cnode *x = &m->nodes[a], *y = &m->nodes[b];
                for (int32_t k = 0; k < x->num_outputs; k++) {
                    size_t lo, hi;
                    range(m, x->outputs[k], &lo, &hi);
                    VT_CHECK(hi > lo, "member %d writes outside the arena", (int)a);
                    for (int32_t l = 0; l < y->num_inputs + y->num_outputs; l++) {
                        int32_t v =
                            l < y->num_inputs ? y->inputs[l] : y->outputs[l - y->num_inputs];
                        size_t lo2, hi2;
                        range(m, v, &lo2, &hi2);
                        VT_CHECK(hi2 <= lo || hi <= lo2, "members %d and %d overlap", (int)a,
                                 (int)b);
                    }
                }
            }
    }
}

static void copy_y(const vn_model *m, vn_model_ctx *c, float *out, size_t n)
{
    vn_tensor t;
    VT_OK(vn_model_ctx_output(c, "y", &t));
    (void)m;
    if (t.data) memcpy(out, t.data, n * sizeof *out);
}

static void check_groups(vn_graph *gr)
{
    vn_device_options dop = {.num_threads = 2};
    vn_device *d = NULL;
    VT_OK(vn_device_create(&dop, &d));
    vn_compile_options o = {.opt_level = 3, .device = d};
    vn_model *m = NULL;
    VT_OK(vn_model_compile(gr, &o, &m));
    if (!m) return;
    VT_CHECK(count_groups(m) == 2, "%d groups, want 2", count_groups(m));
    vn_model_stats s;
    VT_OK(vn_model_get_stats(m, &s));
    VT_CHECK(fz_changes(&s, "node-groups") == 2, "node-groups reports %d",
             fz_changes(&s, "node-groups"));
    check_disjoint(m);

    enum { N = 16 * HW * HW };
    static float seq[N], got[N];
    vn_named_tensor in[1] = {image()};
    vn_model_ctx *c = NULL;
    VT_OK(vn_model_ctx_create(m, &c));
    vn_profiler *p = NULL; /* a profiled run runs node by node */
    VT_OK(vn_profiler_create(m, 100, 10, &p));
    VT_OK(vn_profiler_run(p, c, in, 1));
    vn_profiler_destroy(p);
    copy_y(m, c, seq, N);
    for (int rep = 0; rep < 50; rep++) {
        memset(got, 0, sizeof got);
        VT_OK(vn_model_run(m, c, in, 1, NULL, 0));
        copy_y(m, c, got, N);
        VT_CHECK(!memcmp(got, seq, sizeof got), "run %d differs from the run node by node", rep);
    }
    vn_model_stats o2; /* every level, O3 with its groups too, gives O0's outputs */
    fz_levels(gr, in, 1, (const char *const[]){"y", NULL}, &o2);

    char path[256];
    tmp_path(path, sizeof path, "groups");
    vn_model *back = NULL;
    VT_OK(vn_model_save(m, path));
    VT_OK(vn_model_load(path, d, &back));
    if (back) {
        VT_CHECK(count_groups(back) == 2, "%d groups after loading", count_groups(back));
        check_same(m, back, in, 1);
    }
    remove(path);
    vn_model_destroy(back);
    vn_model_ctx_destroy(c);
    vn_model_destroy(m);
    vn_device_destroy(d);
}

/* The expands; conv1 beside the downsample. */
static void test_branches(void)
{
    vn_graph *gr = branchy();
    check_groups(gr);
    vn_graph_destroy(gr);
}

/* p beside q, a beside b. */
static void test_diamond(void)
{
    vn_graph *gr = diamond();
    check_groups(gr);
    vn_graph_destroy(gr);
}

/* data [8, 4] -> Gather(ia), Gather(ib) -> Add -> y: the two Gathers are a
 * group; indices out of range fail the member that reads them. */
static void test_member_error(void)
{
    ob g = {0};
    int64_t dd[2] = {8, 4}, id[1] = {3};
    fz_input(&g, "data", 2, dd);
    ob_value_info(&g, 11, "ia", OB_INT64, 1, id, NULL);
    ob_value_info(&g, 11, "ib", OB_INT64, 1, id, NULL);
    fz_node(&g, "Gather", "ga", "data", "ia", NULL, "ga", NULL);
    fz_node(&g, "Gather", "gb", "data", "ib", NULL, "gb", NULL);
    fz_node(&g, "Add", "s", "ga", "gb", NULL, "y", NULL);
    fz_output(&g, "y");
    vn_graph *gr = fz_load(&g, 17);
    vn_device_options dop = {.num_threads = 2};
    vn_device *d = NULL;
    VT_OK(vn_device_create(&dop, &d));
    vn_compile_options o = {.opt_level = 3, .device = d};
    vn_model *m = NULL;
    vn_model_ctx *c = NULL;
    VT_OK(vn_model_compile(gr, &o, &m));
    if (m) VT_OK(vn_model_ctx_create(m, &c));
    if (!c) return;
    VT_CHECK(count_groups(m) == 1, "%d groups, want the Gathers", count_groups(m));
    float data[32];
    for (int i = 0; i < 32; i++) data[i] = (float)i;
    int64_t good[3] = {0, 7, 2}, bad[3] = {1, 99, 0};
    static const struct {
        bool a_bad, b_bad;
        const char *names;
    } cases[] = {{false, true, "'gb'"}, {true, false, "'ga'"}, {true, true, "'ga'"}};
    for (int k = 0; k < 4; k++) {
        bool ab = k < 3 && cases[k].a_bad, bb = k < 3 && cases[k].b_bad;
        vn_named_tensor in[3] = {{"data", {{VN_F32, 2, {8, 4}}, data}},
                                 {"ia", {{VN_I64, 1, {3}}, ab ? bad : good}},
                                 {"ib", {{VN_I64, 1, {3}}, bb ? bad : good}}};
        vn_status st = vn_model_run(m, c, in, 3, NULL, 0);
        if (k == 3) { /* all good again: the context still runs */
            VT_OK(st);
            vn_tensor t;
            VT_OK(vn_model_ctx_output(c, "y", &t));
            VT_CHECK(t.data && ((float *)t.data)[4] == 56.0f, "y[1][0] = %g, want 56",
                     t.data ? ((float *)t.data)[4] : -1.0);
            continue;
        }
        VT_CHECK(st != VN_OK, "case %d: the run succeeded", k);
        VT_CONTAINS(vn_last_error(), cases[k].names);
    }
    vn_model_ctx_destroy(c);
    vn_model_destroy(m);
    vn_graph_destroy(gr);
    vn_device_destroy(d);
}

int main(void)
{
    setenv("VINCI_CONCURRENT_NODES", "1", 1); /* before the first compile reads it */
    VT_RUN(test_branches);
    VT_RUN(test_diamond);
    VT_RUN(test_member_error);
    return vt_summary();
}
