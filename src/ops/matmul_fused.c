/*
 * matmul_fused.c — vinci::FusedMatMul, the target of the graph engine's
 * MatMul / Gemm fusion passes: one GEMM whose epilogue does what followed
 * the product in the graph.
 *
 *   inputs   A, B (MatMul shapes; transA / transB: stored transposed in the
 *            last two dims), bias (optional, [N]), residual (optional, Y's
 *            shape); all of A's dtype (f32 or bf16)
 *   attrs    activation: "Relu", "Clip" (min, max), "Gelu" (erf),
 *            "GeluTanh", "Sigmoid", "Silu", or absent / "" (none);
 *            alpha (float, 1); residual_before_activation (int, 0)
 *   Y = act(alpha * A B + bias) + residual           (the default), or
 *   Y = act(alpha * A B + bias + residual)           (residual_before_activation)
 *
 * The epilogue adds the residual before the activation, so the default order
 * with an activation is the GEMM then an in-place Add; every other case is
 * one GEMM. bf16 bias / residual are widened to f32 in the workspace (the
 * epilogue reads f32).
 */
#include <math.h>
#include <string.h>

#include "ops/matmul.h"

enum { FA = 0, FB, FBIAS, FRES };

typedef struct fused_attrs {
    bool trans_a, trans_b, res_first;
    vn_act act;
    double alpha, lo, hi;
} fused_attrs;

static const struct {
    const char *name;
    vn_act act;
} acts[] = {{"", VN_ACT_NONE},         {"Relu", VN_ACT_RELU},          {"Clip", VN_ACT_CLIP},
            {"Gelu", VN_ACT_GELU_ERF}, {"GeluTanh", VN_ACT_GELU_TANH}, {"Sigmoid", VN_ACT_SIGMOID},
            {"Silu", VN_ACT_SILU}};

static vn_status get_activation(const char *where, const vn_attrs *attrs, vn_act *act)
{
    const vn_attr *a = vn_attrs_find(attrs, "activation");
    *act = VN_ACT_NONE;
    if (!a) return VN_OK;
    if (a->type != VN_ATTR_STRING || !a->s)
        return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'activation' must be a string");
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (strcmp(a->s, acts[i].name) == 0) {
            *act = acts[i].act;
            return VN_OK;
        }
    return vn_error(VN_ERR_INVALID_ARG, where,
                    "unknown activation '%s' (Relu, Clip, Gelu, GeluTanh, Sigmoid, Silu or none)",
                    a->s);
}

static vn_status get_attrs(const char *where, const vn_attrs *attrs, fused_attrs *f)
{
    int64_t ta, tb, rf;
    vn_status st = get_activation(where, attrs, &f->act);
    if (st != VN_OK) return st;
    if (vn_attrs_int(attrs, "transA", 0, &ta) != VN_OK ||
        vn_attrs_int(attrs, "transB", 0, &tb) != VN_OK ||
        vn_attrs_int(attrs, "residual_before_activation", 0, &rf) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "attributes transA, transB, residual_before_activation must be ints");
    if (vn_attrs_float(attrs, "alpha", 1.0, &f->alpha) != VN_OK ||
        vn_attrs_float(attrs, "min", -INFINITY, &f->lo) != VN_OK ||
        vn_attrs_float(attrs, "max", INFINITY, &f->hi) != VN_OK)
        return vn_error(VN_ERR_INVALID_ARG, where, "attributes alpha, min, max must be floats");
    if (!(f->lo <= f->hi) || !isfinite(f->alpha))
        return vn_error(VN_ERR_INVALID_ARG, where, "need min %g <= max %g and a finite alpha %g",
                        f->lo, f->hi, f->alpha);
    f->trans_a = ta != 0, f->trans_b = tb != 0, f->res_first = rf != 0;
    return VN_OK;
}

/* Bias [N] and residual of Y's shape, both of A's dtype. */
static vn_status check_extras(const char *where, const vn_op_ctx *ctx, const vn_tensor_desc *y,
                              int64_t N)
{
    char s1[128], s2[128];
    const vn_tensor_desc *in = ctx->inputs;
    for (int32_t i = FBIAS; i <= FRES; i++)
        if (vn_mm_has_input(ctx, i) && in[i].dtype != y->dtype)
            return vn_error(VN_ERR_DTYPE, where, "%s %s must have A's dtype %s",
                            i == FBIAS ? "bias" : "residual", vn_desc_format(&in[i], s1, sizeof s1),
                            vn_dtype_name(y->dtype));
    if (vn_mm_has_input(ctx, FBIAS) && (in[FBIAS].rank != 1 || in[FBIAS].dims[0] != N))
        return vn_error(VN_ERR_SHAPE, where, "bias %s must be [%lld] (one per output column)",
                        vn_desc_format(&in[FBIAS], s1, sizeof s1), (long long)N);
    if (vn_mm_has_input(ctx, FRES)) {
        bool same = in[FRES].rank == y->rank;
        for (int32_t d = 0; same && d < y->rank; d++) same = in[FRES].dims[d] == y->dims[d];
        if (!same)
            return vn_error(VN_ERR_SHAPE, where, "residual %s must have the output's shape %s",
                            vn_desc_format(&in[FRES], s1, sizeof s1),
                            vn_desc_format(y, s2, sizeof s2));
    }
    return VN_OK;
}

