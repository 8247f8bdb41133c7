/*
 * vinci/ops.h — operators: one registry, and the two-phase single-operator API.
 *
 * Every operator is described once by a vn_op_def (name, domain, inputs,
 * attributes, shape inference, plan, run). The same entry serves the C API
 * below, the graph engine and the Python front end. User operators register
 * the same way.
 *
 * Two phases (like aclnn's GetWorkspaceSize / run):
 *
 *     vn_op_plan *plan;
 *     vn_tensor_desc in[2] = {{VN_F32, 2, {8, 16}}, {VN_F32, 1, {16}}};
 *     vn_op_plan_create(dev, "Add", in, 2, NULL, &plan);     // validates, infers, tiles
 *     size_t ws = vn_op_plan_workspace(plan);                // caller owns the workspace
 *     const vn_tensor_desc *out = vn_op_plan_output(plan, 0); // [8,16] f32
 *     vn_op_run(plan, inputs, 2, outputs, 1, workspace);
 *     vn_op_plan_destroy(plan);
 *
 * A plan is immutable after creation and may be run from several threads at
 * once (each with its own workspace).
 */
#ifndef VINCI_OPS_H
#define VINCI_OPS_H

#include "vinci/base.h"
#include "vinci/runtime.h"
#include "vinci/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VN_MAX_RANK 8

/* Shape and dtype of a dense, row-major tensor. rank 0 = scalar. */
typedef struct vn_tensor_desc {
    vn_dtype dtype;
    int32_t rank;
    int64_t dims[VN_MAX_RANK];
} vn_tensor_desc;

typedef struct vn_tensor {
    vn_tensor_desc desc;
    void *data;
} vn_tensor;

/* Number of elements (1 for rank 0, 0 if any dim is 0). */
int64_t vn_desc_numel(const vn_tensor_desc *desc);
/* "f32[2,3,4]" into buf; returns buf. */
char *vn_desc_format(const vn_tensor_desc *desc, char *buf, size_t size);

/* ---- attributes --------------------------------------------------------- */

typedef enum vn_attr_type {
    VN_ATTR_INT = 0,
    VN_ATTR_FLOAT,
    VN_ATTR_INTS,
    VN_ATTR_FLOATS,
    VN_ATTR_STRING,
    VN_ATTR_TENSOR, /* e.g. ConstantOfShape's value */
    VN_ATTR_STRINGS
} vn_attr_type;

typedef struct vn_attr {
    const char *name;
    vn_attr_type type;
    int64_t i;
    double f;
    const int64_t *ints;
    const float *floats;
    int32_t count; /* elements of ints / floats / strings */
    const char *s;
    const vn_tensor *t;         /* VN_ATTR_TENSOR */
    const char *const *strings; /* VN_ATTR_STRINGS */
} vn_attr;

typedef struct vn_attrs {
    const vn_attr *items;
    int32_t count;
} vn_attrs;

/* Look up an attribute; `fallback` when absent. VN_ERR_INVALID_ARG when present
 * with another type. */
vn_status vn_attrs_int(const vn_attrs *attrs, const char *name, int64_t fallback, int64_t *out);
vn_status vn_attrs_float(const vn_attrs *attrs, const char *name, double fallback, double *out);
const vn_attr *vn_attrs_find(const vn_attrs *attrs, const char *name);

/* ---- the registry ----------------------------------------------------------- */

typedef struct vn_op_def vn_op_def;

/* What an operator's infer and plan functions see. */
typedef struct vn_op_ctx {
    const vn_op_def *def;
    vn_device *device;
    const vn_tensor_desc *inputs; /* an input with rank -1 is an omitted optional input */
    int32_t num_inputs;
    const vn_attrs *attrs;
    const char *node_name; /* for messages; "" outside a graph */
    /* Per input, its data when the input is a constant known at plan time
     * (initializers, folded shapes), else NULL; the array itself may be NULL.
     * Operators whose output shape depends on an input's values (Reshape's
     * shape, Slice's starts, Expand, Tile, ...) read it here, and return
     * VN_ERR_UNSUPPORTED naming the input when it is not constant. */
    const void *const *input_data;
    /* Bit k: input k is a constant whose data the plan gets pre-packed
     * (vn_op_prepack's plan_from_blobs; input_data[k] is then NULL). */
    uint64_t prepacked_inputs;
} vn_op_ctx;

