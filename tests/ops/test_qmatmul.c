/*
 * test_qmatmul.c — MatMulInteger and QLinearMatMul, exact.
 *
 * MatMulInteger: i32 y = sum_k (a - a_zp)(b - b_zp), computed here in int64,
 * for u8/i8 x u8/i8, with and without each zero point, MatMul shapes (1-D,
 * batch broadcast), a uniform per-column b_zero_point, and the refusals
 * (per-row a_zero_point at plan time, non-uniform b_zero_point at run time).
 *
 * QLinearMatMul: the reference does the operator's documented arithmetic,
 * step for step in f32: acc as above (exact i32), v = (float)acc * s where
 * s = a_scale * b_scale (per tensor, an f32 product) or v = ((float)acc *
 * a_scale) * b_scale[j] (per column), then q = nearbyintf(v / y_scale)
 * (round half to even) + y_zp, saturated to the output type. Outputs must
 * match bit for bit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/matmul.h"
#include "vinci/ops.h"
#include "vt.h"

typedef struct shape {
    int32_t rank;
    int64_t dims[4];
} shape;

static vn_tensor_desc desc_of(vn_dtype dt, shape s)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = dt, d.rank = s.rank;
    for (int32_t i = 0; i < s.rank; i++) d.dims[i] = s.dims[i];
    return d;
}

static int64_t numel(shape s)
{
    int64_t n = 1;
    for (int32_t i = 0; i < s.rank; i++) n *= s.dims[i];
    return n;
}

static int32_t q_at(vn_dtype dt, const void *p, int64_t i)
{
    return dt == VN_U8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

static void *rand_q(vt_rng *r, vn_dtype dt, int64_t n)
{
    uint8_t *p = malloc((size_t)(n > 0 ? n : 1));
    for (int64_t i = 0; i < n; i++) p[i] = (uint8_t)(vt_next(r) >> 56);
    (void)dt;
    return p;
}

/* Batch offset in elements of an operand (`mat` trailing matrix dims). */
static int64_t boff(const vn_tensor_desc *t, int32_t mat, const int64_t *idx, int32_t br)
{
    int32_t tb = t->rank - mat;
    int64_t off = 0, step = 1;
    for (int32_t d = t->rank - 1; d >= tb; d--) step *= t->dims[d];
    for (int32_t k = tb - 1; k >= 0; k--) {
        off += (t->dims[k] == 1 ? 0 : idx[br - tb + k]) * step;
        step *= t->dims[k];
    }
    return off;
}

/* acc[t, i, j] = sum_k (a - za)(b - zb[j]) over numpy-matmul shapes. */
static void ref_acc(const vn_tensor *a, const vn_tensor *b, const int32_t *zb, int32_t za,
                    const vn_tensor_desc *yd, int64_t *acc)
{
    int32_t am = a->desc.rank > 1 ? 2 : 1, bm = b->desc.rank > 1 ? 2 : 1;
    int64_t K = a->desc.dims[a->desc.rank - 1];
    int64_t M = am == 2 ? a->desc.dims[a->desc.rank - 2] : 1;
    int64_t N = bm == 2 ? b->desc.dims[b->desc.rank - 1] : 1;
    int32_t br = yd->rank - (am == 2) - (bm == 2);
    int64_t nb = 1, idx[8] = {0};
    for (int32_t d = 0; d < br; d++) nb *= yd->dims[d];
    for (int64_t t = 0; t < nb; t++) {
        int64_t rem = t;
        for (int32_t d = br - 1; d >= 0; d--) idx[d] = rem % yd->dims[d], rem /= yd->dims[d];
        int64_t oa = boff(&a->desc, am, idx, br), ob = boff(&b->desc, bm, idx, br);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int64_t s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (int64_t)(q_at(a->desc.dtype, a->data, oa + i * K + k) - za) *
                         (q_at(b->desc.dtype, b->data, ob + k * N + j) - zb[j]);
                acc[(t * M + i) * N + j] = s;
            }
    }
}

