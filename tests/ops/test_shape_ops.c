/*
 * test_shape_ops.c — the data-movement operators (Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity, Dropout, Transpose, DepthToSpace, SpaceToDepth, Slice,
 * Expand, Tile, Pad, Concat, Split, Shape, Size, ConstantOfShape, Range)
 * against index-mapping references written here from the ONNX specs, with
 * negative axes, clamping, empty tensors and the error paths.
 */
#include "test_shape_ops_harness.h"

static const vn_dtype some_dtypes[] = {VN_F32, VN_F16, VN_BF16, VN_I8,
                                       VN_U8,  VN_I32, VN_I64,  VN_BOOL};
#define NUM_SOME ((int)(sizeof some_dtypes / sizeof some_dtypes[0]))

/* ---- reshape family ------------------------------------------------------------------- */

static void test_reshape(void)
{
    int64_t xd[3] = {2, 3, 4}, s1[3] = {4, 0, -1}, e1[3] = {4, 3, 2};
    vn_tensor in[2] = {th_iota(VN_F32, 3, xd), th_ints(3, s1)}, out[1];
    VT_OK(th_op("Reshape", in, 2, true, NULL, out, 1));
    VT_CHECK(th_shape_is(&out[0], 3, e1), "reshape shape");
    for (int64_t i = 0; i < 24; i++)
        VT_CHECK(th_at(&out[0], i) == th_at(&in[0], i), "value %lld", (long long)i);
    th_free(out, 1);
    VT_CHECK(th_op("Reshape", in, 2, false, NULL, out, 1) == VN_ERR_UNSUPPORTED,
             "non-constant shape");
    VT_CONTAINS(vn_last_error(), "shape");
    VT_CONTAINS(vn_last_error(), "Reshape (node 'n1')");
    int64_t bad[3] = {-1, -1, 2}, bad2[2] = {5, 5};
    vn_tensor in2[2] = {in[0], th_ints(3, bad)};
    VT_CHECK(th_op("Reshape", in2, 2, true, NULL, out, 1) == VN_ERR_SHAPE, "two -1");
    th_free(&in2[1], 1);
    in2[1] = th_ints(2, bad2);
    VT_CHECK(th_op("Reshape", in2, 2, true, NULL, out, 1) == VN_ERR_SHAPE, "count");
    th_free(&in2[1], 1);
    /* allowzero: a 0 is a real zero dim */
    int64_t ed[2] = {0, 4}, s3[2] = {4, 0}, e3[2] = {4, 0};
    vn_attr az[] = {TH_INT("allowzero", 1)};
    vn_attrs aza = {az, 1};
    vn_tensor in3[2] = {th_make(VN_F32, 2, ed), th_ints(2, s3)};
    VT_OK(th_op("Reshape", in3, 2, true, &aza, out, 1));
    VT_CHECK(th_shape_is(&out[0], 2, e3), "allowzero shape");
    th_free(out, 1);
    th_free(in3, 2);
    th_free(in, 2);
}

