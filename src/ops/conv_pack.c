/*
 * conv_pack.c — weight layouts for the NC1HWC0 kernels (conv_kernels.h) and
 * the plan-time BatchNorm fold.
 *
 * Direct: [K1][Cg1][KH][KW][16 ci][16 co] where K1 = ceil(K/16) output blocks
 * and Cg1 = ceil((C/G)/16) input blocks of the output block's group; output
 * block ob belongs to group (ob*16) / (K/G) (blocks never straddle groups:
 * G = 1, or K/G and C/G are multiples of 16). Depthwise: [C1][KH][KW][16].
 * Everything past the real channels is zero, so the kernels run whole C0
 * vectors and padded lanes stay zero before the epilogue.
 */
#include <math.h>
#include <string.h>

#include "ops/conv.h"
#include "ops/conv_fold.h"

bool vn_conv_direct_ok(const vn_conv_geom *g)
{
    return g->G == 1 || ((g->C / g->G) % VN_C0 == 0 && (g->K / g->G) % VN_C0 == 0);
}

bool vn_conv_depthwise_ok(const vn_conv_geom *g)
{
    return g->G > 1 && g->G == g->C && g->G == g->K;
}

int64_t vn_conv_packed_elems(const vn_conv_geom *g, vn_conv_algo algo)
{
    int64_t taps = g->KH * g->KW, k1 = vn_ops_div_up(g->K, VN_C0);
    if (algo == VN_CONV_ALGO_DEPTHWISE) return k1 * taps * VN_C0;
    if (algo == VN_CONV_ALGO_WINOGRAD) return vn_conv_winograd_packed_elems(g);
    if (algo == VN_CONV_ALGO_DIRECT)
        return k1 * vn_ops_div_up(g->C / g->G, VN_C0) * taps * VN_C0 * VN_C0;
    return g->K * (g->C / g->G) * taps; /* the GEMM paths take ONNX weights as they are */
}

/* The direct layouts from ONNX weights [K][C/G][KH][KW]: into f32 (16 co
 * per (tap, ci)) or, with h, into bf16 with the channels of a pair side by
 * side ([8 pairs][16 co][2] per tap); padding channels stay zero. */
static void pack_direct_into(const vn_conv_geom *g, const float *w, float *f, uint16_t *h)
{
    int64_t cg = g->C / g->G, taps = g->KH * g->KW;
    int64_t k1 = vn_ops_div_up(g->K, VN_C0), cg1 = vn_ops_div_up(cg, VN_C0);
    size_t n = (size_t)vn_conv_packed_elems(g, VN_CONV_ALGO_DIRECT);
    if (f) memset(f, 0, n * sizeof *f);
    if (h) memset(h, 0, n * sizeof *h);
    for (int64_t ob = 0; ob < k1; ob++)
        for (int64_t co = 0; co < VN_C0 && ob * VN_C0 + co < g->K; co++) {
            int64_t k = ob * VN_C0 + co;
            for (int64_t ci = 0; ci < cg; ci++)
                for (int64_t t = 0; t < taps; t++) {
                    int64_t c = ci % VN_C0, tap = ((ob * cg1 + ci / VN_C0) * taps + t) * VN_C0;
                    float v = w[(k * cg + ci) * taps + t];
                    if (f) f[(tap + c) * VN_C0 + co] = v;
                    if (h)
                        h[tap * VN_C0 + (c / 2) * 2 * VN_C0 + co * 2 + c % 2] = vn_f32_to_bf16(v);
                }
        }
}

void vn_conv_pack_direct(const vn_conv_geom *g, const float *w, float *packed)
{
    pack_direct_into(g, w, packed, NULL);
}

void vn_conv_pack_direct_bf16(const vn_conv_geom *g, const float *w, uint16_t *packed)
{
    pack_direct_into(g, w, NULL, packed);
}

void vn_conv_pack_plain(const vn_conv_geom *g, const float *w, float *packed)
{
    int64_t taps = g->KH * g->KW;
    memset(packed, 0, (size_t)vn_conv_packed_elems(g, VN_CONV_ALGO_DIRECT) * sizeof *packed);
    for (int64_t k = 0; k < g->K; k++)
        for (int64_t ci = 0; ci < g->C; ci++)
            for (int64_t t = 0; t < taps; t++) /* block k / 16: [KH][KW][C][16] */
                packed[((k / VN_C0) * taps * VN_C0 + t * g->C + ci) * VN_C0 + k % VN_C0] =
                    w[(k * g->C + ci) * taps + t];
}

void vn_conv_pack_depthwise(const vn_conv_geom *g, const float *w, float *packed)
{
    int64_t taps = g->KH * g->KW;
    memset(packed, 0, (size_t)vn_conv_packed_elems(g, VN_CONV_ALGO_DEPTHWISE) * sizeof *packed);
    for (int64_t c = 0; c < g->C; c++)
        for (int64_t t = 0; t < taps; t++)
            packed[((c / VN_C0) * taps + t) * VN_C0 + c % VN_C0] = w[c * taps + t];
}

void vn_conv_pad_bias(const vn_conv_plan *p, const float *b, float *padded)
{
    memset(padded, 0, (size_t)(p->K1 * VN_C0) * sizeof *padded);
    memcpy(padded, b, (size_t)p->g.K * sizeof *padded);
}

bool vn_conv_algo_blocked(vn_conv_algo algo)
{
    return algo == VN_CONV_ALGO_DIRECT || algo == VN_CONV_ALGO_DEPTHWISE ||
           algo == VN_CONV_ALGO_WINOGRAD;
}

void vn_conv_pack_blocked(const vn_conv_geom *g, vn_conv_algo algo, const float *w, float *packed)
{
    if (algo == VN_CONV_ALGO_DIRECT)
        vn_conv_pack_direct(g, w, packed);
    else if (algo == VN_CONV_ALGO_DEPTHWISE)
        vn_conv_pack_depthwise(g, w, packed);
    else if (algo == VN_CONV_ALGO_WINOGRAD)
        vn_conv_pack_winograd(g, w, packed);
}

vn_status vn_conv_fold_bn(int64_t K, int64_t per_channel, float *w, float *bias, const float *scale,
                          const float *shift, const float *mean, const float *var, float eps)
{
    if (K < 0 || per_channel < 0 || !w || !bias || !scale || !shift || !mean || !var)
        return vn_error(VN_ERR_INVALID_ARG, "vn_conv_fold_bn", "NULL array or negative size");
    for (int64_t k = 0; k < K; k++) {
        double f = (double)scale[k] / sqrt((double)var[k] + (double)eps);
        if (!isfinite(f))
            return vn_error(VN_ERR_INVALID_ARG, "vn_conv_fold_bn",
                            "channel %lld: var %g + eps %g gives a non-finite factor", (long long)k,
                            (double)var[k], (double)eps);
        for (int64_t i = 0; i < per_channel; i++)
            w[k * per_channel + i] = (float)((double)w[k * per_channel + i] * f);
        bias[k] = (float)(((double)bias[k] - (double)mean[k]) * f + (double)shift[k]);
    }
    return VN_OK;
}
