/*
 * infer.h — shape and dtype inference over a graph (infer.c, infer_bind.c).
 */
#ifndef VINCI_GRAPH_INFER_H
#define VINCI_GRAPH_INFER_H

#include "graph_internal.h"

/* Give every main-graph input a concrete descriptor (see vn_graph_infer). */
vn_status vn_infer_bind_inputs(vn_graph *g, const vn_input_shape *shapes, int32_t n);

/* Infer one node's outputs from its known inputs with its registry entry. */
vn_status vn_infer_node(vn_graph *g, vn_gbody *b, int32_t node);

#endif /* VINCI_GRAPH_INFER_H */