static void test_flatten_squeeze(void)
{
    int64_t xd[3] = {2, 3, 4}, f1[2] = {6, 4}, f0[2] = {1, 24}, f3[2] = {24, 1};
    vn_tensor x = th_iota(VN_I64, 3, xd), out[1];
    vn_attr a[] = {TH_INT("axis", -1)};
    vn_attrs at = {a, 1};
    VT_OK(th_op("Flatten", &x, 1, true, &at, out, 1));
    VT_CHECK(th_shape_is(&out[0], 2, f1) && th_at(&out[0], 23) == th_at(&x, 23), "flatten -1");
    th_free(out, 1);
    a[0].i = 0;
    VT_OK(th_op("Flatten", &x, 1, true, &at, out, 1));
    VT_CHECK(th_shape_is(&out[0], 2, f0), "flatten 0");
    th_free(out, 1);
    a[0].i = 3;
    VT_OK(th_op("Flatten", &x, 1, true, &at, out, 1));
    VT_CHECK(th_shape_is(&out[0], 2, f3), "flatten 3");
    th_free(out, 1);
    a[0].i = 4;
    VT_CHECK(th_op("Flatten", &x, 1, true, &at, out, 1) == VN_ERR_SHAPE, "flatten axis 4");
    th_free(&x, 1);

    int64_t sd[4] = {1, 3, 1, 2}, e_all[2] = {3, 2}, e_m2[3] = {1, 3, 2}, axm2 = -2, ax1 = 1;
    vn_tensor in[2] = {th_iota(VN_F16, 4, sd), th_ints(1, &axm2)};
    VT_OK(th_op("Squeeze", in, 1, true, NULL, out, 1));
    VT_CHECK(th_shape_is(&out[0], 2, e_all) && th_at(&out[0], 5) == th_at(&in[0], 5),
             "squeeze all");
    th_free(out, 1);
    VT_OK(th_op("Squeeze", in, 2, true, NULL, out, 1));
    VT_CHECK(th_shape_is(&out[0], 3, e_m2), "squeeze -2");
    th_free(out, 1);
    memcpy(in[1].data, &ax1, sizeof ax1);
    VT_CHECK(th_op("Squeeze", in, 2, true, NULL, out, 1) == VN_ERR_SHAPE, "squeeze a 3");
    th_free(in, 2);

    int64_t ud[2] = {3, 2}, ue[4] = {1, 3, 2, 1}, uax[2] = {0, -1}, dup[2] = {0, -4};
    vn_attr ua[] = {TH_INTS("axes", uax, 2)};
    vn_attrs uat = {ua, 1};
    vn_tensor u = th_iota(VN_I32, 2, ud);
    VT_OK(th_op("Unsqueeze", &u, 1, true, &uat, out, 1));
    VT_CHECK(th_shape_is(&out[0], 4, ue) && th_at(&out[0], 4) == th_at(&u, 4), "unsqueeze attr");
    th_free(out, 1);
    vn_tensor uin[2] = {u, th_ints(2, dup)};
    VT_CHECK(th_op("Unsqueeze", uin, 2, true, NULL, out, 1) == VN_ERR_INVALID_ARG,
             "duplicate axes");
    th_free(uin, 2);
}

static void test_identity_dropout(void)
{
    int64_t d[2] = {33, 7};
    vn_tensor x = th_iota(VN_BF16, 2, d), out[2];
    VT_OK(th_op("Identity", &x, 1, false, NULL, out, 1));
    VT_CHECK(th_same(&out[0], &x), "identity");
    th_free(out, 1);
    VT_OK(th_op("Dropout", &x, 1, false, NULL, out, 2));
    VT_CHECK(th_same(&out[0], &x), "dropout output");
    VT_CHECK(out[1].desc.dtype == VN_BOOL && th_at(&out[1], 230) == 1.0, "mask true");
    th_free(out, 2);
    double r = 0.5, t = 1;
    vn_tensor in[3] = {x, th_from(VN_F32, 0, NULL, &r), th_from(VN_BOOL, 0, NULL, &t)};
    VT_CHECK(th_op("Dropout", in, 3, true, NULL, out, 2) == VN_ERR_UNSUPPORTED, "training");
    th_free(in, 3);
}

/* ---- Transpose, DepthToSpace, SpaceToDepth ---------------------------------------------- */

static void check_transpose(vn_dtype dt, int32_t rank, const int64_t *dims, const int64_t *perm)
{
    vn_tensor x = th_iota(dt, rank, dims), out[1];
    vn_attr a[] = {TH_INTS("perm", perm, rank)};
    vn_attrs at = {a, 1};
    vn_status st = th_op("Transpose", &x, 1, false, &at, out, 1);
    VT_CHECK(st == VN_OK, "transpose rank %d: %s", (int)rank, vn_last_error());
    if (st != VN_OK) return;
    int64_t od[8], idx[8], src[8];
    for (int32_t d = 0; d < rank; d++) od[d] = dims[perm[d]];
    VT_CHECK(th_shape_is(&out[0], rank, od), "shape");
    bool ok = true;
    for (int64_t i = 0; i < vn_desc_numel(&x.desc) && ok; i++) {
        th_unravel(i, rank, od, idx);
        for (int32_t d = 0; d < rank; d++) src[perm[d]] = idx[d];
        ok = th_at(&out[0], i) == th_at(&x, th_ravel(rank, dims, src));
    }
    VT_CHECK(ok, "transpose %s rank %d values", vn_dtype_name(dt), (int)rank);
    th_free(&x, 1);
    th_free(out, 1);
}

