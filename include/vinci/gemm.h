/*
 * vinci/gemm.h — the host side of the matrix path: a two-phase GEMM API on top
 * of the cube instructions (kernel.h), for the operators (MatMul, Gemm,
 * MatMulInteger, QLinearMatMul) and the graph engine.
 *
 *   vn_gemm_desc d = vn_gemm_desc_default(M, N, K);      // f32, row-major, no epilogue
 *   d.epi.act = VN_ACT_GELU_ERF;  d.epi.bias_axis = VN_BIAS_COL;
 *   vn_gemm_plan *plan;  vn_gemm_plan_create(dev, &d, &plan);
 *   vn_gemm_run(plan, &(vn_gemm_args){.a = A, .b = B, .c = C, .bias = bias});
 *   // weights: pack once, reuse (bit-identical to the unpacked path)
 *   void *pb = vn_aligned_alloc(vn_gemm_packed_b_size(plan), 64);
 *   vn_gemm_pack_b(plan, B, pb);
 *   vn_gemm_run(plan, &(vn_gemm_args){.a = A, .b = pb, .b_packed = true, .c = C});
 *   vn_gemm_plan_destroy(plan);
 *
 * C (M x N) = epilogue(alpha * op(A) * op(B) + beta * C_in + bias, residual),
 * for `batch` matrices at element strides stride_a/b/c (0: every batch uses the
 * same matrix, i.e. broadcast). op(X) is X or its transpose (trans_a/trans_b);
 * lda/ldb/ldc are the row strides of A, B, C as stored (0: dense).
 *
 * dtypes: A and B f32 (C f32, f16 or bf16); A/B bf16 or f32 -> bf16 compute
 * (compute = VN_BF16, rounding f32 inputs to bf16 at pack time) with f32
 * accumulation; A u8/i8 x B i8/u8 -> i32 accumulation, C i32 (exact), f32
 * (dequantised: scale, col_scale) or u8/i8 (requantised: y_scale, y_zero).
 *
 * The packed B is tied to the plan's shape, dtypes and the process's ISA
 * (vn_gemm_packed_b_layout names it); store the layout string with it.
 * Errors return a vn_status and set vn_last_error(); nothing aborts.
 */
#ifndef VINCI_GEMM_H
#define VINCI_GEMM_H

#include "vinci/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The epilogue of a GEMM (see vn_fixpipe in kernel.h for the exact order). */
typedef struct vn_gemm_epilogue {
    float alpha, beta;        /* C = alpha*AB + beta*C_in; defaults 1 and 0 */
    vn_bias_axis bias_axis;   /* bias per column (N values) or per row (M values) */
    bool has_c_in;            /* C_in given (with beta); broadcast by c_in_rs / c_in_cs */
    int64_t c_in_rs, c_in_cs; /* element strides of C_in; (N, 1) for a full matrix,
                                 (0, 1) a row, (1, 0) a column, (0, 0) a scalar */
    bool has_residual;        /* add a residual tensor of C's shape (row stride ldr) */
    int64_t ldr;              /* 0: N */
    vn_act act;
    float clip_min, clip_max;
    /* int8 */
    int32_t a_zero, b_zero; /* zero points of A and B (as given, before any shift) */
    float scale;            /* dequant scale a_scale*b_scale (0 means 1) */
    bool has_col_scale;     /* per-column b scale (N floats), multiplies scale */
    float y_scale;          /* requantisation to u8/i8 C (0 means 1) */
    int32_t y_zero;
} vn_gemm_epilogue;

typedef struct vn_gemm_desc {
    int64_t M, N, K;
    vn_dtype a_dtype, b_dtype, c_dtype;
    vn_dtype compute;                     /* VN_F32, VN_BF16 or VN_I32 (int8) */
    bool trans_a, trans_b;                /* A stored K x M, B stored N x K */
    int64_t lda, ldb, ldc;                /* 0: dense */
    int64_t batch;                        /* >= 1 */
    int64_t stride_a, stride_b, stride_c; /* elements between batches; 0: broadcast (not C) */
    int64_t stride_c_in, stride_residual; /* elements between batches of C_in / residual */
    vn_gemm_epilogue epi;
    /* A hint: runs pass the plan's pre-packed B (vn_gemm_pack_b), so tile for
     * reading its panels in place. Runs with an unpacked B still work. */
    bool b_prepacked;
} vn_gemm_desc;

/* A descriptor for a dense row-major f32 M x N x K product, batch 1, alpha 1. */
vn_gemm_desc vn_gemm_desc_default(int64_t M, int64_t N, int64_t K);

typedef struct vn_gemm_plan vn_gemm_plan;

/* Validate the descriptor and choose tiling (MC/NC/KC from the device's arenas
 * and the measured caches) and block_dim. `device` NULL: the default device. */
vn_status vn_gemm_plan_create(vn_device *device, const vn_gemm_desc *desc, vn_gemm_plan **out);
void vn_gemm_plan_destroy(vn_gemm_plan *plan);

/* The chosen tiling, for tests, benchmarks and profiles. */
typedef struct vn_gemm_tiling {
    int32_t mr, nr, kp; /* micro-tile */
    int64_t mc, nc, kc; /* block of A in L0A, block width in L1, K chunk */
    int64_t mc_direct;  /* rows per mmad when a packed run reads A in place */
    int64_t mb;         /* rows of one kernel block */
    int32_t block_dim;  /* blocks per launch (all batches) */
    bool gemv;          /* M == 1 f32: B streamed, no packing */
    bool a_padded;      /* runs reading A in place copy it once to uncrowded rows */
} vn_gemm_tiling;
vn_gemm_tiling vn_gemm_plan_tiling(const vn_gemm_plan *plan);

/* Bytes of the pre-packed B (a multiple of 64; for every batch when stride_b
 * != 0), and the layout name to store with it, e.g. "f32.k1.nr32". */
size_t vn_gemm_packed_b_size(const vn_gemm_plan *plan);
const char *vn_gemm_packed_b_layout(const vn_gemm_plan *plan);
/* Pack B (as described by the plan) into `packed` (64-byte aligned). */
vn_status vn_gemm_pack_b(const vn_gemm_plan *plan, const void *b, void *packed);

typedef struct vn_gemm_args {
    const void *a, *b; /* b: as described, or the plan's packed B when b_packed */
    bool b_packed;
    void *c;
    const void *c_in;             /* epi.has_c_in */
    const float *bias;            /* epi.bias_axis */
    const void *residual;         /* epi.has_residual (f32) */
    const float *col_scale;       /* epi.has_col_scale */
    vn_kernel_counters *counters; /* out: this run's launch counters; may be NULL */
} vn_gemm_args;

/* Run the plan (synchronously, on the plan's device). The plan is not
 * modified: runs from several threads at once are safe. */
vn_status vn_gemm_run(const vn_gemm_plan *plan, const vn_gemm_args *args);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_GEMM_H */
