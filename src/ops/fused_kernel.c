/*
 * fused_kernel.c — the one kernel behind every element-wise operator: runs a
 * vn_fused_program tile by tile in UB. Per tile: each input is copied (or
 * duplicated where broadcast) into a VECIN queue buffer, cast to the compute
 * dtype if needed, each instruction is one vector instruction over the tile,
 * the result is cast back if needed and copied out: one pass over memory.
 *
 * A plan computed in place (p->in_place) skips the copies: each tile is one
 * contiguous run of the output, its inputs and its result are windows onto
 * global memory (vn_gm_window), and only intermediates live in UB; or, for an
 * f32 program of several instructions with a streamed output (p->chunked),
 * the whole program is one vn_vprogram instruction, run chunk by chunk.
 *
 * Scratch layout invariant of staged plans (see rowio.c): row j of a tile
 * starts at element j * W, W = vn_ops_row_width(ncols, io); instructions run
 * over nrows * W elements, padding included (padding holds 1s or broadcast
 * copies). In place they run over the tile's nrows * ncols elements, one
 * contiguous run (whole rows, or a chunk of one row).
 */
#include "ops/fused.h"

typedef struct fused_args {
    const vn_fused_plan *p;
    vn_gm in[VN_FUSED_MAX_INPUTS];
    vn_gm out;
} fused_args;

typedef struct tile_geom {
    int64_t row0, nrows, col0, ncols, width;
} tile_geom;

/* Everything a block carves from UB once. */
typedef struct fused_block {
    vn_queue *q[VN_FUSED_MAX_INPUTS]; /* per input loaded each tile */
    vn_queue *qout;
    vn_local slots[VN_FUSED_MAX_REGS];
    vn_local consts[VN_FUSED_MAX_INPUTS];
    vn_local vals;  /* broadcast values, one per 32-byte block */
    vn_local stage; /* io-dtype staging for constant rows that need a cast */
    vn_local regs[VN_FUSED_MAX_REGS];
} fused_block;

static tile_geom geometry(const vn_fused_plan *p, int64_t t)
{
    tile_geom g;
    g.row0 = t / p->cpr * p->R;
    g.nrows = vn_ops_min(p->R, p->rows - g.row0);
    g.col0 = t % p->cpr * p->C;
    g.ncols = vn_ops_min(p->C, p->L - g.col0);
    g.width = vn_ops_row_width(g.ncols, p->io);
    return g;
}

static bool loaded_per_tile(const vn_fused_plan *p, int32_t i)
{
    return p->reg_kind[i] != VN_REG_UNUSED &&
           (p->cls[i] == VN_FUSED_FULL || p->cls[i] == VN_FUSED_GENERAL);
}

/* ---- inputs ------------------------------------------------------------------------- */

/* Offset in input i of output row `row`, column 0; *c2 = its coordinate in
 * the second-innermost dim (rows advance along that dim). */
static int64_t row_base(const vn_bcast *b, int32_t i, int64_t row, int64_t *c2)
{
    int64_t off = 0;
    for (int32_t d = b->rank - 2; d >= 0; d--) {
        int64_t c = row % b->dims[d];
        row /= b->dims[d];
        off += c * b->strides[i][d];
        if (d == b->rank - 2) *c2 = c;
    }
    return off;
}

/* k rows of a general input starting at tile row j, input offset o. */
static void load_segment(vn_core *c, const fused_block *fb, vn_local dst, vn_gm src, int64_t o,
                         int64_t j, int64_t k, const tile_geom *g, int64_t s1, int64_t s2)
{
    int64_t w = g->width, epb = vn_ops_epb(src.dtype);
    if (s1 != 0 && s2 == 0) { /* the same row again: broadcast along rows */
        for (int64_t r = 0; r < k; r++)
            vn_ops_load_rows(c, vn_local_at(c, dst, (j + r) * w), src, o, 1, g->ncols, g->ncols);
    } else if (s1 != 0) {
        vn_ops_load_rows(c, vn_local_at(c, dst, j * w), src, o, k, g->ncols, s2);
    } else if (s2 == 0) { /* one value for all k rows */
        vn_ops_load_rows(c, fb->vals, src, o, 1, 1, 1);
        vn_duplicate(c, vn_local_at(c, dst, j * w), vn_ops_local_value(fb->vals, 0), k * w);
    } else { /* one value per row, broadcast along the row */
        vn_ops_load_rows(c, fb->vals, src, o, k, 1, s2);
        for (int64_t r = 0; r < k; r++)
            vn_duplicate(c, vn_local_at(c, dst, (j + r) * w), vn_ops_local_value(fb->vals, r * epb),
                         w);
    }
}

