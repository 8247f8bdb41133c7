/*
 * vec_f32_scalar.h — the f32 vector macros of the kernel templates
 * (conv_kernel.inc, winograd_kernel.inc) for baseline x86-64: one vector is
 * one float. max/min are plain comparisons (no libm call, NaN handling as
 * the SIMD max/min: the second operand when unordered).
 */
#ifndef VINCI_KERNEL_VEC_F32_SCALAR_H
#define VINCI_KERNEL_VEC_F32_SCALAR_H

static inline float vn_vec_maxf(float a, float b)
{
    return a > b ? a : b;
}
static inline float vn_vec_minf(float a, float b)
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
#define VSUB(a, b)    ((a) - (b))
#define VMUL(a, b)    ((a) * (b))
#define VMAX(a, b)    vn_vec_maxf(a, b)
#define VMIN(a, b)    vn_vec_minf(a, b)
#define VKEEP(v)      ((void)(v))

#endif
