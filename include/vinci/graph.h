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

/* ==== compiled models and runs (graph engine, execution half) ================ *
 *
 *     vn_compile_options o = {.opt_level = 1};            // shapes as in vn_graph_infer
 *     vn_model *m;  vn_model_compile(g, &o, &m);           // passes, plans, memory plan
 *     vn_model_ctx *ctx;  vn_model_ctx_create(m, &ctx);    // one per concurrent run
 *     vn_named_tensor in = {"x", {{VN_F32, 2, {4, 16}}, x_data}};
 *     vn_named_tensor out = {"y", {{VN_F32, 2, {4, 10}}, y_data}};
 *     vn_model_run(m, ctx, &in, 1, &out, 1);               // or vn_model_run_async(..., stream)
 *
 * A compiled model is immutable and may be shared by any number of threads;
 * each concurrent run needs its own context (activation arena + workspace).
 * The model borrows the graph's initializers, attributes and names: destroy
 * the graph after every model compiled from it.
 */

typedef struct vn_model vn_model;
typedef struct vn_model_ctx vn_model_ctx;
/* Arithmetic of a compiled model's matrix products (vn_compile_options.precision). */
typedef enum vn_precision {
    VN_PRECISION_F32 = 0, /* every operator in its model dtype (default) */
    VN_PRECISION_BF16 = 1 /* f32 MatMul / Gemm (and their fusions) multiply in bf16 with f32
                             accumulation: operands rounded to bf16 (weights once, at plan time),
                             sums, epilogues and every other operator in f32 */
} vn_precision;

typedef struct vn_compile_options {
    int32_t opt_level; /* 0: no passes; 1: folding, dead-node and identity removal (default) */
    vn_device *device; /* NULL: the default device */
    const vn_input_shape *shapes; /* concrete input shapes, as for vn_graph_infer */
    int32_t num_shapes;
    int32_t precision; /* vn_precision (0: f32); applies at every opt_level */
} vn_compile_options;

/* Room for every pass of O3 with a reduced precision and the memory plan's
 * two alias reports (17 today), and a few more. */
#define VN_MAX_PASS_REPORTS 24
/* What one pass changed: `changes` rewrites, `detail` names the first few. */
typedef struct vn_pass_report {
    const char *pass;
    int32_t changes;
    char detail[256];
} vn_pass_report;

typedef struct vn_model_stats {
    double compile_ms;
    int32_t nodes_before, nodes_after; /* main-graph nodes (Constant nodes included before) */
    int32_t opt_level;
    int32_t precision; /* vn_precision the model was compiled with */
    int32_t num_reports;
    vn_pass_report reports[VN_MAX_PASS_REPORTS];
    size_t arena_bytes;      /* the memory plan's peak: one activation arena per context */
    size_t activation_bytes; /* the sum of every activation (64-byte rounded), for comparison */
    size_t inplace_count;    /* activations that reuse their input's memory */
    size_t workspace_bytes;  /* one per context: the largest operator (or node group) needs */
    size_t constant_bytes;   /* initializers and folded constants */
} vn_model_stats;

/* Compile the graph for concrete input shapes. Errors name the node, its
 * operator and the shapes involved; an unsupported model lists every
 * unsupported operator at once. The graph is re-inferred, not otherwise changed. */
vn_status vn_model_compile(vn_graph *graph, const vn_compile_options *options, vn_model **out);
/* The same, specialised on input values (vn_named_tensor, below): each small
 * integer input among `values` (i32 / i64 / bool, at most
 * VN_SPECIALISE_MAX_ELEMS values), each 1-D f32/f16 input of at most 16 values
 * (Resize's scales and roi) and each scalar input becomes a constant
 * known at plan time, so axes, pads, shapes, Range limits, OneHot depths...
 * that arrive as graph inputs fold like initializers. The model is correct
 * only for those values (it still takes the input, and ignores it); other
 * tensors in `values` are not used. `vinci run` specialises on its input
 * files; `vinci compile` keeps every input an input. */
#define VN_SPECIALISE_MAX_ELEMS 1024
struct vn_named_tensor;
vn_status vn_model_compile_specialised(vn_graph *graph, const vn_compile_options *options,
                                       const struct vn_named_tensor *values, int32_t num_values,
                                       vn_model **out);
void vn_model_destroy(vn_model *model);
vn_status vn_model_get_stats(const vn_model *model, vn_model_stats *out);

int32_t vn_model_num_inputs(const vn_model *model);
int32_t vn_model_num_outputs(const vn_model *model);
/* Name and descriptor of input / output `index`. */
vn_status vn_model_input(const vn_model *model, int32_t index, const char **name,
                         vn_tensor_desc *desc);
vn_status vn_model_output(const vn_model *model, int32_t index, const char **name,
                          vn_tensor_desc *desc);
int32_t vn_model_num_nodes(const vn_model *model); /* nodes that run */

/* A run's context: its activation arena, workspace and output buffers. */
vn_status vn_model_ctx_create(const vn_model *model, vn_model_ctx **out);
/* Waits for a pending asynchronous run first. NULL is ignored. */
void vn_model_ctx_destroy(vn_model_ctx *ctx);

typedef struct vn_named_tensor {
    const char *name;
    vn_tensor tensor;
} vn_named_tensor;

/* Run with inputs and outputs by name. Every model input must be given with
 * exactly its compiled descriptor. Outputs may be any subset: each given
 * output is written to its tensor's data (descriptor must match), the others
 * to the context's own buffers (vn_model_ctx_output). Runs in the calling
 * thread; each node's run launches its kernels on the model's device. */
