/*
 * conv_integer.c — ConvInteger (ONNX 10) and QLinearConv (ONNX 10), NCHW,
 * 1-D and 2-D, u8 / i8 operands: checks, shapes, plan, and the scalar loops
 * that are exact:
 *   acc[n,k,oh,ow] = sum (x - x_zp) * (w - w_zp[k])  over the receptive field
 * in int64 (padding contributes 0: padded x equals x_zp), stored as i32 by
 * ConvInteger. QLinearConv adds the i32 bias B and requantizes like the ONNX
 * reference: y = saturate(rint(acc * m[k]) + y_zp) with m[k] = x_scale *
 * w_scale[k] / y_scale in f32 and the product in f64, rint = half to even.
 *
 * Geometry (pads, strides, dilations, group, auto_pad, kernel_shape) comes
 * from Conv's own parser, vn_conv_geom_parse, shown X and W as f32.
 *
 * When w's zero point is one value the accumulators come from the int8 GEMM
 * instead (conv_integer_gemm.c: AMX tiles or VNNI, W packed at plan time);
 * both paths finish the sums with vn_ci_finish, so they give the same bits.
 * A per-channel w zero point with different values takes the scalar loops.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cast.h"
#include "ops/conv_integer.h"

static const ci_slots ci_slots_int = {0, 1, 2, 3, -1, -1, -1, -1, -1};
static const ci_slots ci_slots_qlinear = {0, 3, 2, 5, 1, 4, 6, 7, 8};

static bool ci_present(const vn_op_ctx *ctx, int32_t slot)
{
    return slot >= 0 && slot < ctx->num_inputs && ctx->inputs[slot].rank >= 0;
}

static bool ci_u8_i8(vn_dtype dt)
{
    return dt == VN_U8 || dt == VN_I8;
}

/* A scalar, or (per_k) a 1-D tensor of K elements, of dtype dt. */
static vn_status ci_check_param(const vn_op_ctx *ctx, const char *where, const char *name,
                                int32_t slot, vn_dtype dt, bool per_k, int64_t K)
{
    const vn_tensor_desc *d = &ctx->inputs[slot];
    char a[128];
    int64_t n = vn_desc_numel(d);
    if (d->dtype != dt)
        return vn_error(VN_ERR_DTYPE, where, "%s %s must be %s", name,
                        vn_desc_format(d, a, sizeof a), vn_dtype_name(dt));
    if (d->rank <= 1 && (n == 1 || (per_k && d->rank == 1 && n == K))) return VN_OK;
    return vn_error(VN_ERR_SHAPE, where, "%s %s must be a scalar%s", name,
                    vn_desc_format(d, a, sizeof a), per_k ? " or 1-D of W's output channels" : "");
}

/* Conv's parser on {x, w} relabelled f32 (it checks Conv's dtypes). */
static vn_status ci_geometry(const vn_op_ctx *ctx, const char *where, ci_plan *p)
{
    vn_tensor_desc xw[2] = {ctx->inputs[p->in.x], ctx->inputs[p->in.w]};
    char a[128], b[128];
    if (!ci_u8_i8(xw[0].dtype) || !ci_u8_i8(xw[1].dtype))
        return vn_error(VN_ERR_DTYPE, where, "x %s and w %s must be u8 or i8",
                        vn_desc_format(&xw[0], a, sizeof a), vn_desc_format(&xw[1], b, sizeof b));
    p->xdt = xw[0].dtype, p->wdt = xw[1].dtype;
    xw[0].dtype = xw[1].dtype = VN_F32;
    vn_op_ctx sub = *ctx;
    sub.inputs = xw, sub.num_inputs = 2, sub.input_data = NULL;
    return vn_conv_geom_parse(&sub, where, VN_CONV_NCHW, false, &p->g);
}

