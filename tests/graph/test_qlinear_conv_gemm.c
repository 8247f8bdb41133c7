/*
 * test_qlinear_conv_gemm.c — QLinearConv / ConvInteger on the int8 GEMM
 * (src/ops/conv_integer_gemm.c) in one-node models, against an exact
 * reference (int64 sums, the ONNX requantisation in double):
 *   - W an initializer (packed once at plan time) and W a graph input (packed
 *     per run) give the same bytes, and the reference's;
 *   - compile -> save .vnm -> load -> run is bit-identical, and the file
 *     stores W packed, not raw (its raw bytes are those of the model
 *     without W);
 *   - the shapes: 3x3 with padding and x's zero point != 0, groups; 1x1
 *     stride 1 unpadded read in place (G = 1 and grouped); a 7x7 stride-2
 *     stem; per-channel scales, bias, u8 and i8 y; ConvInteger with i8 x and
 *     a u8 W with a zero point (the row-sum correction), dilation; more
 *     channels than one finish tile.
 * Registered for every ISA path (and with AMX off, CMakeLists.txt).
 */
#include <math.h>
#include <unistd.h>

#include "graph/vnm.h"
#include "onnx_build.h"
#include "vinci/graph.h"
#include "vt.h"

typedef struct ccase {
    const char *name;
    bool qlinear, x_i8, w_u8, y_i8;
    int64_t C, H, W, K, G, KH, KW, s, pad, dil;
    int xzp, wzp, yzp;
} ccase;

static const ccase cases[] = {
    {"3x3 pad xzp groups", true, false, false, false, 4, 9, 11, 6, 2, 3, 3, 1, 1, 1, 131, 0, 100},
    {"1x1 in place", true, false, false, true, 20, 7, 9, 24, 1, 1, 1, 1, 0, 1, 3, 0, -5},
    {"1x1 in place grouped", true, false, false, false, 8, 5, 6, 12, 4, 1, 1, 1, 0, 1, 200, 0, 7},
    {"7x7/2 stem", true, false, false, false, 3, 37, 41, 16, 1, 7, 7, 2, 3, 1, 77, 0, 128},
    {"wide finish", true, false, false, false, 16, 6, 70, 40, 1, 3, 3, 1, 1, 1, 12, 0, 30},
    {"ConvInteger i8 x u8 w dil", false, true, true, false, 6, 11, 10, 4, 1, 3, 3, 2, 1, 2, -9, 5,
     0},
};

static int64_t out_dim(int64_t i, int64_t k, const ccase *c)
{
    return (i + 2 * c->pad - ((k - 1) * c->dil + 1)) / c->s + 1;
}

typedef struct cdata {
    uint8_t *x, *w;
    float xs, ws[64], ys;
    int32_t b[64];
    int8_t wzpk[64]; /* w's zero point per output channel (all c->wzp unless a test sets them) */
    int64_t OH, OW, nx, nw, ny;
} cdata;

static void make_data(const ccase *c, cdata *d)
{
    vt_rng r = {0x9e37 + (uint64_t)c->C * 31 + (uint64_t)c->K};
    d->OH = out_dim(c->H, c->KH, c), d->OW = out_dim(c->W, c->KW, c);
    d->nx = c->C * c->H * c->W, d->nw = c->K * (c->C / c->G) * c->KH * c->KW;
    d->ny = c->K * d->OH * d->OW;
    d->x = malloc((size_t)d->nx), d->w = malloc((size_t)d->nw);
    for (int64_t i = 0; i < d->nx; i++) d->x[i] = (uint8_t)(vt_next(&r) >> 56);
    for (int64_t i = 0; i < d->nw; i++) d->w[i] = (uint8_t)(vt_next(&r) >> 56);
    d->xs = 0.021f, d->ys = 0.37f;
    for (int64_t k = 0; k < c->K; k++) {
        d->ws[k] = 0.0013f * (float)(k % 7 + 1); /* per channel */
        d->b[k] = (int32_t)(vt_next(&r) >> 52) - 2048;
        d->wzpk[k] = (int8_t)c->wzp;
    }
}

static int64_t xval(const ccase *c, const cdata *d, int64_t i)
{
    return c->x_i8 ? (int8_t)d->x[i] : d->x[i];
}
static int64_t wval(const ccase *c, const cdata *d, int64_t i)
{
    return c->w_u8 ? d->w[i] : (int8_t)d->w[i];
}

