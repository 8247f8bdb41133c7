/*
 * test_conv_dw.c — a depthwise conv fused after a pointwise one
 * (vinci::FusedConvNC1HWC0 with dw_* attributes and inputs 4, 5;
 * conv_dw_fused.c) against the double reference: the 1x1 conv with its
 * epilogue (test_conv_ref.h), then the depthwise conv in double over that
 * map. Cases cover MobileNetV2's expansion + 3x3/2 and 3x3/1 pairs, input
 * and output channels not multiples of 16 (the last block's zero lanes,
 * under activations that map zero elsewhere), a dilated 5x5 with
 * asymmetric pads, a batch, no depthwise bias; an L1 arena that holds a
 * few rows only (many bands, each recomputing the rows it shares) and one
 * too small for one row (the workspace fallback); the refusals; and the
 * pre-packed blobs of an offline model (export, adopt: the same bits).
 */
#include "test_conv_ref.h"

/* The depthwise half: kernel, stride, dilation, pads (t, l, b, r), activation. */
typedef struct dw_case {
    int64_t k, s, d, p[4];
    const epi_case *e;
    bool bias;
    const char *auto_pad; /* given: dw_auto_pad instead of dw_pads (p is then resolved) */
} dw_case;

typedef struct dw_attrs {
    vn_attr items[24];
    int64_t k[2], s[2], d[2], p[4];
    float ap[2];
    int count;
} dw_attrs;

/* The pointwise conv's attributes (make_attrs) plus the depthwise conv's,
 * prefixed "dw_". */
static vn_attrs fused_attrs(dw_attrs *da, attr_buf *ab, const cc *c, const epi_case *e,
                            const dw_case *q, int64_t K)
{
    vn_attrs base = make_attrs(ab, c, NULL, e, CONV_BLOCKED);
    da->count = 0;
    for (int i = 0; i < base.count; i++) da->items[da->count++] = base.items[i];
    da->k[0] = da->k[1] = q->k, da->s[0] = da->s[1] = q->s, da->d[0] = da->d[1] = q->d;
    memcpy(da->p, q->p, sizeof da->p);
    vn_attr *it = da->items;
    it[da->count++] =
        (vn_attr){.name = "dw_kernel_shape", .type = VN_ATTR_INTS, .ints = da->k, .count = 2};
    it[da->count++] =
        (vn_attr){.name = "dw_strides", .type = VN_ATTR_INTS, .ints = da->s, .count = 2};
    it[da->count++] =
        (vn_attr){.name = "dw_dilations", .type = VN_ATTR_INTS, .ints = da->d, .count = 2};
    if (q->auto_pad)
        it[da->count++] =
            (vn_attr){.name = "dw_auto_pad", .type = VN_ATTR_STRING, .s = q->auto_pad};
    else
        it[da->count++] =
            (vn_attr){.name = "dw_pads", .type = VN_ATTR_INTS, .ints = da->p, .count = 4};
    it[da->count++] = (vn_attr){.name = "dw_group", .type = VN_ATTR_INT, .i = K};
    if (q->e->name) {
        it[da->count++] =
            (vn_attr){.name = "dw_activation", .type = VN_ATTR_STRING, .s = q->e->name};
        memcpy(da->ap, q->e->params, sizeof da->ap);
        if (q->e->nparams)
            it[da->count++] = (vn_attr){.name = "dw_activation_params",
                                        .type = VN_ATTR_FLOATS,
                                        .floats = da->ap,
                                        .count = q->e->nparams};
    }
    return (vn_attrs){da->items, da->count};
}

/* Depthwise conv in double of map [K][H][W] (one image) with the error
 * magnitude: |w| times the map's own (mag) plus |terms|. */
