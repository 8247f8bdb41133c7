/*
 * math.c — the math operators the vector ISA lacks, on the scalar
 * element-wise engine (math.h): Pow, Floor, Ceil, Round, Sign, Erf, the
 * activations Elu, Selu, Celu, Softplus, Softsign, HardSigmoid, HardSwish,
 * ThresholdedRelu, Mish, Shrink, PRelu (broadcast slope), Clip (min / max
 * inputs or, before opset 11, attributes), Mean, Mod, and the trigonometric
 * and hyperbolic functions. Floats are computed in double and rounded once
 * to the output dtype; integers in int64 (wrapping, never undefined).
 */
#include <math.h>

#include "ops/math.h"

#define UNARY_F(name, expr)                                                                        \
    static void name##_f(double *y, const double *const *x, int64_t n, const double *p)            \
    {                                                                                              \
        (void)p;                                                                                   \
        const double *a = x[0];                                                                    \
        for (int64_t i = 0; i < n; i++) {                                                          \
            double v = a[i];                                                                       \
            y[i] = (expr);                                                                         \
        }                                                                                          \
    }

UNARY_F(floor, floor(v))
UNARY_F(ceil, ceil(v))
UNARY_F(round, nearbyint(v)) /* ties to even: the default rounding mode */
UNARY_F(sign, v > 0 ? 1.0 : v < 0 ? -1.0 : v)
UNARY_F(erf, erf(v))
UNARY_F(elu, v < 0 ? p[0] * expm1(v) : v)
UNARY_F(selu, v <= 0 ? p[1] * p[0] * expm1(v) : p[1] * v)
UNARY_F(celu, fmax(0.0, v) + fmin(0.0, p[0] * expm1(v / p[0])))
UNARY_F(softplus, v > 0 ? v + log1p(exp(-v)) : log1p(exp(v)))
UNARY_F(softsign, v / (1.0 + fabs(v)))
UNARY_F(hardsigmoid, fmax(0.0, fmin(1.0, p[0] * v + p[1])))
UNARY_F(hardswish, v *fmax(0.0, fmin(1.0, v / 6.0 + 0.5)))
UNARY_F(thresholded, v > p[0] ? v : 0.0)
UNARY_F(mish, v *tanh(v > 0 ? v + log1p(exp(-v)) : log1p(exp(v))))
UNARY_F(shrink, v<-p[1] ? v + p[0] : v> p[1] ? v - p[0] : 0.0)
UNARY_F(sin, sin(v))
UNARY_F(cos, cos(v))
UNARY_F(tan, tan(v))
UNARY_F(asin, asin(v))
UNARY_F(acos, acos(v))
UNARY_F(atan, atan(v))
UNARY_F(sinh, sinh(v))
UNARY_F(cosh, cosh(v))
UNARY_F(asinh, asinh(v))
UNARY_F(acosh, acosh(v))
UNARY_F(atanh, atanh(v))

static void sign_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = (x[0][i] > 0) - (x[0][i] < 0);
}

static void shrink_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        double v = (double)x[0][i];
        y[i] = (int64_t)(v < -p[1] ? v + p[0] : v > p[1] ? v - p[0] : 0.0);
    }
}

/* ---- binary and variadic --------------------------------------------------------------- */

static void pow_f(double *y, const double *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = pow(x[0][i], x[1][i]);
}

/* Integer power by squaring, wrapping in uint64 (no overflow UB); a negative
 * exponent gives the integer part of 1 / b^-e. */
static int64_t ipow(int64_t b, int64_t e)
{
    if (e < 0) return b == 1 ? 1 : b == -1 ? (e % 2 ? -1 : 1) : 0;
    uint64_t r = 1, m = (uint64_t)b;
    for (; e > 0; e >>= 1, m *= m)
        if (e & 1) r *= m;
    return (int64_t)r;
}

static void pow_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = ipow(x[0][i], x[1][i]);
}

static void prelu_f(double *y, const double *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[0][i] < 0 ? x[1][i] * x[0][i] : x[0][i];
}

static void prelu_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = x[0][i] < 0 ? (int64_t)((uint64_t)x[1][i] * (uint64_t)x[0][i]) : x[0][i];
}

static void mean_f(double *y, const double *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int32_t k = 0; k < (int32_t)p[0]; k++) s += x[k][i];
        y[i] = s / p[0];
    }
}

/* Mod: p[0] = fmod. fmod=0 takes the divisor's sign (Python / numpy mod). */
static void mod_f(double *y, const double *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        double a = x[0][i], b = x[1][i], r = fmod(a, b);
        if (p[0] == 0 && r != 0 && (r < 0) != (b < 0)) r += b;
        y[i] = r;
    }
}