static void load_general(vn_core *c, const vn_fused_plan *p, const fused_block *fb, vn_local dst,
                         vn_gm src, int32_t i, const tile_geom *g)
{
    const vn_bcast *b = &p->b;
    int64_t s1 = b->strides[i][b->rank - 1], s2 = b->strides[i][b->rank - 2];
    for (int64_t j = 0; j < g->nrows;) {
        int64_t c2 = 0;
        int64_t o = row_base(b, i, g->row0 + j, &c2) + g->col0 * s1;
        int64_t k = vn_ops_min(g->nrows - j, b->dims[b->rank - 2] - c2);
        load_segment(c, fb, dst, src, o, j, k, g, s1, s2);
        j += k;
    }
}

static void load_input(vn_core *c, const vn_fused_plan *p, const fused_block *fb, vn_local dst,
                       vn_gm src, int32_t i, const tile_geom *g)
{
    if (p->cls[i] == VN_FUSED_FULL)
        vn_ops_load_rows(c, dst, src, g->row0 * p->L + g->col0, g->nrows, g->ncols, p->L);
    else
        load_general(c, p, fb, dst, src, i, g);
}

/* Constants: a scalar duplicated over the whole capacity, or the tile's
 * rows (every tile holds the same rows of a row-constant input). */
static void fill_const(vn_core *c, const vn_fused_plan *p, const fused_block *fb, vn_gm src,
                       int32_t i)
{
    vn_local dst = fb->consts[p->reg_index[i]];
    if (p->cls[i] == VN_FUSED_SCALAR) {
        vn_ops_load_rows(c, fb->vals, src, 0, 1, 1, 1);
        vn_duplicate(c, dst, vn_ops_local_value(fb->vals, 0), p->cap);
        return;
    }
    int64_t w = vn_ops_row_width(p->L, p->io);
    vn_local target = p->cdt != p->io ? fb->stage : dst;
    for (int64_t r = 0; r < p->R; r++)
        vn_ops_load_rows(c, vn_local_at(c, target, r * w), src, 0, 1, p->L, p->L);
    if (p->cdt != p->io) vn_cast(c, dst, target, VN_ROUND_NONE, p->R * w);
}

/* ---- block setup -------------------------------------------------------------------- */

static void carve(vn_core *c, const vn_fused_plan *p, fused_block *fb)
{
    bool stage = false;
    for (int32_t i = 0; i < p->prog.num_inputs; i++) {
        if (loaded_per_tile(p, i) && !p->in_place)
            fb->q[i] = vn_queue_new(c, VN_VECIN, 2, p->cap, p->io);
        stage |= p->reg_kind[i] == VN_REG_CONST && p->cls[i] == VN_FUSED_ROWCONST;
    }
    if (!p->in_place) fb->qout = vn_queue_new(c, VN_VECOUT, 2, p->cap, p->io);
    for (int32_t s = 0; s < p->num_slots && !p->chunked; s++)
        fb->slots[s] = vn_buf_new(c, VN_VECCALC, p->cap, p->cdt);
    for (int32_t k = 0; k < p->num_consts; k++)
        fb->consts[k] = vn_buf_new(c, VN_VECCALC, p->cap, p->cdt);
    fb->vals = vn_buf_new(c, VN_VECCALC, vn_ops_max(p->R, 1) * vn_ops_epb(p->io), p->io);
    if (stage && p->cdt != p->io) fb->stage = vn_buf_new(c, VN_VECCALC, p->cap, p->io);
}

/* ---- one tile ------------------------------------------------------------------------- */

static void copy_in(vn_core *c, const fused_args *a, fused_block *fb, const tile_geom *g)
{
    const vn_fused_plan *p = a->p;
    for (int32_t i = 0; i < p->prog.num_inputs; i++) {
        if (!loaded_per_tile(p, i)) continue;
        vn_local x = vn_alloc(c, fb->q[i]);
        load_input(c, p, fb, x, a->in[i], i, g);
        vn_enque(c, fb->q[i], x);
    }
}

static void bind_consts(const vn_fused_plan *p, fused_block *fb)
{
    for (int32_t i = 0; i < p->prog.num_inputs; i++)
        if (p->reg_kind[i] == VN_REG_CONST) fb->regs[i] = fb->consts[p->reg_index[i]];
}

/* Dequeue the inputs into their registers (casting into slots if needed). */
static void take_inputs(vn_core *c, const vn_fused_plan *p, fused_block *fb, int64_t n)
{
    bind_consts(p, fb);
    for (int32_t i = 0; i < p->prog.num_inputs; i++) {
        if (!loaded_per_tile(p, i)) continue;
        vn_local x = vn_deque(c, fb->q[i]);
        if (p->reg_kind[i] == VN_REG_QUEUE) {
            fb->regs[i] = x;
            continue;
        }
        fb->regs[i] = fb->slots[p->reg_index[i]];
        vn_cast(c, fb->regs[i], x, VN_ROUND_NONE, n);
        vn_free(c, fb->q[i], x);
    }
}

