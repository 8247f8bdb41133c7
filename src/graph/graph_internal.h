/*
 * graph_internal.h — the steps between reading and using a graph, shared by
 * the files of this layer.
 */
#ifndef VINCI_GRAPH_INTERNAL_H
#define VINCI_GRAPH_INTERNAL_H

#include "graph/ir.h"

/* Per node of `b` and its subgraphs: the imported opset, the registry entry,
 * the registry's view of the attributes, and Constant values (graph_prepare.c). */
vn_status vn_graph_prepare_nodes(vn_graph *g, vn_gbody *b);

/* Operators the graph engine handles itself (no registry entry needed). */
bool vn_graph_builtin_op(const vn_gnode *n);

/* Operators the graph engine provides when the registry lacks them
 * (Identity, Dropout, Shape, Size: exec_builtin.c); NULL otherwise. */
const vn_op_def *vn_graph_engine_op(const char *op_type, const char *domain);

/* A Constant node's value (ir_constant.c). */
vn_status vn_ir_constant_value(vn_graph *g, vn_gbody *b, int32_t node, vn_gconst **out);

/* Walk every node of g (main graph first, then subgraphs, depth first). */
typedef vn_status (*vn_graph_node_fn)(vn_gbody *b, int32_t node, void *user);
vn_status vn_graph_walk(vn_gbody *b, vn_graph_node_fn fn, void *user);

/* Fill g->op_counts (graph_ops.c). */
vn_status vn_graph_count_ops(vn_graph *g);
/* The opset version imported for `domain` ("" = default). */
int64_t vn_graph_domain_opset(const vn_graph *g, const char *domain);

/* VN_ERR_UNSUPPORTED listing every operator the registry lacks, or VN_OK. */
vn_status vn_graph_check_supported(const vn_graph *g);

#endif /* VINCI_GRAPH_INTERNAL_H */
