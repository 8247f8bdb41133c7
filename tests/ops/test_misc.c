/*
 * test_misc.c — TopK, CumSum, OneHot, Trilu, NonZero and Einsum against
 * references written here from the ONNX specs, with their attributes,
 * negative axes, ties, empty inputs and errors.
 */
#include "test_shape_ops_harness.h"

static void test_topk(void)
{
    int64_t xd[2] = {3, 5}, one = 1, k3 = 3;
    double v[15] = {1, 3, 3, 2, 0, 5, 4, 3, 2, 1, NAN, 1, 7, 7, -1};
    vn_tensor in[2] = {th_from(VN_F32, 2, xd, v), th_ints(one, &k3)}, out[2];
    VT_OK(th_op("TopK", in, 2, true, NULL, out, 2));
    int64_t od[2] = {3, 3};
    VT_CHECK(th_shape_is(&out[0], 2, od) && out[1].desc.dtype == VN_I64, "topk shapes");
    /* row 0: 3 (1), 3 (2), 2 (3); row 2: NaN (0), 7 (2), 7 (3) */
    VT_CHECK(th_at(&out[1], 0) == 1 && th_at(&out[1], 1) == 2 && th_at(&out[1], 2) == 3,
             "ties by index");
    VT_CHECK(th_at(&out[0], 2) == 2 && th_at(&out[0], 3) == 5, "values");
    VT_CHECK(th_at(&out[1], 6) == 0 && th_at(&out[1], 7) == 2 && th_at(&out[1], 8) == 3,
             "NaN largest");
    th_free(out, 2);
    vn_attr a[] = {TH_INT("largest", 0), TH_INT("axis", 0)};
    vn_attrs at = {a, 2};
    int64_t k2 = 2;
    memcpy(in[1].data, &k2, sizeof k2);
    VT_OK(th_op("TopK", in, 2, true, &at, out, 2));
    int64_t od2[2] = {2, 5};
    VT_CHECK(th_shape_is(&out[0], 2, od2) && th_at(&out[1], 0) == 0 && th_at(&out[1], 5) == 1,
             "smallest axis 0");
    VT_CHECK(th_at(&out[0], 4) == -1 && th_at(&out[1], 4) == 2, "smallest values");
    th_free(out, 2);
    int64_t k9 = 9;
    memcpy(in[1].data, &k9, sizeof k9);
    VT_CHECK(th_op("TopK", in, 2, true, NULL, out, 2) == VN_ERR_INVALID_ARG, "k > dim");
    VT_CHECK(th_op("TopK", in, 2, false, NULL, out, 2) == VN_ERR_UNSUPPORTED, "k not constant");
    th_free(in, 2);
}

static void test_cumsum(void)
{
    int64_t xd[2] = {2, 3}, ax = -1;
    double v[6] = {1, 2, 3, 4, 5, 6};
    vn_tensor in[2] = {th_from(VN_F32, 2, xd, v), th_ints(1, &ax)}, out[1];
    static const double want[4][6] = {
        {1, 3, 6, 4, 9, 15}, {0, 1, 3, 0, 4, 9}, {6, 5, 3, 15, 11, 6}, {5, 3, 0, 11, 6, 0}};
    for (int32_t m = 0; m < 4; m++) {
        vn_attr a[] = {TH_INT("exclusive", m & 1), TH_INT("reverse", m >> 1)};
        vn_attrs at = {a, 2};
        VT_OK(th_op("CumSum", in, 2, true, &at, out, 1));
        bool ok = true;
        for (int64_t i = 0; i < 6; i++) ok &= th_at(&out[0], i) == want[m][i];
        VT_CHECK(ok, "cumsum mode %d", (int)m);
        th_free(out, 1);
    }
    int64_t ax0 = 0;
    memcpy(in[1].data, &ax0, sizeof ax0);
    in[0].desc.dtype = VN_I32;
    for (int64_t i = 0; i < 6; i++) th_set(&in[0], i, v[i]);
    VT_OK(th_op("CumSum", in, 2, true, NULL, out, 1));
    VT_CHECK(th_at(&out[0], 3) == 5 && th_at(&out[0], 5) == 9, "cumsum i32 axis 0");
    th_free(out, 1);
    VT_CHECK(th_op("CumSum", in, 2, false, NULL, out, 1) == VN_ERR_UNSUPPORTED,
             "axis not constant");
    th_free(in, 2);
}