static void test_transpose(void)
{
    vt_rng r = {12345};
    for (int32_t iter = 0; iter < 60; iter++) {
        int32_t rank = 1 + (int32_t)(vt_next(&r) % 5);
        int64_t dims[8], perm[8];
        for (int32_t d = 0; d < rank; d++) {
            dims[d] = 1 + (int64_t)(vt_next(&r) % 5);
            perm[d] = d;
        }
        for (int32_t d = rank - 1; d > 0; d--) {
            int32_t k = (int32_t)(vt_next(&r) % (uint64_t)(d + 1));
            int64_t t = perm[d];
            perm[d] = perm[k];
            perm[k] = t;
        }
        check_transpose(some_dtypes[iter % NUM_SOME], rank, dims, perm);
    }
    int64_t big[3] = {3, 67, 130}, p021[3] = {0, 2, 1}, sq[2] = {130, 67}, p10[2] = {1, 0};
    int64_t p102[3] = {1, 0, 2}, e[2] = {0, 5};
    check_transpose(VN_F32, 3, big, p021); /* the blocked 2-D kernel */
    check_transpose(VN_F16, 3, big, p021);
    check_transpose(VN_I64, 2, sq, p10);
    check_transpose(VN_U8, 3, big, p102);
    check_transpose(VN_F32, 2, e, p10);
    /* default: reversed dims; errors */
    vn_tensor x = th_iota(VN_F32, 3, big), out[1];
    VT_OK(th_op("Transpose", &x, 1, false, NULL, out, 1));
    int64_t rev[3] = {130, 67, 3};
    VT_CHECK(th_shape_is(&out[0], 3, rev) && th_at(&out[0], 1) == th_at(&x, 67 * 130),
             "default perm");
    th_free(out, 1);
    int64_t bad[3] = {0, 0, 1};
    vn_attr a[] = {TH_INTS("perm", bad, 3)};
    vn_attrs at = {a, 1};
    VT_CHECK(th_op("Transpose", &x, 1, false, &at, out, 1) == VN_ERR_INVALID_ARG, "repeated perm");
    a[0].count = 2;
    VT_CHECK(th_op("Transpose", &x, 1, false, &at, out, 1) == VN_ERR_INVALID_ARG, "short perm");
    th_free(&x, 1);
}

static void test_depth_space(void)
{
    const int64_t b = 2, N = 2, C = 8, H = 3, W = 5, Cp = C / (b * b);
    int64_t xd[4] = {N, C, H, W};
    vn_tensor x = th_iota(VN_F32, 4, xd), out[1], back[1];
    for (int32_t m = 0; m < 2; m++) {
        vn_attr a[] = {TH_INT("blocksize", b), TH_STR("mode", m ? "CRD" : "DCR")};
        vn_attrs at = {a, 2};
        VT_OK(th_op("DepthToSpace", &x, 1, false, &at, out, 1));
        int64_t yd[4] = {N, Cp, H * b, W * b}, idx[4];
        VT_CHECK(th_shape_is(&out[0], 4, yd), "d2s shape");
        bool ok = true;
        for (int64_t i = 0; i < vn_desc_numel(&out[0].desc); i++) {
            th_unravel(i, 4, yd, idx);
            int64_t bi = idx[2] % b, bj = idx[3] % b;
            int64_t c = m ? idx[1] * b * b + bi * b + bj : (bi * b + bj) * Cp + idx[1];
            int64_t s[4] = {idx[0], c, idx[2] / b, idx[3] / b};
            ok &= th_at(&out[0], i) == th_at(&x, th_ravel(4, xd, s));
        }
        VT_CHECK(ok, "d2s %s values", m ? "CRD" : "DCR");
        if (m == 0) { /* SpaceToDepth undoes DCR */
            vn_attrs at1 = {a, 1};
            VT_OK(th_op("SpaceToDepth", out, 1, false, &at1, back, 1));
            VT_CHECK(th_same(&back[0], &x), "s2d(d2s(x)) == x");
            th_free(back, 1);
        }
        th_free(out, 1);
    }
    vn_attr a3[] = {TH_INT("blocksize", 3)};
    vn_attrs at3 = {a3, 1};
    VT_CHECK(th_op("DepthToSpace", &x, 1, false, &at3, out, 1) == VN_ERR_SHAPE, "C mod 9");
    VT_CHECK(th_op("SpaceToDepth", &x, 1, false, &at3, out, 1) == VN_ERR_SHAPE, "W mod 3");
    th_free(&x, 1);
}

