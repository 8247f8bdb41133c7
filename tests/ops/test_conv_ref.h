/*
 * test_conv_ref.h — the double-precision direct-convolution reference and the
 * harness that runs a convolution operator on NCHW or NC1HWC0 and checks it
 * against the reference (shared by test_conv.c and test_conv_winograd.c).
 *
 * Layouts of a run (`layout`): CONV_NCHW, CONV_BLOCKED (NC1HWC0 in and out),
 * CONV_PLAIN_X (an NC1HWC0 operator given an NCHW X: x_layout = "NCHW").
 */
#ifndef VINCI_TEST_CONV_REF_H
#define VINCI_TEST_CONV_REF_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"
#include "vinci/ops.h"
#include "vt.h"

typedef struct cc {
    int nsp;
    int64_t N, C, H, W, K, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, G;
    const char *auto_pad; /* NULL: explicit pads */
} cc;

typedef struct epi_case {
    vn_conv_act act;
    const char *name;
    float params[2];
    int nparams;
    bool bias, res;
} epi_case;

/* Every fused epilogue, with the parameters, the residual and bias choices
 * each is tested with (shared by the direct, GEMM and Winograd sweeps). */
static __attribute__((unused)) const epi_case conv_epi_cases[] = {
    {VN_CONV_ACT_NONE, "", {0, 0}, 0, true, true},
    {VN_CONV_ACT_RELU, "Relu", {0, 0}, 0, true, true},
    {VN_CONV_ACT_CLIP, "Clip", {-0.5f, 0.7f}, 2, true, true},
    {VN_CONV_ACT_CLIP, "Relu6", {0, 6}, 0, false, true},
    {VN_CONV_ACT_LEAKY_RELU, "LeakyRelu", {0.1f, 0}, 1, true, false},
    {VN_CONV_ACT_HARD_SIGMOID, "HardSigmoid", {0.2f, 0.5f}, 2, true, true},
    {VN_CONV_ACT_HARD_SWISH, "HardSwish", {0, 0}, 0, true, true},
    {VN_CONV_ACT_SIGMOID, "Sigmoid", {0, 0}, 0, true, true},
    {VN_CONV_ACT_SILU, "SiLU", {0, 0}, 0, false, false},
};

/* ---- reference ----------------------------------------------------------------- */

static __attribute__((unused)) int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t d,
                                               int64_t *pb, int64_t *pe, const char *mode)
{
    int64_t ek = (k - 1) * d + 1;
    if (mode && strcmp(mode, "VALID") == 0) *pb = *pe = 0;
    if (mode && strncmp(mode, "SAME", 4) == 0) {
        int64_t o = (in + s - 1) / s, tot = (o - 1) * s + ek - in;
        if (tot < 0) tot = 0;
        *pb = mode[5] == 'U' ? tot / 2 : tot - tot / 2;
        *pe = tot - *pb;
    }
    return (in + *pb + *pe - ek) / s + 1;
}

static __attribute__((unused)) double act_ref(double v, const epi_case *e)
{
    switch (e->act) {
    case VN_CONV_ACT_RELU:
        return v > 0 ? v : 0;
    case VN_CONV_ACT_CLIP:
        return fmin(fmax(v, e->params[0]), e->params[1]);
    case VN_CONV_ACT_LEAKY_RELU:
        return v >= 0 ? v : e->params[0] * v;
    case VN_CONV_ACT_HARD_SIGMOID:
        return fmin(fmax(e->params[0] * v + e->params[1], 0), 1);
    case VN_CONV_ACT_HARD_SWISH:
        return v * fmin(fmax(v / 6 + 0.5, 0), 1);
    case VN_CONV_ACT_SIGMOID:
        return 1 / (1 + exp(-v));
    case VN_CONV_ACT_SILU:
        return v / (1 + exp(-v));
    default:
        return v;
    }
}

