/*
 * test_conv_winograd.c — the Winograd F(4x4, 3x3) and F(2x2, 3x3)
 * convolutions (algo "winograd", conv_winograd*.c; F(2x2) where 4x4 tiles
 * would be fewer than 8, so the small shapes below run it, marked F2)
 * against the double-precision direct
 * convolution of test_conv_ref.h: odd H / W (partial tiles), channels not
 * multiples of 16, symmetric / asymmetric / zero / large pads, batches, both
 * layouts, every fused epilogue with bias and residual, pre-packed weights,
 * the automatic choice, and that it refuses what it cannot run.
 *
 * Error bound (docs/architecture.md): |y - ref| <= 1e-4 * (1 + sum |x*w| +
 * |b| + |z|) per output: ten times the direct kernels' bound, because the
 * transforms add values scaled by up to 5 (B^T), 1/4..1/24 (G) and 8 (A^T)
 * before the channel sums. The measured worst (printed) is what the bound
 * must stay above.
 */
#include "test_conv_ref.h"

#define WINO_TOL 1e-4

static void check(cc c, const epi_case *e, bool blocked, uint64_t seed)
{
    check_case_tol(c, e, "winograd", blocked, seed, WINO_TOL);
}

#define C2(N, C, H, W, K, pt, pl, pb, pr)                                                          \
    {                                                                                              \
        2, N, C, H, W, K, 3, 3, 1, 1, 1, 1, pt, pl, pb, pr, 1, NULL                                \
    }

static const cc shapes[] = {
    C2(1, 16, 8, 8, 16, 1, 1, 1, 1),    /* F2, whole tiles */
    C2(1, 3, 7, 9, 5, 1, 1, 1, 1),      /* F2, odd sizes, 3 -> 5 channels */
    C2(2, 20, 9, 11, 33, 1, 1, 1, 1),   /* batch 2, partial tiles, 2-3 blocks */
    C2(1, 17, 10, 6, 18, 0, 0, 0, 0),   /* F2, no padding */
    C2(1, 32, 13, 5, 40, 2, 0, 1, 3),   /* asymmetric pads */
    C2(1, 48, 5, 5, 48, 3, 3, 3, 3),    /* pads bigger than the kernel reach */
    C2(1, 64, 14, 14, 64, 1, 1, 1, 1),  /* F2 (16 tiles of 4x4, few channels) */
    C2(1, 130, 7, 7, 70, 1, 1, 1, 1),   /* F2, many input blocks, odd output blocks */
    C2(3, 8, 3, 3, 8, 1, 1, 1, 1),      /* F2, one 4x4 tile per image */
    C2(1, 5, 1, 30, 9, 1, 1, 1, 1),     /* one row */
    C2(1, 40, 29, 31, 24, 1, 1, 1, 1),  /* F4, many tiles: several GEMM chunks */
    C2(1, 24, 5, 5, 20, 0, 1, 2, 0),    /* F2, asymmetric pads, partial 2x2 tiles */
    C2(2, 20, 17, 19, 33, 1, 1, 1, 1),  /* F4: batch 2, partial 4x4 tiles */
    C2(1, 130, 14, 14, 70, 1, 1, 1, 1), /* F4: 16 tiles, many input blocks */
    C2(1, 32, 23, 21, 40, 2, 0, 1, 3),  /* F4: asymmetric pads */
};

static void test_shapes(void)
{
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int bl = 0; bl < 2; bl++) check(shapes[i], NULL, bl, 300 + i);
}

static void test_epilogues(void)
{
    static const cc ec[] = {
        C2(1, 20, 6, 7, 18, 1, 1, 1, 1), /* F2, K % 16 != 0: padded lanes must stay zero */
        C2(2, 32, 9, 5, 32, 1, 0, 1, 1), C2(1, 20, 24, 22, 18, 1, 1, 1, 1), /* F4, K % 16 != 0 */
    };
    for (size_t e = 0; e < sizeof conv_epi_cases / sizeof conv_epi_cases[0]; e++)
        for (size_t i = 0; i < sizeof ec / sizeof ec[0]; i++)
            for (int bl = 0; bl < 2; bl++) check(ec[i], &conv_epi_cases[e], bl, 50 + e * 10 + i);
}

