/*
 * reverse_sequence.c — ReverseSequence (ONNX 10): for each batch entry b the
 * first sequence_lens[b] steps along time_axis are reversed, the rest copied.
 * batch_axis and time_axis are 0 and 1 (either way round); the lengths are
 * read at run time. Each (batch, step) slice is one contiguous run of the
 * dims after axis 1, so the copy is a memcpy per slice.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

typedef struct rs_plan {
    int32_t batch_axis;
    int64_t B, T, inner, esize;
    vn_dtype len_dt;
} rs_plan;

static vn_status rs_params(const vn_op_ctx *ctx, const char *where, rs_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *l = &ctx->inputs[1];
    int64_t ba, ta;
    vn_status st = vn_so_attr_int(ctx, where, "batch_axis", 1, &ba);
    if (st == VN_OK) st = vn_so_attr_int(ctx, where, "time_axis", 0, &ta);
    if (st != VN_OK) return st;
    if (x->rank < 2 || !((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "needs rank >= 2 and batch_axis, time_axis 0 and 1 (either order)");
    if (l->rank != 1 || l->dims[0] != x->dims[ba] || (l->dtype != VN_I64 && l->dtype != VN_I32))
        return vn_error(VN_ERR_SHAPE, where, "sequence_lens must be i32/i64 [%lld]",
                        (long long)x->dims[ba]);
    p->batch_axis = (int32_t)ba;
    p->B = x->dims[ba], p->T = x->dims[ta];
    p->inner = 1;
    for (int32_t d = 2; d < x->rank; d++) p->inner *= x->dims[d];
    p->esize = (int64_t)vn_dtype_size(x->dtype);
    p->len_dt = l->dtype;
    return VN_OK;
}

static vn_status rs_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    rs_plan p;
    *out = ctx->inputs[0];
    return rs_params(ctx, where, &p);
}

static vn_status rs_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    rs_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = rs_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

static vn_status rs_run(const vn_op_run_ctx *ctx)
{
    const rs_plan *p = ctx->plan;
    const char *x = ctx->inputs[0].data;
    char *y = ctx->outputs[0].data;
    size_t run = (size_t)(p->inner * p->esize);
    for (int64_t b = 0; b < p->B; b++) {
        int64_t len = vn_cast_load_i64(p->len_dt, ctx->inputs[1].data, b);
        if (len < 0 || len > p->T)
            return vn_error(VN_ERR_INVALID_ARG, "ReverseSequence",
                            "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                            (long long)len, (long long)p->T);
        for (int64_t t = 0; t < p->T; t++) {
            int64_t s = t < len ? len - 1 - t : t;
            int64_t dst = p->batch_axis ? t * p->B + b : b * p->T + t;
            int64_t src = p->batch_axis ? s * p->B + b : b * p->T + s;
            memcpy(y + (size_t)dst * run, x + (size_t)src * run, run);
        }
    }
    return VN_OK;
}

const vn_op_def vn_reverse_sequence_def = {"ReverseSequence", "",       2,          2,    1,
                                           VN_DTYPES_ALL,     rs_infer, rs_plan_fn, free, rs_run};
