/*
 * test_layernorm.c — LayerNormalization and vinci::RMSNormalization against
 * double references: f32 and f16 (f32 accumulation), odd H, rows that fit
 * scratch and rows streamed in chunks, other axes, a large common offset
 * (two-pass variance), and the error paths.
 *
 * f16 bound (stated and measured): |y - ref| <= 1 ulp_f16(ref) + 2^-16 * m,
 * ref the double result from the same f16 inputs, m = |xhat * gamma| + |beta|
 * (the magnitude of the terms, which bounds the f32 rounding error when the
 * output is near zero by cancellation). f32: |y - ref| <= 2e-5 * (1 + m).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

static void fill(vt_rng *r, vn_dtype dt, void *p, int64_t n, double lo, double hi, double offset)
{
    for (int64_t i = 0; i < n; i++) {
        float v = (float)(offset + vt_uniform(r, lo, hi));
        if (dt == VN_F32)
            ((float *)p)[i] = v;
        else
            ((uint16_t *)p)[i] = vn_f32_to_f16(v);
    }
}

static double ulp_f16(double v)
{
    double a = fabs(v);
    if (a < 6.103515625e-05) return 5.960464477539063e-08; /* subnormal spacing 2^-24 */
    return ldexp(1.0, (int)floor(log2(a)) - 10);
}

typedef struct norm_case {
    const char *op;
    vn_dtype dt;
    int32_t rank;
    int64_t dims[4];
    int32_t axis; /* normalised from this dim on */
    bool bias;
    double offset; /* added to x */
    vn_device *dev;
} norm_case;

/* Runs the case; returns the max error in units of the stated bound (<= 1 passes). */
static double run_norm(const norm_case *c)
{
    vt_rng r = {1234};
    vn_tensor_desc xd = vt_desc(c->dt, c->rank, c->dims);
    vn_tensor_desc pd = vt_desc(c->dt, c->rank - c->axis, c->dims + c->axis);
    int64_t n = vn_desc_numel(&xd), h = vn_desc_numel(&pd), rows = h ? n / h : 0;
    size_t es = vn_dtype_size(c->dt);
    void *x = malloc((size_t)(n ? n : 1) * es), *y = malloc((size_t)(n ? n : 1) * es);
    void *g = malloc((size_t)(h ? h : 1) * es), *b = malloc((size_t)(h ? h : 1) * es);
    fill(&r, c->dt, x, n, -2, 2, c->offset);
    fill(&r, c->dt, g, h, 0.5, 1.5, 0);
    fill(&r, c->dt, b, h, -0.5, 0.5, 0);
    bool layer = strcmp(c->op, "LayerNormalization") == 0;
    /* LayerNormalization also makes Mean and InvStdDev when the node names
     * them (the graph's internal "_num_outputs"): check them too. */
    vn_attr at[2] = {{.name = "axis", .type = VN_ATTR_INT, .i = c->axis},
                     {.name = "_num_outputs", .type = VN_ATTR_INT, .i = 3}};
    vn_attrs attrs = {at, layer ? 2 : 1};
    float *stats = calloc((size_t)(2 * rows + 2), sizeof *stats);
    vn_tensor_desc sd = xd;
    sd.dtype = VN_F32;
    for (int32_t d = c->axis; d < sd.rank; d++) sd.dims[d] = 1;
    vn_tensor_desc in[3] = {xd, pd, pd};
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(c->dev, c->op, in, c->bias ? 3 : 2, &attrs, &plan);
    VT_CHECK(st == VN_OK, "%s plan: %s", c->op, vn_last_error());
    if (st != VN_OK) return INFINITY;
    vn_tensor ti[3] = {{xd, x}, {pd, g}, {pd, b}};
    vn_tensor to[3] = {{xd, y}, {sd, stats}, {sd, stats + rows + 1}};
    st = vn_op_run(plan, ti, c->bias ? 3 : 2, to, layer ? 3 : 1, NULL);
    VT_CHECK(st == VN_OK, "%s run: %s", c->op, vn_last_error());
    double worst = 0;
    for (int64_t row = 0; row < rows && st == VN_OK; row++) {
        double mean = 0, var = 0;
        for (int64_t k = 0; k < h; k++) mean += vt_get(c->dt, x, row * h + k);
        mean = layer ? mean / (double)h : 0;
        for (int64_t k = 0; k < h; k++) {
            double d = vt_get(c->dt, x, row * h + k) - mean;
            var += d * d;
        }
        double rstd = 1 / sqrt(var / (double)h + 1e-5);
        if (layer) {
            VT_CHECK(fabs(stats[row] - mean) <= 1e-4 * (1 + fabs(mean)), "Mean[%lld] %g, want %g",
                     (long long)row, stats[row], mean);
            VT_CHECK(fabs(stats[rows + 1 + row] - rstd) <= 1e-4 * rstd,
                     "InvStdDev[%lld] %g, want %g", (long long)row, stats[rows + 1 + row], rstd);
        }
        for (int64_t k = 0; k < h; k++) {
            double t = (vt_get(c->dt, x, row * h + k) - mean) * rstd * vt_get(c->dt, g, k);
            double bb = c->bias ? vt_get(c->dt, b, k) : 0, want = t + bb;
            double m = fabs(t) + fabs(bb);
            double bound = c->dt == VN_F32 ? 2e-5 * (1 + m) : ulp_f16(want) + ldexp(m, -16);
            double e = fabs(vt_get(c->dt, y, row * h + k) - want) / bound;
            if (!(e <= worst)) worst = e; /* NaN sticks */
        }
    }
    vn_op_plan_destroy(plan);
    free(x), free(y), free(g), free(b), free(stats);
    return worst;
}

