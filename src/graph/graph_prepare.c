/*
 * graph_prepare.c — after linking, each node learns its opset version and
 * registry entry, gets the registry's view of its attributes, and a Constant
 * node's output becomes a known constant value.
 */
#include <string.h>

#include "graph_internal.h"

vn_status vn_graph_walk(vn_gbody *b, vn_graph_node_fn fn, void *user)
{
    for (int32_t n = 0; n < b->num_nodes; n++) {
        vn_status st = fn(b, n, user);
        if (st != VN_OK) return st;
        const vn_gnode *node = &b->nodes[n];
        for (int32_t a = 0; a < node->num_attrs; a++) {
            const vn_gattr *at = &node->attrs[a];
            if (at->type != VN_GATTR_GRAPH && at->type != VN_GATTR_GRAPHS) continue;
            for (int32_t g = 0; g < at->count; g++)
                if ((st = vn_graph_walk(at->graphs[g], fn, user)) != VN_OK) return st;
        }
    }
    return VN_OK;
}

bool vn_graph_builtin_op(const vn_gnode *n)
{
    return !n->domain[0] && strcmp(n->op_type, "Constant") == 0;
}

int64_t vn_graph_domain_opset(const vn_graph *g, const char *domain)
{
    for (int32_t i = 0; i < g->num_opsets; i++)
        if (strcmp(g->opsets[i].domain, domain) == 0) return g->opsets[i].version;
    return 0;
}

static vn_status prepare_node(vn_gbody *b, int32_t node, void *user)
{
    vn_graph *g = user;
    vn_gnode *n = &b->nodes[node];
    n->opset = vn_graph_domain_opset(g, n->domain);
    n->def = vn_graph_builtin_op(n) ? NULL : vn_op_find(n->op_type, n->domain);
    if (!n->def && !vn_graph_builtin_op(n)) n->def = vn_graph_engine_op(n->op_type, n->domain);
    vn_status st = vn_ir_registry_attrs(g, n);
    if (st != VN_OK || !vn_graph_builtin_op(n)) return st;
    vn_gconst *c;
    if ((st = vn_ir_constant_value(g, b, node, &c)) != VN_OK) return st;
    int32_t v = n->outputs[0];
    if (v < 0) return VN_OK;
    b->values[v].constant = c;
    b->values[v].info.desc = c->desc;
    b->values[v].info.onnx_dtype = c->onnx_dtype;
    b->values[v].desc = c->desc;
    b->values[v].known = true;
    return VN_OK;
}

vn_status vn_graph_prepare_nodes(vn_graph *g, vn_gbody *b)
{
    return vn_graph_walk(b, prepare_node, g);
}
