/*
 * test_bitcast_optional_ml.c — the small conformance operators of extra.h:
 * BitCast (bit patterns against memcpy of known values, every same-width
 * pair the tests use, the width error), OptionalHasElement (absent / given
 * input), OptionalGetElement (a tensor is its own element), ai.onnx.ml
 * Binarizer (threshold, NaN) and ArrayFeatureExtractor (2-D and 1-D X,
 * negative and out-of-range indices) and TreeEnsemble (two hand-built
 * trees: a set-membership node, a NaN sent true, each aggregate function,
 * an unreached target under max).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"
#include "vt_tensor.h"

/* Plan and run a one-output operator; returns the plan's status. */
static vn_status run1(const char *op, const vn_tensor *in, int32_t ni, const vn_attrs *attrs,
                      void *out, vn_tensor_desc *od)
{
    vn_tensor_desc d[4];
    memset(d, 0, sizeof d);
    for (int32_t i = 0; i < ni; i++) d[i] = in[i].desc;
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(NULL, op, d, ni, attrs, &plan);
    if (st != VN_OK) return st;
    *od = *vn_op_plan_output(plan, 0);
    vn_tensor o = {*od, out};
    st = vn_op_run(plan, in, ni, &o, 1, NULL);
    vn_op_plan_destroy(plan);
    return st;
}

static void test_bitcast(void)
{
    /* ONNX codes: 1 f32, 6 i32, 7 i64, 11 f64, 2 u8, 9 bool, 5 i16 */
    float f[3] = {1.0f, -2.5f, 3e-39f};
    int64_t dims[1] = {3};
    vn_tensor in = {vt_desc(VN_F32, 1, dims), f};
    vn_attr to = {.name = "to", .type = VN_ATTR_INT, .i = 6};
    vn_attrs a = {&to, 1};
    int32_t got[3];
    vn_tensor_desc od;
    VT_OK(run1("BitCast", &in, 1, &a, got, &od));
    VT_CHECK(od.dtype == VN_I32 && od.rank == 1 && od.dims[0] == 3, "f32 -> i32 desc");
    VT_CHECK(got[0] == 0x3f800000 && got[1] == (int32_t)0xc0200000 && !memcmp(got, f, 12),
             "f32 -> i32 bits");
    double dv[2] = {-0.0, 1e300};
    int64_t two[1] = {2}, bits[2];
    vn_tensor ind = {vt_desc(VN_F64, 1, two), dv};
    to.i = 7;
    VT_OK(run1("BitCast", &ind, 1, &a, bits, &od));
    VT_CHECK(od.dtype == VN_I64 && bits[0] == INT64_MIN && !memcmp(bits, dv, 16), "f64 -> i64");
    uint8_t b[3] = {1, 0, 1}, u[3];
    vn_tensor inb = {vt_desc(VN_BOOL, 1, dims), b};
    to.i = 2;
    VT_OK(run1("BitCast", &inb, 1, &a, u, &od));
    VT_CHECK(od.dtype == VN_U8 && u[0] == 1 && u[1] == 0 && u[2] == 1, "bool -> u8");
    to.i = 5;
    VT_CHECK(run1("BitCast", &in, 1, &a, got, &od) == VN_ERR_INVALID_ARG, "f32 -> i16");
    VT_CONTAINS(vn_last_error(), "widths must match");
}

static void test_optional(void)
{
    uint8_t has = 7;
    vn_tensor_desc od;
    VT_OK(run1("OptionalHasElement", NULL, 0, NULL, &has, &od));
    VT_CHECK(od.dtype == VN_BOOL && od.rank == 0 && has == 0, "no input: false");
    vn_tensor absent = {{VN_F32, -1, {0}}, NULL};
    has = 7;
    VT_OK(run1("OptionalHasElement", &absent, 1, NULL, &has, &od));
    VT_CHECK(has == 0, "empty input: false");
    float x[2] = {4, 5}, y[2] = {0, 0};
    int64_t d[1] = {2};
    vn_tensor in = {vt_desc(VN_F32, 1, d), x};
    VT_OK(run1("OptionalHasElement", &in, 1, NULL, &has, &od));
    VT_CHECK(has == 1, "a tensor: true");
    VT_OK(run1("OptionalGetElement", &in, 1, NULL, y, &od));
    VT_CHECK(od.rank == 1 && y[0] == 4 && y[1] == 5, "OptionalGetElement copies the tensor");
    VT_CHECK(run1("OptionalGetElement", &absent, 1, NULL, y, &od) == VN_ERR_INVALID_ARG,
             "OptionalGetElement of nothing");
}

