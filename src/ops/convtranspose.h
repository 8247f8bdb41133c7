/*
 * convtranspose.h — ConvTranspose (ONNX opset 11) on NC[D][H]W f32, 1-D, 2-D
 * and 3-D.
 *
 * Y[n, g*Mg + m, od, oh, ow] = B[g*Mg + m] + sum over c in group g, kd, kh,
 *     kw of X[n, c, id, ih, iw] * W[c, m, kd, kh, kw],
 *     od = id*sd - pbd + kd*dd (oh, ow alike).
 * Computed as a GEMM per group, col = W_g^T x X_g ([Mg*kD*kH*kW, D*H*W] per
 * image, in the workspace), then a col2im kernel that gathers, for each
 * output row (one (od, oh), all ow), the col rows that land on it (so no two
 * blocks write one element). The geometry always has VN_CONVT_DIMS spatial
 * dims (0 = D, 1 = H, 2 = W): fewer spatial axes are the trailing ones, the
 * leading dims have size, kernel, stride and dilation 1 and no pads.
 */
#ifndef VINCI_OPS_CONVTRANSPOSE_H
#define VINCI_OPS_CONVTRANSPOSE_H

#include "ops/ops_internal.h"
#include "vinci/gemm.h"

#define VN_CONVT_DIMS 3
#define VN_CONVT_W    (VN_CONVT_DIMS - 1) /* the row dim */

typedef struct vn_convt_geom {
    int32_t nsp; /* spatial axes of X: 1 to VN_CONVT_DIMS */
    int64_t N, C, M, G, Cg, Mg;
    int64_t in[VN_CONVT_DIMS], out[VN_CONVT_DIMS], k[VN_CONVT_DIMS], s[VN_CONVT_DIMS];
    int64_t d[VN_CONVT_DIMS], pb[VN_CONVT_DIMS], pe[VN_CONVT_DIMS], op[VN_CONVT_DIMS];
} vn_convt_geom;

/* Validate X [N, C, spatial], W [C, M/group, kernel], optional B [M] and the
 * attributes; compute the output dims and the effective (maybe negative,
 * from output_shape) pads. */
vn_status vn_convt_geom_make(const char *where, const vn_attrs *attrs, const vn_tensor_desc *x,
                             const vn_tensor_desc *w, const vn_tensor_desc *b, vn_convt_geom *g);

typedef struct vn_convt_plan {
    vn_convt_geom g;
    bool has_bias;
    vn_gemm_plan *gemm;  /* NULL when the output is empty */
    int64_t kk, hw;      /* kernel and input spatial sizes: kD*kH*kW, D*H*W */
    int64_t rows, krows; /* output rows OD*OH and kernel rows kD*kH per (n, m) */
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
