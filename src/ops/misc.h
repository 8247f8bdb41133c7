/*
 * misc.h — the remaining ONNX operators, one concept per file: TopK
 * (misc_topk.c), CumSum (misc_cumsum.c), OneHot (misc_onehot.c), Trilu
 * (misc_trilu.c), NonZero (misc_nonzero.c) and Einsum (misc_einsum.c),
 * gathered into one registry table by misc_table.c.
 */
#ifndef VINCI_OPS_MISC_H
#define VINCI_OPS_MISC_H

#include "ops/shape_ops.h"

/* x seen as [outer, A, inner] around dim `axis`. */
static inline void vn_misc_split3(const vn_tensor_desc *x, int32_t axis, int64_t *outer, int64_t *A,
                                  int64_t *inner)
{
    *outer = *inner = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        if (d < axis) *outer *= x->dims[d];
        if (d > axis) *inner *= x->dims[d];
    }
    *A = x->rank > 0 ? x->dims[axis] : 1;
}

extern const vn_op_def vn_misc_topk_def, vn_misc_cumsum_def, vn_misc_onehot_def, vn_misc_trilu_def,
    vn_misc_nonzero_def, vn_misc_einsum_def;
/* CumProd (misc_cumsum.c), Det, MeanVarianceNormalization, RotaryEmbedding,
 * Unique, TensorScatter, Scatter (the old name of ScatterElements) and,
 * on the scalar element-wise engine (math.h), BitShift and Swish. */
extern const vn_op_def vn_misc_cumprod_def, vn_misc_det_def, vn_misc_mvn_def, vn_misc_rotary_def,
    vn_misc_unique_def, vn_misc_tensorscatter_def, vn_misc_scatter_def;
typedef struct vn_math_def vn_math_def;
extern const vn_math_def vn_misc_bitshift_def, vn_misc_swish_def;

const vn_op_def *const *vn_ops_misc_table(int32_t *count);

#endif /* VINCI_OPS_MISC_H */
