/*
 * rnn_cell.c — the element-wise cell updates of RNN, GRU and LSTM for one
 * batch row, from the projected inputs and this step's recurrent products.
 * Gate order in W, R and B follows ONNX: GRU z, r, h; LSTM i, o, f, c;
 * peepholes P i, o, f.
 */
#include "ops/rnn.h"

static inline float act(const vn_rnn_act *a, const vn_rnn_plan *p, float x)
{
    return a->fn(vn_rnn_clip(p, x), a->alpha, a->beta);
}

static void cell_simple(const vn_rnn_plan *p, const vn_rnn_step *st, int64_t b, const float *gx)
{
    const float *rec = st->rec + b * p->H;
    float *h = st->h + b * p->H;
    for (int64_t j = 0; j < p->H; j++) h[j] = act(&st->act[0], p, gx[j] + rec[j]);
}

void vn_rnn_gru_reset(const vn_rnn_plan *p, const vn_rnn_step *st, int64_t b, int64_t gx_row)
{
    int64_t H = p->H;
    const float *gx = st->gx + gx_row * 3 * H, *rec = st->rec + b * p->Grec * H;
    const float *h = st->h + b * H;
    float *rh = st->rh + b * H;
    for (int64_t j = 0; j < H; j++) rh[j] = act(&st->act[0], p, gx[H + j] + rec[H + j]) * h[j];
}

static void cell_gru(const vn_rnn_plan *p, const vn_rnn_step *st, int64_t b, const float *gx)
{
    int64_t H = p->H;
    const float *rec = st->rec + b * p->Grec * H, *hr = st->hr + b * H;
    float *h = st->h + b * H;
    for (int64_t j = 0; j < H; j++) {
        float z = act(&st->act[0], p, gx[j] + rec[j]);
        float r = act(&st->act[0], p, gx[H + j] + rec[H + j]);
        float pre =
            p->lbr ? gx[2 * H + j] + r * (rec[2 * H + j] + st->rb[j]) : gx[2 * H + j] + hr[j];
        float n = act(&st->act[1], p, pre);
        h[j] = (1.0f - z) * n + z * h[j];
    }
}

static void cell_lstm(const vn_rnn_plan *p, const vn_rnn_step *st, int64_t b, const float *gx)
{
    int64_t H = p->H;
    const float *rec = st->rec + b * 4 * H;
    const float *Pi = st->P, *Po = st->P ? st->P + H : NULL, *Pf = st->P ? st->P + 2 * H : NULL;
    float *h = st->h + b * H, *c = st->c + b * H;
    for (int64_t j = 0; j < H; j++) {
        float i = act(&st->act[0], p, gx[j] + rec[j] + (Pi ? Pi[j] * c[j] : 0));
        float f = p->input_forget ? 1.0f - i
                                  : act(&st->act[0], p,
                                        gx[2 * H + j] + rec[2 * H + j] + (Pf ? Pf[j] * c[j] : 0));
        float g = act(&st->act[1], p, gx[3 * H + j] + rec[3 * H + j]);
        c[j] = f * c[j] + i * g;
        float o = act(&st->act[0], p, gx[H + j] + rec[H + j] + (Po ? Po[j] * c[j] : 0));
        h[j] = o * st->act[2].fn(c[j], st->act[2].alpha, st->act[2].beta);
    }
}

void vn_rnn_cell(const vn_rnn_plan *p, const vn_rnn_step *st, int64_t b, int64_t gx_row)
{
    const float *gx = st->gx + gx_row * p->G * p->H;
    if (p->kind == VN_RNN_SIMPLE)
        cell_simple(p, st, b, gx);
    else if (p->kind == VN_RNN_GRU)
        cell_gru(p, st, b, gx);
    else
        cell_lstm(p, st, b, gx);
}
