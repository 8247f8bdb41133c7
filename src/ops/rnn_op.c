/*
 * rnn_op.c — plan and run of RNN, GRU and LSTM (see rnn.h), and their
 * registry table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/rnn.h"

/* Workspace segments (each a multiple of 64 bytes from a 64-byte aligned
 * start): sequence lengths, projected inputs, bias, zeros, this step's
 * recurrent products, state, GRU's r . h and its product, and the recurrent
 * weights packed once per direction for the per-step GEMMs. */
typedef struct rnn_ws {
    int64_t *lens;
    float *gx, *bias, *zeros, *rec, *h, *c, *rh, *hr;
    void *rpack, *rhpack;
} rnn_ws;

enum { NSEG = 11 };

static size_t ws_layout(const vn_rnn_plan *p, void *base, rnn_ws *w)
{
    int64_t GH = p->G * p->H, BH = p->B * p->H;
    size_t f = sizeof(float);
    size_t bytes[NSEG] = {(size_t)p->B * sizeof(int64_t),
                          (size_t)(p->S * p->B * GH) * f,
                          (size_t)GH * f,
                          (size_t)p->H * f,
                          (size_t)(p->B * p->Grec * p->H) * f,
                          (size_t)BH * f,
                          (size_t)BH * f,
                          (size_t)BH * f,
                          (size_t)BH * f,
                          p->rec ? vn_gemm_packed_b_size(p->rec) : 0,
                          p->rec_h ? vn_gemm_packed_b_size(p->rec_h) : 0};
    void **ptrs[NSEG] = {(void **)&w->lens, (void **)&w->gx, (void **)&w->bias, (void **)&w->zeros,
                         (void **)&w->rec,  (void **)&w->h,  (void **)&w->c,    (void **)&w->rh,
                         (void **)&w->hr,   &w->rpack,       &w->rhpack};
    uintptr_t at = base ? ((uintptr_t)base + 63) / 64 * 64 : 0;
    size_t off = 0;
    for (int32_t i = 0; i < NSEG; i++) {
        if (base) *ptrs[i] = (void *)(at + off);
        off += (bytes[i] + 63) / 64 * 64;
    }
    return off + 64; /* room to align the start */
}

static void rnn_free(void *plan)
{
    vn_rnn_plan *p = plan;
    if (!p) return;
    vn_gemm_plan_destroy(p->proj);
    vn_gemm_plan_destroy(p->rec);
    vn_gemm_plan_destroy(p->rec_h);
    free(p);
}

/* C [M, N] = A [M, K] * B^T with B stored [N, K] (a weight matrix). */
static vn_status gemm_bt(vn_device *dev, int64_t M, int64_t N, int64_t K, bool bias,
                         vn_gemm_plan **out)
{
    vn_gemm_desc d = vn_gemm_desc_default(M, N, K);
    d.trans_b = true;
    if (bias) d.epi.bias_axis = VN_BIAS_COL;
    return vn_gemm_plan_create(dev, &d, out);
}

static vn_status rnn_plan_common(const vn_op_ctx *ctx, vn_rnn_kind kind, void **plan,
                                 size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_rnn_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = vn_rnn_params(ctx, kind, where, p, NULL);
    if (st == VN_OK && p->I == 0 && p->S * p->B * p->H > 0)
        st = vn_error(VN_ERR_UNSUPPORTED, where, "X has no input features");
    bool work = p->B > 0 && p->H > 0;
    if (st == VN_OK && work && p->S > 0)
        st = gemm_bt(ctx->device, p->S * p->B, p->G * p->H, p->I, true, &p->proj);
    if (st == VN_OK && work) st = gemm_bt(ctx->device, p->B, p->Grec * p->H, p->H, false, &p->rec);
    if (st == VN_OK && work && p->Grec != p->G)
        st = gemm_bt(ctx->device, p->B, p->H, p->H, false, &p->rec_h);
    if (st != VN_OK) {
        rnn_free(p);
        return st;
    }
    rnn_ws w;
    *workspace = ws_layout(p, NULL, &w);
    *plan = p;
    return VN_OK;
}

/* ---- run ----------------------------------------------------------------------- */

typedef struct rnn_io {
    const vn_op_run_ctx *ctx;
    const vn_rnn_plan *p;
    rnn_ws w;
    const float *x, *W, *R, *B, *h0, *c0, *P;
    float *y, *yh, *yc;
} rnn_io;

static const float *opt_input(const vn_op_run_ctx *ctx, int32_t i)
{
    return i < ctx->num_inputs && ctx->inputs[i].desc.rank >= 0 ? ctx->inputs[i].data : NULL;
}

