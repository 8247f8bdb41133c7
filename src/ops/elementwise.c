/*
 * elementwise.c — the ONNX element-wise operators. Each one is a short
 * vn_fused_program built from its attributes and run by the fused kernel;
 * the table below is the whole list (no per-operator kernel code).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "ops/fused.h"
#include "ops/math.h"

typedef vn_status (*ew_build_fn)(const vn_op_ctx *ctx, const char *where, vn_vop op,
                                 vn_fused_program *prog);

/* The registry hands back &entry.def; the entry is recovered from it. */
typedef struct ew_def {
    vn_op_def def;
    vn_vop op;
    ew_build_fn build;
    uint32_t fused_dtypes; /* what the fused kernel computes; the rest is routed */
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

static vn_status ew_fused_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data)
{
    const ew_def *e = (const ew_def *)ctx->def;
    char where[VN_OPS_WHERE_MAX];
    vn_ops_where(ctx, where, sizeof where);
    vn_fused_program g;
    memset(&g, 0, sizeof g);
    g.num_inputs = ctx->num_inputs;
    vn_status st = e->build(ctx, where, e->op, &g);
    if (st != VN_OK) return st;
    return vn_fused_plan_build(where, ctx->device, &g, ctx->inputs, ctx->num_inputs, &outputs[0],
                               (vn_fused_plan **)data);
}

/* ---- routing: dtypes the fused kernel lacks go to the integer engine ------------
 *
 * The fused kernel computes f32 / f16 / bf16 and i32; shape arithmetic in
 * exported models is i64 (and quantised graphs use i8 / u8). For those
 * dtypes the operator runs on the math engine's integer variant
 * (vn_math_integer_variant); the plan remembers which implementation it chose. */

typedef struct ew_plan_data {
    const vn_op_def *impl; /* NULL: the fused kernel */
    void *data;
} ew_plan_data;

static const vn_op_def *integer_impl(const vn_op_ctx *ctx)
{
    const ew_def *e = (const ew_def *)ctx->def;
    vn_dtype dt = ctx->num_inputs > 0 ? ctx->inputs[0].dtype : VN_F32;
    if (e->fused_dtypes & VN_DTYPE_BIT(dt)) return NULL;
    return vn_math_integer_variant(e->def.name);
}

static vn_status ew_infer(const vn_op_ctx *ctx, vn_tensor_desc *outputs)
{
    const vn_op_def *impl = integer_impl(ctx);
    if (!impl) return vn_fused_infer_shape(ctx, outputs);
    vn_op_ctx routed = *ctx;
    routed.def = impl;
    return impl->infer(&routed, outputs);
}

static vn_status ew_plan(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **data,
                         size_t *workspace)
{
    ew_plan_data *pd = calloc(1, sizeof *pd);
    if (!pd) return vn_error(VN_ERR_OUT_OF_MEMORY, ctx->def->name, "cannot allocate a plan");
    *workspace = 0;
    pd->impl = integer_impl(ctx);
    vn_status st;
    if (!pd->impl) {
        st = ew_fused_plan(ctx, outputs, &pd->data);
    } else {
        vn_op_ctx routed = *ctx;
        routed.def = pd->impl;
        st = pd->impl->plan ? pd->impl->plan(&routed, outputs, &pd->data, workspace) : VN_OK;
    }
    if (st != VN_OK) {
        free(pd);
        return st;
    }
    *data = pd;
    return VN_OK;
}

static void ew_plan_free(void *data)
{
    ew_plan_data *pd = data;
    if (!pd) return;
    if (!pd->impl)
        vn_fused_plan_free(pd->data);
    else if (pd->impl->plan_free)
        pd->impl->plan_free(pd->data);
    free(pd);
}

static vn_status ew_run(const vn_op_run_ctx *ctx)
{
    const ew_plan_data *pd = ctx->plan;
    vn_op_run_ctx routed = *ctx;
    routed.plan = pd->data;
    if (!pd->impl) return vn_fused_run(&routed);
    routed.def = pd->impl;
    return pd->impl->run(&routed);
}

#define INTS   (VN_DTYPES_FLOAT | VN_DTYPE_BIT(VN_I32))
#define FLOATS VN_DTYPES_FLOAT
/* Dtypes the math engine adds for the operators it has variants of. */
#define WIDE (VN_DTYPES_INT | VN_DTYPES_U64 | VN_DTYPES_F64)
#define EW(name, lo, hi, dtypes, op, build, fused)                                                 \
    {                                                                                              \
        {name, "", lo, hi, 1, dtypes, ew_infer, ew_plan, ew_plan_free, ew_run}, op, build, fused   \
    }
#define UNARY(name, dtypes, op)    EW(name, 1, 1, dtypes, op, build_unary, dtypes)
#define BINARY(name, dtypes, op)   EW(name, 2, 2, dtypes, op, build_fold, dtypes)
#define VARIADIC(name, dtypes, op) EW(name, 1, VN_FUSED_MAX_INPUTS, dtypes, op, build_fold, dtypes)
/* Fused for float and i32; the scalar engine for other integers, u64, f64 (and i32 Div). */
#define INT_ROUTED(kind, name, fused, op) kind##_R(name, fused, op)
#define UNARY_R(name, fused, op)          EW(name, 1, 1, (fused) | WIDE, op, build_unary, fused)
#define BINARY_R(name, fused, op)         EW(name, 2, 2, (fused) | WIDE, op, build_fold, fused)
#define VARIADIC_R(name, fused, op)                                                                \
    EW(name, 1, VN_FUSED_MAX_INPUTS, (fused) | WIDE, op, build_fold, fused)
/* Fused for float; the engine's f64 variant for f64. */
#define UNARY_D(name, op) EW(name, 1, 1, FLOATS | VN_DTYPES_F64, op, build_unary, FLOATS)

static const ew_def defs[] = {
    INT_ROUTED(BINARY, "Add", INTS, VN_VOP_ADD),
    INT_ROUTED(BINARY, "Sub", INTS, VN_VOP_SUB),
    INT_ROUTED(BINARY, "Mul", INTS, VN_VOP_MUL),
    INT_ROUTED(BINARY, "Div", FLOATS, VN_VOP_DIV),
    INT_ROUTED(VARIADIC, "Max", INTS, VN_VOP_MAX),
    INT_ROUTED(VARIADIC, "Min", INTS, VN_VOP_MIN),
    INT_ROUTED(VARIADIC, "Sum", INTS, VN_VOP_ADD),
    INT_ROUTED(UNARY, "Relu", INTS, VN_VOP_RELU),
    EW("LeakyRelu", 1, 1, FLOATS, VN_VOP_LEAKY_RELU, build_leaky, FLOATS),
    INT_ROUTED(UNARY, "Abs", INTS, VN_VOP_ABS),
    INT_ROUTED(UNARY, "Neg", INTS, VN_VOP_NEG),
    UNARY_D("Exp", VN_VOP_EXP),
    UNARY_D("Log", VN_VOP_LN),
    UNARY_D("Sqrt", VN_VOP_SQRT),
    UNARY_D("Reciprocal", VN_VOP_RECIPROCAL),
    UNARY_D("Sigmoid", VN_VOP_SIGMOID),
    UNARY_D("Tanh", VN_VOP_TANH),
    EW("Gelu", 1, 1, FLOATS, VN_VOP_GELU, build_gelu, FLOATS),
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
