/*
 * test_reduce_ops.c — every Reduce* operator and ArgMax / ArgMin over random
 * shapes and axis sets (negative axes, keepdims 0 / 1, axes as attribute
 * and as constant input, noop_with_empty_axes), integer dtypes, empty
 * reductions, ties with select_last_index, and the errors, against
 * double-precision references written here.
 */
#include "test_shape_ops_harness.h"

enum { SUM, MEAN, MAX, MIN, PROD, L1, L2, LSE, SSQ, NKIND };
static const char *const names[NKIND] = {"ReduceSum", "ReduceMean",      "ReduceMax",
                                         "ReduceMin", "ReduceProd",      "ReduceL1",
                                         "ReduceL2",  "ReduceLogSumExp", "ReduceSumSquare"};

static double ref_reduce(int kind, const double *v, int64_t n)
{
    double s = kind == PROD  ? 1
               : kind == MAX ? -INFINITY
               : kind == MIN ? INFINITY
                             : 0,
           m = -INFINITY;
    for (int64_t i = 0; i < n; i++) m = fmax(m, v[i]);
    for (int64_t i = 0; i < n; i++) {
        double x = v[i];
        switch (kind) {
        case SUM:
        case MEAN:
            s += x;
            break;
        case MAX:
            s = fmax(s, x);
            break;
        case MIN:
            s = fmin(s, x);
            break;
        case PROD:
            s *= x;
            break;
        case L1:
            s += fabs(x);
            break;
        case L2:
        case SSQ:
            s += x * x;
            break;
        case LSE:
            s += exp(x - m);
            break;
        }
    }
    if (kind == MEAN) return s / (double)n;
    if (kind == L2) return sqrt(s);
    if (kind == LSE) return n ? m + log(s) : -INFINITY;
    return s;
}

