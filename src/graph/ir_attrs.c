/*
 * ir_attrs.c — the registry's view of a node's attributes. vn_attr (ops.h)
 * has int, float, ints, floats, string, strings and one tensor
 * (ConstantOfShape's value); tensor lists and graph attributes stay in the node for the graph
 * engine (Constant, If, Loop) and are not passed.
 *
 * Internal attributes (names starting with '_', which ONNX names never do)
 * carry what an operator cannot see otherwise, for the few operators whose
 * semantics depend on it: "_opset" (the node's opset: Softmax before 13
 * flattens to 2-D; DFT's default axis moved at 20) and "_num_outputs" (Split without 'split'
 * divides into as many parts as the node has outputs; LayerNormalization computes Mean and
 * InvStdDev only when the node names them).
 */
#include <string.h>

#include "graph/ir.h"

static bool registry_type(int32_t t, vn_attr_type *out)
{
    switch (t) {
    case VN_GATTR_INT:
        *out = VN_ATTR_INT;
        return true;
    case VN_GATTR_FLOAT:
        *out = VN_ATTR_FLOAT;
        return true;
    case VN_GATTR_INTS:
        *out = VN_ATTR_INTS;
        return true;
    case VN_GATTR_FLOATS:
        *out = VN_ATTR_FLOATS;
        return true;
    case VN_GATTR_STRING:
        *out = VN_ATTR_STRING;
        return true;
    case VN_GATTR_TENSOR:
        *out = VN_ATTR_TENSOR;
        return true;
    case VN_GATTR_STRINGS: /* RNN/GRU/LSTM activations */
        *out = VN_ATTR_STRINGS;
        return true;
    default:
        return false;
    }
}

static bool wants(const vn_gnode *n, const char *const *ops)
{
    if (n->domain && n->domain[0]) return false;
    for (; *ops; ops++)
        if (!strcmp(n->op_type, *ops)) return true;
    return false;
}

static const char *const opset_ops[] = {"Softmax", "LogSoftmax", "Hardmax", "DFT", NULL};
static const char *const count_ops[] = {"Split", "LayerNormalization", NULL};

/* A tensor attribute as the registry's vn_tensor (allocated with the graph). */
static const vn_tensor *attr_tensor(vn_graph *g, const vn_gattr *a)
{
    vn_tensor *t = a->tensors ? vn_gmem_alloc(&g->mem, sizeof *t) : NULL;
    if (t) *t = (vn_tensor){a->tensors->desc, a->tensors->data};
    return t;
}

vn_status vn_ir_registry_attrs(vn_graph *g, vn_gnode *n)
{
    n->reg_attrs = vn_gmem_alloc(&g->mem, (size_t)(n->num_attrs + 2) * sizeof(vn_attr));
    if (!n->reg_attrs) return VN_ERR_OUT_OF_MEMORY;
    n->num_reg_attrs = 0;
    for (int32_t i = 0; i < n->num_attrs; i++) {
        const vn_gattr *a = &n->attrs[i];
        vn_attr_type t;
        if (!registry_type(a->type, &t)) continue;
        const vn_tensor *tensor = t == VN_ATTR_TENSOR ? attr_tensor(g, a) : NULL;
        if (t == VN_ATTR_TENSOR && !tensor) continue;
        n->reg_attrs[n->num_reg_attrs++] = (vn_attr){
            .name = a->name,
            .type = t,
            .i = a->i,
            .f = a->f,
            .ints = a->ints,
            .floats = a->floats,
            .count = a->count,
            .s = a->s,
            .strings = (const char *const *)a->strings,
            .t = tensor,
        };
    }
    if (wants(n, opset_ops))
        n->reg_attrs[n->num_reg_attrs++] =
            (vn_attr){.name = "_opset", .type = VN_ATTR_INT, .i = n->opset};
    if (wants(n, count_ops))
        n->reg_attrs[n->num_reg_attrs++] =
            (vn_attr){.name = "_num_outputs", .type = VN_ATTR_INT, .i = n->num_outputs};
    return VN_OK;
}
