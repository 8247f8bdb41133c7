/*
 * vinci/graph.h — the graph engine's front end: ONNX models in, a checked and
 * shape-inferred graph out; .npy tensors in and out.
 *
 *     vn_graph *g;
 *     if (vn_graph_load_onnx("model.onnx", &g) != VN_OK) puts(vn_last_error());
 *     vn_input_shape in = {"x", 4, {1, 3, 224, 224}};
 *     vn_graph_infer(g, &in, 1);   // symbolic dims bound, every node inferred
 *     ...
 *     vn_graph_destroy(g);
 *
 * The reader treats the file as untrusted: a malformed file gets VN_ERR_FORMAT
 * with the byte offset and the field path ("m.onnx: byte 1234:
 * graph.node[5].attribute[2]: length 99999 runs past the end (file has 2000
 * bytes)"); it never reads out of bounds. A model that uses operators the
 * registry (vinci/ops.h) lacks gets one VN_ERR_UNSUPPORTED listing every one.
 *
 * A vn_graph is not thread-safe while it is being inferred; once inferred it
 * may be read from several threads.
 */
#ifndef VINCI_GRAPH_H
#define VINCI_GRAPH_H

#include "vinci/base.h"
#include "vinci/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vn_graph vn_graph;

/* ---- loading ---------------------------------------------------------------- */

/* Read an ONNX model file. External tensor data is read from files in the
 * model's folder (absolute paths and ".." are rejected). */
vn_status vn_graph_load_onnx(const char *path, vn_graph **out);
/* The same from bytes in memory. `name` is used in messages; `dir` is the
 * folder external data is looked up in (NULL: external data is an error).
 * The bytes are not referenced after the call. */
vn_status vn_graph_load_onnx_bytes(const void *data, size_t size, const char *name, const char *dir,
                                   vn_graph **out);
void vn_graph_destroy(vn_graph *graph);

/* ---- what the model declares ------------------------------------------------- */

/* A value's shape as the model declares it: dims[i] = -1 where the dim is
 * unknown, with sym[i] its symbolic name ("batch") or NULL. rank -1 = the
 * model gives no shape. After vn_graph_infer, descs are fully known. */
typedef struct vn_value_info {
    const char *name;
    vn_tensor_desc desc;
    const char *sym[VN_MAX_RANK];
    int32_t onnx_dtype; /* the TensorProto.DataType in the file (f64 models become f32) */
} vn_value_info;

int32_t vn_graph_num_inputs(const vn_graph *graph); /* initializers are not inputs */
int32_t vn_graph_num_outputs(const vn_graph *graph);
vn_status vn_graph_input(const vn_graph *graph, int32_t index, vn_value_info *out);
vn_status vn_graph_output(const vn_graph *graph, int32_t index, vn_value_info *out);

int32_t vn_graph_num_nodes(const vn_graph *graph); /* of the main graph */
int32_t vn_graph_num_initializers(const vn_graph *graph);

typedef struct vn_opset {
    const char *domain; /* "" = ai.onnx */
    int64_t version;
} vn_opset;
int32_t vn_graph_num_opsets(const vn_graph *graph);
vn_status vn_graph_opset(const vn_graph *graph, int32_t index, vn_opset *out);
/* The opset version the model imports for `domain` ("" or "ai.onnx"); 0 if none. */
int64_t vn_graph_opset_version(const vn_graph *graph, const char *domain);

/* Operator histogram of the main graph and its subgraphs: entry `index`
 * (sorted by count, then name); VN_ERR_INVALID_ARG past the end. */
typedef struct vn_op_count {
    const char *op_type;
    const char *domain;
    int32_t count;
    bool supported; /* registered in vinci/ops.h */
} vn_op_count;
int32_t vn_graph_num_op_types(const vn_graph *graph);
vn_status vn_graph_op_type(const vn_graph *graph, int32_t index, vn_op_count *out);

/* ---- checks and inference ---------------------------------------------------- */

/* Every operator the registry lacks, one line each: "op (domain 'd', opset
 * N): nodes 'a', 'b'". Returns the length written (like snprintf; may exceed
 * size). 0 when every operator is supported. */
size_t vn_graph_unsupported_report(const vn_graph *graph, char *buf, size_t size);

/* A concrete shape for a graph input (by name). */
typedef struct vn_input_shape {
    const char *name;
    int32_t rank;
    int64_t dims[VN_MAX_RANK];
} vn_input_shape;

/* Bind the inputs' symbolic dims from `shapes` (inputs not listed must have
 * fully known shapes, or symbols bound by another input), check every node
 * against the registry (one VN_ERR_UNSUPPORTED lists every missing operator)
 * and infer every value's shape and dtype in topological order. May be
 * called again with other shapes. */
vn_status vn_graph_infer(vn_graph *graph, const vn_input_shape *shapes, int32_t num_shapes);

/* Any value's descriptor after vn_graph_infer (VN_ERR_STATE before). */
vn_status vn_graph_value_desc(const vn_graph *graph, const char *name, vn_tensor_desc *out);

/* ---- .npy files ----------------------------------------------------------------- */

/* Read a .npy (format 1.0, 2.0 or 3.0; little-endian; C order) into a tensor
 * whose data is allocated with vn_aligned_alloc (free with vn_aligned_free).
 * Dtypes: <f4 <f2 <i1 |u1 <i4 <i8 |b1, <V2 as bf16; <f8 is converted to f32.
 * Fortran order, big-endian data and other dtypes are rejected, naming them. */
vn_status vn_npy_read(const char *path, vn_tensor *out);
vn_status vn_npy_parse(const void *bytes, size_t size, const char *name, vn_tensor *out);
/* Write a tensor as .npy format 1.0. bf16 is
 * written as "<V2" (NumPy has no bf16; ml_dtypes reads it back with a view). */
vn_status vn_npy_write(const char *path, const vn_tensor *tensor);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_GRAPH_H */
