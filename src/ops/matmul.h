/*
 * matmul.h — what the matrix operators (MatMul, Gemm, MatMulInteger,
 * QLinearMatMul, vinci::FusedMatMul) share: the mapping of an ONNX batched
 * product onto GEMM launches, the common plan record, packing a constant B
 * once, and the run loop.
 *
 * Mapping: the batch dims of the output (numpy-broadcast from A's and B's)
 * become one GEMM batch (the innermost dims that collapse into one stride
 * for A and B; stride 0 where an operand is broadcast) and an outer loop of
 * launches over the rest. When B has no batch of its own and A is not
 * transposed, the batch folds into M instead: one [batch*M, K] x [K, N]
 * product, so the weights are packed once per panel, not once per batch.
 */
#ifndef VINCI_OPS_MATMUL_H
#define VINCI_OPS_MATMUL_H

#include "ops/ops_internal.h"
#include "vinci/gemm.h"

/* Plan-time hook for a constant B. Where vn_op_ctx.input_data does not
 * carry B's data (the single-operator API), a caller (through
 * vn_matmul_plan_create_const_b) adds an INT attribute of this name whose
 * value is the address of B's data (dense, of B's planned shape and dtype,
 * readable during plan creation only): the plan then packs B once and every
 * run reads the packed copy. Results are bit-identical to the unpacked path. */
#define VN_MATMUL_CONST_B_ATTR "_vinci_const_b"

/* A batched product as GEMM launches (see the mapping above). Element
 * strides; C (and a residual of C's shape) are dense. */
typedef struct vn_mm_layout {
    int64_t M, N, K;
    bool trans_a, trans_b;
    int64_t batch;                        /* the GEMM's batch */
    int64_t stride_a, stride_b, stride_c; /* its batch strides (0: broadcast) */
    int32_t outer_rank;                   /* launches loop over these dims */
    int64_t outer_dims[VN_MAX_RANK];
    int64_t outer_a[VN_MAX_RANK], outer_b[VN_MAX_RANK], outer_c[VN_MAX_RANK];
    int64_t outer_count;
    bool b_outer; /* B differs between launches */
} vn_mm_layout;

/* ONNX MatMul shapes (1-D operands promoted and the added dim removed,
 * batch dims broadcast), with A / B stored transposed in their last two dims
 * when trans_a / trans_b (FusedMatMul). Fills the output shape (dtype of A)
 * and the layout; VN_ERR_SHAPE naming both shapes when they do not fit. */
vn_status vn_mm_layout_nd(const char *where, const vn_tensor_desc *a, const vn_tensor_desc *b,
                          bool trans_a, bool trans_b, vn_tensor_desc *y, vn_mm_layout *lay);
/* A plain 2-D product (Gemm): batch 1, no outer loop. */
void vn_mm_layout_2d(int64_t M, int64_t N, int64_t K, bool trans_a, bool trans_b,
                     vn_mm_layout *lay);

/* The plan every matrix operator keeps. */
typedef struct vn_mm_plan {
    vn_mm_layout lay;
    vn_gemm_desc desc;    /* the GEMM of one launch (epilogue included) */
    vn_gemm_plan *gemm;   /* planned once; NULL when built per run (int8 params) */
    void *packed_b;       /* the constant B packed, or NULL */
    bool packed_borrowed; /* packed_b points into an offline model: not freed */
    size_t packed_one;    /* bytes of one launch's packed B */
    int32_t in_bias;      /* input index of the bias, residual, C; -1: none */
    int32_t in_residual;
    int32_t in_c;
    vn_op_plan *post_add; /* residual added after the activation (FusedMatMul) */
} vn_mm_plan;

/* The GEMM descriptor of one launch of `lay` (operand dtypes and compute
 * set by the caller afterwards; epilogue defaults). */
vn_gemm_desc vn_mm_gemm_desc(const vn_mm_layout *lay);

/* A and B of one float dtype the GEMM takes (f32 or bf16); VN_ERR_DTYPE
 * naming both otherwise (f16: the GEMM has no f16 operands). */
vn_status vn_mm_check_float(const char *where, const vn_tensor_desc *a, const vn_tensor_desc *b);
/* Operand, output and compute dtypes of a float product in `dt`, the
 * compute dtype bf16 when attribute compute = "bf16" (matmul.c). */
vn_status vn_mm_set_float(const char *where, const vn_attrs *attrs, vn_gemm_desc *d, vn_dtype dt);

/* Create p->gemm from p->desc, re-reporting a GEMM error under `where`. */
vn_status vn_mm_plan_gemm(const char *where, vn_device *device, vn_mm_plan *p);
/* vn_gemm_plan_create with the GEMM's message re-reported under `where`. */
vn_status vn_mm_gemm_create(const char *where, vn_device *device, const vn_gemm_desc *desc,
                            vn_gemm_plan **out);

/* Pack a constant B (as planned: dense, all batches) into p->packed_b. */
vn_status vn_mm_pack_b(const char *where, vn_mm_plan *p, const void *b);
/* p->gemm for an operator whose B is input `b_index`: when B is a constant
 * (ctx->input_data, VN_MATMUL_CONST_B_ATTR or a pre-packed blob) the GEMM is
 * tiled for a packed B, and B is packed now when its data is known. */
vn_status vn_mm_plan_gemm_b(const char *where, const vn_op_ctx *ctx, int32_t b_index,
                            vn_mm_plan *p);

/* Allocate a zeroed plan with no optional inputs. */
vn_mm_plan *vn_mm_plan_new(void);
/* Free a plan and everything it owns (the vn_op_def plan_free). */
void vn_mm_plan_free(void *plan_data);

/* The tensors of one run (residual f32, dense like C; c_in f32). */
typedef struct vn_mm_io {
    const void *a, *b;
    void *c;
    const void *c_in;
    const float *bias;
    const void *residual;
    const float *col_scale;
} vn_mm_io;

/* Run `gemm` (p->gemm, or one planned for this run) over the layout's
 * launches, with p's packed B when there is one; counters summed. */
vn_status vn_mm_execute(const vn_mm_plan *p, const vn_gemm_plan *gemm, const vn_mm_io *io,
                        vn_kernel_counters *counters);

/* An f32 view of an optional f32 / bf16 / f16 operand: the data itself when
 * f32, else converted into `ws` (numel floats). */
const float *vn_mm_as_f32(const vn_tensor *t, void *ws);
/* Bytes of workspace vn_mm_as_f32 needs for `d` (0 for f32). */
size_t vn_mm_f32_bytes(const vn_tensor_desc *d);

/* Whether optional input `i` is present. */
static inline bool vn_mm_has_input(const vn_op_ctx *ctx, int32_t i)
{
    return ctx->num_inputs > i && ctx->inputs[i].rank >= 0;
}

/* The operator defs (one file each) and the family table. */
extern const vn_op_def vn_matmul_def, vn_gemm_op_def, vn_matmul_integer_def, vn_qlinear_matmul_def,
    vn_fused_matmul_def;

/* Plan `op_name` (any operator of this family) with B (input 1) constant:
 * `b` is packed at plan time (see VN_MATMUL_CONST_B_ATTR). */
vn_status vn_matmul_plan_create_const_b(vn_device *device, const char *op_name,
                                        const vn_tensor_desc *inputs, int32_t num_inputs,
                                        const vn_attrs *attrs, const void *b, vn_op_plan **out);
/* Pack a constant B into an operator's own plan data (as the graph engine
 * holds it from vn_op_def.plan), before its first run. */
vn_status vn_matmul_pack_constant_b(void *plan_data, const void *b);

#endif /* VINCI_OPS_MATMUL_H */
