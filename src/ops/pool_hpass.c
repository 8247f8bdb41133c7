/*
 * pool_hpass.c — the horizontal pass of the windowed pools and the LpPool
 * pre/post transforms.
 *
 * NCHW (lanes 1): the taps of neighbouring outputs are `s` elements apart
 * and start at arbitrary (unaligned) elements, which no vector instruction
 * of the tile model addresses, so the pass is a scalar loop over scratch
 * (tap outer, output inner: a stride-1 pool vectorises in the compiler).
 * NC1HWC0 (lanes 16): a pixel is 64 bytes, so every tap is one aligned
 * 16-lane vector and all outputs of one tap are one contiguous instruction.
 * For stride s > 1 the input row is copied in as s phases (pixels q, q+s,
 * q+2s, ... together: a strided copy of 2-block pixels with 2(s-1) blocks
 * skipped, Ascend's DataCopyParams), after which the pixels one tap reads
 * for consecutive outputs are again adjacent.
 */
#include <math.h>

#include "ops/pool.h"

static void hpass_scalar(const vn_pool_plan *p, float *h, const float *x, int32_t *bi)
{
    const vn_pool_geom *g = &p->g;
    int64_t s = g->s[2];
    for (int64_t t = 0; t < g->k[2]; t++) {
        int64_t off = t * g->d[2] - g->pb[2], lo = p->ow_lo[t], hi = p->ow_hi[t];
        if (bi) {
            /* first maximum: a later tap wins only when strictly greater */
            for (int64_t o = lo; o < hi; o++) {
                float v = x[o * s + off];
                if (bi[o] < 0 || v > h[o]) h[o] = v, bi[o] = (int32_t)(o * s + off);
            }
        } else if (p->kind == VN_POOL_MAX) {
            /* fmaxf's result (a NaN loses to a number), inline: gcc calls
             * libm's fmaxf per element otherwise (u8 MaxPool 3x3/2 on
             * 64x112x112: 5 ms) */
            for (int64_t o = lo; o < hi; o++) {
                float v = x[o * s + off];
                h[o] = v > h[o] || h[o] != h[o] ? v : h[o];
            }
        } else {
            for (int64_t o = lo; o < hi; o++) h[o] += x[o * s + off];
        }
    }
}

static void hpass_c0(vn_core *core, const vn_pool_plan *p, vn_local h, vn_local x)
{
    const vn_pool_geom *g = &p->g;
    vn_vop op = p->kind == VN_POOL_MAX ? VN_VOP_MAX : VN_VOP_ADD;
    for (int64_t t = 0; t < g->k[2]; t++) {
        int64_t off = t * g->d[2] - g->pb[2], lo = p->ow_lo[t], hi = p->ow_hi[t];
        if (hi <= lo) continue;
        vn_local d = vn_local_at(core, h, lo * VN_POOL_C0);
        vn_local a = vn_local_at(core, x, (lo + off) * VN_POOL_C0);
        vn_vbinary(core, op, d, d, a, (hi - lo) * VN_POOL_C0);
    }
}

int64_t vn_pool_phase_pixels(const vn_pool_plan *p)
{
    return vn_ops_div_up(p->g.in[2], p->g.s[2]);
}

void vn_pool_hpass_c0_strided(vn_core *core, const vn_pool_plan *p, vn_local h, vn_local xph,
                              vn_gm x, int64_t off)
{
    const vn_pool_geom *g = &p->g;
    int64_t s = g->s[2], pw = vn_pool_phase_pixels(p), L = VN_POOL_C0;
    vn_vop op = p->kind == VN_POOL_MAX ? VN_VOP_MAX : VN_VOP_ADD;
    for (int64_t q = 0; q < s && q < g->in[2]; q++) {
        /* phase q: pixels q, q+s, ...: 2 blocks each, 2(s-1) blocks apart */
        int64_t n = vn_ops_div_up(g->in[2] - q, s);
        vn_copy_params cp = {(uint16_t)n, 2, (uint16_t)(2 * (s - 1)), 0};
        vn_local dst = vn_local_at(core, xph, q * pw * L);
        vn_copy_in_strided(core, dst, x, off + q * L, cp);
        if (p->kind == VN_POOL_LP) vn_pool_lp_pre(core, dst, g->p, n * L);
    }
    for (int64_t t = 0; t < g->k[2]; t++) {
        int64_t o = t * g->d[2] - g->pb[2], lo = p->ow_lo[t], hi = p->ow_hi[t];
        if (hi <= lo) continue;
        /* pixel ow*s + o = (ow + base)*s + q: phase q, position ow + base */
        int64_t q = ((o % s) + s) % s, base = (o - q) / s;
        vn_local d = vn_local_at(core, h, lo * L);
        vn_local a = vn_local_at(core, xph, (q * pw + lo + base) * L);
        vn_vbinary(core, op, d, d, a, (hi - lo) * L);
    }
}

void vn_pool_hpass(vn_core *core, const vn_pool_plan *p, vn_local h, vn_local x, int32_t *bi)
{
    if (p->lanes == 1)
        hpass_scalar(p, vn_ptr(float, h), vn_ptr(const float, x), bi);
    else
        hpass_c0(core, p, h, x);
}

void vn_pool_lp_pre(vn_core *core, vn_local x, int64_t pw, int64_t n)
{
    if (pw == 2) {
        vn_mul(core, x, x, x, n);
        return;
    }
    vn_abs(core, x, x, n);
    if (pw == 1) return;
    /* |x|^p = exp(p ln|x|); ln 0 = -inf gives exp(-inf) = 0 */
    vn_ln(core, x, x, n);
    vn_muls(core, x, x, (double)pw, n);
    vn_exp(core, x, x, n);
}

void vn_pool_lp_post(vn_core *core, vn_local y, int64_t pw, int64_t n)
{
    if (pw == 1) return;
    if (pw == 2) {
        vn_sqrt(core, y, y, n);
        return;
    }
    vn_ln(core, y, y, n);
    vn_muls(core, y, y, 1.0 / (double)pw, n);
    vn_exp(core, y, y, n);
}