/* ---- Slice ---------------------------------------------------------------------------------- */

/* The spec's rule, written out independently of the operator. */
static void ref_slice_axis(int64_t dim, int64_t s, int64_t e, int64_t step, int64_t *start,
                           int64_t *len)
{
    s = s < 0 ? s + dim : s;
    e = e < 0 ? e + dim : e;
    if (step > 0) {
        s = s < 0 ? 0 : s > dim ? dim : s;
        e = e < 0 ? 0 : e > dim ? dim : e;
    } else {
        s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
        e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
    }
    *start = s;
    *len = 0;
    for (int64_t i = s; step > 0 ? i < e : i > e; i += step) (*len)++;
}

static void test_slice(void)
{
    vt_rng r = {777};
    int64_t xd[3] = {5, 6, 7};
    vn_tensor x = th_iota(VN_I32, 3, xd), out[1];
    for (int32_t iter = 0; iter < 200; iter++) {
        int64_t n = 1 + (int64_t)(vt_next(&r) % 3), st[3], en[3], ax[3], sp[3];
        int64_t start[3] = {0, 0, 0}, len[3] = {5, 6, 7}, step[3] = {1, 1, 1};
        int32_t perm[3] = {0, 1, 2};
        for (int32_t k = 2; k > 0; k--) {
            int32_t j = (int32_t)(vt_next(&r) % (uint64_t)(k + 1)), t = perm[k];
            perm[k] = perm[j];
            perm[j] = t;
        }
        for (int64_t k = 0; k < n; k++) {
            int32_t a = perm[k];
            ax[k] = (vt_next(&r) & 1) ? a - 3 : a;
            st[k] = (int64_t)(vt_next(&r) % 19) - 9;
            en[k] = (int64_t)(vt_next(&r) % 19) - 9;
            if (vt_next(&r) % 5 == 0) en[k] = (vt_next(&r) & 1) ? INT64_MAX : INT64_MIN;
            sp[k] = (int64_t)(vt_next(&r) % 7) - 3;
            if (sp[k] == 0) sp[k] = 1;
            step[a] = sp[k];
            ref_slice_axis(xd[a], st[k], en[k], sp[k], &start[a], &len[a]);
        }
        vn_tensor in[5] = {x, th_ints(n, st), th_ints(n, en), th_ints(n, ax), th_ints(n, sp)};
        vn_status s = th_op("Slice", in, 5, true, NULL, out, 1);
        VT_CHECK(s == VN_OK, "slice: %s", vn_last_error());
        if (s == VN_OK) {
            VT_CHECK(th_shape_is(&out[0], 3, len), "slice shape iter %d", (int)iter);
            bool ok = true;
            int64_t idx[3], src[3];
            for (int64_t i = 0; i < vn_desc_numel(&out[0].desc) && ok; i++) {
                th_unravel(i, 3, len, idx);
                for (int32_t d = 0; d < 3; d++) src[d] = start[d] + idx[d] * step[d];
                ok = th_at(&out[0], i) == th_at(&x, th_ravel(3, xd, src));
            }
            VT_CHECK(ok, "slice values iter %d", (int)iter);
            th_free(out, 1);
        }
        th_free(in + 1, 4);
    }
    /* opset 1 attributes, default axes; step 0 is an error */
    int64_t s1[2] = {1, -3}, e1[2] = {3, 100}, z = 0, o = 1, e2[2] = {2, 3};
    vn_attr a[] = {TH_INTS("starts", s1, 2), TH_INTS("ends", e1, 2)};
    vn_attrs at = {a, 2};
    VT_OK(th_op("Slice", &x, 1, true, &at, out, 1));
    int64_t want[3] = {2, 3, 7};
    VT_CHECK(th_shape_is(&out[0], 3, want), "attr slice shape");
    VT_CHECK(th_at(&out[0], 0) == th_at(&x, 1 * 42 + 3 * 7), "attr slice value");
    th_free(out, 1);
    vn_tensor in0[5] = {x, th_ints(1, &z), th_ints(1, &o), th_ints(1, &z), th_ints(1, &z)};
    VT_CHECK(th_op("Slice", in0, 5, true, NULL, out, 1) == VN_ERR_INVALID_ARG, "step 0");
    VT_CHECK(th_op("Slice", in0, 3, false, NULL, out, 1) == VN_ERR_UNSUPPORTED, "non-constant");
    th_free(in0 + 1, 4);
    vn_tensor in1[3] = {x, th_ints(1, &z), th_ints(2, e2)};
    VT_CHECK(th_op("Slice", in1, 3, true, NULL, out, 1) == VN_ERR_INVALID_ARG, "lengths differ");
    th_free(in1 + 1, 2);
    th_free(&x, 1);
}