/* The measured error against the bound: the worst |y - ref| / (1 + mag)
 * over wide reductions (where the f32 channel sums dominate) and narrow ones
 * (where the transforms do), inputs in [-1, 1] and in [0, 1] (no
 * cancellation in the transforms' sums). Printed for the documentation. */
static double worst_error(cc c, float lo, uint64_t seed)
{
    int64_t OH = c.H + c.pt + c.pb - 2, OW = c.W + c.pl + c.pr - 2;
    int64_t nx = c.N * c.C * c.H * c.W, nw = c.K * c.C * 9, ny = c.N * c.K * OH * OW;
    float *x = malloc((size_t)nx * 4), *w = malloc((size_t)nw * 4), *y = malloc((size_t)ny * 4);
    double *ref = malloc((size_t)ny * 8), *mag = malloc((size_t)ny * 8), worst = -1;
    vt_rng r = {seed};
    vt_fill(&r, x, (size_t)nx, lo, 1);
    vt_fill(&r, w, (size_t)nw, lo, 1);
    epi_case none = {VN_CONV_ACT_NONE, NULL, {0, 0}, 0, false, false};
    ref_conv(&c, OH, OW, x, w, NULL, NULL, &none, ref, mag);
    if (run_op(&c, true, "winograd", NULL, x, w, NULL, NULL, y, OH, OW) == VN_OK) {
        worst = 0;
        for (int64_t i = 0; i < ny; i++) worst = fmax(worst, fabs(y[i] - ref[i]) / (1 + mag[i]));
    }
    free(x), free(w), free(y), free(ref), free(mag);
    return worst;
}

static void test_error_bound(void)
{
    static const cc wide[] = {
        /* F4 */ C2(1, 4, 24, 24, 16, 1, 1, 1, 1), C2(1, 64, 24, 24, 16, 1, 1, 1, 1),
        C2(1, 512, 12, 12, 16, 1, 1, 1, 1),
        /* F2 */ C2(1, 4, 12, 12, 16, 1, 1, 1, 1), C2(1, 64, 12, 12, 16, 1, 1, 1, 1),
        C2(1, 512, 8, 8, 16, 1, 1, 1, 1)};
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        for (int pos = 0; pos < 2; pos++) {
            double e = worst_error(wide[i], pos ? 0.0f : -1.0f, 11 + i);
            printf("  winograd F(%dx%d) C=%lld inputs in [%d, 1]: worst |y - ref| / (1 + "
                   "sum|x*w|) = %.2e\n",
                   i < 3 ? 4 : 2, i < 3 ? 4 : 2, (long long)wide[i].C, pos ? 0 : -1, e);
            VT_CHECK(e >= 0 && e <= WINO_TOL, "C=%lld: worst %.3g above the bound %.0e",
                     (long long)wide[i].C, e, WINO_TOL);
        }
}

/* The automatic choice takes Winograd only for 3x3 stride-1 group-1
 * convolutions, and the forced algo is refused elsewhere. */
static vn_status plan_algo(const cc *c, const char *algo, char *name, size_t size)
{
    attr_buf ab;
    vn_attrs attrs = make_attrs(&ab, c, algo, NULL, CONV_BLOCKED);
    int64_t wd[4] = {c->K, c->C / c->G, c->kh, c->kw};
    vn_tensor_desc in[2] = {fmap_desc(c, c->C, c->H, c->W, true), make_desc(4, wd)};
    vn_op_ctx ctx = {.inputs = in, .num_inputs = 2, .attrs = &attrs, .node_name = ""};
    vn_conv_plan *p = NULL;
    vn_status st = vn_conv_plan_build(&ctx, "test", VN_CONV_NC1HWC0, false, &p);
    if (st == VN_OK) snprintf(name, size, "%s", vn_conv_algo_name(p->algo));
    vn_conv_plan_free(p);
    return st;
}

