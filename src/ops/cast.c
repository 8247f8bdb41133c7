/*
 * cast.c — Cast (attribute 'to', an ONNX TensorProto data type) and CastLike
 * (the dtype of input 1), between every vinci dtype by the rules of cast.h.
 * f32 <-> f16 / bf16 use the vectorised array conversions; other pairs the
 * scalar ones. A tile is CHUNK contiguous elements.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/core_internal.h"
#include "ops/cast.h"

#define CHUNK 16384

int32_t vn_cast_dtype_from_onnx(int64_t t)
{
    switch (t) {
    case 1:
        return VN_F32;
    case 2:
        return VN_U8;
    case 3:
        return VN_I8;
    case 6:
        return VN_I32;
    case 7:
        return VN_I64;
    case 9:
        return VN_BOOL;
    case 10:
        return VN_F16;
    case 16:
        return VN_BF16;
    case 4:
        return VN_U16;
    case 5:
        return VN_I16;
    case 11:
        return VN_F64;
    case 12:
        return VN_U32;
    case 13:
        return VN_U64;
    default:
        return -1;
    }
}

static vn_status cast_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    *out = ctx->inputs[0];
    if (ctx->num_inputs == 2) { /* CastLike */
        out->dtype = ctx->inputs[1].dtype;
        return VN_OK;
    }
    int64_t to;
    if (vn_attrs_int(ctx->attrs, "to", -1, &to) != VN_OK || to < 0)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'to' (an int) is required");
    int32_t dt = vn_cast_dtype_from_onnx(to);
    if (dt < 0)
        return vn_error(VN_ERR_UNSUPPORTED, where,
                        "'to' = %lld: no such vinci dtype (float, float16, bfloat16, double, "
                        "int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool)",
                        (long long)to);
    out->dtype = (vn_dtype)dt;
    return VN_OK;
}

typedef struct cast_args {
    const void *x;
    void *y;
    vn_dtype from, to;
    int64_t n, tiles;
} cast_args;

static void cast_chunk(const cast_args *a, int64_t o, int64_t n)
{
    const float *xf = (const float *)a->x + o;
    const uint16_t *xh = (const uint16_t *)a->x + o;
    if (a->from == VN_F32 && a->to == VN_F16) {
        vn_f32_to_f16_array(xf, (uint16_t *)a->y + o, (size_t)n);
    } else if (a->from == VN_F32 && a->to == VN_BF16) {
        vn_f32_to_bf16_array(xf, (uint16_t *)a->y + o, (size_t)n);
    } else if (a->from == VN_F16 && a->to == VN_F32) {
        vn_f16_to_f32_array(xh, (float *)a->y + o, (size_t)n);
    } else if (a->from == VN_BF16 && a->to == VN_F32) {
        vn_bf16_to_f32_array(xh, (float *)a->y + o, (size_t)n);
    } else if (a->from == a->to) {
        size_t es = vn_dtype_size(a->from);
        memcpy((uint8_t *)a->y + o * es, (const uint8_t *)a->x + o * es, (size_t)n * es);
    } else if (vn_cast_is_u64(a->from)) { /* integer sources round once to a float */
        for (int64_t i = o; i < o + n; i++)
            vn_cast_store_u64(a->to, a->y, i, (uint64_t)vn_cast_load_i64(a->from, a->x, i));
    } else if (!vn_cast_is_float(a->from)) {
        for (int64_t i = o; i < o + n; i++)
            vn_cast_store_i64(a->to, a->y, i, vn_cast_load_i64(a->from, a->x, i));
    } else {
        for (int64_t i = o; i < o + n; i++)
            vn_cast_store_f64(a->to, a->y, i, vn_cast_load_f64(a->from, a->x, i));
    }
}

static void cast_kernel(vn_core *core, const void *args)
{
    const cast_args *a = args;
    for (int64_t t; vn_tile_next(core, &t);) {
        int64_t o = t * CHUNK, n = vn_ops_min(CHUNK, a->n - o);
        cast_chunk(a, o, n);
        core->counters.bytes_in += n * (int64_t)vn_dtype_size(a->from);
        core->counters.bytes_out += n * (int64_t)vn_dtype_size(a->to);
    }
}

static vn_status cast_run(const vn_op_run_ctx *ctx)
{
    cast_args a = {ctx->inputs[0].data,
                   ctx->outputs[0].data,
                   ctx->inputs[0].desc.dtype,
                   ctx->outputs[0].desc.dtype,
                   vn_desc_numel(&ctx->outputs[0].desc),
                   0};
    a.tiles = vn_ops_div_up(a.n, CHUNK);
    int32_t blocks = vn_ops_block_dim(ctx->device, a.tiles, CHUNK);
    vn_launch_desc d = {cast_kernel, "vn_cast", blocks, &a, -1, a.tiles};
    return vn_launch(ctx->device, &d, ctx->counters);
}

static const vn_op_def defs[] = {
    {"Cast", "", 1, 1, 1, VN_DTYPES_ALL, cast_infer, NULL, NULL, cast_run},
    {"CastLike", "", 2, 2, 1, VN_DTYPES_ALL, cast_infer, NULL, NULL, cast_run},
};

const vn_op_def *const *vn_ops_cast_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&defs[0], &defs[1]};
    *count = 2;
    return ptrs;
}