/* b is the plan's packed B when `packed`. */
static vn_status gemm(const rnn_io *io, const vn_gemm_plan *g, const float *a, const void *b,
                      bool packed, const float *bias, float *c)
{
    vn_kernel_counters k = {0};
    vn_gemm_args args = {.a = a, .b = b, .b_packed = packed, .c = c, .bias = bias, .counters = &k};
    vn_status st = vn_gemm_run(g, &args);
    if (st == VN_OK && io->ctx->counters) vn_kernel_counters_add(io->ctx->counters, &k);
    return st;
}

static vn_status read_lens(const rnn_io *io, const char *where)
{
    const vn_rnn_plan *p = io->p;
    const vn_tensor *t = io->ctx->num_inputs > VN_RNN_LENS ? &io->ctx->inputs[VN_RNN_LENS] : NULL;
    for (int64_t b = 0; b < p->B; b++) {
        int64_t n = t && t->desc.rank >= 0 ? vn_cast_load_i64(t->desc.dtype, t->data, b) : p->S;
        if (n < 0 || n > p->S)
            return vn_error(VN_ERR_INVALID_ARG, where,
                            "sequence_lens[%lld] = %lld is not in [0, %lld]", (long long)b,
                            (long long)n, (long long)p->S);
        io->w.lens[b] = n;
    }
    return VN_OK;
}

/* Offset of state row (d, b) in initial_h / Y_h. */
static int64_t state_off(const vn_rnn_plan *p, int32_t d, int64_t b)
{
    return (p->layout1 ? b * p->D + d : d * p->B + b) * p->H;
}

static void init_state(const rnn_io *io, int32_t d)
{
    const vn_rnn_plan *p = io->p;
    size_t row = (size_t)p->H * sizeof(float);
    for (int64_t b = 0; b < p->B; b++) {
        float *h = io->w.h + b * p->H, *c = io->w.c + b * p->H;
        if (io->h0)
            memcpy(h, io->h0 + state_off(p, d, b), row);
        else
            memset(h, 0, row);
        if (io->c0)
            memcpy(c, io->c0 + state_off(p, d, b), row);
        else
            memset(c, 0, row);
    }
}

/* Input bias of direction d: Wb + Rb, except GRU linear_before_reset's Rbh,
 * which sits inside the reset product (returned in *rb). */
static void make_bias(const rnn_io *io, int32_t d, const float **rb)
{
    const vn_rnn_plan *p = io->p;
    int64_t GH = p->G * p->H;
    const float *wb = io->B ? io->B + d * 2 * GH : NULL, *rbias = wb ? wb + GH : NULL;
    for (int64_t j = 0; j < GH; j++) {
        bool inner = p->lbr && j >= 2 * p->H;
        io->w.bias[j] = wb ? wb[j] + (inner ? 0.0f : rbias[j]) : 0.0f;
    }
    memset(io->w.zeros, 0, (size_t)p->H * sizeof(float));
    *rb = p->lbr && rbias ? rbias + 2 * p->H : io->w.zeros;
}

static vn_status run_step(const rnn_io *io, const vn_rnn_step *st, int64_t j, bool rev, int32_t d)
{
    const vn_rnn_plan *p = io->p;
    vn_status s = gemm(io, p->rec, st->h, io->w.rpack, true, NULL, st->rec);
    if (s != VN_OK) return s;
    for (int64_t b = 0; p->rec_h && b < p->B; b++) {
        int64_t n = io->w.lens[b], t = rev ? n - 1 - j : j;
        if (j < n)
            vn_rnn_gru_reset(p, st, b, p->layout1 ? b * p->S + t : t * p->B + b);
        else
            memset(st->rh + b * p->H, 0, (size_t)p->H * sizeof(float));
    }
    if (p->rec_h) s = gemm(io, p->rec_h, st->rh, io->w.rhpack, true, NULL, st->hr);
    if (s != VN_OK) return s;
    for (int64_t b = 0; b < p->B; b++) {
        int64_t n = io->w.lens[b], t = rev ? n - 1 - j : j;
        if (j >= n) continue;
        vn_rnn_cell(p, st, b, p->layout1 ? b * p->S + t : t * p->B + b);
        if (!io->y) continue;
        int64_t yo = (p->layout1 ? (b * p->S + t) * p->D + d : (t * p->D + d) * p->B + b) * p->H;
        memcpy(io->y + yo, st->h + b * p->H, (size_t)p->H * sizeof(float));
    }
    return VN_OK;
}

