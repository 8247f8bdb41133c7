/*
 * ir_attrs.c — the registry's view of a node's attributes. vn_attr (ops.h)
 * has int, float, ints, floats and string; tensor and graph attributes stay
 * in the node for the graph engine (Constant, If, Loop) and are not passed.
 */
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
    default:
        return false;
    }
}

vn_status vn_ir_registry_attrs(vn_graph *g, vn_gnode *n)
{
    n->reg_attrs = vn_gmem_alloc(&g->mem, (size_t)n->num_attrs * sizeof(vn_attr) + 1);
    if (!n->reg_attrs) return VN_ERR_OUT_OF_MEMORY;
    n->num_reg_attrs = 0;
    for (int32_t i = 0; i < n->num_attrs; i++) {
        const vn_gattr *a = &n->attrs[i];
        vn_attr_type t;
        if (!registry_type(a->type, &t)) continue;
        n->reg_attrs[n->num_reg_attrs++] = (vn_attr){
            .name = a->name,
            .type = t,
            .i = a->i,
            .f = a->f,
            .ints = a->ints,
            .floats = a->floats,
            .count = a->count,
            .s = a->s,
        };
    }
    return VN_OK;
}
