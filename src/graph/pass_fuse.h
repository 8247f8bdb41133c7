/*
 * pass_fuse.h — the O2 / O3 fusion passes (pass_fuse_*.c) and the helpers they
 * share (pass_fuse_util.c).
 *
 * Every fusion rewrites a group of nodes into one: the group's last node in
 * topological order (the "anchor") becomes the fused node in place, keeping
 * its output value, and the other members die. Every input of the fused node
 * was an input of some member, so it is produced before the anchor and the
 * node array stays an execution order (compile.h's invariant). A member other
 * than the anchor may only be absorbed when its output has exactly one reader
 * (inside the group) and is not a graph output, so no other node loses a value.
 *
 * The fusion passes run after inference (every value's desc is known) except
 * fold_batchnorm and fuse_qdq, which only need constants and run before it
 * (so the BatchNormalization never has to be inferred, and the QDQ weights are
 * still int8, not folded to f32).
 */
#ifndef VINCI_GRAPH_PASS_FUSE_H
#define VINCI_GRAPH_PASS_FUSE_H

#include "graph/compile.h"

vn_status vn_pass_fold_batchnorm(vn_model *m, vn_pass_report *r);
vn_status vn_pass_fuse_matmul(vn_model *m, vn_pass_report *r);
vn_status vn_pass_fuse_conv(vn_model *m, vn_pass_report *r);
vn_status vn_pass_fuse_elementwise(vn_model *m, vn_pass_report *r);
/* O3, before the O2 fusions (pass_manager.c) */
vn_status vn_pass_fuse_attention(vn_model *m, vn_pass_report *r);
vn_status vn_pass_fuse_gelu(vn_model *m, vn_pass_report *r);
vn_status vn_pass_fuse_norm(vn_model *m, vn_pass_report *r);
vn_status vn_pass_fuse_softmax_scale(vn_model *m, vn_pass_report *r);
/* O3, before inference with fold_batchnorm (constant folding would turn the
 * int8 weights into f32): QDQ Conv / MatMul -> QLinearConv / QLinearMatMul */
vn_status vn_pass_fuse_qdq(vn_model *m, vn_pass_report *r);
vn_status vn_pass_fuse_pool(vn_model *m, vn_pass_report *r);
/* O3, after layout propagation: pointwise conv + depthwise conv -> one
 * FusedConvNC1HWC0 with dw_ attributes (pass_fuse_dw.c) */
vn_status vn_pass_fuse_dw(vn_model *m, vn_pass_report *r);

/* ---- helpers (pass_fuse_util.c) ----------------------------------------------------- */
#define VN_FUSE_MAX_MEMBERS 64

bool vn_fuse_is_output(const vn_model *m, int32_t v);
/* v is an activation read by exactly one live node and not a graph output;
 * returns that node, or -1. */
int32_t vn_fuse_sole_reader(const vn_model *m, int32_t v);
/* Are node n's outputs past the first (e.g. MaxPool's Indices) absent or unread? */
bool vn_fuse_extra_outputs_unread(const vn_model *m, const vn_cnode *n);
/* A live ONNX-domain node of op type `op`. */
bool vn_fuse_is_op(const vn_cnode *n, const char *op);
/* Value v is a constant with data whose dtype is `dtype`. */
bool vn_fuse_is_const(const vn_model *m, int32_t v, vn_dtype dtype);
/* The single element of a constant of numel 1 as double; false otherwise. */
bool vn_fuse_const_scalar(const vn_model *m, int32_t v, double *out);
/* Attribute lookups on a model node (fallback when absent). */
int64_t vn_fuse_attr_int(const vn_cnode *n, const char *name, int64_t fallback);
double vn_fuse_attr_float(const vn_cnode *n, const char *name, double fallback);
const char *vn_fuse_attr_str(const vn_cnode *n, const char *name, const char *fallback);
/* Append the string attribute name = value to n's attributes (a copy of the
 * list in the model's memory; name and value must outlive the model). */
vn_status vn_fuse_add_attr_str(vn_model *m, vn_cnode *n, const char *name, const char *value);
/* A new anonymous constant value holding `data` (copied); -1 on no memory. */
int32_t vn_fuse_new_const(vn_model *m, const vn_tensor_desc *desc, const void *data);

/* The attributes of a fused node: base's, then extra's with `prefix`
 * before each name (copied into the model's memory), in out[cap]. *count
 * is -1 when they do not fit; an error only when memory runs out (pass
 * names it). */
vn_status vn_fuse_prefixed_attrs(vn_model *m, const vn_cnode *base, const vn_cnode *extra,
                                 const char *prefix, vn_attr *out, int32_t cap, int32_t *count,
                                 const char *pass);

/* A rewrite of the anchor into a fused node. */
typedef struct vn_fuse_rewrite {
    const char *op_type, *domain, *name;
    const int32_t *inputs; /* -1 = omitted */
    int32_t num_inputs;
    const vn_attr *attrs; /* copied into the model */
    int32_t num_attrs;
    bool before_inference; /* true: not inferred here (the sweep infers it later) */
} vn_fuse_rewrite;

/* Rewrite `anchor` as `rw` and kill `members` (the anchor excluded; members[0]
 * names the change), after checking the fused node infers (its output keeps the anchor's shape and
 * dtype). On a refusal nothing changes and *done is false. Notes the change
 * in r as "<label of members[0]> + ... -> op". */
vn_status vn_fuse_apply(vn_model *m, int32_t anchor, const vn_fuse_rewrite *rw,
                        const int32_t *members, int32_t num_members, vn_pass_report *r, bool *done);

#endif /* VINCI_GRAPH_PASS_FUSE_H */