vn_status vn_model_run(const vn_model *model, vn_model_ctx *ctx, const vn_named_tensor *inputs,
                       int32_t num_inputs, vn_named_tensor *outputs, int32_t num_outputs);
/* The same, enqueued on `stream` (of the model's device) after its earlier
 * work; returns after checking the arguments. The input and output memory
 * must stay valid until the stream reaches the run; a failing node becomes
 * the stream's error (naming the node and operator). One pending run per
 * context (VN_ERR_STATE otherwise). */
vn_status vn_model_run_async(const vn_model *model, vn_model_ctx *ctx, vn_stream *stream,
                             const vn_named_tensor *inputs, int32_t num_inputs,
                             vn_named_tensor *outputs, int32_t num_outputs);
/* Output `name` in the context's own buffer (valid until the next run). */
vn_status vn_model_ctx_output(vn_model_ctx *ctx, const char *name, vn_tensor *out);

/* Models compiled per input-shape set, compiled on first use (thread-safe).
 * The graph must outlive the cache. */
typedef struct vn_model_cache vn_model_cache;
vn_status vn_model_cache_create(vn_graph *graph, const vn_compile_options *options,
                                vn_model_cache **out);
/* The model for these shapes (options' shapes are ignored); owned by the cache. */
vn_status vn_model_cache_get(vn_model_cache *cache, const vn_input_shape *shapes,
                             int32_t num_shapes, const vn_model **out);
/* The same, specialised on `values` (as vn_model_compile_specialised): the
 * specialisable inputs' values are part of the key, next to the shapes. */
vn_status vn_model_cache_get_values(vn_model_cache *cache, const vn_input_shape *shapes,
                                    int32_t num_shapes, const vn_named_tensor *values,
                                    int32_t num_values, const vn_model **out);
int32_t vn_model_cache_size(const vn_model_cache *cache);
void vn_model_cache_destroy(vn_model_cache *cache);

/* ---- offline models (.vnm) ------------------------------------------------------ *
 * A compiled model written to a file and loaded without the ONNX model or the
 * compiler's passes (the ATC .om of CANN):
 *
 *     vn_model_save(m, "model.vnm");                     // later, elsewhere:
 *     vn_model *m2;  vn_model_load("model.vnm", NULL, &m2);
 *
 * The file holds the values, nodes, attributes, raw weights and the memory
 * plan; loading maps it read-only (weights are used in place), checks it as
 * untrusted input (a corrupt file gets VN_ERR_FORMAT naming the byte offset
 * and what is wrong; an operator this vinci lacks, or whose arity changed,
 * VN_ERR_UNSUPPORTED / VN_ERR_FORMAT naming the node) and re-plans every
 * node. A loaded model owns its file mapping and needs no graph. Runs give
 * bit-identical results to the model that was saved. */
vn_status vn_model_save(const vn_model *model, const char *path);
/* `device` NULL: the default device. */
vn_status vn_model_load(const char *path, vn_device *device, vn_model **out);

/* What a loaded model's file says (VN_ERR_STATE for a model compiled here). */
typedef struct vn_model_file_info {
    uint32_t version; /* format version */
    size_t file_bytes, weight_bytes;
    const char *producer, *producer_version, *source; /* source: the model it was compiled from */
    int32_t opt_level, precision;
    double load_ms, replan_ms; /* the whole load; the share re-planning took */
} vn_model_file_info;
vn_status vn_model_file_info_get(const vn_model *model, vn_model_file_info *out);

/* ---- offline models for several input-shape sets ------------------------------- *
 * One file holding one compiled model per input-shape set (say batch 1, 4
 * and 16), the one to run chosen at run time from the inputs' shapes:
 *
 *     const vn_model *ms[3] = {m1, m4, m16};              // compiled per shape set
 *     vn_model_set_save(ms, 3, "model.vnm");              // later, elsewhere:
 *     vn_model_set *set;  vn_model_set_load("model.vnm", NULL, &set);
 *     vn_input_shape s = {"x", 4, {4, 3, 224, 224}};
 *     const vn_model *m;  vn_model_set_pick(set, &s, 1, &m);   // then runs as usual
 *
 * The models must share input and output names, dtypes and ranks, and differ
 * in their input shapes. Loading maps the file once and loads every model
 * (none is loaded lazily: the first run of each is as fast as the later
 * ones); the models belong to the set. vn_model_set_load also takes a plain
 * .vnm (a set of one); vn_model_load refuses a file of several sets. Each
 * model keeps its own weights in the file. */
typedef struct vn_model_set vn_model_set;
vn_status vn_model_set_save(const vn_model *const *models, int32_t count, const char *path);
/* `device` NULL: the default device. */
vn_status vn_model_set_load(const char *path, vn_device *device, vn_model_set **out);
int32_t vn_model_set_count(const vn_model_set *set);
const vn_model *vn_model_set_model(const vn_model_set *set, int32_t index); /* NULL if none */
/* The model whose inputs have exactly these shapes (inputs not named may have
 * any); VN_ERR_SHAPE listing the compiled shape sets when none has. */
vn_status vn_model_set_pick(const vn_model_set *set, const vn_input_shape *shapes,
                            int32_t num_shapes, const vn_model **out);
void vn_model_set_destroy(vn_model_set *set);

/* Node `index` (execution order) of a compiled or loaded model. */
vn_status vn_model_node(const vn_model *model, int32_t index, const char **name,
                        const char **op_type, const char **domain);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_GRAPH_H */
