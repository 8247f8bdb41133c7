/*
 * test_matmul.c — MatMul and vinci::FusedMatMul against a double reference
 * written here (not the operator's layout code): 1-D operands, batch
 * broadcasting (stride-0 batches, batches folded into M, outer launch
 * loops), bf16, every activation with bias and residual in both orders,
 * empty dims, pre-packed B bit-identical to the unpacked run, and errors.
 *
 * f32 bound: |y - ref| <= (K + 4) * 2^-23 * sum_k |a b| + 1e-6 (f32
 * accumulation), plus 2e-6 * (1 + |ref|) after an activation (the ISA's
 * erf / tanh / exp approximations). bf16 (inputs rounded to bf16 first, so
 * the reference sees the same values): the f32 bound plus 2^-8 |ref| for
 * the bf16 output rounding.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/matmul.h"
#include "vinci/ops.h"
#include "vt.h"

typedef struct shape {
    int32_t rank;
    int64_t dims[6];
} shape;

static vn_tensor_desc desc_of(vn_dtype dt, shape s)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dt;
    d.rank = s.rank;
    for (int32_t i = 0; i < s.rank; i++) d.dims[i] = s.dims[i];
    return d;
}

static const vn_tensor_desc omitted = {VN_F32, -1, {0}};

/* Random values of `dt` (bf16: rounded, so `ref` holds exactly the input). */
static void *make_data(vt_rng *r, vn_dtype dt, int64_t n, double *ref)
{
    void *p = malloc((size_t)(n > 0 ? n : 1) * vn_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) {
        float v = (float)vt_uniform(r, -1.0, 1.0);
        if (dt == VN_BF16) {
            ((uint16_t *)p)[i] = vn_f32_to_bf16(v);
            v = vn_bf16_to_f32(((uint16_t *)p)[i]);
        } else {
            ((float *)p)[i] = v;
        }
        ref[i] = v;
    }
    return p;
}

