/*
 * onnx_node.c — NodeProto: inputs and outputs by name ("" = an omitted
 * optional input or output), op type, domain, name and attributes.
 */
#include <string.h>

#include "graph/onnx.h"

typedef struct node_caps {
    int32_t inputs, outputs, attrs;
} node_caps;

static vn_status add_name(vn_pb *pb, const vn_pb_field *f, vn_gbody *b, const char *what,
                          const char ***names, int32_t *count, int32_t *cap)
{
    const char **slot = vn_onnx_push(pb, b->graph, f->offset, what, (void **)names, count, cap,
                                     sizeof *slot, VN_IR_MAX_IO);
    return slot ? vn_pb_string(pb, f, what, &b->graph->mem, slot) : VN_ERR_FORMAT;
}

static vn_status add_attr(vn_pb *pb, const vn_pb_field *f, vn_gbody *b, vn_gnode *n,
                          node_caps *caps)
{
    vn_pb_msg sub;
    vn_status st = vn_pb_sub(pb, f, "attribute", &sub);
    if (st != VN_OK) return st;
    vn_gattr *a = vn_onnx_push(pb, b->graph, f->offset, "attribute", (void **)&n->attrs,
                               &n->num_attrs, &caps->attrs, sizeof *a, VN_IR_MAX_ATTRS);
    if (!a) return VN_ERR_FORMAT;
    if ((st = vn_pb_push(pb, f->offset, "attribute", n->num_attrs - 1)) != VN_OK) return st;
    st = vn_onnx_attr(pb, sub, b, a);
    vn_pb_pop(pb);
    return st;
}

static vn_status node_field(vn_pb *pb, const vn_pb_field *f, vn_gbody *b, vn_gnode *n,
                            node_caps *caps)
{
    vn_gmem *m = &b->graph->mem;
    switch (f->number) {
    case 1:
        return add_name(pb, f, b, "input", &n->input_names, &n->num_inputs, &caps->inputs);
    case 2:
        return add_name(pb, f, b, "output", &n->output_names, &n->num_outputs, &caps->outputs);
    case 3:
        return vn_pb_string(pb, f, "name", m, &n->name);
    case 4:
        return vn_pb_string(pb, f, "op_type", m, &n->op_type);
    case 7:
        return vn_pb_string(pb, f, "domain", m, &n->domain);
    case 5:
        return add_attr(pb, f, b, n, caps);
    default:
        return VN_OK; /* doc_string, overload, metadata_props */
    }
}

static vn_status check_attr_names(vn_pb *pb, const vn_gnode *n, size_t offset)
{
    for (int32_t i = 0; i < n->num_attrs; i++)
        for (int32_t j = 0; j < i; j++)
            if (strcmp(n->attrs[i].name, n->attrs[j].name) == 0)
                return vn_pb_fail(pb, offset, "node '%s' (%s): attribute '%s' is given twice",
                                  n->name, n->op_type, n->attrs[i].name);
    return VN_OK;
}

vn_status vn_onnx_node(vn_pb *pb, vn_pb_msg msg, vn_gbody *b, vn_gnode *n)
{
    memset(n, 0, sizeof *n);
    n->name = n->op_type = n->domain = "";
    node_caps caps = {0, 0, 0};
    size_t offset = msg.pos;
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has)
        if ((st = node_field(pb, &f, b, n, &caps)) != VN_OK) return st;
    if (st != VN_OK) return st;
    if (!n->op_type[0]) return vn_pb_fail(pb, offset, "node '%s' has no op_type", n->name);
    if (!strcmp(n->domain, "ai.onnx")) n->domain = ""; /* one spelling of the default domain */
    if ((st = check_attr_names(pb, n, offset)) != VN_OK) return st;
    vn_gmem *m = &b->graph->mem;
    n->inputs = vn_gmem_alloc(m, (size_t)n->num_inputs * sizeof(int32_t) + 1);
    n->outputs = vn_gmem_alloc(m, (size_t)n->num_outputs * sizeof(int32_t) + 1);
    if (!n->inputs || !n->outputs) return VN_ERR_OUT_OF_MEMORY;
    return VN_OK;
}
