/*
 * test_pool.c — MaxPool (with Indices, storage_order 0 and 1), AveragePool
 * (count_include_pad 0 / 1), LpPool (p = 1, 2, 3), GlobalAveragePool and
 * GlobalMaxPool on NCHW against the double reference of test_pool_ref.h:
 * random sweeps over odd sizes, kernels 1-5, strides 1-3, dilations 1-3,
 * asymmetric pads and ceil_mode; every auto_pad mode; the ceil-mode rule
 * that drops a window starting in the right padding; 1-D and 3-D; f16;
 * MaxPool on u8 and i8;
 * tiles spread over several blocks; and the error paths.
 *
 * Bounds: MaxPool is exact (values and indices, ties broken by the first
 * occurrence in row-major window order, exercised with integer-valued
 * inputs). Sums in f32: |y - ref| <= 1e-5 (1 + |ref|) for AveragePool,
 * 1e-4 (1 + |ref|) for LpPool (exp / ln for p = 3). f16: 1 ulp of f16 plus
 * the f32 bound.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/onnx_build.h"
#include "test_pool_ref.h"
#include "vinci/graph.h"
#include "vt.h"
#include "vt_tensor.h"

static vn_tensor_desc x_desc(const pcase *c, vn_dtype dt)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dt;
    d.rank = c->nsp + 2;
    d.dims[0] = c->n;
    d.dims[1] = c->c;
    for (int i = 0; i < c->nsp; i++) d.dims[2 + i] = c->in[i];
    return d;
}

static int64_t numel(const pcase *c)
{
    int64_t n = c->n * c->c;
    for (int i = 0; i < c->nsp; i++) n *= c->in[i];
    return n;
}

static void fill_x(vt_rng *r, float *x, int64_t n, bool ties, vn_dtype dt)
{
    double lo = dt == VN_U8 ? 0 : -128, hi = dt == VN_U8 ? 256 : 128; /* 8-bit: every value */
    for (int64_t i = 0; i < n; i++)
        x[i] = dt == VN_U8 || dt == VN_I8 ? (float)floor(vt_uniform(r, lo, hi))
               : ties                     ? (float)floor(vt_uniform(r, 0, 4))
                                          : (float)vt_uniform(r, -2, 2);
}

static double tolerance(const pcase *c, double ref, vn_dtype dt)
{
    double t = c->op[0] == 'M' ? 0 : (c->op[0] == 'A' ? 1e-5 : 1e-4) * (1 + fabs(ref));
    if (dt == VN_F16) t += ldexp(fabs(ref) > 6.1e-5 ? fabs(ref) : 6.1e-5, -10);
    return t;
}

/* Runs case c; returns false (without assertions) when the case is not a
 * legal one (an empty output or a window of padding only). */