static void ref_dw(const double *map, const double *mag, int64_t K, int64_t H, int64_t W,
                   const dw_case *q, int64_t OH, int64_t OW, const float *w, const float *b,
                   double *y, double *ymag)
{
    for (int64_t k = 0; k < K; k++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double s = b ? b[k] : 0, m = b ? fabs(b[k]) : 0;
                for (int64_t i = 0; i < q->k; i++)
                    for (int64_t j = 0; j < q->k; j++) {
                        int64_t ih = oh * q->s - q->p[0] + i * q->d;
                        int64_t iw = ow * q->s - q->p[1] + j * q->d;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                        double wv = w[(k * q->k + i) * q->k + j], v = map[(k * H + ih) * W + iw];
                        s += wv * v;
                        m += fabs(wv) * (fabs(v) + mag[(k * H + ih) * W + iw]);
                    }
                y[(k * OH + oh) * OW + ow] = act_ref(s, q->e);
                ymag[(k * OH + oh) * OW + ow] = m;
            }
}

/* The six inputs of pointwise case c (C -> K) and depthwise q: X blocked,
 * W, B, no residual, the depthwise W and (if q has one) B. */
static void fused_inputs(vn_tensor_desc in[6], const cc *c, const dw_case *q)
{
    int64_t wd[4] = {c->K, c->C, 1, 1}, kd[1] = {c->K}, dwd[4] = {c->K, 1, q->k, q->k};
    in[0] = fmap_desc(c, c->C, c->H, c->W, true);
    in[1] = make_desc(4, wd), in[2] = make_desc(1, kd), in[4] = make_desc(4, dwd);
    in[5] = make_desc(1, kd);
    in[3] = (vn_tensor_desc){.rank = -1}; /* no residual */
    if (!q->bias) in[5].rank = -1;
}

/* The device the fused plans run on (NULL: the default), and the
 * workspace bytes of the last plan run_fused ran. */
static vn_device *dw_device;
static size_t dw_last_ws;

static vn_status run_fused(const vn_tensor_desc *in, int n_in, const vn_attrs *attrs,
                           const vn_tensor *ti, float *y, int64_t OH, int64_t OW)
{
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(dw_device, "vinci::FusedConvNC1HWC0", in, n_in, attrs, &plan);
    if (st != VN_OK) return st;
    const vn_tensor_desc *od = vn_op_plan_output(plan, 0);
    VT_CHECK(od->rank == 5 && od->dims[2] == OH && od->dims[3] == OW,
             "fused output %lld x %lld, want %lld x %lld", (long long)od->dims[2],
             (long long)od->dims[3], (long long)OH, (long long)OW);
    vn_tensor to = {*od, y};
    size_t ws = vn_op_plan_workspace(plan);
    void *wsp = ws ? malloc(ws) : NULL;
    dw_last_ws = ws;
    st = vn_op_run(plan, ti, n_in, &to, 1, wsp);
    free(wsp);
    vn_op_plan_destroy(plan);
    return st;
}

/* Run the fused operator on pointwise case c (C -> K, H x W) followed by
 * depthwise q, and compare every output lane (those past K must be 0). */
