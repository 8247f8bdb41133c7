/*
 * conv_op.c — the registry entries of the convolution family:
 *
 *   Conv                     ONNX Conv on NCHW (X, W, optional B)
 *   vinci::ConvNC1HWC0       the same on NC1HWC0 X and Y
 *   vinci::FusedConv         Conv + optional residual Z (input 3) + activation,
 *   vinci::FusedConvNC1HWC0  on NCHW / NC1HWC0: Y = act(conv(X, W) + B + Z)
 *                            (ONNX order of Conv, Add, activation); attributes
 *                            "activation" (Relu, Clip, Relu6, LeakyRelu,
 *                            HardSigmoid, HardSwish, Sigmoid, SiLU) and
 *                            "activation_params" (Clip: min, max; LeakyRelu:
 *                            alpha; HardSigmoid: alpha, beta).
 *
 * Every one also takes "algo" (conv_plan.c) and "packed" / "weight_shape"
 * (weights packed once by vn_conv_pack_weights). BatchNorm is folded into W
 * and B beforehand (conv_fold.h). The table also carries the layout
 * operators (layout_op.c), so the family registers with one line.
 */
#include <string.h>

#include "ops/conv.h"
#include "ops/layout.h"
#include "ops/prepack.h"

typedef struct conv_def {
    vn_op_def def;
    vn_conv_layout layout;
    bool fused;
} conv_def;

static const conv_def *def_of(const vn_op_def *d)
{
    return (const conv_def *)d;
}

static vn_status conv_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_op_ctx c = *ctx;
    c.device = NULL; /* validation only: no GEMM plan */
    vn_conv_plan *p;
    const conv_def *d = def_of(ctx->def);
    vn_status st = vn_conv_plan_build(&c, where, d->layout, d->fused, &p);
    if (st != VN_OK) return st;
    outputs[0] = vn_conv_plan_out_desc(p);
    vn_conv_plan_free(p);
    return VN_OK;
}

static vn_status conv_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                           size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    const conv_def *d = def_of(ctx->def);
    vn_conv_plan *p;
    vn_status st = vn_conv_plan_build(ctx, where, d->layout, d->fused, &p);
    if (st != VN_OK) return st;
    *data = p;
    *workspace = p->ws_total;
    return VN_OK;
}

static void conv_plan_free(void *data)
{
    vn_conv_plan_free(data);
}

static int32_t conv_export(const void *data, vn_op_blob blobs[VN_OP_MAX_BLOBS], uint64_t *consumed)
{
    return vn_conv_plan_export(data, blobs, consumed);
}

/* Plan with the consumed inputs hidden (nothing packed), then adopt. */
static vn_status conv_from_blobs(const vn_op_ctx *ctx, const vn_tensor_desc *outputs,
                                 const vn_op_blob *blobs, int32_t num_blobs, uint64_t consumed,
                                 void **data, size_t *workspace)
{
    const void *in_data[64];
    vn_op_ctx c = vn_prepack_ctx(ctx, consumed, in_data);
    vn_status st = conv_plan(&c, outputs, data, workspace);
    if (st != VN_OK) return st;
    vn_conv_plan *p = *data;
    if ((st = vn_conv_plan_adopt(p, blobs, num_blobs, consumed)) != VN_OK) {
        vn_conv_plan_free(p);
        *data = NULL;
        return st;
    }
    *workspace = p->ws_total;
    return VN_OK;
}

static const vn_op_prepack conv_hooks = {conv_export, conv_from_blobs};

const vn_op_prepack *vn_conv_prepack_hooks(const vn_op_def *def)
{
    return def && def->infer == conv_infer ? &conv_hooks : NULL;
}

static vn_status conv_run(const vn_op_run_ctx *ctx)
{
    return vn_conv_execute(ctx->plan, ctx);
}

#define CONV(name, domain, max_in, layout, fused)                                                  \
    {                                                                                              \
        {name,      domain,         2,       max_in, 1, VN_DTYPE_BIT(VN_F32), conv_infer,          \
         conv_plan, conv_plan_free, conv_run},                                                     \
            layout, fused                                                                          \
    }

static const conv_def defs[] = {
    CONV("Conv", "", 3, VN_CONV_NCHW, false),
    CONV("ConvNC1HWC0", "vinci", 3, VN_CONV_NC1HWC0, false),
    CONV("FusedConv", "vinci", 4, VN_CONV_NCHW, true),
    CONV("FusedConvNC1HWC0", "vinci", 6, VN_CONV_NC1HWC0, true), /* 4, 5: dw_ */
};

#define NDEFS ((int32_t)(sizeof defs / sizeof defs[0]))

const vn_op_def *const *vn_ops_conv_table(int32_t *count)
{
    static const vn_op_def *ptrs[NDEFS + 2];
    int32_t nl = 0;
    const vn_op_def *const *layout = vn_ops_layout_table(&nl);
    /* Called once, under the registry's once-guard. */
    for (int32_t i = 0; i < NDEFS; i++) ptrs[i] = &defs[i].def;
    for (int32_t i = 0; i < nl && i < 2; i++) ptrs[NDEFS + i] = layout[i];
    *count = NDEFS + (nl < 2 ? nl : 2);
    return ptrs;
}

vn_status vn_conv_pack_weights(const char *op_name, const vn_tensor_desc *inputs,
                               int32_t num_inputs, const vn_attrs *attrs, const float *w,
                               float *packed, int64_t *elems)
{
    const char *name = op_name && strncmp(op_name, "vinci::", 7) == 0 ? op_name + 7 : op_name;
    const vn_op_def *def = name ? vn_op_find(name, "") : NULL;
    if (!def && name) def = vn_op_find(name, "vinci");
    if (!def || def->infer != conv_infer || !elems || num_inputs < 2 || !inputs)
        return vn_error(VN_ERR_INVALID_ARG, "vn_conv_pack_weights",
                        "'%s' is not a convolution operator, or inputs / elems is NULL",
                        op_name ? op_name : "(null)");
    vn_op_ctx ctx = {
        .def = def, .inputs = inputs, .num_inputs = num_inputs, .attrs = attrs, .node_name = ""};
    vn_conv_plan *p;
    const conv_def *d = def_of(def);
    vn_status st = vn_conv_plan_build(&ctx, "vn_conv_pack_weights", d->layout, d->fused, &p);
    if (st != VN_OK) return st;
    *elems = vn_conv_packed_elems(&p->g, p->algo);
    if (packed && w) {
        if (vn_conv_algo_blocked(p->algo))
            vn_conv_pack_f32(p, w, packed);
        else
            memcpy(packed, w, (size_t)*elems * sizeof *packed);
    }
    vn_conv_plan_free(p);
    return VN_OK;
}
