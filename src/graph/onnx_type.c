/*
 * onnx_type.c — ValueInfoProto: a name and a TypeProto. vinci reads tensor
 * types (element type and shape, symbolic dims kept by name); sequence, map,
 * optional and sparse types are kept as "no shape" and rejected later by the
 * operators that would need them.
 */
#include <string.h>

#include "graph/onnx.h"

typedef struct shape_ctx {
    vn_value_info *info;
    int32_t ndims;
} shape_ctx;

/* TensorShapeProto.Dimension: dim_value (1) or dim_param (2). */
static vn_status dimension(vn_pb *pb, vn_pb_msg msg, vn_graph *g, shape_ctx *s)
{
    int32_t d = s->ndims++;
    if (d >= VN_IR_MAX_DIMS) return vn_pb_fail(pb, msg.pos, "more than %d dims", VN_IR_MAX_DIMS);
    bool keep = d < VN_MAX_RANK;
    if (keep) s->info->desc.dims[d] = -1;
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has) {
        if (f.number == 1) {
            int64_t v;
            if ((st = vn_pb_int(pb, &f, "dim_value", &v)) != VN_OK) return st;
            if (v < 0) return vn_pb_fail(pb, f.offset, "dim_value %lld is negative", (long long)v);
            if (keep) s->info->desc.dims[d] = v;
        } else if (f.number == 2) {
            const char *p;
            if ((st = vn_pb_string(pb, &f, "dim_param", &g->mem, &p)) != VN_OK) return st;
            if (keep && p[0]) s->info->sym[d] = p;
        }
    }
    return st;
}

static vn_status shape(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_value_info *info)
{
    shape_ctx s = {info, 0};
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has) {
        if (f.number != 1) continue;
        vn_pb_msg sub;
        if ((st = vn_pb_sub(pb, &f, "dim", &sub)) != VN_OK) return st;
        if ((st = vn_pb_push(pb, f.offset, "dim", s.ndims)) != VN_OK) return st;
        st = dimension(pb, sub, g, &s);
        vn_pb_pop(pb);
        if (st != VN_OK) return st;
    }
    /* A rank above vinci's limit is kept as "unknown" here; the operators or
     * the input binding report it where it matters. */
    info->desc.rank = s.ndims <= VN_MAX_RANK ? s.ndims : -1;
    return st;
}

/* TypeProto.Tensor: elem_type (1), shape (2). */
static vn_status tensor_type(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_value_info *info)
{
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has) {
        if (f.number == 1) {
            if ((st = vn_pb_int32(pb, &f, "elem_type", &info->onnx_dtype)) != VN_OK) return st;
            vn_dtype dt = VN_F32;
            if (vn_onnx_dtype(info->onnx_dtype, &dt, NULL)) info->desc.dtype = dt;
        } else if (f.number == 2) {
            vn_pb_msg sub;
            if ((st = vn_pb_sub(pb, &f, "shape", &sub)) != VN_OK) return st;
            if ((st = vn_pb_push(pb, f.offset, "shape", -1)) != VN_OK) return st;
            st = shape(pb, sub, g, info);
            vn_pb_pop(pb);
            if (st != VN_OK) return st;
        }
    }
    return st;
}

static vn_status type_proto(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_value_info *info)
{
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has) {
        if (f.number != 1) continue; /* sequence 4, map 5, optional 9, sparse 8: no shape */
        vn_pb_msg sub;
        if ((st = vn_pb_sub(pb, &f, "tensor_type", &sub)) != VN_OK) return st;
        if ((st = vn_pb_push(pb, f.offset, "tensor_type", -1)) != VN_OK) return st;
        st = tensor_type(pb, sub, g, info);
        vn_pb_pop(pb);
        if (st != VN_OK) return st;
    }
    return st;
}

vn_status vn_onnx_value_info(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_value_info *out)
{
    memset(out, 0, sizeof *out);
    out->name = "";
    out->desc.rank = -1;
    vn_pb_field f;
    bool has;
    vn_status st;
    while ((st = vn_pb_next(pb, &msg, &f, &has)) == VN_OK && has) {
        if (f.number == 1) {
            st = vn_pb_string(pb, &f, "name", &g->mem, &out->name);
        } else if (f.number == 2) {
            vn_pb_msg sub;
            if ((st = vn_pb_sub(pb, &f, "type", &sub)) != VN_OK) return st;
            if ((st = vn_pb_push(pb, f.offset, "type", -1)) != VN_OK) return st;
            st = type_proto(pb, sub, g, out);
            vn_pb_pop(pb);
        }
        if (st != VN_OK) return st;
    }
    return st;
}
