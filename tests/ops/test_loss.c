/*
 * test_loss.c — NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on
 * small hand-checked cases: the three reductions, class weights,
 * ignore_index, spatial dims, and the log_prob output.
 */
#include <math.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"

/* Runs `op` on input f32[2,3] (or [1,3,2] when spatial), target i64, optional weight. */
static vn_status run_loss(const char *op, const vn_attr *attrs, int32_t na, const float *x,
                          const vn_tensor_desc *xd, const int64_t *t, const vn_tensor_desc *td,
                          const float *w, float *y, float *lp)
{
    vn_attrs a = {attrs, na};
    vn_tensor_desc wd = {VN_F32, 1, {3}};
    vn_tensor_desc in[3] = {*xd, *td, wd};
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(NULL, op, in, w ? 3 : 2, &a, &plan);
    if (st != VN_OK) return st;
    vn_tensor ti[3] = {{*xd, (void *)x}, {*td, (void *)t}, {wd, (void *)w}};
    vn_tensor to[2] = {{*vn_op_plan_output(plan, 0), y}, {*xd, lp}};
    st = vn_op_run(plan, ti, w ? 3 : 2, to, lp ? 2 : 1, NULL);
    vn_op_plan_destroy(plan);
    return st;
}

static void test_nll_reductions(void)
{
    const float x[6] = {-1, -2, -3, -4, -5, -6};
    const int64_t t[2] = {2, 0};
    const float w[3] = {0.5f, 1, 2};
    vn_tensor_desc xd = {VN_F32, 2, {2, 3}}, td = {VN_I64, 1, {2}};
    float y[2];
    vn_attr none = {.name = "reduction", .type = VN_ATTR_STRING, .s = "none"};
    VT_OK(run_loss("NegativeLogLikelihoodLoss", &none, 1, x, &xd, t, &td, NULL, y, NULL));
    VT_CHECK(y[0] == 3 && y[1] == 4, "none: %g %g", y[0], y[1]);
    vn_attr sum = {.name = "reduction", .type = VN_ATTR_STRING, .s = "sum"};
    VT_OK(run_loss("NegativeLogLikelihoodLoss", &sum, 1, x, &xd, t, &td, w, y, NULL));
    VT_CHECK(y[0] == 3 * 2 + 4 * 0.5f, "weighted sum %g", y[0]);
    VT_OK(run_loss("NegativeLogLikelihoodLoss", NULL, 0, x, &xd, t, &td, w, y, NULL));
    VT_CHECK(fabsf(y[0] - 8.0f / 2.5f) < 1e-6f, "weighted mean %g", y[0]);
    vn_attr ign[2] = {{.name = "ignore_index", .type = VN_ATTR_INT, .i = 0}, none};
    VT_OK(run_loss("NegativeLogLikelihoodLoss", ign, 2, x, &xd, t, &td, NULL, y, NULL));
    VT_CHECK(y[0] == 3 && y[1] == 0, "ignored: %g %g", y[0], y[1]);
}

static void test_sce_log_prob(void)
{
    const float x[6] = {0, 1, 2, 3, 4, 5}; /* [1, 3, 2]: classes along dim 1 */
    const int64_t t[2] = {1, 2};
    vn_tensor_desc xd = {VN_F32, 3, {1, 3, 2}}, td = {VN_I64, 2, {1, 2}};
    float y[1], lp[6];
    VT_OK(run_loss("SoftmaxCrossEntropyLoss", NULL, 0, x, &xd, t, &td, NULL, y, lp));
    double z0 = log(exp(0) + exp(2) + exp(4)), z1 = log(exp(1) + exp(3) + exp(5));
    VT_CHECK(fabs(lp[0] - (0 - z0)) < 1e-6 && fabs(lp[5] - (5 - z1)) < 1e-6, "log_prob");
    double want = ((z0 - 2) + (z1 - 5)) / 2;
    VT_CHECK(fabs(y[0] - want) < 1e-6, "mean loss %g, want %g", y[0], want);
}

static void test_loss_errors(void)
{
    vn_tensor_desc in[2] = {{VN_F32, 2, {2, 3}}, {VN_I64, 1, {3}}};
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "NegativeLogLikelihoodLoss", in, 2, NULL, &plan) ==
                 VN_ERR_SHAPE,
             "target [3] for N = 2");
    VT_CONTAINS(vn_last_error(), "does not match");
}

int main(void)
{
    VT_RUN(test_nll_reductions);
    VT_RUN(test_sce_log_prob);
    VT_RUN(test_loss_errors);
    return vt_summary();
}
