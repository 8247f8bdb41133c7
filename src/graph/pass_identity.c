/*
 * pass_identity.c — Identity and inference-mode Dropout removal: readers of
 * the output read the input instead.
 *
 * When the output is a graph output the name must survive: if the input is
 * an intermediate value that is not itself a graph output, its producer
 * writes the output value directly ("renamed"); otherwise (a graph input or
 * constant passed straight through, or two outputs) the node stays and runs
 * as a copy.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "graph/compile.h"

static bool is_graph_output(const vn_model *m, int32_t v)
{
    for (int32_t i = 0; i < m->num_outputs; i++)
        if (m->outputs[i] == v) return true;
    return false;
}

/* Dropout is an identity when its mask is unused and training_mode is
 * absent or a constant false. */
static bool dropout_is_identity(const vn_model *m, const vn_cnode *n)
{
    if (n->num_outputs > 1 && n->outputs[1] >= 0 &&
        (vn_cg_num_uses(m, n->outputs[1]) > 0 || is_graph_output(m, n->outputs[1])))
        return false;
    if (n->num_inputs < 3 || n->inputs[2] < 0) return true;
    const vn_cvalue *t = &m->values[n->inputs[2]];
    return t->kind == VN_CV_CONST && t->desc.dtype == VN_BOOL && t->nbytes == 1 &&
           ((const uint8_t *)t->data)[0] == 0;
}

static bool removable(const vn_model *m, const vn_cnode *n)
{
    if (n->domain[0] || n->num_inputs < 1 || n->inputs[0] < 0 || n->num_outputs < 1 ||
        n->outputs[0] < 0)
        return false;
    if (!strcmp(n->op_type, "Identity")) return true;
    return !strcmp(n->op_type, "Dropout") && dropout_is_identity(m, n);
}

/* Returns true when node i was removed. */
static bool remove_one(vn_model *m, int32_t i)
{
    vn_cnode *n = &m->nodes[i];
    int32_t x = n->inputs[0], y = n->outputs[0];
    if (!is_graph_output(m, y)) {
        n->dead = true;
        vn_cg_replace_uses(m, y, x);
        m->values[y].producer = -1;
        return true;
    }
    const vn_cvalue *xv = &m->values[x];
    if (xv->kind != VN_CV_ACT || xv->producer < 0 || is_graph_output(m, x)) return false;
    vn_cnode *p = &m->nodes[xv->producer];
    for (int32_t k = 0; k < p->num_outputs; k++)
        if (p->outputs[k] == x) p->outputs[k] = y;
    n->dead = true;
    m->values[y].producer = xv->producer;
    m->values[x].producer = -1;
    vn_cg_replace_uses(m, x, y);
    return true;
}

vn_status vn_pass_identity(vn_model *m, vn_pass_report *r)
{
    for (int32_t i = 0; i < m->num_nodes; i++) {
        if (m->nodes[i].dead || !removable(m, &m->nodes[i])) continue;
        char label[256];
        vn_cg_label(m, i, label, sizeof label);
        if (remove_one(m, i)) vn_pass_note(r, label);
    }
    return VN_OK;
}
