/*
 * fused.h — the generic fused element-wise engine: a vn_fused_program, its
 * register assignment, its tiling over a broadcast output, and the kernel
 * that runs it tile by tile in scratch (one pass over memory).
 *
 * Every element-wise operator of the registry is a (short) program run by
 * this one engine; "vinci::FusedElementwise" runs a user's or the graph
 * compiler's longer programs.
 */
#ifndef VINCI_OPS_FUSED_H
#define VINCI_OPS_FUSED_H

#include "ops/broadcast.h"
#include "ops/ops_internal.h"

#define VN_FUSED_MAX_INPUTS VN_BCAST_MAX_INPUTS
_Static_assert(VN_FUSED_MAX_INPUTS <= VN_VPROGRAM_MAX_INPUTS, "a chunked plan is one vn_vprogram");
#define VN_FUSED_MAX_REGS (VN_FUSED_MAX_INPUTS + VN_FUSED_MAX_INSTRS)

/* How an input is brought into scratch. */
typedef enum vn_fused_class {
    VN_FUSED_FULL = 0, /* same layout as the output: one copy of the tile's rows */
    VN_FUSED_SCALAR,   /* one element: duplicated once per block into a constant */
    VN_FUSED_ROWCONST, /* only the innermost dim varies and tiles hold whole rows:
                          the tile's content never changes, loaded once per block */
    VN_FUSED_GENERAL   /* anything else: row segments, duplicated where broadcast */
} vn_fused_class;

/* Where a register lives while a tile is computed. */
typedef enum vn_fused_reg_kind {
    VN_REG_UNUSED = 0, /* an input no instruction reads: never loaded */
    VN_REG_QUEUE, /* an input read where it lies: its VECIN queue buffer (in place: its window) */
    VN_REG_CONST, /* a constant buffer filled once per block */
    VN_REG_SLOT,  /* a VECCALC buffer, reused once its value is dead */
    VN_REG_OUT    /* the VECOUT buffer (in place: the output window): the result and,
                     staged, the chain leading to it (no cast) */
} vn_fused_reg_kind;

typedef struct vn_fused_plan {
    vn_fused_program prog;
    vn_dtype io;  /* dtype in global memory */
    vn_dtype cdt; /* compute dtype: f32 for f16 / bf16, else io */
    vn_bcast b;
    uint8_t cls[VN_FUSED_MAX_INPUTS];
    /* registers: inputs 0..num_inputs-1, then one per instruction */
    uint8_t reg_kind[VN_FUSED_MAX_REGS];
    int16_t reg_index[VN_FUSED_MAX_REGS]; /* slot or constant number */
    int16_t last_use[VN_FUSED_MAX_REGS];  /* last instruction reading it, -1 if none */
    int32_t num_slots, num_consts;
    /* tiling: tile t covers rows [r, r + R) and columns [c, c + C) of the
     * collapsed output seen as [rows, L] */
    int64_t numel, L, rows, C, R, cpr, tiles, cap;
    int32_t block_dim;
    /* Tiles are computed where they lie (vn_gm_window), without VECIN / VECOUT
     * copies: no casts, and every input read is whole-tensor or constant in a
     * layout without row padding (fused_plan.c). Then only the final result is
     * in OUT (the output window) and queue inputs are windows. */
    bool in_place;
    /* In place, f32, several instructions, the output past the caches: the
     * program runs as one vn_vprogram per tile, chunk by chunk, so its reads
     * and its streamed writes overlap (ReLU-Add over 64 Mi elements 4-7 %
     * faster; on cache-resident tiles the per-chunk calls cost 3-5 %). Its
     * intermediates live on the stack: no VECCALC slots. */
    bool chunked;
} vn_fused_plan;

/* Checks a program for `num_inputs` inputs of dtype `dtype`: register
 * numbers, op kinds, and that each op exists for the compute dtype. */
vn_status vn_fused_validate(const char *where, const vn_fused_program *prog, int32_t num_inputs,
                            vn_dtype dtype);
/* Liveness and register assignment for a plan whose prog, io, cdt, cls and
 * in_place are set. */
void vn_fused_assign_registers(vn_fused_plan *p);

/* A plan for `prog` over `inputs` broadcast to `out`. */
vn_status vn_fused_plan_build(const char *where, vn_device *device, const vn_fused_program *prog,
                              const vn_tensor_desc *inputs, int32_t num_inputs,
                              const vn_tensor_desc *out, vn_fused_plan **plan);
/* Launch the plan's kernel on `device`. */
vn_status vn_fused_execute(vn_device *device, const vn_fused_plan *plan, const vn_tensor *inputs,
                           vn_tensor *out, vn_kernel_counters *counters);

/* Element-wise infer shared by every element-wise operator: same dtype for
 * every input, broadcast shapes. */
vn_status vn_fused_infer_shape(const vn_op_ctx *ctx, vn_tensor_desc *out);
/* plan_free / run shared by every operator whose plan data is a vn_fused_plan. */
void vn_fused_plan_free(void *plan_data);
vn_status vn_fused_run(const vn_op_run_ctx *ctx);

/* The program as attributes of "vinci::FusedElementwise" (so a graph can
 * store and reload it): "ops", "src0", "src1" (INTS), "scalars" (FLOATS). */
typedef struct vn_fused_attr_store {
    int64_t ops[VN_FUSED_MAX_INSTRS], src0[VN_FUSED_MAX_INSTRS], src1[VN_FUSED_MAX_INSTRS];
    float scalars[VN_FUSED_MAX_INSTRS];
    vn_attr items[4];
    vn_attrs attrs;
} vn_fused_attr_store;
void vn_fused_to_attrs(const vn_fused_program *prog, vn_fused_attr_store *store);
vn_status vn_fused_from_attrs(const char *where, const vn_attrs *attrs, int32_t num_inputs,
                              vn_fused_program *prog);

#endif /* VINCI_OPS_FUSED_H */
