/*
 * reduce.h — the reduction kernel shared by ReduceSum / Mean / Max / Min /
 * Prod / L1 / L2 / LogSumExp / SumSquare and ArgMax / ArgMin.
 *
 * The input's dims split into kept dims (the output's) and reduced dims;
 * adjacent dims of the same kind that are contiguous merge. A tile is a run
 * of output elements; each output element reduces its reduced sub-space in
 * double (an odometer over at most VN_MAX_RANK dims, the innermost run a
 * plain loop).
 */
#ifndef VINCI_OPS_REDUCE_H
#define VINCI_OPS_REDUCE_H

#include "ops/shape_ops.h"

typedef enum vn_reduce_kind {
    VN_RK_SUM = 0,
    VN_RK_MEAN,
    VN_RK_MAX,
    VN_RK_MIN,
    VN_RK_PROD,
    VN_RK_L1,
    VN_RK_L2,
    VN_RK_LOGSUMEXP,
    VN_RK_SUMSQUARE,
    VN_RK_ARGMAX,
    VN_RK_ARGMIN,
    VN_RK_LOGSUM /* log of the sum */
} vn_reduce_kind;

typedef struct vn_reduce_plan {
    vn_reduce_kind kind;
    bool last_index; /* ArgMax / ArgMin select_last_index */
    vn_dtype in_dt, out_dt;
    int32_t nk, nr; /* kept and reduced dims after merging */
    int64_t kdims[VN_MAX_RANK], kstr[VN_MAX_RANK];
    int64_t rdims[VN_MAX_RANK], rstr[VN_MAX_RANK];
    int64_t nout, R, per_tile, tiles;
    int32_t block_dim;
} vn_reduce_plan;

/* Plan a reduction of `x` over the dims in `mask` (output numel nout). */
vn_reduce_plan *vn_reduce_plan_make(const char *where, vn_device *device, vn_reduce_kind kind,
                                    const vn_tensor_desc *x, const bool *mask, vn_dtype out_dt);
vn_status vn_reduce_execute(vn_device *device, const vn_reduce_plan *p, const void *x, void *y,
                            vn_kernel_counters *counters);

const vn_op_def *const *vn_ops_reduce_table(int32_t *count);

#endif /* VINCI_OPS_REDUCE_H */