static bool run_case(const pcase *c, vn_dtype dt, bool ties, uint64_t seed)
{
    vt_rng rng = {seed};
    int64_t n = numel(c);
    float *x = malloc((size_t)(n + 1) * sizeof *x);
    fill_x(&rng, x, n, ties, dt);
    void *xin = x, *xh = NULL;
    if (dt != VN_F32) { /* the input in dt; the reference sees the values it holds */
        xh = malloc((size_t)(n + 1) * vn_dtype_size(dt));
        for (int64_t i = 0; i < n; i++) {
            vt_put(dt, xh, i, x[i]);
            x[i] = (float)vt_get(dt, xh, i);
        }
        xin = xh;
    }
    pref r;
    ref_pool(c, x, &r);
    bool legal = !r.empty;
    if (legal) {
        pattrs a;
        pcase_attrs(c, &a);
        vn_tensor_desc xd = x_desc(c, dt);
        vn_op_plan *plan = NULL;
        vn_status st = vn_op_plan_create(NULL, c->op, &xd, 1, &a.attrs, &plan);
        VT_CHECK(st == VN_OK, "%s plan: %s", c->op, vn_last_error());
        if (st == VN_OK) {
            const vn_tensor_desc *yd = vn_op_plan_output(plan, 0);
            bool dims_ok = yd->rank == xd.rank;
            for (int i = 0; i < c->nsp; i++) dims_ok &= yd->dims[2 + i] == r.out[i];
            VT_CHECK(dims_ok,
                     "%s in %lld,%lld,%lld k %lld,%lld,%lld s %lld d %lld pads %lld..%lld "
                     "ceil %d: output dims differ from the reference %lld,%lld,%lld",
                     c->op, (long long)c->in[0], (long long)c->in[1], (long long)c->in[2],
                     (long long)c->k[0], (long long)c->k[1], (long long)c->k[2], (long long)c->s[0],
                     (long long)c->d[0], (long long)c->pads[0], (long long)c->pads[2 * c->nsp - 1],
                     c->ceil_mode, (long long)r.out[0], (long long)r.out[1], (long long)r.out[2]);
            int64_t ny = c->n * c->c * r.nout;
            size_t es = vn_dtype_size(dt);
            void *y = calloc((size_t)ny + 1, es);
            int64_t *idx = calloc((size_t)ny + 1, sizeof *idx);
            vn_tensor in = {xd, xin}, out[2] = {{*yd, y}, {*yd, idx}};
            int no = vn_op_plan_num_outputs(plan);
            if (no > 1) out[1].desc = *vn_op_plan_output(plan, 1);
            if (dims_ok) VT_OK(vn_op_run(plan, &in, 1, out, no, NULL));
            int bad = 0;
            for (int64_t e = 0; e < ny && dims_ok && bad < 3; e++) {
                double v = vt_get(dt, y, e);
                double want = r.y[e];
                bool ok = fabs(v - want) <= tolerance(c, want, dt) || v == want;
                if (no > 1) ok &= idx[e] == r.idx[e];
                if (!ok) {
                    bad++;
                    VT_CHECK(ok,
                             "%s %dD in %lld,%lld,%lld k %lld,%lld,%lld s %lld,%lld,%lld d "
                             "%lld,%lld,%lld ceil %d cip %d order %d ap %s: [%lld] = %.7g "
                             "idx %lld, want %.7g idx %lld",
                             c->op, c->nsp, (long long)c->in[0], (long long)c->in[1],
                             (long long)c->in[2], (long long)c->k[0], (long long)c->k[1],
                             (long long)c->k[2], (long long)c->s[0], (long long)c->s[1],
                             (long long)c->s[2], (long long)c->d[0], (long long)c->d[1],
                             (long long)c->d[2], c->ceil_mode, c->cip, c->order,
                             c->auto_pad ? c->auto_pad : "-", (long long)e, v,
                             (long long)(no > 1 ? idx[e] : 0), want, (long long)r.idx[e]);
                }
            }
            if (bad == 0) VT_CHECK(true, "case passed");
            free(y);
            free(idx);
            vn_op_plan_destroy(plan);
        }
    }
    free(r.y);
    free(r.idx);
    free(x);
    free(xh);
    return legal;
}

/* A random legal case of `nsp` dims: sizes 1..13, kernel 1..5, stride 1..3,
 * dilation 1..3, pads 0..dk-1 on each side independently. */
static pcase random_case(vt_rng *r, const char *op, int nsp, int64_t max_in)
{
    pcase c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.nsp = nsp;
    c.n = 1 + (int64_t)vt_uniform(r, 0, 2);
    c.c = 1 + (int64_t)vt_uniform(r, 0, 3);
    for (int i = 0; i < nsp; i++) {
        c.in[i] = 1 + (int64_t)vt_uniform(r, 0, (double)max_in);
        c.k[i] = 1 + (int64_t)vt_uniform(r, 0, 5);
        c.s[i] = 1 + (int64_t)vt_uniform(r, 0, 3);
        c.d[i] = 1 + (int64_t)vt_uniform(r, 0, 3);
        int64_t dk = (c.k[i] - 1) * c.d[i] + 1;
        c.pads[i] = (int64_t)vt_uniform(r, 0, (double)dk);
        c.pads[nsp + i] = (int64_t)vt_uniform(r, 0, (double)dk);
    }
    c.ceil_mode = vt_uniform(r, 0, 1) < 0.5;
    c.cip = vt_uniform(r, 0, 1) < 0.5;
    c.order = vt_uniform(r, 0, 1) < 0.5;
    c.p = 1 + (int)vt_uniform(r, 0, 3);
    return c;
}

static void sweep(const char *op, int nsp, int cases, int64_t max_in, bool ties, uint64_t seed)
{
    vt_rng r = {seed};
    int ran = 0;
    for (int i = 0; i < cases * 4 && ran < cases; i++) {
        pcase c = random_case(&r, op, nsp, max_in);
        ran += run_case(&c, VN_F32, ties, seed + (uint64_t)i);
    }
    VT_CHECK(ran == cases, "%s %dD: only %d of %d random cases were legal", op, nsp, ran, cases);
}

