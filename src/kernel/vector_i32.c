/*
 * vector_i32.c — the i32 element-wise kernels: plain C loops (GCC vectorises
 * them for the baseline ISA), wrapping arithmetic done in uint32_t so that
 * overflow is defined (two's complement), as on the hardware.
 */
#include "kernel/vector_internal.h"

typedef void (*vn_i32_loop)(int32_t *dst, const int32_t *a, const int32_t *b, int32_t s, int64_t n);

static int32_t vn_wrap(uint32_t u)
{
    return (int32_t)u;
}
static int32_t i_abs(int32_t a, int32_t b)
{
    return a < 0 ? vn_wrap(0u - (uint32_t)a) : a;
}
static int32_t i_neg(int32_t a, int32_t b)
{
    return vn_wrap(0u - (uint32_t)a);
}
static int32_t i_relu(int32_t a, int32_t b)
{
    return a < 0 ? 0 : a;
}
static int32_t i_add(int32_t a, int32_t b)
{
    return vn_wrap((uint32_t)a + (uint32_t)b);
}
static int32_t i_sub(int32_t a, int32_t b)
{
    return vn_wrap((uint32_t)a - (uint32_t)b);
}
static int32_t i_mul(int32_t a, int32_t b)
{
    return vn_wrap((uint32_t)a * (uint32_t)b);
}
static int32_t i_max(int32_t a, int32_t b)
{
    return a > b ? a : b;
}
static int32_t i_min(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

/* One loop per op so the element function inlines and the loop vectorises. */
#define VN_I32_BINARY(name, f)                                                                     \
    static void name(int32_t *dst, const int32_t *a, const int32_t *b, int32_t s, int64_t n)       \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) dst[i] = f(a[i], b[i]);                                    \
    }
#define VN_I32_SCALAR(name, f)                                                                     \
    static void name(int32_t *dst, const int32_t *a, const int32_t *b, int32_t s, int64_t n)       \
    {                                                                                              \
        for (int64_t i = 0; i < n; i++) dst[i] = f(a[i], s);                                       \
    }
VN_I32_SCALAR(l_abs, i_abs)
VN_I32_SCALAR(l_neg, i_neg)
VN_I32_SCALAR(l_relu, i_relu)
VN_I32_BINARY(l_add, i_add)
VN_I32_BINARY(l_sub, i_sub)
VN_I32_BINARY(l_mul, i_mul)
VN_I32_BINARY(l_max, i_max)
VN_I32_BINARY(l_min, i_min)
VN_I32_SCALAR(l_adds, i_add)
VN_I32_SCALAR(l_muls, i_mul)
VN_I32_SCALAR(l_maxs, i_max)
VN_I32_SCALAR(l_mins, i_min)

_Static_assert(VN_VOP_COUNT == 23, "new vn_vop: decide whether it has an i32 form");

/* Indexed by vn_vop; NULL where vn_vop_supports(op, VN_I32) is false. Unary
 * ops ignore their second operand. */
static const vn_i32_loop vn_i32_ops[VN_VOP_COUNT] = {
    [VN_VOP_ABS] = l_abs,   [VN_VOP_NEG] = l_neg,   [VN_VOP_RELU] = l_relu, [VN_VOP_ADD] = l_add,
    [VN_VOP_SUB] = l_sub,   [VN_VOP_MUL] = l_mul,   [VN_VOP_MAX] = l_max,   [VN_VOP_MIN] = l_min,
    [VN_VOP_ADDS] = l_adds, [VN_VOP_MULS] = l_muls, [VN_VOP_MAXS] = l_maxs, [VN_VOP_MINS] = l_mins,
};

void vn_vec_compute_i32(vn_vop op, int32_t *dst, const int32_t *a, const int32_t *b, int32_t s,
                        int64_t n)
{
    if (vn_i32_ops[op]) vn_i32_ops[op](dst, a, b, s, n);
}
