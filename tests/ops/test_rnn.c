/*
 * test_rnn.c — RNN, GRU and LSTM against a double-precision reference
 * written here from the ONNX equations: one batch row at a time, every
 * product a plain dot product. Covers directions, layouts, sequence_lens,
 * initial states, peepholes, clip, input_forget, linear_before_reset and
 * non-default activations.
 */
#include "test_shape_ops_harness.h"

enum { K_RNN, K_GRU, K_LSTM };
static const int G_OF[3] = {1, 3, 4}, ACTS_OF[3] = {1, 2, 3};

typedef struct rcase {
    int kind;
    int64_t S, B, I, H;
    int D;
    bool reverse, layout1, lbr, inforget, has_b, has_lens, has_h0, has_c0, has_p;
    double clip;
    bool leaky; /* f = LeakyRelu(alpha 0.3) instead of the default */
} rcase;

static uint32_t seed = 12345;
static double rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (double)(seed >> 8) / (double)(1u << 24) * 2.0 - 1.0;
}

static double clipv(const rcase *c, double x)
{
    return c->clip > 0 ? fmin(fmax(x, -c->clip), c->clip) : x;
}
static double f_act(const rcase *c, double x)
{
    x = clipv(c, x);
    if (c->leaky) return x >= 0 ? x : 0.3 * x;
    return c->kind == K_RNN ? tanh(x) : 1.0 / (1.0 + exp(-x));
}
static double g_act(const rcase *c, double x)
{
    return tanh(clipv(c, x));
}

typedef struct rdata {
    double *X, *W, *R, *Bb, *h0, *c0, *P;
    int64_t *lens;
} rdata;

/* Row `row` of weight matrix m (G*H rows of k columns) of direction d, times v. */
static double dot(const double *m, int64_t d, int64_t rows, int64_t k, int64_t row, const double *v)
{
    double s = 0;
    for (int64_t i = 0; i < k; i++) s += m[(d * rows + row) * k + i] * v[i];
    return s;
}

static int64_t soff(const rcase *c, int d, int64_t b)
{
    return (c->layout1 ? b * c->D + d : d * c->B + b) * c->H;
}

static void reference(const rcase *c, const rdata *in, double *Y, double *Yh, double *Yc)
{
    int64_t H = c->H, G = G_OF[c->kind], GH = G * H, S = c->S, B = c->B;
    memset(Y, 0, (size_t)(S * c->D * B * H) * sizeof(double));
    double h[64], cc[64], xw[256], hr[256], nh[64];
    for (int d = 0; d < c->D; d++) {
        bool rev = c->D == 2 ? d == 1 : c->reverse;
        for (int64_t b = 0; b < B; b++) {
            for (int64_t j = 0; j < H; j++) {
                h[j] = c->has_h0 ? in->h0[soff(c, d, b) + j] : 0;
                cc[j] = c->has_c0 ? in->c0[soff(c, d, b) + j] : 0;
            }
            int64_t n = c->has_lens ? in->lens[b] : S;
            for (int64_t step = 0; step < n; step++) {
                int64_t t = rev ? n - 1 - step : step;
                const double *x = in->X + (c->layout1 ? b * S + t : t * B + b) * c->I;
                for (int64_t r = 0; r < GH; r++) {
                    double wb = c->has_b ? in->Bb[d * 2 * GH + r] : 0;
                    double rb = c->has_b ? in->Bb[d * 2 * GH + GH + r] : 0;
                    xw[r] = dot(in->W, d, GH, c->I, r, x) + wb;
                    hr[r] = dot(in->R, d, GH, H, r, h) + rb;
                }
                for (int64_t j = 0; j < H; j++) {
                    if (c->kind == K_RNN) {
                        nh[j] = f_act(c, xw[j] + hr[j]);
                    } else if (c->kind == K_GRU) {
                        double z = f_act(c, xw[j] + hr[j]);
                        double hh;
                        if (c->lbr) {
                            double r = f_act(c, xw[H + j] + hr[H + j]);
                            hh = g_act(c, xw[2 * H + j] + r * hr[2 * H + j]);
                        } else {
                            double rh[64];
                            for (int64_t k = 0; k < H; k++)
                                rh[k] = f_act(c, xw[H + k] + hr[H + k]) * h[k];
                            double rbh = c->has_b ? in->Bb[d * 2 * GH + GH + 2 * H + j] : 0;
                            hh =
                                g_act(c, xw[2 * H + j] + dot(in->R, d, GH, H, 2 * H + j, rh) + rbh);
                        }
                        nh[j] = (1 - z) * hh + z * h[j];
                    } else {
                        const double *P = c->has_p ? in->P + d * 3 * H : NULL;
                        double i = f_act(c, xw[j] + hr[j] + (P ? P[j] * cc[j] : 0));
                        double f = c->inforget ? 1 - i
                                               : f_act(c, xw[2 * H + j] + hr[2 * H + j] +
                                                              (P ? P[2 * H + j] * cc[j] : 0));
                        double g = g_act(c, xw[3 * H + j] + hr[3 * H + j]);
                        cc[j] = f * cc[j] + i * g;
                        double o = f_act(c, xw[H + j] + hr[H + j] + (P ? P[H + j] * cc[j] : 0));
                        nh[j] = o * tanh(cc[j]);
                    }
                }
                memcpy(h, nh, (size_t)H * sizeof(double));
                int64_t yo =
                    c->layout1 ? ((b * S + t) * c->D + d) * H : ((t * c->D + d) * B + b) * H;
                for (int64_t j = 0; j < H; j++) Y[yo + j] = h[j];
            }
            for (int64_t j = 0; j < H; j++) {
                Yh[soff(c, d, b) + j] = h[j];
                Yc[soff(c, d, b) + j] = cc[j];
            }
        }
    }
}