static void test_onehot(void)
{
    int64_t id[2] = {2, 2}, n2 = 2;
    double iv[4] = {0, -1, 3, 5}, depth = 4, vals[2] = {-2, 7};
    vn_tensor in[3] = {th_from(VN_I64, 2, id, iv), th_from(VN_I64, 0, NULL, &depth),
                       th_from(VN_F32, 1, &n2, vals)};
    vn_tensor out[1];
    for (int32_t axis = -3; axis < 3; axis++) {
        vn_attr a[] = {TH_INT("axis", axis)};
        vn_attrs at = {a, 1};
        VT_OK(th_op("OneHot", in, 3, true, &at, out, 1));
        int32_t ax = axis < 0 ? axis + 3 : axis;
        int64_t od[3], idx[3];
        for (int32_t d = 0, k = 0; d < 3; d++) od[d] = d == ax ? 4 : id[k++];
        bool ok = th_shape_is(&out[0], 3, od) && out[0].desc.dtype == VN_F32;
        for (int64_t i = 0; i < 16 && ok; i++) {
            th_unravel(i, 3, od, idx);
            int64_t pos[2], k = 0;
            for (int32_t d = 0; d < 3; d++)
                if (d != ax) pos[k++] = idx[d];
            int64_t hot = (int64_t)iv[pos[0] * 2 + pos[1]];
            hot = hot < 0 ? hot + 4 : hot;
            ok = th_at(&out[0], i) == (idx[ax] == hot ? 7 : -2);
        }
        VT_CHECK(ok, "onehot axis %d", (int)axis);
        th_free(out, 1);
    }
    VT_CHECK(th_op("OneHot", in, 3, false, NULL, out, 1) == VN_ERR_UNSUPPORTED,
             "depth not constant");
    th_free(in, 3);
}

static void test_trilu(void)
{
    int64_t xd[3] = {2, 3, 4};
    for (int32_t upper = 0; upper < 2; upper++)
        for (int64_t k = -2; k <= 2; k++) {
            double kv = (double)k;
            vn_tensor in[2] = {th_iota(VN_F16, 3, xd), th_from(VN_I64, 0, NULL, &kv)}, out[1];
            vn_attr a[] = {TH_INT("upper", upper)};
            vn_attrs at = {a, 1};
            VT_OK(th_op("Trilu", in, 2, false, &at, out, 1));
            bool ok = true;
            for (int64_t i = 0; i < 24; i++) {
                int64_t r = i / 4 % 3, c = i % 4;
                bool keep = upper ? c - r >= k : c - r <= k;
                ok &= th_at(&out[0], i) == (keep ? th_at(&in[0], i) : 0);
            }
            VT_CHECK(ok, "trilu upper %d k %lld", (int)upper, (long long)k);
            th_free(out, 1);
            th_free(in, 2);
        }
    int64_t one = 3;
    vn_tensor v = th_make(VN_F32, 1, &one), out[1];
    VT_CHECK(th_op("Trilu", &v, 1, false, NULL, out, 1) == VN_ERR_SHAPE, "rank 1");
    th_free(&v, 1);
}

static void test_nonzero(void)
{
    int64_t xd[2] = {2, 3};
    double v[6] = {0, 1, 0, 2, 0, -3};
    vn_tensor x = th_from(VN_F32, 2, xd, v), out[1];
    VT_OK(th_op("NonZero", &x, 1, true, NULL, out, 1));
    int64_t od[2] = {2, 3};
    VT_CHECK(th_shape_is(&out[0], 2, od), "nonzero shape");
    double want[6] = {0, 1, 1, 1, 0, 2};
    bool ok = true;
    for (int64_t i = 0; i < 6; i++) ok &= th_at(&out[0], i) == want[i];
    VT_CHECK(ok, "nonzero values");
    th_free(out, 1);
    VT_CHECK(th_op("NonZero", &x, 1, false, NULL, out, 1) == VN_ERR_UNSUPPORTED, "not constant");
    th_free(&x, 1);
}