/* ---- Expand, Tile, Pad --------------------------------------------------------------------------
 */

static void test_expand_tile(void)
{
    int64_t xd[2] = {3, 1}, sh[3] = {2, 1, 4}, yd[3] = {2, 3, 4};
    vn_tensor in[2] = {th_iota(VN_F16, 2, xd), th_ints(3, sh)}, out[1];
    VT_OK(th_op("Expand", in, 2, true, NULL, out, 1));
    VT_CHECK(th_shape_is(&out[0], 3, yd), "expand shape");
    bool ok = true;
    for (int64_t i = 0; i < 24; i++) ok &= th_at(&out[0], i) == th_at(&in[0], i / 4 % 3);
    VT_CHECK(ok, "expand values");
    th_free(out, 1);
    int64_t bad[1] = {2};
    th_free(in + 1, 1);
    in[1] = th_ints(1, bad);
    xd[1] = 3;
    in[0].desc.dims[1] = 3; /* [3,3] vs [2] */
    VT_CHECK(th_op("Expand", in, 2, true, NULL, out, 1) == VN_ERR_SHAPE, "expand mismatch");
    th_free(in, 2);

    int64_t td[2] = {2, 3}, rep[2] = {2, 3}, ty[2] = {4, 9}, rep0[2] = {0, 1}, ty0[2] = {0, 3};
    vn_tensor tin[2] = {th_iota(VN_I64, 2, td), th_ints(2, rep)};
    VT_OK(th_op("Tile", tin, 2, true, NULL, out, 1));
    VT_CHECK(th_shape_is(&out[0], 2, ty), "tile shape");
    ok = true;
    for (int64_t i = 0; i < 36; i++)
        ok &= th_at(&out[0], i) == th_at(&tin[0], (i / 9 % 2) * 3 + i % 9 % 3);
    VT_CHECK(ok, "tile values");
    th_free(out, 1);
    memcpy(tin[1].data, rep0, sizeof rep0);
    VT_OK(th_op("Tile", tin, 2, true, NULL, out, 1));
    VT_CHECK(th_shape_is(&out[0], 2, ty0), "tile 0");
    th_free(out, 1);
    VT_CHECK(th_op("Tile", tin, 2, false, NULL, out, 1) == VN_ERR_UNSUPPORTED, "tile non-constant");
    VT_CONTAINS(vn_last_error(), "repeats");
    th_free(tin, 2);
}

