/*
 * fused_op.c — the "vinci::FusedElementwise" operator: a vn_fused_program
 * given as attributes (so graphs can store it), and vn_fused_plan_create,
 * which encodes a program and plans the operator.
 */
#include <string.h>

#include "ops/fused.h"

static vn_status fused_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_fused_program g;
    vn_status st = vn_fused_infer_shape(ctx, &outputs[0]);
    if (st == VN_OK) st = vn_fused_from_attrs(where, ctx->attrs, ctx->num_inputs, &g);
    if (st == VN_OK) st = vn_fused_validate(where, &g, ctx->num_inputs, outputs[0].dtype);
    return st;
}

static vn_status fused_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                            size_t *workspace)
{
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_fused_program g;
    vn_status st = vn_fused_from_attrs(where, ctx->attrs, ctx->num_inputs, &g);
    if (st != VN_OK) return st;
    *workspace = 0;
    return vn_fused_plan_build(where, ctx->device, &g, ctx->inputs, ctx->num_inputs, &outputs[0],
                               (vn_fused_plan **)data);
}

static const vn_op_def fused_def = {
    "FusedElementwise",  "vinci",    1,
    VN_FUSED_MAX_INPUTS, 1,          VN_DTYPES_FLOAT | VN_DTYPE_BIT(VN_I32),
    fused_infer,         fused_plan, vn_fused_plan_free,
    vn_fused_run};

const vn_op_def *const *vn_ops_fused_table(int32_t *count)
{
    static const vn_op_def *const ptrs[] = {&fused_def};
    *count = 1;
    return ptrs;
}

vn_status vn_fused_plan_create(vn_device *device, const vn_fused_program *program,
                               const vn_tensor_desc *inputs, int32_t num_inputs, vn_op_plan **out)
{
    const char *where = "vn_fused_plan_create";
    if (!out) return vn_error(VN_ERR_INVALID_ARG, where, "out is NULL");
    *out = NULL;
    if (!program) return vn_error(VN_ERR_INVALID_ARG, where, "program is NULL");
    if (program->num_inputs != num_inputs)
        return vn_error(VN_ERR_INVALID_ARG, where, "program has %d inputs, %d tensors given",
                        (int)program->num_inputs, (int)num_inputs);
    if (program->num_instrs < 1 || program->num_instrs > VN_FUSED_MAX_INSTRS)
        return vn_error(VN_ERR_INVALID_ARG, where, "%d instructions (1..%d supported)",
                        (int)program->num_instrs, VN_FUSED_MAX_INSTRS);
    vn_fused_attr_store store;
    vn_fused_to_attrs(program, &store);
    return vn_op_plan_create(device, "vinci::FusedElementwise", inputs, num_inputs, &store.attrs,
                             out);
}