static void check_fused(cc c, const epi_case *e, dw_case q, uint64_t seed)
{
    int64_t H = c.H, W = c.W, K = c.K, N = c.N, pt = q.p[0], pl = q.p[1], pb = q.p[2], pr = q.p[3];
    int64_t OH = out_dim(H, q.k, q.s, q.d, &pt, &pb, q.auto_pad);
    int64_t OW = out_dim(W, q.k, q.s, q.d, &pl, &pr, q.auto_pad);
    q.p[0] = pt, q.p[1] = pl, q.p[2] = pb, q.p[3] = pr; /* the reference's pads */
    int64_t C1 = (c.C + 15) / 16, K1 = (K + 15) / 16, nx = N * c.C * H * W, nm = N * K * H * W;
    int64_t ny = N * K1 * OH * OW * 16;
    vt_rng r = {seed};
    float *x = malloc((size_t)nx * 4), *xb = malloc((size_t)(N * C1 * H * W * 16) * 4);
    float *w = malloc((size_t)(K * c.C) * 4), *b = malloc((size_t)K * 4);
    float *wd = malloc((size_t)(K * q.k * q.k) * 4), *bd = malloc((size_t)K * 4);
    float *y = malloc((size_t)ny * 4);
    double *map = malloc((size_t)nm * 8), *mag = malloc((size_t)nm * 8);
    double *ref = malloc((size_t)(K * OH * OW) * 8), *rmag = malloc((size_t)(K * OH * OW) * 8);
    vt_fill(&r, x, (size_t)nx, -1, 1);
    vt_fill(&r, w, (size_t)(K * c.C), -0.5, 0.5);
    vt_fill(&r, b, (size_t)K, -1, 1);
    vt_fill(&r, wd, (size_t)(K * q.k * q.k), -1, 1);
    vt_fill(&r, bd, (size_t)K, -1, 1);
    to_blocked(x, xb, N, c.C, H * W);
    ref_conv(&c, H, W, x, w, b, NULL, e, map, mag);

    attr_buf ab;
    dw_attrs da;
    vn_attrs attrs = fused_attrs(&da, &ab, &c, e, &q, K);
    vn_tensor_desc in[6];
    fused_inputs(in, &c, &q);
    vn_tensor ti[6] = {{in[0], xb},   {in[1], w},  {in[2], b},
                       {in[3], NULL}, {in[4], wd}, {in[5], bd}};
    vn_status st = run_fused(in, 6, &attrs, ti, y, OH, OW);
    int bad = 0;
    for (int64_t n = 0; n < N && st == VN_OK; n++) {
        ref_dw(map + n * K * H * W, mag + n * K * H * W, K, H, W, &q, OH, OW, wd,
               q.bias ? bd : NULL, ref, rmag);
        for (int64_t k = 0; k < K1 * 16; k++)
            for (int64_t i = 0; i < OH * OW; i++) {
                float got = y[((n * K1 + k / 16) * OH * OW + i) * 16 + k % 16];
                double want = k < K ? ref[k * OH * OW + i] : 0,
                       m = k < K ? rmag[k * OH * OW + i] : 0;
                if (!(fabs(got - want) <= 2e-5 * (1 + m))) bad++;
            }
    }
    VT_CHECK(st == VN_OK && bad == 0,
             "N%lld C%lld %lldx%lld K%lld act %s, dw k%lld s%lld d%lld pads %lld,%lld,%lld,%lld "
             "act %s bias %d: %s %s, %d bad",
             (long long)N, (long long)c.C, (long long)H, (long long)W, (long long)K,
             e->name ? e->name : "-", (long long)q.k, (long long)q.s, (long long)q.d,
             (long long)q.p[0], (long long)q.p[1], (long long)q.p[2], (long long)q.p[3],
             q.e->name ? q.e->name : "-", (int)q.bias, vn_status_name(st),
             st == VN_OK ? "" : vn_last_error(), bad);
    free(x), free(xb), free(w), free(b), free(wd), free(bd), free(y);
    free(map), free(mag), free(ref), free(rmag);
}

#define PW(N, C, H, W, K)                                                                          \
    (cc)                                                                                           \
    {                                                                                              \
        2, N, C, H, W, K, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, NULL                                    \
    }

static const epi_case *const relu6 = &conv_epi_cases[3];

static void test_mobilenet(void)
{
    /* features.2: 16 -> 96, ReLU6, then 3x3/2 pad 1, ReLU6 */
    check_fused(PW(1, 16, 30, 28, 96), relu6, (dw_case){3, 2, 1, {1, 1, 1, 1}, relu6, true, NULL},
                1);
    /* features.3: 24 -> 144, then 3x3/1 pad 1 */
    check_fused(PW(1, 24, 21, 19, 144), relu6, (dw_case){3, 1, 1, {1, 1, 1, 1}, relu6, true, NULL},
                2);
}