/* y and mag: [N][K][OH][OW] (NCHW) */
static __attribute__((unused)) void ref_conv(const cc *c, int64_t OH, int64_t OW, const float *x,
                                             const float *w, const float *b, const float *z,
                                             const epi_case *e, double *y, double *mag)
{
    int64_t cg = c->C / c->G, kg = c->K / c->G;
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t k = 0; k < c->K; k++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double s = 0, m = 0;
                    int64_t gi = k / kg;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t i = 0; i < c->kh; i++)
                            for (int64_t j = 0; j < c->kw; j++) {
                                int64_t ih = oh * c->sh - c->pt + i * c->dh;
                                int64_t iw = ow * c->sw - c->pl + j * c->dw;
                                if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                                double t =
                                    (double)x[((n * c->C + gi * cg + ci) * c->H + ih) * c->W + iw] *
                                    w[((k * cg + ci) * c->kh + i) * c->kw + j];
                                s += t;
                                m += fabs(t);
                            }
                    int64_t o = ((n * c->K + k) * OH + oh) * OW + ow;
                    if (b) s += b[k], m += fabs(b[k]);
                    if (z) s += z[o], m += fabs(z[o]);
                    y[o] = act_ref(s, e);
                    mag[o] = m;
                }
}

/* ---- layouts (the test's own, to check the operators) ---------------------------- */

static __attribute__((unused)) void to_blocked(const float *x, float *y, int64_t N, int64_t C,
                                               int64_t S)
{
    int64_t C1 = (C + 15) / 16;
    memset(y, 0, (size_t)(N * C1 * S * 16) * sizeof *y);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t s = 0; s < S; s++)
                y[((n * C1 + c / 16) * S + s) * 16 + c % 16] = x[(n * C + c) * S + s];
}

static __attribute__((unused)) void from_blocked(const float *x, float *y, int64_t N, int64_t C,
                                                 int64_t S)
{
    int64_t C1 = (C + 15) / 16;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t s = 0; s < S; s++)
                y[(n * C + c) * S + s] = x[((n * C1 + c / 16) * S + s) * 16 + c % 16];
}

/* ---- running the operator ---------------------------------------------------------- */

enum { CONV_NCHW, CONV_BLOCKED, CONV_PLAIN_X };

/* Attribute compute = "bf16" on the runs (CONV_BF16_*), and what to expect:
 * bf16 arithmetic (the reference from bf16-rounded X and W, and far from the
 * f32 one), or the f32 fallback (a CPU without AVX512_BF16, another ISA). */
enum { CONV_F32, CONV_BF16_EXPECT_BF16, CONV_BF16_EXPECT_F32 };
static int conv_test_compute = CONV_F32;

static __attribute__((unused)) float bf16_round(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    u += 0x7fffu + ((u >> 16) & 1u); /* nearest even (finite values) */
    u &= 0xffff0000u;
    memcpy(&v, &u, 4);
    return v;
}

typedef struct attr_buf {
    vn_attr items[14];
    int64_t k[2], s[2], d[2], p[4], wshape[4];
    float ap[2];
    int count;
} attr_buf;

static __attribute__((unused)) void add_ints(attr_buf *a, const char *name, const int64_t *v, int n)
{
    a->items[a->count++] = (vn_attr){.name = name, .type = VN_ATTR_INTS, .ints = v, .count = n};
}