static void test_choice(void)
{
    char name[32] = "";
    cc big = C2(1, 128, 28, 28, 128, 1, 1, 1, 1);
    VT_CHECK(plan_algo(&big, NULL, name, sizeof name) == VN_OK, "plan 128@28");
    VT_CHECK(strcmp(name, "winograd") == 0, "3x3 128@28 auto chooses winograd, got %s", name);
    /* 4 tiles of 4x4 (their weights would dominate): 16 of 2x2 */
    cc small = C2(1, 512, 7, 7, 512, 1, 1, 1, 1);
    VT_CHECK(plan_algo(&small, NULL, name, sizeof name) == VN_OK, "plan 512@7");
    VT_CHECK(strcmp(name, "winograd") == 0, "3x3 512@7 auto chooses winograd, got %s", name);
    vn_conv_geom g7 = {.N = 1, .C = 512, .K = 512, .OH = 7, .OW = 7};
    VT_CHECK(vn_conv_winograd_variant(&g7) == VN_WINO_F2, "512@7 runs F(2x2)");
    /* F(2x2) from 32 channels on, on every ISA */
    bool avx512 = vn_isa_active() == VN_ISA_AVX512;
    cc few = C2(1, 128, 7, 7, 128, 1, 1, 1, 1), tiny = C2(1, 16, 7, 7, 32, 1, 1, 1, 1);
    VT_CHECK(plan_algo(&few, NULL, name, sizeof name) == VN_OK, "plan 128@7");
    VT_CHECK(strcmp(name, "winograd") == 0, "3x3 128@7 auto chooses winograd, got %s", name);
    VT_CHECK(plan_algo(&tiny, NULL, name, sizeof name) == VN_OK, "plan 16>32@7");
    VT_CHECK(strcmp(name, "direct") == 0, "3x3 16>32@7 auto chooses direct, got %s", name);
    /* 16 tiles: F(4x4) only with many input channels (SqueezeNet's 13x13 vs ResNet's 14x14) */
    cc sq = C2(1, 64, 13, 13, 256, 1, 1, 1, 1), r14 = C2(1, 256, 14, 14, 256, 1, 1, 1, 1);
    VT_CHECK(plan_algo(&sq, NULL, name, sizeof name) == VN_OK, "plan 64>256@13");
    VT_CHECK(strcmp(name, "winograd") == 0, "3x3 64>256@13 auto chooses winograd, got %s", name);
    vn_conv_geom g13 = {.N = 1, .C = 64, .K = 256, .OH = 13, .OW = 13};
    VT_CHECK(vn_conv_winograd_variant(&g13) == VN_WINO_F2, "64>256@13 runs F(2x2)");
    VT_CHECK(plan_algo(&r14, NULL, name, sizeof name) == VN_OK, "plan 256@14");
    VT_CHECK(strcmp(name, "winograd") == 0, "3x3 256@14 auto chooses winograd, got %s", name);
    vn_conv_geom g14 = {.N = 1, .C = 256, .K = 256, .OH = 14, .OW = 14};
    /* AVX-512: F(2x2), whose weights a model streams in less time */
    VT_CHECK(vn_conv_winograd_variant(&g14) == (avx512 ? VN_WINO_F2 : VN_WINO_F4),
             "256@14 runs F(%dx%d)", avx512 ? 2 : 4, avx512 ? 2 : 4);
    vn_conv_geom g14c = {.N = 1, .C = 128, .K = 256, .OH = 14, .OW = 14};
    VT_CHECK(vn_conv_winograd_variant(&g14c) == VN_WINO_F4, "128>256@14 runs F(4x4)");
    vn_conv_geom g28 = {.N = 1, .C = 256, .K = 256, .OH = 28, .OW = 28};
    VT_CHECK(vn_conv_winograd_variant(&g28) == VN_WINO_F4, "256@28 runs F(4x4)");
    cc s2 = big;
    s2.sh = s2.sw = 2;
    VT_CHECK(plan_algo(&s2, "winograd", name, sizeof name) == VN_ERR_UNSUPPORTED,
             "stride 2 refuses winograd");
    VT_CONTAINS(vn_last_error(), "winograd");
    cc d2 = big;
    d2.dh = 2;
    VT_CHECK(plan_algo(&d2, "winograd", name, sizeof name) == VN_ERR_UNSUPPORTED,
             "dilation refuses winograd");
    cc k5 = big;
    k5.kh = k5.kw = 5;
    VT_CHECK(plan_algo(&k5, "winograd", name, sizeof name) == VN_ERR_UNSUPPORTED,
             "5x5 refuses winograd");
    cc g2 = big;
    g2.G = 2;
    VT_CHECK(plan_algo(&g2, "winograd", name, sizeof name) == VN_ERR_UNSUPPORTED,
             "group 2 refuses winograd");
}

