/*
 * ir_link.c — from the names the reader collected to values with producers
 * and consumers. ONNX is SSA: each name is defined once (a graph input, an
 * initializer or one node output), and a subgraph may read names of the
 * bodies around it.
 */
#include <string.h>

#include "graph/ir.h"

#define W(b) ((b)->graph->file)

static vn_status add_inits(vn_gbody *b)
{
    for (int32_t i = 0; i < b->num_inits; i++) {
        vn_gconst *c = &b->inits[i];
        if (vn_ir_find(b, c->name) >= 0)
            return vn_error(VN_ERR_FORMAT, W(b), "graph '%s': initializer '%s' is defined twice",
                            b->name, c->name);
        int32_t v = vn_ir_add_value(b, c->name, VN_GV_INITIALIZER);
        if (v < 0) return VN_ERR_OUT_OF_MEMORY;
        b->values[v].constant = c;
        b->values[v].info.desc = c->desc;
        b->values[v].info.onnx_dtype = c->onnx_dtype;
        b->values[v].desc = c->desc;
        b->values[v].known = true;
    }
    return VN_OK;
}

static vn_status add_inputs(vn_gbody *b)
{
    b->inputs = vn_gmem_alloc(&b->graph->mem, (size_t)b->num_input_names * sizeof(int32_t) + 1);
    if (!b->inputs) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < b->num_input_names; i++) {
        const char *name = b->input_names[i];
        int32_t v = vn_ir_find(b, name);
        if (v >= 0 && b->values[v].kind == VN_GV_INITIALIZER)
            continue; /* IR < 4 lists initializers as inputs: they stay constants */
        if (v >= 0 || !name[0])
            return vn_error(VN_ERR_FORMAT, W(b), "graph '%s': input %d '%s' is %s", b->name, (int)i,
                            name, name[0] ? "declared twice" : "unnamed");
        if ((v = vn_ir_add_value(b, name, VN_GV_INPUT)) < 0) return VN_ERR_OUT_OF_MEMORY;
        b->values[v].info = b->input_infos[i];
        b->inputs[b->num_inputs++] = v;
    }
    return VN_OK;
}

static vn_status add_node_outputs(vn_gbody *b, int32_t n)
{
    vn_gnode *node = &b->nodes[n];
    char label[256];
    for (int32_t k = 0; k < node->num_outputs; k++) {
        const char *name = node->output_names[k];
        node->outputs[k] = -1;
        if (!name[0]) continue;
        int32_t v = vn_ir_find(b, name);
        if (v >= 0) {
            const vn_gvalue *old = &b->values[v];
            char other[256];
            return vn_error(VN_ERR_FORMAT, W(b), "%s: output '%s' is already defined by %s",
                            vn_ir_node_label(b, n, label, sizeof label), name,
                            old->producer >= 0
                                ? vn_ir_node_label(b, old->producer, other, sizeof other)
                            : old->kind == VN_GV_INPUT ? "a graph input"
                                                       : "an initializer");
        }
        if ((v = vn_ir_add_value(b, name, VN_GV_INTERMEDIATE)) < 0) return VN_ERR_OUT_OF_MEMORY;
        b->values[v].producer = n;
        b->values[v].producer_output = k;
        node->outputs[k] = v;
    }
    return VN_OK;
}

/* The value `name` as seen from `b`: its own, or an enclosing body's, which
 * becomes an OUTER value of `b`. -1 if no body defines it. */
static int32_t resolve(vn_gbody *b, const char *name)
{
    int32_t v = vn_ir_find(b, name);
    if (v >= 0) return v;
    for (vn_gbody *p = b->parent; p; p = p->parent) {
        int32_t pv = vn_ir_find(p, name);
        if (pv < 0) continue;
        if ((v = vn_ir_add_value(b, name, VN_GV_OUTER)) < 0) return -2;
        b->values[v].info = p->values[pv].info;
        b->values[v].info.name = name;
        return v;
    }
    return -1;
}