static __attribute__((unused)) vn_attrs make_attrs(attr_buf *a, const cc *c, const char *algo,
                                                   const epi_case *e, int layout)
{
    int ns = c->nsp;
    memset(a, 0, sizeof *a);
    if (ns == 2) {
        a->k[0] = c->kh, a->k[1] = c->kw, a->s[0] = c->sh, a->s[1] = c->sw;
        a->d[0] = c->dh, a->d[1] = c->dw;
        a->p[0] = c->pt, a->p[1] = c->pl, a->p[2] = c->pb, a->p[3] = c->pr;
    } else {
        a->k[0] = c->kw, a->s[0] = c->sw, a->d[0] = c->dw, a->p[0] = c->pl, a->p[1] = c->pr;
    }
    add_ints(a, "kernel_shape", a->k, ns);
    add_ints(a, "strides", a->s, ns);
    add_ints(a, "dilations", a->d, ns);
    if (c->auto_pad)
        a->items[a->count++] =
            (vn_attr){.name = "auto_pad", .type = VN_ATTR_STRING, .s = c->auto_pad};
    else
        add_ints(a, "pads", a->p, 2 * ns);
    a->items[a->count++] = (vn_attr){.name = "group", .type = VN_ATTR_INT, .i = c->G};
    if (algo) a->items[a->count++] = (vn_attr){.name = "algo", .type = VN_ATTR_STRING, .s = algo};
    if (layout == CONV_PLAIN_X)
        a->items[a->count++] = (vn_attr){.name = "x_layout", .type = VN_ATTR_STRING, .s = "NCHW"};
    if (conv_test_compute != CONV_F32)
        a->items[a->count++] = (vn_attr){.name = "compute", .type = VN_ATTR_STRING, .s = "bf16"};
    if (e && e->name) {
        a->items[a->count++] =
            (vn_attr){.name = "activation", .type = VN_ATTR_STRING, .s = e->name};
        memcpy(a->ap, e->params, sizeof a->ap);
        if (e->nparams)
            a->items[a->count++] = (vn_attr){.name = "activation_params",
                                             .type = VN_ATTR_FLOATS,
                                             .floats = a->ap,
                                             .count = e->nparams};
    }
    return (vn_attrs){a->items, a->count};
}

static __attribute__((unused)) vn_tensor_desc make_desc(int rank, const int64_t *dims)
{
    vn_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = VN_F32;
    d.rank = rank;
    for (int i = 0; i < rank; i++) d.dims[i] = dims[i];
    return d;
}

/* X / Y descriptors of the case in a layout (channels c). */
static __attribute__((unused)) vn_tensor_desc fmap_desc(const cc *c, int64_t ch, int64_t h,
                                                        int64_t w, bool blocked)
{
    int64_t dims[5];
    int r = 0;
    dims[r++] = c->N;
    dims[r++] = blocked ? (ch + 15) / 16 : ch;
    if (c->nsp == 2) dims[r++] = h;
    dims[r++] = w;
    if (blocked) dims[r++] = 16;
    return make_desc(r, dims);
}

typedef struct run_out {
    vn_status st;
    char algo[16];
} run_out;

/* Run the op in `layout` (CONV_*); x, z and y NCHW. */
static __attribute__((unused)) vn_status run_op(const cc *c, int layout, const char *algo,
                                                const epi_case *e, const float *x, const float *w,
                                                const float *b, const float *z, float *y,
                                                int64_t OH, int64_t OW)
{
    attr_buf ab;
    vn_attrs attrs = make_attrs(&ab, c, algo, e, layout);
    bool blocked = layout != CONV_NCHW, blocked_x = layout == CONV_BLOCKED;
    int64_t wd[4] = {c->K, c->C / c->G, c->nsp == 2 ? c->kh : c->kw, c->kw};
    vn_tensor_desc in[4];
    in[0] = fmap_desc(c, c->C, c->H, c->W, blocked_x);
    in[1] = make_desc(c->nsp + 2, wd);
    int64_t kd[1] = {c->K};
    in[2] = make_desc(1, kd);
    if (!b) in[2].rank = -1;
    in[3] = fmap_desc(c, c->K, OH, OW, blocked);
    bool fused = e != NULL;
    int nin = fused ? (z ? 4 : 3) : (b ? 3 : 2);
    const char *name = fused ? (blocked ? "vinci::FusedConvNC1HWC0" : "vinci::FusedConv")
                             : (blocked ? "vinci::ConvNC1HWC0" : "Conv");
    vn_op_plan *plan;
    vn_status st = vn_op_plan_create(NULL, name, in, nin, &attrs, &plan);
    if (st != VN_OK) return st;
    int64_t S = c->H * c->W, OS = OH * OW;
    int64_t C1 = (c->C + 15) / 16, K1 = (c->K + 15) / 16;
    float *xb = NULL, *zb = NULL, *yb = NULL;
    const float *xi = x, *zi = z;
    float *yo = y;
    if (blocked_x) {
        xb = malloc((size_t)(c->N * C1 * S * 16) * 4);
        to_blocked(x, xb, c->N, c->C, S);
        xi = xb;
    }
    if (blocked) {
        yb = malloc((size_t)(c->N * K1 * OS * 16) * 4);
        yo = yb;
        if (z) {
            zb = malloc((size_t)(c->N * K1 * OS * 16) * 4);
            to_blocked(z, zb, c->N, c->K, OS);
            zi = zb;
        }
    }
    vn_tensor ti[4] = {
        {in[0], (void *)xi}, {in[1], (void *)w}, {in[2], (void *)b}, {in[3], (void *)zi}};
    vn_tensor to = {*vn_op_plan_output(plan, 0), yo};
    size_t ws = vn_op_plan_workspace(plan);
    void *wsp = ws ? malloc(ws) : NULL;
    st = vn_op_run(plan, ti, nin, &to, 1, wsp);
    if (st == VN_OK && blocked) {
        from_blocked(yb, y, c->N, c->K, OS);
        /* padded lanes must be zero */
        for (int64_t n = 0; n < c->N && c->K % 16; n++)
            for (int64_t s = 0; s < OS; s++)
                for (int64_t l = c->K % 16; l < 16; l++)
                    if (yb[((n * K1 + K1 - 1) * OS + s) * 16 + l] != 0.0f) st = VN_ERR_INTERNAL;
    }
    free(wsp);
    free(xb);
    free(yb);
    free(zb);
    vn_op_plan_destroy(plan);
    return st;
}

