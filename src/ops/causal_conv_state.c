/*
 * causal_conv_state.c — CausalConvWithState (ONNX opset 27): a stateful
 * causal depthwise 1-D convolution (Mamba, Gated DeltaNet).
 *
 * input [B, C, L], weight [C, 1, k], optional bias [C] and past_state
 * [B, C, k-1] (zeros when absent). With padded = past_state ++ input along
 * the length axis ([B, C, L + k - 1]):
 *   output[b, c, t] = act(bias[c] + sum_j weight[c, 0, j] * padded[b, c, t + j])
 *   present_state   = the last k - 1 positions of padded.
 * act is none, or silu / swish (v * sigmoid(v)), applied as the ONNX
 * reference does to the convolution already rounded to T. Computed in double
 * on the host (decode steps are a few positions; a reference-grade loop).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

enum { CC_X = 0, CC_W, CC_B, CC_PAST };

static vn_status cc_silu(const vn_op_ctx *ctx, const char *where, bool *silu)
{
    const char *act = "none";
    vn_status st = vn_so_attr_string(ctx, where, "activation", "none", &act);
    if (st != VN_OK) return st;
    if (strcmp(act, "none") && strcmp(act, "silu") && strcmp(act, "swish"))
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "activation '%s' is not one of none, silu, swish", act);
    *silu = strcmp(act, "none") != 0;
    return VN_OK;
}

static bool dims_are(const vn_tensor_desc *d, vn_dtype dt, int32_t rank, const int64_t *dims)
{
    if (d->rank != rank || d->dtype != dt) return false;
    for (int32_t i = 0; i < rank; i++)
        if (d->dims[i] != dims[i]) return false;
    return true;
}

static vn_status cc_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX], a[96], b[96];
    vn_ops_where(ctx, where, sizeof where);
    bool silu;
    vn_status st = cc_silu(ctx, where, &silu);
    if (st != VN_OK) return st;
    const vn_tensor_desc *x = &ctx->inputs[CC_X], *w = &ctx->inputs[CC_W];
    if (x->rank != 3)
        return vn_error(VN_ERR_SHAPE, where, "input %s must be [batch, channels, length]",
                        vn_desc_format(x, a, sizeof a));
    int64_t k = w->rank == 3 ? w->dims[2] : 0;
    int64_t wd[3] = {x->dims[1], 1, k}, past[3] = {x->dims[0], x->dims[1], k - 1};
    if (k < 1 || !dims_are(w, x->dtype, 3, wd))
        return vn_error(VN_ERR_SHAPE, where, "weight %s must be %s[%lld, 1, k >= 1] (input %s)",
                        vn_desc_format(w, a, sizeof a), vn_dtype_name(x->dtype),
                        (long long)x->dims[1], vn_desc_format(x, b, sizeof b));
    if (vn_so_present(ctx, CC_B) && !dims_are(&ctx->inputs[CC_B], x->dtype, 1, wd))
        return vn_error(VN_ERR_SHAPE, where, "bias %s must be %s[%lld]",
                        vn_desc_format(&ctx->inputs[CC_B], a, sizeof a), vn_dtype_name(x->dtype),
                        (long long)x->dims[1]);
    if (vn_so_present(ctx, CC_PAST) && !dims_are(&ctx->inputs[CC_PAST], x->dtype, 3, past))
        return vn_error(VN_ERR_SHAPE, where, "past_state %s must be %s[%lld, %lld, %lld]",
                        vn_desc_format(&ctx->inputs[CC_PAST], a, sizeof a), vn_dtype_name(x->dtype),
                        (long long)past[0], (long long)past[1], (long long)past[2]);
    out[0] = *x;
    out[1] = vn_so_desc(x->dtype, 3, past);
    return VN_OK;
}

static vn_status cc_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                         size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    bool *silu = malloc(sizeof *silu);
    *workspace = 0;
    if (!silu) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = cc_silu(ctx, where, silu);
    if (st != VN_OK) {
        free(silu);
        return st;
    }
    *data = silu;
    return VN_OK;
}

/* padded[b, c, p] of one (b, c) row: past_state, then the input. */
static double padded(const vn_op_run_ctx *ctx, int64_t row, int64_t p, int64_t k)
{
    const vn_tensor *x = &ctx->inputs[CC_X];
    vn_dtype dt = x->desc.dtype;
    int64_t len = x->desc.dims[2];
    if (p >= k - 1) return vn_cast_load_f64(dt, x->data, row * len + p - (k - 1));
    if (ctx->num_inputs <= CC_PAST || ctx->inputs[CC_PAST].desc.rank < 0) return 0.0;
    return vn_cast_load_f64(dt, ctx->inputs[CC_PAST].data, row * (k - 1) + p);
}

/* v rounded to dtype (the reference rounds the convolution before the activation). */
static double round_to(vn_dtype dt, double v)
{
    uint8_t tmp[8];
    vn_cast_store_f64(dt, tmp, 0, v);
    return vn_cast_load_f64(dt, tmp, 0);
}

static vn_status cc_run(const vn_op_run_ctx *ctx)
{
    bool silu = *(const bool *)ctx->plan;
    const vn_tensor *x = &ctx->inputs[CC_X], *w = &ctx->inputs[CC_W];
    const vn_tensor *bias =
        ctx->num_inputs > CC_B && ctx->inputs[CC_B].desc.rank >= 0 ? &ctx->inputs[CC_B] : NULL;
    vn_dtype dt = x->desc.dtype;
    int64_t C = x->desc.dims[1], len = x->desc.dims[2], k = w->desc.dims[2];
    for (int64_t row = 0; row < x->desc.dims[0] * C; row++) {
        int64_t c = row % C;
        for (int64_t t = 0; t < len; t++) {
            double v = bias ? vn_cast_load_f64(dt, bias->data, c) : 0.0;
            for (int64_t j = 0; j < k; j++)
                v += vn_cast_load_f64(dt, w->data, c * k + j) * padded(ctx, row, t + j, k);
            if (silu) {
                v = round_to(dt, v);
                v = v / (1.0 + exp(-v));
            }
            vn_cast_store_f64(dt, ctx->outputs[0].data, row * len + t, v);
        }
        for (int64_t p = 0; p < k - 1; p++) /* the last k - 1 of L + k - 1 positions */
            vn_cast_store_f64(dt, ctx->outputs[1].data, row * (k - 1) + p,
                              padded(ctx, row, len + p, k));
    }
    return VN_OK;
}

const vn_op_def vn_causal_conv_state_def = {"CausalConvWithState", "",       2,       4,    2,
                                            VN_DTYPES_FLOAT,       cc_infer, cc_plan, free, cc_run};