static double value_at(vn_dtype dt, const void *p, int64_t i)
{
    return dt == VN_BF16 ? vn_bf16_to_f32(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

/* ---- the reference ------------------------------------------------------------- */

/* Element offset of batch index `idx` (output batch rank `br`) in an operand
 * with `rank` dims of which the last `mat` are the matrix. */
static int64_t batch_offset(const vn_tensor_desc *t, int32_t mat, const int64_t *idx, int32_t br)
{
    int32_t tb = t->rank - mat;
    int64_t off = 0, step = 1;
    for (int32_t d = t->rank - 1; d >= tb; d--) step *= t->dims[d];
    for (int32_t k = tb - 1; k >= 0; k--) {
        int64_t i = t->dims[k] == 1 ? 0 : idx[br - tb + k];
        off += i * step;
        step *= t->dims[k];
    }
    return off;
}

typedef struct ref_out {
    double *y, *mag; /* value and sum_k |a b| per output element */
    int64_t K;
    double *extra; /* more tolerance per element, or NULL */
} ref_out;

/* numpy matmul of A (ta: last two dims swapped) and B (tb likewise). */
static void ref_matmul(const vn_tensor_desc *ad, const double *a, const vn_tensor_desc *bd,
                       const double *b, bool ta, bool tb, const vn_tensor_desc *yd, ref_out *o)
{
    int32_t am = ad->rank > 1 ? 2 : 1, bm = bd->rank > 1 ? 2 : 1;
    int64_t ar = am == 2 ? ad->dims[ad->rank - 2] : 1, ac = ad->dims[ad->rank - 1];
    int64_t br_ = bm == 2 ? bd->dims[bd->rank - 2] : bd->dims[0],
            bc = bm == 2 ? bd->dims[bd->rank - 1] : 1;
    ta &= am == 2, tb &= bm == 2;
    int64_t M = ta ? ac : ar, K = ta ? ar : ac, N = tb ? br_ : bc;
    int32_t brank = yd->rank - (am == 2) - (bm == 2);
    int64_t nb = 1, idx[8] = {0};
    for (int32_t d = 0; d < brank; d++) nb *= yd->dims[d];
    o->K = K;
    for (int64_t t = 0; t < nb; t++) {
        int64_t rem = t;
        for (int32_t d = brank - 1; d >= 0; d--) idx[d] = rem % yd->dims[d], rem /= yd->dims[d];
        const double *pa = a + batch_offset(ad, am, idx, brank);
        const double *pb = b + batch_offset(bd, bm, idx, brank);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0, m = 0;
                for (int64_t k = 0; k < K; k++) {
                    double x = ta ? pa[k * ac + i] : pa[i * ac + k];
                    double w = tb ? pb[j * bc + k] : pb[k * bc + j];
                    s += x * w, m += fabs(x * w);
                }
                o->y[(t * M + i) * N + j] = s;
                o->mag[(t * M + i) * N + j] = m;
            }
    }
}

/* ---- running an operator ------------------------------------------------------- */

typedef struct op_case {
    const char *op;
    vn_tensor in[4];
    int32_t n;
    const vn_attrs *attrs;
    const void *const_b; /* pack input 1 at plan time */
} op_case;

/* Plan and run; *y gets the output (malloc'ed), *yd its descriptor. */
static vn_status run_case(const op_case *c, vn_tensor_desc *yd, void **y)
{
    vn_tensor_desc in[4];
    for (int32_t i = 0; i < c->n; i++) in[i] = c->in[i].desc;
    vn_op_plan *plan = NULL;
    vn_status st = c->const_b ? vn_matmul_plan_create_const_b(NULL, c->op, in, c->n, c->attrs,
                                                              c->const_b, &plan)
                              : vn_op_plan_create(NULL, c->op, in, c->n, c->attrs, &plan);
    *y = NULL;
    if (st != VN_OK) return st;
    *yd = *vn_op_plan_output(plan, 0);
    int64_t n = vn_desc_numel(yd);
    *y = calloc((size_t)(n > 0 ? n : 1), vn_dtype_size(yd->dtype));
    size_t wsz = vn_op_plan_workspace(plan);
    void *ws = wsz ? vn_aligned_alloc(wsz, 64) : NULL;
    vn_tensor out = {*yd, *y};
    st = vn_op_run(plan, c->in, c->n, &out, 1, ws);
    vn_aligned_free(ws);
    vn_op_plan_destroy(plan);
    return st;
}

static int64_t numel_of(shape s)
{
    int64_t n = 1;
    for (int32_t i = 0; i < s.rank; i++) n *= s.dims[i];
    return n;
}

/* ---- activations ----------------------------------------------------------------- */

static double act_ref(const char *act, double v, double lo, double hi)
{
    if (!act || !act[0]) return v;
    if (!strcmp(act, "Relu")) return v > 0 ? v : 0;
    if (!strcmp(act, "Clip")) return v < lo ? lo : (v > hi ? hi : v);
    if (!strcmp(act, "Gelu")) return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    if (!strcmp(act, "GeluTanh"))
        return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    if (!strcmp(act, "Sigmoid")) return 1 / (1 + exp(-v));
    return v / (1 + exp(-v)); /* Silu */
}

/* Compare y against ref (after `post`, applied by the caller into ref.y). */
static void check_close(const char *what, vn_dtype dt, const void *y, const ref_out *r, int64_t n,
                        double act_tol)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double got = value_at(dt, y, i), want = r->y[i];
        double tol = (double)(r->K + 4) * ldexp(1.0, -23) * r->mag[i] + 1e-6 +
                     act_tol * (1 + fabs(want)) + (dt == VN_BF16 ? ldexp(fabs(want), -8) : 0);
        if (r->extra) tol += r->extra[i];
        if (!(fabs(got - want) <= tol)) {
            if (bad++ < 3)
                VT_CHECK(0, "%s: element %lld is %.9g, want %.9g (tol %.3g)", what, (long long)i,
                         got, want, tol);
        }
    }
    VT_CHECK(bad == 0, "%s: %lld of %lld elements out of bounds", what, (long long)bad,
             (long long)n);
}