static void exec_instr(vn_core *c, const vn_fused_plan *p, fused_block *fb, int32_t k, vn_local out,
                       int64_t n)
{
    const vn_fused_instr *in = &p->prog.instrs[k];
    int32_t dst = p->prog.num_inputs + k;
    fb->regs[dst] = p->reg_kind[dst] == VN_REG_OUT ? out : fb->slots[p->reg_index[dst]];
    switch (vn_vop_kind_of(in->op)) {
    case VN_VOP_UNARY:
        vn_vunary(c, in->op, fb->regs[dst], fb->regs[in->src0], n);
        break;
    case VN_VOP_BINARY:
        vn_vbinary(c, in->op, fb->regs[dst], fb->regs[in->src0], fb->regs[in->src1], n);
        break;
    case VN_VOP_SCALAR:
        vn_vscalar(c, in->op, fb->regs[dst], fb->regs[in->src0], in->scalar, n);
        break;
    }
    if (p->in_place) return;
    /* Inputs read in place from their queue go back once read for the last time. */
    for (int32_t i = 0; i < p->prog.num_inputs; i++)
        if (p->reg_kind[i] == VN_REG_QUEUE && p->last_use[i] == k)
            vn_free(c, fb->q[i], fb->regs[i]);
}

static void compute_and_store(vn_core *c, const fused_args *a, fused_block *fb, const tile_geom *g)
{
    const vn_fused_plan *p = a->p;
    int64_t n = g->nrows * g->width;
    take_inputs(c, p, fb, n);
    vn_local o = vn_alloc(c, fb->qout);
    for (int32_t k = 0; k < p->prog.num_instrs; k++) exec_instr(c, p, fb, k, o, n);
    if (p->cdt != p->io)
        vn_cast(c, o, fb->regs[p->prog.num_inputs + p->prog.num_instrs - 1], VN_ROUND_RINT, n);
    vn_enque(c, fb->qout, o);
    o = vn_deque(c, fb->qout);
    vn_ops_store_rows(c, a->out, g->row0 * p->L + g->col0, o, g->nrows, g->ncols, p->L);
    vn_free(c, fb->qout, o);
}

/* The in-place tile: inputs and result are windows onto global memory. (Queuing
 * the next tile's inputs with vn_prefetch made Add and ReLU-Add slower: the
 * hardware prefetcher follows these sequential runs.) */
static void compute_in_place(vn_core *c, const fused_args *a, fused_block *fb, const tile_geom *g)
{
    const vn_fused_plan *p = a->p;
    int64_t off = g->row0 * p->L + g->col0, n = g->nrows * g->ncols;
    bind_consts(p, fb);
    for (int32_t i = 0; i < p->prog.num_inputs; i++)
        if (loaded_per_tile(p, i)) fb->regs[i] = vn_gm_window(c, a->in[i], off, n, VN_WINDOW_READ);
    vn_local o = vn_gm_window(c, a->out, off, n, VN_WINDOW_WRITE);
    if (p->chunked) {
        vn_vprogram(c, o, fb->regs, p->prog.num_inputs, p->prog.instrs, p->prog.num_instrs, n);
        return;
    }
    for (int32_t k = 0; k < p->prog.num_instrs; k++) exec_instr(c, p, fb, k, o, n);
}

static void fused_kernel(vn_core *c, const void *args)
{
    const fused_args *a = args;
    const vn_fused_plan *p = a->p;
    fused_block fb = {0};
    carve(c, p, &fb);
    for (int32_t i = 0; i < p->prog.num_inputs; i++)
        if (p->reg_kind[i] == VN_REG_CONST) fill_const(c, p, &fb, a->in[i], i);
    for (int64_t t; vn_tile_next(c, &t);) {
        tile_geom g = geometry(p, t);
        if (p->in_place) {
            compute_in_place(c, a, &fb, &g);
            continue;
        }
        copy_in(c, a, &fb, &g);
        compute_and_store(c, a, &fb, &g);
    }
}

vn_status vn_fused_execute(vn_device *device, const vn_fused_plan *p, const vn_tensor *inputs,
                           vn_tensor *out, vn_kernel_counters *counters)
{
    if (p->numel == 0 || p->block_dim == 0) return VN_OK;
    fused_args a;
    a.p = p;
    for (int32_t i = 0; i < p->prog.num_inputs; i++)
        a.in[i] = vn_gm_make(inputs[i].data, p->io, vn_desc_numel(&inputs[i].desc));
    a.out = vn_ops_output_gm(out->data, p->io, p->numel);
    vn_launch_desc d = {fused_kernel, "fused_elementwise", p->block_dim, &a, -1, p->tiles};
    return vn_launch(device, &d, counters);
}