static void check_case(norm_case c)
{
    double e = run_norm(&c);
    VT_CHECK(e <= 1.0, "%s %s [%lld,%lld,%lld] axis %d: max error %.3g of the bound", c.op,
             vn_dtype_name(c.dt), (long long)c.dims[0], (long long)c.dims[1], (long long)c.dims[2],
             (int)c.axis, e);
}

static void test_layernorm_f32(void)
{
    static const int64_t hs[] = {1, 7, 33, 1000, 4096};
    for (int i = 0; i < 5; i++) {
        check_case((norm_case){"LayerNormalization", VN_F32, 2, {37, hs[i]}, 1, true, 0, NULL});
        check_case((norm_case){"LayerNormalization", VN_F32, 2, {5, hs[i]}, 1, false, 0, NULL});
    }
    check_case((norm_case){"LayerNormalization", VN_F32, 3, {2, 64, 4096}, 2, true, 0, NULL});
}

static void test_layernorm_f16(void)
{
    static const int64_t hs[] = {7, 33, 1000, 4096};
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        norm_case c = {"LayerNormalization", VN_F16, 3, {2, 9, hs[i]}, 2, true, 0, NULL};
        double e = run_norm(&c);
        worst = e > worst ? e : worst;
        VT_CHECK(e <= 1.0, "f16 H=%lld: max error %.3g of the bound", (long long)hs[i], e);
    }
    /* [8,512,4096] reduced to [2,64,4096] to fit the test time */
    norm_case big = {"LayerNormalization", VN_F16, 3, {2, 64, 4096}, 2, true, 0, NULL};
    double e = run_norm(&big);
    worst = e > worst ? e : worst;
    VT_CHECK(e <= 1.0, "f16 [2,64,4096]: max error %.3g of the bound", e);
    printf("       f16 LayerNorm: max error %.3f of (1 ulp + 2^-16 m)\n", worst);
}

static void test_large_offset(void)
{
    /* mean 1000, spread 2: a one-pass E[x^2] - E[x]^2 in f32 loses the variance */
    check_case((norm_case){"LayerNormalization", VN_F32, 2, {16, 4096}, 1, true, 1000, NULL});
    check_case((norm_case){"LayerNormalization", VN_F32, 2, {4, 60000}, 1, true, 1000, NULL});
}

static void test_streamed_rows(void)
{
    /* rows too long for UB: streamed in chunks */
    check_case((norm_case){"LayerNormalization", VN_F32, 2, {3, 100003}, 1, true, 0, NULL});
    check_case((norm_case){"LayerNormalization", VN_F16, 2, {2, 70001}, 1, true, 0, NULL});
    check_case((norm_case){"vinci::RMSNormalization", VN_F16, 2, {2, 70001}, 1, false, 0, NULL});
    vn_device *dev = NULL;
    vn_device_options o;
    memset(&o, 0, sizeof o);
    o.num_threads = 2;
    o.arena_bytes[VN_ARENA_UB] = 16 * 1024;
    VT_OK(vn_device_create(&o, &dev));
    check_case((norm_case){"LayerNormalization", VN_F32, 2, {9, 1000}, 1, true, 0, dev});
    check_case((norm_case){"LayerNormalization", VN_F16, 2, {9, 3001}, 1, true, 0, dev});
    check_case((norm_case){"LayerNormalization", VN_F16, 2, {40, 33}, 1, true, 0, dev});
    vn_device_destroy(dev);
}