static void test_maxpool_sweep(void)
{
    sweep("MaxPool", 2, 150, 13, false, 11);
    sweep("MaxPool", 2, 100, 13, true, 12); /* ties: first occurrence wins */
}

static void test_avgpool_sweep(void)
{
    sweep("AveragePool", 2, 150, 13, false, 21);
}

static void test_lppool_sweep(void)
{
    sweep("LpPool", 2, 90, 11, false, 31);
}

static void test_1d_3d(void)
{
    static const char *const ops[] = {"MaxPool", "AveragePool", "LpPool"};
    for (int o = 0; o < 3; o++) {
        sweep(ops[o], 1, 40, 20, false, 41 + (uint64_t)o);
        sweep(ops[o], 3, 25, 7, o == 0, 51 + (uint64_t)o);
    }
}

static void test_auto_pad(void)
{
    static const char *const modes[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
    static const char *const ops[] = {"MaxPool", "AveragePool", "LpPool"};
    vt_rng r = {61};
    for (int m = 0; m < 4; m++)
        for (int o = 0; o < 3; o++)
            for (int i = 0, ran = 0; i < 80 && ran < 12; i++) {
                pcase c = random_case(&r, ops[o], 2, 12);
                c.auto_pad = modes[m];
                ran += run_case(&c, VN_F32, false, 70 + (uint64_t)i);
            }
}

static void test_ceil_mode_drop(void)
{
    /* in 6, k 3, s 2, pads 0/2: ceil((6+2-3)/2)+1 = 4, but window 3 would
     * start at 6 >= in + pb (entirely in the right padding): 3 outputs */
    pcase c = {"AveragePool", 1, 1, 2, {6}, {3}, {2}, {1}, {0, 2}, NULL, 1, 1, 0, 2};
    pref r;
    float x[12] = {0};
    ref_pool(&c, x, &r);
    VT_CHECK(r.out[0] == 3, "reference gives %lld", (long long)r.out[0]);
    free(r.y), free(r.idx);
    run_case(&c, VN_F32, false, 81);
    c.op = "MaxPool";
    run_case(&c, VN_F32, false, 82);
    c.ceil_mode = 0;
    run_case(&c, VN_F32, false, 83);
    /* a window starting in the left padding is kept in ceil mode */
    pcase l = {"MaxPool", 2, 1, 1, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {2, 2, 0, 0}, NULL, 1, 0, 1, 2};
    run_case(&l, VN_F32, false, 84);
}

static void test_f16(void)
{
    vt_rng r = {91};
    static const char *const ops[] = {"MaxPool", "AveragePool", "LpPool"};
    for (int o = 0; o < 3; o++)
        for (int i = 0, ran = 0; i < 60 && ran < 15; i++) {
            pcase c = random_case(&r, ops[o], 2, 21);
            ran += run_case(&c, VN_F16, false, 92 + (uint64_t)i);
        }
}

/* MaxPool on u8 and i8 (opset 12): every value of the type, exact values and
 * indices (what a quantised model's pool does between its DQ / Q pairs). */
static void test_int8(void)
{
    vt_rng r = {93};
    static const vn_dtype dts[] = {VN_U8, VN_I8};
    for (int t = 0; t < 2; t++)
        for (int i = 0, ran = 0; i < 60 && ran < 15; i++) {
            pcase c = random_case(&r, "MaxPool", 2, 21);
            ran += run_case(&c, dts[t], false, 94 + (uint64_t)i);
        }
}

/* Case c's MaxPool as a one-node graph that names only Y, so the executor
 * asks for no Indices (the byte kernel, pool_bytes.c; vn_op_run always
 * passes every output); its output bytes into y. */
static void run_graph_values(const pcase *c, vn_dtype dt, const void *x, void *y, int64_t ny)
{
    ob gr = {0}, attrs = {0};
    const char *in[] = {"x", NULL}, *out[] = {"y", NULL};
    ob_attr_ints(&attrs, "kernel_shape", c->k, c->nsp);
    ob_attr_ints(&attrs, "strides", c->s, c->nsp);
    ob_attr_ints(&attrs, "dilations", c->d, c->nsp);
    ob_attr_ints(&attrs, "pads", c->pads, 2 * c->nsp);
    ob_attr_int(&attrs, "ceil_mode", c->ceil_mode);
    ob_node(&gr, "MaxPool", "pool", in, out, &attrs);
    ob_str(&gr, 2, "pool");
    vn_tensor_desc xd = x_desc(c, dt);
    int elem = dt == VN_U8 ? OB_UINT8 : OB_INT8;
    ob_value_info(&gr, 11, "x", elem, xd.rank, xd.dims, NULL);
    ob_value_info(&gr, 12, "y", elem, -1, NULL, NULL);
    ob bytes = ob_model(&gr, 17);
    vn_graph *g = NULL;
    vn_model *m = NULL;
    vn_model_ctx *ctx = NULL;
    VT_OK(vn_graph_load_onnx_bytes(bytes.p, bytes.n, "pool.onnx", NULL, &g));
    ob_free(&bytes);
    vn_compile_options o = {.opt_level = 1};
    if (g) VT_OK(vn_model_compile(g, &o, &m));
    if (m) VT_OK(vn_model_ctx_create(m, &ctx));
    vn_named_tensor xin = {"x", {xd, (void *)x}};
    vn_tensor yt = {0};
    if (ctx && vn_model_run(m, ctx, &xin, 1, NULL, 0) == VN_OK &&
        vn_model_ctx_output(ctx, "y", &yt) == VN_OK && vn_desc_numel(&yt.desc) == ny)
        memcpy(y, yt.data, (size_t)ny);
    else
        VT_CHECK(false, "graph MaxPool did not run: %s", vn_last_error());
    vn_model_ctx_destroy(ctx);
    vn_model_destroy(m);
    vn_graph_destroy(g);
}

/* u8 / i8 MaxPool without Indices (the byte kernel) against the reference,
 * 1-D to 3-D with the random cases' dilations, pads and ceil mode, and a
 * wide row. */
static void check_values_only(const pcase *c, vn_dtype dt, uint64_t seed)
{
    vt_rng rng = {seed};
    int64_t n = numel(c);
    float *x = malloc((size_t)(n + 1) * sizeof *x);
    uint8_t *xb = malloc((size_t)n + 1);
    fill_x(&rng, x, n, false, dt);
    for (int64_t i = 0; i < n; i++) {
        vt_put(dt, xb, i, x[i]);
        x[i] = (float)vt_get(dt, xb, i);
    }
    pref r;
    ref_pool(c, x, &r);
    int64_t ny = c->n * c->c * r.nout;
    uint8_t *y = calloc((size_t)ny + 1, 1);
    if (!r.empty) run_graph_values(c, dt, xb, y, ny);
    int64_t bad = 0;
    for (int64_t e = 0; !r.empty && e < ny; e++) bad += vt_get(dt, y, e) != r.y[e];
    VT_CHECK(bad == 0,
             "%s %dD in %lld,%lld,%lld k %lld,%lld,%lld s %lld d %lld ceil %d: %lld wrong",
             vn_dtype_name(dt), c->nsp, (long long)c->in[0], (long long)c->in[1],
             (long long)c->in[2], (long long)c->k[0], (long long)c->k[1], (long long)c->k[2],
             (long long)c->s[0], (long long)c->d[0], c->ceil_mode, (long long)bad);
    free(r.y);
    free(r.idx);
    free(x);
    free(xb);
    free(y);
}

static void test_int8_values_only(void)
{
    vt_rng r = {95};
    static const vn_dtype dts[] = {VN_U8, VN_I8};
    for (int t = 0; t < 2; t++)
        for (int nsp = 1; nsp <= 3; nsp++)
            for (int i = 0, ran = 0; i < 80 && ran < 10; i++) {
                pcase c = random_case(&r, "MaxPool", nsp, 21);
                if (c.auto_pad) continue; /* the graph gets explicit pads only */
                check_values_only(&c, dts[t], 96 + (uint64_t)i);
                ran++;
            }
    pcase wide = {"MaxPool",    2,    2, 3, {9, 300}, {3, 3}, {2, 2}, {1, 1},
                  {1, 1, 1, 1}, NULL, 0, 0, 0,        2};
    check_values_only(&wide, VN_U8, 97);
    check_values_only(&wide, VN_I8, 98);
}

static void test_large_tiles(void)
{
    /* several row tiles per plane, many planes over several blocks */
    pcase m = {"MaxPool",    2,    2, 8, {67, 69}, {3, 3}, {2, 2}, {1, 1},
               {1, 1, 1, 1}, NULL, 1, 0, 0,        2};
    run_case(&m, VN_F32, false, 101);
    pcase a = {"AveragePool", 2,    1, 5, {101, 333}, {5, 4}, {1, 3}, {2, 1},
               {3, 0, 1, 3},  NULL, 0, 0, 0,          2};
    run_case(&a, VN_F32, false, 102);
    pcase w = {"MaxPool", 1, 1, 2, {5000}, {4}, {3}, {2}, {2, 1}, NULL, 1, 0, 0, 2};
    run_case(&w, VN_F32, false, 103);
}

/* Global pools: reference mean / max per plane. */
static void check_global(const char *op, int nsp, const int64_t *sp, int64_t n, int64_t c,
                         vn_dtype dt)
{
    vn_tensor_desc xd = {dt, nsp + 2, {n, c}};
    int64_t pix = 1;
    for (int i = 0; i < nsp; i++) xd.dims[2 + i] = sp[i], pix *= sp[i];
    int64_t total = n * c * pix;
    vt_rng r = {(uint64_t)(pix + 7)};
    float *x = malloc((size_t)(total + 1) * sizeof *x);
    uint16_t *xh = malloc((size_t)(total + 1) * sizeof *xh);
    fill_x(&r, x, total, false, VN_F32);
    for (int64_t i = 0; i < total; i++)
        if (dt == VN_F16) x[i] = vn_f16_to_f32(xh[i] = vn_f32_to_f16(x[i]));
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, op, &xd, 1, NULL, &plan));
    if (!plan) return;
    const vn_tensor_desc *yd = vn_op_plan_output(plan, 0);
    bool shape_ok = yd->rank == xd.rank && yd->dims[0] == n && yd->dims[1] == c;
    for (int i = 0; i < nsp; i++) shape_ok &= yd->dims[2 + i] == 1;
    VT_CHECK(shape_ok, "%s output shape", op);
    float *y = calloc((size_t)(n * c + 1), 4);
    vn_tensor in = {xd, dt == VN_F16 ? (void *)xh : (void *)x}, out = {*yd, y};
    VT_OK(vn_op_run(plan, &in, 1, &out, 1, NULL));
    bool max = strstr(op, "Max") != NULL;
    for (int64_t p = 0; p < n * c; p++) {
        double want = max ? -INFINITY : 0;
        for (int64_t e = 0; e < pix; e++) {
            double v = x[p * pix + e];
            want = max ? (v > want ? v : want) : want + v;
        }
        if (!max) want /= (double)pix;
        double v = dt == VN_F16 ? vn_f16_to_f32(((uint16_t *)y)[p]) : y[p];
        double tol = max ? 0 : 1e-5 * (1 + fabs(want));
        if (dt == VN_F16) tol += ldexp(fabs(want) > 6.1e-5 ? fabs(want) : 6.1e-5, -10);
        VT_CHECK(fabs(v - want) <= tol, "%s %dD pix %lld plane %lld: %.7g want %.7g", op, nsp,
                 (long long)pix, (long long)p, v, want);
    }
    free(x), free(xh), free(y);
    vn_op_plan_destroy(plan);
}

