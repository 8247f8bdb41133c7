/*
 * misc_table.c — the registry table of the misc family (see misc.h).
 */
#include "ops/misc.h"

const vn_op_def *const *vn_ops_misc_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&vn_misc_topk_def,    &vn_misc_cumsum_def,
                                            &vn_misc_onehot_def,  &vn_misc_trilu_def,
                                            &vn_misc_nonzero_def, &vn_misc_einsum_def};
    *count = (int32_t)(sizeof ptrs / sizeof ptrs[0]);
    return ptrs;
}