/* What an operator's run function sees. */
typedef struct vn_op_run_ctx {
    const vn_op_def *def;
    vn_device *device;
    const void *plan; /* the operator's own plan data */
    const vn_tensor *inputs;
    int32_t num_inputs;
    vn_tensor *outputs;
    int32_t num_outputs;
    void *workspace;
    vn_kernel_counters *counters; /* accumulate launch counters here; may be NULL */
} vn_op_run_ctx;

struct vn_op_def {
    const char *name;   /* ONNX op type, e.g. "Add" */
    const char *domain; /* "" for the ONNX default domain, "vinci" for vinci's own */
    int32_t min_inputs, max_inputs;
    int32_t num_outputs;
    uint32_t dtypes; /* bit (1u << dtype) per accepted dtype of input 0 */
    /* Fill outputs[0..num_outputs) with shapes and dtypes; validate everything. */
    vn_status (*infer)(const vn_op_ctx *ctx, vn_tensor_desc *outputs);
    /* Choose kernel, tiling and block_dim; return the plan data (owned by the
     * plan, freed with plan_free) and the workspace size. May be NULL. */
    vn_status (*plan)(const vn_op_ctx *ctx, const vn_tensor_desc *outputs, void **plan_data,
                      size_t *workspace);
    void (*plan_free)(void *plan_data);
    /* Run: launches kernels on ctx->device. */
    vn_status (*run)(const vn_op_run_ctx *ctx);
};

#define VN_DTYPE_BIT(d) (1u << (d))
#define VN_DTYPES_FLOAT (VN_DTYPE_BIT(VN_F32) | VN_DTYPE_BIT(VN_F16) | VN_DTYPE_BIT(VN_BF16))

/* Register an operator (the def must outlive the process or be unregistered
 * never). VN_ERR_INVALID_ARG if an operator of that name and domain exists. */
vn_status vn_op_register(const vn_op_def *def);
/* Find by name and domain ("" or NULL = ONNX default). NULL if absent. */
const vn_op_def *vn_op_find(const char *name, const char *domain);
/* Iterate: the i-th registered operator, NULL past the end. */
const vn_op_def *vn_op_at(int32_t index);

/* ---- layouts ------------------------------------------------------------------ *
 * Which memory layouts an operator accepts on its data input (input 0) and
 * produces on its output(s), as bit masks, so the graph engine can keep
 * tensors blocked between operators that agree and insert reorders
 * (vinci::ToNC1HWC0 / vinci::FromNC1HWC0) where they do not. 0 means plain
 * / any: the operator sees dense row-major tensors and does not care what
 * they mean. (A side table rather than fields of vn_op_def, so existing
 * positional vn_op_def initialisers stay complete.) */
#define VN_LAYOUT_ANY     0u
#define VN_LAYOUT_NCHW    (1u << 0) /* [N][C][spatial...] */
#define VN_LAYOUT_NC1HWC0 (1u << 1) /* [N][ceil(C/16)][spatial...][16], zero-padded lanes */
/* Declare the layouts of an operator (built-in ones are declared already). */
vn_status vn_op_set_layouts(const vn_op_def *def, uint32_t layouts_in, uint32_t layouts_out);
/* The layouts of an operator; both 0 when never declared. */
void vn_op_layouts(const vn_op_def *def, uint32_t *layouts_in, uint32_t *layouts_out);

/* ---- outputs in place ------------------------------------------------------------ *
 * Inputs whose memory an operator's single output may take over: bit k set
 * when the operator reads input k only at each element it then writes, so a
 * graph engine may give the output input k's bytes where the node reads that
 * input last and it has the output's shape and dtype (an input that is also
 * read at another, undeclared position is never taken over). A run through
 * vn_op_run may likewise pass such an input as the output. Built in: every
 * input of the element-wise operators, the residual (input 3) of
 * vinci::FusedConv / FusedConvNC1HWC0. (A side table like the layouts.) */
#define VN_IN_PLACE_ALL (~(uint64_t)0)
/* Declare the in-place inputs of an operator (built-in ones are declared
 * already; a later declaration of the same operator wins). */
vn_status vn_op_set_in_place(const vn_op_def *def, uint64_t inputs);
/* The in-place inputs of an operator; 0 when none were declared. */
uint64_t vn_op_in_place(const vn_op_def *def);

/* ---- pre-packed constants ------------------------------------------------------ *
 * An operator whose plan derives data from constant inputs (MatMul's packed
 * B, Conv's blocked weights) may export it, so an offline model (.vnm) stores
 * the packed bytes instead of the raw constants and a load re-creates the plan
 * around them in place: no copy, no repack. (A side table like the layouts,
 * so vn_op_def initialisers stay complete.) */
