/*
 * exec.h — a run's context (exec.c, exec_async.c).
 */
#ifndef VINCI_GRAPH_EXEC_H
#define VINCI_GRAPH_EXEC_H

#include <stdatomic.h>

#include "graph/compile.h"

struct vn_model_ctx {
    const vn_model *model;
    void *arena;             /* model->arena_bytes, 64-byte aligned */
    void *workspace;         /* model->workspace_bytes: a node's slice at its ws_offset */
    void **ptr;              /* per value: where its bytes are in this run */
    void **own_out;          /* per output: the context's buffer */
    void **out_dst;          /* per output: where this run writes it */
    vn_tensor *in_t, *out_t; /* a node's tensors: VN_GROUP_MAX lanes of max_io + 1 */
    /* Dynamic values (cf.h): per value, the run-time descriptor and a buffer
     * grown to fit; per node, the control-flow state (its bodies' contexts). */
    vn_tensor_desc *dyn_desc;
    void **dyn_buf;
    size_t *dyn_cap;
    struct vn_cf_ctx **cf;
    vn_tensor_desc *out_want; /* per output: the caller's descriptor (dynamic outputs) */
    atomic_bool busy;         /* an asynchronous run is pending */
    vn_status async_status;   /* of the last asynchronous run */
    char async_msg[1024];
};

/* Check the arguments and point ctx->ptr / out_dst at this run's memory. */
vn_status vn_exec_bind(const vn_model *m, vn_model_ctx *ctx, const vn_named_tensor *inputs,
                       int32_t ni, vn_named_tensor *outputs, int32_t no, const char *where);

#endif /* VINCI_GRAPH_EXEC_H */