static void mod_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t a = x[0][i], b = x[1][i];
        if (b == 0 || b == -1) { /* x % 0 is undefined in C: 0; x % -1 is 0 */
            y[i] = 0;
            continue;
        }
        int64_t r = a % b;
        if (p[0] == 0 && r != 0 && (r < 0) != (b < 0)) r += b;
        y[i] = r;
    }
}

/* Clip: p[0], p[1] = min / max given as inputs; p[2], p[3] = the attribute
 * (or unbounded) values used otherwise. NaN passes through. */
static void clip_f(double *y, const double *const *x, int64_t n, const double *p)
{
    const double *lo = p[0] != 0 ? x[1] : NULL, *hi = p[1] != 0 ? x[p[0] != 0 ? 2 : 1] : NULL;
    for (int64_t i = 0; i < n; i++) {
        double v = x[0][i], l = lo ? lo[i] : p[2], h = hi ? hi[i] : p[3];
        v = v < l ? l : v;
        y[i] = v > h ? h : v;
    }
}

static void clip_i(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    const int64_t *lo = p[0] != 0 ? x[1] : NULL, *hi = p[1] != 0 ? x[p[0] != 0 ? 2 : 1] : NULL;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = x[0][i], l = lo ? lo[i] : INT64_MIN, h = hi ? hi[i] : INT64_MAX;
        v = v < l ? l : v;
        y[i] = v > h ? h : v;
    }
}

/* ---- u64 (values read as uint64; see cast.h) ------------------------------------------- */

static void sign_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[0][i] != 0;
}

static void shrink_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        double v = (double)(uint64_t)x[0][i];
        y[i] = (int64_t)(uint64_t)(v > p[1] ? v - p[0] : 0.0);
    }
}

/* Power by squaring in uint64 (wrapping); the exponent is any integer input,
 * a negative one gives 1 / b^-e truncated (0 unless b is 1). */
static void pow_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = 1, m = (uint64_t)x[0][i];
        int64_t e = x[1][i];
        if (e < 0) r = m == 1;
        for (; e > 0; e >>= 1, m *= m)
            if (e & 1) r *= m;
        y[i] = (int64_t)r;
    }
}

/* PRelu: an unsigned value is never negative. */
static void same_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) y[i] = x[0][i];
}

static void mod_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t a = (uint64_t)x[0][i], b = (uint64_t)x[1][i];
        y[i] = (int64_t)(b ? a % b : 0);
    }
}

static void clip_u(int64_t *y, const int64_t *const *x, int64_t n, const double *p)
{
    const int64_t *lo = p[0] != 0 ? x[1] : NULL, *hi = p[1] != 0 ? x[p[0] != 0 ? 2 : 1] : NULL;
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)x[0][i], l = lo ? (uint64_t)lo[i] : 0,
                 h = hi ? (uint64_t)hi[i] : UINT64_MAX;
        v = v < l ? l : v;
        y[i] = (int64_t)(v > h ? h : v);
    }
}

/* ---- attributes -> parameters ---------------------------------------------------------------- */

static vn_status floats(const vn_op_ctx *ctx, const char *where, const char *a, double da,
                        const char *b, double db, double *p)
{
    if (vn_attrs_float(ctx->attrs, a, da, &p[0]) != VN_OK ||
        (b && vn_attrs_float(ctx->attrs, b, db, &p[1]) != VN_OK))
        return vn_error(VN_ERR_INVALID_ARG, where, "attributes '%s'%s%s must be floats", a,
                        b ? " and " : "", b ? b : "");
    return VN_OK;
}

static vn_status alpha1(const vn_op_ctx *ctx, const char *where, double *p)
{
    return floats(ctx, where, "alpha", 1.0, NULL, 0, p);
}

static vn_status selu_p(const vn_op_ctx *ctx, const char *where, double *p)
{
    return floats(ctx, where, "alpha", 1.67326319217681884765625, "gamma",
                  1.05070102214813232421875, p);
}

static vn_status hardsigmoid_p(const vn_op_ctx *ctx, const char *where, double *p)
{
    return floats(ctx, where, "alpha", 0.2, "beta", 0.5, p);
}

static vn_status shrink_p(const vn_op_ctx *ctx, const char *where, double *p)
{
    return floats(ctx, where, "bias", 0.0, "lambd", 0.5, p);
}

static vn_status celu_p(const vn_op_ctx *ctx, const char *where, double *p)
{
    vn_status st = alpha1(ctx, where, p);
    if (st == VN_OK && p[0] == 0) return vn_error(VN_ERR_INVALID_ARG, where, "alpha is 0");
    return st;
}