static void test_binarizer(void)
{
    float x[5] = {-1, 0.5f, 0.5000001f, 2, NAN}, y[5];
    int64_t d[1] = {5};
    vn_tensor in = {vt_desc(VN_F32, 1, d), x};
    vn_attr t = {.name = "threshold", .type = VN_ATTR_FLOAT, .f = 0.5};
    vn_attrs a = {&t, 1};
    vn_tensor_desc od;
    VT_OK(run1("ai.onnx.ml::Binarizer", &in, 1, &a, y, &od));
    VT_CHECK(y[0] == 0 && y[1] == 0 && y[2] == 1 && y[3] == 1 && y[4] == 0,
             "binarized %g %g %g %g %g", y[0], y[1], y[2], y[3], y[4]);
}

static void test_array_feature_extractor(void)
{
    float x[12];
    for (int i = 0; i < 12; i++) x[i] = (float)i;
    int64_t xd[2] = {3, 4}, id[1] = {3}, idx[3] = {1, -1, 0};
    vn_tensor in[2] = {{vt_desc(VN_F32, 2, xd), x}, {vt_desc(VN_I64, 1, id), idx}};
    float y[9];
    vn_tensor_desc od;
    VT_OK(run1("ai.onnx.ml::ArrayFeatureExtractor", in, 2, NULL, y, &od));
    VT_CHECK(od.rank == 2 && od.dims[0] == 3 && od.dims[1] == 3, "[3, 3]");
    bool ok = true;
    for (int r = 0; r < 3; r++)
        ok &= y[r * 3] == 4 * r + 1 && y[r * 3 + 1] == 4 * r + 3 && y[r * 3 + 2] == 4 * r;
    VT_CHECK(ok, "rows picked");
    int64_t x1d[1] = {4};
    in[0].desc = vt_desc(VN_F32, 1, x1d);
    VT_OK(run1("ai.onnx.ml::ArrayFeatureExtractor", in, 2, NULL, y, &od));
    VT_CHECK(od.rank == 2 && od.dims[0] == 1 && od.dims[1] == 3 && y[0] == 1 && y[1] == 3 &&
                 y[2] == 0,
             "1-D X gives [1, n]");
    idx[0] = 4;
    VT_CHECK(run1("ai.onnx.ml::ArrayFeatureExtractor", in, 2, NULL, y, &od) == VN_ERR_INVALID_ARG,
             "index 4 of 4");
    VT_CONTAINS(vn_last_error(), "outside");
}

/* Tree 1: node 0 (x0 <= 1, NaN true) -> leaf 0 | node 1 (x1 in {2, 5}) -> leaf 1 | leaf 2;
 * tree 2: node 2 (x1 > 0) -> leaf 3 | leaf 4. Leaves (weight, target): (10, 0), (20, 1),
 * (30, 1), (1, 0), (2, 1). */