static vn_status ci_check(const vn_op_ctx *ctx, const char *where, const ci_slots *in, ci_plan *p)
{
    p->in = *in;
    vn_status st = ci_geometry(ctx, where, p);
    if (st != VN_OK) return st;
    int64_t K = p->g.K;
    p->has_xzp = ci_present(ctx, in->xzp);
    p->has_wzp = ci_present(ctx, in->wzp);
    p->has_b = ci_present(ctx, in->b);
    if (p->has_xzp) st = ci_check_param(ctx, where, "x_zero_point", in->xzp, p->xdt, false, K);
    if (st == VN_OK && p->has_wzp)
        st = ci_check_param(ctx, where, "w_zero_point", in->wzp, p->wdt, true, K);
    p->ydt = VN_I32;
    if (st != VN_OK || in->ys < 0) return st;
    /* QLinearConv: every zero point and scale is required except B. */
    if (!p->has_xzp || !p->has_wzp || !ci_present(ctx, in->yzp))
        return vn_error(VN_ERR_INVALID_ARG, where, "x, w and y zero points are required");
    p->ydt = ctx->inputs[in->yzp].dtype;
    if (!ci_u8_i8(p->ydt))
        return vn_error(VN_ERR_DTYPE, where, "y_zero_point must be u8 or i8, not %s",
                        vn_dtype_name(p->ydt));
    st = ci_check_param(ctx, where, "x_scale", in->xs, VN_F32, false, K);
    if (st == VN_OK) st = ci_check_param(ctx, where, "w_scale", in->ws, VN_F32, true, K);
    if (st == VN_OK) st = ci_check_param(ctx, where, "y_scale", in->ys, VN_F32, false, K);
    if (st == VN_OK) st = ci_check_param(ctx, where, "y_zero_point", in->yzp, p->ydt, false, K);
    if (st == VN_OK && p->has_b) {
        const vn_tensor_desc *b = &ctx->inputs[in->b];
        char a[128];
        if (b->dtype != VN_I32 || b->rank != 1 || b->dims[0] != K)
            return vn_error(VN_ERR_SHAPE, where, "B %s must be i32[%lld]",
                            vn_desc_format(b, a, sizeof a), (long long)K);
    }
    return st;
}

static const ci_slots *ci_slots_of(const vn_op_ctx *ctx)
{
    return ctx->def->name[0] == 'Q' ? &ci_slots_qlinear : &ci_slots_int;
}

static vn_status ci_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    ci_plan p = {0};
    vn_status st = ci_check(ctx, where, ci_slots_of(ctx), &p);
    if (st != VN_OK) return st;
    out[0] = vn_conv_out_desc(&p.g, VN_CONV_NCHW);
    out[0].dtype = p.ydt;
    return VN_OK;
}

