/*
 * winograd_kernels.h — the transforms of the Winograd F(4x4, 3x3) and
 * F(2x2, 3x3) convolutions on NC1HWC0 (src/ops/conv_winograd.c), one table
 * per ISA (winograd_scalar.c, winograd_avx2.c, winograd_avx512.c compile
 * winograd_kernel.inc with different vector macros).
 *
 * A tile is m x m output pixels (m = 4, or 2 for maps too small for 4x4
 * tiles); it reads the a x a input pixels (a = m + 2) from (ih0, iw0) =
 * (m*th - pt, m*tw - pl). The p = a*a transform points p = a*i + j of a tile
 * are stored as p C0 vectors `pstride` floats apart, so that the
 * element-wise products become, per point, a GEMM over channels (the direct
 * kernel's 1x1 row, conv_kernels.h):
 *   input  V = B^T d B   (d: a x a input pixels, zero outside the image)
 *   output Y = A^T M A   (M: a x a products summed over input channels)
 * then bias, residual and activation in the store step (conv_epilogue.inc).
 */
#ifndef VINCI_KERNEL_WINOGRAD_KERNELS_H
#define VINCI_KERNEL_WINOGRAD_KERNELS_H

#include "kernel/conv_kernels.h"

#define VN_WINO_M 4 /* output pixels per tile side, F(4x4) */
#define VN_WINO_A 6 /* input pixels per tile side (M + 3 - 1) */
#define VN_WINO_P 36

/* The two tile sizes (vn_wino_table's rows). */
typedef enum vn_wino_variant { VN_WINO_F4 = 0, VN_WINO_F2 = 1, VN_WINO_VARIANTS } vn_wino_variant;

/* m, a = m + 2 and p = a * a of a variant. */
static inline int vn_wino_m(vn_wino_variant v)
{
    return v == VN_WINO_F2 ? 2 : 4;
}
static inline int vn_wino_points(vn_wino_variant v)
{
    return (vn_wino_m(v) + 2) * (vn_wino_m(v) + 2);
}

/* Input transform of `ntiles` consecutive tiles of one tile row of one
 * channel block: tile j reads from column iw0 + m*j and writes its point p at
 * v + j*16 + p*pstride. */
typedef struct vn_wino_in_args {
    const float *x; /* one channel block of one image: [IH][IW][16] */
    int64_t IH, IW, ih0, iw0, ntiles;
    float *v;
    int64_t pstride;
} vn_wino_in_args;

/* Output transform of `ntiles` tiles of one tile row of one output block:
 * tile j reads point p at m + j*16 + p*pstride and writes output rows
 * [oh0, oh0+m) x columns [m*j, m*j+m), clipped to OH x OW. */
typedef struct vn_wino_out_args {
    const float *m;
    int64_t pstride, ntiles;
    float *y;          /* the output block's plane [OH][OW][16] */
    const float *res;  /* residual plane laid out like y, or NULL */
    const float *bias; /* 16 values or NULL */
    int64_t OH, OW, oh0;
    vn_conv_epi epi;
} vn_wino_out_args;

typedef struct vn_wino_table {
    vn_isa isa;
    void (*input_row[VN_WINO_VARIANTS])(const vn_wino_in_args *a);
    void (*output_row[VN_WINO_VARIANTS])(const vn_wino_out_args *a);
} vn_wino_table;

extern const vn_wino_table vn_wino_table_scalar;
extern const vn_wino_table vn_wino_table_avx2;
extern const vn_wino_table vn_wino_table_avx512;

/* The table of the active ISA. */
const vn_wino_table *vn_wino_table_get(void);

#endif /* VINCI_KERNEL_WINOGRAD_KERNELS_H */
