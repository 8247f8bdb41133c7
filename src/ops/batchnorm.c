/*
 * batchnorm.c — BatchNormalization: y = x * a[c] + b[c] with
 * a = scale / sqrt(var + eps) and b = B - mean * a, per channel c (dim 1).
 *
 * Inference (training_mode = 0): mean and var are the inputs input_mean and
 * input_var. Training (training_mode = 1, opset 14/15): they are the batch's
 * statistics over every axis but the channel (the variance biased, divided by
 * the count, as the ONNX reference's numpy var), and the outputs running_mean
 * and running_var are input * momentum + batch * (1 - momentum).
 *
 * The per-channel statistics and factors are computed in double on the host
 * at run time (the inputs are ordinary tensors; for constant ones in inference
 * the graph engine's O2 pass folds the whole node into the preceding Conv
 * instead), a and b are written to the workspace as [1, C, 1, ...] tensors,
 * and the fused element-wise kernel does the rest in one pass over x:
 * {MUL r3 = r0, r1; ADD r4 = r3, r2} with broadcasting.
 *
 * The operator always declares the three outputs (the graph gives unnamed
 * ones anonymous buffers); in inference mode outputs 1 and 2 are copies of
 * input_mean and input_var. Opset < 7's spatial = 0 is refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/cast.h"
#include "ops/fused.h"

enum { BN_X = 0, BN_SCALE, BN_B, BN_MEAN, BN_VAR, BN_INPUTS };

typedef struct bn_attrs {
    double eps, momentum;
    bool training;
} bn_attrs;

typedef struct bn_plan {
    vn_fused_plan *fused;
    vn_tensor_desc param; /* [1, C, 1, ...]: the shape of a and b */
    bn_attrs at;
} bn_plan;

static vn_status get_attrs(const vn_op_ctx *ctx, const char *where, bn_attrs *at)
{
    int64_t training = 0, spatial = 1;
    vn_status st = vn_attrs_float(ctx->attrs, "epsilon", 1e-5, &at->eps);
    if (st == VN_OK) st = vn_attrs_float(ctx->attrs, "momentum", 0.9, &at->momentum);
    if (st == VN_OK) st = vn_attrs_int(ctx->attrs, "training_mode", 0, &training);
    if (st == VN_OK) st = vn_attrs_int(ctx->attrs, "spatial", 1, &spatial);
    if (st != VN_OK)
        return vn_error(st, where,
                        "epsilon and momentum must be floats, training_mode and "
                        "spatial ints");
    if (training != 0 && training != 1)
        return vn_error(VN_ERR_INVALID_ARG, where, "training_mode is %lld (0 or 1)",
                        (long long)training);
    if (!spatial)
        return vn_error(VN_ERR_UNSUPPORTED, where, "spatial = 0 (per-element statistics)");
    at->training = training == 1;
    return VN_OK;
}

static vn_status bn_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    bn_attrs at;
    vn_status st = get_attrs(ctx, where, &at);
    if (st != VN_OK) return st;
    const vn_tensor_desc *x = &ctx->inputs[BN_X];
    if (x->rank < 2)
        return vn_error(VN_ERR_SHAPE, where, "X has rank %d; it needs [N, C, ...]", (int)x->rank);
    for (int32_t i = BN_SCALE; i < BN_INPUTS; i++) {
        const vn_tensor_desc *p = &ctx->inputs[i];
        if (p->rank != 1 || p->dims[0] != x->dims[1]) {
            char a[96], b[96];
            return vn_error(VN_ERR_SHAPE, where, "input %d is %s; X %s needs [%lld]", (int)i,
                            vn_desc_format(p, a, sizeof a), vn_desc_format(x, b, sizeof b),
                            (long long)x->dims[1]);
        }
        if (!(VN_DTYPES_FLOAT & VN_DTYPE_BIT(p->dtype)))
            return vn_error(VN_ERR_DTYPE, where, "input %d is %s (a float dtype is needed)", (int)i,
                            vn_dtype_name(p->dtype));
    }
    out[0] = *x;
    out[1] = ctx->inputs[BN_MEAN]; /* running_mean */
    out[2] = ctx->inputs[BN_VAR];  /* running_var */
    return VN_OK;
}

static vn_status bn_plan_make(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                              size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    bn_plan *p = calloc(1, sizeof *p);
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "cannot allocate the plan");
    vn_status st = get_attrs(ctx, where, &p->at);
    const vn_tensor_desc *x = &ctx->inputs[BN_X];
    p->param = *x;
    p->param.dims[0] = 1;
    for (int32_t d = 2; d < x->rank; d++) p->param.dims[d] = 1;
    vn_fused_program prog = {3, 2, {{VN_VOP_MUL, 0, 1, 0.0}, {VN_VOP_ADD, 3, 2, 0.0}}};
    vn_tensor_desc in[3] = {*x, p->param, p->param};
    if (st == VN_OK)
        st = vn_fused_plan_build(where, ctx->device, &prog, in, 3, &outputs[0], &p->fused);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    /* a and b (x's dtype), then the batch mean and variance (double) */
    int64_t c = x->dims[1];
    *workspace = 2 * (size_t)c * (vn_dtype_size(x->dtype) + sizeof(double)) + 64;
    *data = p;
    return VN_OK;
}