static int64_t ref_pad_index(const char *mode, int64_t j, int64_t n)
{
    if (j >= 0 && j < n) return j;
    if (strcmp(mode, "constant") == 0) return -1;
    if (strcmp(mode, "edge") == 0) return j < 0 ? 0 : n - 1;
    if (strcmp(mode, "wrap") == 0) {
        while (j < 0) j += n;
        return j % n;
    }
    while (j < 0 || j >= n) { /* reflect: mirror about the edge elements */
        if (j < 0) j = -j;
        if (j >= n) j = 2 * (n - 1) - j;
        if (n == 1) return 0;
    }
    return j;
}

static void test_pad(void)
{
    static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
    int64_t xd[2] = {3, 4}, pads[4] = {1, 2, 2, -1};
    double cv = 9.5;
    for (int32_t m = 0; m < 4; m++) {
        vn_attr a[] = {TH_STR("mode", modes[m])};
        vn_attrs at = {a, 1};
        vn_tensor in[3] = {th_iota(VN_F32, 2, xd), th_ints(4, pads), th_from(VN_F32, 0, NULL, &cv)};
        vn_tensor out[1];
        VT_OK(th_op("Pad", in, 3, true, &at, out, 1));
        int64_t yd[2] = {6, 5}, idx[2];
        VT_CHECK(th_shape_is(&out[0], 2, yd), "pad shape %s", modes[m]);
        bool ok = true;
        for (int64_t i = 0; i < 30; i++) {
            th_unravel(i, 2, yd, idx);
            int64_t r = ref_pad_index(modes[m], idx[0] - 1, 3),
                    c = ref_pad_index(modes[m], idx[1] - 2, 4);
            double want = r < 0 || c < 0 ? cv : th_at(&in[0], r * 4 + c);
            ok &= th_at(&out[0], i) == want;
        }
        VT_CHECK(ok, "pad values %s", modes[m]);
        th_free(out, 1);
        /* constant value not known at plan time: read at run */
        if (m == 0) {
            VT_CHECK(th_op("Pad", in, 3, false, &at, out, 1) == VN_ERR_UNSUPPORTED,
                     "pads non-constant");
        }
        th_free(in, 3);
    }
    /* axes input (opset 18) and a large reflect on a 1-D tensor */
    int64_t n5 = 5, p2[2] = {7, 9}, axm1 = -1;
    vn_tensor in[4] = {
        th_iota(VN_I8, 1, &n5), th_ints(2, p2), {{VN_I8, -1, {0}}, NULL}, th_ints(1, &axm1)};
    vn_attr a[] = {TH_STR("mode", "reflect")};
    vn_attrs at = {a, 1};
    vn_tensor out[1];
    VT_OK(th_op("Pad", in, 4, true, &at, out, 1));
    bool ok = out[0].desc.dims[0] == 21;
    for (int64_t i = 0; i < 21 && ok; i++)
        ok = th_at(&out[0], i) == th_at(&in[0], ref_pad_index("reflect", i - 7, 5));
    VT_CHECK(ok, "reflect beyond one period");
    th_free(out, 1);
    int64_t crop[2] = {-3, -3};
    memcpy(in[1].data, crop, sizeof crop);
    VT_CHECK(th_op("Pad", in, 4, true, &at, out, 1) == VN_ERR_SHAPE, "crop below 0");
    th_free(in, 2);
    th_free(in + 3, 1);
}

/* ---- Concat, Split ----------------------------------------------------------------------------
 */