static vn_status mean_p(const vn_op_ctx *ctx, const char *where, double *p)
{
    p[0] = ctx->num_inputs;
    return VN_OK;
}

static vn_status mod_p(const vn_op_ctx *ctx, const char *where, double *p)
{
    int64_t f;
    if (vn_attrs_int(ctx->attrs, "fmod", 0, &f) != VN_OK || (f != 0 && f != 1))
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'fmod' must be 0 or 1");
    p[0] = (double)f;
    return VN_OK;
}

static vn_status clip_p(const vn_op_ctx *ctx, const char *where, double *p)
{
    char buf[128];
    for (int32_t i = 1; i < ctx->num_inputs; i++)
        if (ctx->inputs[i].rank >= 0 && vn_desc_numel(&ctx->inputs[i]) != 1)
            return vn_error(VN_ERR_SHAPE, where, "input %d %s must hold one value", (int)i,
                            vn_desc_format(&ctx->inputs[i], buf, sizeof buf));
    p[0] = ctx->num_inputs > 1 && ctx->inputs[1].rank >= 0;
    p[1] = ctx->num_inputs > 2 && ctx->inputs[2].rank >= 0;
    return floats(ctx, where, "min", -INFINITY, "max", INFINITY, p + 2);
}

#define FLOATS  (VN_DTYPES_FLOAT | VN_DTYPES_F64)
#define NUMERIC (FLOATS | VN_DTYPES_INT | VN_DTYPES_U64)
#define UNARY(name, fn, params)                                                                    \
    VN_MATH_DEF(name, 1, 1, FLOATS, fn##_f, NULL, VN_MATH_OUT_SAME, 0, false, params)

static const vn_math_def defs[] = {
    VN_MATH_DEF_U("Pow", 2, 2, NUMERIC, pow_f, pow_i, VN_MATH_OUT_SAME, 0, true, NULL, pow_u),
    UNARY("Floor", floor, NULL),
    UNARY("Ceil", ceil, NULL),
    UNARY("Round", round, NULL),
    VN_MATH_DEF_U("Sign", 1, 1, NUMERIC, sign_f, sign_i, VN_MATH_OUT_SAME, 0, false, NULL, sign_u),
    UNARY("Erf", erf, NULL),
    UNARY("Elu", elu, alpha1),
    UNARY("Selu", selu, selu_p),
    UNARY("Celu", celu, celu_p),
    UNARY("Softplus", softplus, NULL),
    UNARY("Softsign", softsign, NULL),
    UNARY("HardSigmoid", hardsigmoid, hardsigmoid_p),
    UNARY("HardSwish", hardswish, NULL),
    UNARY("ThresholdedRelu", thresholded, alpha1),
    UNARY("Mish", mish, NULL),
    VN_MATH_DEF_U("Shrink", 1, 1, NUMERIC, shrink_f, shrink_i, VN_MATH_OUT_SAME, 0, false, shrink_p,
                  shrink_u),
    UNARY("Sin", sin, NULL),
    UNARY("Cos", cos, NULL),
    UNARY("Tan", tan, NULL),
    UNARY("Asin", asin, NULL),
    UNARY("Acos", acos, NULL),
    UNARY("Atan", atan, NULL),
    UNARY("Sinh", sinh, NULL),
    UNARY("Cosh", cosh, NULL),
    UNARY("Asinh", asinh, NULL),
    UNARY("Acosh", acosh, NULL),
    UNARY("Atanh", atanh, NULL),
    VN_MATH_DEF_U("PRelu", 2, 2, NUMERIC, prelu_f, prelu_i, VN_MATH_OUT_SAME, 0, false, NULL,
                  same_u),
    VN_MATH_DEF_U("Clip", 1, 3, NUMERIC, clip_f, clip_i, VN_MATH_OUT_SAME, 0, false, clip_p,
                  clip_u),
    VN_MATH_DEF("Mean", 1, VN_MATH_MAX_INPUTS, FLOATS, mean_f, NULL, VN_MATH_OUT_SAME, 0, false,
                mean_p),
    VN_MATH_DEF_U("Mod", 2, 2, NUMERIC, mod_f, mod_i, VN_MATH_OUT_SAME, 0, false, mod_p, mod_u),
};

#define NUM_DEFS ((int32_t)(sizeof defs / sizeof defs[0]))

const vn_op_def *const *vn_ops_math_table(int32_t *count)
{
    static const vn_op_def *ptrs[NUM_DEFS];
    /* Filled under the registry's pthread_once; the same values every time. */
    for (int32_t i = 0; i < NUM_DEFS; i++) ptrs[i] = &defs[i].def;
    *count = NUM_DEFS;
    return ptrs;
}