/* Plan (B constant when const_b) and run; output malloc'ed, or NULL. */
static void *run_op(const char *op, const vn_tensor *in, int32_t n, bool const_b, int32_t b_index,
                    vn_tensor_desc *yd, vn_status *run_st)
{
    vn_tensor_desc d[8];
    for (int32_t i = 0; i < n; i++) d[i] = in[i].desc;
    vn_op_plan *plan = NULL;
    vn_status st =
        const_b ? vn_matmul_plan_create_const_b(NULL, op, d, n, NULL, in[b_index].data, &plan)
                : vn_op_plan_create(NULL, op, d, n, NULL, &plan);
    VT_CHECK(st == VN_OK, "%s plan: %s", op, vn_last_error());
    if (st != VN_OK) return NULL;
    *yd = *vn_op_plan_output(plan, 0);
    int64_t ny = vn_desc_numel(yd);
    void *y = calloc((size_t)(ny > 0 ? ny : 1), vn_dtype_size(yd->dtype));
    vn_tensor out = {*yd, y};
    *run_st = vn_op_run(plan, in, n, &out, 1, NULL);
    vn_op_plan_destroy(plan);
    return y;
}

/* ---- MatMulInteger ------------------------------------------------------------- */

typedef struct mmi_case {
    vn_dtype at, bt;
    shape a, b;
    int zp; /* bit 0: a_zero_point, bit 1: b_zero_point, bit 2: b's per column */
} mmi_case;

static void check_mmi(vt_rng *r, const mmi_case *c, bool const_b)
{
    int64_t N = c->b.rank > 1 ? c->b.dims[c->b.rank - 1] : 1;
    uint8_t za = c->at == VN_U8 ? 131 : (uint8_t)(int8_t)-7, zb = c->bt == VN_U8 ? 119 : 5;
    uint8_t zbv[128];
    for (int64_t j = 0; j < N; j++) zbv[j] = zb;
    vn_tensor in[4] = {{desc_of(c->at, c->a), rand_q(r, c->at, numel(c->a))},
                       {desc_of(c->bt, c->b), rand_q(r, c->bt, numel(c->b))},
                       {{c->at, -1, {0}}, NULL},
                       {{c->bt, -1, {0}}, NULL}};
    if (c->zp & 1) in[2] = (vn_tensor){desc_of(c->at, (shape){0, {0}}), &za};
    if (c->zp & 2)
        in[3] = (vn_tensor){desc_of(c->bt, (c->zp & 4) ? (shape){1, {N}} : (shape){1, {1}}), zbv};
    vn_tensor_desc yd;
    vn_status st = VN_ERR_INTERNAL;
    int32_t *y = run_op("MatMulInteger", in, 4, const_b, 1, &yd, &st);
    VT_CHECK(st == VN_OK, "run: %s", vn_last_error());
    int64_t ny = vn_desc_numel(&yd);
    int64_t *acc = malloc(sizeof(int64_t) * (size_t)(ny + 1));
    int32_t zbj[128];
    for (int64_t j = 0; j < N; j++) zbj[j] = (c->zp & 2) ? q_at(c->bt, &zb, 0) : 0;
    ref_acc(&in[0], &in[1], zbj, (c->zp & 1) ? q_at(c->at, &za, 0) : 0, &yd, acc);
    int64_t bad = 0;
    for (int64_t i = 0; y && st == VN_OK && i < ny; i++)
        if (y[i] != acc[i] && bad++ < 3)
            VT_CHECK(0, "%s x %s zp %d: element %lld is %d, want %lld", vn_dtype_name(c->at),
                     vn_dtype_name(c->bt), c->zp, (long long)i, (int)y[i], (long long)acc[i]);
    VT_CHECK(bad == 0, "%lld wrong elements", (long long)bad);
    VT_CHECK(yd.dtype == VN_I32, "output dtype %s", vn_dtype_name(yd.dtype));
    free(y), free(acc), free(in[0].data), free(in[1].data);
}

