/*
 * fused_plan.c — tiling of a fused element-wise program over a broadcast
 * output, and the operator callbacks every element-wise operator shares.
 *
 * The collapsed output is seen as [rows, L] (L the innermost collapsed dim).
 * When a padded row fits a tile, a tile is R whole rows ("packed"); else a
 * tile is one chunk of C columns of one row. Tile capacity `cap` (elements,
 * padding included) is the largest that fits every buffer the kernel carves
 * from UB, capped so that a tile's working set stays in L1 (l1_tile).
 */
#include <stdlib.h>
#include <string.h>

#include "ops/fused.h"

/* A tile is the largest whose UB working set (bytes_per_elem per element:
 * the double-buffered queues, slots and constants) fits in 7/8 of L1D, and
 * at least TILE_MIN elements. A tile that overflows L1 is a cliff on some
 * hosts: on a 64 Mi-element Add (28 B per element), one Zen host measured
 * 2048 (56 KiB) at 0.37-0.54 of triad against 1024 at 0.67-0.87; on the
 * 48 KiB-L1D Xeon 1536 (42 KiB, what this rule gives) reaches 0.91-0.96 of
 * triad against 0.81-0.83 at 1024, and ReLU-Add's speed-up over Add then
 * Relu stays 1.57-1.64x (bench_ops, 1 and 2 threads, interleaved runs). */
#define TILE_MIN 1024
#define CAP_STEP 64

static bool only_inner_varies(const vn_bcast *b, int32_t i)
{
    if (b->rank < 2 || b->strides[i][b->rank - 1] != 1) return false;
    for (int32_t d = 0; d < b->rank - 1; d++)
        if (b->strides[i][d] != 0) return false;
    return true;
}

static bool same_as_output(const vn_bcast *b, int32_t i)
{
    int64_t step = 1;
    for (int32_t d = b->rank - 1; d >= 0; d--) {
        if (b->strides[i][d] != step) return false;
        step *= b->dims[d];
    }
    return true;
}

static bool all_zero(const vn_bcast *b, int32_t i)
{
    for (int32_t d = 0; d < b->rank; d++)
        if (b->strides[i][d] != 0) return false;
    return true;
}

/* Whether tiles can be computed in global memory: no casts, and each input
 * read is either the output's layout (a tile is one contiguous run of it) or a
 * constant whose scratch layout is that run's (a scalar, or rows that need no
 * padding to 32 bytes). */
static bool in_place_possible(const vn_fused_plan *p)
{
    if (p->cdt != p->io) return false;
    const vn_fused_program *g = &p->prog;
    bool read[VN_FUSED_MAX_REGS] = {false};
    for (int32_t k = 0; k < g->num_instrs; k++) {
        read[g->instrs[k].src0] = true;
        if (vn_vop_kind_of(g->instrs[k].op) == VN_VOP_BINARY) read[g->instrs[k].src1] = true;
    }
    bool unpadded = p->L * (int64_t)vn_dtype_size(p->io) % VN_BLOCK_BYTES == 0;
    for (int32_t i = 0; i < g->num_inputs; i++) {
        if (!read[i] || p->cls[i] == VN_FUSED_FULL || p->cls[i] == VN_FUSED_SCALAR) continue;
        if (p->cls[i] != VN_FUSED_ROWCONST || !unpadded) return false;
    }
    return true;
}

static void classify(vn_fused_plan *p, bool allow_rowconst)
{
    for (int32_t i = 0; i < p->prog.num_inputs; i++) {
        if (same_as_output(&p->b, i))
            p->cls[i] = VN_FUSED_FULL;
        else if (all_zero(&p->b, i))
            p->cls[i] = VN_FUSED_SCALAR;
        else if (allow_rowconst && only_inner_varies(&p->b, i))
            p->cls[i] = VN_FUSED_ROWCONST;
        else
            p->cls[i] = VN_FUSED_GENERAL;
    }
    p->in_place = in_place_possible(p);
    p->chunked = p->in_place && p->cdt == VN_F32 && p->prog.num_instrs > 1 &&
                 vn_ops_output_streamed(p->io, p->numel);
    vn_fused_assign_registers(p);
}

/* Scratch bytes per element of tile capacity (see the kernel's carving). In
 * place, the inputs and the output have no queues. */
static int64_t bytes_per_elem(const vn_fused_plan *p)
{
    int64_t io = (int64_t)vn_dtype_size(p->io), c = (int64_t)vn_dtype_size(p->cdt);
    if (p->in_place)
        return io /* broadcast values */ + c * ((p->chunked ? 0 : p->num_slots) + p->num_consts);
    int64_t bytes = 2 * io /* output queue */ + io /* broadcast values */;
    bool stage = false;
    for (int32_t i = 0; i < p->prog.num_inputs; i++) {
        if (p->reg_kind[i] == VN_REG_UNUSED) continue;
        if (p->cls[i] == VN_FUSED_FULL || p->cls[i] == VN_FUSED_GENERAL) bytes += 2 * io;
        stage |= p->cls[i] == VN_FUSED_ROWCONST && p->cdt != p->io;
    }
    return bytes + (stage ? io : 0) + c * (p->num_slots + p->num_consts);
}

