/*
 * onnx_graph.c — GraphProto: nodes, initializers, inputs, outputs and value
 * infos, collected by name; vn_ir_link (ir_link.c) connects them once the
 * whole model is read, because a subgraph may name values of its parents.
 */
#include <string.h>

#include "graph/onnx.h"

void *vn_onnx_push(vn_pb *pb, vn_graph *g, size_t offset, const char *what, void **array,
                   int32_t *count, int32_t *cap, size_t elem, int32_t limit)
{
    if (*count >= limit) {
        vn_pb_fail(pb, offset, "more than %d %s", (int)limit, what);
        return NULL;
    }
    if (vn_gmem_grow(&g->mem, array, cap, *count + 1, elem)) return NULL;
    char *p = (char *)*array + (size_t)(*count)++ * elem;
    memset(p, 0, elem);
    return p;
}

typedef struct graph_caps {
    int32_t infos_in, infos_out;
} graph_caps;

static vn_status add_node(vn_pb *pb, const vn_pb_field *f, vn_gbody *b)
{
    vn_pb_msg sub;
    vn_status st = vn_pb_sub(pb, f, "node", &sub);
    if (st != VN_OK) return st;
    vn_gnode *n = vn_onnx_push(pb, b->graph, f->offset, "nodes", (void **)&b->nodes, &b->num_nodes,
                               &b->cap_nodes, sizeof *n, VN_IR_MAX_NODES);
    if (!n) return VN_ERR_FORMAT;
    if ((st = vn_pb_push(pb, f->offset, "node", b->num_nodes - 1)) != VN_OK) return st;
    st = vn_onnx_node(pb, sub, b, n);
    vn_pb_pop(pb);
    return st;
}

static vn_status add_init(vn_pb *pb, const vn_pb_field *f, vn_gbody *b)
{
    vn_pb_msg sub;
    vn_status st = vn_pb_sub(pb, f, "initializer", &sub);
    if (st != VN_OK) return st;
    vn_gconst *c = vn_onnx_push(pb, b->graph, f->offset, "initializers", (void **)&b->inits,
                                &b->num_inits, &b->cap_inits, sizeof *c, VN_IR_MAX_VALUES);
    if (!c) return VN_ERR_FORMAT;
    if ((st = vn_pb_push(pb, f->offset, "initializer", b->num_inits - 1)) != VN_OK) return st;
    st = vn_onnx_tensor_const(pb, sub, b->graph, c);
    if (st == VN_OK && !c->name[0]) st = vn_pb_fail(pb, f->offset, "initializer has no name");
    vn_pb_pop(pb);
    return st;
}

/* input (11), output (12) or value_info (13). */
static vn_status add_info(vn_pb *pb, const vn_pb_field *f, vn_gbody *b, graph_caps *caps)
{
    static const char *const names[] = {"input", "output", "value_info"};
    const char *what = names[f->number - 11];
    vn_pb_msg sub;
    vn_status st = vn_pb_sub(pb, f, what, &sub);
    if (st != VN_OK) return st;
    vn_value_info *info;
    int32_t index;
    if (f->number == 11) {
        info = vn_onnx_push(pb, b->graph, f->offset, what, (void **)&b->input_infos,
                            &b->num_input_names, &caps->infos_in, sizeof *info, VN_IR_MAX_IO);
        index = b->num_input_names - 1;
    } else if (f->number == 12) {
        info = vn_onnx_push(pb, b->graph, f->offset, what, (void **)&b->output_infos,
                            &b->num_output_names, &caps->infos_out, sizeof *info, VN_IR_MAX_IO);
        index = b->num_output_names - 1;
    } else {
        info =
            vn_onnx_push(pb, b->graph, f->offset, what, (void **)&b->value_infos,
                         &b->num_value_infos, &b->cap_value_infos, sizeof *info, VN_IR_MAX_VALUES);
        index = b->num_value_infos - 1;
    }
    if (!info) return VN_ERR_FORMAT;
    if ((st = vn_pb_push(pb, f->offset, what, index)) != VN_OK) return st;
    st = vn_onnx_value_info(pb, sub, b->graph, info);
    vn_pb_pop(pb);
    return st;
}

static vn_status graph_field(vn_pb *pb, const vn_pb_field *f, vn_gbody *b, graph_caps *caps)
{
    switch (f->number) {
    case 1:
        return add_node(pb, f, b);
    case 2:
        return vn_pb_string(pb, f, "name", &b->graph->mem, &b->name);
    case 5:
        return add_init(pb, f, b);
    case 11:
    case 12:
    case 13:
        return add_info(pb, f, b, caps);
    case 15:
        return vn_error(VN_ERR_UNSUPPORTED, pb->file, "byte %zu: graph '%s': sparse initializers",
                        f->offset, b->name);
    default:
        return VN_OK; /* doc_string, quantization_annotation, metadata_props */
    }
}

/* Names of inputs / outputs, taken from their infos once all are read. */
static vn_status collect_names(vn_gbody *b)
{
    vn_gmem *m = &b->graph->mem;
    b->input_names = vn_gmem_alloc(m, (size_t)b->num_input_names * sizeof(char *) + 1);
    b->output_names = vn_gmem_alloc(m, (size_t)b->num_output_names * sizeof(char *) + 1);
    if (!b->input_names || !b->output_names) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < b->num_input_names; i++) b->input_names[i] = b->input_infos[i].name;
    for (int32_t i = 0; i < b->num_output_names; i++) b->output_names[i] = b->output_infos[i].name;
    return VN_OK;
}

vn_status vn_onnx_graph(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_gbody *parent, vn_gbody **out)
{
    vn_gbody *b = vn_gmem_alloc(&g->mem, sizeof *b);
    if (!b) return VN_ERR_OUT_OF_MEMORY;
    b->name = "";
    b->parent = parent;
    b->graph = g;
    g->num_bodies++;
    *out = b;
    graph_caps caps = {0, 0};
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has)
        if ((st = graph_field(pb, &f, b, &caps)) != VN_OK) return st;
    return st == VN_OK ? collect_names(b) : st;
}
