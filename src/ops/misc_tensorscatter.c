/*
 * misc_tensorscatter.c — TensorScatter (opset 24): a KV-cache update. The
 * output is past_cache with `update` written along `axis` (default -2) at
 * write_indices[batch] onwards (0 when absent); mode "circular" wraps the
 * positions modulo the cache length, "linear" requires them to fit.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/misc.h"

typedef struct ts_plan {
    int64_t outer, per_batch, max_len, upd_len, inner; /* cache [outer, max_len, inner] */
    size_t esize;
    bool circular;
} ts_plan;

static vn_status ts_params(const vn_op_ctx *ctx, const char *where, ts_plan *p)
{
    const vn_tensor_desc *c = &ctx->inputs[0], *u = &ctx->inputs[1];
    const char *mode = "linear";
    int64_t ax = -2;
    int32_t axis = 0;
    vn_status st = vn_so_attr_int(ctx, where, "axis", -2, &ax);
    if (st == VN_OK) st = vn_so_attr_string(ctx, where, "mode", "linear", &mode);
    if (st == VN_OK && c->rank < 2)
        st = vn_error(VN_ERR_SHAPE, where, "past_cache must have rank >= 2");
    if (st == VN_OK) st = vn_so_axis(where, "axis", ax, c->rank, &axis);
    if (st != VN_OK) return st;
    if (axis == 0) return vn_error(VN_ERR_INVALID_ARG, where, "axis cannot be the batch axis");
    if (strcmp(mode, "linear") != 0 && strcmp(mode, "circular") != 0)
        return vn_error(VN_ERR_INVALID_ARG, where, "mode \"%s\" (linear, circular)", mode);
    bool ok = u->rank == c->rank && u->dtype == c->dtype && u->dims[axis] <= c->dims[axis];
    for (int32_t d = 0; ok && d < c->rank; d++) ok = d == axis || u->dims[d] == c->dims[d];
    if (vn_so_present(ctx, 2)) {
        const vn_tensor_desc *w = &ctx->inputs[2];
        ok = ok && w->rank == 1 && w->dims[0] == c->dims[0] &&
             (w->dtype == VN_I64 || w->dtype == VN_I32);
    }
    if (!ok) {
        char a[96], b[96];
        return vn_error(VN_ERR_SHAPE, where, "update %s (or write_indices) does not fit cache %s",
                        vn_desc_format(u, a, sizeof a), vn_desc_format(c, b, sizeof b));
    }
    vn_misc_split3(c, axis, &p->outer, &p->max_len, &p->inner);
    p->per_batch = p->outer / vn_ops_max(c->dims[0], 1);
    p->upd_len = u->dims[axis];
    p->esize = vn_dtype_size(c->dtype);
    p->circular = mode[0] == 'c';
    return VN_OK;
}

static vn_status ts_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    ts_plan p;
    vn_status st = ts_params(ctx, where, &p);
    if (st == VN_OK) *out = ctx->inputs[0];
    return st;
}

static vn_status ts_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    (void)outputs;
    ts_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = ts_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

static vn_status ts_run(const vn_op_run_ctx *ctx)
{
    const ts_plan *p = ctx->plan;
    const vn_tensor *w =
        ctx->num_inputs > 2 && ctx->inputs[2].desc.rank >= 0 ? &ctx->inputs[2] : NULL;
    const char *src = ctx->inputs[1].data;
    char *dst = ctx->outputs[0].data;
    size_t row = (size_t)p->inner * p->esize;
    if (dst != ctx->inputs[0].data)
        memcpy(dst, ctx->inputs[0].data, (size_t)(p->outer * p->max_len) * row);
    for (int64_t o = 0; o < p->outer; o++) {
        int64_t b = o / vn_ops_max(p->per_batch, 1);
        int64_t start = w ? vn_cast_load_i64(w->desc.dtype, w->data, b) : 0;
        for (int64_t s = 0; s < p->upd_len; s++) {
            int64_t pos = start + s;
            if (p->circular) pos = ((pos % p->max_len) + p->max_len) % p->max_len;
            if (pos < 0 || pos >= p->max_len)
                return vn_error(VN_ERR_INVALID_ARG, "TensorScatter",
                                "write index %lld + %lld is outside the cache of %lld",
                                (long long)start, (long long)s, (long long)p->max_len);
            memcpy(dst + (size_t)(o * p->max_len + pos) * row,
                   src + (size_t)(o * p->upd_len + s) * row, row);
        }
    }
    return VN_OK;
}

const vn_op_def vn_misc_tensorscatter_def = {"TensorScatter", "",       2,          3,    1,
                                             VN_DTYPES_ALL,   ts_infer, ts_plan_fn, free, ts_run};
