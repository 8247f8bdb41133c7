/*
 * test_logic.c — comparison, logic, bitwise and Where operators with
 * broadcasting, NaN, every dtype they accept, empty tensors and dtype /
 * shape errors, against references computed here.
 */
#include "test_shape_ops_harness.h"

typedef bool (*cmp_fn)(double a, double b);
static bool eq(double a, double b)
{
    return a == b;
}
static bool lt(double a, double b)
{
    return a < b;
}
static bool le(double a, double b)
{
    return a <= b;
}
static bool gt(double a, double b)
{
    return a > b;
}
static bool ge(double a, double b)
{
    return a >= b;
}
static bool land(double a, double b)
{
    return a != 0 && b != 0;
}
static bool lor(double a, double b)
{
    return a != 0 || b != 0;
}
static bool lxor(double a, double b)
{
    return (a != 0) != (b != 0);
}

/* Broadcast index of output element i into an input of shape d (rank r)
 * right-aligned in the output shape od (rank orank). */
static int64_t bidx(int64_t i, int32_t orank, const int64_t *od, int32_t r, const int64_t *d)
{
    int64_t idx[8], o = 0;
    th_unravel(i, orank, od, idx);
    for (int32_t k = 0; k < r; k++) {
        int64_t v = idx[orank - r + k];
        o = o * d[k] + (d[k] == 1 ? 0 : v);
    }
    return o;
}

static void check_binary(const char *op, cmp_fn f, vn_dtype dt)
{
    int64_t ad[3] = {3, 1, 4}, bd[2] = {5, 1}, od[3] = {3, 5, 4};
    vn_tensor in[2] = {th_iota(dt, 3, ad), th_iota(dt, 2, bd)}, out[1];
    if (dt == VN_F32) th_set(&in[0], 2, NAN);
    for (int64_t i = 0; i < 5; i++)
        th_set(&in[1], i, dt == VN_BOOL ? i % 2 : th_at(&in[0], i * 2 % 12));
    vn_status st = th_op(op, in, 2, false, NULL, out, 1);
    VT_CHECK(st == VN_OK, "%s %s: %s", op, vn_dtype_name(dt), vn_last_error());
    if (st == VN_OK) {
        VT_CHECK(out[0].desc.dtype == VN_BOOL && th_shape_is(&out[0], 3, od), "%s shape", op);
        bool ok = true;
        for (int64_t i = 0; i < 60; i++) {
            double a = th_at(&in[0], bidx(i, 3, od, 3, ad)),
                   b = th_at(&in[1], bidx(i, 3, od, 2, bd));
            ok &= th_at(&out[0], i) == (double)f(a, b);
        }
        VT_CHECK(ok, "%s %s values", op, vn_dtype_name(dt));
        th_free(out, 1);
    }
    th_free(in, 2);
}