#define VN_OP_MAX_BLOBS 4
typedef struct vn_op_blob {
    const void *data; /* 64-byte aligned; read-only; outlives the plan made from it */
    size_t size;
    char layout[48]; /* what the bytes are, e.g. "f32.k1.nr32.avx512": reused only on a match */
} vn_op_blob;

typedef struct vn_op_prepack {
    /* The plan's packed constant data as blobs (pointers into the plan);
     * *consumed: bit k set when the plan no longer reads input k at run time
     * (its raw bytes may be dropped). Returns the number of blobs (0: none). */
    int32_t (*export_blobs)(const void *plan_data, vn_op_blob blobs[VN_OP_MAX_BLOBS],
                            uint64_t *consumed);
    /* Plan as def->plan would, except that the consumed inputs' data come from
     * `blobs` (used in place, never freed by the plan); ctx->input_data of the
     * consumed inputs may be NULL. Checks the blob count, sizes, layouts and
     * alignment against what the shapes need: untrusted blobs are refused
     * with VN_ERR_FORMAT. */
    vn_status (*plan_from_blobs)(const vn_op_ctx *ctx, const vn_tensor_desc *outputs,
                                 const vn_op_blob *blobs, int32_t num_blobs, uint64_t consumed,
                                 void **plan_data, size_t *workspace);
} vn_op_prepack;

/* Declare the pre-pack hooks of an operator (built-in ones are declared
 * already); `hooks` must outlive the process. */
vn_status vn_op_set_prepack(const vn_op_def *def, const vn_op_prepack *hooks);
/* The hooks of an operator; NULL when it has none. */
const vn_op_prepack *vn_op_prepack_hooks(const vn_op_def *def);

/* ---- two-phase single-operator API ------------------------------------------ */

typedef struct vn_op_plan vn_op_plan;

/* Validate, infer output descriptors and plan. `device` NULL = default device;
 * `attrs` may be NULL. `op_name` is "Name" (looked up in the ONNX default
 * domain, then in "vinci") or "domain::Name" (e.g. "vinci::RMSNormalization").
 * Inputs and outputs of a run may not overlap, except an output that is
 * exactly an input of the same shape and dtype that the operator declares
 * in place (vn_op_in_place). */
vn_status vn_op_plan_create(vn_device *device, const char *op_name, const vn_tensor_desc *inputs,
                            int32_t num_inputs, const vn_attrs *attrs, vn_op_plan **out);
int32_t vn_op_plan_num_outputs(const vn_op_plan *plan);
const vn_tensor_desc *vn_op_plan_output(const vn_op_plan *plan, int32_t index);
size_t vn_op_plan_workspace(const vn_op_plan *plan);
/* Run the plan. Input and output descriptors must equal those planned;
 * `workspace` must hold vn_op_plan_workspace bytes (may be NULL when 0). */
vn_status vn_op_run(const vn_op_plan *plan, const vn_tensor *inputs, int32_t num_inputs,
                    vn_tensor *outputs, int32_t num_outputs, void *workspace);
void vn_op_plan_destroy(vn_op_plan *plan);

/* ---- the fused element-wise program ------------------------------------------- */

/* A small program of element-wise instructions executed tile by tile in scratch,
 * one pass over memory. Registers 0..num_inputs-1 hold the (broadcast) inputs;
 * each instruction writes a new register; the last instruction's register is the
 * output. Example, ReLU-Add: {ADD r2 = r0, r1}, {RELU r3 = r2}. */
#define VN_FUSED_MAX_INSTRS VN_VPROGRAM_MAX_INSTRS
typedef vn_vinstr vn_fused_instr; /* {op, src0, src1 (binary ops), scalar (scalar ops)} */

typedef struct vn_fused_program {
    int32_t num_inputs;
    int32_t num_instrs;
    vn_fused_instr instrs[VN_FUSED_MAX_INSTRS];
} vn_fused_program;

/* The "vinci::FusedElementwise" operator takes its program through this call.
 * (Graphs may also give it as attributes: "ops", "src0", "src1" (INTS, one per
 * instruction, src1 -1 when unused) and "scalars" (FLOATS, optional); this
 * call encodes the program that way, so scalars are rounded to f32.) */
vn_status vn_fused_plan_create(vn_device *device, const vn_fused_program *program,
                               const vn_tensor_desc *inputs, int32_t num_inputs, vn_op_plan **out);

#ifdef __cplusplus
}
#endif
#endif /* VINCI_OPS_H */
