/*
 * math_int.c — scalar variants of the arithmetic operators the fused
 * element-wise kernel runs only for f32 / f16 / bf16 / i32 (Add, Sub, Mul,
 * Div, Max, Min, Sum, Abs, Neg, Relu): the same names on the scalar engine
 * for the other integer dtypes (shape arithmetic of exported models), u64
 * and f64.
 *
 * They are not registered (the names belong to elementwise.c); that
 * family's owner routes those dtypes here through vn_math_integer_variant
 * (swap ctx->def for the variant in infer, plan and run). Arithmetic wraps
 * in int64 / uint64 (no overflow UB); Div truncates toward zero, x / 0 is 0.
 * f64 is computed in double (IEEE: x / 0 is Inf or NaN; Max / Min
 * propagate NaN like numpy).
 */
#include <math.h>
#include <string.h>

#include "ops/math.h"

#define BIN(name, expr)                                                                            \
    static void name##_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)          \
    {                                                                                              \
        (void)p;                                                                                   \
        for (int64_t i = 0; i < n; i++) {                                                          \
            uint64_t a = (uint64_t)x[0][i], b = (uint64_t)x[1][i];                                 \
            (void)a, (void)b;                                                                      \
            y[i] = (int64_t)(expr);                                                                \
        }                                                                                          \
    }

BIN(add, a + b)
BIN(sub, a - b)
BIN(mul, a *b)

static int64_t div1(int64_t a, int64_t b)
{
    if (b == 0) return 0;
    if (b == -1) return (int64_t)(0 - (uint64_t)a); /* INT64_MIN / -1 wraps */
    return a / b;
}

static void div_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = div1(x[0][i], x[1][i]);
}

/* Variadic folds (Max, Min, Sum over p[0] inputs). */
static void max_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = x[0][i];
        for (int32_t k = 1; k < (int32_t)p[0]; k++) v = x[k][i] > v ? x[k][i] : v;
        y[i] = v;
    }
}

static void min_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t v = x[0][i];
        for (int32_t k = 1; k < (int32_t)p[0]; k++) v = x[k][i] < v ? x[k][i] : v;
        y[i] = v;
    }
}

static void sum_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)x[0][i];
        for (int32_t k = 1; k < (int32_t)p[0]; k++) v += (uint64_t)x[k][i];
        y[i] = (int64_t)v;
    }
}

static void abs_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[0][i] < 0 ? (int64_t)(0 - (uint64_t)x[0][i]) : x[0][i];
}

static void neg_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = (int64_t)(0 - (uint64_t)x[0][i]);
}

static void relu_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[0][i] > 0 ? x[0][i] : 0;
}

/* u64: the ops whose result depends on signedness. */
static void div_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t a = (uint64_t)x[0][i], b = (uint64_t)x[1][i];
        y[i] = (int64_t)(b ? a / b : 0);
    }
}

#define FOLD_U(name, better)                                                                       \
    static void name##_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)          \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            uint64_t v = (uint64_t)x[0][i];                                                        \
            for (int32_t k = 1; k < (int32_t)p[0]; k++) {                                          \
                uint64_t c = (uint64_t)x[k][i];                                                    \
                v = better ? c : v;                                                                \
            }                                                                                      \
            y[i] = (int64_t)v;                                                                     \
        }                                                                                          \
    }
FOLD_U(max, c > v)
FOLD_U(min, c < v)

/* Abs and Relu of an unsigned value are the value. */
static void same_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    memcpy(y, x[0], (size_t)n * sizeof *y);
}

/* f64, computed in double. */
#define BIN_F(name, expr)                                                                          \
    static void name##_f(double *y, const double *const *x, int64_t n, const double *p)            \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            double a = x[0][i], b = x[1][i];                                                       \
            y[i] = (expr);                                                                         \
        }                                                                                          \
    }
BIN_F(add, a + b)
BIN_F(sub, a - b)
BIN_F(mul, a *b)
BIN_F(div, a / b)

#define FOLD_F(name, step)                                                                         \
    static void name##_f(double *y, const double *const *x, int64_t n, const double *p)            \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            double v = x[0][i];                                                                    \
            for (int32_t k = 1; k < (int32_t)p[0]; k++) {                                          \
                double c = x[k][i];                                                                \
                v = (step);                                                                        \
            }                                                                                      \
            y[i] = v;                                                                              \
        }                                                                                          \
    }
FOLD_F(max, v != v || c < v ? v : c)
FOLD_F(min, v != v || c > v ? v : c)
FOLD_F(sum, v + c)

#define UN_F(name, expr)                                                                           \
    static void name##_f(double *y, const double *const *x, int64_t n, const double *p)            \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            double v = x[0][i];                                                                    \
            y[i] = (expr);                                                                         \
        }                                                                                          \
    }
UN_F(abs, fabs(v))
UN_F(neg, -v)
UN_F(relu, v > 0 ? v : v == v ? 0.0 : v)
UN_F(exp, exp(v))
UN_F(log, log(v))
UN_F(sqrt, sqrt(v))
UN_F(reciprocal, 1.0 / v)
UN_F(sigmoid, v >= 0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v)))
UN_F(tanh, tanh(v))

static vn_status count_p(const vn_op_ctx *ctx, const char *where, double *p)
{
    p[0] = ctx->num_inputs;
    return VN_OK;
}

/* fu = fi where the wrapped bits do not depend on signedness. */
#define DTS (VN_DTYPES_INT | VN_DTYPES_U64 | VN_DTYPES_F64)
#define IB(name, fn, fu)                                                                           \
    VN_MATH_DEF_U(name, 2, 2, DTS, fn##_f, fn##_i, VN_MATH_OUT_SAME, 0, false, NULL, fu)
#define IV(name, fn, fu)                                                                           \
    VN_MATH_DEF_U(name, 1, VN_MATH_MAX_INPUTS, DTS, fn##_f, fn##_i, VN_MATH_OUT_SAME, 0, false,    \
                  count_p, fu)
#define IU(name, fn, fu)                                                                           \
    VN_MATH_DEF_U(name, 1, 1, DTS, fn##_f, fn##_i, VN_MATH_OUT_SAME, 0, false, NULL, fu)

#define FU(name, fn)                                                                               \
    VN_MATH_DEF(name, 1, 1, VN_DTYPES_F64, fn##_f, NULL, VN_MATH_OUT_SAME, 0, false, NULL)

static const vn_math_def defs[] = {
    IB("Add", add, add_i),
    IB("Sub", sub, sub_i),
    IB("Mul", mul, mul_i),
    IB("Div", div, div_u),
    IV("Max", max, max_u),
    IV("Min", min, min_u),
    IV("Sum", sum, sum_i),
    IU("Abs", abs, same_u),
    IU("Neg", neg, neg_i),
    IU("Relu", relu, same_u),
    /* f64 only */
    FU("Exp", exp),
    FU("Log", log),
    FU("Sqrt", sqrt),
    FU("Reciprocal", reciprocal),
    FU("Sigmoid", sigmoid),
    FU("Tanh", tanh),
};

const vn_op_def *vn_math_integer_variant(const char *name)
{
    for (size_t i = 0; name && i < sizeof defs / sizeof defs[0]; i++)
        if (strcmp(defs[i].def.name, name) == 0) return &defs[i].def;
    return NULL;
}
