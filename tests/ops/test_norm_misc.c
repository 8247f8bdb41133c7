/*
 * test_norm_misc.c — LRN, LpNormalization, ReduceLogSum, PRelu's
 * per-channel slope and GridSample on small hand-checked cases.
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

/* slope [C] on X [N, C, L] with C != L: per channel, as before opset 7. */
static void test_prelu_channel_slope(void)
{
    const float x[6] = {-1, -2, -3, -4, -5, -6}; /* [1, 2, 3] */
    const float slope[2] = {0.5f, 2};
    float y[6];
    vn_tensor_desc in[2] = {{VN_F32, 3, {1, 2, 3}}, {VN_F32, 1, {2}}};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "PRelu", in, 2, NULL, &plan));
    if (!plan) return;
    vn_tensor ti[2] = {{in[0], (void *)x}, {in[1], (void *)slope}}, out = {in[0], y};
    VT_OK(vn_op_run(plan, ti, 2, &out, 1, NULL));
    vn_op_plan_destroy(plan);
    VT_CHECK(y[0] == -0.5f && y[2] == -1.5f && y[3] == -8 && y[5] == -12, "%g %g %g %g", y[0], y[2],
             y[3], y[5]);
}

/* GridSample: the corners' grid with align_corners reproduces X; a point
 * between them interpolates; zeros padding outside. */
static void test_grid_sample(void)
{
    const float x[4] = {1, 2, 3, 4};                   /* [1, 1, 2, 2] */
    const float grid[8] = {-1, -1, 1, -1, 0, 0, 3, 3}; /* (x, y) pairs, [1, 2, 2, 2] */
    float y[4];
    vn_tensor_desc in[2] = {{VN_F32, 4, {1, 1, 2, 2}}, {VN_F32, 4, {1, 2, 2, 2}}};
    vn_attr a = {.name = "align_corners", .type = VN_ATTR_INT, .i = 1};
    vn_attrs attrs = {&a, 1};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, "GridSample", in, 2, &attrs, &plan));
    if (!plan) return;
    vn_tensor ti[2] = {{in[0], (void *)x}, {in[1], (void *)grid}}, out = {in[0], y};
    VT_OK(vn_op_run(plan, ti, 2, &out, 1, NULL));
    vn_op_plan_destroy(plan);
    VT_CHECK(y[0] == 1 && y[1] == 2 && fabsf(y[2] - 2.5f) < 1e-6f && y[3] == 0, "%g %g %g %g", y[0],
             y[1], y[2], y[3]);
}

int main(void)
{
    VT_RUN(test_grid_sample);
    VT_RUN(test_prelu_channel_slope);
    VT_RUN(test_lrn);
    VT_RUN(test_lp_normalization);
    VT_RUN(test_reduce_log_sum);
    return vt_summary();
}
