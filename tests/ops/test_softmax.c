/*
 * test_softmax.c — Softmax and LogSoftmax over the last, first and middle
 * axes, f32 / f16 / bf16, large-magnitude inputs (a max-free exp would
 * overflow), rows and column groups that fit scratch and ones that are
 * streamed, against double references.
 *
 * Tolerance: |y - ref| <= atol + rtol * |ref|; f32 rtol 2e-5 (softmax) or
 * 1e-6 (log-softmax, whose values are large) with atol 1e-6; f16 adds one
 * f16 ulp (2^-10 relative, 2^-24 absolute for subnormals); bf16 one bf16
 * ulp (2^-7 relative).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

typedef struct sm_case {
    bool log;
    vn_dtype dt;
    int32_t rank;
    int64_t dims[4];
    int32_t axis; /* as given to the operator (may be negative) */
    double range; /* inputs in [-range, range) */
    vn_device *dev;
} sm_case;

static int64_t run_softmax(const sm_case *c)
{
    vt_rng r = {77};
    vn_tensor_desc d = vt_desc(c->dt, c->rank, c->dims);
    int64_t n = vn_desc_numel(&d);
    size_t es = vn_dtype_size(c->dt);
    void *x = malloc((size_t)(n ? n : 1) * es), *y = malloc((size_t)(n ? n : 1) * es);
    for (int64_t i = 0; i < n; i++) vt_put(c->dt, x, i, vt_uniform(&r, -c->range, c->range));
    vn_attr axis = {.name = "axis", .type = VN_ATTR_INT, .i = c->axis};
    vn_attrs attrs = {&axis, 1};
    const char *op = c->log ? "LogSoftmax" : "Softmax";
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(c->dev, op, &d, 1, &attrs, &plan);
    VT_CHECK(st == VN_OK, "%s plan: %s", op, vn_last_error());
    if (st != VN_OK) return 1;
    vn_tensor in = {d, x}, out = {d, y};
    st = vn_op_run(plan, &in, 1, &out, 1, NULL);
    VT_CHECK(st == VN_OK, "%s run: %s", op, vn_last_error());
    int32_t ax = c->axis < 0 ? c->axis + c->rank : c->axis;
    int64_t outer = 1, inner = 1, a = c->dims[ax];
    for (int32_t k = 0; k < c->rank; k++)
        if (k != ax) *(k < ax ? &outer : &inner) *= c->dims[k];
    double atol = 1e-6, rtol = c->log ? 1e-6 : 2e-5;
    if (c->dt == VN_F16) atol += ldexp(1, -24), rtol += ldexp(1, -10);
    if (c->dt == VN_BF16) atol += ldexp(1, -24), rtol += ldexp(1, -7);
    int64_t bad = 0;
    for (int64_t o = 0; o < outer && st == VN_OK; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * a * inner + i;
            double m = -INFINITY, s = 0;
            for (int64_t k = 0; k < a; k++) m = fmax(m, vt_get(c->dt, x, base + k * inner));
            for (int64_t k = 0; k < a; k++) s += exp(vt_get(c->dt, x, base + k * inner) - m);
            for (int64_t k = 0; k < a; k++) {
                double v = vt_get(c->dt, x, base + k * inner) - m;
                double want = c->log ? v - log(s) : exp(v) / s;
                double got = vt_get(c->dt, y, base + k * inner);
                if (!(fabs(got - want) <= atol + rtol * fabs(want)) && bad++ < 3)
                    fprintf(stderr, "    %s %s [%lld]: got %.9g want %.9g\n", op,
                            vn_dtype_name(c->dt), (long long)(base + k * inner), got, want);
            }
        }
    vn_op_plan_destroy(plan);
    free(x);
    free(y);
    return bad;
}

static void check_case(sm_case c)
{
    int64_t bad = run_softmax(&c);
    VT_CHECK(bad == 0, "%s %s [%lld,%lld,%lld] axis %d: %lld mismatches",
             c.log ? "LogSoftmax" : "Softmax", vn_dtype_name(c.dt), (long long)c.dims[0],
             (long long)c.dims[1], (long long)c.dims[2], (int)c.axis, (long long)bad);
}

static const vn_dtype dts[] = {VN_F32, VN_F16, VN_BF16};

static void test_last_axis(void)
{
    /* Row lengths around the 16-lane vectors, the 64-lane sum groups and the
     * 1024-element row blocks (full, masked-tail-only and one-past lengths). */
    static const int64_t shapes[][2] = {{7, 1},    {5, 7},    {4, 15},  {3, 17},
                                        {9, 33},   {2, 63},   {2, 65},  {64, 1000},
                                        {2, 1025}, {3, 4096}, {2, 4097}};
    for (int log = 0; log < 2; log++)
        for (int t = 0; t < 3; t++)
            for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++)
                check_case((sm_case){log, dts[t], 2, {shapes[s][0], shapes[s][1]}, -1, 8, NULL});
}

