/*
 * test_conv.c — Conv, vinci::ConvNC1HWC0, vinci::FusedConv(NC1HWC0) against a
 * double-precision direct convolution (test_conv_ref.h), over a sweep of shapes
 * and attributes (odd sizes, channels not multiples of 16, depthwise, groups
 * in between, dilation 2-3, stride 2, asymmetric pads, every auto_pad, 1-D),
 * every algorithm that can run each case (forced with the attribute "algo"),
 * both layouts and an NC1HWC0 operator reading NCHW X (x_layout, a stem
 * folded with its reorder), every fused activation with bias and residual, folded
 * BatchNorm, pre-packed weights, and the error messages.
 *
 * Tolerance: |y - ref| <= 1e-5 * (1 + sum |x*w| + |b| + |z|) per output, the
 * f32 accumulation bound with margin (sums run in any order on any ISA).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"
#include "ops/conv_fold.h"
#include "vinci/ops.h"
#include "vt.h"

#include "test_conv_ref.h"

/* ---- the sweep ------------------------------------------------------------------------ */

#define C2(N, C, H, W, K, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, G)                               \
    {                                                                                              \
        2, N, C, H, W, K, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, G, NULL                          \
    }

static const cc cases[] = {
    C2(1, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
    C2(2, 20, 9, 8, 33, 3, 3, 2, 2, 1, 1, 0, 1, 2, 1, 1),     /* stride 2, asymmetric pads */
    C2(1, 17, 11, 10, 18, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1),   /* dilation 2 */
    C2(1, 32, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32),    /* depthwise */
    C2(1, 24, 9, 9, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 24),    /* depthwise, C % 16 != 0, stride 2 */
    C2(1, 5, 6, 5, 5, 3, 3, 1, 1, 1, 1, 0, 1, 1, 0, 5),       /* depthwise, 5 channels */
    C2(1, 32, 6, 7, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),     /* groups: Kg = 24 */
    C2(1, 32, 6, 7, 32, 3, 3, 1, 2, 1, 1, 1, 0, 1, 2, 2),     /* groups on 16-blocks */
    C2(1, 12, 6, 6, 8, 3, 3, 1, 1, 3, 3, 1, 1, 1, 1, 4),      /* group between, dilation 3 */
    C2(2, 19, 5, 6, 21, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1),     /* 1x1 */
    C2(1, 16, 5, 6, 32, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2),     /* 1x1 grouped */
    C2(1, 19, 7, 7, 9, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1),      /* 1x1 stride 2 */
    C2(1, 40, 30, 26, 36, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1),   /* 1x1 stride 2: 2 gathered chunks */
    C2(1, 64, 10, 12, 32, 1, 1, 2, 1, 1, 1, 0, 0, 0, 0, 2),   /* 1x1 stride (2, 1), grouped */
    C2(1, 3, 16, 15, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1),    /* stem-like 7x7 */
    C2(1, 3, 9, 44, 20, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1),     /* 7x7 stem row with full blocks */
    C2(1, 3, 7, 41, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),     /* 3x3 stem row with full blocks */
    C2(1, 6, 5, 5, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6),      /* depth multiplier 2 */
    C2(1, 40, 5, 19, 36, 3, 5, 1, 1, 1, 2, 1, 4, 1, 3, 1),    /* wide row, rectangular kernel */
    C2(1, 4, 3, 3, 4, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 1),       /* pad larger than the input tail */
    C2(1, 20, 12, 13, 35, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1),   /* 1x1 over several pixel chunks */
    C2(1, 128, 3, 128, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),  /* padded rows too wide for UB */
    C2(1, 272, 5, 6, 272, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 272), /* depthwise: whole planes per tile */
    C2(1, 80, 9, 6, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 80),    /* depthwise: bands of rows */
    C2(3, 40, 9, 7, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 40),  /* depthwise: tiles step over images */
    C2(1, 48, 7, 40, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 48), /* depthwise 3x3: interior blocks */
    C2(1, 40, 9, 37, 40, 3, 3, 2, 2, 2, 1, 2, 0, 1, 2, 40), /* dw 3x3 s2, row dilation, asym pads */
    C2(1, 16, 5, 19, 16, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 16), /* dw 3x3 unpadded */
    C2(1, 32, 6, 33, 32, 3, 3, 1, 2, 1, 1, 1, 3, 1, 2, 32), /* dw 3x3 s(1,2), pads past the taps */
    C2(1, 48, 13, 13, 72, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* SqueezeNet 13x13 expand, direct */
    C2(1, 20, 13, 13, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* the same, C % 16 != 0 */
    /* a 3-channel stem whose blocked input passes 1 MB: rows before the 3 output blocks
     * (conv_direct.c rows_outer), full stride-2 blocks, K % 16 != 0 */
    C2(1, 3, 129, 130, 40, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1),
    C2(2, 16, 9, 11, 20, 3, 3, 1, 1, 2, 2, 1, 2, 0, 1, 1), /* 16 channels, dilation 2, batch 2 */
    C2(1, 7, 7, 7, 9, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1),    /* 1x1 stride 2, 7 channels */
    /* padded input too large for one UB copy of the whole map: rows of 28 or more
     * columns read in place (border columns one at a time), shorter ones per-tile
     * row copies */
    C2(1, 16, 64, 60, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
    C2(1, 256, 14, 14, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
    /* narrow rows (ResNet's 7x7 stage) with several output-block pairs and a
     * half pair, K % 16 != 0, stride 2, a strided 1x1 */
    C2(1, 40, 7, 7, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
    C2(1, 64, 14, 13, 110, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
    C2(1, 48, 7, 8, 64, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1),
    /* two output rows per block (vn_conv_row_args.rows): in place and unpadded with
     * an odd row count, dilated, stride 2 from a zero-row-padded image copy */
    C2(1, 32, 9, 6, 20, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1),
    C2(1, 24, 9, 7, 16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1),
    C2(1, 20, 13, 13, 18, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
    C2(1, 272, 14, 14, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1), /* ... its image copy in L1 */
    C2(1, 640, 14, 14, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1), /* ... per-tile copies of 5 rows */
    /* stride-2 rows read in place (too large for UB): the left border column runs in
     * the first full block (direct_left); a right border too; dilated with pad 2 */
    C2(1, 160, 28, 28, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
    C2(1, 160, 27, 27, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),
    C2(1, 160, 27, 28, 24, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 1),
};

static const cc auto_cases[] = {
    {2, 1, 5, 8, 7, 6, 4, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, "SAME_UPPER"},
    {2, 1, 5, 8, 7, 6, 4, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, "SAME_LOWER"},
    {2, 1, 5, 8, 7, 6, 4, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1, "VALID"},
    {2, 1, 16, 7, 7, 16, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 16, "SAME_UPPER"},
    {1, 2, 7, 1, 13, 9, 1, 5, 1, 2, 1, 2, 0, 3, 0, 1, 1, NULL},        /* 1-D */
    {1, 1, 32, 1, 21, 32, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 32, NULL},     /* 1-D depthwise */
    {1, 1, 4, 1, 9, 6, 1, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, "SAME_LOWER"}, /* 1-D auto_pad */
};

static const char *const algos[] = {NULL, "im2col", "gemm", "direct", "depthwise"};

static void sweep(const cc *list, int n)
{
    for (int i = 0; i < n; i++)
        for (int bl = CONV_NCHW; bl <= CONV_PLAIN_X; bl++)
            for (int a = 0; a < 5; a++)
                if (legal_in(&list[i], algos[a], bl))
                    check_case(list[i], NULL, algos[a], bl, 100 + i);
}

static void test_attribute_sweep(void)
{
    sweep(cases, (int)(sizeof cases / sizeof cases[0]));
}

static void test_auto_pad_and_1d(void)
{
    sweep(auto_cases, (int)(sizeof auto_cases / sizeof auto_cases[0]));
}

static void test_fused_epilogues(void)
{
    static const cc ec[] = {
        C2(1, 20, 6, 7, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
        C2(1, 24, 6, 7, 24, 3, 3, 2, 1, 1, 1, 1, 1, 0, 1, 24),
        C2(2, 9, 4, 5, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1),
        C2(1, 32, 5, 5, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2),
        C2(1, 40, 7, 7, 72, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* narrow rows, 5 output blocks */
        /* depthwise with 17 channel blocks: whole planes per tile, so one kernel
         * call runs a band of rows (residual and outputs stepping per row) */
        C2(1, 264, 7, 6, 264, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 264),
        /* flat 1x1 whose last block has <= 8 real channels: on AVX2 the last
         * two blocks run as a half pair (both stores, both padding clears) */
        C2(1, 20, 12, 13, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1),
        C2(1, 33, 9, 14, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1),
    };
    for (size_t e = 0; e < sizeof conv_epi_cases / sizeof conv_epi_cases[0]; e++)
        for (size_t i = 0; i < sizeof ec / sizeof ec[0]; i++)
            for (int bl = CONV_NCHW; bl <= CONV_PLAIN_X; bl++)
                for (int a = 0; a < 5; a++)
                    if (legal_in(&ec[i], algos[a], bl))
                        check_case(ec[i], &conv_epi_cases[e], algos[a], bl, 7 + e * 10 + i);
}

/* compute = "bf16": the direct kernel in bf16 where it applies (flat 1x1, a
 * strided 1x1 gathered into unit-stride chunks, padded convs; on a CPU with
 * AVX512_BF16 and the AVX-512 path), f32 where it does not (an unpadded
 * strided 3x3, an NCHW stem read in place, another ISA), on both layouts,
 * with epilogues and residual; odd channel counts make a half-empty last pair. */
static void test_bf16(void)
{
    static const cc bc[] = {
        C2(1, 64, 7, 7, 48, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1),   /* flat 1x1 */
        C2(1, 19, 12, 13, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1), /* flat, C odd, 2 chunks */
        C2(1, 33, 7, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),   /* padded small map */
        C2(2, 24, 9, 11, 20, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1),  /* padded, stride 2 */
        C2(1, 16, 64, 60, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1), /* per-tile row copies */
        C2(1, 32, 8, 8, 16, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1),   /* 1x1 stride 2: gathered chunks */
        C2(1, 24, 9, 9, 16, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, 1),   /* 3x3 unpadded s2: f32 */
    };
    bool avail = vn_conv_bf16_available();
    for (size_t i = 0; i < sizeof bc / sizeof bc[0]; i++) {
        bool strided = bc[i].kh == 3 && bc[i].sh == 2 && bc[i].pt == 0;
        bool flat = bc[i].kh == 1 && bc[i].sh == 1;
        for (int bl = CONV_NCHW; bl <= CONV_BLOCKED; bl++) {
            /* an NCHW X of <= 16 channels is read in place in f32 (x_plain) */
            bool plain = bl == CONV_NCHW && bc[i].C <= 16 && !flat;
            conv_test_compute =
                avail && !strided && !plain ? CONV_BF16_EXPECT_BF16 : CONV_BF16_EXPECT_F32;
            check_case(bc[i], NULL, "direct", bl, 300 + i);
            check_case(bc[i], &conv_epi_cases[2 + i % 4], "direct", bl, 320 + i); /* + residual */
        }
    }
    conv_test_compute = CONV_F32;
}

/* compute = "bf16" on Winograd: the GEMM over the transformed tiles in bf16
 * (U packed bf16, V rounded per chunk). The transforms scale rounding errors
 * up to ~10x (docs/architecture.md), so the bound is bf16's 2^-8 x 10 x 2
 * (8e-2 of 1 + sum |x w|; measured worst 4.5e-2), still far below a wrong
 * result; and it must differ from the f32 result. */
static void test_bf16_winograd(void)
{
    static const cc wc[] = {
        C2(1, 32, 14, 14, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
        C2(2, 20, 9, 12, 17, 3, 3, 1, 1, 1, 1, 1, 0, 1, 2, 1), /* C, K not multiples of 16 */
    };
    bool avail = vn_conv_bf16_available();
    for (size_t i = 0; i < sizeof wc / sizeof wc[0]; i++)
        for (int bl = CONV_NCHW; bl <= CONV_BLOCKED; bl++) {
            conv_test_compute = avail ? CONV_BF16_EXPECT_BF16 : CONV_BF16_EXPECT_F32;
            check_case_tol(wc[i], &conv_epi_cases[1], "winograd", bl, 340 + i, avail ? 8e-2 : 1e-4);
        }
    conv_test_compute = CONV_F32;
}

/* ---- layouts -------------------------------------------------------------------------- */

static void test_layout_round_trip(void)
{
    static const int64_t shapes[][4] = {
        {2, 19, 5, 7}, {1, 16, 3, 3}, {1, 1, 1, 1}, {3, 33, 40, 41}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int64_t *s = shapes[i];
        int64_t n = s[0] * s[1] * s[2] * s[3], C1 = (s[1] + 15) / 16;
        int64_t nb = s[0] * C1 * s[2] * s[3] * 16;
        float *x = malloc((size_t)n * 4), *b = malloc((size_t)nb * 4), *e = malloc((size_t)nb * 4);
        float *back = malloc((size_t)n * 4);
        vt_rng r = {i + 1};
        vt_fill(&r, x, (size_t)n, -10, 10);
        to_blocked(x, e, s[0], s[1], s[2] * s[3]);
        memset(b, 0x7f, (size_t)nb * 4); /* garbage: padding must be written */
        vn_tensor_desc xd = make_desc(4, s);
        vn_op_plan *p1, *p2;
        VT_OK(vn_op_plan_create(NULL, "vinci::ToNC1HWC0", &xd, 1, NULL, &p1));
        vn_attr ca = {.name = "channels", .type = VN_ATTR_INT, .i = s[1]};
        vn_attrs attrs = {&ca, 1};
        const vn_tensor_desc *bd = vn_op_plan_output(p1, 0);
        VT_CHECK(bd->rank == 5 && bd->dims[1] == C1 && bd->dims[4] == 16, "blocked shape");
        VT_OK(vn_op_plan_create(NULL, "FromNC1HWC0", bd, 1, &attrs, &p2));
        vn_tensor tx = {xd, x}, tb = {*bd, b}, tback = {xd, back};
        VT_OK(vn_op_run(p1, &tx, 1, &tb, 1, NULL));
        VT_OK(vn_op_run(p2, &tb, 1, &tback, 1, NULL));
        VT_CHECK(memcmp(b, e, (size_t)nb * 4) == 0, "ToNC1HWC0 differs from the reference");
        VT_CHECK(memcmp(back, x, (size_t)n * 4) == 0, "round trip is not exact");
        vn_op_plan_destroy(p1);
        vn_op_plan_destroy(p2);
        free(x), free(b), free(e), free(back);
    }
    uint32_t in, out;
    vn_op_layouts(vn_op_find("ConvNC1HWC0", "vinci"), &in, &out);
    VT_CHECK(in == VN_LAYOUT_NC1HWC0 && out == VN_LAYOUT_NC1HWC0, "ConvNC1HWC0 layouts");
    vn_op_layouts(vn_op_find("ToNC1HWC0", "vinci"), &in, &out);
    VT_CHECK(in == VN_LAYOUT_NCHW && out == VN_LAYOUT_NC1HWC0, "ToNC1HWC0 layouts");
    vn_op_layouts(vn_op_find("Softmax", ""), &in, &out);
    VT_CHECK(in == 0 && out == 0, "Softmax is plain / any");
}

/* ---- BatchNorm folding ---------------------------------------------------------------- */

static void test_fold_bn(void)
{
    cc c = C2(1, 20, 6, 6, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    int64_t OH = 6, OW = 6, nx = 20 * 36, nw = 24 * 20 * 9, ny = 24 * 36;
    vt_rng r = {99};
    float *x = malloc((size_t)nx * 4), *w = malloc((size_t)nw * 4), *wf = malloc((size_t)nw * 4);
    float b[24], bf[24], sc[24], sh[24], mean[24], var[24], *y = malloc((size_t)ny * 4);
    double *ref = malloc((size_t)ny * 8), *mag = malloc((size_t)ny * 8);
    vt_fill(&r, x, (size_t)nx, -1, 1);
    vt_fill(&r, w, (size_t)nw, -1, 1);
    vt_fill(&r, b, 24, -1, 1);
    vt_fill(&r, sc, 24, 0.5, 2);
    vt_fill(&r, sh, 24, -1, 1);
    vt_fill(&r, mean, 24, -1, 1);
    vt_fill(&r, var, 24, 0.1, 3);
    memcpy(wf, w, (size_t)nw * 4);
    memcpy(bf, b, sizeof b);
    VT_OK(vn_conv_fold_bn(24, 20 * 9, wf, bf, sc, sh, mean, var, 1e-5f));
    epi_case relu = {VN_CONV_ACT_RELU, "Relu", {0, 0}, 0, true, false};
    epi_case none = {VN_CONV_ACT_NONE, NULL, {0, 0}, 0, true, false};
    ref_conv(&c, OH, OW, x, w, b, NULL, &none, ref, mag);
    for (int bl = 0; bl < 2; bl++) {
        VT_OK(run_op(&c, bl, NULL, &relu, x, wf, bf, NULL, y, OH, OW));
        int bad = 0;
        for (int64_t i = 0; i < ny; i++) {
            int64_t k = i / 36;
            double f = sc[k] / sqrt((double)var[k] + 1e-5);
            double v = (ref[i] - mean[k]) * f + sh[k];
            v = v > 0 ? v : 0;
            if (!(fabs(y[i] - v) <= 1e-5 * (1 + mag[i] * f + fabs(mean[k] * f) + fabs(sh[k]))))
                bad++;
        }
        VT_CHECK(bad == 0, "folded BN + ReLU (%s): %d outputs off", bl ? "NC1HWC0" : "NCHW", bad);
    }
    free(x), free(w), free(wf), free(y), free(ref), free(mag);
}

/* ---- pre-packed weights ------------------------------------------------------------------ */

static void test_packed_weights(void)
{
    static const cc pc[] = {C2(1, 20, 6, 7, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1),
                            C2(1, 24, 6, 7, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 24)};
    for (int i = 0; i < 2; i++) {
        const cc *c = &pc[i];
        int64_t nx = c->C * 42, nw = c->K * (c->C / c->G) * 9;
        int64_t C1 = (c->C + 15) / 16, K1 = (c->K + 15) / 16;
        vt_rng r = {5};
        float *x = malloc((size_t)nx * 4), *w = malloc((size_t)nw * 4);
        float *xb = malloc((size_t)(C1 * 42 * 16) * 4), *y1 = malloc((size_t)(K1 * 42 * 16) * 4);
        float *y2 = malloc((size_t)(K1 * 42 * 16) * 4);
        vt_fill(&r, x, (size_t)nx, -1, 1);
        vt_fill(&r, w, (size_t)nw, -1, 1);
        to_blocked(x, xb, 1, c->C, 42);
        attr_buf ab;
        vn_attrs attrs = make_attrs(&ab, c, NULL, NULL, CONV_BLOCKED);
        int64_t wd[4] = {c->K, c->C / c->G, 3, 3};
        vn_tensor_desc in[2] = {fmap_desc(c, c->C, 6, 7, true), make_desc(4, wd)};
        int64_t elems = 0;
        VT_OK(vn_conv_pack_weights("vinci::ConvNC1HWC0", in, 2, &attrs, NULL, NULL, &elems));
        float *wp = malloc((size_t)elems * 4);
        VT_OK(vn_conv_pack_weights("vinci::ConvNC1HWC0", in, 2, &attrs, w, wp, &elems));
        vn_op_plan *p1, *p2;
        VT_OK(vn_op_plan_create(NULL, "vinci::ConvNC1HWC0", in, 2, &attrs, &p1));
        memcpy(ab.wshape, wd, sizeof wd);
        ab.items[ab.count++] = (vn_attr){.name = "packed", .type = VN_ATTR_INT, .i = 1};
        ab.items[ab.count++] =
            (vn_attr){.name = "weight_shape", .type = VN_ATTR_INTS, .ints = ab.wshape, .count = 4};
        vn_attrs pattrs = {ab.items, ab.count};
        vn_tensor_desc pin[2] = {in[0], make_desc(1, &elems)};
        VT_OK(vn_op_plan_create(NULL, "vinci::ConvNC1HWC0", pin, 2, &pattrs, &p2));
        void *ws = malloc(vn_op_plan_workspace(p1) + 1);
        vn_tensor t1[2] = {{in[0], xb}, {in[1], w}}, t2[2] = {{in[0], xb}, {pin[1], wp}};
        vn_tensor o1 = {*vn_op_plan_output(p1, 0), y1}, o2 = {*vn_op_plan_output(p1, 0), y2};
        VT_OK(vn_op_run(p1, t1, 2, &o1, 1, ws));
        VT_OK(vn_op_run(p2, t2, 2, &o2, 1, NULL));
        VT_CHECK(vn_op_plan_workspace(p2) == 0, "packed run needs no workspace");
        VT_CHECK(memcmp(y1, y2, (size_t)(K1 * 42 * 16) * 4) == 0, "packed weights differ");
        vn_op_plan_destroy(p1);
        vn_op_plan_destroy(p2);
        free(ws), free(x), free(w), free(xb), free(y1), free(y2), free(wp);
    }
}

/* ---- errors -------------------------------------------------------------------------------- */

static vn_status plan_error(const char *op, int64_t xc, int64_t wc, int64_t group, int64_t h,
                            int64_t k, const char *pads)
{
    int64_t xd[4] = {1, xc, h, h}, wd[4] = {8, wc, k, k};
    vn_tensor_desc in[2] = {make_desc(4, xd), make_desc(4, wd)};
    vn_attr a[2] = {{.name = "group", .type = VN_ATTR_INT, .i = group},
                    {.name = "auto_pad", .type = VN_ATTR_STRING, .s = pads}};
    vn_attrs attrs = {a, 2};
    vn_op_plan *p = NULL;
    vn_status st = vn_op_plan_create(NULL, op, in, 2, &attrs, &p);
    vn_op_plan_destroy(p);
    return st;
}

static void test_errors(void)
{
    VT_CHECK(plan_error("Conv", 6, 4, 1, 5, 3, "NOTSET") == VN_ERR_SHAPE, "channel mismatch");
    VT_CONTAINS(vn_last_error(), "Conv");
    VT_CONTAINS(vn_last_error(), "channel mismatch");
    VT_CONTAINS(vn_last_error(), "f32[1,6,5,5]");
    VT_CHECK(plan_error("Conv", 6, 2, 4, 5, 3, "NOTSET") == VN_ERR_INVALID_ARG, "bad group");
    VT_CONTAINS(vn_last_error(), "bad group 4");
    VT_CHECK(plan_error("Conv", 4, 4, 1, 2, 3, "VALID") == VN_ERR_SHAPE, "kernel too big");
    VT_CONTAINS(vn_last_error(), "kernel bigger than the padded input");
    VT_CONTAINS(vn_last_error(), "f32[1,4,2,2]");
    VT_CHECK(plan_error("Conv", 4, 4, 0, 5, 3, "NOTSET") == VN_ERR_INVALID_ARG, "group 0");
    VT_CHECK(plan_error("Conv", 4, 4, 1, 5, 3, "SAME") == VN_ERR_INVALID_ARG, "bad auto_pad");
    VT_CONTAINS(vn_last_error(), "auto_pad 'SAME'");
    /* NC1HWC0: X holds 1 block, W wants 20 channels */
    int64_t xd[5] = {1, 1, 5, 5, 16}, wd[4] = {8, 20, 3, 3};
    vn_tensor_desc in[2] = {make_desc(5, xd), make_desc(4, wd)};
    vn_op_plan *p = NULL;
    VT_CHECK(vn_op_plan_create(NULL, "vinci::ConvNC1HWC0", in, 2, NULL, &p) == VN_ERR_SHAPE,
             "blocked channel mismatch");
    VT_CONTAINS(vn_last_error(), "vinci::ConvNC1HWC0");
    /* a bad activation */
    int64_t xd2[4] = {1, 4, 5, 5}, wd2[4] = {8, 4, 3, 3};
    vn_tensor_desc in2[2] = {make_desc(4, xd2), make_desc(4, wd2)};
    vn_attr act = {.name = "activation", .type = VN_ATTR_STRING, .s = "Swish"};
    vn_attrs aa = {&act, 1};
    VT_CHECK(vn_op_plan_create(NULL, "vinci::FusedConv", in2, 2, &aa, &p) == VN_ERR_INVALID_ARG,
             "unknown activation");
    VT_CONTAINS(vn_last_error(), "Swish");
}

/* One string attribute on a 3x3 conv of X [1, xc, 6, 6] (NCHW), a status. */
static vn_status plan_with(const char *op, int64_t xc, const char *name, const char *value)
{
    int64_t xd[4] = {1, xc, 6, 6}, wd[4] = {8, xc, 3, 3}, k[2] = {3, 3};
    vn_tensor_desc in[2] = {make_desc(4, xd), make_desc(4, wd)};
    vn_attr a[2] = {{.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = k, .count = 2},
                    {.name = name, .type = VN_ATTR_STRING, .s = value}};
    vn_attrs attrs = {a, 2};
    vn_op_plan *p = NULL;
    vn_status st = vn_op_plan_create(NULL, op, in, 2, &attrs, &p);
    vn_op_plan_destroy(p);
    return st;
}

/* x_layout and compute: unknown values, x_layout on an NCHW operator, and an
 * NCHW X the direct kernel cannot read in place. */
static void test_attribute_errors(void)
{
    VT_CHECK(plan_with("vinci::ConvNC1HWC0", 3, "x_layout", "NHWC") == VN_ERR_INVALID_ARG,
             "x_layout NHWC");
    VT_CONTAINS(vn_last_error(), "x_layout 'NHWC' is not NCHW or NC1HWC0");
    VT_CHECK(plan_with("Conv", 3, "x_layout", "NCHW") == VN_ERR_INVALID_ARG, "x_layout on Conv");
    VT_CONTAINS(vn_last_error(), "NC1HWC0 operators");
    VT_CHECK(plan_with("vinci::ConvNC1HWC0", 32, "x_layout", "NCHW") == VN_ERR_UNSUPPORTED,
             "an NCHW X of 32 channels");
    VT_CONTAINS(vn_last_error(), "at most 16 input channels (X has 32)");
    VT_CHECK(plan_with("vinci::ConvNC1HWC0", 3, "x_layout", "NCHW") == VN_OK, "a stem");
    { /* a plain kernel row of more than VN_CONV_PLAIN_TAPS (kw, ci) taps: 16 x 17 */
        int64_t xd[4] = {1, 16, 6, 20}, wd[4] = {8, 16, 1, 17}, k[2] = {1, 17};
        vn_tensor_desc in[2] = {make_desc(4, xd), make_desc(4, wd)};
        vn_attr a[2] = {{.name = "kernel_shape", .type = VN_ATTR_INTS, .ints = k, .count = 2},
                        {.name = "x_layout", .type = VN_ATTR_STRING, .s = "NCHW"}};
        vn_attrs attrs = {a, 2};
        vn_op_plan *p = NULL;
        VT_CHECK(vn_op_plan_create(NULL, "vinci::ConvNC1HWC0", in, 2, &attrs, &p) ==
                     VN_ERR_UNSUPPORTED,
                 "an NCHW X with KW x C = 272 taps per kernel row");
        VT_CONTAINS(vn_last_error(), "KW x C at most 256");
        vn_op_plan_destroy(p);
    }
    VT_CHECK(plan_with("Conv", 4, "compute", "fp8") == VN_ERR_INVALID_ARG, "compute fp8");
    VT_CONTAINS(vn_last_error(), "compute 'fp8' is not f32 or bf16");
    VT_CHECK(plan_with("Conv", 4, "compute", "bf16") == VN_OK, "compute bf16");
}

int main(void)
{
    VT_RUN(test_layout_round_trip);
    VT_RUN(test_attribute_sweep);
    VT_RUN(test_auto_pad_and_1d);
    VT_RUN(test_fused_epilogues);
    VT_RUN(test_fold_bn);
    VT_RUN(test_packed_weights);
    VT_RUN(test_bf16);
    VT_RUN(test_bf16_winograd);
    VT_RUN(test_errors);
    VT_RUN(test_attribute_errors);
    return vt_summary();
}
