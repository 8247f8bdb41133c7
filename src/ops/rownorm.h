/*
 * rownorm.h — the row-normalisation kernel shared by LayerNormalization and
 * RMSNormalization: x seen as [rows, H], each row normalised over its H
 * elements in f32 (f16 / bf16 rows are cast to f32 in scratch), then scaled
 * (and shifted) by per-column gamma (and beta).
 */
#ifndef VINCI_OPS_ROWNORM_H
#define VINCI_OPS_ROWNORM_H

#include "ops/ops_internal.h"

typedef enum vn_rownorm_mode {
    VN_ROWNORM_LAYER = 0, /* (x - mean) / sqrt(var + eps), two-pass variance */
    VN_ROWNORM_RMS        /* x / sqrt(mean(x^2) + eps) */
} vn_rownorm_mode;

/* Tiling: a tile is R whole rows held in scratch (cpr == 1, "resident"), or,
 * when one row does not fit, one row streamed in cpr chunks of C columns
 * (R == 1; the row is read once per pass). */
typedef struct vn_rownorm_plan {
    vn_rownorm_mode mode;
    vn_dtype dtype;
    int64_t rows, H;
    double eps;
    bool has_bias;
    int64_t R, C, cpr, tiles;
    int32_t block_dim;
} vn_rownorm_plan;

vn_status vn_rownorm_plan_build(const char *where, vn_device *device, vn_rownorm_plan *p);
/* scale and bias have H elements; bias may be NULL when !has_bias. */
vn_status vn_rownorm_execute(vn_device *device, const vn_rownorm_plan *p, const void *x,
                             const void *scale, const void *bias, void *y,
                             vn_kernel_counters *counters);

#endif /* VINCI_OPS_ROWNORM_H */
