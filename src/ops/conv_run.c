/*
 * conv_run.c — running a convolution plan (conv_plan.c): pack the weights
 * and pad the bias into the workspace when the kernel wants them blocked,
 * reorder between NCHW and NC1HWC0 when the tensor's layout is not the
 * kernel's (except an X the direct kernel reads plain), and launch the kernel.
 */
#include <string.h>

#include "ops/conv.h"
#include "ops/layout.h"

/* A conv with reorders is several launches; vn_launch fills (not adds to) its
 * counters, so each launch gets its own and the operator reports the sum. */
static void sum_steps(vn_kernel_counters *out, const vn_kernel_counters *step, int n)
{
    if (!out) return;
    for (int i = 0; i < n; i++) vn_kernel_counters_add(out, &step[i]);
}

static float *ws_at(void *ws, size_t off)
{
    return off == (size_t)-1 ? NULL : (float *)((char *)ws + off);
}

/* The NC1HWC0 kernel of the plan's algorithm. */
static vn_status run_kernel(const vn_conv_plan *p, const vn_op_run_ctx *ctx, const float *x,
                            const float *wp, const float *bp, const float *res, float *y,
                            vn_kernel_counters *counters)
{
    if (p->algo == VN_CONV_ALGO_WINOGRAD)
        return vn_conv_winograd_run(p, x, wp, bp, res, y, ws_at(ctx->workspace, p->ws_wino),
                                    counters);
    if (p->ws_pool != (size_t)-1) { /* pool tiles too large for L1: the map, then pool */
        vn_conv_plan whole = *p;
        whole.pooled = whole.gap = false;
        float *map = ws_at(ctx->workspace, p->ws_pool);
        vn_kernel_counters step[2] = {{0}};
        vn_status st = vn_conv_nc1hwc0_run(&whole, x, wp, bp, res, map, &step[0]);
        if (st == VN_OK) st = vn_conv_pool_map(p, map, y, &step[1]);
        sum_steps(counters, step, 2);
        return st;
    }
    return vn_conv_nc1hwc0_run(p, x, wp, bp, res, y, counters);
}

/* dw_fused (always NC1HWC0): the depthwise W and B packed unless constant. */
static vn_status run_dw_fused(const vn_conv_plan *p, const vn_op_run_ctx *ctx, const float *x,
                              const float *wp, const float *bp, float *y)
{
    const float *dw_w = p->dw_const_w, *dw_b = p->dw_const_bias;
    if (!dw_w) {
        float *dst = ws_at(ctx->workspace, p->ws_dw_w);
        vn_conv_pack_depthwise(&p->dw, ctx->inputs[4].data, dst);
        dw_w = dst;
    }
    if (p->dw_has_bias && !dw_b) {
        float *dst = ws_at(ctx->workspace, p->ws_dw_bias);
        vn_conv_pad_bias(p, ctx->inputs[5].data, dst);
        dw_b = dst;
    }
    return vn_conv_dw_fused_run(p, x, wp, bp, dw_w, dw_b, ws_at(ctx->workspace, p->ws_dw_map), y,
                                ctx->counters);
}

static vn_status run_blocked(const vn_conv_plan *p, const vn_op_run_ctx *ctx, const float *x,
                             const float *w, const float *bias, const float *res, float *y)
{
    const vn_conv_geom *g = &p->g;
    const float *wp = p->const_w ? p->const_w : w, *bp = p->const_bias;
    if (!p->packed && !p->const_w) {
        float *dst = ws_at(ctx->workspace, p->ws_w);
        vn_conv_pack_for_plan(p, w, dst);
        wp = dst;
    }
    if (bias && !bp) {
        float *dst = ws_at(ctx->workspace, p->ws_bias);
        vn_conv_pad_bias(p, bias, dst);
        bp = dst;
    }
    if (p->dw_fused) return run_dw_fused(p, ctx, x, wp, bp, y);
    if (p->layout == VN_CONV_NC1HWC0) return run_kernel(p, ctx, x, wp, bp, res, y, ctx->counters);
    /* NCHW Y: the kernel's blocked output is reordered back; X too unless it reads it plain */
    float *xb = p->x_plain ? (float *)x : ws_at(ctx->workspace, p->ws_x);
    float *yb = ws_at(ctx->workspace, p->ws_y);
    float *rb = res ? ws_at(ctx->workspace, p->ws_res) : NULL;
    int64_t in_s = g->IH * g->IW, out_s = g->OH * g->OW;
    vn_kernel_counters step[4] = {{0}}; /* each launch fills its own; summed below */
    vn_status st =
        p->x_plain ? VN_OK : vn_layout_to_nc1hwc0(p->device, x, xb, g->N, g->C, in_s, &step[0]);
    if (st == VN_OK && rb)
        st = vn_layout_to_nc1hwc0(p->device, res, rb, g->N, g->K, out_s, &step[1]);
    if (st == VN_OK) st = run_kernel(p, ctx, xb, wp, bp, rb, yb, &step[2]);
    if (st == VN_OK) st = vn_layout_from_nc1hwc0(p->device, yb, y, g->N, g->K, out_s, &step[3]);
    sum_steps(ctx->counters, step, 4);
    return st;
}

static vn_status run_plain(const vn_conv_plan *p, const vn_op_run_ctx *ctx, const float *x,
                           const float *w, const float *bias, const float *res, float *y)
{
    const vn_conv_geom *g = &p->g;
    float *col = ws_at(ctx->workspace, p->ws_col);
    if (p->layout == VN_CONV_NCHW)
        return vn_conv_gemm_run(p, x, w, bias, res, y, col, ctx->counters);
    float *xp = ws_at(ctx->workspace, p->ws_x), *yp = ws_at(ctx->workspace, p->ws_y);
    float *rp = res ? ws_at(ctx->workspace, p->ws_res) : NULL;
    int64_t in_s = g->IH * g->IW, out_s = g->OH * g->OW;
    vn_kernel_counters step[4] = {{0}};
    vn_status st = vn_layout_from_nc1hwc0(p->device, x, xp, g->N, g->C, in_s, &step[0]);
    if (st == VN_OK && rp)
        st = vn_layout_from_nc1hwc0(p->device, res, rp, g->N, g->K, out_s, &step[1]);
    if (st == VN_OK) st = vn_conv_gemm_run(p, xp, w, bias, rp, yp, col, &step[2]);
    if (st == VN_OK) st = vn_layout_to_nc1hwc0(p->device, yp, y, g->N, g->K, out_s, &step[3]);
    sum_steps(ctx->counters, step, 4);
    return st;
}

vn_status vn_conv_execute(const vn_conv_plan *p, const vn_op_run_ctx *ctx)
{
    const float *x = ctx->inputs[0].data, *w = ctx->inputs[1].data;
    const float *bias = p->has_bias ? ctx->inputs[2].data : NULL;
    const float *res = p->has_res ? ctx->inputs[3].data : NULL;
    float *y = ctx->outputs[0].data;
    if (vn_conv_algo_blocked(p->algo)) return run_blocked(p, ctx, x, w, bias, res, y);
    return run_plain(p, ctx, x, w, bias, res, y);
}