static void check(int kind, vn_dtype dt, int32_t rank, const int64_t *xd, const bool *mask,
                  bool keep, bool as_input)
{
    vn_tensor in[2];
    in[0] = th_make(dt, rank, xd);
    vt_rng r = {(uint64_t)(kind * 131 + rank * 7 + 1)};
    int64_t n = vn_desc_numel(&in[0].desc);
    for (int64_t i = 0; i < n; i++)
        th_set(&in[0], i,
               dt == VN_I32 ? (double)(int)vt_uniform(&r, -9, 9) : vt_uniform(&r, -2, 2));
    int64_t axes[8], na = 0;
    for (int32_t d = 0; d < rank; d++)
        if (mask[d]) {
            axes[na] = (na % 2) ? d - rank : d; /* some negative */
            na++;
        }
    vn_attr a[2] = {TH_INT("keepdims", keep), TH_INTS("axes", axes, (int32_t)na)};
    vn_attrs at = {a, as_input || na == 0 ? 1 : 2};
    in[1] = th_ints(na, axes);
    vn_tensor out[1];
    vn_status st = th_op(names[kind], in, as_input && na ? 2 : 1, true, &at, out, 1);
    VT_CHECK(st == VN_OK, "%s: %s", names[kind], vn_last_error());
    if (st != VN_OK) {
        th_free(in, 2);
        return;
    }
    int64_t od[8], orank = 0, kd[8], nk = 0;
    for (int32_t d = 0; d < rank; d++) {
        bool red = na == 0 || mask[d];
        if (!red)
            od[orank++] = xd[d], kd[nk++] = xd[d];
        else if (keep)
            od[orank++] = 1;
    }
    VT_CHECK(th_shape_is(&out[0], (int32_t)orank, od), "%s shape", names[kind]);
    /* group the input elements by output (CSR), then reduce each group */
    int64_t nout = vn_desc_numel(&out[0].desc);
    int64_t *of = malloc((size_t)(n + 1) * sizeof(int64_t)),
            *start = calloc((size_t)(nout + 2), sizeof(int64_t));
    int64_t *order = malloc((size_t)(n + 1) * sizeof(int64_t));
    double *vals = malloc((size_t)(n + 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[8], kidx[8], k = 0;
        th_unravel(i, rank, xd, idx);
        for (int32_t d = 0; d < rank; d++)
            if (!(na == 0 || mask[d])) kidx[k++] = idx[d];
        of[i] = th_ravel((int32_t)nk, kd, kidx);
        start[of[i] + 2]++;
    }
    for (int64_t o = 0; o < nout; o++) start[o + 2] += start[o + 1];
    for (int64_t i = 0; i < n; i++) order[start[of[i] + 1]++] = i;
    bool ok = true;
    for (int64_t o = 0; o < nout && ok; o++) {
        int64_t cnt = 0;
        for (int64_t q = start[o]; q < start[o + 1]; q++) vals[cnt++] = th_at(&in[0], order[q]);
        double want = ref_reduce(kind, vals, cnt), got = th_at(&out[0], o);
        if (dt == VN_I32) want = (double)(int64_t)want; /* truncated like numpy astype */
        double tol = dt == VN_F32 ? 1e-5 : dt == VN_F16 ? 2e-3 : 0;
        ok = got == want || fabs(got - want) <= tol * fabs(want) + tol ||
             (isnan(got) && isnan(want));
        VT_CHECK(ok, "%s %s rank %d at %lld: %g vs %g", names[kind], vn_dtype_name(dt), (int)rank,
                 (long long)o, got, want);
    }
    free(of);
    free(start);
    free(order);
    free(vals);
    th_free(out, 1);
    th_free(in, 2);
}

static void test_reduce_random(void)
{
    vt_rng r = {2024};
    for (int32_t iter = 0; iter < 120; iter++) {
        int32_t rank = 1 + (int32_t)(vt_next(&r) % 4);
        int64_t xd[8];
        bool mask[8];
        for (int32_t d = 0; d < rank; d++) {
            xd[d] = 1 + (int64_t)(vt_next(&r) % 5);
            mask[d] = vt_next(&r) % 2;
        }
        int kind = iter % NKIND;
        vn_dtype dt = iter % 5 == 4 ? VN_F16 : VN_F32;
        if (kind == SUM && iter % 3 == 0) dt = VN_I32;
        check(kind, dt, rank, xd, mask, iter % 2, iter % 3 == 1);
    }
    int64_t big[3] = {64, 129, 67};
    bool m1[3] = {false, true, false}, m2[3] = {false, false, true};
    check(MEAN, VN_F32, 3, big, m1, true, true);
    check(SUM, VN_F32, 3, big, m2, false, false);
}

static void test_reduce_edges(void)
{
    int64_t xd[2] = {3, 4}, zero = 0, ed[2] = {0, 4};
    vn_tensor in[2] = {th_iota(VN_F32, 2, xd), th_ints(0, &zero)}, out[1];
    vn_attr a[] = {TH_INT("noop_with_empty_axes", 1)};
    vn_attrs at = {a, 1};
    VT_OK(th_op("ReduceSum", in, 2, true, &at, out, 1));
    VT_CHECK(th_same(&out[0], &in[0]), "noop with empty axes");
    th_free(out, 1);
    VT_OK(th_op("ReduceMax", in, 2, true, NULL, out, 1));
    VT_CHECK(out[0].desc.rank == 2 && th_at(&out[0], 0) == th_at(&in[0], 11), "empty axes: all");
    th_free(out, 1);
    int64_t ax = 0;
    vn_tensor nin[2] = {in[0], th_ints(1, &ax)};
    VT_CHECK(th_op("ReduceSum", nin, 2, false, NULL, out, 1) == VN_ERR_UNSUPPORTED,
             "axes not constant");
    VT_CONTAINS(vn_last_error(), "axes");
    ax = 2;
    memcpy(nin[1].data, &ax, sizeof ax);
    VT_CHECK(th_op("ReduceSum", nin, 2, true, NULL, out, 1) == VN_ERR_INVALID_ARG, "axis 2");
    th_free(nin + 1, 1);
    th_free(in, 2);
    /* empty reductions: sum 0, prod 1, max -inf, mean NaN */
    vn_tensor e[1] = {th_make(VN_F32, 2, ed)};
    vn_attr a0[] = {TH_INTS("axes", &zero, 1), TH_INT("keepdims", 0)};
    vn_attrs at0 = {a0, 2};
    const char *ops[4] = {"ReduceSum", "ReduceProd", "ReduceMax", "ReduceMean"};
    for (int k = 0; k < 4; k++) {
        VT_OK(th_op(ops[k], e, 1, true, &at0, out, 1));
        double v = th_at(&out[0], 3);
        VT_CHECK(out[0].desc.dims[0] == 4 && (k == 0   ? v == 0
                                              : k == 1 ? v == 1
                                              : k == 2 ? v == -INFINITY
                                                       : isnan(v)),
                 "%s of nothing = %g", ops[k], v);
        th_free(out, 1);
    }
    /* an integer Max of nothing is the type's lowest value */
    e[0].desc.dtype = VN_I32;
    VT_OK(th_op("ReduceMax", e, 1, true, &at0, out, 1));
    VT_CHECK(th_at(&out[0], 0) == -2147483648.0, "i32 max of nothing = %g", th_at(&out[0], 0));
    th_free(out, 1);
    th_free(e, 1);
}

static void test_arg(void)
{
    int64_t xd[2] = {3, 4};
    double v[12] = {1, 5, 5, 2, 7, 7, 7, 0, -1, -3, -3, NAN};
    vn_tensor x = th_from(VN_F32, 2, xd, v), out[1];
    vn_attr a[] = {TH_INT("axis", -1), TH_INT("keepdims", 0), TH_INT("select_last_index", 0)};
    vn_attrs at = {a, 3};
    VT_OK(th_op("ArgMax", &x, 1, false, &at, out, 1));
    VT_CHECK(out[0].desc.dtype == VN_I64 && out[0].desc.rank == 1, "argmax shape");
    VT_CHECK(th_at(&out[0], 0) == 1 && th_at(&out[0], 1) == 0 && th_at(&out[0], 2) == 3,
             "argmax first");
    th_free(out, 1);
    a[2].i = 1;
    VT_OK(th_op("ArgMax", &x, 1, false, &at, out, 1));
    VT_CHECK(th_at(&out[0], 0) == 2 && th_at(&out[0], 1) == 2, "argmax last");
    th_free(out, 1);
    VT_OK(th_op("ArgMin", &x, 1, false, &at, out, 1));
    VT_CHECK(th_at(&out[0], 1) == 3 && th_at(&out[0], 2) == 3, "argmin last (NaN wins)");
    th_free(out, 1);
    vn_attrs at1 = {a + 1, 1}; /* axis 0, keepdims 0 */
    VT_OK(th_op("ArgMin", &x, 1, false, &at1, out, 1));
    int64_t want[1] = {4};
    VT_CHECK(th_shape_is(&out[0], 1, want) && th_at(&out[0], 0) == 2 && th_at(&out[0], 1) == 2,
             "argmin axis 0");
    th_free(out, 1);
    VT_OK(th_op("ArgMax", &x, 1, false, NULL, out, 1));
    int64_t kd[2] = {1, 4};
    VT_CHECK(th_shape_is(&out[0], 2, kd) && th_at(&out[0], 0) == 1, "argmax keepdims");
    th_free(out, 1);
    int64_t ed[2] = {0, 3};
    vn_tensor e = th_make(VN_F32, 2, ed);
    VT_CHECK(th_op("ArgMax", &e, 1, false, NULL, out, 1) == VN_ERR_SHAPE, "argmax over empty");
    th_free(&e, 1);
    th_free(&x, 1);
}

int main(void)
{
    VT_RUN(test_reduce_random);
    VT_RUN(test_reduce_edges);
    VT_RUN(test_arg);
    return vt_summary();
}
