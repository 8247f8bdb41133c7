/*
 * test_gather_scatter.c — GatherElements, GatherND (batch_dims),
 * ScatterElements and ScatterND (every reduction, repeated indices,
 * negative indices), against the ONNX spec's loops written out here, and
 * the errors.
 */
#include "test_shape_ops_harness.h"

static void test_gather_elements(void)
{
    int64_t xd[3] = {3, 4, 5}, id[3] = {3, 2, 5};
    for (int32_t axis = -3; axis < 3; axis++) {
        int32_t ax = axis < 0 ? axis + 3 : axis;
        int64_t idd[3] = {id[0], id[1], id[2]};
        idd[ax] = 6; /* along the axis any length */
        vn_tensor in[2] = {th_iota(VN_F32, 3, xd), th_make(VN_I64, 3, idd)}, out[1];
        int64_t n = vn_desc_numel(&in[1].desc), idx[3];
        for (int64_t j = 0; j < n; j++)
            th_set(&in[1], j, (double)((j * 5) % (2 * xd[ax]) - xd[ax]));
        vn_attr a[] = {TH_INT("axis", axis)};
        vn_attrs at = {a, 1};
        VT_OK(th_op("GatherElements", in, 2, false, &at, out, 1));
        bool ok = th_shape_is(&out[0], 3, idd);
        for (int64_t j = 0; j < n && ok; j++) {
            th_unravel(j, 3, idd, idx);
            int64_t v = (int64_t)th_at(&in[1], j);
            idx[ax] = v < 0 ? v + xd[ax] : v;
            ok = th_at(&out[0], j) == th_at(&in[0], th_ravel(3, xd, idx));
        }
        VT_CHECK(ok, "gather_elements axis %d", (int)axis);
        th_free(out, 1);
        th_set(&in[1], 0, 99);
        VT_CHECK(th_op("GatherElements", in, 2, false, &at, out, 1) == VN_ERR_KERNEL,
                 "out of range");
        th_free(out, 1);
        th_free(in, 2);
    }
}

static void test_gather_nd(void)
{
    /* batch_dims 0: data [2,3,4], indices [5,2] -> [5,4] */
    int64_t xd[3] = {2, 3, 4}, id[2] = {5, 2}, od[2] = {5, 4};
    double iv[10] = {0, 0, 1, 2, -1, -1, 0, 1, 1, 0};
    vn_tensor in[2] = {th_iota(VN_I32, 3, xd), th_from(VN_I64, 2, id, iv)}, out[1];
    VT_OK(th_op("GatherND", in, 2, false, NULL, out, 1));
    bool ok = th_shape_is(&out[0], 2, od);
    for (int64_t t = 0; t < 5 && ok; t++) {
        int64_t a = (int64_t)iv[2 * t], b = (int64_t)iv[2 * t + 1];
        a = a < 0 ? a + 2 : a;
        b = b < 0 ? b + 3 : b;
        for (int64_t c = 0; c < 4; c++)
            ok &= th_at(&out[0], t * 4 + c) == th_at(&in[0], (a * 3 + b) * 4 + c);
    }
    VT_CHECK(ok, "gather_nd");
    th_free(out, 1);
    th_free(in + 1, 1);
    /* batch_dims 1: indices [2,1] pick one row per batch -> [2,4] */
    int64_t bd[2] = {2, 1}, bod[2] = {2, 4};
    double bv[2] = {2, 1};
    in[1] = th_from(VN_I32, 2, bd, bv);
    vn_attr a[] = {TH_INT("batch_dims", 1)};
    vn_attrs at = {a, 1};
    VT_OK(th_op("GatherND", in, 2, false, &at, out, 1));
    ok = th_shape_is(&out[0], 2, bod);
    for (int64_t c = 0; c < 4 && ok; c++)
        ok = th_at(&out[0], c) == th_at(&in[0], 2 * 4 + c) &&
             th_at(&out[0], 4 + c) == th_at(&in[0], (3 + 1) * 4 + c);
    VT_CHECK(ok, "gather_nd batch_dims 1");
    th_free(out, 1);
    int64_t bad[2] = {2, 4};
    th_free(in + 1, 1);
    in[1] = th_make(VN_I64, 2, bad);
    VT_CHECK(th_op("GatherND", in, 2, false, NULL, out, 1) == VN_ERR_SHAPE, "k > rank");
    th_free(in, 2);
}

