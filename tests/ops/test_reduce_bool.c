/*
 * test_reduce_bool.c — ReduceMax / ReduceMin on bool (ONNX opset 20): any /
 * all of the elements, a bool result; over everything and over axis 1 (an
 * axes attribute), and the empty reduction (Max of nothing is false, Min of
 * nothing true, the dtype's lowest and highest values).
 */
#include <stdint.h>
#include <stdlib.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

static void reduce(const char *op, const uint8_t *x, int32_t rank, const int64_t *dims,
                   const int64_t *axes, int32_t naxes, uint8_t *y, int64_t ny)
{
    vn_attr a[2] = {{.name = "keepdims", .type = VN_ATTR_INT, .i = 0},
                    {.name = "axes", .type = VN_ATTR_INTS, .ints = axes, .count = naxes}};
    vn_attrs attrs = {a, naxes ? 2 : 1};
    vn_tensor in = {vt_desc(VN_BOOL, rank, dims), (void *)x};
    vn_op_plan *plan = NULL;
    VT_OK(vn_op_plan_create(NULL, op, &in.desc, 1, &attrs, &plan));
    if (!plan) return;
    const vn_tensor_desc *od = vn_op_plan_output(plan, 0);
    VT_CHECK(od->dtype == VN_BOOL && vn_desc_numel(od) == ny, "%s output bool[%lld]", op,
             (long long)ny);
    vn_tensor out = {*od, y};
    size_t ws = vn_op_plan_workspace(plan);
    void *w = ws ? malloc(ws) : NULL;
    VT_OK(vn_op_run(plan, &in, 1, &out, 1, w));
    free(w);
    vn_op_plan_destroy(plan);
}

static void test_bool(void)
{
    const uint8_t x[6] = {1, 0, 1, 0, 0, 0}, ones[6] = {1, 1, 1, 1, 1, 1};
    int64_t dims[2] = {2, 3}, axis[1] = {1}, empty[2] = {2, 0};
    uint8_t y[2] = {9, 9};
    reduce("ReduceMax", x, 2, dims, NULL, 0, y, 1);
    VT_CHECK(y[0] == 1, "any");
    reduce("ReduceMin", x, 2, dims, NULL, 0, y, 1);
    VT_CHECK(y[0] == 0, "all of mixed");
    reduce("ReduceMin", ones, 2, dims, NULL, 0, y, 1);
    VT_CHECK(y[0] == 1, "all of ones");
    reduce("ReduceMax", x, 2, dims, axis, 1, y, 2);
    VT_CHECK(y[0] == 1 && y[1] == 0, "any per row: %d %d", y[0], y[1]);
    reduce("ReduceMin", ones, 2, dims, axis, 1, y, 2);
    VT_CHECK(y[0] == 1 && y[1] == 1, "all per row: %d %d", y[0], y[1]);
    reduce("ReduceMax", x, 2, empty, axis, 1, y, 2);
    VT_CHECK(y[0] == 0 && y[1] == 0, "max of nothing: %d %d", y[0], y[1]);
    reduce("ReduceMin", x, 2, empty, axis, 1, y, 2);
    VT_CHECK(y[0] == 1 && y[1] == 1, "min of nothing: %d %d", y[0], y[1]);
}

int main(void)
{
    VT_RUN(test_bool);
    return vt_summary();
}
