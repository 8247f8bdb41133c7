/*
 * vec_ref.h — double-precision references for the vector ops and the ulp
 * distance used by the vector tests (ggml / XNNPACK style: one table row per
 * op with its reference, input range and accuracy bound).
 */
#ifndef VINCI_TESTS_KERNEL_VEC_REF_H
#define VINCI_TESTS_KERNEL_VEC_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "vinci/kernel.h"

typedef double (*vt_ref_fn)(double a, double b);

static double r_abs(double a, double b)
{
    return fabs(a);
}
static double r_exp(double a, double b)
{
    return exp(a);
}
static double r_ln(double a, double b)
{
    return log(a);
}
static double r_sqrt(double a, double b)
{
    return sqrt(a);
}
static double r_rsqrt(double a, double b)
{
    return 1.0 / sqrt(a);
}
static double r_recip(double a, double b)
{
    return 1.0 / a;
}
static double r_relu(double a, double b)
{
    return a < 0 ? 0.0 : a;
}
static double r_neg(double a, double b)
{
    return -a;
}
static double r_sigmoid(double a, double b)
{
    return 1.0 / (1.0 + exp(-a));
}
static double r_tanh(double a, double b)
{
    return tanh(a);
}
static double r_gelu(double a, double b)
{
    return a == -INFINITY ? -0.0 : 0.5 * a * erfc(-a / sqrt(2.0));
}
static double r_silu(double a, double b)
{
    return a == -INFINITY ? -0.0 : a / (1.0 + exp(-a));
}
static double r_add(double a, double b)
{
    return a + b;
}
static double r_sub(double a, double b)
{
    return a - b;
}
static double r_mul(double a, double b)
{
    return a * b;
}
static double r_div(double a, double b)
{
    return a / b;
}
static double r_max(double a, double b)
{
    return (a > b || a != a) ? a : b;
}
static double r_min(double a, double b)
{
    return (a < b || a != a) ? a : b;
}
static double r_lrelu(double a, double s)
{
    return a >= 0 ? a : s * a;
}

typedef struct vt_op {
    vn_vop op;
    vt_ref_fn ref;
    double lo, hi;   /* random input range */
    double blo, bhi; /* second operand range (binary) */
    double s;        /* scalar operand */
    int ulps;        /* max f32 ulp distance from the correctly rounded result */
} vt_op;

_Static_assert(VN_VOP_COUNT == 23, "new vn_vop: add it to vt_ops");
static const vt_op vt_ops[VN_VOP_COUNT] = {
    {VN_VOP_ABS, r_abs, -100, 100, 0, 0, 0, 0},
    {VN_VOP_EXP, r_exp, -88, 89, 0, 0, 0, 2},
    {VN_VOP_LN, r_ln, 0, 1e6, 0, 0, 0, 2},
    {VN_VOP_SQRT, r_sqrt, 0, 1e6, 0, 0, 0, 0},
    {VN_VOP_RSQRT, r_rsqrt, 0, 1e6, 0, 0, 0, 1},
    {VN_VOP_RECIPROCAL, r_recip, -100, 100, 0, 0, 0, 0},
    {VN_VOP_RELU, r_relu, -100, 100, 0, 0, 0, 0},
    {VN_VOP_NEG, r_neg, -100, 100, 0, 0, 0, 0},
    {VN_VOP_SIGMOID, r_sigmoid, -100, 100, 0, 0, 0, 3},
    {VN_VOP_TANH, r_tanh, -10, 10, 0, 0, 0, 3},
    {VN_VOP_GELU, r_gelu, -4, 14, 0, 0, 0, 4},
    {VN_VOP_SILU, r_silu, -100, 100, 0, 0, 0, 4},
    {VN_VOP_ADD, r_add, -100, 100, -100, 100, 0, 0},
    {VN_VOP_SUB, r_sub, -100, 100, -100, 100, 0, 0},
    {VN_VOP_MUL, r_mul, -100, 100, -100, 100, 0, 0},
    {VN_VOP_DIV, r_div, -100, 100, -100, 100, 0, 0},
    {VN_VOP_MAX, r_max, -100, 100, -100, 100, 0, 0},
    {VN_VOP_MIN, r_min, -100, 100, -100, 100, 0, 0},
    {VN_VOP_ADDS, r_add, -100, 100, 0, 0, 1.5, 0},
    {VN_VOP_MULS, r_mul, -100, 100, 0, 0, -0.75, 0},
    {VN_VOP_MAXS, r_max, -100, 100, 0, 0, 3.25, 0},
    {VN_VOP_MINS, r_min, -100, 100, 0, 0, -2.5, 0},
    {VN_VOP_LEAKY_RELU, r_lrelu, -100, 100, 0, 0, 0.125, 0},
};

/* Special inputs every op gets in its first elements. */
static const float vt_specials[] = {0.0f,    -0.0f, INFINITY, -INFINITY, NAN,     1e-40f,
                                    -1e-40f, 1.0f,  -1.0f,    88.8f,     -104.5f, 1e30f,
                                    -1e30f,  0.5f,  -20.5f,   3e-6f};
#define VT_NSPECIAL ((int)(sizeof vt_specials / sizeof vt_specials[0]))

/* Distance in representable f32 steps (+0 and -0 are the same point). */
static inline int64_t vt_ord(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}
static inline int64_t vt_ulps(float got, float want)
{
    if (want != want) return got != got ? 0 : INT64_MAX;
    if (got != got) return INT64_MAX;
    int64_t d = vt_ord(got) - vt_ord(want);
    return d < 0 ? -d : d;
}

#endif /* VINCI_TESTS_KERNEL_VEC_REF_H */