static void test_attributes(void)
{
    const epi_case *none = &conv_epi_cases[0], *sig = &conv_epi_cases[7];
    /* K % 16 = 8 with Sigmoid / HardSigmoid on both (zero lanes map to 0.5) */
    check_fused(PW(1, 20, 17, 15, 40), &conv_epi_cases[5],
                (dw_case){3, 1, 1, {1, 1, 1, 1}, sig, true, NULL}, 3);
    /* dilated 5x5, asymmetric pads, batch 2, no depthwise bias or activation */
    check_fused(PW(2, 5, 19, 23, 33), &conv_epi_cases[6],
                (dw_case){5, 1, 2, {2, 0, 3, 1}, none, false, NULL}, 4);
    /* stride 2 without pads (the last rows' taps end inside), SiLU */
    /* auto_pad SAME_UPPER / SAME_LOWER (odd padding split differently), VALID */
    check_fused(PW(1, 16, 15, 14, 32), relu6, (dw_case){4, 2, 1, {0}, relu6, true, "SAME_UPPER"},
                11);
    check_fused(PW(1, 16, 15, 14, 32), relu6, (dw_case){4, 2, 1, {0}, relu6, true, "SAME_LOWER"},
                12);
    check_fused(PW(1, 16, 15, 14, 32), relu6, (dw_case){3, 1, 1, {0}, relu6, true, "VALID"}, 13);
    check_fused(PW(1, 32, 16, 17, 48), none,
                (dw_case){3, 2, 1, {0, 0, 0, 0}, &conv_epi_cases[8], true, NULL}, 5);
}

/* Small L1 arenas: a few rows per band (many bands, each recomputing the
 * rows it shares with the next), then less than one row (the fallback:
 * the whole pointwise map in the workspace, the depthwise conv after). */
static void test_small_l1(void)
{
    static const int64_t l1[] = {48 * 1024, 4096};
    for (int i = 0; i < 2; i++) {
        vn_device_options o = {.num_threads = 2};
        o.arena_bytes[VN_ARENA_L1] = l1[i];
        VT_OK(vn_device_create(&o, &dw_device));
        check_fused(PW(1, 16, 40, 36, 96), relu6,
                    (dw_case){3, 2, 1, {1, 1, 1, 1}, relu6, true, NULL}, 6 + i);
        /* the plan took the workspace fallback (the whole pointwise map) exactly at 4 KiB */
        size_t map = (size_t)(6 * 40 * 36 * 16) * sizeof(float);
        VT_CHECK((dw_last_ws >= map) == (i == 1), "L1 %lld: workspace %zu, the map %zu",
                 (long long)l1[i], dw_last_ws, map);
        check_fused(PW(2, 24, 33, 20, 72), relu6,
                    (dw_case){3, 1, 1, {1, 1, 1, 1}, relu6, true, NULL}, 8 + i);
        /* pads wider than the kernel: at 48 KiB bands of one row, the first
         * two wholly in the padding (no pointwise row; Y = act(bias)) */
        check_fused(PW(1, 16, 12, 100, 32), &conv_epi_cases[7],
                    (dw_case){3, 1, 1, {4, 1, 3, 1}, relu6, true, NULL}, 10 + i);
        vn_device_destroy(dw_device);
        dw_device = NULL;
    }
}

static void set_group(dw_attrs *da, int64_t group)
{
    for (int i = 0; i < da->count; i++)
        if (strcmp(da->items[i].name, "dw_group") == 0) da->items[i].i = group;
}