static void check_einsum(const char *eq, int32_t n, vn_tensor *in, int32_t orank, const int64_t *od,
                         const double *want)
{
    vn_attr a[] = {TH_STR("equation", eq)};
    vn_attrs at = {a, 1};
    vn_tensor out[1];
    vn_status st = th_op("Einsum", in, n, false, &at, out, 1);
    VT_CHECK(st == VN_OK, "einsum %s: %s", eq, vn_last_error());
    if (st != VN_OK) return;
    bool ok = th_shape_is(&out[0], orank, od);
    for (int64_t i = 0; i < vn_desc_numel(&out[0].desc) && ok; i++)
        ok = fabs(th_at(&out[0], i) - want[i]) <= 1e-5 * fabs(want[i]) + 1e-6;
    VT_CHECK(ok, "einsum %s values", eq);
    th_free(out, 1);
}

static void test_einsum(void)
{
    int64_t ad[3] = {2, 3, 4}, bd[3] = {2, 4, 5};
    vn_tensor ab[2] = {th_iota(VN_F32, 3, ad), th_iota(VN_F32, 3, bd)};
    double mm[40], tr[24], sq[3];
    for (int64_t b = 0; b < 2; b++)
        for (int64_t i = 0; i < 3; i++)
            for (int64_t k = 0; k < 5; k++) {
                double s = 0;
                for (int64_t j = 0; j < 4; j++)
                    s += th_at(&ab[0], (b * 3 + i) * 4 + j) * th_at(&ab[1], (b * 4 + j) * 5 + k);
                mm[(b * 3 + i) * 5 + k] = s;
            }
    int64_t mmd[3] = {2, 3, 5}, trd[3] = {4, 3, 2}, sqd[1] = {3};
    check_einsum("bij,bjk->bik", 2, ab, 3, mmd, mm);
    check_einsum("...ij,...jk", 2, ab, 3, mmd, mm);
    for (int64_t i = 0; i < 24; i++) {
        int64_t b = i % 2, r = i / 2 % 3, c = i / 6;
        tr[i] = th_at(&ab[0], (b * 3 + r) * 4 + c);
    }
    check_einsum("bij->jib", 1, ab, 3, trd, tr);
    for (int64_t i = 0; i < 3; i++) {
        sq[i] = 0;
        for (int64_t b = 0; b < 2; b++)
            for (int64_t j = 0; j < 4; j++) sq[i] += th_at(&ab[0], (b * 3 + i) * 4 + j);
    }
    check_einsum("bij->i", 1, ab, 1, sqd, sq);
    int64_t md[2] = {3, 3};
    vn_tensor m = th_iota(VN_F32, 2, md);
    double trace = th_at(&m, 0) + th_at(&m, 4) + th_at(&m, 8),
           diag[3] = {th_at(&m, 0), th_at(&m, 4), th_at(&m, 8)};
    check_einsum("ii", 1, &m, 0, NULL, &trace);
    check_einsum("ii->i", 1, &m, 1, sqd, diag);
    vn_attr a[] = {TH_STR("equation", "ij,jk->ik")};
    vn_attrs at = {a, 1};
    vn_tensor out[1];
    VT_CHECK(th_op("Einsum", ab, 2, false, &at, out, 1) == VN_ERR_INVALID_ARG, "rank mismatch");
    a[0].s = "bij,bik->bjk"; /* i is 3 in one, 4 in the other */
    VT_CHECK(th_op("Einsum", ab, 2, false, &at, out, 1) == VN_ERR_SHAPE, "size mismatch");
    th_free(&m, 1);
    th_free(ab, 2);
}

int main(void)
{
    VT_RUN(test_topk);
    VT_RUN(test_cumsum);
    VT_RUN(test_onehot);
    VT_RUN(test_trilu);
    VT_RUN(test_nonzero);
    VT_RUN(test_einsum);
    return vt_summary();
}
