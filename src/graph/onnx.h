/*
 * onnx.h — the decoders of the ONNX messages vinci reads (onnx.proto3:
 * ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto,
 * ValueInfoProto / TypeProto / TensorShapeProto, OperatorSetIdProto,
 * StringStringEntryProto). Each decoder reads one message region; fields it
 * does not know (doc strings, metadata, training info) are skipped.
 */
#ifndef VINCI_GRAPH_ONNX_H
#define VINCI_GRAPH_ONNX_H

#include "graph/ir.h"
#include "graph/pb.h"

/* A TensorProto as found in the file, before its data is converted. */
typedef struct vn_onnx_tensor {
    size_t offset; /* of the message, for errors */
    const char *name;
    int32_t data_type;
    vn_pb_list dims;
    bool has_raw;
    size_t raw_pos, raw_len;
    vn_pb_list float_data, int32_data, int64_data, double_data, uint64_data;
    int32_t num_strings;
    bool external, has_segment;
    const char *location;
    int64_t ext_offset, ext_length; /* -1 = not given */
} vn_onnx_tensor;

vn_status vn_onnx_graph(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_gbody *parent, vn_gbody **out);
vn_status vn_onnx_node(vn_pb *pb, vn_pb_msg msg, vn_gbody *b, vn_gnode *out);
vn_status vn_onnx_attr(vn_pb *pb, vn_pb_msg msg, vn_gbody *b, vn_gattr *out);
vn_status vn_onnx_value_info(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_value_info *out);
vn_status vn_onnx_tensor_fields(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_onnx_tensor *out);
/* A TensorProto message to a constant in vinci's dtype. */
vn_status vn_onnx_tensor_const(vn_pb *pb, vn_pb_msg msg, vn_graph *g, vn_gconst *out);

/* Convert the parsed tensor's data (raw, typed or external) into out. */
vn_status vn_onnx_tensor_data(vn_pb *pb, const vn_onnx_tensor *t, vn_graph *g, vn_gconst *out);
/* Read `bytes` bytes of external data for `t` into dst (path confined to g->dir). */
vn_status vn_onnx_external_read(vn_pb *pb, const vn_onnx_tensor *t, vn_graph *g, size_t bytes,
                                void **data);

/* ONNX TensorProto.DataType: vinci's dtype for it, the bytes of one stored
 * element; VN_ERR_UNSUPPORTED (false) for strings, complex, float8, int4. */
bool vn_onnx_dtype(int32_t onnx_dtype, vn_dtype *dtype, size_t *elem_bytes);
const char *vn_onnx_dtype_name(int32_t onnx_dtype);

/* A growing array in the graph arena: *count + 1 elements; returns the new
 * element (zeroed) or NULL, with a FORMAT error past `limit`. */
void *vn_onnx_push(vn_pb *pb, vn_graph *g, size_t offset, const char *what, void **array,
                   int32_t *count, int32_t *cap, size_t elem, int32_t limit);

#endif /* VINCI_GRAPH_ONNX_H */
