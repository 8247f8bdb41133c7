/*
 * extra_table.c — the registry table of the operators of extra.h.
 */
#include "ops/extra.h"

const vn_op_def *const *vn_ops_extra_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {
        &vn_nms_def,         &vn_center_crop_pad_def, &vn_compress_def, &vn_reverse_sequence_def,
        &vn_roi_align_def,   &vn_max_unpool_def,      &vn_col2im_def,   &vn_affine_grid_def,
        &vn_deform_conv_def, &vn_eye_like_def};
    *count = (int32_t)(sizeof ptrs / sizeof ptrs[0]);
    return ptrs;
}
