/*
 * cf.h — control flow: the If, Loop and Scan nodes of compiled models.
 *
 * A control-flow node keeps its subgraphs (vn_gbody, borrowed from the graph
 * like names and initializers). Each subgraph is compiled as a model of its
 * own — normal passes, plans, memory plan — whose inputs are the subgraph's
 * inputs followed by the outer values it reads (vn_cf_outer_values). Those
 * models are compiled per set of input descriptors and cached in the node
 * (cf_cache.c), like the top-level compile cache: the first at compile time
 * (for the shapes the outer model sees), more at run time when a loop-carried
 * value changes shape or an input's shape is known only at run time.
 *
 * The node's own outputs get their shapes at compile time when the subgraphs
 * determine them (cf_infer.c); otherwise (If branches of different shapes, a
 * Loop whose trip count or carried shapes depend on data) the output is
 * dynamic (vn_cvalue.dynamic): it lives in a context buffer sized per run.
 *
 * The outer values a subgraph reads are inputs of the node past
 * cf->num_explicit, so lifetimes, dead-node removal and input renaming treat
 * them like any input; each body maps its outer values to those positions.
 */
#ifndef VINCI_GRAPH_CF_H
#define VINCI_GRAPH_CF_H

#include <pthread.h>

#include "graph/compile.h"

enum { VN_CF_IF = 1, VN_CF_LOOP, VN_CF_SCAN };

#define VN_CF_MAX_MODELS 1024 /* compiled shape sets per subgraph */

typedef struct vn_cf_entry {
    vn_tensor_desc *key; /* the inputs' descriptors */
    void *values;        /* specialised bodies: the specialised inputs' bytes, in order */
    size_t num_bytes;
    vn_model *model;
} vn_cf_entry;

typedef struct vn_cf_body {
    const vn_gbody *body;
    const char *attr;     /* "then_branch", "else_branch", "body" */
    char name[320];       /* message prefix: "m.onnx: node 'l' (Loop) body" */
    int32_t num_inputs;   /* the body's own inputs */
    int32_t num_outer;    /* outer values it reads */
    int32_t *outer_pos;   /* per outer value: its input index in the node */
    bool specialise;      /* the body compiles only with its small integer inputs' values
                             known (Slice starts from the iteration number...): compiled per
                             value too, as `vinci run` does for a model's inputs */
    pthread_mutex_t lock; /* guards entries and specialise (runs on several threads compile) */
    vn_cf_entry *entries;
    int32_t num_entries, cap_entries;
} vn_cf_body;

typedef struct vn_cf {
    int32_t kind;         /* VN_CF_* */
    int32_t num_explicit; /* the node's ONNX inputs (omitted ones are -1) */
    int32_t num_bodies;
    vn_cf_body bodies[2]; /* If: then, else; Loop / Scan: body */
    /* Scan: */
    int64_t opset;
    int32_t num_scan_inputs;
    int64_t *in_axes, *in_dirs, *out_axes, *out_dirs; /* normalised by cf_infer.c */
    /* Loop (cf_infer.c): the trip count when known at compile time, else -1. */
    int64_t static_trips;
    vn_graph *graph;
    int32_t opt_level;
    int32_t precision; /* the outer model's (vn_precision) */
    vn_device *device;
} vn_cf;

/* The control-flow kind of an ONNX op (0: none). */
int32_t vn_cf_kind(const char *op_type, const char *domain);
/* The stub registry-style defs that mark If / Loop / Scan supported
 * (exec_builtin.c lists them); they never run (a node has a vn_cf). */
const vn_op_def *vn_cf_def(const char *op_type);

/* ---- building (cf_build.c) ----------------------------------------------------- */
/* The outer values `body` reads, in the order its model takes them: body
 * value indices into `out` (count returned; out may be NULL to count). */
int32_t vn_cf_outer_values(const vn_gbody *body, int32_t *out);
/* Give node n (built from gnode src of body b, its inputs already the explicit
 * ones then src->implicit) its vn_cf; registered in m->cfs. */
vn_status vn_cf_create(vn_model *m, const vn_gbody *b, const vn_gnode *src, int32_t node,
                       int32_t num_explicit);
void vn_cf_free(vn_cf *cf);

