/*
 * onnx_tensor.c — TensorProto: dims, element type, and where the data is
 * (raw_data, one of the typed fields, or an external file). The data itself is
 * converted by onnx_data.c once every field has been seen, because protobuf
 * allows fields in any order.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/onnx.h"

/* StringStringEntryProto of external_data: location, offset, length. */
static vn_status external_entry(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_onnx_tensor *t)
{
    const char *key = "", *value = "";
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has) {
        if (f.number == 1)
            st = vn_pb_string(pb, &f, "key", &g->mem, &key);
        else if (f.number == 2)
            st = vn_pb_string(pb, &f, "value", &g->mem, &value);
        if (st != VN_OK) return st;
    }
    if (st != VN_OK) return st;
    if (strcmp(key, "location") == 0) {
        t->location = value;
        return VN_OK;
    }
    int64_t *dst = strcmp(key, "offset") == 0   ? &t->ext_offset
                   : strcmp(key, "length") == 0 ? &t->ext_length
                                                : NULL;
    if (!dst) return VN_OK; /* "checksum" and others: not needed to read */
    char *end;
    long long v = strtoll(value, &end, 10);
    if (!value[0] || *end || v < 0)
        return vn_pb_fail(pb, msg.end, "external_data %s '%s' is not a non-negative integer", key,
                          value);
    *dst = v;
    return VN_OK;
}

static vn_status tensor_field(vn_pb *pb, const vn_pb_field *f, vn_graph *g, vn_onnx_tensor *t)
{
    vn_gmem *m = &g->mem;
    vn_pb_msg sub;
    vn_status st = VN_OK;
    switch (f->number) {
    case 1:
        return vn_pb_repeated(pb, f, VN_PB_S_VARINT, "dims", m, &t->dims);
    case 2:
        return vn_pb_int32(pb, f, "data_type", &t->data_type);
    case 3:
        t->has_segment = true;
        return VN_OK;
    case 4:
        return vn_pb_repeated(pb, f, VN_PB_S_FIXED32, "float_data", m, &t->float_data);
    case 5:
        return vn_pb_repeated(pb, f, VN_PB_S_VARINT, "int32_data", m, &t->int32_data);
    case 6:
        t->num_strings++;
        return VN_OK;
    case 7:
        return vn_pb_repeated(pb, f, VN_PB_S_VARINT, "int64_data", m, &t->int64_data);
    case 8:
        return vn_pb_string(pb, f, "name", m, &t->name);
    case 9:
        if ((st = vn_pb_sub(pb, f, "raw_data", &sub)) != VN_OK) return st;
        t->has_raw = true;
        t->raw_pos = sub.pos;
        t->raw_len = sub.end - sub.pos;
        return VN_OK;
    case 10:
        return vn_pb_repeated(pb, f, VN_PB_S_FIXED64, "double_data", m, &t->double_data);
    case 11:
        return vn_pb_repeated(pb, f, VN_PB_S_VARINT, "uint64_data", m, &t->uint64_data);
    case 13:
        if ((st = vn_pb_sub(pb, f, "external_data", &sub)) != VN_OK) return st;
        if ((st = vn_pb_push(pb, f->offset, "external_data", -1)) != VN_OK) return st;
        st = external_entry(pb, sub, g, t);
        vn_pb_pop(pb);
        return st;
    case 14: {
        int32_t loc;
        if ((st = vn_pb_int32(pb, f, "data_location", &loc)) != VN_OK) return st;
        t->external = loc == 1;
        return VN_OK;
    }
    default:
        return VN_OK; /* doc_string, metadata_props */
    }
}

vn_status vn_onnx_tensor_fields(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_onnx_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->offset = msg.pos;
    t->name = "";
    t->ext_offset = t->ext_length = -1;
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has)
        if ((st = tensor_field(pb, &f, g, t)) != VN_OK) return st;
    return st;
}

vn_status vn_onnx_tensor_const(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_gconst *out)
{
    vn_onnx_tensor t;
    vn_status st = vn_onnx_tensor_fields(pb, msg, g, &t);
    if (st != VN_OK) return st;
    return vn_onnx_tensor_data(pb, &t, g, out);
}
