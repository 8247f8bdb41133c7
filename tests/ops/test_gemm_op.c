/*
 * test_gemm_op.c — Gemm (opset 13) against a double reference: every
 * transA / transB pair with every C broadcast (none, scalar, [1], [N],
 * [1,N], [M,1], [M,N], [1,1]) and several alpha / beta, a larger case, a
 * bf16 case (bf16 C widened by the operator), and the error paths.
 *
 * Bound: |y - ref| <= (K + 4) * 2^-23 * (|alpha| sum_k |a b| + |beta c|) + 1e-6;
 * bf16 adds 2^-8 |ref| for the bf16 output rounding.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vinci/ops.h"
#include "vt.h"

static vn_tensor_desc desc2(vn_dtype dt, int32_t rank, int64_t d0, int64_t d1)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dt, d.rank = rank;
    if (rank == 1) d.dims[0] = d1;
    if (rank == 2) d.dims[0] = d0, d.dims[1] = d1;
    return d;
}

static double get(vn_dtype dt, const void *p, int64_t i)
{
    return dt == VN_BF16 ? vn_bf16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

static void *rand_data(vt_rng *r, vn_dtype dt, int64_t n)
{
    void *p = malloc((size_t)(n > 0 ? n : 1) * vn_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) {
        float v = (float)vt_uniform(r, -1.0, 1.0);
        if (dt == VN_BF16)
            ((uint16_t *)p)[i] = vn_f32_to_bf16(v);
        else
            ((float *)p)[i] = v;
    }
    return p;
}

typedef struct gemm_case {
    int64_t M, N, K;
    bool ta, tb;
    int32_t c_rank; /* -1: no C */
    int64_t c0, c1; /* C's dims (rank 2: c0 x c1; rank 1: c1) */
    double alpha, beta;
    vn_dtype dt;
} gemm_case;

/* Plan and run the case; returns the output (malloc'ed) or NULL. */
static void *run_gemm(const gemm_case *g, vn_tensor *in, int32_t n)
{
    vn_attr at[4] = {{.name = "transA", .type = VN_ATTR_INT, .i = g->ta},
                     {.name = "transB", .type = VN_ATTR_INT, .i = g->tb},
                     {.name = "alpha", .type = VN_ATTR_FLOAT, .f = g->alpha},
                     {.name = "beta", .type = VN_ATTR_FLOAT, .f = g->beta}};
    vn_attrs attrs = {at, 4};
    vn_tensor_desc d[3];
    for (int32_t i = 0; i < n; i++) d[i] = in[i].desc;
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(NULL, "Gemm", d, n, &attrs, &plan);
    VT_CHECK(st == VN_OK, "plan: %s", vn_last_error());
    if (st != VN_OK) return NULL;
    const vn_tensor_desc *yd = vn_op_plan_output(plan, 0);
    VT_CHECK(yd->rank == 2 && yd->dims[0] == g->M && yd->dims[1] == g->N, "output shape");
    void *y = calloc((size_t)(g->M * g->N + 1), vn_dtype_size(g->dt));
    size_t wsz = vn_op_plan_workspace(plan);
    void *ws = wsz ? vn_aligned_alloc(wsz, 64) : NULL;
    vn_tensor out = {*yd, y};
    VT_OK(vn_op_run(plan, in, n, &out, 1, ws));
    vn_aligned_free(ws);
    vn_op_plan_destroy(plan);
    return y;
}

/* C(i, j) under unidirectional broadcasting. */
static double c_at(const gemm_case *g, const void *c, int64_t i, int64_t j)
{
    int64_t cm = g->c_rank == 2 ? g->c0 : 1, cn = g->c_rank >= 1 ? g->c1 : 1;
    return get(g->dt, c, (cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j));
}

static void check_gemm(vt_rng *r, const gemm_case *g)
{
    vn_tensor in[3];
    in[0] = (vn_tensor){g->ta ? desc2(g->dt, 2, g->K, g->M) : desc2(g->dt, 2, g->M, g->K),
                        rand_data(r, g->dt, g->M * g->K)};
    in[1] = (vn_tensor){g->tb ? desc2(g->dt, 2, g->N, g->K) : desc2(g->dt, 2, g->K, g->N),
                        rand_data(r, g->dt, g->K * g->N)};
    int32_t n = g->c_rank >= 0 ? 3 : 2;
    if (n == 3) {
        vn_tensor_desc cd = desc2(g->dt, g->c_rank, g->c0, g->c1);
        in[2] = (vn_tensor){cd, rand_data(r, g->dt, vn_desc_numel(&cd))};
    }
    void *y = run_gemm(g, in, n);
    int64_t bad = 0;
    for (int64_t i = 0; y && i < g->M; i++)
        for (int64_t j = 0; j < g->N; j++) {
            double s = 0, m = 0;
            for (int64_t k = 0; k < g->K; k++) {
                double a = get(g->dt, in[0].data, g->ta ? k * g->M + i : i * g->K + k);
                double b = get(g->dt, in[1].data, g->tb ? j * g->K + k : k * g->N + j);
                s += a * b, m += fabs(a * b);
            }
            double c = n == 3 ? c_at(g, in[2].data, i, j) : 0;
            double want = g->alpha * s + g->beta * c;
            double tol =
                (double)(g->K + 4) * ldexp(1.0, -23) * (fabs(g->alpha) * m + fabs(g->beta * c)) +
                1e-6 + (g->dt == VN_BF16 ? ldexp(fabs(want), -8) : 0);
            double got = get(g->dt, y, i * g->N + j);
            if (!(fabs(got - want) <= tol) && bad++ < 3)
                VT_CHECK(0,
                         "M%lld N%lld K%lld tA%d tB%d C rank %d [%lld,%lld] a%g b%g: (%lld,%lld) "
                         "%.9g want %.9g",
                         (long long)g->M, (long long)g->N, (long long)g->K, g->ta, g->tb, g->c_rank,
                         (long long)g->c0, (long long)g->c1, g->alpha, g->beta, (long long)i,
                         (long long)j, got, want);
        }
    VT_CHECK(bad == 0, "%lld elements out of bounds", (long long)bad);
    free(y);
    for (int32_t i = 0; i < n; i++) free(in[i].data);
}

