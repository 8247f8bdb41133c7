/*
 * test_batchnorm_training.c — BatchNormalization with training_mode = 1
 * (ONNX opset 14/15) against a double reference: Y normalised with the
 * batch's per-channel mean and biased variance (every axis but 1), and the
 * outputs running_mean / running_var = input * momentum + batch *
 * (1 - momentum). Ranks 2 to 5 (0 to 3 spatial dims), momentum 0, 0.3, 0.9
 * and 1, data far from zero (cancellation in the variance), a channel of
 * constant values (variance 0), f32 and f16.
 * Tolerance: Y within 1e-5 * (1 + |x*a| + |b|) for f32 (a and b rounded to
 * f32, then one multiply-add in f32), 2^-9 * (1 + |x*a| + |b|) for f16;
 * running statistics within 1e-6 relative (f32) or 1 f16 ulp.
 */
#include <math.h>
#include <stdlib.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

typedef struct bn_case {
    int32_t rank;
    int64_t dims[5];
    double momentum, eps, centre;
} bn_case;

/* Per channel: the batch mean and biased variance in double. */
static void ref_stats(vn_dtype dt, const void *x, const int64_t *dims, int32_t rank, double *mean,
                      double *var)
{
    int64_t c = dims[1], inner = 1;
    for (int32_t d = 2; d < rank; d++) inner *= dims[d];
    for (int64_t ch = 0; ch < c; ch++) {
        double s = 0, q = 0;
        int64_t cnt = dims[0] * inner;
        for (int64_t n = 0; n < dims[0]; n++)
            for (int64_t i = 0; i < inner; i++) s += vt_get(dt, x, (n * c + ch) * inner + i);
        mean[ch] = s / (double)cnt;
        for (int64_t n = 0; n < dims[0]; n++)
            for (int64_t i = 0; i < inner; i++) {
                double t = vt_get(dt, x, (n * c + ch) * inner + i) - mean[ch];
                q += t * t;
            }
        var[ch] = q / (double)cnt;
    }
}

static double check_y(vn_dtype dt, const bn_case *k, const void *x, const void *y, void *const *prm,
                      const double *mean, const double *var)
{
    int64_t c = k->dims[1], n = 1;
    for (int32_t d = 0; d < k->rank; d++) n *= k->dims[d];
    int64_t inner = n / k->dims[0] / c;
    double worst = 0, unit = dt == VN_F32 ? 1e-5 : ldexp(1.0, -9);
    for (int64_t i = 0; i < n; i++) {
        int64_t ch = i / inner % c;
        double a = vt_get(dt, prm[0], ch) / sqrt(var[ch] + k->eps);
        double b = vt_get(dt, prm[1], ch) - mean[ch] * a, xv = vt_get(dt, x, i);
        double ref = xv * a + b, tol = unit * (1 + fabs(xv * a) + fabs(b));
        double e = fabs(vt_get(dt, y, i) - ref) / tol;
        if (e > worst) worst = e;
    }
    return worst;
}

/* Output k (1: mean, 2: var) against input * momentum + batch * (1 - momentum). */
static double check_running(vn_dtype dt, const bn_case *k, const void *out, const void *in,
                            const double *batch)
{
    double worst = 0;
    for (int64_t ch = 0; ch < k->dims[1]; ch++) {
        double ref = vt_get(dt, in, ch) * k->momentum + batch[ch] * (1 - k->momentum);
        double tol = dt == VN_F32 ? 1e-6 * (1e-3 + fabs(ref)) : ldexp(fabs(ref), -10) + 1e-7;
        double e = fabs(vt_get(dt, out, ch) - ref) / tol;
        if (e > worst) worst = e;
    }
    return worst;
}

static void fill(vt_rng *r, vn_dtype dt, const bn_case *k, void *x, void *const *prm, int64_t n)
{
    int64_t c = k->dims[1], inner = n / k->dims[0] / c;
    for (int64_t i = 0; i < n; i++) {
        bool flat = i / inner % c == c - 1 && c > 2; /* one channel of constants */
        vt_put(dt, x, i, flat ? k->centre + 0.25 : k->centre + vt_uniform(r, -3, 3));
    }
    for (int64_t i = 0; i < c; i++) {
        vt_put(dt, prm[0], i, vt_uniform(r, 0.5, 2));    /* scale */
        vt_put(dt, prm[1], i, vt_uniform(r, -1, 1));     /* B */
        vt_put(dt, prm[2], i, vt_uniform(r, -0.5, 0.5)); /* input_mean */
        vt_put(dt, prm[3], i, vt_uniform(r, 0.1, 3));    /* input_var */
    }
}