static vn_status ci_plan_new(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                             size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    ci_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = ci_check(ctx, where, ci_slots_of(ctx), p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    st = vn_ci_gemm_plan(ctx, where, p);
    if (st != VN_OK) {
        vn_ci_plan_free(p);
        return st;
    }
    *workspace = p->ws_total;
    *plan = p;
    return VN_OK;
}

int64_t vn_ci_param_i(const vn_tensor *t, int64_t k)
{
    return vn_cast_load_i64(t->desc.dtype, t->data, vn_desc_numel(&t->desc) > 1 ? k : 0);
}
static double ci_param_f(const vn_tensor *t, int64_t k)
{
    return vn_cast_load_f64(t->desc.dtype, t->data, vn_desc_numel(&t->desc) > 1 ? k : 0);
}

/* The exact accumulator of output (n, k, oh, ow). */
static int64_t ci_dot(const ci_plan *p, const void *x, const void *w, int64_t xzp, int64_t wzp,
                      int64_t n, int64_t k, int64_t oh, int64_t ow)
{
    const vn_conv_geom *g = &p->g;
    int64_t cg = g->C / g->G, c0 = k / (g->K / g->G) * cg, acc = 0;
    for (int64_t c = 0; c < cg; c++)
        for (int64_t kh = 0; kh < g->KH; kh++) {
            int64_t ih = oh * g->sh - g->pt + kh * g->dh;
            if (ih < 0 || ih >= g->IH) continue;
            for (int64_t kw = 0; kw < g->KW; kw++) {
                int64_t iw = ow * g->sw - g->pl + kw * g->dw;
                if (iw < 0 || iw >= g->IW) continue;
                int64_t xi = ((n * g->C + c0 + c) * g->IH + ih) * g->IW + iw;
                int64_t wi = ((k * cg + c) * g->KH + kh) * g->KW + kw;
                acc += (vn_cast_load_i64(p->xdt, x, xi) - xzp) *
                       (vn_cast_load_i64(p->wdt, w, wi) - wzp);
            }
        }
    return acc;
}

ci_channel vn_ci_channel_of(const ci_plan *p, const vn_tensor *in, int64_t k)
{
    ci_channel c = {p->has_b ? vn_ci_param_i(&in[p->in.b], k) : 0, p->in.ys >= 0, 0.0, 0.0};
    if (c.q) {
        float s = (float)ci_param_f(&in[p->in.xs], 0) * (float)ci_param_f(&in[p->in.ws], k);
        c.m = (double)(s / (float)ci_param_f(&in[p->in.ys], 0));
        c.yzp = (double)vn_ci_param_i(&in[p->in.yzp], 0);
    }
    return c;
}

static vn_status ci_run_scalar(const vn_op_run_ctx *ctx, int64_t xzp)
{
    const ci_plan *p = ctx->plan;
    const vn_conv_geom *g = &p->g;
    const vn_tensor *in = ctx->inputs;
    const void *x = in[p->in.x].data, *w = in[p->in.w].data;
    int64_t e = 0;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t k = 0; k < g->K; k++) {
            int64_t wzp = p->has_wzp ? vn_ci_param_i(&in[p->in.wzp], k) : 0;
            ci_channel c = vn_ci_channel_of(p, in, k);
            for (int64_t oh = 0; oh < g->OH; oh++)
                for (int64_t ow = 0; ow < g->OW; ow++, e++) {
                    int32_t acc =
                        (int32_t)(uint32_t)(uint64_t)ci_dot(p, x, w, xzp, wzp, n, k, oh, ow);
                    vn_ci_finish(p, &c, ctx->outputs[0].data, e, &acc, 1);
                }
        }
    return VN_OK;
}

bool vn_ci_one_wzp(const ci_plan *p, const vn_tensor *in, int64_t *wzp)
{
    *wzp = p->has_wzp ? vn_ci_param_i(&in[p->in.wzp], 0) : 0;
    for (int64_t k = 1; p->has_wzp && k < p->g.K; k++)
        if (vn_ci_param_i(&in[p->in.wzp], k) != *wzp) return false;
    return true;
}

static vn_status ci_run(const vn_op_run_ctx *ctx)
{
    const ci_plan *p = ctx->plan;
    const vn_tensor *in = ctx->inputs;
    int64_t xzp = p->has_xzp ? vn_ci_param_i(&in[p->in.xzp], 0) : 0, wzp;
    if (p->g.N * p->g.K * p->g.OH * p->g.OW == 0) return VN_OK;
    if (vn_ci_one_wzp(p, in, &wzp) && p->gemm && ctx->workspace)
        return vn_ci_gemm_run(ctx, xzp, wzp);
    return ci_run_scalar(ctx, xzp);
}

#define CI_DTYPES (VN_DTYPE_BIT(VN_U8) | VN_DTYPE_BIT(VN_I8))

const vn_op_def vn_conv_integer_def = {
    "ConvInteger", "", 2, 4, 1, CI_DTYPES, ci_infer, ci_plan_new, vn_ci_plan_free, ci_run};
const vn_op_def vn_qlinear_conv_def = {
    "QLinearConv", "", 8, 9, 1, CI_DTYPES, ci_infer, ci_plan_new, vn_ci_plan_free, ci_run};