/* ---- MatMul shapes ------------------------------------------------------------------ */

typedef struct mm_case {
    shape a, b, y;
} mm_case;

static void run_matmul_case(vt_rng *r, vn_dtype dt, const mm_case *mc)
{
    int64_t na = numel_of(mc->a), nb = numel_of(mc->b), ny = numel_of(mc->y);
    double *ra = malloc(sizeof(double) * (size_t)(na + 1)),
           *rb = malloc(sizeof(double) * (size_t)(nb + 1));
    ref_out ro = {calloc((size_t)ny + 1, sizeof(double)), calloc((size_t)ny + 1, sizeof(double)), 0,
                  NULL};
    op_case c = {"MatMul",
                 {{desc_of(dt, mc->a), make_data(r, dt, na, ra)},
                  {desc_of(dt, mc->b), make_data(r, dt, nb, rb)}},
                 2,
                 NULL,
                 NULL};
    vn_tensor_desc yd;
    void *y;
    char what[160], s1[64], s2[64];
    snprintf(what, sizeof what, "MatMul %s x %s", vn_desc_format(&c.in[0].desc, s1, sizeof s1),
             vn_desc_format(&c.in[1].desc, s2, sizeof s2));
    VT_OK(run_case(&c, &yd, &y));
    vn_tensor_desc want = desc_of(dt, mc->y);
    bool same = yd.rank == want.rank && yd.dtype == dt;
    for (int32_t d = 0; same && d < yd.rank; d++) same = yd.dims[d] == want.dims[d];
    VT_CHECK(same, "%s: output %s", what, vn_desc_format(&yd, s1, sizeof s1));
    if (same && y) {
        ref_matmul(&c.in[0].desc, ra, &c.in[1].desc, rb, false, false, &yd, &ro);
        check_close(what, dt, y, &ro, ny, 0);
    }
    free(y), free(ra), free(rb), free(ro.y), free(ro.mag);
    free(c.in[0].data), free(c.in[1].data);
}

#define S1(a)                                                                                      \
    {                                                                                              \
        1,                                                                                         \
        {                                                                                          \
            a                                                                                      \
        }                                                                                          \
    }
#define S2(a, b)                                                                                   \
    {                                                                                              \
        2,                                                                                         \
        {                                                                                          \
            a, b                                                                                   \
        }                                                                                          \
    }
#define S3(a, b, c)                                                                                \
    {                                                                                              \
        3,                                                                                         \
        {                                                                                          \
            a, b, c                                                                                \
        }                                                                                          \
    }
#define S4(a, b, c, d)                                                                             \
    {                                                                                              \
        4,                                                                                         \
        {                                                                                          \
            a, b, c, d                                                                             \
        }                                                                                          \
    }

