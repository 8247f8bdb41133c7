/*
 * test_conv_gap.c — a GlobalAveragePool fused into a convolution
 * (vinci::FusedConvNC1HWC0 with pool_global = 1, conv_direct.c's globally
 * pooled tiles) against the double reference: the convolution with its
 * epilogue (test_conv_ref.h), then each channel's mean in double. Cases:
 * SqueezeNet's classifier (a flat 1x1 with ReLU), a ResNet's last block (1x1
 * and 3x3 with a residual, batch 2), a strided 1x1 (its gathered chunks),
 * K % 16 != 0 under HardSigmoid (zero lanes that the activation makes
 * non-zero must pool to zero), two groups; an L1 arena too small for the
 * scratch (the workspace fallback); and the refusals.
 */
#include "test_conv_ref.h"

typedef struct gap_attrs {
    vn_attr items[20];
    int count;
} gap_attrs;

/* The conv's attributes (make_attrs) plus pool_global = value. */
static vn_attrs global_attrs(gap_attrs *ga, attr_buf *ab, const cc *c, const epi_case *e,
                             int64_t value)
{
    vn_attrs base = make_attrs(ab, c, NULL, e, CONV_BLOCKED);
    ga->count = 0;
    for (int i = 0; i < base.count; i++) ga->items[ga->count++] = base.items[i];
    ga->items[ga->count++] = (vn_attr){.name = "pool_global", .type = VN_ATTR_INT, .i = value};
    return (vn_attrs){ga->items, ga->count};
}

/* The device the plans run on (NULL: the default), and whether its plans
 * must take the workspace fallback (the whole map, pooled after). */
static vn_device *gap_device;
static bool gap_expect_map;

/* Run case c fused with its global pool and compare every pooled value
 * (lanes past K must be zero). */
static void check_gap(cc c, const epi_case *e, bool residual, uint64_t seed)
{
    int64_t OH, OW;
    geometry(&c, &OH, &OW);
    vt_rng r = {seed};
    int64_t C1 = (c.C + 15) / 16, K1 = (c.K + 15) / 16, pix = OH * OW;
    int64_t nx = c.N * c.C * c.H * c.W, nw = c.K * (c.C / c.G) * c.kh * c.kw, ny = c.N * c.K * pix;
    float *x = malloc((size_t)nx * 4), *xb = calloc((size_t)(c.N * C1 * c.H * c.W * 16), 4);
    float *w = malloc((size_t)nw * 4), *b = malloc((size_t)c.K * 4);
    float *z = malloc((size_t)ny * 4), *zb = calloc((size_t)(c.N * K1 * pix * 16), 4);
    float *y = malloc((size_t)(c.N * K1 * 16) * 4);
    double *ref = malloc((size_t)ny * 8), *mag = malloc((size_t)ny * 8);
    vt_fill(&r, x, (size_t)nx, -1, 1);
    vt_fill(&r, w, (size_t)nw, -1, 1);
    vt_fill(&r, b, (size_t)c.K, -1, 1);
    vt_fill(&r, z, (size_t)ny, -1, 1);
    to_blocked(x, xb, c.N, c.C, c.H * c.W);
    to_blocked(z, zb, c.N, c.K, pix);
    ref_conv(&c, OH, OW, x, w, b, residual ? z : NULL, e, ref, mag);

    attr_buf ab;
    gap_attrs ga;
    vn_attrs attrs = global_attrs(&ga, &ab, &c, e, 1);
    int64_t wd[4] = {c.K, c.C / c.G, c.kh, c.kw}, kd[1] = {c.K};
    vn_tensor_desc in[4] = {fmap_desc(&c, c.C, c.H, c.W, true), make_desc(4, wd), make_desc(1, kd),
                            fmap_desc(&c, c.K, OH, OW, true)};
    int nin = residual ? 4 : 3;
    vn_op_plan *plan = NULL;
    vn_status st = vn_op_plan_create(gap_device, "vinci::FusedConvNC1HWC0", in, nin, &attrs, &plan);
    int bad = 0;
    if (st == VN_OK) {
        const vn_tensor_desc *od = vn_op_plan_output(plan, 0);
        VT_CHECK(od->rank == 5 && od->dims[1] == K1 && od->dims[2] == 1 && od->dims[3] == 1,
                 "pooled output [%lld, %lld, %lld, %lld, 16]", (long long)od->dims[0],
                 (long long)od->dims[1], (long long)od->dims[2], (long long)od->dims[3]);
        vn_tensor ti[4] = {{in[0], xb}, {in[1], w}, {in[2], b}, {in[3], zb}};
        vn_tensor to = {*od, y};
        size_t ws = vn_op_plan_workspace(plan), map = (size_t)(c.N * K1 * pix * 16) * 4;
        VT_CHECK(!gap_expect_map || ws >= map, "workspace %zu bytes, the map needs %zu", ws, map);
        void *wsp = ws ? malloc(ws) : NULL;
        st = vn_op_run(plan, ti, nin, &to, 1, wsp);
        free(wsp);
        vn_op_plan_destroy(plan);
    }
    for (int64_t n = 0; n < c.N && st == VN_OK; n++)
        for (int64_t k = 0; k < K1 * 16; k++) {
            double want = 0, m = 0; /* lanes past K stay zero */
            for (int64_t p = 0; k < c.K && p < pix; p++) {
                want += ref[(n * c.K + k) * pix + p] / (double)pix;
                m += mag[(n * c.K + k) * pix + p] / (double)pix;
            }
            float got = y[(n * K1 + k / 16) * 16 + k % 16];
            if (!(fabs(got - want) <= 1e-5 * (1 + m))) bad++;
        }
    VT_CHECK(st == VN_OK && bad == 0,
             "N%lld C%lld %lldx%lld K%lld k%lld s%lld pad %lld G%lld act %s res %d: %s %s, %d bad",
             (long long)c.N, (long long)c.C, (long long)c.H, (long long)c.W, (long long)c.K,
             (long long)c.kh, (long long)c.sh, (long long)c.pt, (long long)c.G,
             e->name ? e->name : "-", residual, vn_status_name(st),
             st == VN_OK ? "" : vn_last_error(), bad);
    free(x), free(xb), free(w), free(b), free(z), free(zb), free(y), free(ref), free(mag);
}

