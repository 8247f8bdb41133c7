/*
 * test_gather.c — Gather on every axis (negative too), negative and i32
 * indices, scalar and multi-dim indices, empty indices, out-of-range
 * indices (a kernel error naming the index) and a large case.
 */
#include "test_shape_ops_harness.h"

static void check_gather(vn_dtype dt, int32_t axis, vn_dtype idt, int32_t irank, const int64_t *id)
{
    int64_t xd[3] = {4, 5, 6};
    vn_tensor in[2] = {th_iota(dt, 3, xd), th_make(idt, irank, id)}, out[1];
    int32_t ax = axis < 0 ? axis + 3 : axis;
    int64_t ni = vn_desc_numel(&in[1].desc);
    for (int64_t j = 0; j < ni; j++) th_set(&in[1], j, (double)((j * 7) % (2 * xd[ax])) - xd[ax]);
    vn_attr a[] = {TH_INT("axis", axis)};
    vn_attrs at = {a, 1};
    vn_status st = th_op("Gather", in, 2, false, &at, out, 1);
    VT_CHECK(st == VN_OK, "gather: %s", vn_last_error());
    if (st == VN_OK) {
        int64_t od[8], idx[8], orank = 0;
        for (int32_t d = 0; d < ax; d++) od[orank++] = xd[d];
        for (int32_t d = 0; d < irank; d++) od[orank++] = id[d];
        for (int32_t d = ax + 1; d < 3; d++) od[orank++] = xd[d];
        VT_CHECK(th_shape_is(&out[0], (int32_t)orank, od), "gather shape");
        bool ok = true;
        for (int64_t i = 0; i < vn_desc_numel(&out[0].desc); i++) {
            th_unravel(i, (int32_t)orank, od, idx);
            int64_t src[3], k = 0;
            for (int32_t d = 0; d < ax; d++) src[d] = idx[k++];
            int64_t flat = 0;
            for (int32_t d = 0; d < irank; d++) flat = flat * id[d] + idx[k++];
            int64_t v = (int64_t)th_at(&in[1], flat);
            src[ax] = v < 0 ? v + xd[ax] : v;
            for (int32_t d = ax + 1; d < 3; d++) src[d] = idx[k++];
            ok &= th_at(&out[0], i) == th_at(&in[0], th_ravel(3, xd, src));
        }
        VT_CHECK(ok, "gather %s axis %d values", vn_dtype_name(dt), (int)axis);
        th_free(out, 1);
    }
    th_free(in, 2);
}

static void test_gather(void)
{
    int64_t i2[2] = {2, 3}, i1[1] = {7}, i0[1] = {0};
    for (int32_t axis = -3; axis < 3; axis++) {
        check_gather(VN_F32, axis, VN_I64, 2, i2);
        check_gather(VN_I8, axis, VN_I32, 1, i1);
        check_gather(VN_I64, axis, VN_I64, 0, NULL);
        check_gather(VN_F16, axis, VN_I32, 1, i0);
    }
}

static void test_errors(void)
{
    int64_t xd[2] = {4, 5}, n = 2;
    double bad[2] = {1, 4};
    vn_tensor in[2] = {th_iota(VN_F32, 2, xd), th_from(VN_I64, 1, &n, bad)}, out[1];
    VT_CHECK(th_op("Gather", in, 2, false, NULL, out, 1) == VN_ERR_KERNEL, "index 4 of 4");
    VT_CONTAINS(vn_last_error(), "index 4 at position 1");
    th_free(out, 1);
    bad[1] = -5;
    th_set(&in[1], 1, -5);
    VT_CHECK(th_op("Gather", in, 2, false, NULL, out, 1) == VN_ERR_KERNEL, "index -5 of 4");
    th_free(out, 1);
    in[1].desc.dtype = VN_F32;
    VT_CHECK(th_op("Gather", in, 2, false, NULL, out, 1) == VN_ERR_DTYPE, "float indices");
    in[1].desc.dtype = VN_I64;
    vn_attr a[] = {TH_INT("axis", 2)};
    vn_attrs at = {a, 1};
    VT_CHECK(th_op("Gather", in, 2, false, &at, out, 1) == VN_ERR_INVALID_ARG, "axis 2");
    th_free(in, 2);
}

static void test_large(void)
{
    /* an embedding lookup: [30000, 256] table, [8, 128] token ids */
    int64_t td[2] = {30000, 256}, id[2] = {8, 128};
    vn_tensor in[2] = {th_iota(VN_F32, 2, td), th_make(VN_I64, 2, id)}, out[1];
    for (int64_t j = 0; j < 1024; j++) ((int64_t *)in[1].data)[j] = (j * 7919) % 30000;
    vn_tensor_desc d[2] = {in[0].desc, in[1].desc};
    vn_op_plan *plan;
    VT_OK(vn_op_plan_create(NULL, "Gather", d, 2, NULL, &plan));
    out[0] = th_make(VN_F32, 3, (int64_t[]){8, 128, 256});
    VT_OK(vn_op_run(plan, in, 2, out, 1, NULL));
    bool ok = true;
    for (int64_t q = 0; q < 1024; q++)
        ok &= memcmp((float *)out[0].data + q * 256, (float *)in[0].data + (q * 7919) % 30000 * 256,
                     256 * sizeof(float)) == 0;
    VT_CHECK(ok, "embedding rows");
    vn_op_plan_destroy(plan);
    th_free(out, 1);
    th_free(in, 2);
}

int main(void)
{
    VT_RUN(test_gather);
    VT_RUN(test_errors);
    VT_RUN(test_large);
    return vt_summary();
}
