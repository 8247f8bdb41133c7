/*
 * compile.h — the compiled model (vinci/graph.h's vn_model) and the
 * compile-time graph the passes rewrite, which are the same structure: a
 * model under construction is a vn_model whose `final` is false.
 *
 * Everything is plain arrays indexed by int32 so the structure can be written
 * to an offline model file (.vnm, a later task) as it is: values (name, desc,
 * kind, constant bytes, arena offset), nodes (op name and domain, attributes,
 * input / output value indices, plan data and workspace sizes), the input and
 * output value lists, and the arena and workspace sizes.
 *
 * Invariants (after vn_cg_build and every pass):
 *   - nodes[] is in topological order; passes only kill nodes or rewire an
 *     input to a value produced earlier, so array order stays an execution order;
 *   - a node's outputs[] has def->num_outputs entries once it has a def
 *     (outputs the model leaves unnamed are anonymous values nobody reads);
 *   - every value has at most one producer (a live node), or is an input or
 *     a constant (producer -1).
 * After vn_model_compile (final): dead nodes are gone, every node has a def
 * and a plan, and every value the run touches has its memory class.
 */
#ifndef VINCI_GRAPH_COMPILE_H
#define VINCI_GRAPH_COMPILE_H

#include "graph/graph_internal.h"

enum {
    VN_CV_ACT = 0, /* produced by a node */
    VN_CV_INPUT,   /* a model input, bound per run */
    VN_CV_CONST    /* an initializer, a Constant node or a folded value */
};

/* Where a value's bytes are during a run (set by the memory plan). */
enum {
    VN_MEM_NONE = 0, /* not used by any run */
    VN_MEM_ARENA,    /* at `offset` in the context's activation arena */
    VN_MEM_CONST,    /* `data` */
    VN_MEM_INPUT,    /* the caller's input `io_index` */
    VN_MEM_OUTPUT,   /* the output buffer `io_index` (caller's or context's) */
    VN_MEM_DYNAMIC   /* shape known only at run time (control flow, cf.h): the context's
                        per-value heap buffer and run-time descriptor */
};

typedef struct vn_cvalue {
    const char *name;
    vn_tensor_desc desc;
    bool known; /* desc is valid */
    int32_t kind;
    const void *data; /* VN_CV_CONST: 64-byte aligned, nbytes long (NULL when empty) */
    size_t nbytes;
    int32_t producer;                  /* node index or -1 */
    int32_t input_index, output_index; /* position in the model's inputs / outputs, or -1 */
    int32_t mem;                       /* VN_MEM_* */
    size_t offset;                     /* VN_MEM_ARENA */
    int32_t io_index;
    bool packed_only; /* VN_CV_CONST with no raw bytes (data NULL): every reader's plan
                         holds them packed (loaded so, or released after planning) */
    bool owned;       /* data is the model's own copy (vn_cg_set_const), not the graph's */
    bool dynamic;     /* produced by If / Loop / Scan with a shape known only at run time:
                         desc has the dtype, dims -1 where they vary (cf.h) */
} vn_cvalue;

/* Nodes whose outputs the memory plan makes out of their inputs' bytes. */
enum vn_alias_kind {
    VN_ALIAS_NONE,
    VN_ALIAS_VIEW,  /* output = input 0's memory: a run forwards the pointer */
    VN_ALIAS_CONCAT /* inputs = consecutive ranges of the output's memory: a run does nothing */
};