#define CONV(N, C, H, W, K, k, s, p, G)                                                            \
    (cc)                                                                                           \
    {                                                                                              \
        2, N, C, H, W, K, k, k, s, s, 1, 1, p, p, p, p, G, NULL                                    \
    }

static void test_classifiers(void)
{
    const epi_case *none = &conv_epi_cases[0], *relu = &conv_epi_cases[1];
    /* SqueezeNet 1.1's classifier: a flat 1x1 with ReLU on 13 x 13 */
    check_gap(CONV(1, 48, 13, 13, 40, 1, 1, 0, 1), relu, false, 1);
    /* a ResNet's last block: 1x1 and 3x3 with a residual and ReLU, batch 2 */
    check_gap(CONV(2, 32, 7, 7, 64, 1, 1, 0, 1), relu, true, 2);
    check_gap(CONV(2, 32, 7, 7, 48, 3, 1, 1, 1), relu, true, 3);
    /* a strided 1x1 (gathered chunks), no activation */
    check_gap(CONV(1, 40, 14, 14, 24, 1, 2, 0, 1), none, false, 4);
    /* K % 16 != 0 under HardSigmoid (its zero lanes turn 0.5 before clearing) */
    check_gap(CONV(1, 20, 9, 11, 20, 3, 1, 1, 1), &conv_epi_cases[5], true, 5);
    /* two groups, a map of several flat chunks (150 pixels) */
    check_gap(CONV(1, 64, 10, 15, 64, 1, 1, 0, 2), &conv_epi_cases[7], false, 6);
}

/* An L1 arena too small for one tile's scratch (2 x 784 pixels x 64 B =
 * 100 KB, or 784 x 64 B on an ISA of one block per register block): the
 * plan takes the whole conv map as workspace and pools it after (the graph
 * pass fused the node without knowing the device's arenas). */
static void test_small_l1(void)
{
    vn_device_options o = {.num_threads = 2};
    o.arena_bytes[VN_ARENA_L1] = 32 * 1024;
    VT_OK(vn_device_create(&o, &gap_device));
    gap_expect_map = true;
    check_gap(CONV(1, 32, 28, 28, 40, 1, 1, 0, 1), &conv_epi_cases[1], true, 7);
    check_gap(CONV(2, 16, 28, 30, 20, 5, 1, 2, 1), &conv_epi_cases[5], false, 8);
    gap_expect_map = false;
    vn_device_destroy(gap_device);
    gap_device = NULL;
}

static void test_refused(void)
{
    cc c = CONV(1, 32, 28, 28, 32, 1, 1, 0, 1);
    attr_buf ab;
    gap_attrs ga;
    int64_t wd[4] = {32, 32, 1, 1}, kd[1] = {32};
    vn_tensor_desc in[3] = {fmap_desc(&c, 32, 28, 28, true), make_desc(4, wd), make_desc(1, kd)};
    vn_op_plan *plan = NULL;
    vn_attrs attrs = global_attrs(&ga, &ab, &c, &conv_epi_cases[1], 2);
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 3, &attrs, &plan) ==
                 VN_ERR_INVALID_ARG,
             "pool_global = 2 is refused");
    VT_CONTAINS(vn_last_error(), "pool_global");
    attrs = global_attrs(&ga, &ab, &c, &conv_epi_cases[1], 1);
    int64_t two[2] = {2, 2};
    ga.items[ga.count++] =
        (vn_attr){.name = "pool_kernel_shape", .type = VN_ATTR_INTS, .ints = two, .count = 2};
    attrs.count = ga.count;
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", in, 3, &attrs, &plan) ==
                 VN_ERR_INVALID_ARG,
             "pool_global beside MaxPool's attributes is refused");
    VT_CONTAINS(vn_last_error(), "only");
    /* a depthwise conv (not the direct algorithm) */
    cc dw = CONV(1, 32, 7, 7, 32, 3, 1, 1, 32);
    attrs = global_attrs(&ga, &ab, &dw, &conv_epi_cases[1], 1);
    int64_t dwd[4] = {32, 1, 3, 3};
    vn_tensor_desc din[3] = {fmap_desc(&dw, 32, 7, 7, true), make_desc(4, dwd), make_desc(1, kd)};
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConvNC1HWC0", din, 3, &attrs, &plan) ==
                 VN_ERR_UNSUPPORTED,
             "pool_global on a depthwise conv is refused");
    VT_CONTAINS(vn_last_error(), "direct");
}

int main(void)
{
    VT_RUN(test_classifiers);
    VT_RUN(test_small_l1);
    VT_RUN(test_refused);
    return vt_summary();
}
