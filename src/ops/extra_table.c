/*
 * extra_table.c — the registry table of the operators of extra.h.
 */
#include "ops/extra.h"

const vn_op_def *const *vn_ops_extra_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&vn_nms_def,
                                            &vn_center_crop_pad_def,
                                            &vn_compress_def,
                                            &vn_reverse_sequence_def,
                                            &vn_roi_align_def,
                                            &vn_max_unpool_def,
                                            &vn_col2im_def,
                                            &vn_affine_grid_def,
                                            &vn_deform_conv_def,
                                            &vn_eye_like_def,
                                            &vn_bitcast_def,
                                            &vn_optional_has_element_def,
                                            &vn_optional_get_element_def,
                                            &vn_adagrad_def,
                                            &vn_momentum_def,
                                            &vn_adam_def,
                                            &vn_binarizer_def,
                                            &vn_array_feature_extractor_def,
                                            &vn_causal_conv_state_def,
                                            &vn_tfidf_def,
                                            &vn_tree_ensemble_def};
    *count = (int32_t)(sizeof ptrs / sizeof ptrs[0]);
    return ptrs;
}