static void test_matmul_integer(void)
{
    vt_rng r = {0x31};
    const vn_dtype dts[2] = {VN_U8, VN_I8};
    const shape shapes[][2] = {
        {{2, {17, 70}}, {2, {70, 33}}},  {{4, {2, 1, 5, 19}}, {3, {3, 19, 6}}},
        {{1, {23}}, {2, {23, 9}}},       {{3, {2, 7, 130}}, {1, {130}}},
        {{2, {1, 300}}, {2, {300, 40}}},
    };
    for (int t = 0; t < 4; t++)
        for (int zp = 0; zp < 8; zp++)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                if ((zp & 4) && !(zp & 2)) continue;
                mmi_case c = {dts[t & 1], dts[t >> 1], shapes[s][0], shapes[s][1], zp};
                check_mmi(&r, &c, false);
            }
    mmi_case k0 = {VN_U8, VN_I8, {2, {3, 0}}, {2, {0, 4}}, 3}; /* K = 0: zeros */
    check_mmi(&r, &k0, false);
}

static void test_integer_prepacked(void)
{
    vt_rng r = {0x32};
    for (int zp = 0; zp < 4; zp++) {
        mmi_case c = {VN_U8, VN_I8, {3, {2, 20, 150}}, {2, {150, 37}}, zp};
        check_mmi(&r, &c, true); /* against the reference, hence also the unpacked run */
    }
    mmi_case c2 = {VN_I8, VN_U8, {3, {2, 9, 40}}, {3, {2, 40, 11}}, 3};
    check_mmi(&r, &c2, true);
}

static void test_integer_refusals(void)
{
    vn_tensor_desc d[4] = {desc_of(VN_U8, (shape){2, {4, 8}}), desc_of(VN_I8, (shape){2, {8, 3}}),
                           desc_of(VN_U8, (shape){1, {4}}), desc_of(VN_I8, (shape){1, {3}})};
    vn_op_plan *p = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "MatMulInteger", d, 4, NULL, &p) == VN_ERR_UNSUPPORTED,
             "per-row a_zero_point");
    VT_CONTAINS(vn_last_error(), "MatMulInteger");
    VT_CONTAINS(vn_last_error(), "a_zero_point u8[4]");
    d[2] = desc_of(VN_U8, (shape){0, {0}});
    VT_OK(vn_op_plan_create(NULL, "MatMulInteger", d, 4, NULL, &p));
    uint8_t a[32] = {0}, za = 1;
    int8_t b[24] = {0}, zb[3] = {0, 1, 0};
    int32_t y[12];
    vn_tensor in[4] = {{d[0], a}, {d[1], b}, {d[2], &za}, {d[3], zb}},
              out = {{VN_I32, 2, {4, 3}}, y};
    VT_CHECK(vn_op_run(p, in, 4, &out, 1, NULL) == VN_ERR_UNSUPPORTED, "non-uniform b_zero_point");
    VT_CONTAINS(vn_last_error(), "b_zero_point");
    vn_op_plan_destroy(p);
    d[1] = desc_of(VN_F32, (shape){2, {8, 3}});
    VT_CHECK(vn_op_plan_create(NULL, "MatMulInteger", d, 2, NULL, &p) == VN_ERR_DTYPE, "f32 B");
    VT_CONTAINS(vn_last_error(), "f32[8,3]");
    d[1] = desc_of(VN_I8, (shape){2, {7, 3}});
    VT_CHECK(vn_op_plan_create(NULL, "MatMulInteger", d, 2, NULL, &p) == VN_ERR_SHAPE, "K");
    VT_CONTAINS(vn_last_error(), "u8[4,8]");
    VT_CONTAINS(vn_last_error(), "i8[7,3]");
    VT_CHECK(vn_op_plan_create(NULL, "MatMulInteger", d, 5, NULL, &p) == VN_ERR_INVALID_ARG,
             "5 inputs");
    VT_CONTAINS(vn_last_error(), "MatMulInteger");
}