typedef struct vn_cnode {
    const char *name; /* "" when the model gives none */
    const char *op_type, *domain;
    const vn_op_def *def;
    const vn_attr *attrs;
    int32_t num_attrs;
    int32_t *inputs; /* value index or -1 (omitted); trailing omitted inputs trimmed */
    int32_t num_inputs;
    int32_t *outputs;
    int32_t num_outputs;
    bool dead;
    void *plan_data; /* the operator's plan (freed with def->plan_free) */
    size_t workspace;
    const char *fused_from; /* "a;b;c": the source nodes of a fused node, else NULL */
    uint8_t alias;          /* VN_ALIAS_*: the node runs no kernel, its output's bytes are its
                               inputs' (compile_views.c, compile_concat.c) */
    struct vn_cf *cf;       /* If / Loop / Scan: subgraphs and their compiled models (cf.h); the
                               inputs past cf->num_explicit are the outer values they read */
    int32_t concurrent;     /* at a group's first node: its size (compile_groups.c); else 1 */
    size_t ws_offset;       /* where its slice of the context's workspace starts */
    int32_t run_outputs;    /* outputs its operator runs with (vn_cg_outputs_read); 0: all */
} vn_cnode;

/* Node `node`'s outputs up to the last one that a node or the model reads
 * (at least 1). Shape inference gives every node all its operator's outputs
 * (anonymous ones where the model names fewer), so an operator with optional
 * trailing outputs (MaxPool's Indices, LayerNormalization's statistics) runs
 * with this many and skips what nobody reads; the skipped tensors still have
 * their memory, so an operator that writes them anyway stays safe. */
int32_t vn_cg_outputs_read(const vn_model *m, int32_t node);

/* Bytes of a tensor with descriptor d (0 when it has no elements or an
 * unknown dim): what every value, buffer and copy of a run is sized by. */
static inline size_t vn_cg_desc_bytes(const vn_tensor_desc *d)
{
    int64_t numel = vn_desc_numel(d);
    return numel > 0 ? (size_t)numel * vn_dtype_size(d->dtype) : 0;
}

/* Most nodes that run at once (compile_groups.c). */
#define VN_GROUP_MAX 4

/* A graph output the run must copy (it is an input, a constant or another
 * output's value): dst is output `output`, src is value `value`. */
typedef struct vn_out_copy {
    int32_t output, value;
} vn_out_copy;

struct vn_model {
    vn_gmem mem; /* every array, folded constant and name the model owns */
    vn_device *device;
    const char *name;
    bool final;
    vn_cvalue *values;
    int32_t num_values, cap_values;
    vn_cnode *nodes;
    int32_t num_nodes, cap_nodes;
    int32_t *inputs, *outputs; /* value indices */
    int32_t num_inputs, num_outputs;
    vn_out_copy *copies;
    int32_t num_copies;
    size_t arena_bytes, workspace_bytes;
    int32_t max_io; /* most inputs or outputs of one node */
    vn_model_stats stats;
    /* A model loaded from a .vnm file (vnm_*.c) borrows the file's mapping;
     * vn_model_destroy calls release(release_arg) after freeing the plans. */
    void (*release)(void *arg);
    void *release_arg;
    /* Control flow (cf.h): every vn_cf this model made, dead nodes' too (freed
     * with the model); the graph and level its subgraphs compile with. */
    struct vn_cf **cfs;
    int32_t num_cfs, cap_cfs;
    vn_graph *graph;
    int32_t opt_level;
    int32_t precision; /* vn_precision (pass_precision.c); subgraphs inherit it */
};

/* ---- building (compile_build.c) ------------------------------------------------- */
/* A model under construction from the graph's main body: inputs bound to
 * `shapes`, constants known, nodes copied in topological order (Constant
 * nodes become constant values). No inference yet. */
typedef struct vn_cg_values {
    const vn_named_tensor *v; /* inputs to specialise on (vn_model_compile_specialised) */
    int32_t n;
} vn_cg_values;
vn_status vn_cg_build(vn_graph *g, const vn_compile_options *opt, vn_model **out);
/* The same, with `values`' small integer inputs made constants (a new
 * constant value takes over every read; the input stays). */
vn_status vn_cg_build_specialised(vn_graph *g, const vn_compile_options *opt, vn_cg_values values,
                                  vn_model **out);
/* A model under construction from subgraph `body` (If / Loop / Scan, cf.h):
 * its inputs are the body's inputs, then the outer values it reads (in the
 * order of vn_cf_outer_values), with descriptors `descs`; inputs whose
 * `data` is non-NULL are constants (specialised: the input stays). `name`
 * prefixes its messages. */