static void test_gemm_combinations(void)
{
    vt_rng r = {0xabc};
    const int64_t M = 13, N = 21, K = 35;
    const struct {
        int32_t rank;
        int64_t c0, c1;
    } cs[] = {{-1, 0, 0}, {0, 0, 0}, {1, 0, 1}, {1, 0, N},
              {2, 1, N},  {2, M, 1}, {2, M, N}, {2, 1, 1}};
    const double ab[][2] = {{1, 1}, {0.5, -2}, {2, 0}, {0, 1.5}};
    for (int t = 0; t < 4; t++)
        for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++)
            for (size_t a = 0; a < sizeof ab / sizeof ab[0]; a++) {
                gemm_case g = {M,        N,        K,        t & 1,    (t >> 1) & 1, cs[c].rank,
                               cs[c].c0, cs[c].c1, ab[a][0], ab[a][1], VN_F32};
                check_gemm(&r, &g);
            }
}

static void test_gemm_larger(void)
{
    vt_rng r = {0xdef};
    gemm_case g1 = {129, 127, 300, false, true, 1, 0, 127, 1.0, 1.0, VN_F32};
    check_gemm(&r, &g1);
    gemm_case g2 = {67, 65, 255, true, false, 2, 67, 65, 0.75, 0.5, VN_F32};
    check_gemm(&r, &g2);
    gemm_case g3 = {1, 1000, 64, false, false, 1, 0, 1000, 1.0, 1.0, VN_F32}; /* GEMV */
    check_gemm(&r, &g3);
    gemm_case g4 = {37, 29, 70, false, true, 2, 37, 1, 1.0, -1.0, VN_BF16};
    check_gemm(&r, &g4);
}

static vn_status plan_only(const vn_tensor_desc *in, int32_t n, const vn_attrs *attrs)
{
    vn_op_plan *p = NULL;
    vn_status st = vn_op_plan_create(NULL, "Gemm", in, n, attrs, &p);
    vn_op_plan_destroy(p);
    return st;
}

static void test_gemm_errors(void)
{
    vn_tensor_desc in[4] = {desc2(VN_F32, 2, 4, 5), desc2(VN_F32, 2, 6, 7), desc2(VN_F32, 1, 0, 7),
                            desc2(VN_F32, 1, 0, 7)};
    VT_CHECK(plan_only(in, 2, NULL) == VN_ERR_SHAPE, "K mismatch");
    VT_CONTAINS(vn_last_error(), "Gemm");
    VT_CONTAINS(vn_last_error(), "f32[4,5]");
    VT_CONTAINS(vn_last_error(), "f32[6,7]");
    vn_attr ta = {.name = "transA", .type = VN_ATTR_INT, .i = 1};
    vn_attrs attrs = {&ta, 1};
    in[0] = desc2(VN_F32, 2, 6, 4);
    VT_OK(plan_only(in, 3, &attrs)); /* A^T [4,6] x B [6,7] + C [7] */
    in[2] = desc2(VN_F32, 2, 5, 7);
    VT_CHECK(plan_only(in, 3, &attrs) == VN_ERR_SHAPE, "C does not broadcast");
    VT_CONTAINS(vn_last_error(), "C f32[5,7]");
    VT_CONTAINS(vn_last_error(), "[4,7]");
    in[2] = desc2(VN_F32, 1, 0, 7);
    VT_CHECK(plan_only(in, 4, &attrs) == VN_ERR_INVALID_ARG, "4 inputs");
    VT_CONTAINS(vn_last_error(), "Gemm");
    in[0].rank = 3, in[0].dims[2] = 2;
    VT_CHECK(plan_only(in, 2, NULL) == VN_ERR_SHAPE, "3-D A");
    VT_CONTAINS(vn_last_error(), "2-D");
    in[0] = desc2(VN_I8, 2, 6, 4);
    VT_CHECK(plan_only(in, 2, &attrs) == VN_ERR_DTYPE, "i8 Gemm");
    VT_CONTAINS(vn_last_error(), "Gemm");
}

int main(void)
{
    VT_RUN(test_gemm_combinations);
    VT_RUN(test_gemm_larger);
    VT_RUN(test_gemm_errors);
    return vt_summary();
}
