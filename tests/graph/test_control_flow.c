/*
 * test_control_flow.c — If, Loop and Scan in compiled models, against
 * references computed here by plain loops: both If branches, branches of
 * different shapes (dynamic outputs), Loop with a trip count only, a
 * condition only, both, zero iterations, scan outputs, a body that needs its
 * iteration number's value (Slice), outer-scope values, Scan forward and
 * reverse on other axes, a Loop nested in an If reading the main graph,
 * errors naming the node, hostile subgraphs, and .vnm refusal.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/onnx_build.h"
#include "vinci/graph.h"
#include "vt.h"

static vn_graph *load(ob *m)
{
    vn_graph *g = NULL;
    vn_status st = vn_graph_load_onnx_bytes(m->p, m->n, "cf.onnx", NULL, &g);
    VT_CHECK(st == VN_OK, "load: %s", vn_last_error());
    ob_free(m);
    return g;
}

static vn_model *compile(vn_graph *g, int level)
{
    vn_compile_options o = {.opt_level = level};
    vn_model *m = NULL;
    vn_status st = vn_model_compile(g, &o, &m);
    VT_CHECK(st == VN_OK, "compile O%d: %s", level, vn_last_error());
    return m;
}

static vn_status compile_error(vn_graph *g)
{
    vn_compile_options o = {.opt_level = 1};
    vn_model *m = NULL;
    vn_status st = vn_model_compile(g, &o, &m);
    vn_model_destroy(m);
    return st;
}

static vn_tensor_desc scalar(vn_dtype d)
{
    return (vn_tensor_desc){d, 0, {0}};
}

static vn_tensor_desc vec(int64_t n)
{
    return (vn_tensor_desc){VN_F32, 1, {n}};
}

static int bad_floats(const float *a, const float *b, int64_t n)
{
    int bad = 0;
    for (int64_t i = 0; i < n; i++) bad += fabsf(a[i] - b[i]) > 1e-5f * (1 + fabsf(b[i]));
    return bad;
}

/* Run once; output `name` from the context (run-time shape when dynamic). */
static vn_status run(const vn_model *m, vn_model_ctx *c, vn_named_tensor *in, int ni,
                     const char *name, vn_tensor *out)
{
    vn_status st = vn_model_run(m, c, in, ni, NULL, 0);
    if (st == VN_OK && name) st = vn_model_ctx_output(c, name, out);
    return st;
}

/* ---- If --------------------------------------------------------------------------- */

/* y = If(c) then Add(x, x) else `else_op`(x, x) (Mul: same shape; Concat:
 * [4, 3]); both branches read x from the main graph. */
static ob if_model(const char *else_op, int else_outputs)
{
    ob g = {0}, then_g = {0}, else_g = {0}, attrs = {0}, cat = {0};
    const char *xx[] = {"x", "x", NULL}, *t[] = {"t", NULL}, *e[] = {"e", NULL};
    ob_node(&then_g, "Add", "then_add", xx, t, NULL);
    ob_value_info(&then_g, 12, "t", OB_FLOAT, -1, NULL, NULL);
    if (!strcmp(else_op, "Concat")) ob_attr_int(&cat, "axis", 0);
    ob_node(&else_g, else_op, "else_op", xx, e, &cat);
    for (int k = 0; k < else_outputs; k++)
        ob_value_info(&else_g, 12, "e", OB_FLOAT, -1, NULL, NULL);
    ob_attr_graph(&attrs, "then_branch", &then_g);
    ob_attr_graph(&attrs, "else_branch", &else_g);
    const char *c[] = {"c", NULL}, *y[] = {"y", NULL};
    ob_node(&g, "If", "if0", c, y, &attrs);
    int64_t d[2] = {2, 3};
    ob_value_info(&g, 11, "c", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&g, 11, "x", OB_FLOAT, 2, d, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, -1, NULL, NULL);
    return ob_model(&g, 17);
}

