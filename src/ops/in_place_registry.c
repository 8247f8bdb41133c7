/*
 * in_place_registry.c — which inputs an operator's output may take over
 * (vinci/ops.h, "outputs in place"): a fixed table for the built-in
 * operators, a side table (op_side_table.h) for the ones declared at run
 * time, which win.
 */
#include "ops/op_side_table.h"
#include "ops/ops_internal.h"

typedef struct in_place_entry {
    const char *name, *domain;
    uint64_t inputs;
} in_place_entry;

/* The element-wise operators read every input at the element they write;
 * a fused convolution reads its residual Z (input 3) only in its store step
 * (the direct and depthwise kernels, Winograd's output transform, the GEMM's
 * fixpipe; where Z is reordered, the whole copy is made before the kernel
 * runs). */
static const in_place_entry builtin[] = {
    {"Add", "", VN_IN_PLACE_ALL},        {"Sub", "", VN_IN_PLACE_ALL},
    {"Mul", "", VN_IN_PLACE_ALL},        {"Div", "", VN_IN_PLACE_ALL},
    {"Max", "", VN_IN_PLACE_ALL},        {"Min", "", VN_IN_PLACE_ALL},
    {"Sum", "", VN_IN_PLACE_ALL},        {"Mean", "", VN_IN_PLACE_ALL},
    {"Relu", "", VN_IN_PLACE_ALL},       {"Abs", "", VN_IN_PLACE_ALL},
    {"Neg", "", VN_IN_PLACE_ALL},        {"Exp", "", VN_IN_PLACE_ALL},
    {"Log", "", VN_IN_PLACE_ALL},        {"Sqrt", "", VN_IN_PLACE_ALL},
    {"Sigmoid", "", VN_IN_PLACE_ALL},    {"Tanh", "", VN_IN_PLACE_ALL},
    {"Gelu", "", VN_IN_PLACE_ALL},       {"Erf", "", VN_IN_PLACE_ALL},
    {"Reciprocal", "", VN_IN_PLACE_ALL}, {"LeakyRelu", "", VN_IN_PLACE_ALL},
    {"Elu", "", VN_IN_PLACE_ALL},        {"Selu", "", VN_IN_PLACE_ALL},
    {"Softplus", "", VN_IN_PLACE_ALL},   {"HardSigmoid", "", VN_IN_PLACE_ALL},
    {"HardSwish", "", VN_IN_PLACE_ALL},  {"Floor", "", VN_IN_PLACE_ALL},
    {"Ceil", "", VN_IN_PLACE_ALL},       {"Round", "", VN_IN_PLACE_ALL},
    {"Sign", "", VN_IN_PLACE_ALL},       {"Clip", "", VN_IN_PLACE_ALL},
    {"Pow", "", VN_IN_PLACE_ALL},        {"FusedElementwise", "vinci", VN_IN_PLACE_ALL},
    {"FusedConv", "vinci", 1u << 3},     {"FusedConvNC1HWC0", "vinci", 1u << 3},
};

static vn_op_side_table declared = VN_OP_SIDE_TABLE_INIT;

vn_status vn_op_set_in_place(const vn_op_def *def, uint64_t inputs)
{
    if (!def) return vn_error(VN_ERR_INVALID_ARG, "vn_op_set_in_place", "def is NULL");
    return vn_op_side_set(&declared, def, inputs, "vn_op_set_in_place", "in-place inputs");
}

uint64_t vn_op_in_place(const vn_op_def *def)
{
    uint64_t inputs = 0;
    if (!def || vn_op_side_get(&declared, def, &inputs)) return inputs;
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (vn_op_def_is(def, builtin[i].name, builtin[i].domain)) return builtin[i].inputs;
    return 0;
}