/* The exact output element i (i32 for ConvInteger, else the y byte). */
static int64_t ref(const ccase *c, const cdata *d, int64_t i)
{
    int64_t k = i / (d->OH * d->OW), oh = i / d->OW % d->OH, ow = i % d->OW;
    int64_t cg = c->C / c->G, c0 = k / (c->K / c->G) * cg, acc = 0;
    for (int64_t ci = 0; ci < cg; ci++)
        for (int64_t kh = 0; kh < c->KH; kh++)
            for (int64_t kw = 0; kw < c->KW; kw++) {
                int64_t ih = oh * c->s - c->pad + kh * c->dil,
                        iw = ow * c->s - c->pad + kw * c->dil;
                if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                acc += (xval(c, d, ((c0 + ci) * c->H + ih) * c->W + iw) - c->xzp) *
                       (wval(c, d, ((k * cg + ci) * c->KH + kh) * c->KW + kw) -
                        (c->w_u8 ? (uint8_t)d->wzpk[k] : d->wzpk[k]));
            }
    if (!c->qlinear) return (int32_t)acc;
    float m = d->xs * d->ws[k] / d->ys;
    double v = nearbyint((double)(int32_t)(acc + d->b[k]) * (double)m) + c->yzp;
    double lo = c->y_i8 ? -128 : 0, hi = c->y_i8 ? 127 : 255;
    return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

static void scalar_init(ob *g, const char *name, int elem, const void *v, size_t bytes, int rank,
                        int64_t n)
{
    ob t = {0};
    ob_tensor_raw(&t, name, elem, rank, &n, v, bytes);
    ob_msg(g, 5, &t);
}

/* w_input: W is a graph input, not an initializer; wzp_input: so is w's
 * zero point, per channel ([K]), while W may stay constant. */
static ob model(const ccase *c, const cdata *d, bool w_input, bool wzp_input)
{
    ob g = {0}, at = {0};
    int xe = c->x_i8 ? OB_INT8 : OB_UINT8, we = c->w_u8 ? OB_UINT8 : OB_INT8;
    int ye = c->qlinear ? (c->y_i8 ? OB_INT8 : OB_UINT8) : OB_INT32;
    const char *qin[] = {"x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "b", NULL};
    const char *iin[] = {"x", "w", "xzp", "wzp", NULL}, *out[] = {"y", NULL};
    int64_t pads[4] = {c->pad, c->pad, c->pad, c->pad}, st[2] = {c->s, c->s};
    int64_t dil[2] = {c->dil, c->dil};
    ob_attr_ints(&at, "pads", pads, 4);
    ob_attr_ints(&at, "strides", st, 2);
    ob_attr_ints(&at, "dilations", dil, 2);
    ob_attr_int(&at, "group", c->G);
    ob_node(&g, c->qlinear ? "QLinearConv" : "ConvInteger", "conv", c->qlinear ? qin : iin, out,
            &at);
    ob_str(&g, 2, "qconv");
    int64_t wd[4] = {c->K, c->C / c->G, c->KH, c->KW}, xd[4] = {1, c->C, c->H, c->W};
    int64_t yd[4] = {1, c->K, d->OH, d->OW};
    if (w_input) {
        ob_value_info(&g, 11, "w", we, 4, wd, NULL);
    } else {
        ob t = {0};
        ob_tensor_raw(&t, "w", we, 4, wd, d->w, (size_t)d->nw);
        ob_msg(&g, 5, &t);
    }
    uint8_t xzp = (uint8_t)c->xzp, wzp = (uint8_t)c->wzp, yzp = (uint8_t)c->yzp;
    scalar_init(&g, "xzp", xe, &xzp, 1, 0, 1);
    if (wzp_input)
        ob_value_info(&g, 11, "wzp", we, 1, &c->K, NULL);
    else
        scalar_init(&g, "wzp", we, &wzp, 1, 0, 1);
    if (c->qlinear) {
        scalar_init(&g, "xs", OB_FLOAT, &d->xs, 4, 0, 1);
        scalar_init(&g, "ys", OB_FLOAT, &d->ys, 4, 0, 1);
        scalar_init(&g, "yzp", ye, &yzp, 1, 0, 1);
        scalar_init(&g, "ws", OB_FLOAT, d->ws, (size_t)c->K * 4, 1, c->K);
        scalar_init(&g, "b", OB_INT32, d->b, (size_t)c->K * 4, 1, c->K);
    }
    ob_value_info(&g, 11, "x", xe, 4, xd, NULL);
    ob_value_info(&g, 12, "y", ye, 4, yd, NULL);
    return ob_model(&g, 13);
}

static vn_model *compile(const ccase *c, const cdata *d, bool w_input, bool wzp_input,
                         vn_graph **gr)
{
    ob mb = model(c, d, w_input, wzp_input);
    vn_model *m = NULL;
    VT_OK(vn_graph_load_onnx_bytes(mb.p, mb.n, "qconv.onnx", NULL, gr));
    ob_free(&mb);
    vn_compile_options o = {.opt_level = 0};
    if (*gr) VT_OK(vn_model_compile(*gr, &o, &m));
    return m;
}

/* Runs m with x, and W (w_input) or w's per-channel zero point (wzp_input)
 * as the second input. */
static vn_status run(const ccase *c, const cdata *d, const vn_model *m, bool w_input,
                     bool wzp_input, void *y)
{
    vn_dtype xdt = c->x_i8 ? VN_I8 : VN_U8, wdt = c->w_u8 ? VN_U8 : VN_I8;
    vn_dtype ydt = c->qlinear ? (c->y_i8 ? VN_I8 : VN_U8) : VN_I32;
    vn_named_tensor in[2] = {{"x", {{xdt, 4, {1, c->C, c->H, c->W}}, d->x}},
                             {"w", {{wdt, 4, {c->K, c->C / c->G, c->KH, c->KW}}, d->w}}};
    if (wzp_input) in[1] = (vn_named_tensor){"wzp", {{wdt, 1, {c->K}}, (void *)d->wzpk}};
    vn_named_tensor out[1] = {{"y", {{ydt, 4, {1, c->K, d->OH, d->OW}}, y}}};
    vn_model_ctx *ctx = NULL;
    vn_status st = vn_model_ctx_create(m, &ctx);
    if (st == VN_OK) st = vn_model_run(m, ctx, in, w_input || wzp_input ? 2 : 1, out, 1);
    vn_model_ctx_destroy(ctx);
    return st;
}

static int64_t yval(const ccase *c, const void *y, int64_t i)
{
    if (!c->qlinear) return ((const int32_t *)y)[i];
    return c->y_i8 ? ((const int8_t *)y)[i] : ((const uint8_t *)y)[i];
}

static vn_model *save_load(const vn_model *m, vn_model_file_info *fi)
{
    char path[256];
    vn_model *l = NULL;
    snprintf(path, sizeof path, "/tmp/vinci_test_qconv_%d.vnm", (int)getpid());
    VT_OK(vn_model_save(m, path));
    VT_OK(vn_model_load(path, NULL, &l));
    remove(path);
    if (l) VT_OK(vn_model_file_info_get(l, fi));
    return l;
}

static int count_wrong(const ccase *c, const cdata *d, const void *y)
{
    int bad = 0;
    for (int64_t i = 0; i < d->ny; i++) bad += yval(c, y, i) != ref(c, d, i);
    return bad;
}

static void check_case(const ccase *c)
{
    cdata d;
    make_data(c, &d);
    size_t yb = (size_t)d.ny * (c->qlinear ? 1 : 4);
    uint8_t *y = calloc(1, yb), *y2 = calloc(1, yb), *y3 = calloc(1, yb);
    vn_graph *g1 = NULL, *g2 = NULL;
    vn_model *m = compile(c, &d, false, false, &g1), *mi = compile(c, &d, true, false, &g2),
             *l = NULL;
    if (m && mi) {
        VT_OK(run(c, &d, m, false, false, y));
        int bad = count_wrong(c, &d, y);
        VT_CHECK(bad == 0, "%s: %d of %lld elements differ from the reference", c->name, bad,
                 (long long)d.ny);
        VT_OK(run(c, &d, mi, true, false, y2));
        VT_CHECK(!memcmp(y, y2, yb), "%s: W as an input differs", c->name);
        vn_model_file_info fi = {0};
        l = save_load(m, &fi);
        if (l) VT_OK(run(c, &d, l, false, false, y3));
        VT_CHECK(l && !memcmp(y, y3, yb), "%s: the loaded .vnm differs", c->name);
        /* W packed, not raw: the same raw bytes as the model without W */
        vn_model_file_info fi2 = {0};
        vn_model_destroy(save_load(mi, &fi2));
        VT_CHECK(fi.weight_bytes == fi2.weight_bytes,
                 "%s: .vnm stores %zu raw bytes, %zu without W (%lld bytes)", c->name,
                 fi.weight_bytes, fi2.weight_bytes, (long long)d.nw);
    }
    vn_model_destroy(l);
    vn_model_destroy(m);
    vn_model_destroy(mi);
    vn_graph_destroy(g1);
    vn_graph_destroy(g2);
    free(y), free(y2), free(y3), free(d.x), free(d.w);
}

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i]);
}