static void bn_plan_free(void *data)
{
    bn_plan *p = data;
    if (!p) return;
    vn_fused_plan_free(p->fused);
    free(p);
}

/* Per channel, the mean and the biased variance of x over every axis but 1,
 * two passes in double (no cancellation from E[x^2] - E[x]^2). */
static void batch_stats(const vn_tensor *x, double *mean, double *var)
{
    const vn_tensor_desc *d = &x->desc;
    int64_t c = d->dims[1], inner = 1;
    for (int32_t i = 2; i < d->rank; i++) inner *= d->dims[i];
    int64_t count = d->dims[0] * inner;
    for (int64_t ch = 0; ch < c; ch++) {
        double s = 0.0, q = 0.0;
        for (int64_t n = 0; n < d->dims[0]; n++)
            for (int64_t i = (n * c + ch) * inner, e = i + inner; i < e; i++)
                s += vn_cast_load_f64(d->dtype, x->data, i);
        double m = count > 0 ? s / (double)count : 0.0;
        for (int64_t n = 0; n < d->dims[0]; n++)
            for (int64_t i = (n * c + ch) * inner, e = i + inner; i < e; i++) {
                double t = vn_cast_load_f64(d->dtype, x->data, i) - m;
                q += t * t;
            }
        mean[ch] = m;
        var[ch] = count > 0 ? q / (double)count : 0.0;
    }
}

/* Outputs 1 and 2: the running statistics (training) or the inputs unchanged. */
static void running_stats(const vn_op_run_ctx *ctx, const bn_attrs *at, const double *mean,
                          const double *var)
{
    const vn_tensor *in = ctx->inputs;
    for (int32_t k = 1; k < 3 && k < ctx->num_outputs; k++) {
        vn_tensor *o = &ctx->outputs[k];
        const vn_tensor *src = &in[k == 1 ? BN_MEAN : BN_VAR];
        const double *batch = k == 1 ? mean : var;
        if (!o->data) continue;
        for (int64_t ch = 0; ch < o->desc.dims[0]; ch++) {
            double v = vn_cast_load_f64(src->desc.dtype, src->data, ch);
            if (at->training) v = v * at->momentum + batch[ch] * (1.0 - at->momentum);
            vn_cast_store_f64(o->desc.dtype, o->data, ch, v);
        }
    }
}

static vn_status bn_run(const vn_op_run_ctx *ctx)
{
    const bn_plan *p = ctx->plan;
    const vn_tensor *in = ctx->inputs;
    vn_dtype dt = in[BN_X].desc.dtype;
    int64_t channels = p->param.dims[1];
    uint8_t *ws = (uint8_t *)(((uintptr_t)ctx->workspace + 63) & ~(uintptr_t)63);
    double *mean = (double *)ws, *var = mean + channels;
    void *a = var + channels, *b = (uint8_t *)a + channels * (int64_t)vn_dtype_size(dt);
    if (p->at.training) {
        batch_stats(&in[BN_X], mean, var);
    } else {
        for (int64_t c = 0; c < channels; c++) {
            mean[c] = vn_cast_load_f64(in[BN_MEAN].desc.dtype, in[BN_MEAN].data, c);
            var[c] = vn_cast_load_f64(in[BN_VAR].desc.dtype, in[BN_VAR].data, c);
        }
    }
    for (int64_t c = 0; c < channels; c++) {
        double k = vn_cast_load_f64(in[BN_SCALE].desc.dtype, in[BN_SCALE].data, c) /
                   sqrt(var[c] + p->at.eps);
        vn_cast_store_f64(dt, a, c, k);
        vn_cast_store_f64(dt, b, c,
                          vn_cast_load_f64(in[BN_B].desc.dtype, in[BN_B].data, c) - mean[c] * k);
    }
    running_stats(ctx, &p->at, mean, var);
    if (vn_desc_numel(&ctx->outputs[0].desc) == 0) return VN_OK;
    vn_tensor fused_in[3] = {in[BN_X], {p->param, a}, {p->param, b}};
    return vn_fused_execute(ctx->device, p->fused, fused_in, &ctx->outputs[0], ctx->counters);
}

static const vn_op_def batchnorm = {
    "BatchNormalization", "",       BN_INPUTS,    BN_INPUTS,    3,
    VN_DTYPES_FLOAT,      bn_infer, bn_plan_make, bn_plan_free, bn_run,
};

const vn_op_def *const *vn_ops_batchnorm_table(int32_t *count)
{
    static const vn_op_def *const table[] = {&batchnorm};
    *count = 1;
    return table;
}
