/*
 * gemm_internal.h — the GEMM plan record shared by the plan, the kernels and
 * the run (gemm_plan.c, gemm_kernel.c, gemm_run.c).
 *
 * Tiling (all chosen by the plan, see gemm_plan.c):
 *   a kernel block owns output rows [m0, m0+mb) x columns [n0, n0+nb) of one
 *   batch; per K chunk of kc it packs B (kc x nb) into L1 (B1) once, then per
 *   mc rows packs A (mc x kc) into L0A (A2), mmads into L0C (CO1, mc x nb)
 *   and fixpipes to GM: raw partial sums for all but the last chunk, the
 *   epilogue on the last. A packed run that reads A in place (a_direct) goes
 *   mc_direct rows at a time instead (no L0A block to fit). Invariants:
 *   kc % kp == 0, mc % mr == 0, mc_direct % mr == 0, nb % nr == 0,
 *   mb % mr == 0, and the three buffers fit their arenas.
 */
#ifndef VINCI_KERNEL_GEMM_INTERNAL_H
#define VINCI_KERNEL_GEMM_INTERNAL_H

#include "kernel/cube_internal.h"
#include "vinci/gemm.h"

struct vn_gemm_plan {
    vn_device *device;
    vn_gemm_desc d;
    vn_dtype a_op, b_op, acc; /* operand dtypes in L1/L0 and the L0C dtype */
    vn_cube_shape s;
    int64_t a_rs, a_cs, b_rs, b_cs, ldc; /* element strides of op(A), op(B), C */
    int64_t kc, mc, nb, mb, mt, nt;
    int64_t mc_direct; /* rows per mmad when A is read in place (>= mc) */
    int32_t block_dim;
    bool gemv;     /* M == 1 f32 with a contiguous A row */
    bool b_direct; /* f32 B with contiguous columns read in place (vn_cube_mmad_gm) */
    bool a_direct; /* f32 A with contiguous rows read in place by packed-B runs (mmad_packed_direct)
                    */
    bool b_run_pack;        /* a run packs an unpacked B first (vn_gemm_pack_kernel), then reads
                               it as pre-packed */
    bool a_with_b1;         /* unpacked runs read A in place against each tile's B block in B1
                               (vn_cube_mmad_a_gm) */
    int64_t pk_np, pk_nt;   /* that packing: panels per block, blocks per B matrix */
    bool b_next_pf;         /* a packed-B tile queues the next B block into L2 (L2 holds both) */
    bool a_run_pad;         /* a run reading A in place first copies it to rows a_pad_rs apart */
    int64_t a_pad_rs;       /* (its rows lie a multiple of 4 KiB apart: vn_rows_crowd_l1) */
    int64_t gv_nb, gv_nt;   /* GEMV: columns per block, blocks per batch */
    int32_t a_zero, b_zero; /* effective zero points after the loads' shifts */
    int64_t packed_elems;   /* one packed B, panels only */
    int64_t packed_bytes;   /* one packed B with its column sums, 64-byte multiple */
    char layout[48];
};

/* Arguments of one launch (both kernels). */
typedef struct vn_gemm_kargs {
    const vn_gemm_plan *p;
    vn_gm a, b, c, part, c_in, res, bias, col_scale, row_sum, col_sum;
    int64_t ldp, part_stride; /* partial sums: row stride, batch stride */
    bool b_packed;
    vn_gm b_src;  /* b_run_pack: the unpacked B, packed into b (then b_packed) */
    vn_gm a_src;  /* a_run_pad: the caller's A, copied into a */
    int64_t a_rs; /* row stride of A as the kernels read it (p->a_rs, or p->a_pad_rs) */
} vn_gemm_kargs;

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Whether this run reads A in place: against a pre-packed B (or one the
 * run packed), or against each tile's B block in B1 (a_with_b1). */
static inline bool vn_gemm_reads_a_in_place(const vn_gemm_kargs *g)
{
    return g->p->a_direct && (g->b_packed || g->p->a_with_b1);
}

/* Pack columns [n0, n0 + n) (n0 a multiple of NR) of B matrix m (b: the
 * unpacked B as described, all batches) into `packed` laid out as
 * vn_gemm_pack_b lays it out (panel q at q * NR * Kp elements), zeroing the
 * panels' padding where there is any. */
void vn_gemm_pack_columns(const vn_gemm_plan *p, void *packed, const void *b, int64_t m, int64_t n0,
                          int64_t n);

void vn_gemm_kernel(vn_core *core, const void *args);
void vn_gemm_pack_kernel(vn_core *core, const void *args);
void vn_gemm_pad_a_kernel(vn_core *core, const void *args);
void vn_gemv_kernel(vn_core *core, const void *args);

/* The fixpipe settings every tile of the plan shares (pointers unset). */
vn_fixpipe vn_gemm_fixpipe_base(const vn_gemm_plan *p);

#endif /* VINCI_KERNEL_GEMM_INTERNAL_H */
