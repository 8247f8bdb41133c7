/*
 * winograd_kernels.h — the transforms of the Winograd F(4x4, 3x3)
 * convolution on NC1HWC0 (src/ops/conv_winograd.c), one table per ISA
 * (winograd_scalar.c, winograd_avx2.c, winograd_avx512.c compile
 * winograd_kernel.inc with different vector macros).
 *
 * A tile is 4x4 output pixels; it reads the 6x6 input pixels from (ih0,
 * iw0) = (4*th - pt, 4*tw - pl). The 36 transform points p = 6*i + j of a
 * tile are stored as 36 C0 vectors `pstride` floats apart, so that the
 * element-wise products become, per point, a GEMM over channels (the direct
 * kernel's 1x1 row, conv_kernels.h):
 *   input  V = B^T d B   (d: 6x6 input pixels, zero outside the image)
 *   output Y = A^T M A   (M: 6x6 products summed over input channels)
 * then bias, residual and activation in the store step (conv_epilogue.inc).
 */
#ifndef VINCI_KERNEL_WINOGRAD_KERNELS_H
#define VINCI_KERNEL_WINOGRAD_KERNELS_H

#include "kernel/conv_kernels.h"

#define VN_WINO_M 4 /* output pixels per tile side */
#define VN_WINO_A 6 /* input pixels per tile side (M + 3 - 1) */
#define VN_WINO_P 36

/* Input transform of `ntiles` consecutive tiles of one tile row of one
 * channel block: tile j reads from column iw0 + 4j and writes its point p at
 * v + j*16 + p*pstride. */
typedef struct vn_wino_in_args {
    const float *x; /* one channel block of one image: [IH][IW][16] */
    int64_t IH, IW, ih0, iw0, ntiles;
    float *v;
    int64_t pstride;
} vn_wino_in_args;

/* Output transform of `ntiles` tiles of one tile row of one output block:
 * tile j reads point p at m + j*16 + p*pstride and writes output rows
 * [oh0, oh0+4) x columns [4j, 4j+4), clipped to OH x OW. */
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
    void (*input_row)(const vn_wino_in_args *a);
    void (*output_row)(const vn_wino_out_args *a);
} vn_wino_table;

extern const vn_wino_table vn_wino_table_scalar;
extern const vn_wino_table vn_wino_table_avx2;
extern const vn_wino_table vn_wino_table_avx512;

/* The table of the active ISA. */
const vn_wino_table *vn_wino_table_get(void);

#endif /* VINCI_KERNEL_WINOGRAD_KERNELS_H */