static void tree_ensemble(int64_t aggregate, const float *x, float *y)
{
    static const int64_t feat[3] = {0, 1, 1}, tid[3] = {0, 1, 3}, fid[3] = {1, 2, 4},
                         tleaf[3] = {1, 1, 1}, fleaf[3] = {0, 1, 1}, nan_true[3] = {1, 0, 0},
                         targets[5] = {0, 1, 1, 0, 1}, roots[2] = {0, 2};
    static const uint8_t modes[3] = {0, 6, 3};
    static const float splits[3] = {1, 0, 0}, weights[5] = {10, 20, 30, 1, 2};
    float members[3] = {2, 5, NAN};
    int64_t three = 3, five = 5, xd[2] = {4, 2};
    vn_tensor tm = {vt_desc(VN_U8, 1, &three), (void *)modes},
              ts = {vt_desc(VN_F32, 1, &three), (void *)splits},
              tw = {vt_desc(VN_F32, 1, &five), (void *)weights},
              tmem = {vt_desc(VN_F32, 1, &three), members};
    vn_attr a[15] = {
        {.name = "nodes_modes", .type = VN_ATTR_TENSOR, .t = &tm},
        {.name = "nodes_splits", .type = VN_ATTR_TENSOR, .t = &ts},
        {.name = "leaf_weights", .type = VN_ATTR_TENSOR, .t = &tw},
        {.name = "membership_values", .type = VN_ATTR_TENSOR, .t = &tmem},
        {.name = "nodes_featureids", .type = VN_ATTR_INTS, .ints = feat, .count = 3},
        {.name = "nodes_truenodeids", .type = VN_ATTR_INTS, .ints = tid, .count = 3},
        {.name = "nodes_falsenodeids", .type = VN_ATTR_INTS, .ints = fid, .count = 3},
        {.name = "nodes_trueleafs", .type = VN_ATTR_INTS, .ints = tleaf, .count = 3},
        {.name = "nodes_falseleafs", .type = VN_ATTR_INTS, .ints = fleaf, .count = 3},
        {.name = "nodes_missing_value_tracks_true",
         .type = VN_ATTR_INTS,
         .ints = nan_true,
         .count = 3},
        {.name = "leaf_targetids", .type = VN_ATTR_INTS, .ints = targets, .count = 5},
        {.name = "tree_roots", .type = VN_ATTR_INTS, .ints = roots, .count = 2},
        {.name = "n_targets", .type = VN_ATTR_INT, .i = 2},
        {.name = "aggregate_function", .type = VN_ATTR_INT, .i = aggregate},
    };
    vn_attrs attrs = {a, 14};
    vn_tensor in = {vt_desc(VN_F32, 2, xd), (void *)x};
    vn_tensor_desc od;
    VT_OK(run1("ai.onnx.ml::TreeEnsemble", &in, 1, &attrs, y, &od));
    VT_CHECK(od.rank == 2 && od.dims[0] == 4 && od.dims[1] == 2, "Y is [4, 2]");
}

static bool row_is(const float *y, float a, float b)
{
    return y[0] == a && y[1] == b;
}

static void test_tree_ensemble(void)
{
    const float x[8] = {0.5f, 3, 2, 5, 2, -1, NAN, 7};
    float y[8];
    tree_ensemble(1, x, y); /* sum */
    VT_CHECK(row_is(y, 11, 0) && row_is(y + 2, 1, 20) && row_is(y + 4, 0, 32) &&
                 row_is(y + 6, 11, 0),
             "sum: %g %g | %g %g | %g %g | %g %g", y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]);
    tree_ensemble(0, x, y); /* average over the 2 trees */
    VT_CHECK(row_is(y, 5.5f, 0) && row_is(y + 2, 0.5f, 10) && row_is(y + 4, 0, 16), "average");
    tree_ensemble(3, x, y); /* max; target 1 unreached in row 0 */
    VT_CHECK(row_is(y, 10, -FLT_MAX) && row_is(y + 4, -FLT_MAX, 30), "max");
    tree_ensemble(2, x, y); /* min */
    VT_CHECK(row_is(y, 1, FLT_MAX) && row_is(y + 4, FLT_MAX, 2), "min");
}

int main(void)
{
    VT_RUN(test_bitcast);
    VT_RUN(test_optional);
    VT_RUN(test_binarizer);
    VT_RUN(test_array_feature_extractor);
    VT_RUN(test_tree_ensemble);
    return vt_summary();
}