static void test_compare(void)
{
    static const char *const ops[] = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"};
    static const cmp_fn fns[] = {eq, lt, le, gt, ge};
    static const vn_dtype dts[] = {VN_F32, VN_F16, VN_BF16, VN_I8, VN_U8, VN_I32, VN_I64};
    for (int32_t o = 0; o < 5; o++)
        for (int32_t d = 0; d < 7; d++) check_binary(ops[o], fns[o], dts[d]);
    check_binary("Equal", eq, VN_BOOL);
    /* i64 beyond 2^53 compares exactly */
    int64_t one = 1, big[1] = {((int64_t)1 << 60) + 1}, big2[1] = {(int64_t)1 << 60};
    vn_tensor in[2] = {th_ints(one, big), th_ints(one, big2)}, out[1];
    VT_OK(th_op("Greater", in, 2, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == 1, "exact i64");
    th_free(out, 1);
    in[1].desc.dtype = VN_I32;
    VT_CHECK(th_op("Equal", in, 2, false, NULL, out, 1) == VN_ERR_DTYPE, "mixed dtypes");
    th_free(in, 2);
}

static void test_logic_ops(void)
{
    check_binary("And", land, VN_BOOL);
    check_binary("Or", lor, VN_BOOL);
    check_binary("Xor", lxor, VN_BOOL);
    int64_t d[2] = {7, 9};
    vn_tensor x = th_iota(VN_BOOL, 2, d), out[1];
    VT_OK(th_op("Not", &x, 1, false, NULL, out, 1));
    bool ok = true;
    for (int64_t i = 0; i < 63; i++) ok &= th_at(&out[0], i) == (th_at(&x, i) == 0);
    VT_CHECK(ok, "not");
    th_free(out, 1);
    th_free(&x, 1);
    x = th_iota(VN_F32, 2, d);
    vn_tensor two[2] = {x, x};
    VT_CHECK(th_op("And", two, 2, false, NULL, out, 1) == VN_ERR_DTYPE, "And on f32");
    th_free(&x, 1);
    int64_t e[2] = {0, 3}, e1[1] = {3};
    vn_tensor em[2] = {th_make(VN_BOOL, 2, e), th_make(VN_BOOL, 1, e1)};
    VT_OK(th_op("Or", em, 2, false, NULL, out, 1));
    VT_CHECK(th_shape_is(&out[0], 2, e), "empty broadcast");
    th_free(out, 1);
    th_free(em, 2);
    /* bitwise on ints */
    double a[3] = {12, -1, 5}, b[3] = {10, 3, -8};
    int64_t n3 = 3;
    vn_tensor bi[2] = {th_from(VN_I32, 1, &n3, a), th_from(VN_I32, 1, &n3, b)};
    VT_OK(th_op("BitwiseAnd", bi, 2, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == 8 && th_at(&out[0], 1) == 3 && th_at(&out[0], 2) == 0, "bitand");
    th_free(out, 1);
    VT_OK(th_op("BitwiseNot", bi, 1, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 0) == -13 && th_at(&out[0], 1) == 0, "bitnot");
    th_free(out, 1);
    th_free(bi, 2);
}

static void test_isnan_isinf(void)
{
    double v[5] = {1, NAN, INFINITY, -INFINITY, 0};
    int64_t n = 5;
    vn_tensor x = th_from(VN_F32, 1, &n, v), out[1];
    VT_OK(th_op("IsNaN", &x, 1, false, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 1) == 1 && th_at(&out[0], 2) == 0, "isnan");
    th_free(out, 1);
    vn_attr a[] = {TH_INT("detect_negative", 0)};
    vn_attrs at = {a, 1};
    VT_OK(th_op("IsInf", &x, 1, false, &at, out, 1));
    VT_CHECK(th_at(&out[0], 2) == 1 && th_at(&out[0], 3) == 0 && th_at(&out[0], 1) == 0, "isinf");
    th_free(out, 1);
    th_free(&x, 1);
}

static void test_where(void)
{
    static const vn_dtype dts[] = {VN_F32, VN_F16, VN_I64, VN_U8, VN_BOOL};
    int64_t cd[2] = {4, 1}, xd[3] = {2, 1, 6}, yd[1] = {6}, od[3] = {2, 4, 6};
    for (int32_t k = 0; k < 5; k++) {
        vn_tensor in[3] = {th_iota(VN_BOOL, 2, cd), th_iota(dts[k], 3, xd), th_iota(dts[k], 1, yd)};
        for (int64_t i = 0; i < 6; i++) th_set(&in[2], i, dts[k] == VN_BOOL ? 1 : 50 + i);
        vn_tensor out[1];
        VT_OK(th_op("Where", in, 3, false, NULL, out, 1));
        VT_CHECK(out[0].desc.dtype == dts[k] && th_shape_is(&out[0], 3, od), "where shape");
        bool ok = true;
        for (int64_t i = 0; i < 48; i++) {
            double c = th_at(&in[0], bidx(i, 3, od, 2, cd));
            double want = c != 0 ? th_at(&in[1], bidx(i, 3, od, 3, xd))
                                 : th_at(&in[2], bidx(i, 3, od, 1, yd));
            ok &= th_at(&out[0], i) == want;
        }
        VT_CHECK(ok, "where %s", vn_dtype_name(dts[k]));
        th_free(out, 1);
        if (k == 0) {
            in[0].desc.dtype = VN_U8;
            VT_CHECK(th_op("Where", in, 3, false, NULL, out, 1) == VN_ERR_DTYPE, "cond u8");
            in[0].desc.dtype = VN_BOOL;
            in[2].desc.dtype = VN_I32;
            VT_CHECK(th_op("Where", in, 3, false, NULL, out, 1) == VN_ERR_DTYPE, "x/y differ");
            in[2].desc.dtype = VN_F32;
            in[2].desc.dims[0] = 5;
            VT_CHECK(th_op("Where", in, 3, false, NULL, out, 1) == VN_ERR_SHAPE, "no broadcast");
            VT_CONTAINS(vn_last_error(), "Where (node 'n1')");
            in[2].desc.dims[0] = 6;
        }
        th_free(in, 3);
    }
    /* large: several blocks, through the public API */
    int64_t big[2] = {512, 1031};
    vn_tensor in[3] = {th_iota(VN_BOOL, 2, big), th_iota(VN_F32, 2, big), th_make(VN_F32, 0, NULL)};
    vn_op_plan *plan;
    vn_tensor_desc d[3] = {in[0].desc, in[1].desc, in[2].desc};
    VT_OK(vn_op_plan_create(NULL, "Where", d, 3, NULL, &plan));
    vn_tensor out = th_make(VN_F32, 2, big);
    VT_OK(vn_op_run(plan, in, 3, &out, 1, NULL));
    bool ok = true;
    for (int64_t i = 0; i < 512 * 1031; i++)
        ok &= th_at(&out, i) == (i % 3 == 0 ? th_at(&in[1], i) : 0.0);
    VT_CHECK(ok, "large where");
    vn_op_plan_destroy(plan);
    th_free(&out, 1);
    th_free(in, 3);
}

int main(void)
{
    VT_RUN(test_compare);
    VT_RUN(test_logic_ops);
    VT_RUN(test_isnan_isinf);
    VT_RUN(test_where);
    return vt_summary();
}
