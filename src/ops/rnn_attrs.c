/*
 * rnn_attrs.c — attributes and input shapes of RNN, GRU and LSTM, and their
 * output shapes.
 */
#include <string.h>

#include "ops/rnn.h"

static const int32_t gates_of[] = {1, 3, 4};
static const int32_t acts_of[] = {1, 2, 3};
static const char *const default_acts[3][3] = {
    {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};

static vn_status parse_direction(const vn_op_ctx *ctx, const char *where, vn_rnn_plan *p)
{
    const char *dir = "forward";
    vn_status st = vn_so_attr_string(ctx, where, "direction", "forward", &dir);
    if (st != VN_OK) return st;
    p->D = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    p->reverse = strcmp(dir, "reverse") == 0;
    if (p->D == 1 && !p->reverse && strcmp(dir, "forward") != 0)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "direction '%s' is not one of forward, "
                        "reverse, bidirectional",
                        dir);
    return VN_OK;
}

/* Values alpha / beta are consumed in the order of the activations, each by
 * the activations that take one. One direction's list serves both. */
static vn_status parse_acts(const vn_op_ctx *ctx, const char *where, vn_rnn_plan *p)
{
    int32_t per = acts_of[p->kind];
    const vn_attr *names = vn_attrs_find(ctx->attrs, "activations");
    const vn_attr *al = vn_attrs_find(ctx->attrs, "activation_alpha");
    const vn_attr *be = vn_attrs_find(ctx->attrs, "activation_beta");
    int32_t n = names ? names->count : 0, ia = 0, ib = 0;
    if (names && names->type != VN_ATTR_STRINGS)
        return vn_error(VN_ERR_INVALID_ARG, where, "'activations' must be a list of strings");
    if ((al && al->type != VN_ATTR_FLOATS) || (be && be->type != VN_ATTR_FLOATS))
        return vn_error(VN_ERR_INVALID_ARG, where, "'activation_alpha/beta' must be floats");
    if (names && n != per && n != per * p->D)
        return vn_error(VN_ERR_INVALID_ARG, where, "%d activations given, expected %d", (int)n,
                        (int)(per * p->D));
    for (int32_t d = 0; d < p->D; d++)
        for (int32_t k = 0; k < per; k++) {
            int32_t i = (d * per + k) % (n ? n : per);
            const char *name = n ? names->strings[i] : default_acts[p->kind][k];
            bool ua = false, ub = false;
            vn_rnn_act *a = &p->act[d][k];
            vn_status st = vn_rnn_act_lookup(where, name, a, &ua, &ub);
            if (st != VN_OK) return st;
            if (ua && al && ia < al->count) a->alpha = al->floats[ia++];
            if (ub && be && ib < be->count) a->beta = be->floats[ib++];
        }
    return VN_OK;
}

static vn_status check_shape(const vn_op_ctx *ctx, const char *where, int32_t i, const char *name,
                             int32_t rank, const int64_t *dims)
{
    if (!vn_so_present(ctx, i)) return VN_OK;
    const vn_tensor_desc *t = &ctx->inputs[i];
    bool ok = t->rank == rank;
    for (int32_t k = 0; ok && k < rank; k++) ok = t->dims[k] == dims[k];
    if (i == VN_RNN_LENS) {
        if (!ok || (t->dtype != VN_I32 && t->dtype != VN_I64))
            return vn_error(VN_ERR_SHAPE, where, "sequence_lens must be i32/i64 [%lld]",
                            (long long)dims[0]);
        return VN_OK;
    }
    if (t->dtype != VN_F32) return vn_error(VN_ERR_DTYPE, where, "%s must be f32", name);
    if (!ok) {
        char buf[96];
        return vn_error(VN_ERR_SHAPE, where, "%s has shape %s, which does not fit X and R", name,
                        vn_desc_format(t, buf, sizeof buf));
    }
    return VN_OK;
}