static void test_if_branches(void)
{
    float x[6] = {1, -2, 3, 0.5f, -1, 4}, want[6];
    for (int level = 0; level <= 3; level += 3) {
        ob mb = if_model("Mul", 1);
        vn_graph *g = load(&mb);
        vn_model *m = g ? compile(g, level) : NULL;
        vn_model_ctx *c = NULL;
        if (!m || vn_model_ctx_create(m, &c) != VN_OK) goto done;
        vn_tensor_desc yd;
        VT_OK(vn_model_output(m, 0, NULL, &yd));
        VT_CHECK(yd.rank == 2 && yd.dims[0] == 2 && yd.dims[1] == 3, "same shapes: fixed output");
        for (int b = 0; b < 2; b++) {
            uint8_t cond = b == 0;
            vn_named_tensor in[2] = {{"c", {scalar(VN_BOOL), &cond}},
                                     {"x", {{VN_F32, 2, {2, 3}}, x}}};
            vn_tensor y;
            VT_OK(run(m, c, in, 2, "y", &y));
            for (int i = 0; i < 6; i++) want[i] = cond ? x[i] + x[i] : x[i] * x[i];
            VT_CHECK(bad_floats(y.data, want, 6) == 0, "O%d %s branch", level,
                     cond ? "then" : "else");
        }
    done:
        vn_model_ctx_destroy(c);
        vn_model_destroy(m);
        vn_graph_destroy(g);
    }
}

