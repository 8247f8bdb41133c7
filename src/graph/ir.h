/*
 * ir.h — the graph engine's intermediate representation, shared by the ONNX
 * reader, the checks and inference, and the passes that build on them.
 *
 * A graph body (the main graph or a subgraph of If / Loop / Scan) holds values
 * and nodes in arrays and refers to them by index, so arrays may grow and
 * passes may renumber without dangling pointers. Everything lives in the
 * owning vn_graph's arena (graph/gmem.h).
 *
 * Invariants after vn_ir_link: every node input index is -1 (omitted optional
 * input) or a valid value index of the same body; each value has at most one
 * producer; values[i].name is unique within a body; a name used but defined
 * only in an enclosing body is a value of kind VN_GV_OUTER here.
 */
#ifndef VINCI_GRAPH_IR_H
#define VINCI_GRAPH_IR_H

#include "graph/gmem.h"
#include "vinci/graph.h"

/* Limits against absurd files (each far above any real model). */
#define VN_IR_MAX_NODES  (1 << 22)
#define VN_IR_MAX_VALUES (1 << 23)
#define VN_IR_MAX_IO     (1 << 16) /* inputs / outputs of a node or graph */
#define VN_IR_MAX_ATTRS  4096      /* attributes of a node */
#define VN_IR_MAX_DIMS   64        /* dims a file may declare (vinci runs up to VN_MAX_RANK) */
#define VN_IR_MAX_OPSETS 256

/* ONNX TensorProto.DataType values vinci reads. */
enum {
    VN_ONNX_UNDEFINED = 0,
    VN_ONNX_FLOAT = 1,
    VN_ONNX_UINT8 = 2,
    VN_ONNX_INT8 = 3,
    VN_ONNX_UINT16 = 4,
    VN_ONNX_INT16 = 5,
    VN_ONNX_INT32 = 6,
    VN_ONNX_INT64 = 7,
    VN_ONNX_STRING = 8,
    VN_ONNX_BOOL = 9,
    VN_ONNX_FLOAT16 = 10,
    VN_ONNX_DOUBLE = 11,
    VN_ONNX_UINT32 = 12,
    VN_ONNX_UINT64 = 13,
    VN_ONNX_BFLOAT16 = 16
};

/* ONNX AttributeProto.AttributeType values. */
enum {
    VN_GATTR_FLOAT = 1,
    VN_GATTR_INT = 2,
    VN_GATTR_STRING = 3,
    VN_GATTR_TENSOR = 4,
    VN_GATTR_GRAPH = 5,
    VN_GATTR_FLOATS = 6,
    VN_GATTR_INTS = 7,
    VN_GATTR_STRINGS = 8,
    VN_GATTR_TENSORS = 9,
    VN_GATTR_GRAPHS = 10,
    VN_GATTR_SPARSE_TENSOR = 11,
    VN_GATTR_SPARSE_TENSORS = 12,
    VN_GATTR_TYPE_PROTO = 13,
    VN_GATTR_TYPE_PROTOS = 14
};

typedef struct vn_gbody vn_gbody;

/* Constant tensor data in vinci's dtype (f64 converted to f32, etc.). */
typedef struct vn_gconst {
    const char *name;
    vn_tensor_desc desc;
    int32_t onnx_dtype; /* as stored in the file */
    void *data;         /* 64-byte aligned, vn_desc_numel * dtype size bytes; NULL if empty */
    size_t nbytes;
} vn_gconst;

typedef struct vn_gattr {
    const char *name;
    int32_t type; /* VN_GATTR_* */
    int64_t i;
    float f;
    const char *s;
    int64_t *ints;
    float *floats;
    const char **strings;
    vn_gconst *tensors; /* TENSOR: one; TENSORS: count */
    vn_gbody **graphs;  /* GRAPH: one; GRAPHS: count */
    int32_t count;      /* elements of ints / floats / strings / tensors / graphs */
} vn_gattr;

enum { VN_GV_INTERMEDIATE = 0, VN_GV_INPUT, VN_GV_INITIALIZER, VN_GV_OUTER };

