/*
 * test_select_ops.c — CenterCropPad, Compress, ReverseSequence and EyeLike against
 * references written here from the ONNX specs (index arithmetic per output
 * element), over several dtypes, axes and the errors.
 */
#include "test_shape_ops_harness.h"

static bool same_as(const vn_tensor *y, const double *want, int64_t n)
{
    if (vn_desc_numel(&y->desc) != n) return false;
    for (int64_t i = 0; i < n; i++)
        if (th_at(y, i) != want[i]) return false;
    return true;
}

static void test_center_crop_pad(void)
{
    static const int64_t axes[2] = {-1, 0};
    int64_t xd[3] = {5, 4, 6}, n2 = 2;
    static const int64_t shapes[3][2] = {{3, 2}, {9, 8}, {4, 5}}; /* (W, N) per `axes` */
    for (int32_t dt = 0; dt < 2; dt++)
        for (int32_t s = 0; s < 3; s++) {
            vn_tensor in[2] = {th_iota(dt ? VN_I8 : VN_F32, 3, xd), th_ints(n2, shapes[s])}, out[1];
            vn_attr a[] = {TH_INTS("axes", axes, 2)};
            vn_attrs at = {a, 1};
            VT_OK(th_op("CenterCropPad", in, 2, true, &at, out, 1));
            int64_t od[3] = {shapes[s][1], 4, shapes[s][0]}, n = od[0] * od[1] * od[2];
            double *want = malloc((size_t)n * sizeof *want);
            for (int64_t i = 0; i < n; i++) {
                int64_t o[3] = {i / (od[1] * od[2]), i / od[2] % od[1], i % od[2]}, src = 0;
                bool inside = true;
                for (int32_t d = 0; d < 3; d++) {
                    /* crop drops floor(diff / 2) in front; pad adds floor(diff / 2) */
                    int64_t j =
                        od[d] <= xd[d] ? o[d] + (xd[d] - od[d]) / 2 : o[d] - (od[d] - xd[d]) / 2;
                    inside &= j >= 0 && j < xd[d];
                    src = src * xd[d] + j;
                }
                want[i] = inside ? th_at(&in[0], src) : 0;
            }
            VT_CHECK(same_as(&out[0], want, n) && out[0].desc.dims[0] == od[0] &&
                         out[0].desc.dims[2] == od[2],
                     "center crop/pad case %d dtype %d", (int)s, (int)dt);
            free(want);
            th_free(out, 1);
            th_free(in, 2);
        }
}

static void test_compress(void)
{
    int64_t xd[3] = {3, 4, 2}, c3 = 3;
    vn_tensor x = th_iota(VN_I32, 3, xd);
    double cond[4] = {0, 1, 1, 0};
    for (int32_t axis = -3; axis <= 3; axis++) { /* 3: no axis (flattened) */
        int32_t ax = axis < 0 ? axis + 3 : axis;
        int64_t len = axis == 3 ? 24 : xd[ax], clen = len < 4 ? len : c3;
        vn_tensor in[2] = {x, th_from(VN_BOOL, 1, &clen, cond)}, out[1];
        vn_attr a[] = {TH_INT("axis", axis)};
        vn_attrs at = {a, axis == 3 ? 0 : 1};
        VT_OK(th_op("Compress", in, 2, true, &at, out, 1));
        double want[24];
        int64_t n = 0;
        for (int64_t i = 0; i < 24; i++) {
            int64_t idx[3] = {i / 8, i / 2 % 4, i % 2}, k = axis == 3 ? i : idx[ax];
            if (k < clen && cond[k] != 0) want[n++] = th_at(&x, i);
        }
        VT_CHECK(same_as(&out[0], want, n), "compress axis %d", (int)axis);
        th_free(out, 1);
        th_free(in + 1, 1);
    }
    vn_tensor in[2] = {x, th_from(VN_BOOL, 1, &c3, cond)}, out[1];
    VT_CHECK(th_op("Compress", in, 2, false, NULL, out, 1) == VN_ERR_UNSUPPORTED,
             "condition not constant");
    th_free(in, 2);
}

static void test_reverse_sequence(void)
{
    for (int32_t batch_axis = 0; batch_axis < 2; batch_axis++) {
        int64_t B = 4, T = 5, xd[3] = {0, 0, 3};
        xd[batch_axis] = B, xd[1 - batch_axis] = T;
        static const int64_t lens[4] = {5, 1, 0, 3};
        vn_tensor in[2] = {th_iota(VN_F32, 3, xd), th_ints(B, lens)}, out[1];
        vn_attr a[] = {TH_INT("batch_axis", batch_axis), TH_INT("time_axis", 1 - batch_axis)};
        vn_attrs at = {a, 2};
        VT_OK(th_op("ReverseSequence", in, 2, false, &at, out, 1)); /* lengths read at run time */
        double want[60];
        for (int64_t i = 0; i < 60; i++) {
            int64_t a0 = i / (xd[1] * 3), a1 = (i / 3) % xd[1], e = i % 3;
            int64_t b = batch_axis ? a1 : a0, t = batch_axis ? a0 : a1;
            int64_t s = t < lens[b] ? lens[b] - 1 - t : t;
            int64_t src = batch_axis ? (s * B + b) * 3 + e : (b * T + s) * 3 + e;
            want[i] = th_at(&in[0], src);
        }
        VT_CHECK(same_as(&out[0], want, 60), "reverse sequence batch_axis %d", (int)batch_axis);
        th_free(out, 1);
        ((int64_t *)in[1].data)[2] = 6;
        VT_CHECK(th_op("ReverseSequence", in, 2, false, &at, out, 1) == VN_ERR_INVALID_ARG,
                 "length past the time axis");
        th_free(out, 1);
        th_free(in, 2);
    }
}

static void test_eye_like(void)
{
    int64_t xd[2] = {4, 6};
    for (int32_t k = -5; k <= 7; k += 3)
        for (int32_t dt = 0; dt < 2; dt++) {
            vn_tensor in[1] = {th_iota(dt ? VN_I64 : VN_F32, 2, xd)}, out[1];
            vn_attr a[] = {TH_INT("k", k)};
            vn_attrs at = {a, 1};
            VT_OK(th_op("EyeLike", in, 1, true, &at, out, 1));
            double want[24];
            for (int64_t i = 0; i < 24; i++) want[i] = i % 6 - i / 6 == k;
            VT_CHECK(same_as(&out[0], want, 24) && out[0].desc.dtype == in[0].desc.dtype,
                     "eyelike k %d dtype %d", (int)k, (int)dt);
            th_free(out, 1);
            th_free(in, 1);
        }
}

int main(void)
{
    VT_RUN(test_eye_like);
    VT_RUN(test_center_crop_pad);
    VT_RUN(test_compress);
    VT_RUN(test_reverse_sequence);
    return vt_summary();
}