/* ---- QLinearMatMul ------------------------------------------------------------------ */

typedef struct qlm_case {
    vn_dtype at, bt, yt;
    shape a, b;
    bool per_col;
} qlm_case;

static void check_qlm(vt_rng *r, const qlm_case *c, bool const_b)
{
    int64_t N = c->b.dims[c->b.rank - 1], K = c->a.dims[c->a.rank - 1];
    float as = 0.02f, ys = 0.75f * (float)sqrt((double)K), bsc[64];
    for (int64_t j = 0; j < N; j++) bsc[j] = c->per_col ? 0.01f + 0.001f * (float)j : 0.013f;
    uint8_t za = c->at == VN_U8 ? 128 : 3, zb = c->bt == VN_U8 ? 120 : (uint8_t)(int8_t)-2;
    uint8_t zy = c->yt == VN_U8 ? 100 : (uint8_t)(int8_t)-10;
    shape one = {0, {0}}, cols = {1, {N}};
    vn_tensor in[8] = {{desc_of(c->at, c->a), rand_q(r, c->at, numel(c->a))},
                       {desc_of(VN_F32, one), &as},
                       {desc_of(c->at, one), &za},
                       {desc_of(c->bt, c->b), rand_q(r, c->bt, numel(c->b))},
                       {desc_of(VN_F32, c->per_col ? cols : one), bsc},
                       {desc_of(c->bt, one), &zb},
                       {desc_of(VN_F32, one), &ys},
                       {desc_of(c->yt, one), &zy}};
    vn_tensor_desc yd;
    vn_status st = VN_ERR_INTERNAL;
    uint8_t *y = run_op("QLinearMatMul", in, 8, const_b, 3, &yd, &st);
    VT_CHECK(st == VN_OK, "run: %s", vn_last_error());
    VT_CHECK(yd.dtype == c->yt, "output dtype %s", vn_dtype_name(yd.dtype));
    int64_t ny = vn_desc_numel(&yd), bad = 0;
    int64_t *acc = malloc(sizeof(int64_t) * (size_t)(ny + 1));
    int32_t zbj[64];
    for (int64_t j = 0; j < N; j++) zbj[j] = q_at(c->bt, &zb, 0);
    ref_acc(&in[0], &in[3], zbj, q_at(c->at, &za, 0), &yd, acc);
    float lo = c->yt == VN_U8 ? 0.0f : -128.0f, hi = c->yt == VN_U8 ? 255.0f : 127.0f;
    for (int64_t i = 0; y && st == VN_OK && i < ny; i++) {
        int64_t j = i % N;
        float v = c->per_col ? (float)acc[i] * as * bsc[j] : (float)acc[i] * (as * bsc[0]) * 1.0f;
        float q = nearbyintf(v / ys) + (float)q_at(c->yt, &zy, 0);
        q = q < lo ? lo : (q > hi ? hi : q);
        int32_t want = (int32_t)q, got = q_at(c->yt, y, i);
        if (got != want && bad++ < 3)
            VT_CHECK(0, "%s x %s -> %s per_col %d: element %lld is %d, want %d (acc %lld)",
                     vn_dtype_name(c->at), vn_dtype_name(c->bt), vn_dtype_name(c->yt), c->per_col,
                     (long long)i, (int)got, (int)want, (long long)acc[i]);
    }
    VT_CHECK(bad == 0, "%lld wrong elements", (long long)bad);
    free(y), free(acc), free(in[0].data), free(in[3].data);
}