/* Plan-time refusals, each naming what is wrong. */
static void test_refused(void)
{
    cc c = PW(1, 16, 12, 12, 32);
    dw_case q = {3, 1, 1, {1, 1, 1, 1}, relu6, true, NULL};
    attr_buf ab;
    dw_attrs da;
    vn_attrs attrs = fused_attrs(&da, &ab, &c, relu6, &q, 32);
    int64_t dwd[4] = {32, 1, 3, 3}, zd[5] = {1, 2, 12, 12, 16};
    vn_tensor_desc in[6];
    fused_inputs(in, &c, &q);
    in[3] = make_desc(5, zd);
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 6, &attrs, &plan) ==
                 VN_ERR_UNSUPPORTED,
             "a fused depthwise conv after a conv with a residual is refused");
    VT_CONTAINS(vn_last_error(), "fused depthwise conv");
    in[3].rank = -1;
    VT_OK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 6, &attrs, &plan));
    vn_op_plan_destroy(plan);
    /* a depthwise W whose group does not match (a dense 3x3 instead) */
    int64_t dense[4] = {32, 32, 3, 3};
    in[4] = make_desc(4, dense);
    set_group(&da, 1);
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 6, &attrs, &plan) ==
                 VN_ERR_UNSUPPORTED,
             "a dense conv as the fused depthwise conv is refused");
    VT_CONTAINS(vn_last_error(), "depthwise");
    in[4] = make_desc(4, dwd);
    set_group(&da, 32);
    /* an attribute Conv does not have */
    vn_attr extra[25];
    memcpy(extra, attrs.items, (size_t)attrs.count * sizeof *extra);
    extra[attrs.count] = (vn_attr){.name = "dw_stride", .type = VN_ATTR_INT, .i = 1};
    vn_attrs typo = {extra, attrs.count + 1};
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 6, &typo, &plan) ==
                 VN_ERR_INVALID_ARG,
             "an unknown dw_ attribute is refused");
    VT_CONTAINS(vn_last_error(), "dw_stride");
    /* a pointwise half that is not a 1x1 */
    cc c3 = c;
    c3.kh = c3.kw = 3, c3.pt = c3.pl = c3.pb = c3.pr = 1;
    attr_buf ab3;
    dw_attrs da3;
    vn_attrs a3 = fused_attrs(&da3, &ab3, &c3, relu6, &q, 32);
    int64_t w3[4] = {32, 16, 3, 3};
    in[1] = make_desc(4, w3);
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 6, &a3, &plan) ==
                 VN_ERR_UNSUPPORTED,
             "a fused depthwise conv after a 3x3 is refused");
    VT_CONTAINS(vn_last_error(), "1x1");
}

/* Plan p (built from ctx) run on the tensors ti into y. */
static void run_plan(const vn_conv_plan *p, const vn_op_ctx *ctx, const vn_tensor *ti, float *y)
{
    vn_tensor to = {vn_conv_plan_out_desc(p), y};
    void *ws = p->ws_total ? malloc(p->ws_total) : NULL;
    vn_op_run_ctx rc = {ctx->def, ctx->device, p, ti, 6, &to, 1, ws, NULL};
    VT_OK(vn_conv_execute(p, &rc));
    free(ws);
}

/* Constant weights (as a graph has them): the plan packs all four, exports
 * them as blobs (W, B, the depthwise W and B: consumed inputs 1, 2, 4, 5),
 * and a plan built with those inputs hidden adopts them and computes the
 * same bits; the same plan with the weights as run-time inputs does too. */