static void test_concat_split(void)
{
    int64_t a[3] = {2, 3, 4}, b[3] = {2, 1, 4}, c[3] = {2, 0, 4}, yd[3] = {2, 4, 4};
    vn_tensor in[3] = {th_iota(VN_F32, 3, a), th_iota(VN_F32, 3, b), th_make(VN_F32, 3, c)};
    for (int64_t i = 0; i < 8; i++) th_set(&in[1], i, 100 + i);
    vn_attr at1[] = {TH_INT("axis", -2)};
    vn_attrs at = {at1, 1};
    vn_tensor out[3];
    VT_OK(th_op("Concat", in, 3, false, &at, out, 1));
    VT_CHECK(th_shape_is(&out[0], 3, yd), "concat shape");
    bool ok = true;
    int64_t idx[3];
    for (int64_t i = 0; i < 32; i++) {
        th_unravel(i, 3, yd, idx);
        double want = idx[1] < 3 ? th_at(&in[0], (idx[0] * 3 + idx[1]) * 4 + idx[2])
                                 : th_at(&in[1], idx[0] * 4 + idx[2]);
        ok &= th_at(&out[0], i) == want;
    }
    VT_CHECK(ok, "concat values");
    /* Split it back with a split input */
    int64_t sp[3] = {3, 1, 0};
    vn_tensor sin[2] = {out[0], th_ints(3, sp)}, parts[3];
    vn_attr sa[] = {TH_INT("axis", 1)};
    vn_attrs sat = {sa, 1};
    VT_OK(th_op("Split", sin, 2, true, &sat, parts, 3));
    for (int32_t k = 0; k < 3; k++) VT_CHECK(th_same(&parts[k], &in[k]), "split part %d", (int)k);
    th_free(parts, 3);
    /* num_outputs (opset 18): ceil-sized parts */
    vn_attr na[] = {TH_INT("axis", 1), TH_INT("num_outputs", 3)};
    vn_attrs nat = {na, 2};
    VT_OK(th_op("Split", sin, 1, true, &nat, parts, 3));
    VT_CHECK(parts[0].desc.dims[1] == 2 && parts[1].desc.dims[1] == 2 && parts[2].desc.dims[1] == 0,
             "num_outputs sizes");
    th_free(parts, 3);
    VT_CHECK(th_op("Split", sin, 1, true, &sat, parts, 3) == VN_ERR_UNSUPPORTED, "equal split");
    sp[0] = 2;
    memcpy(sin[1].data, sp, sizeof sp);
    VT_CHECK(th_op("Split", sin, 2, true, &sat, parts, 3) == VN_ERR_SHAPE, "bad sum");
    th_free(sin + 1, 1);
    th_free(out, 1);
    in[1].desc.dtype = VN_I32;
    VT_CHECK(th_op("Concat", in, 2, false, &at, out, 1) == VN_ERR_DTYPE, "dtype mismatch");
    in[1].desc.dtype = VN_F32;
    in[1].desc.dims[0] = 3;
    VT_CHECK(th_op("Concat", in, 2, false, &at, out, 1) == VN_ERR_SHAPE, "shape mismatch");
    VT_CHECK(th_op("Concat", in, 2, false, NULL, out, 1) == VN_ERR_INVALID_ARG, "no axis");
    th_free(in, 3);
}

/* ---- Shape, Size, ConstantOfShape, Range -------------------------------------------------------
 */