static vn_tensor fill(int64_t n_dims, const int64_t *dims, double *store)
{
    vn_tensor t = th_make(VN_F32, (int32_t)n_dims, dims);
    for (int64_t i = 0; i < vn_desc_numel(&t.desc); i++) {
        /* the reference sees exactly the f32 values vinci sees */
        store[i] = (double)(float)rnd();
        th_set(&t, i, store[i]);
    }
    return t;
}

/* Largest error relative to 1 + |want| (f32 steps against double). */
static double max_err(const vn_tensor *t, const double *want, int64_t n)
{
    double e = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(th_at(t, i) - want[i]) / (1 + fabs(want[i])));
    return e;
}

static void run_case(const char *name, const rcase *c)
{
    static const char *ops[3] = {"RNN", "GRU", "LSTM"};
    int64_t G = G_OF[c->kind], GH = G * c->H, S = c->S, B = c->B, D = c->D;
    int64_t xd[3] = {c->layout1 ? B : S, c->layout1 ? S : B, c->I};
    int64_t wd[3] = {D, GH, c->I}, rd[3] = {D, GH, c->H}, bd[2] = {D, 2 * GH};
    int64_t hd[3] = {c->layout1 ? B : D, c->layout1 ? D : B, c->H}, pd[2] = {D, 3 * c->H};
    static double X[4096], W[4096], R[4096], Bb[1024], h0[512], c0[512], P[256];
    int64_t lens[16];
    rdata in = {X, W, R, Bb, h0, c0, P, lens};
    vn_tensor t[8];
    memset(t, 0, sizeof t);
    for (int i = 0; i < 8; i++) t[i].desc.rank = -1;
    t[0] = fill(3, xd, X);
    t[1] = fill(3, wd, W);
    t[2] = fill(3, rd, R);
    if (c->has_b) t[3] = fill(2, bd, Bb);
    if (c->has_lens) {
        for (int64_t b = 0; b < B; b++) /* full, empty, one step, all but one */
            lens[b] = b % 4 == 0 ? S : b % 4 == 1 ? 0 : b % 4 == 2 ? 1 : S - 1;
        t[4] = th_make(VN_I32, 1, &B);
        for (int64_t b = 0; b < B; b++) th_set(&t[4], b, (double)lens[b]);
    }
    if (c->has_h0) t[5] = fill(3, hd, h0);
    if (c->has_c0) t[6] = fill(3, hd, c0);
    if (c->has_p) t[7] = fill(2, pd, P);
    int ni = c->kind == K_LSTM ? 8 : 6;
    while (ni > 3 && t[ni - 1].desc.rank < 0) ni--;
    const char *dir = D == 2 ? "bidirectional" : c->reverse ? "reverse" : "forward";
    const char *acts_rnn[2] = {"LeakyRelu", "LeakyRelu"};
    const char *acts_gru[4] = {"LeakyRelu", "Tanh", "LeakyRelu", "Tanh"};
    const char *acts_lstm[6] = {"LeakyRelu", "Tanh", "Tanh", "LeakyRelu", "Tanh", "Tanh"};
    const char *const *acts = c->kind == K_RNN ? acts_rnn : c->kind == K_GRU ? acts_gru : acts_lstm;
    float alphas[2] = {0.3f, 0.3f};
    /* every attribute always given: each operator ignores the others' */
    vn_attr a[8] = {TH_STR("direction", dir),
                    TH_INT("hidden_size", c->H),
                    TH_INT("layout", c->layout1),
                    TH_INT("linear_before_reset", c->lbr),
                    TH_INT("input_forget", c->inforget),
                    TH_FLOAT("clip", c->clip)};
    int na = 6;
    if (c->leaky) {
        a[na++] = (vn_attr){.name = "activations",
                            .type = VN_ATTR_STRINGS,
                            .strings = acts,
                            .count = ACTS_OF[c->kind] * (int32_t)D};
        a[na++] = (vn_attr){.name = "activation_alpha",
                            .type = VN_ATTR_FLOATS,
                            .floats = alphas,
                            .count = (int32_t)D};
    }
    vn_attrs at = {a, na};
    vn_tensor out[3];
    VT_OK(th_op(ops[c->kind], t, ni, false, &at, out, c->kind == K_LSTM ? 3 : 2));
    int64_t ny = S * D * B * c->H, nh = D * B * c->H;
    static double Y[8192], Yh[512], Yc[512];
    reference(c, &in, Y, Yh, Yc);
    VT_CHECK(vn_desc_numel(&out[0].desc) == ny && out[0].desc.rank == 4, "%s: Y shape", name);
    VT_CHECK(c->layout1 ? out[0].desc.dims[0] == B && out[0].desc.dims[2] == D
                        : out[0].desc.dims[0] == S && out[0].desc.dims[1] == D,
             "%s: Y layout", name);
    double ey = max_err(&out[0], Y, ny), eh = max_err(&out[1], Yh, nh);
    double ec = c->kind == K_LSTM ? max_err(&out[2], Yc, nh) : 0;
    VT_CHECK(ey < 5e-5 && eh < 5e-5 && ec < 5e-5, "%s: errors Y %g Y_h %g Y_c %g", name, ey, eh,
             ec);
    th_free(out, c->kind == K_LSTM ? 3 : 2);
    th_free(t, 8);
}