/* ---- compiled subgraphs (cf_cache.c) ------------------------------------------ */
/* The model of body `cb` for these inputs (the body's inputs, then its
 * outer values), compiled on first use; fixed[k]: input k is a constant of
 * the outer model (its data never changes). in[k].data may be NULL when not
 * known yet (compile time). The model is owned by the cache; *specialised
 * (may be NULL): it was compiled for these inputs' values. */
vn_status vn_cf_body_model(const vn_cf *cf, vn_cf_body *cb, const vn_tensor *in, const bool *fixed,
                           const vn_model **out, bool *specialised);

/* ---- inference (cf_infer.c) ---------------------------------------------------- */
/* Output descriptors of control-flow node `node` (dynamic where the subgraphs
 * leave them open); errors name the node. */
vn_status vn_cf_infer(vn_model *m, int32_t node);

/* O1: run a node whose inputs are all constants once; its outputs become
 * constants (cf_fold.c). A node pass (vn_node_pass_fn). */
vn_status vn_cf_fold(vn_model *m, int32_t node, vn_pass_report *r, bool *changed);

/* ---- running (cf_run.c, cf_if.c, cf_loop.c, cf_scan.c) -------------------------- */
/* Per context and control-flow node: the contexts of its bodies' models. */
typedef struct vn_cf_ctx vn_cf_ctx;
void vn_cf_ctx_free(vn_cf_ctx *c);

/* Run body `b` of node `node` with its own inputs `formal` (the outer values
 * come from the outer context); outputs into dst[i] where given. *sub and
 * *sctx: the model that ran and its context, for vn_exec_result. */
vn_status vn_cf_run_body(const vn_model *m, vn_model_ctx *c, int32_t node, int32_t b,
                         const vn_tensor *formal, void *const *dst, const vn_model **sub,
                         vn_model_ctx **sctx);
/* The model body `b` of node `node` has for `formal` (compiled if needed). */
vn_status vn_cf_body_for(const vn_model *m, vn_model_ctx *c, int32_t node, int32_t b,
                         const vn_tensor *formal, const vn_model **sub);
/* Hand a result to node output k: copied into its memory (dynamic: sized). */
vn_status vn_cf_deliver(const vn_model *m, vn_model_ctx *c, int32_t node, int32_t k,
                        const vn_tensor *t);
/* A constant of the outer model (its bytes never change). */
bool vn_cf_fixed(const vn_cvalue *v);
/* "m.onnx: node 'x' (Loop)" for messages. */
const char *vn_cf_label(const vn_model *m, int32_t node, char *buf, size_t size);
/* A scalar condition / count input: numel 1 of dtype `want`, else an error. */
vn_status vn_cf_scalar(const vn_model *m, int32_t node, const char *what, const vn_tensor *t,
                       vn_dtype want, int64_t *value);

vn_status vn_cf_run(const vn_model *m, vn_model_ctx *c, int32_t node);
vn_status vn_cf_if_run(const vn_model *m, vn_model_ctx *c, int32_t node);
vn_status vn_cf_loop_run(const vn_model *m, vn_model_ctx *c, int32_t node);
vn_status vn_cf_scan_run(const vn_model *m, vn_model_ctx *c, int32_t node);

/* A tensor the run owns (loop-carried values, scan outputs being stacked). */
typedef struct vn_cf_buf {
    vn_tensor t;
    size_t cap;
} vn_cf_buf;
/* Copy src into b (grown to fit; b takes src's descriptor). */
vn_status vn_cf_buf_put(vn_cf_buf *b, const vn_tensor *src);
/* Make b hold at least `bytes` (contents kept). */
vn_status vn_cf_buf_reserve(vn_cf_buf *b, size_t bytes);
void vn_cf_buf_free(vn_cf_buf *b);

/* d without dimension `axis` / with a dimension of n inserted at `axis`. */
vn_tensor_desc vn_cf_drop_dim(const vn_tensor_desc *d, int64_t axis);
vn_tensor_desc vn_cf_add_dim(const vn_tensor_desc *d, int64_t axis, int64_t n);

/* Copy slice `index` of a tensor cut along an axis: `outer` blocks of `inner`
 * bytes, `count` slices per block (cf_scan.c). to_whole: slice -> whole. */
void vn_cf_slice_copy(void *whole, void *slice, size_t outer, size_t inner, int64_t count,
                      int64_t index, bool to_whole);

#endif /* VINCI_GRAPH_CF_H */