static vn_status link_node_inputs(vn_gbody *b, int32_t n)
{
    vn_gnode *node = &b->nodes[n];
    char label[256];
    for (int32_t k = 0; k < node->num_inputs; k++) {
        const char *name = node->input_names[k];
        node->inputs[k] = -1;
        if (!name[0]) continue;
        int32_t v = resolve(b, name);
        if (v == -2) return VN_ERR_OUT_OF_MEMORY;
        if (v < 0)
            return vn_error(VN_ERR_FORMAT, W(b),
                            "%s: input %d '%s' is not defined (no graph input, initializer or node "
                            "output has that name)",
                            vn_ir_node_label(b, n, label, sizeof label), (int)k, name);
        node->inputs[k] = v;
        vn_status st = vn_ir_add_consumer(b, v, n);
        if (st != VN_OK) return st;
    }
    return VN_OK;
}

static vn_status add_implicit(vn_gbody *b, int32_t n, int32_t v)
{
    vn_gnode *node = &b->nodes[n];
    for (int32_t i = 0; i < node->num_implicit; i++)
        if (node->implicit[i] == v) return VN_OK;
    void *a = node->implicit;
    if (vn_gmem_grow(&b->graph->mem, &a, &node->cap_implicit, node->num_implicit + 1,
                     sizeof(int32_t)))
        return VN_ERR_OUT_OF_MEMORY;
    node->implicit = a;
    node->implicit[node->num_implicit++] = v;
    return vn_ir_add_consumer(b, v, n);
}

/* Link the node's subgraphs; the outer names they read become implicit inputs
 * of the node, so the node is ordered after their producers. */
static vn_status link_subgraphs(vn_gbody *b, int32_t n)
{
    for (int32_t a = 0; a < b->nodes[n].num_attrs; a++) {
        const vn_gattr *at = &b->nodes[n].attrs[a];
        if (at->type != VN_GATTR_GRAPH && at->type != VN_GATTR_GRAPHS) continue;
        for (int32_t g = 0; g < at->count; g++) {
            vn_gbody *sub = at->graphs[g];
            vn_status st = vn_ir_link(sub);
            if (st != VN_OK) return st;
            for (int32_t v = 0; v < sub->num_values; v++) {
                if (sub->values[v].kind != VN_GV_OUTER) continue;
                int32_t mine = resolve(b, sub->values[v].name);
                if (mine < 0) return VN_ERR_OUT_OF_MEMORY; /* sub found it, so we must */
                if ((st = add_implicit(b, n, mine)) != VN_OK) return st;
            }
        }
    }
    return VN_OK;
}

static vn_status link_outputs(vn_gbody *b)
{
    b->outputs = vn_gmem_alloc(&b->graph->mem, (size_t)b->num_output_names * sizeof(int32_t) + 1);
    if (!b->outputs) return VN_ERR_OUT_OF_MEMORY;
    for (int32_t i = 0; i < b->num_output_names; i++) {
        int32_t v = resolve(b, b->output_names[i]);
        if (v == -2) return VN_ERR_OUT_OF_MEMORY;
        if (v < 0)
            return vn_error(VN_ERR_FORMAT, W(b), "graph '%s': output %d '%s' is not produced",
                            b->name, (int)i, b->output_names[i]);
        vn_gvalue *val = &b->values[v];
        val->is_output = true;
        if (!val->known && b->output_infos[i].desc.rank >= 0) val->info = b->output_infos[i];
        val->info.name = val->name;
        b->outputs[b->num_outputs++] = v;
    }
    return VN_OK;
}

static void apply_value_infos(vn_gbody *b)
{
    for (int32_t i = 0; i < b->num_value_infos; i++) {
        int32_t v = vn_ir_find(b, b->value_infos[i].name);
        if (v < 0 || b->values[v].known || b->values[v].info.desc.rank >= 0) continue;
        b->values[v].info = b->value_infos[i];
        b->values[v].info.name = b->values[v].name;
    }
}

vn_status vn_ir_link(vn_gbody *b)
{
    vn_status st = add_inits(b);
    if (st == VN_OK) st = add_inputs(b);
    for (int32_t n = 0; n < b->num_nodes && st == VN_OK; n++) st = add_node_outputs(b, n);
    for (int32_t n = 0; n < b->num_nodes && st == VN_OK; n++) st = link_node_inputs(b, n);
    for (int32_t n = 0; n < b->num_nodes && st == VN_OK; n++) st = link_subgraphs(b, n);
    if (st == VN_OK) st = link_outputs(b);
    if (st != VN_OK) return st;
    apply_value_infos(b);
    return vn_ir_topo_sort(b);
}