static vn_status parse_shapes(const vn_op_ctx *ctx, const char *where, vn_rnn_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[VN_RNN_X], *r = &ctx->inputs[VN_RNN_R];
    if (x->dtype != VN_F32 || x->rank != 3 || r->rank != 3)
        return vn_error(VN_ERR_SHAPE, where, "X (f32) and R must have rank 3");
    p->S = p->layout1 ? x->dims[1] : x->dims[0];
    p->B = p->layout1 ? x->dims[0] : x->dims[1];
    p->I = x->dims[2];
    p->H = r->dims[2];
    int64_t hs = 0, GH = p->G * p->H;
    vn_status st = vn_so_attr_int(ctx, where, "hidden_size", p->H, &hs);
    if (st == VN_OK && hs != p->H)
        st = vn_error(VN_ERR_SHAPE, where, "hidden_size %lld but R has %lld columns", (long long)hs,
                      (long long)p->H);
    int64_t w[3] = {p->D, GH, p->I}, rr[3] = {p->D, GH, p->H}, b[2] = {p->D, 2 * GH};
    int64_t h0[3] = {p->D, p->B, p->H}, pp[2] = {p->D, 3 * p->H}, lens[1] = {p->B};
    if (p->layout1) h0[0] = p->B, h0[1] = p->D;
    if (st == VN_OK) st = check_shape(ctx, where, VN_RNN_W, "W", 3, w);
    if (st == VN_OK) st = check_shape(ctx, where, VN_RNN_R, "R", 3, rr);
    if (st == VN_OK) st = check_shape(ctx, where, VN_RNN_B, "B", 2, b);
    if (st == VN_OK) st = check_shape(ctx, where, VN_RNN_LENS, "sequence_lens", 1, lens);
    if (st == VN_OK) st = check_shape(ctx, where, VN_RNN_H0, "initial_h", 3, h0);
    if (st == VN_OK && p->kind == VN_RNN_LSTM)
        st = check_shape(ctx, where, VN_RNN_C0, "initial_c", 3, h0);
    if (st == VN_OK && p->kind == VN_RNN_LSTM) st = check_shape(ctx, where, VN_RNN_P, "P", 2, pp);
    return st;
}

static void fill_outputs(const vn_rnn_plan *p, vn_tensor_desc *out)
{
    int64_t y0[4] = {p->S, p->D, p->B, p->H}, y1[4] = {p->B, p->S, p->D, p->H};
    int64_t h0[3] = {p->D, p->B, p->H}, h1[3] = {p->B, p->D, p->H};
    out[0] = vn_so_desc(VN_F32, 4, p->layout1 ? y1 : y0);
    out[1] = vn_so_desc(VN_F32, 3, p->layout1 ? h1 : h0);
    if (p->kind == VN_RNN_LSTM) out[2] = out[1];
}

vn_status vn_rnn_params(const vn_op_ctx *ctx, vn_rnn_kind kind, const char *where, vn_rnn_plan *p,
                        vn_tensor_desc *out)
{
    int64_t layout = 0, lbr = 0, inf = 0;
    double clip = 0;
    p->kind = kind;
    p->G = gates_of[kind];
    vn_status st = parse_direction(ctx, where, p);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "layout", 0, &layout);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "linear_before_reset", 0, &lbr);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "input_forget", 0, &inf);
    if (st == VN_OK && vn_attrs_find(ctx->attrs, "clip"))
        st = vn_attrs_float(ctx->attrs, "clip", 0, &clip);
    if (st != VN_OK) return st;
    if (layout != 0 && layout != 1)
        return vn_error(VN_ERR_INVALID_ARG, where, "layout must be 0 or 1, not %lld",
                        (long long)layout);
    if (clip < 0) return vn_error(VN_ERR_INVALID_ARG, where, "clip must be positive");
    p->layout1 = layout == 1;
    p->lbr = kind == VN_RNN_GRU && lbr != 0;
    p->input_forget = kind == VN_RNN_LSTM && inf != 0;
    p->clip = (float)clip;
    p->Grec = kind == VN_RNN_GRU && !p->lbr ? 2 : p->G;
    st = parse_acts(ctx, where, p);
    if (st == VN_OK) st = parse_shapes(ctx, where, p);
    if (st == VN_OK && out) fill_outputs(p, out);
    return st;
}
