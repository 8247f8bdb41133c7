/*
 * rnn.h — the recurrent operators RNN, GRU and LSTM: one plan and one driver
 * for all three, differing only in the number of gates and the cell update.
 *
 * The input projection X * W^T (+ biases) is one GEMM over all timesteps of a
 * direction; each step is one GEMM h * R^T (two for GRU without
 * linear_before_reset, whose candidate gate needs (r . h) * Rh^T) followed by
 * the element-wise cell update on the host. Files: rnn_attrs.c (attributes,
 * shapes), rnn_act.c (the activation functions), rnn_cell.c (cell updates),
 * rnn_op.c (plan, run and the registry table).
 */
#ifndef VINCI_OPS_RNN_H
#define VINCI_OPS_RNN_H

#include "ops/shape_ops.h"
#include "vinci/gemm.h"

typedef enum vn_rnn_kind { VN_RNN_SIMPLE = 0, VN_RNN_GRU, VN_RNN_LSTM } vn_rnn_kind;

/* One activation with its alpha and beta. */
typedef float (*vn_rnn_act_fn)(float x, float alpha, float beta);
typedef struct vn_rnn_act {
    vn_rnn_act_fn fn;
    float alpha, beta;
} vn_rnn_act;

/* Input positions (ONNX order; c0 and P only for LSTM). */
enum { VN_RNN_X = 0, VN_RNN_W, VN_RNN_R, VN_RNN_B, VN_RNN_LENS, VN_RNN_H0, VN_RNN_C0, VN_RNN_P };

typedef struct vn_rnn_plan {
    vn_rnn_kind kind;
    int64_t S, B, I, H;   /* sequence, batch, input and hidden sizes */
    int32_t D, G;         /* directions (1 or 2), gates per direction (1, 3, 4) */
    bool reverse;         /* a single direction, run backwards */
    bool layout1;         /* batch-major tensors */
    bool lbr;             /* GRU linear_before_reset */
    bool input_forget;    /* LSTM: forget gate = 1 - input gate */
    float clip;           /* 0: none */
    vn_rnn_act act[2][3]; /* per direction: f, g, h */
    vn_gemm_plan *proj;   /* [S*B, I] x W^T -> [S*B, G*H] with bias */
    vn_gemm_plan *rec;    /* [B, H] x R^T -> [B, Grec*H] */
    vn_gemm_plan *rec_h;  /* GRU without linear_before_reset: [B, H] x Rh^T */
    int32_t Grec;         /* gates in the per-step recurrent GEMM */
} vn_rnn_plan;

/* Parse attributes and input shapes into `p` (no GEMM plans) and, when `out`
 * is not NULL, fill the output descriptors. */
vn_status vn_rnn_params(const vn_op_ctx *ctx, vn_rnn_kind kind, const char *where, vn_rnn_plan *p,
                        vn_tensor_desc *out);

/* The activation named `name` (ONNX names, case-insensitive) with its default
 * alpha and beta; *uses_alpha / *uses_beta say whether it takes them. */
vn_status vn_rnn_act_lookup(const char *where, const char *name, vn_rnn_act *act, bool *uses_alpha,
                            bool *uses_beta);

/* The per-step state of one direction, all pointers into the workspace. */
typedef struct vn_rnn_step {
    const float *gx; /* projected inputs, one row of G*H per (time, batch) */
    float *rec;      /* [B, Grec*H] recurrent products of this step */
    float *rh;       /* GRU: [B, H] r . h */
    float *hr;       /* GRU: [B, H] (r . h) * Rh^T */
    float *h, *c;    /* [B, H] state */
    const float *rb; /* GRU linear_before_reset: Rbh (H values) or NULL */
    const float *P;  /* LSTM peepholes [3H] (i, o, f) or NULL */
    const vn_rnn_act *act;
} vn_rnn_step;

/* Gate pre-activations of row `b` at projected-input row `gx_row`. GRU
 * without linear_before_reset first needs vn_rnn_gru_reset (r . h into
 * st->rh) and the second GEMM. */
void vn_rnn_gru_reset(const vn_rnn_plan *p, const vn_rnn_step *st, int64_t b, int64_t gx_row);
void vn_rnn_cell(const vn_rnn_plan *p, const vn_rnn_step *st, int64_t b, int64_t gx_row);

static inline float vn_rnn_clip(const vn_rnn_plan *p, float x)
{
    if (p->clip > 0) x = x < -p->clip ? -p->clip : x > p->clip ? p->clip : x;
    return x;
}

extern const vn_op_def vn_rnn_simple_def, vn_rnn_gru_def, vn_rnn_lstm_def;
const vn_op_def *const *vn_ops_rnn_table(int32_t *count);

#endif /* VINCI_OPS_RNN_H */
