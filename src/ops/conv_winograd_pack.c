/*
 * conv_winograd_pack.c — where the Winograd F(4x4, 3x3) and F(2x2, 3x3)
 * convolutions apply, which tile size a geometry gets, its packed weights
 * and its workspace (the run is conv_winograd.c, the transforms
 * src/kernel/winograd_kernel.inc).
 *
 * Packed weights U = G g G^T per (output channel, input channel), computed in
 * double and rounded once, laid out per transform point as the direct
 * kernel's 1x1 weights: [P points][K1][C1][16 ci][16 co], zero past the real
 * channels (P = 36 for F(4x4), 16 for F(2x2)). Workspace: the transformed
 * input V [P][C1][tiles][16] and the products M [P][K1][tiles][16],
 * tiles = N * ceil(OH/m) * ceil(OW/m).
 */
#include <string.h>

#include "kernel/winograd_kernels.h"
#include "ops/conv.h"

/* G of F(4x4, 3x3) for the points 0, 1, -1, 2, -2, infinity. */
static const double wino_g4[6][3] = {
    {1.0 / 4, 0, 0},
    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6},
    {1.0 / 24, -1.0 / 12, 1.0 / 6},
    {0, 0, 1},
};

/* G of F(2x2, 3x3) for the points 0, 1, -1, infinity. */
static const double wino_g2[4][3] = {
    {1, 0, 0},
    {0.5, 0.5, 0.5},
    {0.5, -0.5, 0.5},
    {0, 0, 1},
};

/* Tiles of all images with m x m tiles. */
static int64_t tiles_of(const vn_conv_geom *g, int64_t m)
{
    return g->N * vn_ops_div_up(g->OH, m) * vn_ops_div_up(g->OW, m);
}

/* F(4x4), measured (bench_conv, AVX-512, 1 and 2 threads, ResNet-50 3x3 layers):
 * against the direct kernel Winograd is 1.9x at 64@56, 1.5x at 128@28, 1.0-1.7x
 * at 256@14 (16 tiles), and loses at 512@7 (4 tiles): the packed weights are
 * 4x the direct ones (36 / 9 points) and a GEMM over 4 tiles reads each
 * weight 4 times, so the run becomes a weight stream. Few channels (the
 * 3-channel stem) leave the transforms unamortised. With few tiles it also
 * takes many input channels: in a whole model (weights cold, vinci profile,
 * 1 thread) SqueezeNet 1.1's 13x13 layers (16 tiles, C = 48 and 64) run 25%
 * faster direct (0.21 vs 0.29 ms, 0.37 vs 0.43 ms), as the per-tile
 * transforms are shared by only C/16 GEMM steps, while ResNet-18's 256@14
 * (16 tiles, C = 256) stays 1.2x faster in Winograd. */
static bool f4_wins(const vn_conv_geom *g)
{
    int64_t tiles = tiles_of(g, 4);
    return g->C >= 16 && g->K >= 16 && (tiles >= 32 || (tiles >= 8 && g->C >= 128));
}

/* F(2x2) instead of F(4x4) for a small map with many channels on AVX-512:
 * its weights (16 points against 36) are what such a layer streams, since a
 * model's weights come from memory and its GEMM per point has few tiles to
 * reuse them over. ResNet-50's 256@14 (16 tiles of 4x4), vinci profile, one
 * model run each way alternating: F(4x4) 1.04-1.19 ms, F(2x2) 0.93-0.96 ms
 * at 1 thread; 0.53 / 0.51-0.52 ms at 2; bench_conv's hot-weight loop had
 * chosen F(4x4) (0.70 ms there). At 28x28 (49 tiles) F(4x4) stays far ahead:
 * 0.62 ms against 1.6. On AVX2 (half the FMA rate, so weights matter less)
 * not measured: unchanged. */
static bool f2_for_weights(const vn_conv_geom *g)
{
    return vn_isa_active() == VN_ISA_AVX512 && tiles_of(g, 4) < 32 && g->C >= 256 && g->K >= 256;
}

/* F(4x4) where it wins (unless f2_for_weights), else F(2x2) when it has at
 * least 8 tiles. */
vn_wino_variant vn_conv_winograd_variant(const vn_conv_geom *g)
{
    if (tiles_of(g, 2) < 8) return VN_WINO_F4;
    return f4_wins(g) && !f2_for_weights(g) ? VN_WINO_F4 : VN_WINO_F2;
}

bool vn_conv_winograd_ok(const vn_conv_geom *g)
{
    return g->G == 1 && g->KH == 3 && g->KW == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 &&
           g->dw == 1;
}

int64_t vn_conv_winograd_tiles(const vn_conv_geom *g)
{
    return tiles_of(g, vn_wino_m(vn_conv_winograd_variant(g)));
}