static __attribute__((unused)) void geometry(cc *c, int64_t *OH, int64_t *OW)
{
    *OH = out_dim(c->H, c->kh, c->sh, c->dh, &c->pt, &c->pb, c->auto_pad);
    *OW = out_dim(c->W, c->kw, c->sw, c->dw, &c->pl, &c->pr, c->auto_pad);
}

static __attribute__((unused)) bool legal(const cc *c, const char *algo)
{
    if (!algo || strcmp(algo, "im2col") == 0) return true;
    if (strcmp(algo, "gemm") == 0)
        return c->kh == 1 && c->kw == 1 && c->sh == 1 && c->sw == 1 && !c->pt && !c->pl && !c->pb &&
               !c->pr;
    if (strcmp(algo, "depthwise") == 0) return c->G > 1 && c->G == c->C && c->G == c->K;
    return c->G == 1 || ((c->C / c->G) % 16 == 0 && (c->K / c->G) % 16 == 0);
}

/* Can the case run in `layout` with `algo`? CONV_PLAIN_X: the direct kernel
 * reading NCHW X itself (vn_conv_plain_input_ok). */
static __attribute__((unused)) bool legal_in(const cc *c, const char *algo, int layout)
{
    if (layout != CONV_PLAIN_X) return legal(c, algo);
    bool flat = c->kh == 1 && c->kw == 1 && c->sh == 1 && c->sw == 1 && !c->pt && !c->pl &&
                !c->pb && !c->pr && !c->auto_pad;
    return (!algo || !strcmp(algo, "direct")) && c->nsp == 2 && c->G == 1 && c->C <= 16 && !flat;
}

/* Run one case against the reference; every output must satisfy
 * |y - ref| <= tol * (1 + sum |x*w| + |b| + |z|). Returns the bad count. */
