/*
 * gather.h — the index-driven data movement families (Gather,
 * GatherElements, GatherND; ScatterElements, ScatterND): shared index
 * checking and the per-file operator arrays gathered into the tables.
 */
#ifndef VINCI_OPS_GATHER_H
#define VINCI_OPS_GATHER_H

#include "ops/shape_ops.h"

/* Checks that input `i` holds int32 / int64 indices. */
vn_status vn_gather_check_indices(const vn_op_ctx *ctx, const char *where, int32_t i);

/* Index element j as an int64 in [0, dim), negative ones counted from the
 * end; fails the block (naming `op`) when out of range. */
int64_t vn_gather_index(vn_core *core, const char *op, vn_dtype dt, const void *idx, int64_t j,
                        int64_t dim);

extern const vn_op_def vn_gather_elements_defs[];
extern const vn_op_def vn_gather_nd_defs[];

const vn_op_def *const *vn_ops_scatter_table(int32_t *count);

#endif /* VINCI_OPS_GATHER_H */