static void test_first_axis(void)
{
    for (int log = 0; log < 2; log++)
        for (int t = 0; t < 3; t++) {
            check_case((sm_case){log, dts[t], 2, {1000, 7}, 0, 8, NULL});
            check_case((sm_case){log, dts[t], 2, {33, 650}, 0, 8, NULL});
            check_case((sm_case){log, dts[t], 1, {77}, 0, 8, NULL});
        }
}

static void test_middle_axis(void)
{
    for (int log = 0; log < 2; log++)
        for (int t = 0; t < 3; t++) {
            check_case((sm_case){log, dts[t], 3, {4, 50, 30}, 1, 8, NULL});
            check_case((sm_case){log, dts[t], 4, {2, 3, 17, 5}, -2, 8, NULL});
            check_case((sm_case){log, dts[t], 3, {3, 1, 40}, 1, 8, NULL});
        }
}

static void test_large_magnitude(void)
{
    /* exp(1e4) overflows f32: only a max-subtracting softmax survives */
    for (int log = 0; log < 2; log++) {
        check_case((sm_case){log, VN_F32, 2, {16, 1000}, -1, 1e4, NULL});
        check_case((sm_case){log, VN_F32, 2, {300, 20}, 0, 1e4, NULL});
        check_case((sm_case){log, VN_F32, 3, {3, 40, 50}, 1, 1e4, NULL});
        check_case((sm_case){log, VN_F16, 2, {16, 1000}, -1, 3e4, NULL});
        check_case((sm_case){log, VN_BF16, 3, {3, 40, 50}, 1, 1e30, NULL});
    }
}

static void test_streamed(void)
{
    for (int log = 0; log < 2; log++) {
        check_case((sm_case){log, VN_F32, 2, {2, 200003}, -1, 20, NULL});
        check_case((sm_case){log, VN_F16, 3, {2, 60000, 3}, 1, 20, NULL});
    }
    vn_device *dev = NULL;
    vn_device_options o;
    memset(&o, 0, sizeof o);
    o.num_threads = 2;
    o.arena_bytes[VN_ARENA_UB] = 16 * 1024;
    VT_OK(vn_device_create(&o, &dev));
    for (int log = 0; log < 2; log++)
        for (int t = 0; t < 3; t++) {
            check_case((sm_case){log, dts[t], 2, {5, 3001}, -1, 8, dev});
            check_case((sm_case){log, dts[t], 2, {3001, 70}, 0, 8, dev});
            check_case((sm_case){log, dts[t], 3, {3, 700, 900}, 1, 8, dev});
        }
    vn_device_destroy(dev);
}

static void test_errors_and_empty(void)
{
    vn_tensor_desc d = vt_desc(VN_F32, 2, (int64_t[]){3, 4});
    vn_attr axis = {.name = "axis", .type = VN_ATTR_INT, .i = 2};
    vn_attrs a = {&axis, 1};
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "Softmax", &d, 1, &a, &plan) == VN_ERR_INVALID_ARG, "axis");
    VT_CONTAINS(vn_last_error(), "Softmax");
    VT_CONTAINS(vn_last_error(), "axis 2");
    vn_tensor_desc di = vt_desc(VN_I32, 2, (int64_t[]){3, 4});
    VT_CHECK(vn_op_plan_create(NULL, "LogSoftmax", &di, 1, NULL, &plan) == VN_ERR_DTYPE, "i32");
    VT_CONTAINS(vn_last_error(), "LogSoftmax");
    vn_tensor_desc e = vt_desc(VN_F32, 3, (int64_t[]){2, 0, 5});
    VT_OK(vn_op_plan_create(NULL, "Softmax", &e, 1,
                            &(vn_attrs){&(vn_attr){.name = "axis", .type = VN_ATTR_INT, .i = 1}, 1},
                            &plan));
    vn_tensor x = {e, NULL}, y = {e, NULL};
    VT_OK(vn_op_run(plan, &x, 1, &y, 1, NULL));
    vn_op_plan_destroy(plan);
}

int main(void)
{
    VT_RUN(test_last_axis);
    VT_RUN(test_first_axis);
    VT_RUN(test_middle_axis);
    VT_RUN(test_large_magnitude);
    VT_RUN(test_streamed);
    VT_RUN(test_errors_and_empty);
    return vt_summary();
}