static void test_qlinear(void)
{
    vt_rng r = {0x51};
    const vn_dtype dts[2] = {VN_U8, VN_I8};
    const shape shapes[][2] = {
        {{2, {19, 64}}, {2, {64, 33}}},
        {{3, {3, 5, 130}}, {2, {130, 17}}},
        {{4, {2, 1, 4, 21}}, {3, {3, 21, 6}}},
        {{2, {1, 257}}, {2, {257, 50}}},
    };
    for (int t = 0; t < 8; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int pc = 0; pc < 2; pc++) {
                qlm_case c = {dts[t & 1],   dts[(t >> 1) & 1], dts[t >> 2],
                              shapes[s][0], shapes[s][1],      pc};
                check_qlm(&r, &c, false);
            }
    qlm_case c = {VN_U8, VN_I8, VN_U8, {2, {40, 96}}, {2, {96, 48}}, true};
    check_qlm(&r, &c, true);
}

static void test_qlinear_errors(void)
{
    shape one = {0, {0}};
    vn_tensor_desc d[8] = {desc_of(VN_U8, (shape){2, {4, 8}}),
                           desc_of(VN_F32, one),
                           desc_of(VN_U8, one),
                           desc_of(VN_I8, (shape){2, {8, 3}}),
                           desc_of(VN_F32, one),
                           desc_of(VN_I8, (shape){1, {3}}),
                           desc_of(VN_F32, one),
                           desc_of(VN_U8, one)};
    vn_op_plan *p = NULL;
    VT_OK(vn_op_plan_create(NULL, "QLinearMatMul", d, 8, NULL, &p)); /* [N] zero point: run-time */
    vn_op_plan_destroy(p);
    d[5] = desc_of(VN_I8, (shape){1, {4}});
    VT_CHECK(vn_op_plan_create(NULL, "QLinearMatMul", d, 8, NULL, &p) == VN_ERR_UNSUPPORTED, "zp");
    VT_CONTAINS(vn_last_error(), "QLinearMatMul");
    VT_CONTAINS(vn_last_error(), "b_zero_point i8[4]");
    d[5] = desc_of(VN_I8, one);
    d[1] = desc_of(VN_F16, one);
    VT_CHECK(vn_op_plan_create(NULL, "QLinearMatMul", d, 8, NULL, &p) == VN_ERR_DTYPE, "a_scale");
    VT_CONTAINS(vn_last_error(), "a_scale");
    d[1] = desc_of(VN_F32, (shape){1, {4}});
    VT_CHECK(vn_op_plan_create(NULL, "QLinearMatMul", d, 8, NULL, &p) == VN_ERR_UNSUPPORTED,
             "per-row a_scale");
    VT_CONTAINS(vn_last_error(), "a_scale f32[4]");
    d[1] = desc_of(VN_F32, one);
    VT_CHECK(vn_op_plan_create(NULL, "QLinearMatMul", d, 7, NULL, &p) == VN_ERR_INVALID_ARG, "7");
    VT_CONTAINS(vn_last_error(), "QLinearMatMul");
    /* a zero y_scale is refused when the operator runs */
    VT_OK(vn_op_plan_create(NULL, "QLinearMatMul", d, 8, NULL, &p));
    uint8_t a[32] = {0}, za = 0, zy = 0, y[12];
    int8_t b[24] = {0}, zb = 0;
    float as = 1, bs = 1, ys = 0;
    vn_tensor in[8] = {{d[0], a},   {d[1], &as}, {d[2], &za}, {d[3], b},
                       {d[4], &bs}, {d[5], &zb}, {d[6], &ys}, {d[7], &zy}};
    vn_tensor out = {{VN_U8, 2, {4, 3}}, y};
    VT_CHECK(vn_op_run(p, in, 8, &out, 1, NULL) == VN_ERR_INVALID_ARG, "y_scale 0");
    VT_CONTAINS(vn_last_error(), "y_scale");
    vn_op_plan_destroy(p);
}

int main(void)
{
    VT_RUN(test_matmul_integer);
    VT_RUN(test_integer_prepacked);
    VT_RUN(test_integer_refusals);
    VT_RUN(test_qlinear);
    VT_RUN(test_qlinear_errors);
    return vt_summary();
}
