/*
 * prepack.h — the built-in operators' pre-pack hooks (vinci/ops.h,
 * "pre-packed constants") and what their implementations share.
 */
#ifndef VINCI_OPS_PREPACK_H
#define VINCI_OPS_PREPACK_H

#include "ops/ops_internal.h"

/* The hooks of the matrix family (MatMul, Gemm, vinci::FusedMatMul) and of
 * the convolution family, or NULL when `def` is not one of theirs. */
const vn_op_prepack *vn_mm_prepack_hooks(const vn_op_def *def);
const vn_op_prepack *vn_conv_prepack_hooks(const vn_op_def *def);

/* A copy of ctx whose input_data hides the inputs in `consumed` (so the
 * operator's own plan does not pack them); `data` holds ctx->num_inputs
 * pointers (at most 64). */
vn_op_ctx vn_prepack_ctx(const vn_op_ctx *ctx, uint64_t consumed, const void **data);

/* VN_ERR_FORMAT "where: packed blob i: ..." unless blob i has `size` bytes,
 * the `layout` and 64-byte alignment. */
vn_status vn_prepack_check_blob(const char *where, const vn_op_blob *blob, int32_t i, size_t size,
                                const char *layout);

#endif /* VINCI_OPS_PREPACK_H */