static void test_rmsnorm(void)
{
    static const int64_t hs[] = {1, 7, 33, 1000, 4096};
    for (int i = 0; i < 5; i++) {
        check_case(
            (norm_case){"vinci::RMSNormalization", VN_F32, 2, {21, hs[i]}, 1, false, 0, NULL});
        check_case((norm_case){"RMSNormalization", VN_F16, 2, {21, hs[i]}, 1, true, 0, NULL});
    }
}

static void test_other_axes(void)
{
    check_case((norm_case){"LayerNormalization", VN_F32, 3, {4, 6, 8}, 1, true, 0, NULL});
    check_case((norm_case){"LayerNormalization", VN_F16, 3, {4, 6, 8}, 0, true, 0, NULL});
    check_case((norm_case){"LayerNormalization", VN_F32, 4, {2, 3, 5, 7}, 2, false, 0, NULL});
}

static void test_empty_and_optional(void)
{
    vn_tensor_desc x = vt_desc(VN_F32, 2, (int64_t[]){0, 8}),
                   g = vt_desc(VN_F32, 1, (int64_t[]){8});
    vn_tensor_desc none = {VN_F32, -1, {0}};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "LayerNormalization", (vn_tensor_desc[]){x, g, none}, 3, NULL,
                            &plan));
    float gd[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    vn_tensor_desc st = vt_desc(VN_F32, 2, (int64_t[]){0, 1}); /* Mean, InvStdDev */
    vn_tensor in[3] = {{x, NULL}, {g, gd}, {none, NULL}};
    vn_tensor out[3] = {{x, NULL}, {st, NULL}, {st, NULL}};
    VT_OK(vn_op_run(plan, in, 3, out, 3, NULL));
    vn_op_plan_destroy(plan);
}

static void test_errors(void)
{
    vn_tensor_desc x = vt_desc(VN_F32, 3, (int64_t[]){2, 3, 8});
    vn_tensor_desc g5 = vt_desc(VN_F32, 1, (int64_t[]){5}), g8 = vt_desc(VN_F32, 1, (int64_t[]){8});
    vn_tensor_desc g8h = vt_desc(VN_F16, 1, (int64_t[]){8});
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "LayerNormalization", (vn_tensor_desc[]){x, g5}, 2, NULL,
                               &plan) == VN_ERR_SHAPE,
             "Scale [5] for H=8");
    VT_CONTAINS(vn_last_error(), "LayerNormalization");
    VT_CONTAINS(vn_last_error(), "Scale f32[5]");
    VT_CHECK(vn_op_plan_create(NULL, "LayerNormalization", (vn_tensor_desc[]){x, g8h}, 2, NULL,
                               &plan) == VN_ERR_DTYPE,
             "f16 Scale with f32 X");
    VT_CONTAINS(vn_last_error(), "Scale has dtype f16");
    vn_tensor_desc xi = vt_desc(VN_I32, 1, (int64_t[]){8}), gi = vt_desc(VN_I32, 1, (int64_t[]){8});
    VT_CHECK(vn_op_plan_create(NULL, "vinci::RMSNormalization", (vn_tensor_desc[]){xi, gi}, 2, NULL,
                               &plan) == VN_ERR_DTYPE,
             "i32");
    VT_CONTAINS(vn_last_error(), "RMSNormalization");
    VT_CONTAINS(vn_last_error(), "i32");
    vn_attr axis = {.name = "axis", .type = VN_ATTR_INT, .i = 3};
    vn_attrs a = {&axis, 1};
    VT_CHECK(vn_op_plan_create(NULL, "LayerNormalization", (vn_tensor_desc[]){x, g8}, 2, &a,
                               &plan) == VN_ERR_INVALID_ARG,
             "axis 3 of rank 3");
    VT_CONTAINS(vn_last_error(), "axis 3");
    VT_CHECK(vn_op_plan_create(NULL, "LayerNormalization", &x, 1, NULL, &plan) ==
                 VN_ERR_INVALID_ARG,
             "one input");
    VT_CONTAINS(vn_last_error(), "takes 2 to 3 inputs, got 1");
}

int main(void)
{
    VT_RUN(test_layernorm_f32);
    VT_RUN(test_layernorm_f16);
    VT_RUN(test_large_offset);
    VT_RUN(test_streamed_rows);
    VT_RUN(test_rmsnorm);
    VT_RUN(test_other_axes);
    VT_RUN(test_empty_and_optional);
    VT_RUN(test_errors);
    return vt_summary();
}
