/*
 * ir_constant.c — the value of a Constant node from its one attribute:
 * value (a tensor), value_float(s) (f32 scalar / vector), value_int(s) (i64
 * scalar / vector). String and sparse constants are not supported.
 */
#include <string.h>

#include "graph_internal.h"

static vn_status from_list(vn_graph *g, const vn_gattr *a, vn_gconst *c)
{
    bool floats = a->type == VN_GATTR_FLOAT || a->type == VN_GATTR_FLOATS;
    bool scalar = a->type == VN_GATTR_FLOAT || a->type == VN_GATTR_INT;
    int64_t n = scalar ? 1 : a->count;
    c->desc.dtype = floats ? VN_F32 : VN_I64;
    c->onnx_dtype = floats ? VN_ONNX_FLOAT : VN_ONNX_INT64;
    c->desc.rank = scalar ? 0 : 1;
    c->desc.dims[0] = n;
    c->nbytes = (size_t)n * vn_dtype_size(c->desc.dtype);
    c->data = n ? vn_gmem_alloc(&g->mem, c->nbytes) : NULL;
    if (n && !c->data) return VN_ERR_OUT_OF_MEMORY;
    if (scalar && floats)
        *(float *)c->data = a->f;
    else if (scalar)
        *(int64_t *)c->data = a->i;
    else if (n)
        memcpy(c->data, floats ? (const void *)a->floats : (const void *)a->ints, c->nbytes);
    return VN_OK;
}

vn_status vn_ir_constant_value(vn_graph *g, vn_gbody *b, int32_t node, vn_gconst **out)
{
    const vn_gnode *n = &b->nodes[node];
    char label[256];
    vn_ir_node_label(b, node, label, sizeof label);
    if (n->num_attrs != 1 || n->num_outputs != 1)
        return vn_error(VN_ERR_FORMAT, g->file,
                        "%s: needs one attribute and one output, has %d "
                        "and %d",
                        label, (int)n->num_attrs, (int)n->num_outputs);
    const vn_gattr *a = &n->attrs[0];
    static const struct {
        const char *name;
        int32_t type;
    } forms[] = {{"value", VN_GATTR_TENSOR},
                 {"value_float", VN_GATTR_FLOAT},
                 {"value_floats", VN_GATTR_FLOATS},
                 {"value_int", VN_GATTR_INT},
                 {"value_ints", VN_GATTR_INTS}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        if (strcmp(a->name, forms[i].name) != 0) continue;
        if (a->type != forms[i].type)
            return vn_error(VN_ERR_FORMAT, g->file, "%s: attribute '%s' has type %d", label,
                            a->name, (int)a->type);
        if (a->type == VN_GATTR_TENSOR) {
            *out = &a->tensors[0];
            return VN_OK;
        }
        vn_gconst *c = vn_gmem_alloc(&g->mem, sizeof *c);
        if (!c) return VN_ERR_OUT_OF_MEMORY;
        c->name = n->output_names[0];
        *out = c;
        return from_list(g, a, c);
    }
    return vn_error(VN_ERR_UNSUPPORTED, g->file, "%s: constant attribute '%s' is not supported",
                    label, a->name);
}
