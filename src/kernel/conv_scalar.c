/*
 * conv_scalar.c — the convolution micro-kernels for baseline x86-64: the
 * "vector" is one float, so a C0 block is 16 of them (the compiler may still
 * use SSE for the 16-wide inner loops). Also the scalar activation every ISA
 * path follows, and the choice of the active table.
 */
#include <math.h>
#include <stdatomic.h>

#include "kernel/conv_kernels.h"

static inline float fmaxf_(float a, float b)
{
    return a > b ? a : b;
}
static inline float fminf_(float a, float b)
{
    return a < b ? a : b;
}

float vn_conv_act_scalar(float v, const vn_conv_epi *e)
{
    switch (e->act) {
    case VN_CONV_ACT_RELU:
        return fmaxf_(v, 0.0f);
    case VN_CONV_ACT_CLIP:
        return fminf_(fmaxf_(v, e->p0), e->p1);
    case VN_CONV_ACT_LEAKY_RELU:
        return v >= 0.0f ? v : e->p0 * v;
    case VN_CONV_ACT_HARD_SIGMOID:
        return fminf_(fmaxf_(e->p0 * v + e->p1, 0.0f), 1.0f);
    case VN_CONV_ACT_HARD_SWISH:
        return v * fminf_(fmaxf_(v / 6.0f + 0.5f, 0.0f), 1.0f);
    case VN_CONV_ACT_SIGMOID:
        return 1.0f / (1.0f + expf(-v));
    case VN_CONV_ACT_SILU:
        return v / (1.0f + expf(-v));
    default:
        return v;
    }
}

#define V             float
#define VL            1
#define VZERO()       0.0f
#define VSET1(f)      (f)
#define VLOAD(p)      (*(p))
#define VSTORE(p, v)  (*(p) = (v))
#define VFMA(a, b, c) ((a) * (b) + (c))
#define VADD(a, b)    ((a) + (b))
#define VMUL(a, b)    ((a) * (b))
#define VMAX(a, b)    fmaxf_(a, b)
#define VMIN(a, b)    fminf_(a, b)
#define OWB_MAX       4
#define NCB_MAX       1
#define DW_OWB_MAX    4
#define TABLE_NAME    vn_conv_table_scalar
#define TABLE_ISA     VN_ISA_SCALAR

#include "kernel/conv_kernel.inc"

static _Atomic(const vn_conv_table *) chosen;

const vn_conv_table *vn_conv_table_get(void)
{
    const vn_conv_table *t = atomic_load_explicit(&chosen, memory_order_acquire);
    if (t) return t;
    switch (vn_isa_active()) {
    case VN_ISA_AVX512:
        t = &vn_conv_table_avx512;
        break;
    case VN_ISA_AVX2:
        t = &vn_conv_table_avx2;
        break;
    default:
        t = &vn_conv_table_scalar;
        break;
    }
    atomic_store_explicit(&chosen, t, memory_order_release);
    return t;
}