static void test_prepacked(void)
{
    cc c = PW(1, 24, 21, 19, 144);
    dw_case q = {3, 2, 1, {1, 1, 1, 1}, relu6, true, NULL};
    int64_t K = 144, K1 = 9, C1 = 2, OH = 11, OW = 10;
    vt_rng r = {31};
    float *xb = calloc((size_t)(C1 * 21 * 19 * 16), 4), *w = malloc((size_t)(K * 24) * 4);
    float *b = malloc((size_t)K * 4), *wd = malloc((size_t)(K * 9) * 4),
          *bd = malloc((size_t)K * 4);
    float *y[3];
    for (int i = 0; i < 3; i++) y[i] = malloc((size_t)(K1 * OH * OW * 16) * 4);
    vt_fill(&r, xb, (size_t)(C1 * 21 * 19 * 16), -1, 1);
    vt_fill(&r, w, (size_t)(K * 24), -0.5, 0.5);
    vt_fill(&r, b, (size_t)K, -1, 1);
    vt_fill(&r, wd, (size_t)(K * 9), -1, 1);
    vt_fill(&r, bd, (size_t)K, -1, 1);
    attr_buf ab;
    dw_attrs da;
    vn_attrs attrs = fused_attrs(&da, &ab, &c, relu6, &q, K);
    vn_tensor_desc in[6];
    fused_inputs(in, &c, &q);
    vn_tensor ti[6] = {{in[0], xb},   {in[1], w},  {in[2], b},
                       {in[3], NULL}, {in[4], wd}, {in[5], bd}};
    /* what a model passes for inputs whose packed blobs the plan holds */
    vn_tensor gone[6] = {ti[0], {in[1], NULL}, {in[2], NULL}, ti[3], {in[4], NULL}, {in[5], NULL}};
    const void *data[6] = {NULL, w, b, NULL, wd, bd}, *hidden[6] = {NULL};
    vn_device *dev = NULL;
    VT_OK(vn_device_default(&dev));
    vn_op_ctx ctx = {.def = vn_op_find("FusedConvNC1HWC0", "vinci"),
                     .device = dev,
                     .inputs = in,
                     .num_inputs = 6,
                     .attrs = &attrs,
                     .node_name = "",
                     .input_data = data};
    vn_conv_plan *packed = NULL, *adopted = NULL, *plain = NULL;
    VT_OK(vn_conv_plan_build(&ctx, "packed", VN_CONV_NC1HWC0, true, &packed));
    vn_op_blob blobs[VN_OP_MAX_BLOBS];
    uint64_t consumed = 0;
    int32_t n = packed ? vn_conv_plan_export(packed, blobs, &consumed) : 0;
    VT_CHECK(n == 4 && consumed == 0x36, "%d blobs consuming 0x%llx, want 4 and 0x36", (int)n,
             (unsigned long long)consumed);
    vn_op_ctx hid = ctx;
    hid.input_data = hidden, hid.prepacked_inputs = consumed;
    VT_OK(vn_conv_plan_build(&hid, "adopted", VN_CONV_NC1HWC0, true, &adopted));
    if (adopted) VT_OK(vn_conv_plan_adopt(adopted, blobs, n, consumed));
    ctx.input_data = NULL;
    VT_OK(vn_conv_plan_build(&ctx, "plain", VN_CONV_NC1HWC0, true, &plain));
    if (packed && adopted && plain) {
        run_plan(packed, &ctx, ti, y[0]);
        run_plan(adopted, &ctx, gone, y[1]);
        run_plan(plain, &ctx, ti, y[2]);
        size_t bytes = (size_t)(K1 * OH * OW * 16) * 4;
        VT_CHECK(!memcmp(y[0], y[1], bytes) && !memcmp(y[0], y[2], bytes),
                 "packed, adopted and per-run packed weights give the same bits");
    }
    /* a blob missing: refused with a message */
    if (adopted)
        VT_CHECK(vn_conv_plan_adopt(adopted, blobs, n - 1, consumed) == VN_ERR_FORMAT,
                 "3 blobs for 4 consumed inputs are refused");
    vn_conv_plan_free(packed), vn_conv_plan_free(adopted), vn_conv_plan_free(plain);
    free(xb), free(w), free(b), free(wd), free(bd);
    for (int i = 0; i < 3; i++) free(y[i]);
}

int main(void)
{
    VT_RUN(test_mobilenet);
    VT_RUN(test_attributes);
    VT_RUN(test_small_l1);
    VT_RUN(test_refused);
    VT_RUN(test_prepacked);
    return vt_summary();
}
