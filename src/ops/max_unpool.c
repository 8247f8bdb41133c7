/*
 * max_unpool.c — MaxUnpool (ONNX 9, 11, 22): scatters X into zeros at the
 * flat positions `I` (as MaxPool's indices give them) of the default output
 * shape (in - 1) * stride - pad_begin - pad_end + kernel per spatial dim;
 * with an `output_shape` input (a constant) that tensor is then placed at
 * the top-left corner of a zero output of the requested shape, as the ONNX
 * reference does.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/extra.h"

typedef struct mu_plan {
    int32_t rank;
    int64_t inferred[VN_MAX_RANK], out[VN_MAX_RANK];
    int64_t in_numel, inf_numel, out_numel, esize;
    vn_dtype idt;
} mu_plan;

static vn_status mu_params(const vn_op_ctx *ctx, const char *where, mu_plan *p)
{
    const vn_tensor_desc *x = &ctx->inputs[0], *ix = &ctx->inputs[1];
    int64_t k[VN_MAX_RANK], s[VN_MAX_RANK], pads[2 * VN_MAX_RANK];
    int32_t nk = 0, ns = 0, np = 0, sp = x->rank - 2;
    bool hk = false, hs = false, hp = false;
    vn_status st = vn_so_attr_ints(ctx, where, "kernel_shape", k, VN_MAX_RANK, &nk, &hk);
    if (st == VN_OK) st = vn_so_attr_ints(ctx, where, "strides", s, VN_MAX_RANK, &ns, &hs);
    if (st == VN_OK) st = vn_so_attr_ints(ctx, where, "pads", pads, 2 * VN_MAX_RANK, &np, &hp);
    if (st != VN_OK) return st;
    if (sp < 1 || !hk || nk != sp || (hs && ns != sp) || (hp && np != 2 * sp) ||
        ix->rank != x->rank || vn_desc_numel(ix) != vn_desc_numel(x) ||
        (ix->dtype != VN_I64 && ix->dtype != VN_I32))
        return vn_error(VN_ERR_SHAPE, where,
                        "needs X [N, C, spatial...], I of X's shape (i32/i64) and kernel_shape, "
                        "strides, pads for each spatial dim");
    p->rank = x->rank;
    p->inferred[0] = x->dims[0], p->inferred[1] = x->dims[1];
    for (int32_t d = 0; d < sp; d++)
        p->inferred[d + 2] =
            (x->dims[d + 2] - 1) * (hs ? s[d] : 1) - (hp ? pads[d] + pads[sp + d] : 0) + k[d];
    memcpy(p->out, p->inferred, sizeof p->out);
    if (vn_so_present(ctx, 2)) {
        int32_t n = 0;
        st = vn_so_const_ints(ctx, where, 2, "output_shape", p->out, VN_MAX_RANK, &n);
        if (st == VN_OK && n != x->rank)
            st = vn_error(VN_ERR_SHAPE, where, "output_shape has %d values for rank %d", (int)n,
                          (int)x->rank);
        if (st != VN_OK) return st;
    }
    p->in_numel = vn_desc_numel(x);
    p->inf_numel = p->out_numel = 1;
    for (int32_t d = 0; d < p->rank; d++) {
        if (p->out[d] < 0 || p->inferred[d] < 0)
            return vn_error(VN_ERR_SHAPE, where, "negative output dim");
        p->inf_numel *= p->inferred[d], p->out_numel *= p->out[d];
    }
    p->esize = (int64_t)vn_dtype_size(x->dtype);
    p->idt = ix->dtype;
    return VN_OK;
}

static vn_status mu_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    mu_plan p = {0};
    vn_status st = mu_params(ctx, where, &p);
    if (st == VN_OK) *out = vn_so_desc(ctx->inputs[0].dtype, p.rank, p.out);
    return st;
}

static vn_status mu_plan_fn(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan,
                            size_t *workspace)
{
    (void)outputs;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    mu_plan *p = calloc(1, sizeof *p);
    *workspace = 0;
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_status st = mu_params(ctx, where, p);
    if (st != VN_OK) {
        free(p);
        return st;
    }
    *plan = p;
    return VN_OK;
}

/* Offset in the output of flat position f of the inferred shape; -1 when
 * the output is smaller there. */
static int64_t place(const mu_plan *p, int64_t f)
{
    int64_t off = 0, mul = 1;
    for (int32_t d = p->rank - 1; d >= 0; d--) {
        int64_t i = f % p->inferred[d];
        f /= p->inferred[d];
        if (i >= p->out[d]) return -1;
        off += i * mul;
        mul *= p->out[d];
    }
    return off;
}

static vn_status mu_run(const vn_op_run_ctx *ctx)
{
    const mu_plan *p = ctx->plan;
    char *y = ctx->outputs[0].data;
    const char *x = ctx->inputs[0].data;
    memset(y, 0, (size_t)(p->out_numel * p->esize));
    for (int64_t i = 0; i < p->in_numel; i++) {
        int64_t f = vn_cast_load_i64(p->idt, ctx->inputs[1].data, i);
        if (f < 0 || f >= p->inf_numel)
            return vn_error(VN_ERR_INVALID_ARG, "MaxUnpool",
                            "index %lld at %lld is outside the unpooled tensor (%lld elements)",
                            (long long)f, (long long)i, (long long)p->inf_numel);
        int64_t o = place(p, f);
        if (o >= 0) memcpy(y + o * p->esize, x + i * p->esize, (size_t)p->esize);
    }
    return VN_OK;
}

const vn_op_def vn_max_unpool_def = {"MaxUnpool",   "",       2,          3,    1,
                                     VN_DTYPES_ALL, mu_infer, mu_plan_fn, free, mu_run};