/* Weights packed once by vn_conv_pack_weights (the Winograd layout) give
 * the same result as weights packed per run. */
static void test_packed(void)
{
    cc c = C2(1, 24, 9, 10, 20, 1, 1, 1, 1);
    int64_t OH = 9, OW = 10, nx = c.C * c.H * c.W, nw = c.K * c.C * 9, ny = c.K * OH * OW;
    float *x = malloc((size_t)nx * 4), *w = malloc((size_t)nw * 4), *b = malloc((size_t)c.K * 4);
    float *y0 = malloc((size_t)ny * 4), *y1 = malloc((size_t)ny * 4);
    vt_rng r = {77};
    vt_fill(&r, x, (size_t)nx, -1, 1);
    vt_fill(&r, w, (size_t)nw, -1, 1);
    vt_fill(&r, b, (size_t)c.K, -1, 1);
    VT_CHECK(run_op(&c, true, "winograd", NULL, x, w, b, NULL, y0, OH, OW) == VN_OK, "run");
    attr_buf ab;
    vn_attrs attrs = make_attrs(&ab, &c, "winograd", NULL, CONV_BLOCKED);
    int64_t wd[4] = {c.K, c.C, 3, 3}, kd[1] = {c.K}, elems = 0;
    vn_tensor_desc in[3] = {fmap_desc(&c, c.C, c.H, c.W, true), make_desc(4, wd), make_desc(1, kd)};
    VT_CHECK(vn_conv_pack_weights("vinci::ConvNC1HWC0", in, 3, &attrs, NULL, NULL, &elems) == VN_OK,
             "packed size");
    /* 9 tiles of 4x4 over 24 channels: F(2x2), 16 points of [K1][C1][16][16] */
    VT_CHECK(elems == 16 * 2 * 2 * 256, "winograd packed elems %lld", (long long)elems);
    float *wp = malloc((size_t)elems * 4);
    vn_conv_pack_weights("vinci::ConvNC1HWC0", in, 3, &attrs, w, wp, &elems);
    ab.items[ab.count++] = (vn_attr){.name = "packed", .type = VN_ATTR_INT, .i = 1};
    ab.wshape[0] = c.K, ab.wshape[1] = c.C, ab.wshape[2] = 3, ab.wshape[3] = 3;
    add_ints(&ab, "weight_shape", ab.wshape, 4);
    attrs = (vn_attrs){ab.items, ab.count};
    in[1] = make_desc(1, &elems);
    vn_op_plan *plan = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "vinci::ConvNC1HWC0", in, 3, &attrs, &plan) == VN_OK,
             "plan packed: %s", vn_last_error());
    if (plan) {
        int64_t C1 = 2, K1 = 2, S = c.H * c.W, OS = OH * OW;
        float *xb = malloc((size_t)(C1 * S * 16) * 4), *yb = malloc((size_t)(K1 * OS * 16) * 4);
        to_blocked(x, xb, 1, c.C, S);
        vn_tensor ti[3] = {{in[0], xb}, {in[1], wp}, {in[2], b}};
        vn_tensor to = {*vn_op_plan_output(plan, 0), yb};
        size_t ws = vn_op_plan_workspace(plan);
        void *wsp = ws ? malloc(ws) : NULL;
        VT_CHECK(vn_op_run(plan, ti, 3, &to, 1, wsp) == VN_OK, "run packed");
        from_blocked(yb, y1, 1, c.K, OS);
        VT_CHECK(memcmp(y0, y1, (size_t)ny * 4) == 0, "pre-packed == packed per run");
        free(wsp), free(xb), free(yb);
        vn_op_plan_destroy(plan);
    }
    free(x), free(w), free(b), free(y0), free(y1), free(wp);
}

int main(void)
{
    VT_RUN(test_shapes);
    VT_RUN(test_epilogues);
    VT_RUN(test_error_bound);
    VT_RUN(test_choice);
    VT_RUN(test_packed);
    return vt_summary();
}