static void test_scatter_elements(void)
{
    static const char *const reds[] = {"none", "add", "mul", "max", "min"};
    int64_t xd[2] = {3, 4}, id[2] = {2, 4};
    double iv[8] = {0, 1, 2, -1, 0, 1, 0, 2}; /* (0, col 0) twice: repeated */
    for (int32_t r = 0; r < 5; r++) {
        vn_tensor in[3] = {th_iota(VN_F32, 2, xd), th_from(VN_I64, 2, id, iv),
                           th_iota(VN_F32, 2, id)};
        for (int64_t j = 0; j < 8; j++) th_set(&in[2], j, 10 + j);
        vn_attr a[] = {TH_INT("axis", 0), TH_STR("reduction", reds[r])};
        vn_attrs at = {a, 2};
        vn_tensor out[1];
        VT_OK(th_op("ScatterElements", in, 3, false, &at, out, 1));
        double want[12];
        for (int64_t i = 0; i < 12; i++) want[i] = th_at(&in[0], i);
        for (int64_t j = 0; j < 8; j++) {
            int64_t row = (int64_t)iv[j] < 0 ? (int64_t)iv[j] + 3 : (int64_t)iv[j],
                    o = row * 4 + j % 4;
            double u = th_at(&in[2], j), *w = &want[o];
            *w = r == 0   ? u
                 : r == 1 ? *w + u
                 : r == 2 ? *w * u
                 : r == 3 ? fmax(*w, u)
                          : fmin(*w, u);
        }
        bool ok = true;
        for (int64_t i = 0; i < 12; i++) ok &= th_at(&out[0], i) == want[i];
        VT_CHECK(ok, "scatter_elements %s", reds[r]);
        th_free(out, 1);
        if (r == 0) {
            in[2].desc.dtype = VN_I32;
            VT_CHECK(th_op("ScatterElements", in, 3, false, &at, out, 1) == VN_ERR_DTYPE,
                     "updates dtype");
        }
        th_free(in, 3);
    }
}

static void test_scatter_nd(void)
{
    /* data [4,3], indices [3,1] rows, updates [3,3] */
    int64_t xd[2] = {4, 3}, id[2] = {3, 1}, ud[2] = {3, 3};
    double iv[3] = {3, 0, -1};
    vn_tensor in[3] = {th_iota(VN_I64, 2, xd), th_from(VN_I64, 2, id, iv), th_iota(VN_I64, 2, ud)};
    for (int64_t j = 0; j < 9; j++) th_set(&in[2], j, 100 + j);
    vn_attr a[] = {TH_STR("reduction", "add")};
    vn_attrs at = {a, 1};
    vn_tensor out[1];
    VT_OK(th_op("ScatterND", in, 3, false, &at, out, 1));
    bool ok = true;
    for (int64_t c = 0; c < 3; c++) {
        ok &=
            th_at(&out[0], 3 * 3 + c) == th_at(&in[0], 9 + c) + 100 + c + 106 + c; /* row 3 twice */
        ok &= th_at(&out[0], c) == th_at(&in[0], c) + 103 + c;
        ok &= th_at(&out[0], 3 + c) == th_at(&in[0], 3 + c);
    }
    VT_CHECK(ok, "scatter_nd add with a repeated row");
    th_free(out, 1);
    in[2].desc.dims[1] = 2;
    VT_CHECK(th_op("ScatterND", in, 3, false, &at, out, 1) == VN_ERR_SHAPE, "updates shape");
    th_free(in, 3);
}

int main(void)
{
    VT_RUN(test_gather_elements);
    VT_RUN(test_gather_nd);
    VT_RUN(test_scatter_elements);
    VT_RUN(test_scatter_nd);
    return vt_summary();
}