static void test_rnn_simple(void)
{
    rcase a = {.kind = K_RNN, .S = 5, .B = 3, .I = 4, .H = 6, .D = 1};
    run_case("rnn defaults", &a);
    rcase b = {.kind = K_RNN,
               .S = 4,
               .B = 5,
               .I = 3,
               .H = 7,
               .D = 2,
               .has_b = true,
               .has_lens = true,
               .has_h0 = true,
               .leaky = true};
    run_case("rnn bidirectional lens leaky", &b);
    rcase c = {.kind = K_RNN,
               .S = 6,
               .B = 2,
               .I = 5,
               .H = 4,
               .D = 1,
               .reverse = true,
               .layout1 = true,
               .has_b = true,
               .has_h0 = true,
               .clip = 0.5};
    run_case("rnn reverse layout1 clip", &c);
}

static void test_gru(void)
{
    rcase a = {.kind = K_GRU, .S = 5, .B = 3, .I = 4, .H = 6, .D = 1, .has_b = true};
    run_case("gru default", &a);
    a.lbr = true;
    run_case("gru linear_before_reset", &a);
    rcase b = {.kind = K_GRU,
               .S = 4,
               .B = 5,
               .I = 3,
               .H = 5,
               .D = 2,
               .layout1 = true,
               .has_b = true,
               .has_lens = true,
               .has_h0 = true};
    run_case("gru bidirectional layout1 lens", &b);
    b.lbr = true;
    b.leaky = true;
    run_case("gru bidirectional lbr leaky", &b);
    rcase c = {.kind = K_GRU, .S = 3, .B = 2, .I = 2, .H = 3, .D = 1, .reverse = true, .clip = 0.7};
    run_case("gru reverse clip", &c);
}

static void test_lstm(void)
{
    rcase a = {.kind = K_LSTM, .S = 5, .B = 3, .I = 4, .H = 6, .D = 1};
    run_case("lstm defaults", &a);
    rcase b = {.kind = K_LSTM,
               .S = 4,
               .B = 5,
               .I = 3,
               .H = 5,
               .D = 2,
               .has_b = true,
               .has_lens = true,
               .has_h0 = true,
               .has_c0 = true,
               .has_p = true};
    run_case("lstm bidirectional full", &b);
    b.layout1 = true;
    b.inforget = true;
    b.leaky = true;
    run_case("lstm layout1 input_forget leaky", &b);
    rcase c = {.kind = K_LSTM,
               .S = 3,
               .B = 2,
               .I = 3,
               .H = 4,
               .D = 1,
               .reverse = true,
               .has_b = true,
               .has_p = true,
               .clip = 0.4};
    run_case("lstm reverse peepholes clip", &c);
}

static void test_rnn_errors(void)
{
    int64_t xd[3] = {2, 1, 3}, wd[3] = {1, 8, 3}, rd[3] = {1, 8, 2};
    vn_tensor t[3] = {th_make(VN_F32, 3, xd), th_make(VN_F32, 3, wd), th_make(VN_F32, 3, rd)};
    vn_tensor out[3];
    VT_CHECK(th_op("GRU", t, 3, false, NULL, out, 2) == VN_ERR_SHAPE, "GRU with LSTM weights");
    VT_OK(th_op("LSTM", t, 3, false, NULL, out, 3));
    th_free(out, 3);
    const char *bad[1] = {"Gelu"};
    vn_attr a[1] = {{.name = "activations", .type = VN_ATTR_STRINGS, .strings = bad, .count = 1}};
    vn_attrs at = {a, 1};
    wd[1] = rd[1] = 2;
    t[1].desc = th_desc(VN_F32, 3, wd);
    t[2].desc = th_desc(VN_F32, 3, rd);
    VT_CHECK(th_op("RNN", t, 3, false, &at, out, 2) == VN_ERR_UNSUPPORTED, "unknown activation");
    th_free(t, 3);
}

int main(void)
{
    VT_RUN(test_rnn_simple);
    VT_RUN(test_gru);
    VT_RUN(test_lstm);
    VT_RUN(test_rnn_errors);
    return vt_summary();
}