typedef struct vn_gvalue {
    const char *name;
    vn_value_info info;  /* as the model declares it (rank -1 unknown) */
    vn_tensor_desc desc; /* concrete shape and dtype, valid when `known` */
    bool known;
    int32_t kind; /* VN_GV_* */
    bool is_output;
    int32_t producer; /* node index, -1 if none */
    int32_t producer_output;
    int32_t *consumers; /* node indices, one entry per use */
    int32_t num_consumers, cap_consumers;
    vn_gconst *constant; /* initializer or Constant output; NULL otherwise */
} vn_gvalue;

typedef struct vn_gnode {
    const char *name; /* "" when the file gives none */
    const char *op_type, *domain;
    const char **input_names, **output_names; /* "" = omitted optional */
    int32_t *inputs, *outputs;                /* value indices after linking */
    int32_t num_inputs, num_outputs;
    vn_gattr *attrs;
    int32_t num_attrs;
    vn_attr *reg_attrs; /* the registry's view of attrs (all but graphs / tensor lists) */
    int32_t num_reg_attrs;
    int32_t *implicit; /* values of this body its subgraphs read (ordering edges) */
    int32_t num_implicit, cap_implicit;
    int64_t opset;        /* the version imported for `domain` */
    const vn_op_def *def; /* NULL: not in the registry (or handled by the graph engine) */
} vn_gnode;

struct vn_gbody {
    const char *name;
    vn_gbody *parent; /* enclosing body of a subgraph; NULL for the main graph */
    vn_graph *graph;
    vn_gvalue *values;
    int32_t num_values, cap_values;
    int32_t *slots; /* open-addressing name index: value index or -1; size hash_cap */
    int32_t hash_cap;
    vn_gnode *nodes;
    int32_t num_nodes, cap_nodes;
    /* As parsed, before linking: */
    const char **input_names, **output_names;
    vn_value_info *input_infos, *output_infos, *value_infos;
    int32_t num_input_names, cap_input_names, num_output_names, cap_output_names;
    int32_t num_value_infos, cap_value_infos;
    vn_gconst *inits;
    int32_t num_inits, cap_inits;
    /* After linking: */
    int32_t *inputs, *outputs; /* value indices; inputs exclude initializers */
    int32_t num_inputs, num_outputs;
    int32_t *order; /* node indices in topological order */
};

struct vn_graph {
    vn_gmem mem;
    const char *file; /* name used in messages */
    const char *dir;  /* folder for external data; NULL = none allowed */
    int64_t ir_version;
    const char *producer;
    vn_opset *opsets;
    int32_t num_opsets, cap_opsets;
    vn_gbody *main;
    int32_t num_bodies;     /* main graph and every subgraph */
    vn_op_count *op_counts; /* histogram over all bodies, sorted (graph_ops.c) */
    int32_t num_op_types, cap_op_types;
    bool inferred;
};

/* ---- values (ir_values.c) ------------------------------------------------------ */
/* Index of the value `name` in `b` (not its parents), -1 if absent. */
int32_t vn_ir_find(const vn_gbody *b, const char *name);
/* Add a value (the name must be new); returns its index or -1 (error set). */
int32_t vn_ir_add_value(vn_gbody *b, const char *name, int32_t kind);
vn_status vn_ir_add_consumer(vn_gbody *b, int32_t value, int32_t node);

/* ---- building (ir_link.c) ------------------------------------------------------- */
/* Turn the parsed names into values, producers and consumers; subgraphs first
 * see their parents' names. Errors name the node and the value. */
vn_status vn_ir_link(vn_gbody *b);

/* ---- order (ir_topo.c) ----------------------------------------------------------- */
/* Compute b->order; a cycle is an error naming a node on it. */
vn_status vn_ir_topo_sort(vn_gbody *b);

/* ---- messages ------------------------------------------------------------------- */
/* "node 'n' (Conv)" or "node #3 (Conv)" when unnamed; into buf. */
const char *vn_ir_node_label(const vn_gbody *b, int32_t node, char *buf, size_t size);

/* ---- registry view (ir_attrs.c) ------------------------------------------------- */
vn_status vn_ir_registry_attrs(vn_graph *g, vn_gnode *n);

#endif /* VINCI_GRAPH_IR_H */