static void test_global(void)
{
    static const char *const ops[] = {"GlobalAveragePool", "GlobalMaxPool"};
    for (int o = 0; o < 2; o++) {
        check_global(ops[o], 1, (int64_t[]){13}, 2, 3, VN_F32);
        check_global(ops[o], 2, (int64_t[]){7, 9}, 3, 5, VN_F32);
        check_global(ops[o], 2, (int64_t[]){130, 131}, 1, 3, VN_F32); /* chunked planes */
        check_global(ops[o], 3, (int64_t[]){3, 5, 6}, 2, 70, VN_F32);
        check_global(ops[o], 2, (int64_t[]){19, 23}, 2, 4, VN_F16);
    }
}

static vn_status plan_with(const char *op, vn_tensor_desc xd, const vn_attr *items, int count)
{
    vn_attrs a = {items, count};
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(NULL, op, &xd, 1, &a, &plan);
    vn_op_plan_destroy(plan);
    return st;
}

static void test_errors(void)
{
    vn_tensor_desc x = {VN_F32, 4, {1, 2, 8, 8}};
    int64_t k2[2] = {3, 3}, k3[3] = {3, 3, 3}, k0[2] = {0, 3}, big[4] = {3, 0, 0, 0};
    vn_attr ks = {.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = k2, .count = 2};
    VT_CHECK(plan_with("MaxPool", x, NULL, 0) == VN_ERR_INVALID_ARG, "no kernel_shape");
    VT_CONTAINS(vn_last_error(), "MaxPool");
    VT_CONTAINS(vn_last_error(), "kernel_shape' is required");
    vn_attr bad = {.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = k3, .count = 3};
    VT_CHECK(plan_with("AveragePool", x, &bad, 1) == VN_ERR_INVALID_ARG, "3 kernel dims on 2-D");
    VT_CONTAINS(vn_last_error(), "AveragePool");
    VT_CONTAINS(vn_last_error(), "kernel_shape' has 3 values, expected 2");
    vn_attr zero = {.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = k0, .count = 2};
    VT_CHECK(plan_with("LpPool", x, &zero, 1) == VN_ERR_INVALID_ARG, "kernel 0");
    VT_CONTAINS(vn_last_error(), "LpPool");
    VT_CONTAINS(vn_last_error(), "kernel_shape[0] = 0 must be >= 1");
    vn_attr pads[2] = {ks, {.name = "pads", .type = VN_ATTR_INTS, .ints = big, .count = 4}};
    VT_CHECK(plan_with("MaxPool", x, pads, 2) == VN_ERR_INVALID_ARG, "pads 3 with kernel 3");
    VT_CONTAINS(vn_last_error(), "MaxPool");
    VT_CONTAINS(vn_last_error(), "too big");
    vn_tensor_desc r2 = {VN_F32, 2, {2, 8}};
    VT_CHECK(plan_with("MaxPool", r2, &ks, 1) == VN_ERR_SHAPE, "rank 2");
    VT_CONTAINS(vn_last_error(), "MaxPool");
    VT_CONTAINS(vn_last_error(), "has rank 2");
    VT_CHECK(plan_with("GlobalAveragePool", r2, NULL, 0) == VN_ERR_SHAPE, "global rank 2");
    VT_CONTAINS(vn_last_error(), "GlobalAveragePool");
    vn_tensor_desc small = {VN_F32, 4, {1, 2, 2, 8}};
    VT_CHECK(plan_with("MaxPool", small, &ks, 1) == VN_ERR_SHAPE, "kernel larger than input");
    VT_CONTAINS(vn_last_error(), "does not fit spatial axis 0");
    vn_attr ap[2] = {ks, {.name = "auto_pad", .type = VN_ATTR_STRING, .s = "SAME"}};
    VT_CHECK(plan_with("MaxPool", x, ap, 2) == VN_ERR_INVALID_ARG, "auto_pad SAME");
    VT_CONTAINS(vn_last_error(), "auto_pad 'SAME'");
    vn_attr so[2] = {ks, {.name = "storage_order", .type = VN_ATTR_INT, .i = 2}};
    VT_CHECK(plan_with("MaxPool", x, so, 2) == VN_ERR_INVALID_ARG, "storage_order 2");
    VT_CONTAINS(vn_last_error(), "storage_order must be 0 or 1");
    vn_attr p0[2] = {ks, {.name = "p", .type = VN_ATTR_INT, .i = 0}};
    VT_CHECK(plan_with("LpPool", x, p0, 2) == VN_ERR_INVALID_ARG, "p 0");
    VT_CONTAINS(vn_last_error(), "p = 0");
    vn_tensor_desc xi = {VN_I32, 4, {1, 2, 8, 8}};
    VT_CHECK(plan_with("MaxPool", xi, &ks, 1) == VN_ERR_DTYPE, "i32");
}

int main(void)
{
    VT_RUN(test_maxpool_sweep);
    VT_RUN(test_avgpool_sweep);
    VT_RUN(test_lppool_sweep);
    VT_RUN(test_1d_3d);
    VT_RUN(test_auto_pad);
    VT_RUN(test_ceil_mode_drop);
    VT_RUN(test_f16);
    VT_RUN(test_int8);
    VT_RUN(test_int8_values_only);
    VT_RUN(test_large_tiles);
    VT_RUN(test_global);
    VT_RUN(test_errors);
    return vt_summary();
}