vn_status vn_cg_build_body(vn_graph *g, const vn_gbody *body, const vn_compile_options *opt,
                           const char *name, const vn_tensor_desc *descs, const void *const *data,
                           int32_t num, vn_model **out);
/* Passes, plans and memory plan of a built model: what vn_model_compile does
 * after building (compile.c); the model is final on success. */
vn_status vn_cg_compile_built(vn_model *m, int32_t level);
/* Whether compiles specialise on input tensor t (vn_model_compile_specialised). */
bool vn_cg_specialisable(const vn_tensor *t);
/* Add an anonymous or named value; returns its index or -1. */
int32_t vn_cg_add_value(vn_model *m, const char *name, int32_t kind);
/* "node 'n' (Op)" / "node #3 (Op)". */
const char *vn_cg_label(const vn_model *m, int32_t node, char *buf, size_t size);
/* Make value v a constant holding `data` (copied into the model). */
vn_status vn_cg_set_const(vn_model *m, int32_t v, const vn_tensor_desc *desc, const void *data);
/* Replace every read of value `from` by live nodes with `to`. */
void vn_cg_replace_uses(vn_model *m, int32_t from, int32_t to);
/* Live nodes reading value v (counting repeats). */
int32_t vn_cg_num_uses(const vn_model *m, int32_t v);

/* ---- inference (compile_infer.c) ------------------------------------------------- */
/* Infer node's outputs with constant inputs' data visible (vn_op_ctx.input_data);
 * gives the node its def->num_outputs outputs. Errors name node, op, shapes. */
vn_status vn_cg_infer_node(vn_model *m, int32_t node);
/* Fill `ctx` for `node` (descs and const data into the caller's arrays of 64). */
void vn_cg_op_ctx(const vn_model *m, int32_t node, vn_tensor_desc *in, const void **data,
                  vn_attrs *attrs, vn_op_ctx *ctx);

/* ---- passes (pass_*.c, fold_*.c; driven by pass_manager.c) ----------------------- */
/* A graph pass rewrites the whole model; a node pass looks at one freshly
 * inferred node and returns with *changed set when it replaced the node. */
typedef vn_status (*vn_graph_pass_fn)(vn_model *m, vn_pass_report *r);
typedef vn_status (*vn_node_pass_fn)(vn_model *m, int32_t node, vn_pass_report *r, bool *changed);

vn_status vn_pass_identity(vn_model *m, vn_pass_report *r);   /* Identity, Dropout (inference) */
vn_status vn_pass_dead_nodes(vn_model *m, vn_pass_report *r); /* nodes no output depends on */
vn_status vn_fold_shape(vn_model *m, int32_t node, vn_pass_report *r, bool *changed);
vn_status vn_fold_const(vn_model *m, int32_t node, vn_pass_report *r, bool *changed);
/* Record one change in a report ("name" appended to detail while it fits). */
void vn_pass_note(vn_pass_report *r, const char *what);

/* Inference of every node with the level's passes, then the precision pass;
 * fills m->stats.reports. */
vn_status vn_pass_run_all(vn_model *m, int32_t level);
/* m->precision bf16: f32 matrix products get attribute compute = "bf16". */
vn_status vn_pass_precision(vn_model *m, vn_pass_report *r);

/* ---- packed constants (compile_release.c) ------------------------------------------ */
/* Node i's packed constants through its operator's pre-pack hook (vinci/ops.h);
 * *consumed the inputs they replace. Returns the blob count (0: none). */
int32_t vn_cg_node_blobs(const vn_model *m, int32_t i, vn_op_blob *blobs, uint64_t *consumed);
/* Per value: a constant that is read, only through inputs `consumed` (per
 * node) marks replaced, and is no model output. */
void vn_cg_packed_only(const vn_model *m, const uint64_t *consumed, bool *packed_only);
/* After planning: model-owned constants every reader holds packed give their
 * pages back and become packed-only (graph initializers stay: the graph may
 * compile again). Best effort: out of memory releases nothing. */
