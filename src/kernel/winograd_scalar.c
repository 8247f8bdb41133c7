/*
 * winograd_scalar.c — the Winograd F(4x4, 3x3) transforms for baseline
 * x86-64 (one float per "vector"), and the choice of the active table.
 */
#include <stdatomic.h>

#include "kernel/winograd_kernels.h"

static inline float fmaxf_(float a, float b)
{
    return a > b ? a : b;
}
static inline float fminf_(float a, float b)
{
    return a < b ? a : b;
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
#define TABLE_ISA     VN_ISA_SCALAR
#define VSUB(a, b)    ((a) - (b))
#define TABLE_NAME    vn_wino_table_scalar

#include "kernel/winograd_kernel.inc"

static _Atomic(const vn_wino_table *) chosen;

const vn_wino_table *vn_wino_table_get(void)
{
    const vn_wino_table *t = atomic_load_explicit(&chosen, memory_order_acquire);
    if (t) return t;
    switch (vn_isa_active()) {
    case VN_ISA_AVX512:
        t = &vn_wino_table_avx512;
        break;
    case VN_ISA_AVX2:
        t = &vn_wino_table_avx2;
        break;
    default:
        t = &vn_wino_table_scalar;
        break;
    }
    atomic_store_explicit(&chosen, t, memory_order_release);
    return t;
}
