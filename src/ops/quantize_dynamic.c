/*
 * quantize_dynamic.c — DynamicQuantizeLinear (ONNX 11): u8 quantization of
 * an f32 tensor with scale and zero point computed from its range, which is
 * widened to include 0 so that 0 is exact:
 *   scale = (max(0, xmax) - min(0, xmin)) / 255   (1 / 255 when that is 0)
 *   zero point = rint(saturate(0 - min(0, xmin) / scale))
 *   y = saturate(rint(x / scale) + zero point)
 * all in f32 as the ONNX reference and onnxruntime do; rint rounds half to
 * even. Outputs: y u8 (x's shape), y_scale f32 [], y_zero_point u8 [].
 */
#include <math.h>
#include <stdlib.h>

#include "ops/quant.h"

static vn_status dq_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    out[0] = ctx->inputs[0];
    out[0].dtype = VN_U8;
    out[1] = (vn_tensor_desc){0};
    out[1].dtype = VN_F32;
    out[2] = (vn_tensor_desc){0};
    out[2].dtype = VN_U8;
    return VN_OK;
}

static vn_status dq_run(const vn_op_run_ctx *ctx)
{
    const float *x = ctx->inputs[0].data;
    int64_t n = vn_desc_numel(&ctx->inputs[0].desc);
    float lo = 0.0f, hi = 0.0f; /* the range always includes 0 */
    for (int64_t i = 0; i < n; i++) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    float scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
    float zp = rintf(fminf(255.0f, fmaxf(0.0f, 0.0f - lo / scale)));
    uint8_t *y = ctx->outputs[0].data;
    for (int64_t i = 0; i < n; i++)
        y[i] = (uint8_t)vn_quant_saturate((double)(rintf(x[i] / scale) + zp), VN_U8);
    *(float *)ctx->outputs[1].data = scale;
    *(uint8_t *)ctx->outputs[2].data = (uint8_t)zp;
    return VN_OK;
}

const vn_op_def vn_dynamic_quantize_linear_def = {
    "DynamicQuantizeLinear", "", 1, 1, 3, VN_DTYPE_BIT(VN_F32), dq_infer, NULL, NULL, dq_run};
