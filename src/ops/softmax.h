/*
 * softmax.h — the Softmax / LogSoftmax kernel over any axis. x is seen as
 * [outer, A, inner] and reduced over A.
 *
 *   rows    (inner == 1): a tile is R rows of A elements; per-row max and sum
 *           are scalars from vector reductions;
 *   columns (inner > 1): a tile is one outer index and C columns of inner,
 *           all A rows; max and sum are vectors of C lanes, accumulated with
 *           element-wise max / add across the A rows (inner vectorised, no
 *           transpose).
 *
 * When a tile's A extent does not fit in scratch it is streamed in chunks
 * (max pass, sum pass, output pass; x is read three times).
 */
#ifndef VINCI_OPS_SOFTMAX_H
#define VINCI_OPS_SOFTMAX_H

#include "ops/ops_internal.h"

typedef struct vn_softmax_plan {
    bool log;
    bool columns;
    vn_dtype dtype;
    int64_t outer, A, inner;
    /* rows: R rows per tile, chunks of C elements of A.
     * columns: C columns of inner per tile (ncc tiles per outer index),
     *          chunks of R rows of A. */
    int64_t R, C, nchunks, ncc, tiles;
    int32_t block_dim;
} vn_softmax_plan;

vn_status vn_softmax_plan_build(const char *where, vn_device *device, vn_softmax_plan *p);
vn_status vn_softmax_execute(vn_device *device, const vn_softmax_plan *p, const void *x, void *y,
                             vn_kernel_counters *counters);

#endif /* VINCI_OPS_SOFTMAX_H */
