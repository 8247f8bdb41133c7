/*
 * pool_c0_kernels.h — the direct max-pooling and global-pooling kernels on
 * NC1HWC0 f32 (src/ops/pool_direct.c, pool_global.c and conv_direct.c run
 * them), one table per ISA (pool_c0_scalar.c, pool_c0_avx2.c,
 * pool_c0_avx512.c compile pool_c0_kernel.inc with different vector macros).
 *
 * Why a kernel of its own: a pixel of NC1HWC0 is one C0 vector of 16
 * channels, so an output pixel is the max of its k*k tap vectors, read
 * straight from the input (which stays in cache across the overlapping
 * windows) and written once. The tile-model pool (pool_kernel.c) makes
 * ~10 passes over scratch per input row instead and runs at a third of
 * memory speed.
 */
#ifndef VINCI_KERNEL_POOL_C0_KERNELS_H
#define VINCI_KERNEL_POOL_C0_KERNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/isa.h"

/* Output rows [oh0, oh1) of one plane: y[oh][ow] = max of x[ih][iw] over
 * ih = oh*sh - ph + i*dh (i < kh), iw = ow*sw - pw + j*dw (j < kw) inside
 * the image; -inf for a window with no pixel inside. */
typedef struct vn_pool_c0_args {
    const float *x; /* [IH][IW][16] */
    float *y;       /* [OH][OW][16] */
    int64_t IH, IW, OW, oh0, oh1;
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
} vn_pool_c0_args;

/* A whole plane to one pixel: y[16] = scale * (sum, or max when `max`, of
 * the n pixels x[0..n)[16]). A sum keeps four partial sums (pixels p mod
 * 4), added as (s0 + s1) + (s2 + s3): the same order, so the same bits, on
 * every ISA. n >= 1. */
typedef void (*vn_pool_c0_plane_fn)(const float *x, int64_t n, bool max, float scale, float *y);

typedef struct vn_pool_c0_table {
    vn_isa isa;
    void (*max_rows)(const vn_pool_c0_args *a);
    vn_pool_c0_plane_fn reduce_plane;
} vn_pool_c0_table;

extern const vn_pool_c0_table vn_pool_c0_table_scalar;
extern const vn_pool_c0_table vn_pool_c0_table_avx2;
extern const vn_pool_c0_table vn_pool_c0_table_avx512;

/* The table of the active ISA. */
const vn_pool_c0_table *vn_pool_c0_table_get(void);

#endif /* VINCI_KERNEL_POOL_C0_KERNELS_H */
