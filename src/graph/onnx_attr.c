/*
 * onnx_attr.c — AttributeProto, every type: float, int, string, tensor,
 * graph (subgraphs of If / Loop / Scan are parsed into bodies whose parent is
 * the node's body), and their repeated forms. Sparse tensors and type protos
 * are recorded by type only; an operator that needs them reports it.
 */
#include <string.h>

#include "graph/onnx.h"

typedef struct attr_lists {
    vn_pb_list ints, floats;
    int32_t cap_strings, cap_tensors, cap_graphs;
    int32_t num_strings, num_tensors, num_graphs;
    bool has_f, has_i, has_s, has_t, has_g;
} attr_lists;

static vn_status sub_tensor(vn_pb *pb, const vn_pb_field *f, vn_gbody *b, vn_gattr *a,
                            attr_lists *l, const char *field)
{
    vn_graph *g = b->graph;
    vn_pb_msg sub;
    vn_status st = vn_pb_sub(pb, f, field, &sub);
    if (st != VN_OK) return st;
    vn_gconst *c = vn_onnx_push(pb, g, f->offset, "tensors", (void **)&a->tensors, &l->num_tensors,
                                &l->cap_tensors, sizeof *c, VN_IR_MAX_ATTRS);
    if (!c) return VN_ERR_FORMAT;
    if ((st = vn_pb_push(pb, f->offset, field, f->number == 5 ? -1 : l->num_tensors - 1)))
        return st;
    st = vn_onnx_tensor_const(pb, sub, g, c);
    vn_pb_pop(pb);
    return st;
}

static vn_status sub_graph(vn_pb *pb, const vn_pb_field *f, vn_gbody *b, vn_gattr *a, attr_lists *l,
                           const char *field)
{
    vn_pb_msg sub;
    vn_status st = vn_pb_sub(pb, f, field, &sub);
    if (st != VN_OK) return st;
    vn_gbody **slot = vn_onnx_push(pb, b->graph, f->offset, "graphs", (void **)&a->graphs,
                                   &l->num_graphs, &l->cap_graphs, sizeof *slot, VN_IR_MAX_ATTRS);
    if (!slot) return VN_ERR_FORMAT;
    if ((st = vn_pb_push(pb, f->offset, field, f->number == 6 ? -1 : l->num_graphs - 1))) return st;
    st = vn_onnx_graph(pb, sub, b->graph, b, slot);
    vn_pb_pop(pb);
    return st;
}

static vn_status attr_field(vn_pb *pb, const vn_pb_field *f, vn_gbody *b, vn_gattr *a,
                            attr_lists *l)
{
    vn_gmem *m = &b->graph->mem;
    const char **s;
    switch (f->number) {
    case 1:
        return vn_pb_string(pb, f, "name", m, &a->name);
    case 20:
        return vn_pb_int32(pb, f, "type", &a->type);
    case 2:
        l->has_f = true;
        return vn_pb_float(pb, f, "f", &a->f);
    case 3:
        l->has_i = true;
        return vn_pb_int(pb, f, "i", &a->i);
    case 4:
        l->has_s = true;
        return vn_pb_string(pb, f, "s", m, &a->s);
    case 5:
        l->has_t = true;
        return sub_tensor(pb, f, b, a, l, "t");
    case 6:
        l->has_g = true;
        return sub_graph(pb, f, b, a, l, "g");
    case 7:
        return vn_pb_repeated(pb, f, VN_PB_S_FIXED32, "floats", m, &l->floats);
    case 8:
        return vn_pb_repeated(pb, f, VN_PB_S_VARINT, "ints", m, &l->ints);
    case 9:
        s = vn_onnx_push(pb, b->graph, f->offset, "strings", (void **)&a->strings, &l->num_strings,
                         &l->cap_strings, sizeof *s, VN_PB_MAX_ELEMS);
        return s ? vn_pb_string(pb, f, "strings", m, s) : VN_ERR_FORMAT;
    case 10:
        return sub_tensor(pb, f, b, a, l, "tensors");
    case 11:
        return sub_graph(pb, f, b, a, l, "graphs");
    default:
        return VN_OK; /* doc_string, ref_attr_name, sparse, type protos */
    }
}

/* IR version 1 had no `type`: infer it from the field that is set. */
static int32_t guess_type(const attr_lists *l)
{
    if (l->has_f) return VN_GATTR_FLOAT;
    if (l->has_i) return VN_GATTR_INT;
    if (l->has_s) return VN_GATTR_STRING;
    if (l->has_t) return VN_GATTR_TENSOR;
    if (l->has_g) return VN_GATTR_GRAPH;
    if (l->floats.count) return VN_GATTR_FLOATS;
    if (l->ints.count) return VN_GATTR_INTS;
    if (l->num_strings) return VN_GATTR_STRINGS;
    if (l->num_tensors) return VN_GATTR_TENSORS;
    if (l->num_graphs) return VN_GATTR_GRAPHS;
    return 0;
}

static vn_status finish(vn_pb *pb, vn_gattr *a, attr_lists *l, vn_gmem *m, size_t offset)
{
    if (!a->type) a->type = guess_type(l);
    if (a->type < VN_GATTR_FLOAT || a->type > VN_GATTR_TYPE_PROTOS)
        return vn_pb_fail(pb, offset, "attribute '%s' has unknown type %d", a->name, (int)a->type);
    switch (a->type) {
    case VN_GATTR_INTS:
        a->count = l->ints.count;
        a->ints = (int64_t *)l->ints.items; /* raw varints are the int64 values */
        break;
    case VN_GATTR_FLOATS:
        a->count = l->floats.count;
        a->floats = vn_gmem_alloc(m, (size_t)a->count * sizeof(float) + 1);
        if (!a->floats) return VN_ERR_OUT_OF_MEMORY;
        for (int32_t i = 0; i < a->count; i++) {
            uint32_t bits = (uint32_t)l->floats.items[i];
            memcpy(&a->floats[i], &bits, sizeof bits);
        }
        break;
    case VN_GATTR_STRINGS:
        a->count = l->num_strings;
        break;
    case VN_GATTR_TENSOR:
    case VN_GATTR_TENSORS:
        a->count = l->num_tensors;
        break;
    case VN_GATTR_GRAPH:
    case VN_GATTR_GRAPHS:
        a->count = l->num_graphs;
        break;
    default:
        break;
    }
    if ((a->type == VN_GATTR_TENSOR || a->type == VN_GATTR_GRAPH) && a->count != 1)
        return vn_pb_fail(pb, offset, "attribute '%s' has %d values, expected one", a->name,
                          (int)a->count);
    if (a->type == VN_GATTR_STRING && !a->s) a->s = "";
    return VN_OK;
}

vn_status vn_onnx_attr(vn_pb *pb, vn_pb_msg msg, vn_gbody *b, vn_gattr *out)
{
    memset(out, 0, sizeof *out);
    out->name = "";
    attr_lists l;
    memset(&l, 0, sizeof l);
    size_t offset = msg.pos;
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has)
        if ((st = attr_field(pb, &f, b, out, &l)) != VN_OK) return st;
    if (st != VN_OK) return st;
    if (!out->name[0]) return vn_pb_fail(pb, offset, "attribute has no name");
    return finish(pb, out, &l, &b->graph->mem, offset);
}
