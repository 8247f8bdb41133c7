/*
 * pass_dead.c — dead-node removal: a node none of whose outputs a graph
 * output depends on is removed. One backward sweep suffices because nodes
 * are in topological order: every reader of a node's outputs comes later.
 */
#include <stdlib.h>

#include "graph/compile.h"

vn_status vn_pass_dead_nodes(vn_model *m, vn_pass_report *r)
{
    bool *needed = calloc((size_t)m->num_values + 1, sizeof *needed);
    if (!needed)
        return vn_error(VN_ERR_OUT_OF_MEMORY, "vn_model_compile", "%s: no memory", m->name);
    for (int32_t i = 0; i < m->num_outputs; i++) needed[m->outputs[i]] = true;
    for (int32_t i = m->num_nodes - 1; i >= 0; i--) {
        vn_cnode *n = &m->nodes[i];
        if (n->dead) continue;
        bool live = false;
        for (int32_t k = 0; k < n->num_outputs && !live; k++)
            live = n->outputs[k] >= 0 && needed[n->outputs[k]];
        if (!live) {
            char label[256];
            n->dead = true;
            vn_pass_note(r, vn_cg_label(m, i, label, sizeof label));
            continue;
        }
        for (int32_t k = 0; k < n->num_inputs; k++)
            if (n->inputs[k] >= 0) needed[n->inputs[k]] = true;
    }
    free(needed);
    return VN_OK;
}
