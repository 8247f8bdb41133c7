/*
 * extra.h — ONNX operators added for conformance, one per file:
 * NonMaxSuppression (nms.c), CenterCropPad (center_crop_pad.c), Compress
 * (compress.c), ReverseSequence (reverse_sequence.c), RoiAlign
 * (roi_align.c), MaxUnpool (max_unpool.c), Col2Im (col2im.c), AffineGrid
 * (affine_grid.c), DeformConv (deform_conv.c), EyeLike (eye_like.c),
 * BitCast (bitcast.c), OptionalHasElement / OptionalGetElement
 * (optional.c), CausalConvWithState (causal_conv_state.c), TfIdfVectorizer
 * (tfidf.c), the ai.onnx.preview.training optimizers Adagrad, Momentum and
 * Adam (optimizers.c), and ai.onnx.ml Binarizer (ml_binarizer.c),
 * ArrayFeatureExtractor (ml_array_feature_extractor.c) and TreeEnsemble
 * (ml_tree_ensemble.c), gathered into one registry table by extra_table.c.
 */
#ifndef VINCI_OPS_EXTRA_H
#define VINCI_OPS_EXTRA_H

#include "ops/shape_ops.h"

extern const vn_op_def vn_nms_def, vn_center_crop_pad_def, vn_compress_def, vn_reverse_sequence_def,
    vn_roi_align_def, vn_max_unpool_def, vn_col2im_def, vn_affine_grid_def, vn_deform_conv_def,
    vn_eye_like_def, vn_bitcast_def, vn_optional_has_element_def, vn_optional_get_element_def,
    vn_adagrad_def, vn_momentum_def, vn_adam_def, vn_binarizer_def, vn_array_feature_extractor_def,
    vn_causal_conv_state_def, vn_tfidf_def, vn_tree_ensemble_def;

#endif /* VINCI_OPS_EXTRA_H */
