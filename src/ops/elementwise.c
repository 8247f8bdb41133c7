/*
 * elementwise.c — the ONNX element-wise operators. Each one is a short
 * vn_fused_program built from its attributes and run by the fused kernel;
 * the table below is the whole list (no per-operator kernel code).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/fused.h"

typedef vn_status (*ew_build_fn)(const vn_op_ctx *ctx, const char *where, vn_vop op,
                                 vn_fused_program *prog);

/* The registry hands back &entry.def; the entry is recovered from it. */
typedef struct ew_def {
    vn_op_def def;
    vn_vop op;
    ew_build_fn build;
} ew_def;

static void emit(vn_fused_program *g, vn_vop op, int32_t a, int32_t b, double s)
{
    g->instrs[g->num_instrs++] = (vn_fused_instr){op, (int16_t)a, (int16_t)b, s};
}

/* r(last) of the program built so far. */
static int32_t last(const vn_fused_program *g)
{
    return g->num_inputs + g->num_instrs - 1;
}

static vn_status build_unary(const vn_op_ctx *ctx, const char *where, vn_vop op,
                             vn_fused_program *g)
{
    emit(g, op, 0, -1, 0.0);
    return VN_OK;
}

/* Binary and variadic (Max, Min, Sum): a left fold; one input is a copy
 * (x * 1 keeps -0, NaN and every integer). */
static vn_status build_fold(const vn_op_ctx *ctx, const char *where, vn_vop op, vn_fused_program *g)
{
    if (g->num_inputs == 1)
        emit(g, VN_VOP_MULS, 0, -1, 1.0);
    else
        emit(g, op, 0, 1, 0.0);
    for (int32_t i = 2; i < g->num_inputs; i++) emit(g, op, last(g), i, 0.0);
    return VN_OK;
}

static vn_status build_leaky(const vn_op_ctx *ctx, const char *where, vn_vop op,
                             vn_fused_program *g)
{
    double alpha;
    vn_status st = vn_attrs_float(ctx->attrs, "alpha", 0.01, &alpha);
    if (st != VN_OK) {
        char msg[256]; /* vn_error rewrites the buffer vn_last_error() points to */
        snprintf(msg, sizeof msg, "%s", vn_last_error());
        return vn_error(st, where, "%s", msg);
    }
    emit(g, op, 0, -1, alpha);
    return VN_OK;
}

/* approximate="tanh": 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
static void emit_gelu_tanh(vn_fused_program *g)
{
    emit(g, VN_VOP_MUL, 0, 0, 0.0);
    emit(g, VN_VOP_MULS, last(g), -1, 0.044715);
    emit(g, VN_VOP_ADDS, last(g), -1, 1.0);
    emit(g, VN_VOP_MUL, last(g), 0, 0.0);
    emit(g, VN_VOP_MULS, last(g), -1, sqrt(2.0 / M_PI));
    emit(g, VN_VOP_TANH, last(g), -1, 0.0);
    emit(g, VN_VOP_ADDS, last(g), -1, 1.0);
    emit(g, VN_VOP_MUL, last(g), 0, 0.0);
    emit(g, VN_VOP_MULS, last(g), -1, 0.5);
}

static vn_status build_gelu(const vn_op_ctx *ctx, const char *where, vn_vop op, vn_fused_program *g)
{
    const vn_attr *a = vn_attrs_find(ctx->attrs, "approximate");
    const char *mode = "none";
    if (a) {
        if (a->type != VN_ATTR_STRING || !a->s)
            return vn_error(VN_ERR_INVALID_ARG, where, "attribute 'approximate' must be a string");
        mode = a->s;
    }
    if (strcmp(mode, "none") == 0)
        emit(g, op, 0, -1, 0.0);
    else if (strcmp(mode, "tanh") == 0)
        emit_gelu_tanh(g);
    else
        return vn_error(VN_ERR_INVALID_ARG, where,
                        "attribute 'approximate' is \"%s\" (\"none\" or \"tanh\")", mode);
    return VN_OK;
}

static vn_status ew_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                         size_t *workspace)
{
    const ew_def *e = (const ew_def *)ctx->def;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_fused_program g;
    memset(&g, 0, sizeof g);
    g.num_inputs = ctx->num_inputs;
    vn_status st = e->build(ctx, where, e->op, &g);
    if (st != VN_OK) return st;
    *workspace = 0;
    return vn_fused_plan_build(where, ctx->device, &g, ctx->inputs, ctx->num_inputs, &outputs[0],
                               (vn_fused_plan **)data);
}

#define INTS   (VN_DTYPES_FLOAT | VN_DTYPE_BIT(VN_I32))
#define FLOATS VN_DTYPES_FLOAT
#define EW(name, lo, hi, dtypes, op, build)                                                        \
    {                                                                                              \
        {name,        "", lo, hi, 1, dtypes, vn_fused_infer_shape, ew_plan, vn_fused_plan_free,    \
         vn_fused_run},                                                                            \
            op, build                                                                              \
    }
#define UNARY(name, dtypes, op)    EW(name, 1, 1, dtypes, op, build_unary)
#define BINARY(name, dtypes, op)   EW(name, 2, 2, dtypes, op, build_fold)
#define VARIADIC(name, dtypes, op) EW(name, 1, VN_FUSED_MAX_INPUTS, dtypes, op, build_fold)

static const ew_def defs[] = {
    BINARY("Add", INTS, VN_VOP_ADD),
    BINARY("Sub", INTS, VN_VOP_SUB),
    BINARY("Mul", INTS, VN_VOP_MUL),
    BINARY("Div", FLOATS, VN_VOP_DIV),
    VARIADIC("Max", INTS, VN_VOP_MAX),
    VARIADIC("Min", INTS, VN_VOP_MIN),
    VARIADIC("Sum", INTS, VN_VOP_ADD),
    UNARY("Relu", INTS, VN_VOP_RELU),
    EW("LeakyRelu", 1, 1, FLOATS, VN_VOP_LEAKY_RELU, build_leaky),
    UNARY("Abs", INTS, VN_VOP_ABS),
    UNARY("Neg", INTS, VN_VOP_NEG),
    UNARY("Exp", FLOATS, VN_VOP_EXP),
    UNARY("Log", FLOATS, VN_VOP_LN),
    UNARY("Sqrt", FLOATS, VN_VOP_SQRT),
    UNARY("Reciprocal", FLOATS, VN_VOP_RECIPROCAL),
    UNARY("Sigmoid", FLOATS, VN_VOP_SIGMOID),
    UNARY("Tanh", FLOATS, VN_VOP_TANH),
    EW("Gelu", 1, 1, FLOATS, VN_VOP_GELU, build_gelu),
};

#define NUM_DEFS ((int32_t)(sizeof defs / sizeof defs[0]))

const vn_op_def *const *vn_ops_elementwise_table(int32_t *count)
{
    static const vn_op_def *ptrs[NUM_DEFS];
    /* Filled under the registry's pthread_once; the same values every time. */
    for (int32_t i = 0; i < NUM_DEFS; i++) ptrs[i] = &defs[i].def;
    *count = NUM_DEFS;
    return ptrs;
}