void vn_cg_release_packed(vn_model *m);

/* ---- views (compile_views.c) -------------------------------------------------------- */
/* Reshape, Flatten, Squeeze, Unsqueeze, Identity: one output, the input's bytes. */
bool vn_cg_is_view(const vn_cnode *n);
/* O1+, after the passes: a view of a constant becomes a constant sharing its
 * bytes (the node dies; the source keeps its bytes for good). */
void vn_cg_const_views(vn_model *m);
/* Node i is a view whose output's memory (class, offset, io index) is its
 * input's: how a loaded model recognises the aliases its compiler made. */
bool vn_cg_view_shares(const vn_model *m, int32_t i);

/* ---- concatenation in place (compile_concat.c) --------------------------------------- */
/* Node i is a Concat the memory plan can build in place: its inputs are
 * consecutive byte ranges of its output, each an arena value a kernel writes
 * and no other in-place Concat has claimed (claimed[v]). */
bool vn_cg_concat_in_place(const vn_model *m, int32_t i, const bool *claimed);
/* Node i is a Concat whose inputs lie at consecutive offsets of its output:
 * how a loaded model recognises the in-place Concats its compiler made. */
bool vn_cg_concat_shares(const vn_model *m, int32_t i);

/* ---- nodes that run at once (compile_groups.c) ------------------------------------- */
/* VINCI_CONCURRENT_NODES=1 in the environment (read once): off by default,
 * as on the 2-CPU host it was measured on every model ran slower with it. */
bool vn_cg_groups_wanted(void);
/* Node i may run beside others: a kernel node with no alias, control flow,
 * dynamic value or model output. */
bool vn_cg_group_candidate(const vn_model *m, int32_t i);
/* O3, before planning: moves branches next to each other; returns how many moved. */
int32_t vn_cg_schedule_branches(vn_model *m);
/* For the memory plan: the steps node i lives at (its candidate group's first
 * and last node: a group's members share their lifetimes). */
void vn_cg_group_span(const vn_model *m, int32_t *first, int32_t *last);
/* Final model: keeps the groups whose planned memory allows them (sets each
 * node's concurrent and ws_offset) and sizes the workspace for them; returns
 * how many groups. */
int32_t vn_cg_plan_groups(vn_model *m);

/* ---- memory (compile_memory.c) ---------------------------------------------------- */
/* Assign every value its memory class; arena offsets from the static plan. */
vn_status vn_cg_plan_memory(vn_model *m);
/* Records what a compile step did as a pass would ("<count> <what>"; vinci
 * compile prints the reports); nothing when count is 0. */
void vn_cg_report(vn_model *m, const char *pass, int32_t count, const char *what);

/* ---- execution (exec.c) ------------------------------------------------------------- */
/* Run every node with the context's bound pointers (the caller's thread). */
vn_status vn_exec_nodes(const vn_model *m, vn_model_ctx *ctx);
/* Value v as this run sees it: its run-time descriptor when dynamic. */
vn_tensor vn_exec_value(const vn_model *m, const vn_model_ctx *ctx, int32_t v);
/* Where node output v with run-time descriptor d goes: its planned memory
 * (d must be its compiled descriptor) or, for a dynamic value, the
 * context's buffer, grown to fit. */
vn_status vn_exec_output(const vn_model *m, vn_model_ctx *ctx, int32_t v, const vn_tensor_desc *d,
                         void **out);
/* Run with inputs by position (descriptors must be the compiled ones) and
 * outputs into dst[i] where given (non-dynamic outputs only), else the
 * context's buffers; read them with vn_exec_result. */
vn_status vn_exec_run_positional(const vn_model *m, vn_model_ctx *ctx, const vn_tensor *inputs,
                                 void *const *dst);
/* Output i of the last run (run-time descriptor when dynamic). */
vn_tensor vn_exec_result(const vn_model *m, const vn_model_ctx *ctx, int32_t i);

#endif /* VINCI_GRAPH_COMPILE_H */
