/*
 * convtranspose.h — ConvTranspose (ONNX opset 11) on NCHW f32, 1-D and 2-D.
 *
 * Y[n, g*Mg + m, oh, ow] = B[g*Mg + m] + sum over c in group g, kh, kw of
 *     X[n, c, ih, iw] * W[c, m, kh, kw],   oh = ih*sh - pbh + kh*dh (ow alike).
 * Computed as a GEMM per group, col = W_g^T x X_g ([Mg*kH*kW, H*W] per image,
 * in the workspace), then a col2im kernel that gathers, for each output row,
 * the col rows that land on it (so no two blocks write one element).
 * Geometry is kept in two dims (0 = H, 1 = W); 1-D has H = kH = 1.
 */
#ifndef VINCI_OPS_CONVTRANSPOSE_H
#define VINCI_OPS_CONVTRANSPOSE_H

#include "ops/ops_internal.h"
#include "vinci/gemm.h"

typedef struct vn_convt_geom {
    int32_t nsp;
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[2], out[2], k[2], s[2], d[2], pb[2], pe[2], op[2];
} vn_convt_geom;

/* Validate X [N, C, spatial], W [C, M/group, kernel], optional B [M] and the
 * attributes; compute the output dims and the effective (maybe negative,
 * from output_shape) pads. */
vn_status vn_convt_geom_make(const char *where, const vn_attrs *attrs, const vn_tensor_desc *x,
                             const vn_tensor_desc *w, const vn_tensor_desc *b, vn_convt_geom *g);

typedef struct vn_convt_plan {
    vn_convt_geom g;
    bool has_bias;
    vn_gemm_plan *gemm; /* NULL when the output is empty */
    int64_t kk, hw;     /* kH*kW, H*W */
    int64_t R, row_tiles, tiles;
    int32_t block_dim;
    int64_t *iw_lo, *iw_hi; /* per kw: input columns landing inside [0, OW) */
} vn_convt_plan;

vn_status vn_convt_col2im_plan(const char *where, vn_device *device, vn_convt_plan *p);
/* y from col (the workspace; NULL: no input contributes) and bias (NULL when
 * absent). */
vn_status vn_convt_col2im(vn_device *device, const vn_convt_plan *p, const float *col,
                          const float *bias, float *y, vn_kernel_counters *counters);

#endif /* VINCI_OPS_CONVTRANSPOSE_H */
