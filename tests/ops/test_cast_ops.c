/*
 * test_cast.c — Cast and CastLike between every pair of vinci dtypes on
 * values every pair represents exactly, then the rounding, truncation,
 * wrapping and bool rules one by one, a large tensor (several blocks) and
 * the errors.
 */
#include "test_shape_ops_harness.h"

static const vn_dtype dts[] = {VN_F32,  VN_F16, VN_BF16, VN_I8,  VN_U8,  VN_I32, VN_I64,
                               VN_BOOL, VN_F64, VN_I16,  VN_U16, VN_U32, VN_U64};
static const int64_t onnx_of[] = {1, 10, 16, 3, 2, 6, 7, 9, 11, 5, 4, 12, 13};
#define NDT ((int32_t)(sizeof dts / sizeof dts[0]))

static vn_status cast_to(vn_tensor *x, int32_t to, vn_tensor *out)
{
    vn_attr a[] = {TH_INT("to", onnx_of[to])};
    vn_attrs at = {a, 1};
    return th_op("Cast", x, 1, false, &at, out, 1);
}

static void test_all_pairs(void)
{
    /* 0..100 and -1..: exact in every dtype but u8 / bool (checked by rule) */
    int64_t n = 7;
    double v[7] = {0, 1, 2, 5, 100, 64, 3};
    for (int32_t f = 0; f < NDT; f++)
        for (int32_t t = 0; t < NDT; t++) {
            vn_tensor x = th_from(dts[f], 1, &n, v), out[1];
            vn_status st = cast_to(&x, t, out);
            VT_CHECK(st == VN_OK, "%s -> %s: %s", vn_dtype_name(dts[f]), vn_dtype_name(dts[t]),
                     vn_last_error());
            if (st == VN_OK) {
                bool ok = out[0].desc.dtype == dts[t];
                for (int64_t i = 0; i < n; i++) {
                    double src = th_at(&x, i), want = dts[t] == VN_BOOL ? (src != 0) : src;
                    ok &= th_at(&out[0], i) == want;
                }
                VT_CHECK(ok, "%s -> %s values", vn_dtype_name(dts[f]), vn_dtype_name(dts[t]));
                th_free(out, 1);
            }
            /* CastLike takes the dtype of its second input */
            vn_tensor like[2] = {x, th_make(dts[t], 0, NULL)};
            VT_OK(th_op("CastLike", like, 2, false, NULL, out, 1));
            VT_CHECK(out[0].desc.dtype == dts[t], "castlike dtype");
            th_free(out, 1);
            th_free(like + 1, 1);
            th_free(&x, 1);
        }
}

static void test_rules(void)
{
    int64_t n = 6;
    double v[6] = {-2.7, 2.7, -0.0, NAN, 300.0, 1.0 + 1.0 / 512};
    vn_tensor x = th_from(VN_F32, 1, &n, v), out[1];
    VT_OK(cast_to(&x, 5, out)); /* -> i32: truncation toward zero */
    VT_CHECK(th_at(&out[0], 0) == -2 && th_at(&out[0], 1) == 2 && th_at(&out[0], 4) == 300,
             "f32->i32");
    th_free(out, 1);
    VT_OK(cast_to(&x, 7, out)); /* -> bool: NaN is true, -0 false */
    VT_CHECK(th_at(&out[0], 2) == 0 && th_at(&out[0], 3) == 1 && th_at(&out[0], 0) == 1,
             "f32->bool");
    th_free(out, 1);
    VT_OK(cast_to(&x, 2, out)); /* -> bf16: nearest even (1 + 2^-9 ties down to 1) */
    VT_CHECK(th_at(&out[0], 5) == 1.0 && isnan(th_at(&out[0], 3)), "f32->bf16");
    th_free(out, 1);
    VT_OK(cast_to(&x, 1, out)); /* -> f16: 1 + 2^-9 is exact */
    VT_CHECK(th_at(&out[0], 5) == 1.0 + 1.0 / 512, "f32->f16");
    th_free(out, 1);
    th_free(&x, 1);
    double iv[3] = {300, -1, 1e12};
    int64_t n3 = 3;
    vn_tensor xi = th_from(VN_I64, 1, &n3, iv);
    VT_OK(cast_to(&xi, 3, out)); /* i64 -> i8 wraps */
    VT_CHECK(th_at(&out[0], 0) == 44 && th_at(&out[0], 1) == -1, "i64->i8");
    th_free(out, 1);
    VT_OK(cast_to(&xi, 4, out)); /* -> u8 wraps */
    VT_CHECK(th_at(&out[0], 1) == 255, "i64->u8");
    th_free(out, 1);
    VT_OK(cast_to(&xi, 0, out));
    VT_CHECK(th_at(&out[0], 2) == (double)(float)1e12, "i64->f32");
    th_free(out, 1);
    th_free(&xi, 1);
    /* errors */
    vn_tensor e = th_make(VN_F32, 1, &n3);
    vn_attr a[] = {TH_INT("to", 8)};
    vn_attrs at = {a, 1};
    VT_CHECK(th_op("Cast", &e, 1, false, &at, out, 1) == VN_ERR_UNSUPPORTED, "to string");
    VT_CONTAINS(vn_last_error(), "'to' = 8");
    VT_CHECK(th_op("Cast", &e, 1, false, NULL, out, 1) == VN_ERR_INVALID_ARG, "no 'to'");
    th_free(&e, 1);
}

static void test_large(void)
{
    int64_t d[2] = {1000, 333};
    vn_tensor x = th_make(VN_F32, 2, d), out[1], back[1];
    vt_rng r = {5};
    for (int64_t i = 0; i < 333000; i++) th_set(&x, i, vt_uniform(&r, -100, 100));
    VT_OK(cast_to(&x, 1, out));
    bool ok = true;
    for (int64_t i = 0; i < 333000; i++)
        ok &= ((uint16_t *)out[0].data)[i] == vn_f32_to_f16(((float *)x.data)[i]);
    VT_CHECK(ok, "f32->f16 large");
    VT_OK(cast_to(out, 6, back)); /* f16 -> i64 */
    ok = true;
    for (int64_t i = 0; i < 333000; i++) ok &= th_at(&back[0], i) == trunc(th_at(&out[0], i));
    VT_CHECK(ok, "f16->i64 large");
    th_free(back, 1);
    th_free(out, 1);
    int64_t e[2] = {0, 4};
    vn_tensor em = th_make(VN_F32, 2, e);
    VT_OK(cast_to(&em, 6, out));
    VT_CHECK(th_shape_is(&out[0], 2, e) && out[0].desc.dtype == VN_I64, "empty");
    th_free(out, 1);
    th_free(&em, 1);
    th_free(&x, 1);
}

int main(void)
{
    VT_RUN(test_all_pairs);
    VT_RUN(test_rules);
    VT_RUN(test_large);
    return vt_summary();
}