static vn_status run_direction(const rnn_io *io, int32_t d)
{
    const vn_rnn_plan *p = io->p;
    int64_t GH = p->G * p->H;
    bool rev = p->D == 2 ? d == 1 : p->reverse;
    vn_rnn_step st = {io->w.gx, io->w.rec, io->w.rh, io->w.hr,
                      io->w.h,  io->w.c,   NULL,     io->P ? io->P + d * 3 * p->H : NULL,
                      p->act[d]};
    make_bias(io, d, &st.rb);
    const float *Rd = io->R + d * GH * p->H;
    vn_status s = VN_OK;
    if (p->proj) s = gemm(io, p->proj, io->x, io->W + d * GH * p->I, false, io->w.bias, io->w.gx);
    /* the recurrent weights serve every step: packed once */
    if (s == VN_OK) s = vn_gemm_pack_b(p->rec, Rd, io->w.rpack);
    if (s == VN_OK && p->rec_h) s = vn_gemm_pack_b(p->rec_h, Rd + 2 * p->H * p->H, io->w.rhpack);
    init_state(io, d);
    for (int64_t j = 0; s == VN_OK && j < p->S; j++) s = run_step(io, &st, j, rev, d);
    for (int64_t b = 0; s == VN_OK && b < p->B; b++) {
        size_t row = (size_t)p->H * sizeof(float);
        if (io->yh) memcpy(io->yh + state_off(p, d, b), io->w.h + b * p->H, row);
        if (io->yc) memcpy(io->yc + state_off(p, d, b), io->w.c + b * p->H, row);
    }
    return s;
}

static float *opt_output(const vn_op_run_ctx *ctx, int32_t k)
{
    return k < ctx->num_outputs ? ctx->outputs[k].data : NULL;
}

static vn_status rnn_run(const vn_op_run_ctx *ctx)
{
    const vn_rnn_plan *p = ctx->plan;
    const char *where = ctx->def->name;
    rnn_io io = {ctx,
                 p,
                 {0},
                 ctx->inputs[0].data,
                 ctx->inputs[1].data,
                 ctx->inputs[2].data,
                 opt_input(ctx, VN_RNN_B),
                 opt_input(ctx, VN_RNN_H0),
                 NULL,
                 NULL,
                 opt_output(ctx, 0),
                 opt_output(ctx, 1),
                 NULL};
    if (p->kind == VN_RNN_LSTM) {
        io.c0 = opt_input(ctx, VN_RNN_C0);
        io.P = opt_input(ctx, VN_RNN_P);
        io.yc = opt_output(ctx, 2);
    }
    if (p->B == 0 || p->H == 0) return VN_OK;
    ws_layout(p, ctx->workspace, &io.w);
    vn_status st = read_lens(&io, where);
    if (st == VN_OK && io.y) memset(io.y, 0, (size_t)(p->S * p->D * p->B * p->H) * sizeof(float));
    for (int32_t d = 0; st == VN_OK && d < p->D; d++) st = run_direction(&io, d);
    return st;
}

/* ---- the three operators ------------------------------------------------------ */

static vn_status infer_as(const vn_op_ctx *ctx, vn_rnn_kind kind, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_rnn_plan p;
    memset(&p, 0, sizeof p);
    return vn_rnn_params(ctx, kind, where, &p, out);
}

#define RNN_KIND_FNS(suffix, kind)                                                                 \
    static vn_status infer_##suffix(const vn_op_ctx *ctx, vn_tensor_desc *out)                     \
    {                                                                                              \
        return infer_as(ctx, kind, out);                                                           \
    }                                                                                              \
    static vn_status plan_##suffix(const vn_op_ctx *ctx, const vn_tensor_desc *outputs,            \
                                   void **plan, size_t *workspace)                                 \
    {                                                                                              \
        (void)outputs;                                                                             \
        return rnn_plan_common(ctx, kind, plan, workspace);                                        \
    }

RNN_KIND_FNS(simple, VN_RNN_SIMPLE)
RNN_KIND_FNS(gru, VN_RNN_GRU)
RNN_KIND_FNS(lstm, VN_RNN_LSTM)

const vn_op_def vn_rnn_simple_def = {
    "RNN", "", 3, 6, 2, VN_DTYPE_BIT(VN_F32), infer_simple, plan_simple, rnn_free, rnn_run};
const vn_op_def vn_rnn_gru_def = {"GRU",     "",       3,        6,      2, VN_DTYPE_BIT(VN_F32),
                                  infer_gru, plan_gru, rnn_free, rnn_run};
const vn_op_def vn_rnn_lstm_def = {"LSTM",     "",        3,        8,      3, VN_DTYPE_BIT(VN_F32),
                                   infer_lstm, plan_lstm, rnn_free, rnn_run};

const vn_op_def *const *vn_ops_rnn_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&vn_rnn_simple_def, &vn_rnn_gru_def, &vn_rnn_lstm_def};
    *count = (int32_t)(sizeof ptrs / sizeof ptrs[0]);
    return ptrs;
}
