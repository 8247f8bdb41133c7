/*
 * math_int.c — integer variants of the arithmetic operators the fused
 * element-wise kernel runs only for f32 / f16 / bf16 / i32 (Add, Sub, Mul,
 * Div, Max, Min, Sum, Abs, Neg, Relu): the same names on the scalar engine
 * for i8, u8, i32 and i64 (shape arithmetic of exported models).
 *
 * They are not registered (the names belong to elementwise.c); that
 * family's owner routes integer dtypes here through
 * vn_math_integer_variant (swap ctx->def for the variant in infer, plan and
 * run). Arithmetic wraps in int64 (no overflow UB); Div truncates toward
 * zero, x / 0 is 0.
 */
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

static vn_status count_p(const vn_op_ctx *ctx, const char *where, double *p)
{
    p[0] = ctx->num_inputs;
    return VN_OK;
}

#define INTS         VN_DTYPES_INT
#define IB(name, fn) VN_MATH_DEF(name, 2, 2, INTS, NULL, fn##_i, VN_MATH_OUT_SAME, 0, false, NULL)
#define IV(name, fn)                                                                               \
    VN_MATH_DEF(name, 1, VN_MATH_MAX_INPUTS, INTS, NULL, fn##_i, VN_MATH_OUT_SAME, 0, false,       \
                count_p)
#define IU(name, fn) VN_MATH_DEF(name, 1, 1, INTS, NULL, fn##_i, VN_MATH_OUT_SAME, 0, false, NULL)

static const vn_math_def defs[] = {
    IB("Add", add), IB("Sub", sub), IB("Mul", mul), IB("Div", div), IV("Max", max),
    IV("Min", min), IV("Sum", sum), IU("Abs", abs), IU("Neg", neg), IU("Relu", relu),
};

const vn_op_def *vn_math_integer_variant(const char *name)
{
    for (size_t i = 0; name && i < sizeof defs / sizeof defs[0]; i++)
        if (strcmp(defs[i].def.name, name) == 0) return &defs[i].def;
    return NULL;
}
