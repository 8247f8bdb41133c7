/*
 * test_optimizers.c — the ai.onnx.preview.training optimizers Adagrad,
 * Momentum (standard, Nesterov) and Adam against a double reference written
 * from the ONNX pseudo code: one and three tensors per node, T = 0 (no bias
 * correction, beta replaced by 1) and T > 0, f32 and f64; outputs past the
 * last tensor are absent (rank -1); and the input-count errors.
 * Bound: 2e-6 relative to (1 + |value|) for f32 (one f32 rounding of a
 * double result, plus the f32 inputs' own rounding carried by a few terms),
 * 1e-12 for f64.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

#define DOMAIN "ai.onnx.preview.training"

typedef struct ocase {
    const char *op, *mode;
    int states, n;
    int64_t t;
    double r, norm, norm_post, decay, eps, alpha, beta;
} ocase;

/* The reference step for one element: returns x', updates s[]. */
static double ref_step(const ocase *c, double x, double g, double *s)
{
    double gr = c->norm * x + g;
    if (!strcmp(c->op, "Adagrad")) {
        s[0] = s[0] + gr * gr;
        double lr = c->r / (1 + c->t * c->decay);
        return x - lr * gr / (sqrt(s[0]) + c->eps);
    }
    if (!strcmp(c->op, "Momentum")) {
        double b = c->t > 0 ? c->beta : 1;
        s[0] = c->alpha * s[0] + b * gr;
        return !strcmp(c->mode, "nesterov") ? x - c->r * (gr + c->alpha * s[0]) : x - c->r * s[0];
    }
    s[0] = c->alpha * s[0] + (1 - c->alpha) * gr;
    s[1] = c->beta * s[1] + (1 - c->beta) * gr * gr;
    double lr = c->r;
    if (c->t > 0) lr = c->r * sqrt(1 - pow(c->beta, c->t)) / (1 - pow(c->alpha, c->t));
    return (1 - c->norm_post) * (x - lr * s[0] / (sqrt(s[1]) + c->eps));
}

static int build_attrs(const ocase *c, vn_attr *a)
{
    int k = 0;
    a[k++] = (vn_attr){.name = "norm_coefficient", .type = VN_ATTR_FLOAT, .f = c->norm};
    if (!strcmp(c->op, "Adagrad")) {
        a[k++] = (vn_attr){.name = "decay_factor", .type = VN_ATTR_FLOAT, .f = c->decay};
        a[k++] = (vn_attr){.name = "epsilon", .type = VN_ATTR_FLOAT, .f = c->eps};
    } else if (!strcmp(c->op, "Momentum")) {
        a[k++] = (vn_attr){.name = "alpha", .type = VN_ATTR_FLOAT, .f = c->alpha};
        a[k++] = (vn_attr){.name = "beta", .type = VN_ATTR_FLOAT, .f = c->beta};
        a[k++] = (vn_attr){.name = "mode", .type = VN_ATTR_STRING, .s = c->mode};
    } else {
        a[k++] = (vn_attr){.name = "alpha", .type = VN_ATTR_FLOAT, .f = c->alpha};
        a[k++] = (vn_attr){.name = "beta", .type = VN_ATTR_FLOAT, .f = c->beta};
        a[k++] = (vn_attr){.name = "epsilon", .type = VN_ATTR_FLOAT, .f = c->eps};
        a[k++] =
            (vn_attr){.name = "norm_coefficient_post", .type = VN_ATTR_FLOAT, .f = c->norm_post};
    }
    return k;
}

enum { MAXT = 3, MAXIN = 2 + 4 * MAXT };