static const mm_case shape_cases[] = {
    {S1(7), S1(7), {0, {0}}},             /* 1-D x 1-D: a scalar */
    {S1(5), S2(5, 9), S1(9)},             /* 1-D x 2-D */
    {S1(6), S3(3, 6, 4), S2(3, 4)},       /* 1-D x N-D */
    {S2(8, 5), S1(5), S1(8)},             /* 2-D x 1-D */
    {S4(2, 3, 4, 5), S1(5), S3(2, 3, 4)}, /* N-D x 1-D */
    {S2(1, 1), S2(1, 1), S2(1, 1)},
    {S2(17, 33), S2(33, 9), S2(17, 9)},
    {S2(67, 129), S2(129, 65), S2(67, 65)},
    {S2(1, 300), S2(300, 77), S2(1, 77)},          /* GEMV */
    {S3(3, 13, 11), S2(11, 10), S3(3, 13, 10)},    /* batch folds into M */
    {S4(2, 1, 6, 7), S3(3, 7, 5), S4(2, 3, 6, 5)}, /* both broadcast: outer loop */
    {S3(1, 6, 7), S3(3, 7, 5), S3(3, 6, 5)},       /* A broadcast: stride_a 0 */
    {S4(2, 3, 6, 7), S3(3, 7, 5), S4(2, 3, 6, 5)}, /* B broadcast on the outer dim */
    {S4(2, 1, 6, 7), S4(1, 3, 7, 5), S4(2, 3, 6, 5)},
    {S3(4, 9, 70), S3(4, 70, 33), S3(4, 9, 33)}, /* plain batch */
    {S2(5, 7), S3(4, 7, 6), S3(4, 5, 6)},        /* 2-D A, batched B */
    {S2(1000, 64), S2(64, 129), S2(1000, 129)},
    {S2(31, 1000), S2(1000, 128), S2(31, 128)},
    {S3(2, 127, 255), S3(2, 255, 127), S3(2, 127, 127)},
};

static void test_matmul_shapes(void)
{
    vt_rng r = {0x1234};
    for (size_t i = 0; i < sizeof shape_cases / sizeof shape_cases[0]; i++)
        run_matmul_case(&r, VN_F32, &shape_cases[i]);
}

