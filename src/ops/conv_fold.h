/*
 * conv_fold.h — BatchNorm folding for the graph engine: Conv followed by
 * BatchNormalization (inference) is one convolution with
 *   W'[k] = W[k] * f,  b'[k] = (b[k] - mean[k]) * f + shift[k],
 *   f = scale[k] / sqrt(var[k] + eps)
 * computed in double and rounded once to f32. Apply it to the ONNX weights
 * [K][C/G][KH][KW] (per_channel = C/G*KH*KW) before packing; `bias` is the
 * conv bias (zeros when the Conv had none), updated in place.
 */
#ifndef VINCI_OPS_CONV_FOLD_H
#define VINCI_OPS_CONV_FOLD_H

#include "vinci/base.h"

vn_status vn_conv_fold_bn(int64_t K, int64_t per_channel, float *w, float *bias, const float *scale,
                          const float *shift, const float *mean, const float *var, float eps);

#endif /* VINCI_OPS_CONV_FOLD_H */