static void run_case(const ocase *c, vn_dtype dt, uint64_t seed)
{
    vt_rng r = {seed};
    int per = 2 + c->states, ni = 2 + per * c->n, no = (1 + c->states) * c->n;
    vn_tensor_desc in[MAXIN];
    void *data[MAXIN];
    int64_t sizes[MAXT] = {7, 1, 33};
    int64_t dims[MAXT][2] = {{7, 1}, {1, 1}, {3, 11}};
    in[0] = vt_desc(dt, 0, NULL);
    in[1] = vt_desc(VN_I64, 0, NULL);
    data[0] = malloc(8);
    data[1] = malloc(8);
    vt_put(dt, data[0], 0, c->r);
    *(int64_t *)data[1] = c->t;
    for (int k = 0; k < per; k++)
        for (int i = 0; i < c->n; i++) {
            int j = 2 + k * c->n + i;
            in[j] = vt_desc(dt, 2, dims[i]);
            data[j] = malloc((size_t)sizes[i] * 8);
            for (int64_t e = 0; e < sizes[i]; e++) /* states >= 0: H sums squares */
                vt_put(dt, data[j], e, k >= 2 ? vt_uniform(&r, 0, 2) : vt_uniform(&r, -2, 2));
        }
    vn_attr a[8];
    vn_attrs attrs = {a, build_attrs(c, a)};
    char name[64];
    snprintf(name, sizeof name, DOMAIN "::%s", c->op);
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, name, in, ni, &attrs, &plan));
    if (plan) {
        int nout = vn_op_plan_num_outputs(plan);
        vn_tensor out[32];
        memset(out, 0, sizeof out);
        for (int k = 0; k < nout && k < 32; k++) {
            out[k].desc = *vn_op_plan_output(plan, k);
            if (k < no) {
                int src = 2 + (k < c->n ? k : k + c->n); /* X, then the states */
                VT_CHECK(out[k].desc.rank == in[src].rank, "output %d rank", k);
                out[k].data = malloc((size_t)sizes[k % c->n] * 8);
            } else {
                VT_CHECK(out[k].desc.rank == -1, "output %d is absent", k);
            }
        }
        vn_tensor ti[MAXIN];
        for (int j = 0; j < ni; j++) ti[j] = (vn_tensor){in[j], data[j]};
        VT_OK(vn_op_run(plan, ti, ni, out, nout, NULL));
        double worst = 0, unit = dt == VN_F32 ? 2e-6 : 1e-12;
        for (int i = 0; i < c->n; i++)
            for (int64_t e = 0; e < sizes[i]; e++) {
                double s[2] = {0, 0}, got[3], want[3];
                for (int k = 0; k < c->states; k++)
                    s[k] = vt_get(dt, data[2 + (2 + k) * c->n + i], e);
                want[0] =
                    ref_step(c, vt_get(dt, data[2 + i], e), vt_get(dt, data[2 + c->n + i], e), s);
                got[0] = vt_get(dt, out[i].data, e);
                for (int k = 0; k < c->states; k++) {
                    want[1 + k] = s[k];
                    got[1 + k] = vt_get(dt, out[(1 + k) * c->n + i].data, e);
                }
                for (int k = 0; k <= c->states; k++) {
                    double err = fabs(got[k] - want[k]) / (unit * (1 + fabs(want[k])));
                    if (err > worst) worst = err;
                }
            }
        VT_CHECK(worst <= 1, "%s %s n %d T %lld %s: error %.2f of the bound", c->op,
                 c->mode ? c->mode : "", c->n, (long long)c->t, vn_dtype_name(dt), worst);
        for (int k = 0; k < no; k++) free(out[k].data);
        vn_op_plan_destroy(plan);
    }
    for (int j = 0; j < ni; j++) free(data[j]);
}

static void test_updates(void)
{
    const ocase cases[] = {
        {"Adagrad", NULL, 1, 1, 0, 0.1, 0.001, 0, 0.1, 1e-5, 0, 0},
        {"Adagrad", NULL, 1, 3, 5, 0.3, 0.0, 0, 0.5, 1e-2, 0, 0},
        {"Momentum", "standard", 1, 1, 0, 0.1, 0.001, 0, 0, 0, 0.95, 0.1},
        {"Momentum", "standard", 1, 3, 4, 0.1, 0.01, 0, 0, 0, 0.9, 0.3},
        {"Momentum", "nesterov", 1, 2, 7, 0.2, 0.01, 0, 0, 0, 0.9, 0.5},
        {"Adam", NULL, 2, 1, 0, 0.1, 0.001, 0.1, 0, 1e-7, 0.95, 0.1},
        {"Adam", NULL, 2, 3, 10, 0.1, 0.01, 0.0, 0, 1e-3, 0.9, 0.999},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i], VN_F32, 100 + i);
        run_case(&cases[i], VN_F64, 200 + i);
    }
}

static void test_errors(void)
{
    int64_t d[1] = {4};
    vn_tensor_desc in[6] = {vt_desc(VN_F32, 0, NULL), vt_desc(VN_I64, 0, NULL),
                            vt_desc(VN_F32, 1, d),    vt_desc(VN_F32, 1, d),
                            vt_desc(VN_F32, 1, d),    vt_desc(VN_F32, 1, d)};
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, DOMAIN "::Adagrad", in, 6, NULL, &plan) == VN_ERR_INVALID_ARG,
             "6 inputs for Adagrad");
    VT_CONTAINS(vn_last_error(), "groups of 3");
    VT_CHECK(vn_op_plan_create(NULL, DOMAIN "::Momentum", in, 5, NULL, &plan) == VN_ERR_INVALID_ARG,
             "Momentum without alpha");
    VT_CONTAINS(vn_last_error(), "'alpha' is required");
    in[1] = vt_desc(VN_F32, 0, NULL);
    VT_CHECK(vn_op_plan_create(NULL, DOMAIN "::Adam", in, 6, NULL, &plan) == VN_ERR_SHAPE,
             "T as f32");
    VT_CONTAINS(vn_last_error(), "T must be an i64 scalar");
}

int main(void)
{
    VT_RUN(test_updates);
    VT_RUN(test_errors);
    return vt_summary();
}
