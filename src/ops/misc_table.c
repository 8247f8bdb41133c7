/*
 * misc_table.c — the registry table of the misc family (see misc.h).
 */
#include "ops/math.h"
#include "ops/misc.h"

const vn_op_def *const *vn_ops_misc_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {
        &vn_misc_topk_def,    &vn_misc_cumsum_def,       &vn_misc_onehot_def,
        &vn_misc_trilu_def,   &vn_misc_nonzero_def,      &vn_misc_einsum_def,
        &vn_misc_cumprod_def, &vn_misc_det_def,          &vn_misc_mvn_def,
        &vn_misc_rotary_def,  &vn_misc_unique_def,       &vn_misc_tensorscatter_def,
        &vn_misc_scatter_def, &vn_misc_bitshift_def.def, &vn_misc_swish_def.def};
    *count = (int32_t)(sizeof ptrs / sizeof ptrs[0]);
    return ptrs;
}