static void test_matmul_bf16(void)
{
    vt_rng r = {0x777};
    static const mm_case cases[] = {
        {S2(19, 40), S2(40, 21), S2(19, 21)},
        {S4(2, 1, 6, 34), S3(3, 34, 5), S4(2, 3, 6, 5)},
        {S1(33), S2(33, 17), S1(17)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_matmul_case(&r, VN_BF16, &cases[i]);
}

/* ---- FusedMatMul ------------------------------------------------------------------------- */

static const char *const act_names[] = {"", "Relu", "Clip", "Gelu", "GeluTanh", "Sigmoid", "Silu"};

typedef struct fused_opts {
    const char *act;
    bool bias, residual, res_first, trans_b;
    vn_dtype dt;
} fused_opts;

static void run_fused(vt_rng *r, const fused_opts *o)
{
    int64_t B = 2, M = 9, K = 37, N = 19;
    shape sa = S3(B, M, K), sb = o->trans_b ? (shape)S2(N, K) : (shape)S2(K, N), sy = S3(B, M, N);
    double ra[2 * 9 * 37], rb[37 * 19], rbias[19], rres[2 * 9 * 19];
    op_case c = {"vinci::FusedMatMul",
                 {{desc_of(o->dt, sa), make_data(r, o->dt, B * M * K, ra)},
                  {desc_of(o->dt, sb), make_data(r, o->dt, K * N, rb)},
                  {omitted, NULL},
                  {omitted, NULL}},
                 4,
                 NULL,
                 NULL};
    if (o->bias) c.in[2] = (vn_tensor){desc_of(o->dt, (shape)S1(N)), make_data(r, o->dt, N, rbias)};
    if (o->residual)
        c.in[3] = (vn_tensor){desc_of(o->dt, sy), make_data(r, o->dt, B * M * N, rres)};
    vn_attr at[5] = {
        {.name = "activation", .type = VN_ATTR_STRING, .s = o->act},
        {.name = "min", .type = VN_ATTR_FLOAT, .f = -0.25},
        {.name = "max", .type = VN_ATTR_FLOAT, .f = 0.5},
        {.name = "transB", .type = VN_ATTR_INT, .i = o->trans_b},
        {.name = "residual_before_activation", .type = VN_ATTR_INT, .i = o->res_first}};
    vn_attrs attrs = {at, 5};
    c.attrs = &attrs;
    vn_tensor_desc yd;
    void *y;
    VT_OK(run_case(&c, &yd, &y));
    double ry[2 * 9 * 19], mag[2 * 9 * 19], extra[2 * 9 * 19];
    ref_out ro = {ry, mag, 0, extra};
    ref_matmul(&c.in[0].desc, ra, &c.in[1].desc, rb, false, o->trans_b, &yd, &ro);
    for (int64_t i = 0; i < B * M * N; i++) {
        double v = ry[i] + (o->bias ? rbias[i % N] : 0);
        if (o->residual && o->res_first) v += rres[i];
        v = act_ref(o->act, v, -0.25, 0.5);
        /* a bf16 output is rounded before an Add that follows the activation */
        extra[i] = o->dt == VN_BF16 && o->residual && !o->res_first ? ldexp(fabs(v), -8) : 0;
        if (o->residual && !o->res_first) v += rres[i];
        ry[i] = v;
        mag[i] += (o->bias ? fabs(rbias[i % N]) : 0) + (o->residual ? fabs(rres[i]) : 0);
    }
    char what[128];
    snprintf(what, sizeof what, "FusedMatMul %s act '%s' bias %d residual %d first %d transB %d",
             vn_dtype_name(o->dt), o->act, o->bias, o->residual, o->res_first, o->trans_b);
    if (y) check_close(what, o->dt, y, &ro, B * M * N, o->act[0] ? 2e-6 : 0);
    free(y);
    for (int i = 0; i < 4; i++) free(c.in[i].data);
}

static void test_fused_activations(void)
{
    vt_rng r = {0x42};
    for (size_t a = 0; a < sizeof act_names / sizeof act_names[0]; a++)
        for (int v = 0; v < 6; v++) {
            fused_opts o = {act_names[a], v != 1, v >= 2, v == 3, v == 4 || v == 5, VN_F32};
            run_fused(&r, &o);
        }
    fused_opts ob = {"Gelu", true, true, false, true, VN_BF16};
    run_fused(&r, &ob);
}

/* ---- empty dims ------------------------------------------------------------------------ */

static void test_empty(void)
{
    vt_rng r = {0x5};
    double rb[8];
    float bias[4] = {0.5f, -1.0f, 2.0f, 0.25f};
    /* K = 0: the product is 0, so FusedMatMul gives act(bias) */
    op_case c = {"vinci::FusedMatMul",
                 {{desc_of(VN_F32, (shape)S2(3, 0)), NULL},
                  {desc_of(VN_F32, (shape)S2(0, 4)), NULL},
                  {desc_of(VN_F32, (shape)S1(4)), bias}},
                 3,
                 NULL,
                 NULL};
    vn_attr at = {.name = "activation", .type = VN_ATTR_STRING, .s = "Relu"};
    vn_attrs attrs = {&at, 1};
    c.attrs = &attrs;
    vn_tensor_desc yd;
    void *y;
    VT_OK(run_case(&c, &yd, &y));
    for (int64_t i = 0; y && i < 12; i++)
        VT_CHECK(((float *)y)[i] == (bias[i % 4] > 0 ? bias[i % 4] : 0.0f), "K=0 element %lld",
                 (long long)i);
    free(y);
    c.op = "MatMul", c.n = 2, c.attrs = NULL;
    VT_OK(run_case(&c, &yd, &y));
    for (int64_t i = 0; y && i < 12; i++)
        VT_CHECK(((float *)y)[i] == 0.0f, "K=0 MatMul element %lld", (long long)i);
    VT_CHECK(yd.rank == 2 && yd.dims[0] == 3 && yd.dims[1] == 4, "K=0 shape");
    free(y);
    /* M = 0 and a zero batch: empty outputs of the right shape */
    c.in[0] = (vn_tensor){desc_of(VN_F32, (shape)S2(0, 2)), NULL};
    c.in[1] = (vn_tensor){desc_of(VN_F32, (shape)S2(2, 4)), make_data(&r, VN_F32, 8, rb)};
    VT_OK(run_case(&c, &yd, &y));
    VT_CHECK(yd.rank == 2 && yd.dims[0] == 0 && yd.dims[1] == 4, "M=0 shape");
    free(y);
    c.in[0] = (vn_tensor){desc_of(VN_F32, (shape)S3(0, 3, 2)), NULL};
    VT_OK(run_case(&c, &yd, &y));
    VT_CHECK(yd.rank == 3 && yd.dims[0] == 0 && yd.dims[2] == 4, "batch 0 shape");
    free(y);
    free(c.in[1].data);
}

/* ---- pre-packed B -------------------------------------------------------------------------- */

static void check_prepacked(vt_rng *r, const char *op, shape sa, shape sb, const vn_attrs *attrs)
{
    int64_t na = numel_of(sa), nb = numel_of(sb);
    double *tmp = malloc(sizeof(double) * (size_t)(na + nb));
    op_case c = {op,
                 {{desc_of(VN_F32, sa), make_data(r, VN_F32, na, tmp)},
                  {desc_of(VN_F32, sb), make_data(r, VN_F32, nb, tmp)}},
                 2,
                 attrs,
                 NULL};
    vn_tensor_desc y1d, y2d;
    void *y1, *y2;
    VT_OK(run_case(&c, &y1d, &y1));
    c.const_b = c.in[1].data;
    VT_OK(run_case(&c, &y2d, &y2));
    size_t bytes = (size_t)vn_desc_numel(&y1d) * 4;
    VT_CHECK(y1 && y2 && memcmp(y1, y2, bytes) == 0, "%s: pre-packed B differs from unpacked", op);
    free(y1), free(y2), free(tmp), free(c.in[0].data), free(c.in[1].data);
}

static void test_prepacked(void)
{
    vt_rng r = {0x99};
    check_prepacked(&r, "MatMul", (shape)S3(3, 20, 300), (shape)S2(300, 70), NULL);
    check_prepacked(&r, "MatMul", (shape)S3(2, 20, 33), (shape)S3(2, 33, 17), NULL);
    check_prepacked(&r, "MatMul", (shape)S4(2, 1, 5, 33), (shape)S3(3, 33, 17), NULL);
    check_prepacked(&r, "MatMul", (shape)S2(1, 500), (shape)S2(500, 40), NULL);
    vn_attr at[2] = {{.name = "transB", .type = VN_ATTR_INT, .i = 1},
                     {.name = "activation", .type = VN_ATTR_STRING, .s = "Silu"}};
    vn_attrs attrs = {at, 2};
    check_prepacked(&r, "Gemm", (shape)S2(31, 45), (shape)S2(23, 45), &attrs);
    check_prepacked(&r, "vinci::FusedMatMul", (shape)S3(2, 31, 45), (shape)S2(23, 45), &attrs);
}

/* ---- errors ------------------------------------------------------------------------------ */

static vn_status plan_only(const char *op, const vn_tensor_desc *in, int32_t n, const vn_attrs *at)
{
    vn_op_plan *p = NULL;
    vn_status st = vn_op_plan_create(NULL, op, in, n, at, &p);
    vn_op_plan_destroy(p);
    return st;
}

static void test_errors(void)
{
    vn_tensor_desc in[3] = {desc_of(VN_F32, (shape)S2(2, 3)), desc_of(VN_F32, (shape)S2(4, 5)),
                            desc_of(VN_F32, (shape)S1(5))};
    VT_CHECK(plan_only("MatMul", in, 2, NULL) == VN_ERR_SHAPE, "K mismatch");
    VT_CONTAINS(vn_last_error(), "MatMul");
    VT_CONTAINS(vn_last_error(), "f32[2,3]");
    VT_CONTAINS(vn_last_error(), "f32[4,5]");
    in[0] = desc_of(VN_F32, (shape)S4(2, 3, 4, 4)), in[1] = desc_of(VN_F32, (shape)S3(2, 4, 4));
    VT_CHECK(plan_only("MatMul", in, 2, NULL) == VN_ERR_SHAPE, "batch mismatch");
    VT_CONTAINS(vn_last_error(), "f32[2,3,4,4]");
    VT_CONTAINS(vn_last_error(), "f32[2,4,4]");
    in[0] = desc_of(VN_F16, (shape)S2(2, 3)), in[1] = desc_of(VN_F16, (shape)S2(3, 5));
    VT_CHECK(plan_only("MatMul", in, 2, NULL) == VN_ERR_DTYPE, "f16");
    VT_CONTAINS(vn_last_error(), "MatMul");
    VT_CONTAINS(vn_last_error(), "f16[2,3]");
    in[0] = desc_of(VN_F32, (shape)S2(2, 3)), in[1] = desc_of(VN_BF16, (shape)S2(3, 5));
    VT_CHECK(plan_only("MatMul", in, 2, NULL) == VN_ERR_DTYPE, "mixed dtypes");
    VT_CONTAINS(vn_last_error(), "bf16[3,5]");
    in[0] = desc_of(VN_I32, (shape)S2(2, 3)), in[1] = desc_of(VN_I32, (shape)S2(3, 5));
    VT_CHECK(plan_only("MatMul", in, 2, NULL) == VN_ERR_DTYPE, "i32");
    VT_CONTAINS(vn_last_error(), "MatMul");
    in[0] = desc_of(VN_F32, (shape)S2(2, 3)), in[1] = desc_of(VN_F32, (shape)S2(3, 5));
    VT_CHECK(plan_only("MatMul", in, 3, NULL) == VN_ERR_INVALID_ARG, "3 inputs");
    VT_CONTAINS(vn_last_error(), "MatMul");
    VT_CONTAINS(vn_last_error(), "got 3");
    VT_CHECK(plan_only("MatMul", in, 1, NULL) == VN_ERR_INVALID_ARG, "1 input");
    in[0] = desc_of(VN_F32, (shape){0, {0}});
    VT_CHECK(plan_only("MatMul", in, 2, NULL) == VN_ERR_SHAPE, "scalar operand");
    VT_CONTAINS(vn_last_error(), "f32[]");
    /* FusedMatMul: unknown activation, bad bias and residual shapes */
    in[0] = desc_of(VN_F32, (shape)S2(2, 3));
    vn_attr at = {.name = "activation", .type = VN_ATTR_STRING, .s = "Tanh"};
    vn_attrs attrs = {&at, 1};
    VT_CHECK(plan_only("vinci::FusedMatMul", in, 2, &attrs) == VN_ERR_INVALID_ARG, "activation");
    VT_CONTAINS(vn_last_error(), "vinci::FusedMatMul");
    VT_CONTAINS(vn_last_error(), "Tanh");
    in[2] = desc_of(VN_F32, (shape)S1(4));
    VT_CHECK(plan_only("vinci::FusedMatMul", in, 3, NULL) == VN_ERR_SHAPE, "bias shape");
    VT_CONTAINS(vn_last_error(), "bias f32[4]");
    vn_tensor_desc in4[4] = {in[0], in[1], omitted, desc_of(VN_F32, (shape)S2(2, 4))};
    VT_CHECK(plan_only("vinci::FusedMatMul", in4, 4, NULL) == VN_ERR_SHAPE, "residual shape");
    VT_CONTAINS(vn_last_error(), "residual f32[2,4]");
    VT_CONTAINS(vn_last_error(), "f32[2,5]");
}

int main(void)
{
    VT_RUN(test_matmul_shapes);
    VT_RUN(test_matmul_bf16);
    VT_RUN(test_fused_activations);
    VT_RUN(test_empty);
    VT_RUN(test_prepacked);
    VT_RUN(test_errors);
    return vt_summary();
}