int64_t vn_conv_winograd_ws_elems(const vn_conv_geom *g)
{
    int64_t c1 = vn_ops_div_up(g->C, VN_C0), k1 = vn_ops_div_up(g->K, VN_C0);
    int64_t points = vn_wino_points(vn_conv_winograd_variant(g));
    return points * (c1 + k1) * vn_conv_winograd_tiles(g) * VN_C0;
}

int64_t vn_conv_winograd_packed_elems(const vn_conv_geom *g)
{
    return (int64_t)vn_wino_points(vn_conv_winograd_variant(g)) * vn_ops_div_up(g->K, VN_C0) *
           vn_ops_div_up(g->C, VN_C0) * VN_C0 * VN_C0;
}

/* u = G w G^T for one 3x3 kernel, G a x 3 (rows `gm`). */
static void transform_kernel(const float *w, const double (*gm)[3], int a, double u[VN_WINO_P])
{
    double t[VN_WINO_A][3];
    for (int i = 0; i < a; i++)
        for (int b = 0; b < 3; b++)
            t[i][b] = gm[i][0] * w[b] + gm[i][1] * w[3 + b] + gm[i][2] * w[6 + b];
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++)
            u[i * a + j] = t[i][0] * gm[j][0] + t[i][1] * gm[j][1] + t[i][2] * gm[j][2];
}

/* U into f32 ([16 ci][16 co] per block pair) or, with h, bf16 with the
 * channels of a pair side by side ([8 pairs][16 co][2], conv_kernels.h). */
static void pack_winograd_into(const vn_conv_geom *g, const float *w, float *f, uint16_t *h)
{
    int64_t k1 = vn_ops_div_up(g->K, VN_C0), c1 = vn_ops_div_up(g->C, VN_C0);
    int64_t pstride = k1 * c1 * VN_C0 * VN_C0;
    size_t n = (size_t)vn_conv_winograd_packed_elems(g);
    if (f) memset(f, 0, n * sizeof *f);
    if (h) memset(h, 0, n * sizeof *h);
    vn_wino_variant v = vn_conv_winograd_variant(g);
    int a = vn_wino_m(v) + 2, points = a * a;
    const double(*gm)[3] = v == VN_WINO_F2 ? wino_g2 : wino_g4;
    for (int64_t k = 0; k < g->K; k++)
        for (int64_t c = 0; c < g->C; c++) {
            double u[VN_WINO_P];
            transform_kernel(w + (k * g->C + c) * 9, gm, a, u);
            int64_t blk = ((k / VN_C0) * c1 + c / VN_C0) * VN_C0 * VN_C0, ci = c % VN_C0;
            int64_t at = f ? blk + ci * VN_C0 + k % VN_C0
                           : blk + (ci / 2) * 2 * VN_C0 + (k % VN_C0) * 2 + ci % 2;
            for (int p = 0; p < points; p++) {
                if (f) f[at + p * pstride] = (float)u[p];
                if (h) h[at + p * pstride] = vn_f32_to_bf16((float)u[p]);
            }
        }
}

void vn_conv_pack_winograd(const vn_conv_geom *g, const float *w, float *packed)
{
    pack_winograd_into(g, w, packed, NULL);
}

void vn_conv_pack_winograd_bf16(const vn_conv_geom *g, const float *w, uint16_t *packed)
{
    pack_winograd_into(g, w, NULL, packed);
}

/* F(2x2) (16 points, weights 16/9 of the direct ones, 2.25x fewer
 * multiplies) where F(4x4) does not win, from 32 channels on. AVX2 (cold
 * weights, 1 thread, direct / F(2x2), interleaved in one process): ResNet's
 * 512@7 2.96-3.17 / 1.97-2.09 ms (2 threads 1.66 / 1.10), SqueezeNet's
 * 48>192@13 0.37 / 0.21, 64>256@13 0.58 / 0.36, 32>128@13 0.15 / 0.10,
 * 128@7 0.21 / 0.14, but 16>32@7 0.011 / 0.013. AVX-512 on a Xeon with two
 * 512-bit FMA units (bench_conv, fastest call, vs oneDNN): 48>192@13 0.89 ->
 * 1.38x at 1 thread, 0.88 -> 1.08-1.28x at 2; 64>256@13 0.90 -> 1.42x and
 * 0.89 -> 1.20x; whole SqueezeNet 1.1 3.19-3.24 -> 2.96-3.03 ms at 1 thread,
 * 1.92-2.01 -> 1.86-1.92 at 2 (alternating runs). The rule depends on the
 * geometry only, so packing agrees with the run; the blob layout names the
 * tile size. */
bool vn_conv_winograd_wins(const vn_conv_geom *g)
{
    if (f4_wins(g)) return true;
    if (tiles_of(g, 2) < 8) return false; /* F(4x4) by vn_conv_winograd_variant's rule */
    return g->C >= 32 && g->K >= 32;
}
