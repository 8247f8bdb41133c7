/*
 * logic.c — comparison and logic operators (bool outputs) and Where, on the
 * scalar element-wise engine (math.h) with broadcasting. Floats compare in
 * double (NaN compares false, except !=); integers in int64, exactly.
 */
#include <math.h>

#include "ops/math.h"

#define BIN_F(name, expr)                                                                          \
    static void name##_f(double *y, const double *const *x, int64_t n, const double *p)            \
    {                                                                                              \
        (void)p;                                                                                   \
        const double *a = x[0], *b = x[1];                                                         \
        for (int64_t i = 0; i < n; i++) y[i] = (expr);                                             \
    }
#define BIN_I(name, expr)                                                                          \
    static void name##_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)          \
    {                                                                                              \
        (void)p;                                                                                   \
        const int64_t *a = x[0], *b = x[1];                                                        \
        for (int64_t i = 0; i < n; i++) y[i] = (expr);                                             \
    }
#define BIN(name, expr) BIN_F(name, expr) BIN_I(name, expr)

BIN(eq, a[i] == b[i])
BIN(lt, a[i] < b[i])
BIN(le, a[i] <= b[i])
BIN(gt, a[i] > b[i])
BIN(ge, a[i] >= b[i])
BIN_I(and, (a[i] != 0) & (b[i] != 0))
BIN_I(or, (a[i] != 0) | (b[i] != 0))
BIN_I(xor, (a[i] != 0) ^ (b[i] != 0))
BIN_I(band, a[i] & b[i])
BIN_I(bor, a[i] | b[i])
BIN_I(bxor, a[i] ^ b[i])

/* u64 orderings (the values travel as int64 bits, cast.h). */
#define BIN_U(name, op)                                                                            \
    static void name##_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)          \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) y[i] = (uint64_t)x[0][i] op(uint64_t) x[1][i];             \
    }
BIN_U(lt, <)
BIN_U(le, <=)
BIN_U(gt, >)
BIN_U(ge, >=)

static void not_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[0][i] == 0;
}

static void bnot_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = ~x[0][i];
}

static void isnan_f(double *y, const double *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = isnan(x[0][i]);
}

/* p[0] detect_negative, p[1] detect_positive */
static void isinf_f(double *y, const double *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = isinf(x[0][i]) && (x[0][i] < 0 ? p[0] != 0 : p[1] != 0);
}

static vn_status isinf_params(const vn_op_ctx *ctx, const char *where, double *p)
{
    int64_t neg, pos;
    if (vn_attrs_int(ctx->attrs, "detect_negative", 1, &neg) != VN_OK ||
        vn_attrs_int(ctx->attrs, "detect_positive", 1, &pos) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "detect_negative / detect_positive must be ints");
    p[0] = (double)neg;
    p[1] = (double)pos;
    return VN_OK;
}

/* Where(cond, x, y): x[0] is the condition. */
static void where_f(double *y, const double *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[0][i] != 0 ? x[1][i] : x[2][i];
}

static void where_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[0][i] != 0 ? x[1][i] : x[2][i];
}

#define FLOATS  (VN_DTYPES_FLOAT | VN_DTYPES_F64)
#define INTS    (VN_DTYPES_INT | VN_DTYPES_U64)
#define NUMERIC (FLOATS | INTS)
#define ALL     VN_DTYPES_ALL
#define BOOL    VN_DTYPE_BIT(VN_BOOL)
#define CMP(name, fn, dtypes, fu)                                                                  \
    VN_MATH_DEF_U(name, 2, 2, dtypes, fn##_f, fn##_i, VN_MATH_OUT_BOOL, 0, false, NULL, fu)
#define LOGIC(name, fn)                                                                            \
    VN_MATH_DEF(name, 2, 2, BOOL, NULL, fn##_i, VN_MATH_OUT_BOOL, 0, false, NULL)
/* bit operations are the same on u64 bits */
#define BITWISE(name, fn)                                                                          \
    VN_MATH_DEF_U(name, 2, 2, INTS, NULL, fn##_i, VN_MATH_OUT_SAME, 0, false, NULL, fn##_i)

static const vn_math_def defs[] = {
    CMP("Equal", eq, ALL, eq_i),
    CMP("Less", lt, NUMERIC, lt_u),
    CMP("LessOrEqual", le, NUMERIC, le_u),
    CMP("Greater", gt, NUMERIC, gt_u),
    CMP("GreaterOrEqual", ge, NUMERIC, ge_u),
    LOGIC("And", and),
    LOGIC("Or", or),
    LOGIC("Xor", xor),
    VN_MATH_DEF("Not", 1, 1, BOOL, NULL, not_i, VN_MATH_OUT_BOOL, 0, false, NULL),
    BITWISE("BitwiseAnd", band),
    BITWISE("BitwiseOr", bor),
    BITWISE("BitwiseXor", bxor),
    VN_MATH_DEF_U("BitwiseNot", 1, 1, INTS, NULL, bnot_i, VN_MATH_OUT_SAME, 0, false, NULL, bnot_i),
    VN_MATH_DEF("IsNaN", 1, 1, FLOATS, isnan_f, NULL, VN_MATH_OUT_BOOL, 0, false, NULL),
    VN_MATH_DEF("IsInf", 1, 1, FLOATS, isinf_f, NULL, VN_MATH_OUT_BOOL, 0, false, isinf_params),
    VN_MATH_DEF_U("Where", 3, 3, BOOL, where_f, where_i, VN_MATH_OUT_SAME, 1, false, NULL, where_i),
};

#define NUM_DEFS ((int32_t)(sizeof defs / sizeof defs[0]))

const vn_op_def *const *vn_ops_logic_table(int32_t *count)
{
    static const vn_op_def *ptrs[NUM_DEFS];
    /* Filled under the registry's pthread_once; the same values every time. */
    for (int32_t i = 0; i < NUM_DEFS; i++) ptrs[i] = &defs[i].def;
    *count = NUM_DEFS;
    return ptrs;
}
