/*
 * broadcast.h — the NumPy / ONNX multidirectional broadcasting rule, and the
 * collapsed iteration space element-wise kernels walk.
 */
#ifndef VINCI_OPS_BROADCAST_H
#define VINCI_OPS_BROADCAST_H

#include "vinci/ops.h"

#define VN_BCAST_MAX_INPUTS 16

/* The output space after collapse: `rank` dims (>= 1), and per input the
 * element stride of each dim (0 where the input is broadcast). Adjacent dims
 * are merged when every operand is contiguous across them; dims of size 1
 * are dropped. Invariant: dims[rank-1] is the fastest-moving dim and, for an
 * input that is not broadcast along it, strides[i][rank-1] == 1. */
typedef struct vn_bcast {
    int32_t rank;
    int32_t num_inputs;
    int64_t dims[VN_MAX_RANK];
    int64_t strides[VN_BCAST_MAX_INPUTS][VN_MAX_RANK];
} vn_bcast;

/* Output shape of broadcasting `inputs` (dtype of input 0). VN_ERR_SHAPE,
 * with `where` and the two shapes and the dim in the message, when two dims
 * differ and neither is 1. */
vn_status vn_broadcast_shape(const char *where, const vn_tensor_desc *inputs, int32_t n,
                             vn_tensor_desc *out);

/* Collapse for `out` = vn_broadcast_shape(inputs); n <= VN_BCAST_MAX_INPUTS. */
void vn_broadcast_collapse(const vn_tensor_desc *inputs, int32_t n, const vn_tensor_desc *out,
                           vn_bcast *b);

#endif /* VINCI_OPS_BROADCAST_H */