static void test_info_ops(void)
{
    int64_t xd[4] = {2, 3, 5, 7};
    vn_tensor x = th_make(VN_F16, 4, xd), out[1];
    VT_OK(th_op("Shape", &x, 1, false, NULL, out, 1));
    VT_CHECK(out[0].desc.dtype == VN_I64 && out[0].desc.dims[0] == 4 && th_at(&out[0], 3) == 7,
             "shape");
    th_free(out, 1);
    vn_attr a[] = {TH_INT("start", -3), TH_INT("end", -1)};
    vn_attrs at = {a, 2};
    VT_OK(th_op("Shape", &x, 1, false, &at, out, 1));
    VT_CHECK(out[0].desc.dims[0] == 2 && th_at(&out[0], 0) == 3 && th_at(&out[0], 1) == 5,
             "shape start/end");
    th_free(out, 1);
    a[0].i = 10;
    VT_OK(th_op("Shape", &x, 1, false, &at, out, 1));
    VT_CHECK(out[0].desc.dims[0] == 0, "shape clamped empty");
    th_free(out, 1);
    VT_OK(th_op("Size", &x, 1, false, NULL, out, 1));
    VT_CHECK(out[0].desc.rank == 0 && th_at(&out[0], 0) == 210, "size");
    th_free(out, 1);
    th_free(&x, 1);

    int64_t sh[2] = {2, 3};
    vn_tensor s = th_ints(2, sh);
    VT_OK(th_op("ConstantOfShape", &s, 1, true, NULL, out, 1));
    VT_CHECK(out[0].desc.dtype == VN_F32 && th_shape_is(&out[0], 2, sh) && th_at(&out[0], 5) == 0,
             "cos default");
    th_free(out, 1);
    int32_t seven = 7;
    vn_tensor val = {{VN_I32, 1, {1}}, &seven};
    vn_attr va[] = {{.name = "value", .type = VN_ATTR_TENSOR, .t = &val}};
    vn_attrs vat = {va, 1};
    VT_OK(th_op("ConstantOfShape", &s, 1, true, &vat, out, 1));
    VT_CHECK(out[0].desc.dtype == VN_I32 && th_at(&out[0], 4) == 7, "cos value");
    th_free(out, 1);
    VT_CHECK(th_op("ConstantOfShape", &s, 1, false, &vat, out, 1) == VN_ERR_UNSUPPORTED,
             "cos non-constant");
    th_free(&s, 1);

    double f[3] = {1, 5, 1.5}, i64[3] = {10, 4, -3}, z[3] = {0, 1, 0};
    vn_tensor rf[3], ri[3], rz[3];
    for (int32_t k = 0; k < 3; k++) {
        rf[k] = th_from(VN_F32, 0, NULL, &f[k]);
        ri[k] = th_from(VN_I64, 0, NULL, &i64[k]);
        rz[k] = th_from(VN_I32, 0, NULL, &z[k]);
    }
    VT_OK(th_op("Range", rf, 3, true, NULL, out, 1));
    VT_CHECK(out[0].desc.dims[0] == 3 && th_at(&out[0], 2) == 4.0, "range f32");
    th_free(out, 1);
    VT_OK(th_op("Range", ri, 3, true, NULL, out, 1));
    VT_CHECK(out[0].desc.dims[0] == 2 && th_at(&out[0], 1) == 7.0, "range i64 descending");
    th_free(out, 1);
    VT_CHECK(th_op("Range", rz, 3, true, NULL, out, 1) == VN_ERR_INVALID_ARG, "delta 0");
    vn_tensor mixed[3] = {rf[0], ri[1], rf[2]};
    VT_CHECK(th_op("Range", mixed, 3, true, NULL, out, 1) == VN_ERR_DTYPE, "mixed dtypes");
    th_free(rf, 3);
    th_free(ri, 3);
    th_free(rz, 3);
}

/* A large transpose and slice through several blocks (multi-core path). */
static void test_large(void)
{
    int64_t xd[3] = {8, 300, 257}, p[3] = {0, 2, 1};
    check_transpose(VN_F32, 3, xd, p);
    int64_t st[1] = {-1}, en[1] = {INT64_MIN}, ax[1] = {1}, sp[1] = {-2};
    vn_tensor in[5] = {th_iota(VN_F32, 3, xd), th_ints(1, st), th_ints(1, en), th_ints(1, ax),
                       th_ints(1, sp)};
    vn_tensor out[1];
    VT_OK(th_op("Slice", in, 5, true, NULL, out, 1));
    bool ok = out[0].desc.dims[1] == 150;
    for (int64_t i = 0; i < 8 * 150 * 257 && ok; i += 13) {
        int64_t b = i / (150 * 257), r = i / 257 % 150, c = i % 257;
        ok = th_at(&out[0], i) == th_at(&in[0], (b * 300 + (299 - 2 * r)) * 257 + c);
    }
    VT_CHECK(ok, "large reverse slice");
    th_free(out, 1);
    th_free(in, 5);
}

int main(void)
{
    VT_RUN(test_reshape);
    VT_RUN(test_flatten_squeeze);
    VT_RUN(test_identity_dropout);
    VT_RUN(test_transpose);
    VT_RUN(test_depth_space);
    VT_RUN(test_slice);
    VT_RUN(test_expand_tile);
    VT_RUN(test_pad);
    VT_RUN(test_concat_split);
    VT_RUN(test_info_ops);
    VT_RUN(test_large);
    return vt_summary();
}
