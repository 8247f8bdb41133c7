/*
 * shape_ops_table.c — the data-movement family's table for the registry:
 * every operator of the shape_ops_*.c files, in file order.
 */
#include "ops/shape_ops.h"

#define MAX_DEFS 64

const vn_op_def *const *vn_ops_shape_table(int32_t *count)
{
    static const vn_op_def *ptrs[MAX_DEFS];
    const vn_op_def *const arrays[] = {vn_so_reshape_defs, vn_so_transpose_defs, vn_so_slice_defs,
                                       vn_so_expand_defs,  vn_so_pad_defs,       vn_so_concat_defs,
                                       vn_so_info_defs};
    const int32_t counts[] = {vn_so_reshape_count, vn_so_transpose_count, vn_so_slice_count,
                              vn_so_expand_count,  vn_so_pad_count,       vn_so_concat_count,
                              vn_so_info_count};
    int32_t n = 0;
    /* Filled under the registry's pthread_once; the same values every time. */
    for (size_t a = 0; a < sizeof counts / sizeof counts[0]; a++)
        for (int32_t i = 0; i < counts[a] && n < MAX_DEFS; i++) ptrs[n++] = &arrays[a][i];
    *count = n;
    return ptrs;
}