static void test_if_shapes_differ(void)
{
    ob mb = if_model("Concat", 1);
    vn_graph *g = load(&mb);
    vn_model *m = g ? compile(g, 1) : NULL;
    vn_model_ctx *c = NULL;
    if (!m || vn_model_ctx_create(m, &c) != VN_OK) goto done;
    vn_tensor_desc yd;
    VT_OK(vn_model_output(m, 0, NULL, &yd));
    VT_CHECK(yd.dtype == VN_F32 && yd.rank == 2 && yd.dims[0] == -1 && yd.dims[1] == -1,
             "branch shapes differ: the output's dims are known only at run time");
    float x[6] = {1, 2, 3, 4, 5, 6}, buf[12];
    for (int b = 0; b < 2; b++) {
        uint8_t cond = b == 0;
        vn_named_tensor in[2] = {{"c", {scalar(VN_BOOL), &cond}}, {"x", {{VN_F32, 2, {2, 3}}, x}}};
        vn_tensor y;
        VT_OK(run(m, c, in, 2, "y", &y));
        int64_t rows = cond ? 2 : 4;
        VT_CHECK(y.desc.rank == 2 && y.desc.dims[0] == rows && y.desc.dims[1] == 3,
                 "run-time shape [%lld, %lld]", (long long)y.desc.dims[0],
                 (long long)y.desc.dims[1]);
        float want[12];
        for (int i = 0; i < rows * 3; i++) want[i] = cond ? 2 * x[i] : x[i % 6];
        VT_CHECK(y.desc.rank == 2 && bad_floats(y.data, want, rows * 3) == 0, "values");
    }
    /* A caller's output tensor must have this run's shape. */
    uint8_t no = 0;
    vn_named_tensor in[2] = {{"c", {scalar(VN_BOOL), &no}}, {"x", {{VN_F32, 2, {2, 3}}, x}}};
    vn_named_tensor out = {"y", {{VN_F32, 2, {2, 3}}, buf}};
    VT_CHECK(vn_model_run(m, c, in, 2, &out, 1) == VN_ERR_SHAPE, "wrong shape refused");
    VT_CONTAINS(vn_last_error(), "output 'y' is f32[4,3] in this run");
    out.tensor.desc.dims[0] = 4;
    VT_OK(vn_model_run(m, c, in, 2, &out, 1));
    VT_CHECK(buf[9] == 4 && buf[11] == 6, "copied into the caller's tensor");
done:
    vn_model_ctx_destroy(c);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

/* ---- Loop ---------------------------------------------------------------------------- */

typedef struct loop_case {
    bool has_m, m_const, has_cond;
    int64_t M;
    bool cond;
    float thr;
} loop_case;

/* sf, sc = Loop(M, cond, s0): body(i, ci, s) so = s + x * float(i); co = sum(so) < thr;
 * scan output 2 * so. x and thr come from the main graph. */
static ob loop_model(const loop_case *lc)
{
    ob g = {0}, body = {0}, attrs = {0}, a = {0}, none = {0};
    const char *i[] = {"i", NULL}, *fi[] = {"fi", NULL}, *x_fi[] = {"x", "fi", NULL};
    const char *xi[] = {"xi", NULL}, *s_xi[] = {"s", "xi", NULL}, *so[] = {"so", NULL};
    const char *sum[] = {"sum", NULL}, *s_t[] = {"sum", "thr", NULL}, *co[] = {"co", NULL};
    const char *so2[] = {"so", "so", NULL}, *sc[] = {"sc", NULL};
    ob_attr_int(&a, "to", OB_FLOAT);
    ob_node(&body, "Cast", "cast_i", i, fi, &a);
    ob_node(&body, "Mul", "mul_x", x_fi, xi, NULL);
    ob_node(&body, "Add", "add_s", s_xi, so, NULL);
    ob_attr_int(&a, "keepdims", 0);
    ob_node(&body, "ReduceSum", "sum", so, sum, &a);
    ob_node(&body, "Less", "less", s_t, co, NULL);
    ob_node(&body, "Add", "twice", so2, sc, &none);
    int64_t three = 3;
    ob_value_info(&body, 11, "i", OB_INT64, 0, NULL, NULL);
    ob_value_info(&body, 11, "ci", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&body, 11, "s", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&body, 12, "co", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&body, 12, "so", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&body, 12, "sc", OB_FLOAT, 1, &three, NULL);
    ob_attr_graph(&attrs, "body", &body);
    const char *in[] = {lc->has_m ? "M" : "", lc->has_cond ? "cond" : "", "s0", NULL};
    const char *out[] = {"sf", "scan", NULL};
    ob_node(&g, "Loop", "loop0", in, out, &attrs);
    if (lc->m_const) {
        ob t = {0};
        ob_tensor_raw(&t, "M", OB_INT64, 0, NULL, &lc->M, sizeof lc->M);
        ob_msg(&g, 5, &t);
    } else if (lc->has_m) {
        ob_value_info(&g, 11, "M", OB_INT64, 0, NULL, NULL);
    }
    if (lc->has_cond) ob_value_info(&g, 11, "cond", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&g, 11, "s0", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&g, 11, "x", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&g, 11, "thr", OB_FLOAT, 0, NULL, NULL);
    ob_value_info(&g, 12, "sf", OB_FLOAT, -1, NULL, NULL);
    ob_value_info(&g, 12, "scan", OB_FLOAT, -1, NULL, NULL);
    return ob_model(&g, 17);
}

/* The reference: iterations run, final state, scan rows. */
static int64_t loop_reference(const loop_case *lc, const float *s0, const float *x, float *sf,
                              float *scan, int64_t max_rows)
{
    memcpy(sf, s0, 3 * sizeof *sf);
    bool cond = lc->has_cond ? lc->cond : true;
    int64_t i = 0;
    for (; (!lc->has_m || i < lc->M) && cond && i < max_rows; i++) {
        float sum = 0;
        for (int k = 0; k < 3; k++) {
            sf[k] += x[k] * (float)i;
            scan[i * 3 + k] = 2 * sf[k];
            sum += sf[k];
        }
        if (lc->has_cond) cond = sum < lc->thr;
    }
    return i;
}

static void check_loop(const char *what, const loop_case *lc, int level)
{
    ob mb = loop_model(lc);
    vn_graph *g = load(&mb);
    vn_model *m = g ? compile(g, level) : NULL;
    vn_model_ctx *c = NULL;
    if (!m || vn_model_ctx_create(m, &c) != VN_OK) goto done;
    float s0[3] = {1, 0.5f, -2}, x[3] = {0.25f, 1, 2}, thr = lc->thr;
    uint8_t cond = lc->cond;
    vn_named_tensor in[5] = {
        {"s0", {vec(3), s0}}, {"x", {vec(3), x}}, {"thr", {scalar(VN_F32), &thr}}};
    int ni = 3;
    if (lc->has_m && !lc->m_const)
        in[ni++] = (vn_named_tensor){"M", {scalar(VN_I64), (void *)&lc->M}};
    if (lc->has_cond) in[ni++] = (vn_named_tensor){"cond", {scalar(VN_BOOL), &cond}};
    float sf[3], scan[3 * 64];
    int64_t trips = loop_reference(lc, s0, x, sf, scan, 64);
    vn_tensor y, s;
    VT_OK(run(m, c, in, ni, "sf", &y));
    VT_OK(vn_model_ctx_output(c, "scan", &s));
    VT_CHECK(y.desc.rank == 1 && y.desc.dims[0] == 3 && bad_floats(y.data, sf, 3) == 0,
             "%s O%d: final state", what, level);
    VT_CHECK(s.desc.rank == 2 && s.desc.dims[0] == trips && s.desc.dims[1] == 3 &&
                 bad_floats(s.data, scan, trips * 3) == 0,
             "%s O%d: scan output [%lld, 3], got rank %d dim0 %lld", what, level, (long long)trips,
             (int)s.desc.rank, (long long)s.desc.dims[0]);
    vn_tensor_desc sd;
    VT_OK(vn_model_output(m, 1, NULL, &sd));
    if (lc->m_const && !lc->has_cond)
        VT_CHECK(sd.dims[0] == lc->M, "%s: a constant trip count fixes the scan output", what);
    else
        VT_CHECK(sd.dims[0] == -1, "%s: a run-time trip count leaves it dynamic", what);
done:
    vn_model_ctx_destroy(c);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

static void test_loop_variants(void)
{
    for (int level = 0; level <= 1; level++) {
        loop_case trip_only = {true, false, false, 4, true, 0};
        check_loop("trip count only", &trip_only, level);
        loop_case trip_const = {true, true, false, 5, true, 0};
        check_loop("constant trip count", &trip_const, level);
        loop_case cond_only = {false, false, true, 0, true, 20};
        check_loop("condition only", &cond_only, level);
        loop_case both = {true, false, true, 2, true, 1000};
        check_loop("both, M first", &both, level);
        loop_case both_cond = {true, false, true, 50, true, 10};
        check_loop("both, condition first", &both_cond, level);
        loop_case zero = {true, false, false, 0, true, 0};
        check_loop("zero iterations (M = 0)", &zero, level);
        loop_case cond_false = {true, false, true, 5, false, 1000};
        check_loop("zero iterations (cond false)", &cond_false, level);
    }
}

/* A body that compiles only knowing its iteration number: sc = Slice(x, i, i+1),
 * the carried value accumulates the slices. */
static void test_loop_iteration_slices(void)
{
    ob g = {0}, body = {0}, attrs = {0}, a = {0};
    const char *i[] = {"i", NULL}, *i1[] = {"i1", NULL}, *i_one[] = {"i1", "one", NULL};
    const char *e[] = {"e", NULL}, *sl_in[] = {"x", "i1", "e", NULL}, *sl[] = {"sl", NULL};
    const char *acc[] = {"s", "sl", NULL}, *so[] = {"so", NULL}, *ci[] = {"ci", NULL};
    const char *co[] = {"co", NULL}, *zero[] = {"zero", NULL};
    int64_t one = 1, ax0 = 0;
    ob t = {0};
    ob_tensor_raw(&t, "one", OB_INT64, 1, &one, &one, sizeof one);
    ob_msg(&body, 5, &t);
    ob_tensor_raw(&t, "zero", OB_INT64, 1, &one, &ax0, sizeof ax0);
    ob_msg(&body, 5, &t);
    const char *iz[] = {"i", "zero", NULL};
    ob_node(&body, "Unsqueeze", "unsq", iz, i1, NULL);
    ob_node(&body, "Add", "end", i_one, e, NULL);
    ob_node(&body, "Slice", "slice", sl_in, sl, NULL);
    ob_node(&body, "Add", "acc", acc, so, NULL);
    ob_node(&body, "Identity", "keep", ci, co, &a);
    (void)i;
    (void)zero;
    ob_value_info(&body, 11, "i", OB_INT64, 0, NULL, NULL);
    ob_value_info(&body, 11, "ci", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&body, 11, "s", OB_FLOAT, 1, &one, NULL);
    ob_value_info(&body, 12, "co", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&body, 12, "so", OB_FLOAT, 1, &one, NULL);
    ob_value_info(&body, 12, "sl", OB_FLOAT, 1, &one, NULL);
    ob_attr_graph(&attrs, "body", &body);
    const char *in[] = {"M", "", "s0", NULL}, *out[] = {"sf", "scan", NULL};
    ob_node(&g, "Loop", "slices", in, out, &attrs);
    int64_t five = 5;
    ob_value_info(&g, 11, "M", OB_INT64, 0, NULL, NULL);
    ob_value_info(&g, 11, "s0", OB_FLOAT, 1, &one, NULL);
    ob_value_info(&g, 11, "x", OB_FLOAT, 1, &five, NULL);
    ob_value_info(&g, 12, "sf", OB_FLOAT, -1, NULL, NULL);
    ob_value_info(&g, 12, "scan", OB_FLOAT, -1, NULL, NULL);
    ob mb = ob_model(&g, 17);
    vn_graph *gr = load(&mb);
    vn_model *m = gr ? compile(gr, 1) : NULL;
    vn_model_ctx *c = NULL;
    if (!m || vn_model_ctx_create(m, &c) != VN_OK) goto done;
    float x[5] = {1, 2, 4, 8, 16}, s0 = 0.5f;
    for (int64_t M = 3; M <= 5; M += 2) {
        vn_named_tensor ins[3] = {
            {"M", {scalar(VN_I64), &M}}, {"s0", {vec(1), &s0}}, {"x", {vec(5), x}}};
        vn_tensor sf, scan;
        VT_OK(run(m, c, ins, 3, "sf", &sf));
        VT_OK(vn_model_ctx_output(c, "scan", &scan));
        float want = s0;
        for (int k = 0; k < M; k++) want += x[k];
        VT_CHECK(sf.desc.rank == 1 && fabsf(*(float *)sf.data - want) < 1e-5f, "M=%lld: sum %g",
                 (long long)M, (double)want);
        VT_CHECK(scan.desc.dims[0] == M && bad_floats(scan.data, x, M) == 0, "M=%lld: slices",
                 (long long)M);
    }
done:
    vn_model_ctx_destroy(c);
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

/* ---- Scan ------------------------------------------------------------------------------ */

/* sf, ys = Scan(s0, xs): body(s, xt) so = s + xt; y = so * xt. */
static ob scan_model(int64_t in_dir, int64_t in_axis, int64_t out_dir, int64_t out_axis)
{
    ob g = {0}, body = {0}, attrs = {0};
    const char *add[] = {"s", "xt", NULL}, *so[] = {"so", NULL};
    const char *mul[] = {"so", "xt", NULL}, *y[] = {"y", NULL};
    ob_node(&body, "Add", "add", add, so, NULL);
    ob_node(&body, "Mul", "mul", mul, y, NULL);
    int64_t three = 3, xs[2] = {in_axis ? 3 : 4, in_axis ? 4 : 3};
    ob_value_info(&body, 11, "s", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&body, 11, "xt", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&body, 12, "so", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&body, 12, "y", OB_FLOAT, 1, &three, NULL);
    ob_attr_graph(&attrs, "body", &body);
    ob_attr_int(&attrs, "num_scan_inputs", 1);
    ob_attr_ints(&attrs, "scan_input_directions", &in_dir, 1);
    ob_attr_ints(&attrs, "scan_input_axes", &in_axis, 1);
    ob_attr_ints(&attrs, "scan_output_directions", &out_dir, 1);
    ob_attr_ints(&attrs, "scan_output_axes", &out_axis, 1);
    const char *in[] = {"s0", "xs", NULL}, *out[] = {"sf", "ys", NULL};
    ob_node(&g, "Scan", "scan0", in, out, &attrs);
    ob_value_info(&g, 11, "s0", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&g, 11, "xs", OB_FLOAT, 2, xs, NULL);
    ob_value_info(&g, 12, "sf", OB_FLOAT, -1, NULL, NULL);
    ob_value_info(&g, 12, "ys", OB_FLOAT, -1, NULL, NULL);
    return ob_model(&g, 17);
}

static void check_scan(int64_t in_dir, int64_t in_axis, int64_t out_dir, int64_t out_axis)
{
    ob mb = scan_model(in_dir, in_axis, out_dir, out_axis);
    vn_graph *g = load(&mb);
    vn_model *m = g ? compile(g, 1) : NULL;
    vn_model_ctx *c = NULL;
    if (!m || vn_model_ctx_create(m, &c) != VN_OK) goto done;
    float s0[3] = {1, -1, 0.5f}, xs[12], s[3], ys[12];
    for (int i = 0; i < 12; i++) xs[i] = (float)(i % 5) - 1.5f;
    memcpy(s, s0, sizeof s);
    for (int t = 0; t < 4; t++) { /* step t reads slice (t or 3-t) of xs along in_axis */
        int at = in_dir ? 3 - t : t, put = out_dir ? 3 - t : t;
        for (int k = 0; k < 3; k++) {
            float xt = in_axis ? xs[k * 4 + at] : xs[at * 3 + k];
            s[k] += xt;
            ys[out_axis ? k * 4 + put : put * 3 + k] = s[k] * xt;
        }
    }
    vn_named_tensor in[2] = {{"s0", {vec(3), s0}},
                             {"xs", {{VN_F32, 2, {in_axis ? 3 : 4, in_axis ? 4 : 3}}, xs}}};
    vn_tensor sf, y;
    VT_OK(run(m, c, in, 2, "sf", &sf));
    VT_OK(vn_model_ctx_output(c, "ys", &y));
    VT_CHECK(bad_floats(sf.data, s, 3) == 0, "scan dir %lld axis %lld: final state",
             (long long)in_dir, (long long)in_axis);
    VT_CHECK(
        y.desc.rank == 2 && y.desc.dims[0] == (out_axis ? 3 : 4) && bad_floats(y.data, ys, 12) == 0,
        "scan out dir %lld axis %lld: stacked outputs", (long long)out_dir, (long long)out_axis);
done:
    vn_model_ctx_destroy(c);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

static void test_scan_directions(void)
{
    check_scan(0, 0, 0, 0);  /* forward */
    check_scan(1, 0, 0, 0);  /* reverse input */
    check_scan(0, 1, 1, -1); /* input axis 1, reversed output on axis -1 */
    check_scan(1, -1, 0, 1);
}

/* ---- nesting --------------------------------------------------------------------------- */

/* y = If(c) then Loop(3, "", x) {so = s + x} else Identity(x): the loop body
 * reads x from the main graph, two levels up. */
static void test_loop_inside_if(void)
{
    ob g = {0}, then_g = {0}, else_g = {0}, body = {0}, la = {0}, ia = {0}, t = {0};
    const char *sx[] = {"s", "x", NULL}, *so[] = {"so", NULL}, *ci[] = {"ci", NULL};
    const char *co[] = {"co", NULL};
    int64_t three = 3;
    ob_node(&body, "Add", "acc", sx, so, NULL);
    ob_node(&body, "Identity", "keep", ci, co, NULL);
    ob_value_info(&body, 11, "i", OB_INT64, 0, NULL, NULL);
    ob_value_info(&body, 11, "ci", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&body, 11, "s", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&body, 12, "co", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&body, 12, "so", OB_FLOAT, 1, &three, NULL);
    ob_attr_graph(&la, "body", &body);
    const char *lin[] = {"n", "", "x", NULL}, *lout[] = {"t", NULL};
    ob_node(&then_g, "Loop", "inner_loop", lin, lout, &la);
    ob_tensor_raw(&t, "n", OB_INT64, 0, NULL, &three, sizeof three);
    ob_msg(&then_g, 5, &t);
    ob_value_info(&then_g, 12, "t", OB_FLOAT, -1, NULL, NULL);
    const char *x[] = {"x", NULL}, *e[] = {"e", NULL};
    ob_node(&else_g, "Identity", "same", x, e, NULL);
    ob_value_info(&else_g, 12, "e", OB_FLOAT, -1, NULL, NULL);
    ob_attr_graph(&ia, "then_branch", &then_g);
    ob_attr_graph(&ia, "else_branch", &else_g);
    const char *c[] = {"c", NULL}, *y[] = {"y", NULL};
    ob_node(&g, "If", "outer_if", c, y, &ia);
    ob_value_info(&g, 11, "c", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&g, 11, "x", OB_FLOAT, 1, &three, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, -1, NULL, NULL);
    ob mb = ob_model(&g, 17);
    vn_graph *gr = load(&mb);
    for (int level = 0; gr && level <= 1; level++) {
        vn_model *m = compile(gr, level);
        vn_model_ctx *ctx = NULL;
        if (!m || vn_model_ctx_create(m, &ctx) != VN_OK) {
            vn_model_destroy(m);
            continue;
        }
        float xv[3] = {1, -2, 0.25f};
        for (int b = 0; b < 2; b++) {
            uint8_t cond = b == 0;
            vn_named_tensor in[2] = {{"c", {scalar(VN_BOOL), &cond}}, {"x", {vec(3), xv}}};
            vn_tensor out;
            VT_OK(run(m, ctx, in, 2, "y", &out));
            float want[3];
            for (int k = 0; k < 3; k++) want[k] = cond ? 4 * xv[k] : xv[k];
            VT_CHECK(bad_floats(out.data, want, 3) == 0, "O%d nested, cond %d", level, cond);
        }
        vn_model_ctx_destroy(ctx);
        vn_model_destroy(m);
    }
    vn_graph_destroy(gr);
}

/* ---- errors --------------------------------------------------------------------------------- */

static void test_errors_name_the_node(void)
{
    /* A non-bool condition. */
    ob g = {0}, th = {0}, el = {0}, attrs = {0};
    const char *x[] = {"x", NULL}, *t[] = {"t", NULL}, *e[] = {"e", NULL};
    ob_node(&th, "Identity", "a", x, t, NULL);
    ob_value_info(&th, 12, "t", OB_FLOAT, -1, NULL, NULL);
    ob_node(&el, "Identity", "b", x, e, NULL);
    ob_value_info(&el, 12, "e", OB_FLOAT, -1, NULL, NULL);
    ob_attr_graph(&attrs, "then_branch", &th);
    ob_attr_graph(&attrs, "else_branch", &el);
    const char *c[] = {"c", NULL}, *y[] = {"y", NULL};
    ob_node(&g, "If", "float_cond", c, y, &attrs);
    int64_t two = 2;
    ob_value_info(&g, 11, "c", OB_FLOAT, 0, NULL, NULL);
    ob_value_info(&g, 11, "x", OB_FLOAT, 1, &two, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, -1, NULL, NULL);
    ob mb = ob_model(&g, 17);
    vn_graph *gr = load(&mb);
    VT_CHECK(gr && compile_error(gr) == VN_ERR_DTYPE, "non-bool condition refused");
    VT_CONTAINS(vn_last_error(), "node 'float_cond' (If): the condition 'c' is f32[]");
    vn_graph_destroy(gr);

    /* A branch with two outputs for a node with one. */
    mb = if_model("Mul", 2);
    gr = load(&mb);
    VT_CHECK(gr && compile_error(gr) == VN_ERR_FORMAT, "output count refused");
    VT_CONTAINS(vn_last_error(), "node 'if0' (If): else_branch has 2 outputs, expected 1");
    vn_graph_destroy(gr);

    /* A loop that never ends. */
    loop_case forever = {false, false, false, 0, true, 0};
    mb = loop_model(&forever);
    gr = load(&mb);
    VT_CHECK(gr && compile_error(gr) == VN_ERR_INVALID_ARG, "endless loop refused");
    VT_CONTAINS(vn_last_error(), "node 'loop0' (Loop): the loop has no trip count");
    vn_graph_destroy(gr);

    /* The trip count's dtype. */
    ob_free(&mb);
}

/* A branch reading a name nobody defines; a .vnm save refused. */
static void test_undefined_and_vnm(void)
{
    ob g = {0}, th = {0}, el = {0}, attrs = {0};
    const char *nope[] = {"nope", NULL}, *t[] = {"t", NULL};
    ob_node(&th, "Identity", "reads_nothing", nope, t, NULL);
    ob_value_info(&th, 12, "t", OB_FLOAT, -1, NULL, NULL);
    ob_node(&el, "Identity", "b", nope, t, NULL);
    ob_value_info(&el, 12, "t", OB_FLOAT, -1, NULL, NULL);
    ob_attr_graph(&attrs, "then_branch", &th);
    ob_attr_graph(&attrs, "else_branch", &el);
    const char *c[] = {"c", NULL}, *y[] = {"y", NULL};
    ob_node(&g, "If", "if0", c, y, &attrs);
    ob_value_info(&g, 11, "c", OB_BOOL, 0, NULL, NULL);
    ob_value_info(&g, 12, "y", OB_FLOAT, -1, NULL, NULL);
    ob mb = ob_model(&g, 17);
    vn_graph *gr = NULL;
    VT_CHECK(vn_graph_load_onnx_bytes(mb.p, mb.n, "cf.onnx", NULL, &gr) == VN_ERR_FORMAT,
             "undefined outer name");
    VT_CONTAINS(vn_last_error(), "node 'reads_nothing' (Identity): input 0 'nope' is not defined");
    ob_free(&mb);

    mb = if_model("Mul", 1);
    gr = load(&mb);
    vn_model *m = gr ? compile(gr, 1) : NULL;
    VT_CHECK(m && vn_model_save(m, "cf_test.vnm") == VN_ERR_UNSUPPORTED, ".vnm refused");
    VT_CONTAINS(vn_last_error(), "node 'if0' (If) has subgraphs (control flow)");
    vn_model_destroy(m);
    vn_graph_destroy(gr);
}

/* Flipped bytes in a Loop model: each load, compile and run fails cleanly or
 * works — never a crash (run under ASan too). */
static void test_hostile_subgraphs(void)
{
    loop_case lc = {true, true, true, 3, true, 100};
    ob mb = loop_model(&lc);
    int compiled = 0, ran = 0;
    static const uint8_t flips[] = {0x01, 0x80, 0xff};
    for (size_t i = 0; i < mb.n; i++)
        for (size_t f = 0; f < sizeof flips; f++) {
            mb.p[i] ^= flips[f];
            vn_graph *g = NULL;
            if (vn_graph_load_onnx_bytes(mb.p, mb.n, "flip.onnx", NULL, &g) == VN_OK) {
                vn_compile_options o = {.opt_level = 1};
                vn_model *m = NULL;
                vn_model_ctx *c = NULL;
                if (vn_model_compile(g, &o, &m) == VN_OK && vn_model_ctx_create(m, &c) == VN_OK) {
                    compiled++;
                    float s0[3] = {1, 2, 3}, x[3] = {1, 1, 1}, thr = 50;
                    uint8_t cond = 1;
                    vn_named_tensor in[4] = {{"s0", {vec(3), s0}},
                                             {"x", {vec(3), x}},
                                             {"thr", {scalar(VN_F32), &thr}},
                                             {"cond", {scalar(VN_BOOL), &cond}}};
                    ran += vn_model_run(m, c, in, 4, NULL, 0) == VN_OK;
                }
                vn_model_ctx_destroy(c);
                vn_model_destroy(m);
                vn_graph_destroy(g);
            }
            mb.p[i] ^= flips[f];
        }
    VT_CHECK(compiled > 0 && ran > 0, "some flips still compile (%d) and run (%d)", compiled, ran);
    ob_free(&mb);
}

int main(void)
{
    VT_RUN(test_if_branches);
    VT_RUN(test_if_shapes_differ);
    VT_RUN(test_loop_variants);
    VT_RUN(test_loop_iteration_slices);
    VT_RUN(test_scan_directions);
    VT_RUN(test_loop_inside_if);
    VT_RUN(test_errors_name_the_node);
    VT_RUN(test_undefined_and_vnm);
    VT_RUN(test_hostile_subgraphs);
    return vt_summary();
}
