/*
 * resize.h — Resize (ONNX 10, 11, 13, 18, 19) and Upsample (7, 9), shared by
 * resize_params.c (attributes and constant inputs -> output shape and
 * per-axis scales), resize_taps.c (per-axis source index / weight tables,
 * following the ONNX reference's coordinate and coefficient rules),
 * resize_kernel.c (one separable pass) and resize_op.c (the operators).
 *
 * Resize is separable: each resized axis is one pass [outer, in, inner] ->
 * [outer, out, inner] where output position o is the weighted sum of `taps`
 * source positions along the axis. Nearest (one tap of weight 1) is a pure
 * gather and runs through the view engine in one pass, exact for every dtype.
 */
#ifndef VINCI_OPS_RESIZE_H
#define VINCI_OPS_RESIZE_H

#include "ops/shape_ops.h"

typedef enum rz_mode { RZ_NEAREST, RZ_LINEAR, RZ_CUBIC } rz_mode;

/* coordinate_transformation_mode */
typedef enum rz_ctm {
    RZ_HALF_PIXEL,
    RZ_HALF_PIXEL_SYMMETRIC,
    RZ_PYTORCH_HALF_PIXEL,
    RZ_ALIGN_CORNERS,
    RZ_ASYMMETRIC,
    RZ_TF_CROP_AND_RESIZE
} rz_ctm;

/* nearest_mode; RZ_SIMPLE is the rule of Resize-10 / Upsample (no
 * nearest_mode attribute): floor when upsampling, ceil when downsampling. */
typedef enum rz_nearest {
    RZ_ROUND_PREFER_FLOOR,
    RZ_ROUND_PREFER_CEIL,
    RZ_FLOOR,
    RZ_CEIL,
    RZ_SIMPLE
} rz_nearest;

typedef struct rz_params {
    rz_mode mode;
    rz_ctm ctm;
    rz_nearest nearest;
    double cubic_a, extrapolation;
    bool exclude_outside, antialias;
    int32_t rank;
    int64_t in[VN_MAX_RANK], out[VN_MAX_RANK];
    double scale[VN_MAX_RANK];                       /* per axis, 1 where not resized */
    double roi_lo[VN_MAX_RANK], roi_hi[VN_MAX_RANK]; /* tf_crop_and_resize only */
} rz_params;

/* Everything that decides the output: attributes, and the constant roi /
 * scales / sizes inputs (VN_ERR_UNSUPPORTED when one of them is needed and not
 * known at plan time). `upsample` selects Upsample's signature. */
vn_status vn_rz_params(const vn_op_ctx *ctx, const char *where, bool upsample, rz_params *p);

/* True when axis d is left as it is (the reference skips such axes). */
bool vn_rz_axis_identity(const rz_params *p, int32_t d);

/* The taps of one axis: for output position o, source indices
 * idx[o * n .. o * n + n) (clamped into [0, in)) with weights w[...];
 * idx[o * n] == -1 marks a position that takes the extrapolation value. */
typedef struct rz_taps {
    int32_t n;
    int64_t *idx;
    float *w;
} rz_taps;

vn_status vn_rz_taps(const rz_params *p, int32_t d, const char *where, rz_taps *t);
void vn_rz_taps_free(rz_taps *t);

/* One separable pass over f32 data: src [outer, in, inner] -> dst [outer,
 * out, inner] (multi-block). */
typedef struct rz_pass {
    int64_t outer, in, out, inner;
    rz_taps taps;
    int32_t block_dim;
} rz_pass;

vn_status vn_rz_pass_run(vn_device *device, const rz_pass *pass, const float *src, float *dst,
                         float extrapolation, vn_kernel_counters *counters);

const vn_op_def *const *vn_ops_resize_table(int32_t *count);

#endif /* VINCI_OPS_RESIZE_H */
