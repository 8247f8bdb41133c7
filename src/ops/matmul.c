/*
 * matmul.c — MatMul (ONNX opset 13): numpy matmul semantics (1-D operands,
 * broadcast batch dims) on the GEMM, f32 or bf16 (f32 accumulation; the
 * output keeps the inputs' dtype). f16 is refused: the GEMM has no f16
 * operands, and a silent conversion would hide a copy of both inputs.
 *
 * Attribute compute (vinci's, on MatMul, Gemm and FusedMatMul): "bf16" makes
 * an f32 product multiply in bf16 with f32 accumulation (the graph engine's
 * --precision bf16, graph/pass_precision.c); "f32" (the default for f32).
 */
#include "ops/matmul.h"

vn_status vn_mm_check_float(const char *where, const vn_tensor_desc *a, const vn_tensor_desc *b)
{
    char sa[128], sb[128];
    if (a->dtype != b->dtype)
        return vn_error(VN_ERR_DTYPE, where, "A %s and B %s must have the same dtype",
                        vn_desc_format(a, sa, sizeof sa), vn_desc_format(b, sb, sizeof sb));
    if (a->dtype != VN_F32 && a->dtype != VN_BF16)
        return vn_error(VN_ERR_DTYPE, where,
                        "A %s and B %s: dtype %s is not supported (the GEMM takes f32 or bf16)",
                        vn_desc_format(a, sa, sizeof sa), vn_desc_format(b, sb, sizeof sb),
                        vn_dtype_name(a->dtype));
    return VN_OK;
}

vn_status vn_mm_set_float(const char *where, const vn_attrs *attrs, vn_gemm_desc *d, vn_dtype dt)
{
    d->a_dtype = d->b_dtype = d->c_dtype = dt;
    d->compute = dt == VN_BF16 ? VN_BF16 : VN_F32;
    bool bf16 = false, given = vn_attrs_find(attrs, "compute") != NULL;
    vn_status st = vn_ops_compute_bf16(where, attrs, &bf16);
    if (st == VN_OK && given && !bf16 && dt == VN_BF16)
        return vn_error(VN_ERR_INVALID_ARG, where, "compute f32 on bf16 operands: cast them first");
    if (bf16) d->compute = VN_BF16;
    return st;
}

static vn_status matmul_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_mm_layout lay;
    vn_status st = vn_mm_check_float(where, &ctx->inputs[0], &ctx->inputs[1]);
    if (st != VN_OK) return st;
    return vn_mm_layout_nd(where, &ctx->inputs[0], &ctx->inputs[1], false, false, &outputs[0],
                           &lay);
}

static vn_status matmul_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                             size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_mm_plan *p = vn_mm_plan_new();
    if (!p) return vn_error(VN_ERR_OUT_OF_MEMORY, where, "no memory for the plan");
    vn_tensor_desc y;
    vn_status st =
        vn_mm_layout_nd(where, &ctx->inputs[0], &ctx->inputs[1], false, false, &y, &p->lay);
    if (st == VN_OK) {
        p->desc = vn_mm_gemm_desc(&p->lay);
        st = vn_mm_set_float(where, ctx->attrs, &p->desc, ctx->inputs[0].dtype);
    }
    if (st == VN_OK) st = vn_mm_plan_gemm_b(where, ctx, 1, p);
    if (st != VN_OK) {
        vn_mm_plan_free(p);
        return st;
    }
    *data = p;
    *workspace = 0;
    return VN_OK;
}

static vn_status matmul_run(const vn_op_run_ctx *ctx)
{
    const vn_mm_plan *p = ctx->plan;
    vn_mm_io io = {.a = ctx->inputs[0].data, .b = ctx->inputs[1].data, .c = ctx->outputs[0].data};
    return vn_mm_execute(p, p->gemm, &io, ctx->counters);
}

const vn_op_def vn_matmul_def = {
    "MatMul", "", 2, 2, 1, VN_DTYPES_FLOAT, matmul_infer, matmul_plan, vn_mm_plan_free, matmul_run};
