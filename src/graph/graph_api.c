/*
 * graph_api.c — the public read-only view of a loaded graph (vinci/graph.h).
 */
#include <string.h>

#include "graph_internal.h"

#define NULL_GRAPH(w) vn_error(VN_ERR_INVALID_ARG, w, "graph or out is NULL")

int32_t vn_graph_num_inputs(const vn_graph *g)
{
    return g ? g->main->num_inputs : 0;
}
int32_t vn_graph_num_outputs(const vn_graph *g)
{
    return g ? g->main->num_outputs : 0;
}
int32_t vn_graph_num_nodes(const vn_graph *g)
{
    return g ? g->main->num_nodes : 0;
}
int32_t vn_graph_num_initializers(const vn_graph *g)
{
    return g ? g->main->num_inits : 0;
}
int32_t vn_graph_num_opsets(const vn_graph *g)
{
    return g ? g->num_opsets : 0;
}
int32_t vn_graph_num_op_types(const vn_graph *g)
{
    return g ? g->num_op_types : 0;
}

/* Declared info, with the inferred descriptor once the graph is inferred. */
static vn_status value_info(const vn_graph *g, int32_t v, vn_value_info *out)
{
    const vn_gvalue *val = &g->main->values[v];
    *out = val->info;
    out->name = val->name;
    if (g->inferred && val->known) out->desc = val->desc;
    return VN_OK;
}

static vn_status io(const vn_graph *g, int32_t index, vn_value_info *out, bool input, const char *w)
{
    if (!g || !out) return NULL_GRAPH(w);
    int32_t n = input ? g->main->num_inputs : g->main->num_outputs;
    if (index < 0 || index >= n)
        return vn_error(VN_ERR_INVALID_ARG, w, "index %d is outside 0..%d", (int)index, (int)n - 1);
    return value_info(g, input ? g->main->inputs[index] : g->main->outputs[index], out);
}

vn_status vn_graph_input(const vn_graph *g, int32_t index, vn_value_info *out)
{
    return io(g, index, out, true, "vn_graph_input");
}

vn_status vn_graph_output(const vn_graph *g, int32_t index, vn_value_info *out)
{
    return io(g, index, out, false, "vn_graph_output");
}

vn_status vn_graph_opset(const vn_graph *g, int32_t index, vn_opset *out)
{
    if (!g || !out) return NULL_GRAPH("vn_graph_opset");
    if (index < 0 || index >= g->num_opsets)
        return vn_error(VN_ERR_INVALID_ARG, "vn_graph_opset", "index %d is outside 0..%d",
                        (int)index, (int)g->num_opsets - 1);
    *out = g->opsets[index];
    return VN_OK;
}

int64_t vn_graph_opset_version(const vn_graph *g, const char *domain)
{
    if (!g) return 0;
    if (!domain || !strcmp(domain, "ai.onnx")) domain = "";
    return vn_graph_domain_opset(g, domain);
}

vn_status vn_graph_op_type(const vn_graph *g, int32_t index, vn_op_count *out)
{
    if (!g || !out) return NULL_GRAPH("vn_graph_op_type");
    if (index < 0 || index >= g->num_op_types)
        return vn_error(VN_ERR_INVALID_ARG, "vn_graph_op_type", "index %d is outside 0..%d",
                        (int)index, (int)g->num_op_types - 1);
    *out = g->op_counts[index];
    return VN_OK;
}

vn_status vn_graph_value_desc(const vn_graph *g, const char *name, vn_tensor_desc *out)
{
    if (!g || !out || !name)
        return vn_error(VN_ERR_INVALID_ARG, "vn_graph_value_desc", "graph, name or out is NULL");
    if (!g->inferred)
        return vn_error(VN_ERR_STATE, "vn_graph_value_desc", "%s: call vn_graph_infer first",
                        g->file);
    int32_t v = vn_ir_find(g->main, name);
    if (v < 0 || !g->main->values[v].known)
        return vn_error(VN_ERR_INVALID_ARG, "vn_graph_value_desc", "%s: no value named '%s'",
                        g->file, name);
    *out = g->main->values[v].desc;
    return VN_OK;
}
