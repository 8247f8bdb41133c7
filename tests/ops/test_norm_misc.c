/*
 * test_norm_misc.c — LRN, LpNormalization and ReduceLogSum on small
 * hand-checked cases.
 */
#include <math.h>

#include "vinci/ops.h"
#include "vt.h"

static void run1(const char *op, const vn_attr *a, int32_t na, vn_tensor_desc xd, const float *x,
                 float *y)
{
    vn_attrs attrs = {a, na};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, op, &xd, 1, &attrs, &plan));
    if (!plan) return;
    vn_tensor in = {xd, (void *)x}, out = {*vn_op_plan_output(plan, 0), y};
    VT_OK(vn_op_run(plan, &in, 1, &out, 1, NULL));
    vn_op_plan_destroy(plan);
}

static void test_lrn(void)
{
    const float x[3] = {1, 2, 3}; /* [1, 3, 1]: channels 1, 2, 3 */
    float y[3];
    vn_attr a[3] = {{.name = "size", .type = VN_ATTR_INT, .i = 3},
                    {.name = "alpha", .type = VN_ATTR_FLOAT, .f = 3},
                    {.name = "beta", .type = VN_ATTR_FLOAT, .f = 1}};
    run1("LRN", a, 3, (vn_tensor_desc){VN_F32, 3, {1, 3, 1}}, x, y);
    /* channel 1 sees 1, 2, 3: 2 / (1 + 3 / 3 * 14) */
    VT_CHECK(fabsf(y[1] - 2.0f / 15.0f) < 1e-6f, "y[1] = %g", y[1]);
    VT_CHECK(fabsf(y[0] - 1.0f / 6.0f) < 1e-6f, "y[0] = %g (channels 0, 1)", y[0]);
}

static void test_lp_normalization(void)
{
    const float x[4] = {3, 4, -1, 1};
    float y[4];
    run1("LpNormalization", NULL, 0, (vn_tensor_desc){VN_F32, 2, {2, 2}}, x, y);
    VT_CHECK(fabsf(y[0] - 0.6f) < 1e-6f && fabsf(y[1] - 0.8f) < 1e-6f, "L2 rows");
    vn_attr p1[2] = {{.name = "p", .type = VN_ATTR_INT, .i = 1},
                     {.name = "axis", .type = VN_ATTR_INT, .i = 0}};
    run1("LpNormalization", p1, 2, (vn_tensor_desc){VN_F32, 2, {2, 2}}, x, y);
    VT_CHECK(fabsf(y[0] - 0.75f) < 1e-6f && fabsf(y[3] - 0.2f) < 1e-6f, "L1 columns");
}

static void test_reduce_log_sum(void)
{
    const float x[4] = {1, 2, 3, 4};
    float y[2];
    vn_attr a = {.name = "axes", .type = VN_ATTR_INTS, .ints = (const int64_t[]){1}, .count = 1};
    run1("ReduceLogSum", &a, 1, (vn_tensor_desc){VN_F32, 2, {2, 2}}, x, y);
    VT_CHECK(fabsf(y[0] - logf(3)) < 1e-6f && fabsf(y[1] - logf(7)) < 1e-6f, "%g %g", y[0], y[1]);
}

int main(void)
{
    VT_RUN(test_lrn);
    VT_RUN(test_lp_normalization);
    VT_RUN(test_reduce_log_sum);
    return vt_summary();
}