static void run_case(vt_rng *r, vn_dtype dt, const bn_case *k)
{
    int64_t c = k->dims[1], n = 1;
    for (int32_t d = 0; d < k->rank; d++) n *= k->dims[d];
    size_t es = vn_dtype_size(dt);
    void *x = malloc((size_t)n * es + 1), *y = malloc((size_t)n * es + 1), *prm[4], *run[2];
    double *mean = malloc((size_t)c * sizeof *mean), *var = malloc((size_t)c * sizeof *var);
    for (int i = 0; i < 4; i++) prm[i] = malloc((size_t)c * es);
    for (int i = 0; i < 2; i++) run[i] = malloc((size_t)c * es);
    fill(r, dt, k, x, prm, n);
    vn_tensor_desc in[5];
    in[0] = vt_desc(dt, k->rank, k->dims);
    for (int i = 1; i < 5; i++) in[i] = vt_desc(dt, 1, &c);
    vn_attr at[3] = {{.name = "epsilon", .type = VN_ATTR_FLOAT, .f = k->eps},
                     {.name = "momentum", .type = VN_ATTR_FLOAT, .f = k->momentum},
                     {.name = "training_mode", .type = VN_ATTR_INT, .i = 1}};
    vn_attrs attrs = {at, 3};
    vn_tensor ti[5] = {
        {in[0], x}, {in[1], prm[0]}, {in[2], prm[1]}, {in[3], prm[2]}, {in[4], prm[3]}};
    vn_tensor to[3] = {{in[0], y}, {in[3], run[0]}, {in[4], run[1]}};
    vn_status st = vt_op_once("BatchNormalization", ti, 5, &attrs, to, 3);
    VT_OK(st);
    if (st == VN_OK) {
        ref_stats(dt, x, k->dims, k->rank, mean, var);
        double ey = check_y(dt, k, x, y, prm, mean, var);
        double em = check_running(dt, k, run[0], prm[2], mean);
        double ev = check_running(dt, k, run[1], prm[3], var);
        VT_CHECK(ey <= 1 && em <= 1 && ev <= 1,
                 "%s rank %d C %lld momentum %g centre %g: Y %.2f, running_mean %.2f, "
                 "running_var %.2f of the bound",
                 vn_dtype_name(dt), (int)k->rank, (long long)c, k->momentum, k->centre, ey, em, ev);
    }
    free(x), free(y), free(mean), free(var);
    for (int i = 0; i < 4; i++) free(prm[i]);
    for (int i = 0; i < 2; i++) free(run[i]);
}

static void test_shapes(void)
{
    vt_rng r = {7};
    const bn_case cases[] = {
        {2, {6, 5}, 0.9, 1e-5, 0},           {3, {2, 7, 9}, 0.3, 1e-5, 0},
        {4, {2, 3, 4, 5}, 0.9, 1e-2, 0},     {4, {1, 37, 13, 11}, 0.0, 1e-5, 0},
        {5, {2, 4, 3, 5, 6}, 1.0, 1e-5, 0},  {5, {1, 3, 2, 2, 3}, 0.9, 1e-5, 0},
        {3, {1, 1, 1}, 0.9, 1e-5, 0},        {4, {3, 16, 7, 7}, 0.9, 1e-5, 100},
        {3, {4, 9, 33}, 0.5, 1e-3, -1000.0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&r, VN_F32, &cases[i]);
        if (fabs(cases[i].centre) < 10) run_case(&r, VN_F16, &cases[i]);
    }
}

/* N = 0: Y is empty and the running statistics are input * momentum + 0. */
static void test_empty_batch(void)
{
    int64_t xd[4] = {0, 3, 2, 2}, c = 3;
    float sc[3] = {1, 1, 1}, bias[3] = {0}, im[3] = {1, 2, 3}, iv[3] = {4, 5, 6}, rm[3], rv[3];
    vn_tensor_desc in[5] = {vt_desc(VN_F32, 4, xd), vt_desc(VN_F32, 1, &c), vt_desc(VN_F32, 1, &c),
                            vt_desc(VN_F32, 1, &c), vt_desc(VN_F32, 1, &c)};
    vn_attr t = {.name = "training_mode", .type = VN_ATTR_INT, .i = 1};
    vn_attrs attrs = {&t, 1};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "BatchNormalization", in, 5, &attrs, &plan));
    if (!plan) return;
    size_t ws = vn_op_plan_workspace(plan);
    void *w = ws ? malloc(ws) : NULL;
    vn_tensor ti[5] = {{in[0], NULL}, {in[1], sc}, {in[2], bias}, {in[3], im}, {in[4], iv}};
    vn_tensor to[3] = {{in[0], NULL}, {in[3], rm}, {in[4], rv}};
    VT_OK(vn_op_run(plan, ti, 5, to, 3, w));
    for (int i = 0; i < 3; i++)
        VT_CHECK(fabsf(rm[i] - 0.9f * im[i]) < 1e-6f && fabsf(rv[i] - 0.9f * iv[i]) < 1e-6f,
                 "channel %d: %g %g", i, rm[i], rv[i]);
    free(w);
    vn_op_plan_destroy(plan);
}

int main(void)
{
    VT_RUN(test_shapes);
    VT_RUN(test_empty_batch);
    return vt_summary();
}
