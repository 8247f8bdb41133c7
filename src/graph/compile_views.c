/*
 * compile_views.c — views: operators whose output is their input's bytes
 * under another shape (Reshape, Flatten, Squeeze, Unsqueeze, Identity).
 *
 * From O1 on a view copies nothing. A view of a constant becomes a constant
 * sharing the source's bytes (here, before the plans, so the readers' plans
 * see constant data and may pack it). A view of an activation or a model
 * input is aliased by the memory plan (compile_memory.c): its output gets
 * its input's memory, the node stays (a loaded model re-infers it, which
 * checks its shapes) but runs as one pointer assignment (exec.c).
 */
#include <string.h>

#include "graph/compile.h"

bool vn_cg_is_view(const vn_cnode *n)
{
    static const char *const ops[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    if ((n->domain && n->domain[0]) || n->num_outputs != 1 || n->num_inputs < 1 ||
        n->inputs[0] < 0 || n->outputs[0] < 0)
        return false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(n->op_type, ops[i])) return true;
    return false;
}

void vn_cg_const_views(vn_model *m)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        vn_cnode *n = &m->nodes[i];
        if (n->dead || !vn_cg_is_view(n)) continue;
        vn_cvalue *x = &m->values[n->inputs[0]], *y = &m->values[n->outputs[0]];
        if (x->kind != VN_CV_CONST || x->packed_only || !y->known ||
            x->nbytes != vn_cg_desc_bytes(&y->desc))
            continue;
        /* y's bytes are x's: the model must never give x's pages back
         * (compile_release.c), whatever reads x packed. */
        x->owned = false;
        y->kind = VN_CV_CONST;
        y->data = x->data;
        y->nbytes = x->nbytes;
        y->owned = false;
        y->producer = -1;
        n->dead = true;
    }
}

bool vn_cg_view_shares(const vn_model *m, int32_t i)
{
    const vn_cnode *n = &m->nodes[i];
    if (!vn_cg_is_view(n)) return false;
    const vn_cvalue *x = &m->values[n->inputs[0]], *y = &m->values[n->outputs[0]];
    if (x->mem == VN_MEM_ARENA && y->mem == VN_MEM_ARENA) return x->offset == y->offset;
    return x->mem == VN_MEM_INPUT && y->mem == VN_MEM_INPUT && x->io_index == y->io_index;
}