static vn_status fused_check(const char *where, const vn_op_ctx *ctx, fused_attrs *f,
                             vn_tensor_desc *y, vn_mm_layout *lay)
{
    vn_status st = get_attrs(where, ctx->attrs, f);
    if (st == VN_OK) st = vn_mm_check_float(where, &ctx->inputs[FA], &ctx->inputs[FB]);
    if (st == VN_OK)
        st = vn_mm_layout_nd(where, &ctx->inputs[FA], &ctx->inputs[FB], f->trans_a, f->trans_b, y,
                             lay);
    if (st == VN_OK) st = check_extras(where, ctx, y, lay->N);
    return st;
}

static vn_status fused_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    fused_attrs f;
    vn_mm_layout lay;
    return fused_check(vn_ops_where(ctx, where, sizeof where), ctx, &f, &outputs[0], &lay);
}

/* The epilogue, and the in-place Add when the residual follows an activation. */
static vn_status set_epilogue(const char *where, const vn_op_ctx *ctx, const fused_attrs *f,
                              const vn_tensor_desc *y, vn_mm_plan *p, size_t *workspace)
{
    vn_gemm_epilogue *e = &p->desc.epi;
    e->alpha = (float)f->alpha;
    e->act = f->act;
    e->clip_min = (float)f->lo, e->clip_max = (float)f->hi;
    *workspace = 0;
    if (vn_mm_has_input(ctx, FBIAS)) {
        p->in_bias = FBIAS;
        e->bias_axis = VN_BIAS_COL;
        *workspace += vn_mm_f32_bytes(&ctx->inputs[FBIAS]);
    }
    if (!vn_mm_has_input(ctx, FRES)) return VN_OK;
    p->in_residual = FRES;
    if (f->res_first || f->act == VN_ACT_NONE) {
        e->has_residual = true;
        *workspace += vn_mm_f32_bytes(&ctx->inputs[FRES]);
        return VN_OK;
    }
    vn_tensor_desc add_in[2] = {*y, ctx->inputs[FRES]};
    vn_status st = vn_op_plan_create(ctx->device, "Add", add_in, 2, NULL, &p->post_add);
    if (st == VN_OK) *workspace += vn_ops_round_up((int64_t)vn_op_plan_workspace(p->post_add), 64);
    return st;
}

static vn_status fused_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                            size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_mm_plan *p = vn_mm_plan_new();
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    fused_attrs f;
    vn_tensor_desc y;
    vn_status st = fused_check(where, ctx, &f, &y, &p->lay);
    if (st == VN_OK) {
        p->desc = vn_mm_gemm_desc(&p->lay);
        st = vn_mm_set_float(where, ctx->attrs, &p->desc, y.dtype);
        if (st == VN_OK) st = set_epilogue(where, ctx, &f, &y, p, workspace);
    }
    if (st == VN_OK) st = vn_mm_plan_gemm_b(where, ctx, FB, p);
    if (st != VN_OK) {
        vn_mm_plan_free(p);
        return st;
    }
    *data = p;
    return VN_OK;
}

static vn_status fused_run(const vn_op_run_ctx *ctx)
{
    const vn_mm_plan *p = ctx->plan;
    uint8_t *ws = ctx->workspace;
    vn_mm_io io = {.a = ctx->inputs[FA].data, .b = ctx->inputs[FB].data, .c = ctx->outputs[0].data};
    if (p->in_bias >= 0) {
        size_t bytes = vn_mm_f32_bytes(&ctx->inputs[p->in_bias].desc);
        io.bias = vn_mm_as_f32(&ctx->inputs[p->in_bias], ws);
        if (bytes) ws += bytes; /* (no offset on a NULL workspace) */
    }
    if (p->in_residual >= 0 && !p->post_add)
        io.residual = vn_mm_as_f32(&ctx->inputs[p->in_residual], ws);
    vn_status st = vn_mm_execute(p, p->gemm, &io, ctx->counters);
    if (st != VN_OK || !p->post_add) return st;
    vn_tensor add_in[2] = {ctx->outputs[0], ctx->inputs[p->in_residual]};
    return vn_op_run(p->post_add, add_in, 2, ctx->outputs, 1, ws);
}

const vn_op_def vn_fused_matmul_def = {
    "FusedMatMul", "vinci",         2,        4, 1, VN_DTYPES_FLOAT, fused_infer,
    fused_plan,    vn_mm_plan_free, fused_run};
