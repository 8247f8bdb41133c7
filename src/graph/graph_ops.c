/*
 * graph_ops.c — the operator histogram over the main graph and every
 * subgraph: what `vinci info` prints and what the unsupported-operator
 * report is built from.
 */
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

static vn_status count_node(vn_gbody *b, int32_t node, void *user)
{
    vn_graph *g = user;
    const vn_gnode *n = &b->nodes[node];
    for (int32_t i = 0; i < g->num_op_types; i++) {
        vn_op_count *c = &g->op_counts[i];
        if (!strcmp(c->op_type, n->op_type) && !strcmp(c->domain, n->domain)) {
            c->count++;
            return VN_OK;
        }
    }
    void *a = g->op_counts;
    if (vn_gmem_grow(&g->mem, &a, &g->cap_op_types, g->num_op_types + 1, sizeof(vn_op_count)))
        return VN_ERR_OUT_OF_MEMORY;
    g->op_counts = a;
    g->op_counts[g->num_op_types++] =
        (vn_op_count){n->op_type, n->domain, 1, n->def != NULL || vn_graph_builtin_op(n)};
    return VN_OK;
}

static int by_count(const void *pa, const void *pb)
{
    const vn_op_count *a = pa, *b = pb;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    int d = strcmp(a->domain, b->domain);
    return d ? d : strcmp(a->op_type, b->op_type);
}

vn_status vn_graph_count_ops(vn_graph *g)
{
    g->num_op_types = 0;
    vn_status st = vn_graph_walk(g->main, count_node, g);
    if (st == VN_OK && g->num_op_types > 1)
        qsort(g->op_counts, (size_t)g->num_op_types, sizeof *g->op_counts, by_count);
    return st;
}
