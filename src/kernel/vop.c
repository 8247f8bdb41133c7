/*
 * vop.c — facts about each vn_vop: its kind, its name, the dtypes it exists for.
 */
#include "vinci/kernel.h"

_Static_assert(VN_VOP_COUNT == 23, "new vn_vop: add it to the tables in vop.c");

static const char *const vn_vop_names[VN_VOP_COUNT] = {
    [VN_VOP_ABS] = "Abs",
    [VN_VOP_EXP] = "Exp",
    [VN_VOP_LN] = "Ln",
    [VN_VOP_SQRT] = "Sqrt",
    [VN_VOP_RSQRT] = "Rsqrt",
    [VN_VOP_RECIPROCAL] = "Reciprocal",
    [VN_VOP_RELU] = "Relu",
    [VN_VOP_NEG] = "Neg",
    [VN_VOP_SIGMOID] = "Sigmoid",
    [VN_VOP_TANH] = "Tanh",
    [VN_VOP_GELU] = "Gelu",
    [VN_VOP_SILU] = "Silu",
    [VN_VOP_ADD] = "Add",
    [VN_VOP_SUB] = "Sub",
    [VN_VOP_MUL] = "Mul",
    [VN_VOP_DIV] = "Div",
    [VN_VOP_MAX] = "Max",
    [VN_VOP_MIN] = "Min",
    [VN_VOP_ADDS] = "Adds",
    [VN_VOP_MULS] = "Muls",
    [VN_VOP_MAXS] = "Maxs",
    [VN_VOP_MINS] = "Mins",
    [VN_VOP_LEAKY_RELU] = "LeakyRelu",
};

/* Ops defined on i32: the ones exact in integer arithmetic (wrapping). */
static const bool vn_vop_i32[VN_VOP_COUNT] = {
    [VN_VOP_ABS] = true,  [VN_VOP_RELU] = true, [VN_VOP_NEG] = true,  [VN_VOP_ADD] = true,
    [VN_VOP_SUB] = true,  [VN_VOP_MUL] = true,  [VN_VOP_MAX] = true,  [VN_VOP_MIN] = true,
    [VN_VOP_ADDS] = true, [VN_VOP_MULS] = true, [VN_VOP_MAXS] = true, [VN_VOP_MINS] = true,
};

static bool vn_vop_valid(vn_vop op)
{
    return (unsigned)op < VN_VOP_COUNT;
}

vn_vop_kind vn_vop_kind_of(vn_vop op)
{
    if (op >= VN_VOP_FIRST_SCALAR) return VN_VOP_SCALAR;
    if (op >= VN_VOP_FIRST_BINARY) return VN_VOP_BINARY;
    return VN_VOP_UNARY;
}

const char *vn_vop_name(vn_vop op)
{
    return vn_vop_valid(op) ? vn_vop_names[op] : "invalid";
}

bool vn_vop_supports(vn_vop op, vn_dtype dtype)
{
    if (!vn_vop_valid(op)) return false;
    switch (dtype) {
    case VN_F32:
    case VN_F16:
    case VN_BF16:
        return true;
    case VN_I32:
        return vn_vop_i32[op];
    default:
        return false;
    }
}
