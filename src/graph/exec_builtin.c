/*
 * exec_builtin.c — operators the graph engine provides itself while the
 * registry lacks them: Identity, Dropout (inference), Shape and Size. At O1
 * the passes remove or fold almost every use; these definitions make the
 * same models work at O0 (and a graph output passed straight through).
 * A registry entry of the same name and domain always wins (graph_prepare.c).
 */
#include <string.h>

#include "graph/compile.h"
#include "graph/graph_internal.h"

#define W_ALL ((1u << VN_DTYPE_COUNT) - 1u)

static vn_status copy_run(const vn_op_run_ctx *ctx)
{
    size_t bytes = vn_cg_desc_bytes(&ctx->inputs[0].desc);
    if (bytes && ctx->outputs[0].data != ctx->inputs[0].data)
        memmove(ctx->outputs[0].data, ctx->inputs[0].data, bytes);
    return VN_OK;
}

static vn_status identity_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    out[0] = ctx->inputs[0];
    return VN_OK;
}

/* Inference only: training_mode must be absent or a constant false. */
static vn_status dropout_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    if (ctx->num_inputs >= 3 && ctx->inputs[2].rank >= 0) {
        const uint8_t *t = ctx->input_data ? ctx->input_data[2] : NULL;
        if (!t || ctx->inputs[2].dtype != VN_BOOL || vn_desc_numel(&ctx->inputs[2]) != 1 || *t)
            return vn_error(VN_ERR_UNSUPPORTED, ctx->node_name,
                            "Dropout: training_mode must be absent or a constant false "
                            "(vinci runs inference)");
    }
    out[0] = ctx->inputs[0];
    out[1] = ctx->inputs[0];
    out[1].dtype = VN_BOOL;
    return VN_OK;
}

static vn_status dropout_run(const vn_op_run_ctx *ctx)
{
    copy_run(ctx);
    size_t mask = vn_cg_desc_bytes(&ctx->outputs[1].desc);
    if (ctx->num_outputs > 1 && ctx->outputs[1].data && mask)
        memset(ctx->outputs[1].data, 1, mask); /* nothing is dropped */
    return VN_OK;
}

static int64_t clamp_axis(int64_t a, int64_t rank)
{
    if (a < 0) a += rank;
    return a < 0 ? 0 : a > rank ? rank : a;
}

static vn_status shape_range(const vn_op_ctx *ctx, int64_t rank, int64_t *start, int64_t *end)
{
    vn_status st = vn_attrs_int(ctx->attrs, "start", 0, start);
    if (st == VN_OK) st = vn_attrs_int(ctx->attrs, "end", rank, end);
    *start = clamp_axis(*start, rank);
    *end = clamp_axis(*end, rank);
    if (*end < *start) *end = *start;
    return st;
}

/* Plan data: the [start, end) range, packed in the pointer (no allocation). */
static vn_status shape_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    int64_t s, e;
    vn_status st = shape_range(ctx, ctx->inputs[0].rank, &s, &e);
    out[0] = (vn_tensor_desc){VN_I64, 1, {e - s}};
    return st;
}

static vn_status shape_plan(const vn_op_ctx *ctx, const vn_tensor_desc *out, void **plan,
                            size_t *ws)
{
    int64_t s, e;
    vn_status st = shape_range(ctx, ctx->inputs[0].rank, &s, &e);
    *plan = (void *)(uintptr_t)(s + 1); /* never NULL, so "no plan" is distinguishable */
    *ws = 0;
    return st;
}

static vn_status shape_run(const vn_op_run_ctx *ctx)
{
    int64_t s = (int64_t)(uintptr_t)ctx->plan - 1;
    int64_t *o = ctx->outputs[0].data;
    for (int64_t i = 0; i < ctx->outputs[0].desc.dims[0]; i++)
        o[i] = ctx->inputs[0].desc.dims[s + i];
    return VN_OK;
}

static vn_status size_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    out[0] = (vn_tensor_desc){VN_I64, 0, {0}};
    return VN_OK;
}

static vn_status size_run(const vn_op_run_ctx *ctx)
{
    *(int64_t *)ctx->outputs[0].data = vn_desc_numel(&ctx->inputs[0].desc);
    return VN_OK;
}

/* If / Loop / Scan: a compiled node runs its subgraphs' models (cf.h); these
 * entries only mark the operators supported. Front-end inference and .vnm
 * loading, which have no subgraph models, get this error. */
static vn_status control_flow_infer(const vn_op_ctx *ctx, vn_tensor_desc *out)
{
    (void)out;
    return vn_error(VN_ERR_UNSUPPORTED, ctx->node_name,
                    "%s: control flow is inferred and run only by compiled models "
                    "(vn_model_compile), which compile its subgraphs",
                    ctx->def->name);
}

static vn_status control_flow_run(const vn_op_run_ctx *ctx)
{
    return vn_error(VN_ERR_UNSUPPORTED, "vn_model_run", "%s: no compiled subgraphs",
                    ctx->def->name);
}

static const vn_op_def defs[] = {
    {"Identity", "", 1, 1, 1, W_ALL, identity_infer, NULL, NULL, copy_run},
    {"Dropout", "", 1, 3, 2, W_ALL, dropout_infer, NULL, NULL, dropout_run},
    {"Shape", "", 1, 1, 1, W_ALL, shape_infer, shape_plan, NULL, shape_run},
    {"Size", "", 1, 1, 1, W_ALL, size_infer, NULL, NULL, size_run},
    {"If", "", 1, 1, 64, W_ALL, control_flow_infer, NULL, NULL, control_flow_run},
    {"Loop", "", 2, 64, 64, W_ALL, control_flow_infer, NULL, NULL, control_flow_run},
    {"Scan", "", 1, 64, 64, W_ALL, control_flow_infer, NULL, NULL, control_flow_run},
};

const vn_op_def *vn_graph_engine_op(const char *op_type, const char *domain)
{
    if (!op_type || (domain && domain[0] && strcmp(domain, "ai.onnx"))) return NULL;
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (!strcmp(defs[i].name, op_type)) return &defs[i];
    return NULL;
}