static __attribute__((unused)) int check_case_tol(cc c, const epi_case *e, const char *algo,
                                                  int layout, uint64_t seed, double tol)
{
    int64_t OH, OW;
    geometry(&c, &OH, &OW);
    cc run = c; /* pads resolved for the reference; the operator gets the original */
    vt_rng r = {seed};
    int64_t nx = c.N * c.C * c.H * c.W, nw = c.K * (c.C / c.G) * c.kh * c.kw,
            ny = c.N * c.K * OH * OW;
    float *x = malloc((size_t)nx * 4), *w = malloc((size_t)nw * 4), *b = malloc((size_t)c.K * 4);
    float *z = malloc((size_t)ny * 4), *y = malloc((size_t)ny * 4);
    double *ref = malloc((size_t)ny * 8), *mag = malloc((size_t)ny * 8);
    vt_fill(&r, x, (size_t)nx, -1, 1);
    vt_fill(&r, w, (size_t)nw, -1, 1);
    vt_fill(&r, b, (size_t)c.K, -1, 1);
    vt_fill(&r, z, (size_t)ny, -1, 1);
    bool hb = !e || e->bias, hz = e && e->res;
    epi_case none = {VN_CONV_ACT_NONE, NULL, {0, 0}, 0, true, false};
    bool bf = conv_test_compute == CONV_BF16_EXPECT_BF16;
    float *xr = malloc((size_t)nx * 4), *wr = malloc((size_t)nw * 4);
    for (int64_t i = 0; i < nx; i++) xr[i] = bf ? bf16_round(x[i]) : x[i];
    for (int64_t i = 0; i < nw; i++) wr[i] = bf ? bf16_round(w[i]) : w[i];
    ref_conv(&run, OH, OW, xr, wr, hb ? b : NULL, hz ? z : NULL, e ? e : &none, ref, mag);
    cc op = c;
    if (c.auto_pad) op.pt = op.pl = op.pb = op.pr = 0;
    vn_status st = run_op(&op, layout, algo, e, x, w, hb ? b : NULL, hz ? z : NULL, y, OH, OW);
    int bad = 0;
    double worst = 0;
    for (int64_t i = 0; i < ny && st == VN_OK; i++) {
        double err = fabs(y[i] - ref[i]);
        if (!(err <= tol * (1 + mag[i]))) bad++;
        if (err / (1 + mag[i]) > worst) worst = err / (1 + mag[i]);
    }
    if (bf && st == VN_OK) { /* bf16 really ran: the f32 reference is far off */
        double *r32 = malloc((size_t)ny * 8), *m32 = malloc((size_t)ny * 8), far = 0;
        ref_conv(&run, OH, OW, x, w, hb ? b : NULL, hz ? z : NULL, e ? e : &none, r32, m32);
        for (int64_t i = 0; i < ny; i++) far = fmax(far, fabs(y[i] - r32[i]) / (1 + m32[i]));
        VT_CHECK(far > 1e-4, "bf16 run within %.2g of the f32 reference", far);
        free(r32), free(m32);
    }
    free(xr), free(wr);
    VT_CHECK(
        st == VN_OK && bad == 0,
        "N%lld C%lld %lldx%lld K%lld k%lldx%lld s%lld,%lld d%lld,%lld pads %lld,%lld,%lld,%lld "
        "G%lld %s nsp%d %s algo %s act %s: %s %s, %d bad, worst rel %.3g",
        (long long)c.N, (long long)c.C, (long long)c.H, (long long)c.W, (long long)c.K,
        (long long)c.kh, (long long)c.kw, (long long)c.sh, (long long)c.sw, (long long)c.dh,
        (long long)c.dw, (long long)c.pt, (long long)c.pl, (long long)c.pb, (long long)c.pr,
        (long long)c.G, c.auto_pad ? c.auto_pad : "", c.nsp,
        layout == CONV_NCHW      ? "NCHW"
        : layout == CONV_BLOCKED ? "NC1HWC0"
                                 : "NCHW->NC1HWC0",
        algo ? algo : "auto", e && e->name ? e->name : "-", vn_status_name(st),
        st == VN_OK ? "" : vn_last_error(), bad, worst);
    free(x), free(w), free(b), free(z), free(y), free(ref), free(mag);
    return bad;
}

static __attribute__((unused)) int check_case(cc c, const epi_case *e, const char *algo, int layout,
                                              uint64_t seed)
{
    return check_case_tol(c, e, algo, layout, seed, 1e-5);
}

#endif /* VINCI_TEST_CONV_REF_H */