/* W constant but its zero point a graph input: the plan cannot know whether
 * a run takes the GEMM (one zero point) or the scalar loops (one per
 * channel), so W must stay raw for the latter — in the compiled model and in
 * a loaded .vnm alike. */
static void test_wzp_input(void)
{
    const ccase *c = &cases[0];
    cdata d;
    make_data(c, &d);
    uint8_t *y = calloc(1, (size_t)d.ny);
    vn_graph *g = NULL;
    vn_model *m = compile(c, &d, false, true, &g), *l = NULL;
    vn_model_file_info fi = {0};
    if (m) l = save_load(m, &fi);
    const vn_model *ms[2] = {m, l};
    for (int k = 0; k < 2 && l; k++) {
        memset(d.wzpk, 3, sizeof d.wzpk); /* one value: the GEMM */
        VT_OK(run(c, &d, ms[k], false, true, y));
        VT_CHECK(count_wrong(c, &d, y) == 0, "model %d, one w zero point: wrong outputs", k);
        for (int64_t i = 0; i < c->K; i++) d.wzpk[i] = (int8_t)(i % 3 - 1);
        VT_OK(run(c, &d, ms[k], false, true, y)); /* per channel: the scalar loops */
        VT_CHECK(count_wrong(c, &d, y) == 0, "model %d, per-channel w zero points: wrong", k);
    }
    vn_model_destroy(l);
    vn_model_destroy(m);
    vn_graph_destroy(g);
    free(y), free(d.x), free(d.w);
}

int main(void)
{
    VT_RUN(test_cases);
    VT_RUN(test_wzp_input);
    return vt_summary();
}
