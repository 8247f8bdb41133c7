/*
 * gemm_op.c — Gemm (ONNX opset 13): Y = alpha * op(A) * op(B) + beta * C,
 * A and B 2-D (transA / transB: stored transposed), C optional and
 * broadcast one way to [M, N] (scalar, [N], [1, N], [M, 1], [M, N], ...).
 * Everything after the product is the GEMM's epilogue: C is read through
 * strides (0 on a broadcast dim), never expanded. A bf16 C is widened to f32
 * in the workspace, since the epilogue reads C in f32.
 */
#include <math.h>

#include "ops/matmul.h"

typedef struct gemm_attrs {
    bool trans_a, trans_b;
    double alpha, beta;
} gemm_attrs;

static vn_status get_attrs(const char *where, const vn_op_ctx *ctx, gemm_attrs *g)
{
    int64_t ta, tb;
    if (vn_attrs_int(ctx->attrs, "transA", 0, &ta) != VN_OK ||
        vn_attrs_int(ctx->attrs, "transB", 0, &tb) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attributes transA / transB must be ints");
    if (vn_attrs_float(ctx->attrs, "alpha", 1.0, &g->alpha) != VN_OK ||
        vn_attrs_float(ctx->attrs, "beta", 1.0, &g->beta) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attributes alpha / beta must be floats");
    g->trans_a = ta != 0, g->trans_b = tb != 0;
    return VN_OK;
}

/* C's strides in the [M, N] output: 0 along a broadcast dim. */
static vn_status c_strides(const char *where, const vn_tensor_desc *c, int64_t M, int64_t N,
                           int64_t *rs, int64_t *cs)
{
    char buf[128];
    int64_t cm = c->rank == 2 ? c->dims[0] : 1, cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
    if (c->rank > 2 || (cm != 1 && cm != M) || (cn != 1 && cn != N))
        return vn_error(VN_ERR_SHAPE, where, "C %s does not broadcast to the output [%lld,%lld]",
                        vn_desc_format(c, buf, sizeof buf), (long long)M, (long long)N);
    *rs = cm == 1 ? 0 : cn;
    *cs = cn == 1 ? 0 : 1;
    return VN_OK;
}

/* Shapes: A, B 2-D with matching K; C broadcastable. Fills the layout. */
static vn_status check_shapes(const char *where, const vn_op_ctx *ctx, const gemm_attrs *g,
                              vn_mm_layout *lay)
{
    char sa[128], sb[128];
    const vn_tensor_desc *a = &ctx->inputs[0], *b = &ctx->inputs[1];
    vn_status st = vn_mm_check_float(where, a, b);
    if (st != VN_OK) return st;
    if (a->rank != 2 || b->rank != 2)
        return vn_error(VN_ERR_SHAPE, where, "A %s and B %s must both be 2-D",
                        vn_desc_format(a, sa, sizeof sa), vn_desc_format(b, sb, sizeof sb));
    int64_t M = a->dims[g->trans_a ? 1 : 0], Ka = a->dims[g->trans_a ? 0 : 1];
    int64_t Kb = b->dims[g->trans_b ? 1 : 0], N = b->dims[g->trans_b ? 0 : 1];
    if (Ka != Kb)
        return vn_error(VN_ERR_SHAPE, where,
                        "A %s and B %s do not multiply (transA %d, transB %d): K %lld vs %lld",
                        vn_desc_format(a, sa, sizeof sa), vn_desc_format(b, sb, sizeof sb),
                        (int)g->trans_a, (int)g->trans_b, (long long)Ka, (long long)Kb);
    vn_mm_layout_2d(M, N, Ka, g->trans_a, g->trans_b, lay);
    if (!vn_mm_has_input(ctx, 2)) return VN_OK;
    if (ctx->inputs[2].dtype != a->dtype)
        return vn_error(VN_ERR_DTYPE, where, "C %s must have A's dtype %s",
                        vn_desc_format(&ctx->inputs[2], sa, sizeof sa), vn_dtype_name(a->dtype));
    int64_t rs, cs;
    return c_strides(where, &ctx->inputs[2], M, N, &rs, &cs);
}

static vn_status gemm_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    gemm_attrs g;
    vn_mm_layout lay;
    vn_status st = get_attrs(where, ctx, &g);
    if (st == VN_OK) st = check_shapes(where, ctx, &g, &lay);
    if (st != VN_OK) return st;
    outputs[0] = (vn_tensor_desc){ctx->inputs[0].dtype, 2, {lay.M, lay.N}};
    return VN_OK;
}

/* The epilogue: alpha, and beta * C when C is given and beta is not 0. */
static vn_status set_epilogue(const char *where, const vn_op_ctx *ctx, const gemm_attrs *g,
                              vn_mm_plan *p, size_t *workspace)
{
    vn_gemm_epilogue *e = &p->desc.epi;
    if (!isfinite(g->alpha) || !isfinite(g->beta))
        return vn_error(VN_ERR_INVALID_ARG, where, "alpha %g and beta %g must be finite", g->alpha,
                        g->beta);
    e->alpha = (float)g->alpha;
    *workspace = 0;
    if (!vn_mm_has_input(ctx, 2) || g->beta == 0.0) return VN_OK;
    p->in_c = 2;
    e->has_c_in = true;
    e->beta = (float)g->beta;
    *workspace = vn_mm_f32_bytes(&ctx->inputs[2]);
    return c_strides(where, &ctx->inputs[2], p->lay.M, p->lay.N, &e->c_in_rs, &e->c_in_cs);
}

static vn_status gemm_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                           size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_mm_plan *p = vn_mm_plan_new();
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    gemm_attrs g;
    vn_status st = get_attrs(where, ctx, &g);
    if (st == VN_OK) st = check_shapes(where, ctx, &g, &p->lay);
    if (st == VN_OK) {
        p->desc = vn_mm_gemm_desc(&p->lay);
        st = vn_mm_set_float(where, ctx->attrs, &p->desc, ctx->inputs[0].dtype);
        if (st == VN_OK) st = set_epilogue(where, ctx, &g, p, workspace);
    }
    if (st == VN_OK) st = vn_mm_plan_gemm_b(where, ctx, 1, p);
    if (st != VN_OK) {
        vn_mm_plan_free(p);
        return st;
    }
    *data = p;
    return VN_OK;
}

static vn_status gemm_run(const vn_op_run_ctx *ctx)
{
    const vn_mm_plan *p = ctx->plan;
    vn_mm_io io = {.a = ctx->inputs[0].data, .b = ctx->inputs[1].data, .c = ctx->outputs[0].data};
    if (p->in_c >= 0) io.c_in = vn_mm_as_f32(&ctx->inputs[p->in_c], ctx->workspace);
    return vn_mm_execute(p, p->gemm, &io, ctx->counters);
}

const vn_op_def vn_gemm_op_def = {
    "Gemm", "", 2, 3, 1, VN_DTYPES_FLOAT, gemm_infer, gemm_plan, vn_mm_plan_free, gemm_run};
