/*
 * layout.h — the NCHW <-> NC1HWC0 (5HD) transforms, as kernels.
 *
 * NC1HWC0 of a [N][C][S] f32 tensor (S = product of the spatial dims) is
 * [N][C1 = ceil(C/16)][S][C0 = 16]: element (n, c, s) sits at
 * ((n*C1 + c/16)*S + s)*16 + c%16, and the lanes c >= C of the last block are
 * zero (every producer of an NC1HWC0 tensor keeps them zero; kernels may rely
 * on it). C0 is 16 on every ISA path, so the layout never depends on the ISA.
 * Both transforms are exact (pure data movement): a round trip is bit-identical.
 */
#ifndef VINCI_OPS_LAYOUT_H
#define VINCI_OPS_LAYOUT_H

#include "ops/ops_internal.h"

vn_status vn_layout_to_nc1hwc0(vn_device *device, const float *x, float *y, int64_t N, int64_t C,
                               int64_t S, vn_kernel_counters *counters);
vn_status vn_layout_from_nc1hwc0(vn_device *device, const float *x, float *y, int64_t N, int64_t C,
                                 int64_t S, vn_kernel_counters *counters);

/* The operator table (registry.c): vinci::ToNC1HWC0, vinci::FromNC1HWC0. */
const vn_op_def *const *vn_ops_layout_table(int32_t *count);

#endif /* VINCI_OPS_LAYOUT_H */