static int64_t l1_tile(int64_t bpe)
{
    const vn_cpu_features *f = vn_cpu_features_get();
    int64_t l1 = f && f->l1d_bytes > 0 ? f->l1d_bytes : 0;
    return vn_ops_max(TILE_MIN, l1 * 7 / 8 / bpe);
}

static vn_status choose_cap(const char *where, vn_fused_plan *p, int64_t ub)
{
    int64_t bpe = bytes_per_elem(p);
    int64_t cap = vn_ops_min(l1_tile(bpe), (ub - VN_OPS_UB_MARGIN) / bpe);
    p->cap = cap / CAP_STEP * CAP_STEP;
    if (p->cap < CAP_STEP)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "the program needs %lld bytes of scratch per element; UB of %lld bytes "
                        "holds no tile of %d elements",
                        (long long)bpe, (long long)ub, CAP_STEP);
    return VN_OK;
}

static void choose_geometry(vn_fused_plan *p)
{
    int64_t epb = vn_ops_epb(p->io), width = vn_ops_row_width(p->L, p->io);
    if (width <= p->cap) {
        p->C = p->L;
        p->cpr = 1;
        p->R = vn_ops_min(vn_ops_min(p->cap / width, p->rows), 65535);
    } else {
        int64_t chunks = vn_ops_div_up(p->L, p->cap);
        p->C = vn_ops_round_up(vn_ops_div_up(p->L, chunks), epb);
        p->cpr = vn_ops_div_up(p->L, p->C);
        p->R = 1;
    }
    p->tiles = vn_ops_div_up(p->rows, p->R) * p->cpr;
}

static bool has_rowconst(const vn_fused_plan *p)
{
    for (int32_t i = 0; i < p->prog.num_inputs; i++)
        if (p->cls[i] == VN_FUSED_ROWCONST) return true;
    return false;
}

vn_status vn_fused_plan_build(const char *where, vn_device *device, const vn_fused_program *prog,
                              const vn_tensor_desc *inputs, int32_t n, const vn_tensor_desc *out,
                              vn_fused_plan **plan)
{
    vn_status st = vn_fused_validate(where, prog, n, out->dtype);
    if (st != VN_OK) return st;
    vn_fused_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    p->prog = *prog;
    p->io = out->dtype;
    p->cdt = p->io == VN_I32 ? VN_I32 : VN_F32;
    p->numel = vn_desc_numel(out);
    vn_broadcast_collapse(inputs, n, out, &p->b);
    p->L = p->b.dims[p->b.rank - 1];
    p->rows = p->L > 0 ? p->numel / p->L : 0;
    int64_t ub = vn_device_arena_size(device, VN_ARENA_UB);
    classify(p, true);
    st = choose_cap(where, p, ub);
    if (st == VN_OK && vn_ops_row_width(p->L, p->io) > p->cap && has_rowconst(p)) {
        classify(p, false); /* rows do not fit a tile: nothing is tile-invariant */
        st = choose_cap(where, p, ub);
    }
    if (st != VN_OK) {
        free(p);
        return st;
    }
    if (p->numel > 0) choose_geometry(p);
    p->block_dim = vn_ops_block_dim(device, p->tiles, p->R * p->C);
    *plan = p;
    return VN_OK;
}

/* ---- shared operator callbacks ------------------------------------------------------ */

vn_status vn_fused_infer_shape(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    if (ctx->num_inputs > VN_FUSED_MAX_INPUTS)
        return vn_error(VN_ERR_UNSUPPORTED, where, "%d inputs (at most %d)", (int)ctx->num_inputs,
                        VN_FUSED_MAX_INPUTS);
    for (int32_t i = 0; i < ctx->num_inputs; i++) {
        if (ctx->inputs[i].rank < 0)
            return vn_error(VN_ERR_INVALID_ARG, where, "input %d is omitted", (int)i);
        if (ctx->inputs[i].dtype != ctx->inputs[0].dtype)
            return vn_error(VN_ERR_DTYPE, where, "input %d has dtype %s, input 0 has %s", (int)i,
                            vn_dtype_name(ctx->inputs[i].dtype),
                            vn_dtype_name(ctx->inputs[0].dtype));
    }
    return vn_broadcast_shape(where, ctx->inputs, ctx->num_inputs, out);
}

void vn_fused_plan_free(void *plan_data)
{
    free(plan_data);
}

vn_status vn_fused_run(const vn_op_run_ctx *ctx)
{
    return vn_fused_execute(ctx->device, ctx->plan, ctx->inputs, &ctx->outputs[0], ctx->counters);
}
